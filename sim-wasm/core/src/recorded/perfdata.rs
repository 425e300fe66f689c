//! `perf.data` files as `perf record` / `perf sched record` write them, read with the `linux-perf-data` crate
//! (the file's sections, attributes and records, sorted by time through its round-based sorter). The crate hands
//! a tracepoint sample's raw payload undecoded; its layout is the tracepoint's format text, which perf stores in
//! the file's `HEADER_TRACING_DATA` section (the `format` files of `/sys/kernel/tracing/events/sched/*`): the
//! fields read are found there by name (`prev_pid`, `prev_state`, `next_pid`, `pid`, `target_cpu`, `dest_cpu`,
//! the `*_comm` arrays), so old and new layouts read alike. The current task of each sample (its pid and tid)
//! names the waker of a wake-up and the process of a switch's prev.

use super::{cpu_number, in_order, thread_id, Damage, Event, NotATrace, PrevState, ReadSummary, Task};
use linux_perf_data::linux_perf_event_reader::EventRecord;
use linux_perf_data::{Feature, PerfFileReader, PerfFileRecord};
use std::collections::HashMap;
use std::io::{Cursor, Read, Seek, SeekFrom};

use super::perfcheck::{self, HEADER_BYTES};

/// A field of a tracepoint's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Field {
    offset: usize,
    size: usize,
}

/// The fields of one tracepoint, by name.
#[derive(Debug, Clone, Default)]
struct Format {
    fields: HashMap<String, Field>,
}

/// Every `name: ... format: field:...` block of the tracing data, by event name.
fn formats(tracing: &[u8]) -> HashMap<String, Format> {
    let text = String::from_utf8_lossy(tracing);
    let mut out = HashMap::new();
    for block in text.split("name: ").skip(1) {
        let name = block.lines().next().unwrap_or("").trim().to_string();
        let mut f = Format::default();
        for line in block.lines().skip(1) {
            let line = line.trim();
            if line.starts_with("print fmt") || line.starts_with("name:") {
                break;
            }
            let Some(decl) = line.strip_prefix("field:") else { continue };
            let mut parts = decl.split(';').map(str::trim);
            let Some(decl) = parts.next() else { continue };
            let num = |key: &str, parts: &[&str]| {
                parts.iter().find_map(|p| p.strip_prefix(key)).and_then(|v| v.trim().parse::<usize>().ok())
            };
            let rest: Vec<&str> = parts.collect();
            let (Some(offset), Some(size)) = (num("offset:", &rest), num("size:", &rest)) else { continue };
            // `char prev_comm[16]`, `pid_t prev_pid`, `long prev_state`.
            let ident = decl.rsplit(' ').next().unwrap_or("").split('[').next().unwrap_or("").to_string();
            f.fields.insert(ident, Field { offset, size });
        }
        out.insert(name, f);
    }
    out
}

impl Format {
    fn int(&self, raw: &[u8], name: &str) -> Option<i64> {
        let f = self.fields.get(name)?;
        let b = raw.get(f.offset..f.offset + f.size)?;
        Some(match f.size {
            1 => i64::from(b[0] as i8),
            2 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            4 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            8 => i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            _ => return None,
        })
    }

    fn text<'a>(&self, raw: &'a [u8], name: &str) -> Option<&'a str> {
        let f = self.fields.get(name)?;
        let b = raw.get(f.offset..f.offset + f.size)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        std::str::from_utf8(&b[..end]).ok()
    }

    fn task<'a>(&self, raw: &'a [u8], comm: &str, pid: &str) -> Option<Task<'a>> {
        // A negative id stays visible (wrapped) for the bound to name.
        let id = self.int(raw, pid)? as u64;
        Some(Task { id, group: None, name: self.text(raw, comm).unwrap_or(""), idle: id == 0 })
    }
}

/// `prev_state` as the kernel stores it: the low byte's state bits (TASK_REPORT since 4.14, the raw state
/// before); any higher bit alone marks a preemption.
fn state(n: i64) -> PrevState {
    let low = n & 0xff;
    if low == 0 {
        PrevState::Runnable
    } else if low & 0x0f == 0 && low & 0x30 != 0 {
        PrevState::Dead
    } else {
        PrevState::Blocked
    }
}

/// The scheduling event of one sample (`Ok(None)`: none, as a failed wake-up), its CPUs and threads bounded.
fn event<'a>(
    name: &str,
    fmt: &Format,
    raw: &'a [u8],
    t_ns: u64,
    cpu: u32,
    current: Task<'a>,
) -> Result<Option<Event<'a>>, String> {
    let cpu = cpu_number("CPU", i64::from(cpu))?;
    let short = || "too short for its format".to_string();
    Ok(match name {
        "sched_switch" => {
            let (Some(mut prev), Some(next), Some(st)) = (
                fmt.task(raw, "prev_comm", "prev_pid"),
                fmt.task(raw, "next_comm", "next_pid"),
                fmt.int(raw, "prev_state"),
            ) else {
                return Err(short());
            };
            thread_id("prev_pid", &prev)?;
            thread_id("next_pid", &next)?;
            if prev.id == current.id {
                prev.group = current.group;
            }
            Some(Event::Switch { t_ns, cpu, prev, prev_state: state(st), next })
        }
        "sched_wakeup" | "sched_waking" | "sched_wakeup_new" => {
            let Some(task) = fmt.task(raw, "comm", "pid") else { return Ok(None) };
            thread_id("pid", &task)?;
            if fmt.int(raw, "success") == Some(0) {
                None
            } else {
                let target_cpu = fmt.int(raw, "target_cpu").map(|c| cpu_number("target_cpu", c)).transpose()?;
                Some(Event::Wake { t_ns, cpu, task, target_cpu, waker: Some(current) })
            }
        }
        "sched_migrate_task" => match (fmt.task(raw, "comm", "pid"), fmt.int(raw, "dest_cpu")) {
            (Some(task), Some(to)) => {
                thread_id("pid", &task)?;
                Some(Event::Migrate { t_ns, task, to_cpu: cpu_number("dest_cpu", to)? })
            }
            _ => None,
        },
        _ => None,
    })
}

/// Reads a perf.data file from bytes (see [`read`]).
pub fn read_bytes(bytes: &[u8], sink: &mut dyn FnMut(&Event<'_>)) -> Result<ReadSummary, NotATrace> {
    read(Cursor::new(bytes), sink)
}

/// Reads a perf.data file, streaming: the crate reads the header and the sections it names, then the data
/// section record by record, sorted by time a round (perf's `FINISHED_ROUND`) at a time, so memory is about one
/// round's records whatever the file's size. Hands each scheduling event to `sink` in time order.
pub fn read<R: Read + Seek>(mut r: R, sink: &mut dyn FnMut(&Event<'_>)) -> Result<ReadSummary, NotATrace> {
    let refuse = |e: String| NotATrace(format!("perf.data: {e}"));
    let io = |e: std::io::Error| refuse(format!("cannot read: {e}"));
    let len = r.seek(SeekFrom::End(0)).map_err(io)?;
    if len < HEADER_BYTES {
        return Err(refuse(format!("the file is {len} bytes, shorter than perf.data's {HEADER_BYTES}-byte header")));
    }
    // Every size the crate would allocate from is checked first; a record that does not fit cuts the data there.
    let layout = perfcheck::check(&mut r, len).map_err(refuse)?;
    let patched = perfcheck::Patched::new(r, &layout).map_err(io)?;
    let PerfFileReader { mut perf_file, mut record_iter } =
        PerfFileReader::parse_file(patched).map_err(|e| refuse(format!("corrupt: {e}")))?;
    let fmts = perf_file.feature_section_data(Feature::TRACING_DATA).map(formats).unwrap_or_default();
    // Which sched event each attribute is, and its format.
    let kinds: Vec<Option<(String, Format)>> = perf_file
        .event_attributes()
        .iter()
        .map(|a| {
            let name = a.name()?;
            let short = name.strip_prefix("sched:").unwrap_or(name);
            Some((short.to_string(), fmts.get(short).cloned()?))
        })
        .collect();
    if !kinds.iter().flatten().any(|(n, _)| n == "sched_switch") {
        return Err(refuse(
            "no sched:sched_switch event with its format in this file: record with `perf sched record` (or \
             `perf record -e sched:sched_switch -e sched:sched_waking ...`)"
                .to_string(),
        ));
    }
    let mut s = ReadSummary { bytes: len, ..ReadSummary::default() };
    let mut last_t = 0u64;
    loop {
        let rec = match record_iter.next_record(&mut perf_file) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                s.damage = Some(Damage {
                    offset: 0,
                    line: None,
                    message: format!("perf.data damaged after {} events: {e}", s.events),
                });
                break;
            }
        };
        let PerfFileRecord::EventRecord { attr_index, record } = rec else { continue };
        let Ok(EventRecord::Sample(sample)) = record.parse() else {
            s.skip("(non-sample record)");
            continue;
        };
        let Some((name, fmt)) = kinds.get(attr_index).and_then(|k| k.as_ref()) else {
            let n = perf_file.event_attributes().get(attr_index).and_then(|a| a.name()).unwrap_or("(unnamed)");
            s.skip(n);
            continue;
        };
        let (Some(raw), Some(t_ns), Some(cpu)) = (sample.raw, sample.timestamp, sample.cpu) else {
            s.skip(name);
            continue;
        };
        let raw = raw.as_slice();
        let raw: &[u8] = &raw;
        let tid = sample.tid.unwrap_or(-1).max(0) as u64;
        let current = Task { id: tid, group: sample.pid.map(|p| p.max(0) as u64), name: "", idle: tid == 0 };
        let ev = event(name, fmt, raw, t_ns, cpu, current).and_then(|e| {
            in_order(t_ns, last_t)?;
            Ok(e)
        });
        match ev {
            Ok(Some(e)) => {
                last_t = t_ns;
                s.events += 1;
                sink(&e);
            }
            Ok(None) => s.skip(name),
            Err(why) => {
                s.damage = Some(Damage {
                    offset: 0,
                    line: None,
                    message: format!("perf.data: the {name} sample after {} events: {why}", s.events),
                });
                break;
            }
        }
    }
    if let (None, Some(c)) = (&s.damage, layout.cut) {
        s.damage = Some(Damage {
            offset: c.offset,
            line: None,
            message: format!("perf.data damaged after {} events: {}", s.events, c.why),
        });
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorded::replay::tests::fixture;

    /// The perf.data the text fixture was printed from gives the same events.
    #[test]
    fn perf_data_reads_as_its_perf_script_text() {
        let data = fixture("perf/sched.data.gz");
        let text = fixture("perf/sched.perf-script.txt.gz");
        let key = |e: &Event<'_>| match *e {
            Event::Switch { t_ns, cpu, prev, prev_state, next } => {
                format!("{t_ns} {cpu} switch {} {prev_state:?} {}", prev.id, next.id)
            }
            Event::Wake { t_ns, task, target_cpu, waker, .. } => {
                format!("{t_ns} wake {} {target_cpu:?} {:?}", task.id, waker.map(|w| w.id))
            }
            Event::Migrate { t_ns, task, to_cpu } => format!("{t_ns} migrate {} {to_cpu}", task.id),
            _ => String::new(),
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let sd = read_bytes(&data, &mut |e: &Event<'_>| a.push(key(e))).unwrap();
        let st = super::super::text::read(&text[..], &mut |e: &Event<'_>| b.push(key(e))).unwrap();
        assert!(sd.damage.is_none());
        assert_eq!(sd.events, st.events);
        assert_eq!(a, b);
        assert!(sd.skipped.contains_key("sched_stat_runtime"), "{:?}", sd.skipped);
        // Not a perf.data file; one cut short.
        let e = read_bytes(b"PERFILE2 but nothing else", &mut |_: &Event<'_>| {}).unwrap_err();
        assert!(e.0.contains("shorter than perf.data's 104-byte header"), "{e}");
        let e = read_bytes(&data[..data.len() / 2], &mut |_: &Event<'_>| {}).unwrap_err();
        assert!(e.0.contains("truncated: its data section ends at byte"), "{e}");
    }
}
