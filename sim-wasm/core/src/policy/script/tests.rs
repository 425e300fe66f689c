//! Script policy tests: the templates against native Credit's shares, the sandbox's limits, and each kind of
//! error a script can make (its message names the hook, the time and the line). The registry-wide properties
//! (invariants on random hosts, determinism, every library scenario) cover the templates through
//! `sim::test_support::under_every_scheduler`, and the replay test through `sim::replay`'s.

use super::*;
use crate::scenario::Scenario;
use crate::sim::test_support::{cpu_task, hog_domains, run, scenario, shares};
use crate::sim::{SimError, SimOptions, Simulation};
use serde_json::json;

fn template(id: &str) -> &'static Template {
    TEMPLATES.iter().find(|t| t.id == id).unwrap()
}

/// CPU-bound domains of `(vcpus, weight, cap)` on `pcpus`, under native Credit ("credit") and a template
/// ("script").
fn hogs(pcpus: u32, doms: &[(u32, u32, u32)], tmpl: &str) -> Scenario {
    let domains = hog_domains(doms.iter().map(|&(n, weight, cap)| (n as u64, weight as u64, cap as u64)));
    scenario(json!({
        "schema": 1, "id": "h", "title": "h", "seed": 3, "duration_ms": 3000, "warmup_ms": 500,
        "host": { "pcpus": pcpus },
        "domains": domains,
        "policies": [
            { "id": "credit", "scheduler": "credit" },
            { "id": "script", "scheduler": "script", "params": template(tmpl).params() }
        ]
    }))
}

/// The fair-share template's per-domain shares are native Credit's within 0.02: weights 100/300/600 on two
/// pCPUs, and a domain capped at 35% among uncapped ones.
#[test]
fn fair_share_template_matches_credit() {
    for doms in [&[(2, 100, 0), (2, 300, 0), (2, 600, 0)][..], &[(1, 256, 35), (1, 256, 0), (1, 256, 0)][..]] {
        let sc = hogs(2, doms, "fair_share");
        let (native, script) = (shares(&run(&sc, "credit")), shares(&run(&sc, "script")));
        for (a, b) in native.iter().zip(&script) {
            assert!((a - b).abs() <= 0.02, "{doms:?}: credit {native:?}, script {script:?}");
        }
    }
}

/// Each template's own defaults (merged in `init`, so the file runs as it is from `--script`) are the vars it is
/// offered with: a run with no vars equals one with the template's vars, and changing a var changes the run.
#[test]
fn template_defaults_are_its_vars() {
    for t in TEMPLATES {
        let with = |vars: Value| {
            let mut sc = hogs(2, &[(2, 100, 0), (1, 300, 0)], t.id);
            sc.policies[1].params["vars"] = vars;
            let r = run(&sc, "script");
            (shares(&r), r.events())
        };
        let given: Value = serde_json::from_str(t.vars).unwrap();
        assert_eq!(with(json!({})), with(given.clone()), "{}", t.id);
        let (key, v) = given.as_object().unwrap().iter().find(|(_, v)| v.is_number()).unwrap();
        let mut other = given.clone();
        other[key] = json!(v.as_f64().unwrap() * 2.0);
        assert_ne!(with(json!({})).1, with(other).1, "{}: {key} changes nothing", t.id);
    }
}

/// Round robin shares equally whatever the weights; EDF gives each vCPU its reservation (here 10 of 40 ms on a
/// pCPU of its own, with spare time off) and, with spare time on, the pCPU's whole time.
#[test]
fn round_robin_and_edf_do_what_they_say() {
    let sc = hogs(1, &[(1, 100, 0), (1, 300, 0), (1, 600, 0)], "round_robin");
    let s = shares(&run(&sc, "script"));
    assert!(s.iter().all(|x| (x - 1.0 / 3.0).abs() < 0.01), "{s:?}");
    let mut sc = hogs(2, &[(1, 256, 0), (1, 256, 0)], "edf");
    sc.policies[1].params["vars"]["extra"] = json!(false);
    let s = shares(&run(&sc, "script"));
    // Each domain's share of the host's two pCPUs: 10/40 of one.
    assert!(s.iter().all(|x| (x - 0.125).abs() < 0.005), "{s:?}");
    sc.policies[1].params["vars"]["extra"] = json!(true);
    let s = shares(&run(&sc, "script"));
    assert!(s.iter().all(|x| (x - 0.5).abs() < 0.005), "{s:?}");
}

/// A one-domain host under a script, for the error cases.
fn scripted(source: &str, vars: Value) -> Result<Scenario, String> {
    Scenario::from_value(json!({
        "schema": 1, "id": "e", "title": "e", "seed": 1, "duration_ms": 200,
        "host": { "pcpus": 2 },
        "domains": [{ "name": "a", "vcpus": 2, "tasks": [cpu_task("x"), cpu_task("y")] }],
        "policies": [{ "id": "mine", "scheduler": "script", "params": { "source": source, "vars": vars } }]
    }))
    .map_err(|e| e.to_string())
}

/// The run's error for a script that should fail.
fn run_error(source: &str) -> String {
    let sc = scripted(source, json!({})).unwrap_or_else(|e| panic!("invalid: {e}"));
    let mut sim = Simulation::with_options(&sc, "mine", SimOptions::default()).unwrap();
    match sim.run() {
        Err(e @ SimError::Policy(_)) => e.to_string(),
        other => panic!("expected a policy fault, got {other:?} from {source}"),
    }
}

/// The run's error for `src` on one pCPU and a domain of `vcpus` vCPUs with one CPU-bound task.
fn one_pcpu_error(src: &str, vcpus: usize) -> String {
    let sc = Scenario::from_value(json!({
        "schema": 1, "id": "e", "title": "e", "seed": 1, "duration_ms": 100, "host": { "pcpus": 1 },
        "domains": [{ "name": "a", "vcpus": vcpus, "tasks": [cpu_task("x")] }],
        "policies": [{ "id": "mine", "scheduler": "script", "params": { "source": src } }]
    }))
    .unwrap();
    Simulation::new(&sc, "mine").unwrap().run().unwrap_err().to_string()
}

/// A scheduler that runs whatever is runnable on its pCPU (vCPU v on pCPU v % 2), with the decision `ret`
/// (an expression over `v`, the chosen vCPU) so a test can return something wrong.
fn picker(ret: &str) -> String {
    format!(
        "fn init(host) {{ this.q = [[], []]; }}\n\
         fn wake(v, cause) {{ this.q[v % 2].push(v); resched(v % 2); }}\n\
         fn sleep(v) {{ let i = this.q[v % 2].index_of(v); if i >= 0 {{ this.q[v % 2].remove(i); }} }}\n\
         fn do_schedule(p, cur, runnable) {{\n\
             if cur != () && runnable {{ this.q[p].push(cur); }}\n\
             if this.q[p].is_empty() {{ return #{{ next: () }}; }}\n\
             let v = this.q[p].shift();\n\
             {ret}\n\
         }}\n"
    )
}

#[test]
fn a_good_picker_runs() {
    let sc = scripted(&picker("#{ next: v, slice_us: 1000, reason: `v${v}` }"), json!({})).unwrap();
    let sim = run(&sc, "mine");
    let s = shares(&sim);
    assert!((s[0] - 1.0).abs() < 0.01, "{s:?}");
}

/// Each sandbox limit and runtime error stops the run with one message naming the policy, the hook, the
/// simulated time and the line.
#[test]
fn limits_and_runtime_errors_stop_the_run() {
    let cases = [
        // An endless loop.
        // A limit hit between statements names the hook's line.
        (picker("loop { }"), "do_schedule at 0.000 ms, line 4: more than 2000000 operations"),
        // A 10^8-element array is refused before it is allocated.
        (
            picker("let a = []; a.pad(100000000, 0); #{ next: v, slice_us: 1000 }"),
            "do_schedule at 0.000 ms, line 4: Size of array",
        ),
        // Deep recursion.
        (
            format!("fn f(n) {{ f(n + 1) }}\n{}", picker("f(0)")),
            "do_schedule at 0.000 ms, line 5: more than 48 nested calls",
        ),
        // A runtime type error.
        (picker("let x = 1 + \"a\" * 2; x"), "do_schedule at 0.000 ms, line 8: Function not found"),
        (
            format!(
                "fn tick(p) {{ throw \"tick failed\"; }}\nfn timers() {{ #{{ tick_us: 10000 }} }}\n{}",
                picker("#{ next: v, slice_us: 100000 }")
            ),
            "tick at 10.",
        ),
    ];
    for (src, want) in cases {
        let e = run_error(&src);
        assert!(e.starts_with("script policy 'mine': "), "{e}");
        assert!(e.contains(want), "want '{want}' in: {e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
}

/// Each kind of bad return value stops the run, naming what is wrong and the line it was returned from (the
/// picker's decision is on line 8; its other return, line 6, returns an idle map).
#[test]
fn bad_returns_stop_the_run() {
    let cases = [
        ("42", "do_schedule at 0.000 ms, line 8: returned i64 (42), not #{ next"),
        ("#{ next: v, slice_us: -31000 }", "line 8: slice_us: -31000 us is not in"),
        ("#{ next: 9, slice_us: 1000 }", "next: 9 is not a vCPU"),
        ("#{ next: -1, slice_us: 1000 }", "next: -1 is not a vCPU"),
        ("#{ next: v, slice_us: 0 }", "slice_us: 0 us is not in 1..10000000"),
        ("#{ next: v, slice_us: 100000000 }", "slice_us: 100000000 us is not in"),
        ("#{ next: v, slice_us: 1.5 }", "slice_us: an integer number of microseconds"),
        ("#{ next: v }", "slice_us is missing"),
        ("#{ next: v, slice_ms: 10 }", "key 'slice_ms'"),
        // A vCPU that runs elsewhere: vCPU 0 is picked on both pCPUs.
        (
            "if p == 1 && running(0) == 0 { #{ next: 0, slice_us: 1000 } } else { #{ next: v, slice_us: 1000 } }",
            "runs on pCPU 0",
        ),
    ];
    for (ret, want) in cases {
        let e = run_error(&picker(ret));
        assert!(e.starts_with("script policy 'mine': do_schedule at "), "{e}");
        assert!(e.contains(want), "want '{want}' in: {e}");
    }
    // A `return` statement is named where it is, among other returns and a comment that mentions one.
    let src = "fn do_schedule(p, cur, runnable) {\n\
               // return early when idle\n\
               if p > 5 { return #{ next: () }; }\n\
               if p > 6 { return 7; }\n\
               return #{ next: 0, slice_us: 0 };\n\
               }";
    let e = one_pcpu_error(src, 1);
    assert!(e.contains("line 5: slice_us: 0 us"), "{e}");
    // A blocked vCPU: one that never woke (a domain with an idle vCPU).
    let src = "fn wake(v, cause) { resched(0); }\nfn do_schedule(p, cur, runnable) { #{ next: 1, slice_us: 1000 } }";
    let e = one_pcpu_error(src, 2);
    assert!(e.contains("next: vCPU 1 (a.v1) is not runnable"), "{e}");
    // A paused vCPU: the script pauses vCPU 0 and then picks it.
    let e = run_error(&picker("pause(0); #{ next: 0, slice_us: 1000 }"));
    assert!(e.contains("is not runnable") || e.contains("runs on pCPU"), "{e}");
    // init_vcpu out of range, timers and the views of the wrong shape.
    let e = run_error(&format!("fn init_vcpu(v) {{ 7 }}\n{}", picker("#{ next: v, slice_us: 1000 }")));
    assert!(e.contains("init_vcpu at 0.000 ms, line 1: returned 7, not a pCPU (0..2) or ()"), "{e}");
    let e = run_error(&format!("fn timers() {{ #{{ tick_us: 1 }} }}\n{}", picker("#{ next: v, slice_us: 1000 }")));
    assert!(e.contains("timers at 0.000 ms, line 1: tick_us: 1 is not a period"), "{e}");
    for (view, want) in [
        ("fn runqueue(p) { 5 }", "runqueue at 0.000 ms, line 1: returned i64, not an array"),
        ("fn runqueue(p) { [0, 77] }", "runqueue at 0.000 ms, line 1: 77 is not a vCPU"),
        ("fn vcpu_state(v) { \"UNDER\" }", "vcpu_state at 0.000 ms, line 1: returned string"),
        ("fn vcpu_state(v) { #{ pri: 3 } }", "vcpu_state at 0.000 ms, line 1: pri: a string"),
    ] {
        let sc = scripted(&format!("{view}\n{}", picker("#{ next: v, slice_us: 1000 }")), json!({})).unwrap();
        // The views are read only when the run is traced.
        let mut sim =
            Simulation::with_options(&sc, "mine", SimOptions { trace: true, ..SimOptions::default() }).unwrap();
        let e = sim.run().unwrap_err().to_string();
        assert!(e.contains(want), "want '{want}' in: {e}");
    }
}

/// A syntax error is a load error with its line and column; so is a hook with the wrong parameters or no
/// do_schedule.
#[test]
fn syntax_errors_are_load_errors() {
    let e = scripted("fn do_schedule(p, cur, runnable) {\n  let x = ;\n}", json!({})).unwrap_err();
    assert!(e.contains("policies[0].params.source: line 2, column 11: "), "{e}");
    let e = check_source("fn do_schedule(p, cur, runnable) {\n  let x = ;\n}").unwrap_err();
    assert_eq!((e.line, e.column), (2, 11), "{e:?}");
    let e = scripted("fn do_schedule(p) { () }", json!({})).unwrap_err();
    assert!(e.contains("line 1, column 1: fn do_schedule takes 3 parameters (p, cur, runnable), not 1"), "{e}");
    let e = scripted("fn wake(v) { }\nfn do_schedule(p, c, r) { () }", json!({})).unwrap_err();
    assert!(e.contains("fn wake takes 2 parameters"), "{e}");
    let e = scripted("fn tick(p) { }", json!({})).unwrap_err();
    assert!(e.contains("no fn do_schedule"), "{e}");
    for t in TEMPLATES {
        check_source(t.source).unwrap_or_else(|e| panic!("{}: {e}", t.id));
    }
}

/// Vars: in `this.vars`, changed by scenario changes (checked at load: the var exists, the type fits).
#[test]
fn vars_change_at_run_time() {
    let src = "fn wake(v, cause) { resched(0); }\n\
               fn do_schedule(p, cur, runnable) { log(p, `slice ${this.vars.slice_ms}`); \
               #{ next: 0, slice_us: this.vars.slice_ms * 1000 } }";
    let load = |changes: Value| {
        Scenario::from_value(json!({
            "schema": 1, "id": "v", "title": "v", "seed": 1, "duration_ms": 100, "host": { "pcpus": 1 },
            "domains": [{ "name": "a", "tasks": [cpu_task("x")] }],
            "policies": [{ "id": "mine", "scheduler": "script", "params": { "source": src, "vars": { "slice_ms": 10 } } }],
            "changes": changes
        }))
        .map_err(|e| e.to_string())
    };
    let e = load(json!([{ "at_ms": 50, "policy": "mine", "param": "vars.nope", "value": 1 }])).unwrap_err();
    assert!(e.contains("changes[0].param: policy 'mine' has no var 'nope'"), "{e}");
    let e = load(json!([{ "at_ms": 50, "policy": "mine", "param": "vars.slice_ms", "value": "x" }])).unwrap_err();
    assert!(
        e.contains("changes[0].value: var 'slice_ms' of policy 'mine' is a number, the change gives a string"),
        "{e}"
    );
    let e = load(json!([{ "at_ms": 50, "policy": "mine", "param": "slice_ms", "value": 1 }])).unwrap_err();
    assert!(e.contains("only vars change at run time"), "{e}");
    let sc = load(json!([{ "at_ms": 50, "policy": "mine", "param": "vars.slice_ms", "value": 20 }])).unwrap();
    let mut sim = Simulation::with_options(&sc, "mine", SimOptions { trace: true, ..SimOptions::default() }).unwrap();
    sim.run().unwrap();
    let said: Vec<String> = sim.trace().decisions(0, u64::MAX, usize::MAX).iter().map(|d| d.text.to_string()).collect();
    assert!(said.iter().any(|r| r.contains("slice 10")) && said.iter().any(|r| r.contains("slice 20")), "{said:?}");
}

/// `random()` is the run's seeded stream: the same seed gives the same picks, another seed others.
#[test]
fn random_is_seeded() {
    let src = "fn wake(v, cause) { resched(v); }\n\
               fn do_schedule(p, cur, runnable) { #{ next: p, slice_us: 100 + to_int(random() * 1000.0) } }";
    let at = |seed: u64| {
        let mut sc = scripted(src, json!({})).unwrap();
        sc.seed = seed;
        run(&sc, "mine").trace().decisions(0, u64::MAX, 50).iter().map(|d| d.t_ns).collect::<Vec<_>>()
    };
    assert_eq!(at(1), at(1));
    assert_ne!(at(1), at(2));
}

/// The bounds of a whole run: a print flood keeps the allowed lines and says how many it dropped; a same-instant
/// storm of timers or reschedules stops; a script slow in every call stops at the run's operation budget; each
/// naming the rule.
#[test]
fn a_run_is_bounded_as_a_whole() {
    // Spread over calls: 150,000 lines in one call pass the call's operations (each line is a string made).
    let flood = format!(
        "fn timers() {{ #{{ tick_us: 1000 }} }}\nfn tick(p) {{ for i in 0..1000 {{ print(i); }} }}\n{}",
        picker("#{ next: v, slice_us: 1000 }")
    );
    let sc = scripted(&flood, json!({})).unwrap();
    let mut sim = Simulation::with_options(&sc, "mine", SimOptions { trace: true, ..SimOptions::default() }).unwrap();
    sim.run().unwrap();
    let said: Vec<String> = sim.trace().decisions(0, u64::MAX, usize::MAX).iter().map(|d| d.text.to_string()).collect();
    // Said once per power of ten of the lines dropped (200 ms of 2 pCPUs' ticks write ~400,000).
    let notes: Vec<&String> = said.iter().filter(|r| r.contains("lines dropped")).collect();
    assert!(
        (2..=4).contains(&notes.len())
            && notes
                .iter()
                .all(|r| r.ends_with(" lines dropped: a script writes at most 100000 lines to a run's decision log")),
        "{notes:?}"
    );
    // The kept lines, and the engine's own decisions of the run.
    assert!(said.len() <= engine::MAX_LOG_LINES as usize + 1000, "{}", said.len());

    let timers = "fn init(host) { timer_at(0); }\nfn timer() { timer_at(now()); }\nfn do_schedule(p, cur, runnable) { #{ next: () } }";
    let e = run_error(timers);
    assert!(e.contains("timer at 0.000 ms, line 2: more than 100000 hook calls at one simulated instant"), "{e}");
    let resched = "fn wake(v, cause) { resched(0); }\nfn do_schedule(p, cur, runnable) { resched(p); #{ next: () } }";
    let e = run_error(resched);
    assert!(e.contains("do_schedule at 0.000 ms, line 2: more than 100000 hook calls at one simulated instant"), "{e}");

    RUN_OPERATIONS.with(|b| b.set(3_000_000));
    let e = run_error(&picker("let n = 0; while n < 300000 { n += 1; } #{ next: v, slice_us: 1000 }"));
    RUN_OPERATIONS.with(|b| b.set(engine::MAX_RUN_OPERATIONS));
    assert!(e.contains("operations in this run, the budget of a whole run's hook calls"), "{e}");
    assert!(e.contains("do_schedule at "), "{e}");
}

/// A byte-order mark before a script is skipped, as before a scenario.
#[test]
fn a_bom_before_a_script_is_skipped() {
    let sc = scripted(&format!("\u{feff}{}", picker("#{ next: v, slice_us: 1000 }")), json!({})).unwrap();
    assert!((shares(&run(&sc, "mine"))[0] - 1.0).abs() < 0.01);
}

/// What a script keeps in `this` is bounded across its calls (values, characters, nesting), checked after each
/// hook and named with the hook and the rule; copying a value counts as work by its size, so a loop copying a
/// large or deeply nested value stops within the call's budget instead of running for minutes.
#[test]
fn what_a_script_keeps_and_copies_is_bounded() {
    let grow = format!(
        "fn timers() {{ #{{ tick_us: 1000 }} }}\nfn tick(p) {{ for i in 0..200 {{ this.a.push(i); this.b.push(i); }} }}\n{}",
        picker("#{ next: v, slice_us: 1000 }").replacen("this.q = [[], []];", "this.q = [[], []]; this.a = []; this.b = [];", 1)
    );
    let e = run_error(&grow);
    assert!(e.contains(": tick at "), "{e}");
    assert!(
        e.contains("line 2: `this` holds more than 100000 values after the call: a script keeps at most 100000"),
        "{e}"
    );

    let deep = format!(
        "fn init(host) {{ let a = []; for i in 0..40 {{ a = [a]; }} this.a = a; }}\n{}",
        "fn do_schedule(p, cur, runnable) { #{ next: () } }"
    );
    let e = run_error(&deep);
    assert!(e.contains("init at 0.000 ms, line 1: `this` nests values more than 32 levels deep after the call"), "{e}");

    let chars = "fn init(host) { for i in 0..11 { let s = \"\"; s.pad(99999, 'x'); this[`s${i}`] = s; } }\n\
                 fn do_schedule(p, cur, runnable) { #{ next: () } }";
    let e = run_error(chars);
    assert!(e.contains("`this` holds more than 1000000 characters of strings after the call"), "{e}");

    // Copying: a value nested 20,000 deep built by wrapping (each step copies the whole), and a flat array copied
    // a thousand times; each a few thousand operations as the engine counts them.
    for src in [
        "fn init(host) { let a = []; for i in 0..20000 { a = [a]; } }",
        "fn init(host) { let a = []; a.pad(50000, 0); for i in 0..1000 { let b = a; } }",
    ] {
        let t = std::time::Instant::now();
        let e = run_error(&format!("{src}\nfn do_schedule(p, cur, runnable) {{ #{{ next: () }} }}"));
        assert!(
            e.contains("init at 0.000 ms, line 1: more than 2000000 operations in one call, copying counted"),
            "{e}"
        );
        assert!(t.elapsed().as_secs_f64() < 10.0, "{:?} for {src}", t.elapsed());
    }
}
