//! `net_bulk`: a bulk TCP stream (iperf-like), received from a sender outside or sent to a sink outside.

use super::{DomKinds, Estimate, EstimateCx, Kind, PeerCx};
use crate::model::{Peer, PeerId, TaskId, Timer, Work, MSS};
use crate::tcp::{TcpReceiver, TcpSender};
use crate::time::us_to_ns;
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetBulkSpec {
    pub direction: Direction,
    /// TCP window [KiB].
    #[serde(default = "default_window_kb")]
    pub window_kb: u32,
    /// Guest CPU per packet [us].
    #[serde(default = "default_cpu_us")]
    pub cpu_us: f64,
    /// rx only: the receiver's socket buffer (window_kb) limits the sender, as TCP's advertised window does.
    #[serde(default)]
    pub flow_control: bool,
}

/// Which way a bulk stream flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// An outside sender streams to this task.
    Rx,
    /// This task streams out.
    Tx,
}

/// TCP window when the file gives none [KiB].
fn default_window_kb() -> u32 {
    64
}

/// Guest CPU per packet when the file gives none [us].
fn default_cpu_us() -> f64 {
    5.0
}

impl NetBulkSpec {
    /// The window in full-size segments, at least one.
    fn window(&self) -> u32 {
        (self.window_kb * 1024).div_ceil(MSS).max(1)
    }
}

impl Kind for NetBulkSpec {
    fn cpu_us(&self) -> Option<f64> {
        Some(self.cpu_us)
    }
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate) {
        e.net_pkts += cx.link_pkts.min(1.0 / EstimateCx::cpu(self.cpu_us));
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.bulk = true;
    }
    fn work(&self, _own_block_ns: u64) -> Work {
        let window = self.window();
        match self.direction {
            Direction::Rx => Work::BulkRx {
                cpu_ns: us_to_ns(self.cpu_us),
                queue: VecDeque::new(),
                unacked: 0,
                window: self.flow_control.then_some(window),
                advertised: window,
                tcp: TcpReceiver::default(),
                delack: Timer::default(),
            },
            Direction::Tx => Work::BulkTx { cpu_ns: us_to_ns(self.cpu_us), peer: PeerId(0), window, sent: 0, acked: 0 },
        }
    }
    fn peers(&self, id: TaskId, cx: &mut PeerCx) {
        let p = PeerId(cx.peers.len());
        match self.direction {
            Direction::Rx => cx.peers.push(Peer::BulkSender {
                task: id,
                tcp: Box::new(TcpSender::new(self.window())),
                rto: Timer::default(),
            }),
            Direction::Tx => {
                cx.peers.push(Peer::BulkSink);
                if let Work::BulkTx { peer, .. } = &mut cx.tasks[id.0].work {
                    *peer = p;
                }
            }
        }
    }
}
