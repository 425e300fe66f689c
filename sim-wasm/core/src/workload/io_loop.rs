//! `io_loop`: one I/O (a disk read or a network round trip to an echoing peer), then some CPU, in a loop: the
//! I/O-bound tasks of the inference studies.

use super::{DomKinds, Estimate, EstimateCx, Kind, PeerCx, PER_REQUEST};
use crate::model::{Peer, PeerId, TaskId, Work};
use crate::time::{us_to_ns, Nanos};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoLoopSpec {
    pub io: IoKind,
    /// CPU after each I/O [us].
    #[serde(default)]
    pub cpu_us: f64,
    #[serde(default)]
    pub port: Option<u16>,
    /// Size of each disk read [KiB].
    #[serde(default = "default_block_kb")]
    pub block_kb: u32,
}

/// What an `io_loop` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoKind {
    /// A block read through the driver domain's block backend.
    Disk,
    /// A round trip to an echoing machine outside.
    Net,
}

/// Size of an `io_loop`'s disk read when the file gives none [KiB].
fn default_block_kb() -> u32 {
    4
}

impl Kind for IoLoopSpec {
    fn own_disk(&self) -> bool {
        self.io == IoKind::Disk
    }
    fn cpu_us(&self) -> Option<f64> {
        Some(self.cpu_us)
    }
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate) {
        let io = if self.io == IoKind::Disk { cx.disk_s } else { cx.net_rtt_s };
        e.rate += PER_REQUEST / (io + EstimateCx::cpu(self.cpu_us));
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.io_loop = true;
    }
    fn work(&self, own_block_ns: u64) -> Work {
        Work::IoLoop {
            disk: self.io == IoKind::Disk,
            write: false,
            cpu_ns: us_to_ns(self.cpu_us),
            own_block_ns,
            bytes: self.block_kb * 1024,
            computing: true,
            issued_at: Nanos::ZERO,
            port: self.port.unwrap_or(0),
            peer: None,
        }
    }
    fn peers(&self, id: TaskId, cx: &mut PeerCx) {
        if self.io == IoKind::Net {
            let p = PeerId(cx.peers.len());
            cx.peers.push(Peer::Echo);
            if let Work::IoLoop { peer, .. } = &mut cx.tasks[id.0].work {
                *peer = Some(p);
            }
        }
    }
}
