//! The library side of the `schedsim` command: batches of runs over threads, and sweeps over a grid of scenario
//! parameters (whole, or one shard of it). What a grid is lives in the core (`schedsim_core::grid`), which the
//! Python package builds on too, so a grid means the same runs whichever front end runs it.

pub mod batch;
pub mod par;
pub mod sweep;
