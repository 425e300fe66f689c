//! Fuzz target for the trace readers: any bytes as a recorded trace (perf.data, xentrace, ftrace / trace-cmd /
//! perf script text, or any of them gzip-compressed), read as the CLI, Python and the page read one, with the
//! proposed mapping. Reading must never panic, allocate past the readers' bounds or hang: every input either
//! gives a recorded run or a message naming what is wrong. A recorded run's fitted scenario must validate.

#![no_main]

use libfuzzer_sys::fuzz_target;
use schedsim_core::recorded::{fit, open_run, ReadOptions};
use schedsim_core::scenario::Scenario;

fuzz_target!(|data: &[u8]| {
    // The first byte, when it is odd, sets a TSC frequency (xentrace reads it; the others ignore it).
    let opts = match data.first() {
        Some(&b) if b % 2 == 1 => ReadOptions { tsc_hz: Some(u64::from(b) * 10_000_000) },
        _ => ReadOptions::default(),
    };
    match open_run(std::io::Cursor::new(data), None, &opts) {
        Ok(run) => {
            let _ = run.report("fuzz");
            let fitted = fit::scenario(&run, "fuzz", &["kvm", "credit"]);
            if let Err(e) = Scenario::from_value(fitted) {
                panic!("a recorded run's fitted scenario does not validate: {e}");
            }
        }
        Err(e) => assert!(!e.is_empty(), "a rejection must say why"),
    }
});
