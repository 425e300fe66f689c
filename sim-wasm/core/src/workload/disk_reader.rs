//! `disk_reader`: sequential block reads (or direct-I/O writes), some CPU per block, as IOzone's S-read and
//! S-write.

use super::{DomKinds, Estimate, EstimateCx, Kind};
use crate::model::Work;
use crate::time::{us_to_ns, Nanos};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskReaderSpec {
    /// Sequential reads or direct-I/O sequential writes (IOzone S-read / S-write).
    #[serde(default)]
    pub op: DiskOp,
    /// Size of each read or write [KiB].
    #[serde(default = "default_block_kb")]
    pub block_kb: u32,
    /// CPU per block [us].
    #[serde(default = "default_cpu_us")]
    pub cpu_us: f64,
}

/// Direction of a block workload's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiskOp {
    /// Data comes from the disk.
    #[default]
    Read,
    /// Data goes to the disk (direct I/O: no page cache absorbs it, as IOzone's -I).
    Write,
}

/// Size of each request when the file gives none [KiB].
fn default_block_kb() -> u32 {
    128
}

/// CPU per block when the file gives none [us].
fn default_cpu_us() -> f64 {
    50.0
}

impl Kind for DiskReaderSpec {
    fn own_disk(&self) -> bool {
        true
    }
    fn cpu_us(&self) -> Option<f64> {
        Some(self.cpu_us)
    }
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate) {
        let per_block = cx.disk_service_us / 1e6 + f64::from(self.block_kb) / 1024.0 / cx.disk_mb_per_s.max(1.0);
        // Each block crosses the split driver as several blkif requests, each with its own events.
        let requests = crate::costs::PROFILE.blk_requests(self.block_kb.saturating_mul(1024)) as f64;
        e.disk_blocks += requests / (per_block + EstimateCx::cpu(self.cpu_us));
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.disk_reader = true;
    }
    fn work(&self, own_block_ns: u64) -> Work {
        Work::IoLoop {
            disk: true,
            write: self.op == DiskOp::Write,
            cpu_ns: us_to_ns(self.cpu_us),
            own_block_ns,
            bytes: self.block_kb * 1024,
            computing: true,
            issued_at: Nanos::ZERO,
            port: 0,
            peer: None,
        }
    }
}
