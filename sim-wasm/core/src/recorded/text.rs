//! Text traces: ftrace's `trace` file, `trace-cmd report` and `perf script`, one event a line.
//!
//! A line is `WHO [CPU] (FLAGS) SECONDS: EVENT: PAYLOAD`, where WHO is `comm-tid` (ftrace, trace-cmd), `comm-tid
//! (tgid)` (ftrace's record-tgid option) or `comm tid` / `comm pid/tid` (perf script). The payloads read are the
//! kernel's `TP_printk` formats of `include/trace/events/sched.h`:
//! - `sched_switch`: `prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d
//!   next_prio=%d`, with `prev_state` as letters (`R`, `R+` preempted, `S`, `D`, `I`, `X`, `D|K`, ...) or, where
//!   the printing tool could not decode the print format (`trace-cmd report -R`, old libtraceevent), as the raw
//!   number: `TASK_REPORT` bits since 4.14 (0x100 = preempted), the raw state before it (`TASK_STATE_MAX` =
//!   preempted); trace-cmd's own plugin prints it as `comm:pid [prio] S ==> comm:pid [prio]`;
//! - `sched_wakeup`, `sched_waking`, `sched_wakeup_new`: `comm=%s pid=%d prio=%d target_cpu=%03d`, and before
//!   4.3 with `success=%d` (a failed wake-up changed nothing and is skipped); trace-cmd's plugin: `comm:pid [prio]
//!   (success=1) CPU:001`;
//! - `sched_migrate_task`: `comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d`.
//!
//! Other events are skipped and counted by name. Memory stays bounded: one line at a time, at most
//! [`MAX_LINE`] bytes.

use super::{cpu_number, in_order, thread_id, Damage, Event, NotATrace, PrevState, ReadSummary, Task};
use std::io::BufRead;

/// Longest line read [bytes]; a longer one is damage.
pub const MAX_LINE: usize = 4096;

/// Lines without an event the reader looks through before it decides a file is not a trace.
const PREAMBLE_LINES: u64 = 1000;

/// Whether the first bytes of a file look like a text trace: some line is an event line.
pub fn looks_like(head: &[u8]) -> bool {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // Cut mid-character at the end of the head.
        Err(e) if e.valid_up_to() + 4 >= head.len() => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
        Err(_) => return false,
    };
    text.lines().any(|l| l.starts_with("# tracer:") || parse_line(l).is_some())
}

/// One event line's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Line<'a> {
    who: Task<'a>,
    /// As written: bounded when its event is handed on.
    cpu: u64,
    t_ns: u64,
    event: &'a str,
    payload: &'a str,
}

/// Reads a text trace, handing each scheduling event to `sink`.
pub fn read<R: BufRead>(mut r: R, sink: &mut dyn FnMut(&Event<'_>)) -> Result<ReadSummary, NotATrace> {
    let mut s = ReadSummary::default();
    let mut buf: Vec<u8> = Vec::with_capacity(256);
    let (mut line_no, mut offset, mut quiet, mut last_t) = (0u64, 0u64, 0u64, 0u64);
    loop {
        let start = offset;
        let got = next_line(&mut r, &mut buf).map_err(|e| NotATrace(format!("cannot read the trace: {e}")))?;
        let Some(complete) = got else { break };
        line_no += 1;
        offset += buf.len() as u64;
        let damage = |message: String| Damage { offset: start, line: Some(line_no), message };
        if buf.len() > MAX_LINE {
            if s.events == 0 {
                return Err(not_text(line_no));
            }
            s.damage = Some(damage(format!("line {line_no} is longer than {MAX_LINE} bytes: corrupt")));
            break;
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            if s.events == 0 {
                return Err(not_text(line_no));
            }
            s.damage = Some(damage(format!("line {line_no} (byte {start}) is not text: corrupt")));
            break;
        };
        let text = text.trim_end_matches(['\n', '\r']);
        if !complete && s.events > 0 {
            // Every tool ends its lines, the last one too: a file ending mid-line was cut there.
            s.damage = Some(damage(format!("truncated at line {line_no} (byte {start}): the last line is cut")));
            break;
        }
        if ignorable(text) {
            continue;
        }
        let parsed = parse_line(text).map(|l| {
            let ev = in_order(l.t_ns, last_t).and_then(|()| event_of(&l));
            last_t = last_t.max(l.t_ns);
            (l, ev)
        });
        match parsed {
            Some((_, Ok(Some(ev)))) => {
                s.events += 1;
                sink(&ev);
            }
            Some((l, Ok(None))) => s.skip(l.event),
            Some((l, Err(why))) if !complete => {
                let _ = (l, why);
                s.damage = Some(damage(format!("truncated at line {line_no} (byte {start}): the last line is cut")));
                break;
            }
            Some((l, Err(why))) => {
                s.damage = Some(damage(format!("line {line_no} (byte {start}): {} {why}", l.event)));
                break;
            }
            None if s.events == 0 && s.skipped.is_empty() => {
                quiet += 1;
                if quiet >= PREAMBLE_LINES {
                    return Err(not_text(line_no));
                }
            }
            None if !complete => {
                s.damage = Some(damage(format!("truncated at line {line_no} (byte {start}): the last line is cut")));
                break;
            }
            None => {
                let shown: String = text.chars().take(60).collect();
                s.damage = Some(damage(format!("line {line_no} (byte {start}) is not an event line: {shown:?}")));
                break;
            }
        }
    }
    s.bytes = offset;
    if s.events == 0 && s.skipped.is_empty() && s.damage.is_none() {
        return Err(NotATrace(
            "no event lines: expected ftrace, trace-cmd report or perf script text with sched_switch lines".to_string(),
        ));
    }
    Ok(s)
}

fn not_text(line: u64) -> NotATrace {
    NotATrace(format!(
        "not a text trace (line {line}): expected ftrace, trace-cmd report or perf script lines like \
         `comm-123 [001] 12.345678: sched_switch: prev_comm=...`"
    ))
}

/// The next line into `buf` (with its newline), reading at most [`MAX_LINE`] + 1 bytes of it (the rest of a
/// longer line is left unread). `Some(false)` when the file ended without a newline.
fn next_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    buf.clear();
    loop {
        let avail = r.fill_buf()?;
        if avail.is_empty() {
            return Ok(if buf.is_empty() { None } else { Some(false) });
        }
        let room = MAX_LINE + 1 - buf.len();
        match avail.iter().take(room).position(|&b| b == b'\n') {
            Some(i) => {
                buf.extend_from_slice(&avail[..=i]);
                r.consume(i + 1);
                return Ok(Some(true));
            }
            None => {
                let n = avail.len().min(room);
                buf.extend_from_slice(&avail[..n]);
                r.consume(n);
                if buf.len() > MAX_LINE {
                    return Ok(Some(false));
                }
            }
        }
    }
}

/// Lines with no event that the tools print: headers, comments, per-CPU notes, call chains.
fn ignorable(l: &str) -> bool {
    let t = l.trim_start();
    t.is_empty()
        || t.starts_with('#')
        || t.starts_with("cpus=")
        || t.starts_with("version =")
        || t.starts_with("CPU ") && t.ends_with("is empty")
        || t.starts_with("CPU:") && t.contains("LOST")
        // perf script -g call chains: an indented address and symbol.
        || (l.starts_with([' ', '\t']) && t.split_whitespace().next().is_some_and(|w| w.len() >= 6 && w.bytes().all(|b| b.is_ascii_hexdigit())))
}

/// Splits an event line into its parts; `None` when it is not one.
fn parse_line(l: &str) -> Option<Line<'_>> {
    let bytes = l.as_bytes();
    // The CPU field: `[digits]` after whitespace, followed by whitespace.
    let mut search = 0;
    let (open, close) = loop {
        let i = search + l[search..].find('[')?;
        let j = i + 1 + l[i + 1..].find(']')?;
        let digits = &l[i + 1..j];
        let spaced =
            i > 0 && bytes[i - 1].is_ascii_whitespace() && bytes.get(j + 1).is_some_and(u8::is_ascii_whitespace);
        if spaced && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            break (i, j);
        }
        search = i + 1;
    };
    let cpu: u64 = l[open + 1..close].parse().ok()?;
    let who = parse_who(l[..open].trim())?;
    let mut rest = l[close + 1..].trim_start();
    // Optional latency flags (`d..2.`), then `SECONDS:`.
    let mut words = 0;
    let t_ns = loop {
        let (tok, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if let Some(t) = tok.strip_suffix(':').and_then(parse_seconds) {
            rest = after.trim_start();
            break t;
        }
        words += 1;
        if words > 1 {
            return None;
        }
        rest = after.trim_start();
    };
    let (event, payload) = rest.split_once(": ").or_else(|| rest.strip_suffix(':').map(|e| (e, "")))?;
    let event = event.trim();
    if event.is_empty() || event.contains(char::is_whitespace) {
        return None;
    }
    let event = event.strip_prefix("sched:").unwrap_or(event);
    Some(Line { who, cpu, t_ns, event, payload: payload.trim() })
}

/// `comm-tid`, `comm-tid (tgid)`, `comm tid` or `comm pid/tid`.
fn parse_who(w: &str) -> Option<Task<'_>> {
    let task = |name: &'static str, id: u64, group: Option<u64>| Task { id, group, name, idle: id == 0 };
    let _ = task;
    if let Some(inner) = w.strip_suffix(')') {
        let (front, tgid) = inner.rsplit_once('(')?;
        let tgid = tgid.trim();
        let group = if tgid == "-------" { None } else { Some(tgid.parse().ok()?) };
        let mut t = parse_dashed(front.trim())?;
        t.group = group;
        return Some(t);
    }
    if let Some((comm, last)) = w.rsplit_once(char::is_whitespace) {
        if let Some((pid, tid)) = last.split_once('/') {
            if let (Ok(pid), Ok(tid)) = (pid.parse::<i64>(), tid.parse::<i64>()) {
                let (pid, tid) = (pid.max(0) as u64, tid.max(0) as u64);
                return Some(Task { id: tid, group: Some(pid), name: comm.trim(), idle: tid == 0 });
            }
        } else if let Ok(tid) = last.parse::<i64>() {
            let tid = tid.max(0) as u64;
            return Some(Task { id: tid, group: None, name: comm.trim(), idle: tid == 0 });
        }
    }
    parse_dashed(w)
}

/// `comm-tid` (the comm may itself hold dashes).
fn parse_dashed(w: &str) -> Option<Task<'_>> {
    let (comm, tid) = w.rsplit_once('-')?;
    let tid: u64 = tid.parse().ok()?;
    Some(Task { id: tid, group: None, name: comm, idle: tid == 0 })
}

/// `12345.678901` seconds as exact nanoseconds (up to 9 decimals).
fn parse_seconds(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.')?;
    if whole.is_empty() || frac.is_empty() || frac.len() > 9 {
        return None;
    }
    if !whole.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let w: u64 = whole.parse().ok()?;
    let f: u64 = frac.parse().ok()?;
    w.checked_mul(1_000_000_000)?.checked_add(f * 10u64.pow(9 - frac.len() as u32))
}

/// The scheduling event a line holds: `Ok(None)` for other events, `Err` when a scheduling event's payload does
/// not parse or names a CPU or thread past the limits.
fn event_of<'a>(l: &Line<'a>) -> Result<Option<Event<'a>>, String> {
    let t_ns = l.t_ns;
    let unparsed = || "payload does not parse".to_string();
    let cpu = || cpu_number("CPU", i64::try_from(l.cpu).unwrap_or(i64::MAX));
    match l.event {
        "sched_switch" => {
            let (prev, prev_state, next) = parse_switch(l.payload).ok_or_else(unparsed)?;
            thread_id("prev_pid", &prev)?;
            thread_id("next_pid", &next)?;
            Ok(Some(Event::Switch { t_ns, cpu: cpu()?, prev, prev_state, next }))
        }
        "sched_wakeup" | "sched_waking" | "sched_wakeup_new" => {
            let (task, success, target_cpu) = parse_wakeup(l.payload).ok_or_else(unparsed)?;
            if !success {
                return Ok(None);
            }
            thread_id("pid", &task)?;
            let target_cpu = target_cpu.map(|c| cpu_number("target_cpu", c)).transpose()?;
            Ok(Some(Event::Wake { t_ns, cpu: cpu()?, task, target_cpu, waker: Some(l.who) }))
        }
        "sched_migrate_task" => {
            let task = kv_task(l.payload, "comm", "pid").ok_or_else(unparsed)?;
            thread_id("pid", &task)?;
            let to_cpu = kv_num(l.payload, "dest_cpu").ok_or("payload has no dest_cpu")?;
            Ok(Some(Event::Migrate { t_ns, task, to_cpu: cpu_number("dest_cpu", to_cpu)? }))
        }
        _ => Ok(None),
    }
}

/// The value of `key=` in a `key=value ...` payload: up to the next ` word=` (so a comm may hold spaces).
fn kv<'a>(p: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    let start = loop {
        let i = from + p[from..].find(key)?;
        let after = i + key.len();
        if (i == 0 || p.as_bytes()[i - 1] == b' ') && p.as_bytes().get(after) == Some(&b'=') {
            break after + 1;
        }
        from = i + 1;
    };
    let rest = &p[start..];
    // The value ends where the next ` key=` (a word of letters and underscores, then `=`) or ` ==>` begins.
    let mut end = rest.len();
    for (i, _) in rest.match_indices(' ') {
        let next = &rest[i + 1..];
        let word_len = next.bytes().take_while(|b| b.is_ascii_lowercase() || *b == b'_').count();
        if (word_len > 0 && next.as_bytes().get(word_len) == Some(&b'=')) || next.starts_with("==>") {
            end = i;
            break;
        }
    }
    Some(&rest[..end])
}

fn kv_num(p: &str, key: &str) -> Option<i64> {
    let v = kv(p, key)?.trim();
    v.parse().ok()
}

fn kv_task<'a>(p: &'a str, comm_key: &str, pid_key: &str) -> Option<Task<'a>> {
    let name = kv(p, comm_key)?;
    // A negative id stays visible (wrapped) for the bound to name.
    let id = kv_num(p, pid_key)? as u64;
    Some(Task { id, group: None, name, idle: id == 0 })
}

/// `prev_state` as letters or as the raw number.
fn parse_state(s: &str) -> Option<PrevState> {
    let s = s.trim();
    let num = if let Some(h) = s.strip_prefix("0x") { u64::from_str_radix(h, 16).ok() } else { s.parse::<u64>().ok() };
    if let Some(n) = num {
        // Low byte: the state bits (TASK_REPORT since 4.14, the raw state before); higher bits only mark a
        // preemption (TASK_REPORT_MAX, TASK_STATE_MAX).
        let low = n & 0xff;
        return Some(if low == 0 {
            PrevState::Runnable
        } else if low & 0x0f == 0 && low & 0x30 != 0 {
            PrevState::Dead
        } else {
            PrevState::Blocked
        });
    }
    let first = s.chars().next()?;
    if !first.is_ascii_alphabetic() {
        return None;
    }
    Some(if s.starts_with('R') {
        PrevState::Runnable
    } else if s.contains(['X', 'Z']) {
        PrevState::Dead
    } else {
        PrevState::Blocked
    })
}

/// A `sched_switch` payload, in the kernel's `key=value` form (with or without `==>`) or trace-cmd's plugin form.
fn parse_switch(p: &str) -> Option<(Task<'_>, PrevState, Task<'_>)> {
    if p.contains("prev_comm=") {
        let prev = kv_task(p, "prev_comm", "prev_pid")?;
        let next = kv_task(p, "next_comm", "next_pid")?;
        let state = parse_state(kv(p, "prev_state")?)?;
        return Some((prev, state, next));
    }
    // trace-cmd: `comm:pid [prio] S ==> comm:pid [prio]`
    let (left, right) = p.split_once(" ==> ")?;
    let (who, state) = left.rsplit_once("] ")?;
    let prev = colon_task(who.rsplit_once(" [")?.0)?;
    let next = colon_task(right.rsplit_once(" [").map_or(right, |(w, _)| w))?;
    Some((prev, parse_state(state)?, next))
}

/// `comm:pid`.
fn colon_task(w: &str) -> Option<Task<'_>> {
    let (name, pid) = w.trim().rsplit_once(':')?;
    let id: u64 = pid.parse().ok()?;
    Some(Task { id, group: None, name, idle: id == 0 })
}

/// A wake-up payload: the task, whether it succeeded (`success=0` before 4.3 changed nothing), the target CPU.
fn parse_wakeup(p: &str) -> Option<(Task<'_>, bool, Option<i64>)> {
    if p.contains("comm=") {
        let task = kv_task(p, "comm", "pid")?;
        let success = kv_num(p, "success").is_none_or(|s| s != 0);
        let target = kv_num(p, "target_cpu");
        return Some((task, success, target));
    }
    // trace-cmd: `comm:pid [prio] success=1 CPU:001`
    let (who, rest) = p.split_once(" [")?;
    let task = colon_task(who)?;
    let success = !rest.contains("success=0");
    let target = rest.rsplit_once("CPU:").and_then(|(_, c)| c.trim().parse().ok());
    Some((task, success, target))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> (Vec<String>, ReadSummary) {
        let mut out = Vec::new();
        let s = read(text.as_bytes(), &mut |e: &Event<'_>| out.push(format!("{e:?}"))).unwrap();
        (out, s)
    }

    #[test]
    fn perf_script_lines() {
        let t = "            perf 22275/22275 [000] 11515.997058:       sched:sched_switch: prev_comm=perf prev_pid=22275 prev_prio=120 prev_state=D ==> next_comm=opt cgu.00 next_pid=18 next_prio=0\n\
                 \x20    migration/0    18/18    [000] 11515.997063:       sched:sched_waking: comm=perf pid=22275 prio=120 target_cpu=001\n\
                 \x20    migration/0    18/18    [000] 11515.997064: sched:sched_stat_runtime: comm=perf pid=22275 runtime=5 [ns]\n\
                 \x20    migration/0    18 [000] 11515.997065: sched:sched_migrate_task: comm=perf pid=22275 prio=120 orig_cpu=0 dest_cpu=1\n";
        let mut got = Vec::new();
        let s = read(t.as_bytes(), &mut |e: &Event<'_>| got.push(*e_static(e))).unwrap();
        assert_eq!(s.events, 3);
        assert_eq!(s.skipped.get("sched_stat_runtime"), Some(&1));
        match got[0] {
            Ev::Switch { t_ns, cpu, prev, state, next, next_name } => {
                assert_eq!((t_ns, cpu, prev, state, next), (11_515_997_058_000, 0, 22275, PrevState::Blocked, 18));
                assert_eq!(next_name, "opt cgu.00");
            }
            ref e => panic!("{e:?}"),
        }
        assert_eq!(got[1], Ev::Wake { task: 22275, target: Some(1), waker: Some(18), group: Some(18) });
        assert_eq!(got[2], Ev::Migrate { task: 22275, to: 1 });
    }

    /// A test view of an event with owned names.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Ev {
        Switch { t_ns: u64, cpu: u32, prev: u64, state: PrevState, next: u64, next_name: &'static str },
        Wake { task: u64, target: Option<u32>, waker: Option<u64>, group: Option<u64> },
        Migrate { task: u64, to: u32 },
        Other,
    }

    fn e_static(e: &Event<'_>) -> Box<Ev> {
        Box::new(match *e {
            Event::Switch { t_ns, cpu, prev, prev_state, next } => Ev::Switch {
                t_ns,
                cpu,
                prev: prev.id,
                state: prev_state,
                next: next.id,
                next_name: Box::leak(next.name.to_string().into_boxed_str()),
            },
            Event::Wake { task, target_cpu, waker, .. } => Ev::Wake {
                task: task.id,
                target: target_cpu,
                waker: waker.map(|w| w.id),
                group: waker.and_then(|w| w.group),
            },
            Event::Migrate { task, to_cpu, .. } => Ev::Migrate { task: task.id, to: to_cpu },
            _ => Ev::Other,
        })
    }

    #[test]
    fn ftrace_and_trace_cmd_layouts() {
        // ftrace with latency flags and the tgid column; an old kernel's wakeup with success=; numeric and
        // combined states; trace-cmd's plugin form.
        let t = "# tracer: nop\n#\n\
                 \x20         <idle>-0       [001] d..2.  1234.500000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=123 next_prio=120\n\
                 \x20          bash-123     (  120) [001] d..3  1234.500100: sched_switch: prev_comm=bash prev_pid=123 prev_prio=120 prev_state=R+ ==> next_comm=kworker/1:1 next_pid=50 next_prio=120\n\
                 \x20   kworker/1:1-50      [001] d.s3  1234.500200: sched_wakeup: comm=bash pid=123 prio=120 success=0 target_cpu=001\n\
                 \x20   kworker/1:1-50      [001] d..3  1234.500300: sched_switch: prev_comm=kworker/1:1 prev_pid=50 prev_prio=120 prev_state=0x1 ==> next_comm=bash next_pid=123 next_prio=120\n\
                 \x20          bash-123   [001]  1234.500400: sched_switch: bash:123 [120] D|K ==> swapper/1:0 [120]\n\
                 \x20        <idle>-0     [000]  1234.500500: sched_wakeup: bash:123 [120] success=1 CPU:000\n\
                 \x20          bash-123   [000] 1234.500600: sched_switch: prev_comm=bash prev_pid=123 prev_prio=120 prev_state=256 next_comm=swapper/0 next_pid=0 next_prio=120\n\
                 \x20          bash-123   [000] 1234.500700: sched_switch: prev_comm=bash prev_pid=123 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";
        let mut got = Vec::new();
        let s = read(t.as_bytes(), &mut |e: &Event<'_>| got.push(*e_static(e))).unwrap();
        assert_eq!(s.events, 7, "{got:?}");
        assert_eq!(s.skipped.get("sched_wakeup"), Some(&1), "the failed wake-up");
        let states: Vec<PrevState> = got
            .iter()
            .filter_map(|e| match e {
                Ev::Switch { state, .. } => Some(*state),
                _ => None,
            })
            .collect();
        use PrevState::*;
        assert_eq!(states, vec![Runnable, Runnable, Blocked, Blocked, Runnable, Dead]);
        assert!(matches!(got[4], Ev::Wake { task: 123, target: Some(0), waker: Some(0), .. }));
        // The tgid column.
        let l = parse_line("          bash-123     (  120) [001] d..3  1234.500100: sched_switch: x").unwrap();
        assert_eq!((l.who.id, l.who.group, l.who.name), (123, Some(120), "bash"));
    }

    #[test]
    fn damage_and_refusal() {
        let good = "bash-1 [000] 1.000000: sched_switch: prev_comm=bash prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";
        // Truncated mid-line, where the cut line would still parse.
        let cut = format!("{good}{}", &good[..good.len() - 3]);
        let (ev, s) = events(&cut);
        assert_eq!(ev.len(), 1);
        let d = s.damage.unwrap();
        assert!(d.message.contains("truncated at line 2"), "{}", d.message);
        assert_eq!(d.offset, good.len() as u64);
        // Garbage after good lines.
        let bad = format!("{good}\u{1}\u{2}garbage\n{good}");
        let (ev, s) = events(&bad);
        assert_eq!(ev.len(), 1);
        assert!(s.damage.unwrap().message.contains("line 2"));
        // A sched_switch whose payload does not parse.
        let (_, s) = events(&format!("{good}bash-1 [000] 1.000001: sched_switch: what\n"));
        assert!(s.damage.unwrap().message.contains("sched_switch payload does not parse"));
        // Not a trace at all.
        let e = read(&b"hello\nworld\n"[..], &mut |_: &Event<'_>| {}).unwrap_err();
        assert!(e.0.contains("expected ftrace"), "{e}");
        let e = read(&[0xffu8, 0xfe, 0, 1, 2, b'\n'][..], &mut |_: &Event<'_>| {}).unwrap_err();
        assert!(e.0.contains("not a text trace"), "{e}");
        // A line past the limit before any event.
        let long = "x".repeat(MAX_LINE * 3);
        assert!(read(long.as_bytes(), &mut |_: &Event<'_>| {}).is_err());
    }

    /// CPU and thread numbers past the limits, and time going backwards, are damage at their line, before any
    /// per-CPU state is sized by them.
    #[test]
    fn cpus_threads_and_time_are_bounded_at_their_line() {
        let good = "bash-1 [000] 1.000000: sched_switch: prev_comm=bash prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";
        let cases = [
            ("bash-1 [99999999] 2.0: sched_switch: prev_comm=bash prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=x next_pid=0 next_prio=120", "CPU 99999999 is not a CPU number"),
            ("bash-1 [4294967295] 2.0: sched_switch: prev_comm=bash prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=x next_pid=0 next_prio=120", "CPU 4294967295 is not a CPU number"),
            ("bash-1 [99999999999999999999] 2.0: sched_switch: prev_comm=bash prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=x next_pid=0 next_prio=120", "not an event line"),
            ("bash-1 [000] 2.0: sched_migrate_task: comm=bash pid=1 prio=120 orig_cpu=0 dest_cpu=-1", "dest_cpu -1 is not a CPU number"),
            ("bash-1 [000] 2.0: sched_waking: comm=bash pid=1 prio=120 target_cpu=70000", "target_cpu 70000 is not a CPU number"),
            ("bash-1 [000] 2.0: sched_switch: prev_comm=bash prev_pid=-5 prev_prio=120 prev_state=S ==> next_comm=x next_pid=0 next_prio=120", "prev_pid -5 is not a thread id"),
            ("bash-1 [000] 2.0: sched_waking: comm=bash pid=99999999 prio=120 target_cpu=000", "pid 99999999 is not a thread id"),
            ("bash-1 [000] 0.5: sched_switch: prev_comm=bash prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=x next_pid=0 next_prio=120", "time goes backwards (0.500000000 s after 1.000000000 s)"),
        ];
        for (line, why) in cases {
            let (ev, s) = events(&format!("{good}{line}\n{good}"));
            assert_eq!(ev.len(), 1, "{line}");
            let d = s.damage.unwrap_or_else(|| panic!("{line}: read whole"));
            assert_eq!((d.line, d.offset), (Some(2), good.len() as u64), "{line}");
            assert!(d.message.starts_with("line 2 (byte ") && d.message.contains(why), "{why}: {}", d.message);
        }
    }

    #[test]
    fn seconds_are_exact() {
        assert_eq!(parse_seconds("11515.997058"), Some(11_515_997_058_000));
        assert_eq!(parse_seconds("1.123456789"), Some(1_123_456_789));
        assert_eq!(parse_seconds("1.1234567890"), None);
        assert_eq!(parse_seconds("1."), None);
    }
}
