//! `server`: request/response on a port, driven by closed-loop external clients (think, request, wait for the
//! response); optionally synchronous block I/O per request.

use super::{default_message_bytes, default_one, default_think_ms, CheckCx, DomKinds, Estimate, EstimateCx, Kind};
use super::{PeerCx, PER_REQUEST};
use crate::model::{ServerDisk, TaskId, Work};
use crate::time::us_to_ns;
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    pub port: u16,
    #[serde(default)]
    pub proto: Proto,
    /// CPU per request [us].
    #[serde(default = "default_cpu_us")]
    pub cpu_us: f64,
    #[serde(default = "default_one")]
    pub clients: u32,
    /// Think time range [ms].
    #[serde(default = "default_think_ms")]
    pub think_ms: [f64; 2],
    /// Request size [bytes].
    #[serde(default = "default_message_bytes")]
    pub request_bytes: u32,
    /// Response size [bytes].
    #[serde(default = "default_message_bytes")]
    pub response_bytes: u32,
    /// Synchronous block I/O per request (through the driver domain's block backend), e.g. a database's page
    /// reads and commit log writes; none when absent.
    #[serde(default)]
    pub disk: Option<ServerDiskSpec>,
}

/// The transport of a server's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    #[default]
    Udp,
    /// The client acknowledges every response (an extra packet through the driver domain to the guest).
    Tcp,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerDiskSpec {
    /// Block reads per request.
    #[serde(default)]
    pub reads: u32,
    /// Block writes per request.
    #[serde(default)]
    pub writes: u32,
    /// Size of each block request [KiB].
    #[serde(default = "default_block_kb")]
    pub block_kb: u32,
}

/// CPU per request when the file gives none [us].
fn default_cpu_us() -> f64 {
    50.0
}

/// Size of a server's block request when the file gives none [KiB].
fn default_block_kb() -> u32 {
    16
}

impl Kind for ServerSpec {
    fn clients(&self) -> u64 {
        u64::from(self.clients)
    }
    fn cpu_us(&self) -> Option<f64> {
        Some(self.cpu_us)
    }
    fn port(&self) -> Option<u16> {
        Some(self.port)
    }
    fn validate(&self, cx: &CheckCx, p: &mut Vec<String>) {
        cx.think(&self.think_ms, p);
        if self.disk.as_ref().is_some_and(|k| k.reads + k.writes == 0) {
            p.push(format!("{}.workload.disk: at least one of reads and writes must be above 0", cx.at));
        }
    }
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate) {
        let per_client = 1.0 / (EstimateCx::think_s(&self.think_ms) + cx.net_rtt_s + EstimateCx::cpu(self.cpu_us));
        let disk = self.disk.as_ref().map_or(0.0, |k| f64::from(k.reads + k.writes));
        e.rate += (f64::from(self.clients) * per_client).min(cx.request_cap) * (PER_REQUEST + 6.0 * disk);
        e.bytes += f64::from(self.clients) * 512.0;
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.server = true;
    }
    fn work(&self, _own_block_ns: u64) -> Work {
        Work::Server {
            cpu_ns: us_to_ns(self.cpu_us),
            response_bytes: self.response_bytes,
            tcp: self.proto == Proto::Tcp,
            queue: VecDeque::new(),
            port: self.port,
            disk: self.disk.as_ref().map(|k| ServerDisk {
                reads: k.reads,
                writes: k.writes,
                bytes: k.block_kb * 1024,
                done: 0,
                waiting: false,
            }),
        }
    }
    fn peers(&self, _id: TaskId, cx: &mut PeerCx) {
        for k in 0..self.clients as usize {
            cx.peers.push((cx.client)(k, self.think_ms, self.request_bytes, self.proto == Proto::Tcp, self.port));
        }
    }
}
