//! `stream_server`: constant-bit-rate streaming to buffered clients outside; the server wakes every interval and
//! sends what is due, and each client plays out of its buffer (an under-run is what the metrics count).

use super::{DomKinds, Estimate, EstimateCx, Kind, PeerCx};
use crate::model::{Peer, PeerId, StreamClient, TaskId, Timer, Work};
use crate::time::{ms_to_ns, us_to_ns, Nanos};
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    pub clients: u32,
    /// Bit rate per client [kbit/s].
    pub kbps: u32,
    /// Each client's playback buffer [KiB]; playback starts (and restarts after an under-run) at half full.
    pub buffer_kb: u32,
    /// Guest CPU per packet sent [us].
    #[serde(default = "default_cpu_us")]
    pub cpu_us: f64,
    /// How often the server wakes to send what is due [ms].
    #[serde(default = "default_interval_ms")]
    pub interval_ms: f64,
}

/// Guest CPU per packet when the file gives none [us].
fn default_cpu_us() -> f64 {
    10.0
}

/// The server's wake-up period when the file gives none [ms].
fn default_interval_ms() -> f64 {
    10.0
}

impl Kind for StreamSpec {
    fn clients(&self) -> u64 {
        u64::from(self.clients)
    }
    fn cpu_us(&self) -> Option<f64> {
        Some(self.cpu_us)
    }
    fn estimate(&self, _cx: &EstimateCx, e: &mut Estimate) {
        e.net_pkts += f64::from(self.clients) * f64::from(self.kbps) * 1e3 / 8.0 / 1500.0;
        e.rate += 4.0 * 1e3 / self.interval_ms.max(0.1) * f64::from(self.clients);
        e.bytes += f64::from(self.clients) * (512.0 + f64::from(self.buffer_kb) * 16.0);
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.stream = true;
    }
    fn work(&self, _own_block_ns: u64) -> Work {
        Work::Stream {
            cpu_ns: us_to_ns(self.cpu_us),
            interval_ns: ms_to_ns(self.interval_ms).max(1),
            clients: Vec::new(),
            bps: u64::from(self.kbps) * 1000,
            owed: Vec::new(),
            last_send: Nanos::ZERO,
            to_send: VecDeque::new(),
            // Sized by the engine at boot, from the host cost profile and the client count.
            tx: Default::default(),
        }
    }
    fn peers(&self, id: TaskId, cx: &mut PeerCx) {
        let first = cx.peers.len();
        for _ in 0..self.clients {
            cx.peers.push(Peer::StreamClient(StreamClient {
                server: id,
                bps: u64::from(self.kbps) * 1000,
                capacity: u64::from(self.buffer_kb) * 1024,
                level: 0.0,
                updated: Nanos::ZERO,
                playing: false,
                started_at: None,
                underruns: 0,
                empty: Timer::default(),
            }));
        }
        if let Work::Stream { clients, owed, .. } = &mut cx.tasks[id.0].work {
            *clients = (first..cx.peers.len()).map(PeerId).collect();
            *owed = vec![0; clients.len()];
        }
    }
}
