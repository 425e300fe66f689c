//! `tier`: one tier of a multi-tier request chain. It serves a request, calls the next tier ("DOMAIN/TASK") and
//! answers upstream once that tier answers; the front tier has the external clients.

use super::{default_message_bytes, default_think_ms, CheckCx, DomKinds, Estimate, EstimateCx, Kind, PeerCx};
use super::{Workload, PER_REQUEST};
use crate::model::{TaskId, Work};
use crate::time::us_to_ns;
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierSpec {
    pub port: u16,
    /// CPU per request at this tier [us].
    pub cpu_us: f64,
    /// The next tier, "DOMAIN/TASK", or null for the last.
    #[serde(default)]
    pub next: Option<String>,
    /// External clients of this tier (the front tier has them).
    #[serde(default)]
    pub clients: u32,
    #[serde(default = "default_think_ms")]
    pub think_ms: [f64; 2],
    #[serde(default = "default_message_bytes")]
    pub request_bytes: u32,
    #[serde(default = "default_message_bytes")]
    pub response_bytes: u32,
}

impl Kind for TierSpec {
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
        if let Some(next) = &self.next {
            let at = cx.at;
            match (cx.find)(next) {
                None => p.push(format!("{at}.workload.next: no task '{next}' (expected \"DOMAIN/TASK\")")),
                Some(w) if !matches!(w, Workload::Tier(_)) => {
                    p.push(format!("{at}.workload.next: '{next}' is not a tier task"))
                }
                _ if next == cx.path => p.push(format!("{at}.workload.next: a tier cannot call itself")),
                _ => {}
            }
        }
    }
    /// A tier chain must end: following `next` from this tier never comes back.
    fn validate_links(&self, cx: &CheckCx, p: &mut Vec<String>) {
        let mut seen = vec![cx.path.to_string()];
        let mut cur = self;
        while let Some(next) = &cur.next {
            if seen.contains(next) {
                p.push(format!("{}.workload.next: the tier chain {} loops", cx.at, seen.join(" -> ")));
                break;
            }
            let Some(Workload::Tier(nt)) = (cx.find)(next) else { break };
            seen.push(next.clone());
            cur = nt;
        }
    }
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate) {
        let requests = f64::from(self.clients)
            / (EstimateCx::think_s(&self.think_ms) + cx.net_rtt_s + EstimateCx::cpu(self.cpu_us));
        e.rate += requests.min(cx.request_cap) * PER_REQUEST;
        e.bytes += f64::from(self.clients) * 512.0;
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.server = true;
    }
    fn work(&self, _own_block_ns: u64) -> Work {
        Work::Tier {
            cpu_ns: us_to_ns(self.cpu_us),
            next: None, // resolved once every task exists
            queue: VecDeque::new(),
            waiting: None,
            answered: false,
            port: self.port,
            response_bytes: self.response_bytes,
            request_bytes: self.request_bytes,
        }
    }
    fn peers(&self, id: TaskId, cx: &mut PeerCx) {
        for k in 0..self.clients as usize {
            cx.peers.push((cx.client)(k, self.think_ms, self.request_bytes, false, self.port));
        }
        if let Some(next) = &self.next {
            let nid = (cx.resolve)(next);
            if let Work::Tier { next, .. } = &mut cx.tasks[id.0].work {
                *next = nid;
            }
        }
    }
}
