//! `pipe`: tasks passing messages around rings inside the guest (hackbench-like): guest-internal wakeups only.

use super::{default_one, Builder, CheckCx, DomKinds, Estimate, EstimateCx, Kind};
use crate::model::{TaskId, Work};
use crate::time::us_to_ns;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipeSpec {
    /// Tasks this spec creates (`NAME.0` ...), in rings of `group` consecutive tasks.
    pub threads: u32,
    /// Tasks per ring: each hands its messages to the next in its ring.
    pub group: u32,
    /// CPU per message handed on (read, work, write) [us].
    pub cpu_us: f64,
    /// Messages circulating in each ring.
    #[serde(default = "default_one")]
    pub messages: u32,
}

impl Kind for PipeSpec {
    fn needs_driver(&self) -> bool {
        false
    }
    fn threads(&self) -> usize {
        self.threads as usize
    }
    fn validate(&self, cx: &CheckCx, p: &mut Vec<String>) {
        if self.group < 2 || !self.threads.is_multiple_of(self.group) || self.messages > self.group {
            p.push(format!(
                "{}.workload: {} threads do not form rings of {} (group must be at least 2 and divide threads; \
                 messages, {}, at most group)",
                cx.at, self.threads, self.group, self.messages
            ));
        }
    }
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate) {
        let rings = f64::from(self.threads / self.group.max(1));
        // Every message is a burst of CPU: the domain's vCPUs (on as many pCPUs) bound the rate.
        let holding = rings * f64::from(self.messages.max(1));
        let busy = holding.min(cx.dom_vcpus.min(cx.pcpus));
        // Every hand-on wakes one task and blocks another, and the guest picks the next by walking its vCPU's
        // run queue: the tasks holding a message, shared among the domain's vCPUs. Each walk is work.
        let walked = (holding.min(f64::from(self.threads)) / cx.dom_vcpus.max(1.0) - 1.0).max(0.0);
        e.rate += busy * 4.0 / EstimateCx::cpu(self.cpu_us) * (1.0 + walked / 2.0);
        e.bytes += f64::from(self.threads) * 1024.0;
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.pipe = true;
    }
    /// The rings: thread `k` runs on vCPU `k mod vcpus` (or the pinned one) and hands its messages to the next
    /// thread of its ring; the ring's messages start evenly spaced around it. The threads get consecutive ids.
    fn build(&self, b: &mut Builder) -> Option<TaskId> {
        let (n, g, m) = (self.threads as usize, self.group as usize, self.messages as usize);
        let base = b.next_id;
        for k in 0..n {
            let (ring, pos) = (k / g, k % g);
            let next = TaskId(base + ring * g + (pos + 1) % g);
            let holds = (0..m).any(|i| i * g / m == pos);
            let work = Work::Pipe { next, cpu_ns: us_to_ns(self.cpu_us).max(1), inbox: u32::from(holds) };
            let vcpu = b.vcpu.map_or(k % b.vcpus as usize, |v| v as usize);
            (b.add)(vcpu, format!("{}.{k}", b.name), work);
        }
        None
    }
}
