//! `cpu`: a busy loop. It never blocks and does no I/O; its progress is the CPU it gets.

use super::{Estimate, EstimateCx, Kind};
use crate::model::Work;

/// The `cpu` kind (its spec has no fields).
pub struct Cpu;

impl Kind for Cpu {
    fn needs_driver(&self) -> bool {
        false
    }
    fn estimate(&self, _cx: &EstimateCx, e: &mut Estimate) {
        e.rate += 100.0;
    }
    fn work(&self, _own_block_ns: u64) -> Work {
        Work::Cpu
    }
}
