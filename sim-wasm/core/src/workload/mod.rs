//! Workload kinds: what a guest task does, one file per kind behind one trait ([`Kind`]), listed in one table
//! ([`KINDS`], which a test keeps equal to the schema's workload types). A kind's file holds its scenario-file
//! spec (the serde struct of its `workload` object), the checks a schema cannot express, how it is built into
//! tasks and peers, its share of the cost estimate and which report metrics it adds.
//!
//! Adding a workload kind is its file here, its variant of [`Workload`] and its row in [`Workload::kind`] and
//! [`KINDS`], its `$defs` entry in `scenarios/schema.json`, and, when it keeps run-time state of its own, a
//! [`Work`] variant in `model.rs` with the engine's handling of it in `sim/work.rs`.
//!
//! These files sit below the scenario file format and the engine, outside `sim/` (they import neither
//! `scenario.rs` nor `sim.rs`), so the format can name their specs without importing the engine.
//!
//! Writing a kind, mind when its timers fire: a task's guest timer (`Ev::TaskTimer`) reaches the task only
//! when its vCPU runs (the engine's `post_event` queues it for the vCPU, as a real guest handles its timer
//! interrupt only when scheduled). The event's handling time is therefore not the time the timer was set for: a
//! kind that judges lateness against a release time (a periodic task's deadline) must keep that release time in
//! its own state and measure from it, or an overloaded vCPU, which handles every timer late, reports no misses.

pub mod barrier;
pub mod cpu;
pub mod disk_reader;
pub mod interactive;
pub mod io_loop;
pub mod net_bulk;
pub mod pipe;
pub mod server;
pub mod spinlock;
pub mod stream;
pub mod tier;
pub mod tlb_shootdown;

use crate::model::{BarrierGroup, Peer, Task, TaskId, Work};
use serde::Deserialize;

/// A guest task's workload, as the scenario file writes it (`{"type": "server", ...}`).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Workload {
    /// A busy loop.
    Cpu,
    /// Request/response on a port with closed-loop external clients.
    Server(server::ServerSpec),
    /// I/O (disk or network round trip), then some CPU, in a loop (inference studies).
    IoLoop(io_loop::IoLoopSpec),
    /// Sequential block reads, some CPU per block.
    DiskReader(disk_reader::DiskReaderSpec),
    /// A bulk TCP stream (iperf-like), received or sent.
    NetBulk(net_bulk::NetBulkSpec),
    /// Constant-bit-rate streaming to buffered clients.
    StreamServer(stream::StreamSpec),
    /// A concurrent job: one thread per vCPU, phases of compute then a barrier.
    Barrier(barrier::BarrierSpec),
    /// One tier of a multi-tier request chain.
    Tier(tier::TierSpec),
    /// Keystrokes from a user: a little CPU per key, response = key to screen update.
    Interactive(interactive::InteractiveSpec),
    /// Tasks passing messages around rings inside the guest (hackbench-like): guest-internal wakeups only.
    Pipe(pipe::PipeSpec),
    /// One thread per vCPU contending for the domain's one spinlock (ticket or paravirtual).
    Spinlock(spinlock::SpinlockSpec),
    /// A thread that computes, then sends a TLB-flush IPI to every other vCPU and spins until all acknowledge.
    TlbShootdown(tlb_shootdown::TlbShootdownSpec),
}

/// Every workload kind's `type`, in the order of [`Workload`].
pub const KINDS: &[&str] = &[
    "cpu",
    "server",
    "io_loop",
    "disk_reader",
    "net_bulk",
    "stream_server",
    "barrier",
    "tier",
    "interactive",
    "pipe",
    "spinlock",
    "tlb_shootdown",
];

impl Workload {
    /// The kind's implementation: the one place that maps a spec to its kind.
    pub fn kind(&self) -> &dyn Kind {
        match self {
            Workload::Cpu => &cpu::Cpu,
            Workload::Server(s) => s,
            Workload::IoLoop(s) => s,
            Workload::DiskReader(s) => s,
            Workload::NetBulk(s) => s,
            Workload::StreamServer(s) => s,
            Workload::Barrier(s) => s,
            Workload::Tier(s) => s,
            Workload::Interactive(s) => s,
            Workload::Pipe(s) => s,
            Workload::Spinlock(s) => s,
            Workload::TlbShootdown(s) => s,
        }
    }
}

/// What one workload kind is: its checks, how it is built, its cost and its metrics. Defaults fit a kind that
/// does I/O through a driver domain as one task.
pub trait Kind {
    /// Does I/O through a driver domain, so the scenario needs one.
    fn needs_driver(&self) -> bool {
        true
    }
    /// A driver domain's own task may run it: its only I/O is block I/O, which goes to the driver's own disk.
    fn own_disk(&self) -> bool {
        false
    }
    /// Tasks the spec counts against the scenario's task limit.
    fn threads(&self) -> usize {
        1
    }
    /// External clients it brings (counted against the scenario's client limit).
    fn clients(&self) -> u64 {
        0
    }
    /// Guest CPU per unit of work [us], which the format floors at `MIN_WORK_US`; `None` when it has none.
    fn cpu_us(&self) -> Option<f64> {
        None
    }
    /// The port it serves (no two tasks of a domain serve one port).
    fn port(&self) -> Option<u16> {
        None
    }
    /// Problems of this task's spec that a schema cannot express, each pushed with its field path.
    fn validate(&self, _cx: &CheckCx, _problems: &mut Vec<String>) {}
    /// Problems that need every task's spec checked first (a tier chain that loops).
    fn validate_links(&self, _cx: &CheckCx, _problems: &mut Vec<String>) {}
    /// Adds its events per simulated second and its memory to the run's estimate.
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate);
    /// Turns on the report metrics it feeds in its domain.
    fn metrics(&self, _m: &mut DomKinds) {}
    /// The run-time state of its one task (kinds that build several tasks override [`Kind::build`] instead).
    /// `own_block_ns` is the block-layer CPU per request a task of this domain pays itself (the driver domain's
    /// block backend cost, 0 in a guest).
    fn work(&self, _own_block_ns: u64) -> Work {
        unreachable!("a kind that builds several tasks overrides build")
    }
    /// Creates its tasks; returns the task whose peers [`Kind::peers`] wires up, if it has one task.
    fn build(&self, b: &mut Builder) -> Option<TaskId> {
        let k = b.vcpu.map_or(b.index % b.vcpus as usize, |v| v as usize);
        Some((b.add)(k, b.name.to_string(), self.work(b.own_block_ns)))
    }
    /// Creates the machines outside that talk to task `id` and links it to them.
    fn peers(&self, _id: TaskId, _cx: &mut PeerCx) {}
}

/// What a kind's checks see of the scenario.
pub struct CheckCx<'a, 'w> {
    /// The task's field path (`domains[1].tasks[0]`).
    pub at: &'a str,
    /// The task's own "DOMAIN/TASK".
    pub path: &'a str,
    /// The task is pinned to a vCPU (`vcpu`).
    pub pinned: bool,
    /// The workload of the task "DOMAIN/TASK", if there is one.
    pub find: &'a dyn Fn(&str) -> Option<&'w Workload>,
}

impl CheckCx<'_, '_> {
    /// Refuses a think-time range whose minimum is above its maximum.
    pub fn think(&self, th: &[f64; 2], p: &mut Vec<String>) {
        if th[0] > th[1] {
            p.push(format!("{}.workload.think_ms: min {} is above max {}", self.at, th[0], th[1]));
        }
    }
}

/// What a kind's estimate sees of the host and its domain.
pub struct EstimateCx {
    /// Physical CPUs.
    pub pcpus: f64,
    /// The domain's vCPUs.
    pub dom_vcpus: f64,
    /// A network round trip to a machine outside [s].
    pub net_rtt_s: f64,
    /// One 16 KiB disk request [s].
    pub disk_s: f64,
    /// The host's link rate in full-size packets [packets/s].
    pub link_pkts: f64,
    /// Mean disk positioning time [us].
    pub disk_service_us: f64,
    /// Disk transfer rate [MB/s].
    pub disk_mb_per_s: f64,
    /// Requests per second the driver domains' backends can carry at most (two packets each) [requests/s]: a
    /// closed loop of many clients with no think time is bounded by it, not by its clients.
    pub request_cap: f64,
}

/// Events per request, packet or block along the split-driver path: the NIC, the backend, the notification, the
/// guest wake-up, the response.
pub const PER_REQUEST: f64 = 12.0;

impl EstimateCx {
    /// A piece of guest CPU [s], at least the format's floor of a microsecond.
    pub fn cpu(us: f64) -> f64 {
        us.max(1.0) / 1e6
    }
    /// Mean of a think-time range [s], floored at 0.1 ms so a zero think time still gives a finite closed-loop
    /// rate (the server's CPU then bounds it).
    pub fn think_s(th: &[f64; 2]) -> f64 {
        ((th[0] + th[1]) / 2.0).max(0.1) / 1e3
    }
}

/// A run's estimate as the kinds add to it.
#[derive(Debug, Default)]
pub struct Estimate {
    /// Events per simulated second, policy timers and shared devices aside.
    pub rate: f64,
    /// Memory of one run [bytes].
    pub bytes: f64,
    /// Packets per second on the host's link (bounded by the link afterwards).
    pub net_pkts: f64,
    /// Block requests per second on the host's disk (bounded by the disk afterwards).
    pub disk_blocks: f64,
}

/// Which report metrics apply to a domain, from the workloads it runs.
#[derive(Debug, Clone, Default)]
pub struct DomKinds {
    pub server: bool,
    pub io_loop: bool,
    pub disk_reader: bool,
    pub bulk: bool,
    pub stream: bool,
    pub pipe: bool,
    /// A spinlock job: lock acquisitions and spin time.
    pub lock: bool,
    /// A TLB shootdown thread: shootdowns and IPI wait.
    pub tlb: bool,
}

crate::size::no_heap!(DomKinds);

/// What a kind's [`Kind::build`] gets: the task spec's placement and a way to add tasks.
pub struct Builder<'a> {
    /// The task spec's name.
    pub name: &'a str,
    /// "DOMAIN/TASK" of the spec.
    pub key: String,
    /// The vCPU the spec pins it to, if any.
    pub vcpu: Option<u32>,
    /// The spec's index among its domain's tasks.
    pub index: usize,
    /// The domain's vCPUs.
    pub vcpus: u32,
    /// Block-layer CPU per request a task of this domain pays itself [ns] (see [`Kind::work`]).
    pub own_block_ns: u64,
    /// The id the next added task gets.
    pub next_id: usize,
    /// The host's barrier groups (a barrier job adds one).
    pub groups: &'a mut Vec<BarrierGroup>,
    /// Adds a task on the domain's vCPU `k` with this name and work; returns its id.
    pub add: &'a mut dyn FnMut(usize, String, Work) -> TaskId,
}

/// What a kind's [`Kind::peers`] gets.
pub struct PeerCx<'a> {
    pub peers: &'a mut Vec<Peer>,
    pub tasks: &'a mut [Task],
    /// A closed-loop client `k` of the task, with its own think-time stream: `(k, think_ms, request_bytes, tcp,
    /// port)`.
    pub client: &'a dyn Fn(usize, [f64; 2], u32, bool, u16) -> Peer,
    /// The task built from the spec "DOMAIN/TASK".
    pub resolve: &'a dyn Fn(&str) -> Option<TaskId>,
}

/// Think-time range of a client when the file gives none [ms].
pub(crate) fn default_think_ms() -> [f64; 2] {
    [100.0, 1000.0]
}

/// Size of a request or response when the file gives none [bytes].
pub(crate) fn default_message_bytes() -> u32 {
    40
}

/// One, the default count of clients and messages.
pub(crate) fn default_one() -> u32 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table names exactly the workload types the schema knows, in its order, and each parses as a variant.
    #[test]
    fn the_table_matches_the_schemas_workload_types() {
        let schema: serde_json::Value = serde_json::from_str(crate::scenario::SCHEMA_JSON).unwrap();
        let types: Vec<&str> = schema["$defs"]["workload"]["properties"]["type"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t.as_str())
            .collect();
        assert_eq!(types, KINDS);
        for k in KINDS {
            let e = serde_json::from_value::<Workload>(serde_json::json!({ "type": k })).err();
            assert!(e.is_none_or(|e| !e.to_string().contains("unknown variant")), "{k}");
        }
    }
}
