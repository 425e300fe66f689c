//! `interactive`: keystrokes from a user, a little CPU per key; its response time is key to screen update. Built
//! as a server with one client (the user) whose requests come through the driver domain's input backend.

use super::{CheckCx, DomKinds, Estimate, EstimateCx, Kind, PeerCx, PER_REQUEST};
use crate::model::{TaskId, Work};
use crate::time::us_to_ns;
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InteractiveSpec {
    /// CPU per keystroke [us].
    pub cpu_us: f64,
    /// Time between a screen update and the next keystroke [ms].
    pub think_ms: [f64; 2],
}

impl Kind for InteractiveSpec {
    fn clients(&self) -> u64 {
        1
    }
    fn cpu_us(&self) -> Option<f64> {
        Some(self.cpu_us)
    }
    fn validate(&self, cx: &CheckCx, p: &mut Vec<String>) {
        cx.think(&self.think_ms, p);
    }
    fn estimate(&self, _cx: &EstimateCx, e: &mut Estimate) {
        e.rate += 1.0 / (EstimateCx::think_s(&self.think_ms) + EstimateCx::cpu(self.cpu_us)) * PER_REQUEST;
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.server = true;
    }
    fn work(&self, _own_block_ns: u64) -> Work {
        Work::Server {
            cpu_ns: us_to_ns(self.cpu_us),
            response_bytes: 64,
            tcp: false,
            queue: VecDeque::new(),
            port: 0,
            disk: None,
        }
    }
    fn peers(&self, _id: TaskId, cx: &mut PeerCx) {
        // A keystroke is a few bytes through the driver domain (console/input backend).
        cx.peers.push((cx.client)(0, self.think_ms, 8, false, 0));
    }
}
