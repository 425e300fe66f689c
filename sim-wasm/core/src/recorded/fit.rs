//! The same load, simulated: a scenario fitted to a recorded run.
