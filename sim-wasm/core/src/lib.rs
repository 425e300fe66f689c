//! schedsim-core: a discrete-event simulator of CPU scheduling on a consolidated virtualised host.
//!
//! Concepts:
//! - **Time** is integer nanoseconds ([`time::Nanos`]); one event queue ordered by (time, seq), ties broken by
//!   insertion order, so runs are bit-for-bit reproducible natively and in wasm.
//! - **Host**: `pcpus` physical CPUs; **domains** (guests and driver domains) own **vCPUs**; inside each guest a
//!   Linux-like kernel schedules **tasks** whose **workloads** (busy loops, request/response servers, ...) burn
//!   CPU and do I/O. A vCPU is running, runnable, blocked or paused ([`model`]).
//! - **I/O** follows Xen's split drivers: the driver domain's backend handles queued packets in batches and
//!   notifies each guest vCPU once per batch through an event channel; the notification is delivered only when
//!   that vCPU runs ([`sim`]). What the machinery costs (switches, upcalls, per-packet work) is one host profile
//!   ([`costs`]).
//! - **Policies** ([`policy`]) implement one trait mirroring Xen's scheduler hooks; they decide, the engine acts.
//! - **Randomness** comes from named streams derived from the scenario seed ([`rng`]): every client's think times
//!   are independent of scheduling, so policies see the same offered load.
//! - A **scenario** file ([`scenario`]) describes host, domains, policies and the claims the runs must reproduce;
//!   the **report** ([`report`]) and the **trace** ([`trace`]) are what the CLI prints and the UI replays.
//! - **Bounds**: every JSON Patch a file carries is applied lazily (only the variant or ablation asked for), under
//!   the scenario limits and a budget of patch work ([`patch`]), and the cost of a run (events, memory) is
//!   estimated before it starts ([`estimate`]), so a front end can refuse or ask.
//! - Module layers: `time` <- `model` <- `workload` (the workload kinds) <- `scenario` (the file format, its
//!   patches applied by `patch`) <- `policy` (schedulers and their registry) <- `load` (a scenario checked by its
//!   schedulers' rules) <- `sim` <- `report`; `estimate` reads a scenario only.

/// The simulator's version: the crate's, and a hash of the sources that decide a run's result (`build.rs`).
/// Shards and the Python sweep cache record it.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("SCHEDSIM_SOURCE_HASH"));

pub mod allocated;
#[cfg(test)]
mod bindings;
pub mod claims;
pub mod costs;
pub mod estimate;
/// The estimate's former path (`schedsim_core::cost`), kept for callers written against it.
pub use estimate as cost;
pub mod grid;
pub mod limits;
mod load;
pub use load::attach_scripts;
pub mod metric_path;
pub mod metrics;
pub mod model;
pub mod overview;
pub mod patch;
pub mod policy;
pub mod recorded;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod size;
pub mod stats;
pub mod tcp;
pub mod time;
pub mod trace;
pub mod workload;
