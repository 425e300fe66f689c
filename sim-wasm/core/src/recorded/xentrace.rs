//! xentrace binary traces, as `xen/include/public/trace.h` and `tools/xentrace/formats` define them.
//!
//! A record (`struct t_rec`) is a 32-bit header (event in bits 0-27, the count of extra 32-bit words in bits
//! 28-30, bit 31 set when a 64-bit TSC follows as `cycles_lo, cycles_hi`), then the TSC, then the extra words.
//! xentrace writes each pCPU's buffer in windows, each after a `TRC_TRACE_CPU_CHANGE` record (0x0001f003) whose
//! extra words are the CPU and (since Xen 3.3) the window's size in bytes; within a CPU records are in time
//! order, across CPUs they are not, so the reader indexes the windows in one pass and then merges the CPUs by TSC,
//! each CPU read through a buffer of its own (memory: the window index and [`CHUNK`] bytes per CPU).
//!
//! Events read (all little-endian, x86's):
//! - `TRC_SCHED_RUNSTATE_CHANGE` (0x00021001 | old << 8 | new << 4; runstates 0 running, 1 runnable, 2 blocked,
//!   3 offline), one word `vcpu | domain << 16`: to running is [`Event::Run`], from running [`Event::Stop`],
//!   blocked or offline to runnable [`Event::Wake`];
//! - `__enter_scheduler` (`TRC_SCHED_SWITCH`, 0x0002800a: prev dom, prev vcpu, next dom, next vcpu),
//!   `TRC_SCHED_WAKE` (0x00028004), Credit's `boost` / `unboost` (0x00022007 / 8: dom, vcpu) and
//!   `account_start` / `account_stop` (0x00022002 / 3: dom, vcpu, active): [`Event::Note`]s for the decision log.
//!
//! Times: TSC ticks from the first record, converted with [`super::ReadOptions::tsc_hz`]. A xentrace file has
//! no frequency record; without one the reader uses xenalyze's default, 2.4 GHz.

use super::{Damage, Event, NotATrace, PrevState, ReadOptions, ReadSummary, Task, MAX_CPUS};
use std::io::{Read, Seek, SeekFrom};

pub const TRC_LOST_RECORDS: u32 = 0x0001_f001;
pub const TRC_TRACE_WRAP_BUFFER: u32 = 0x0001_f002;
pub const TRC_TRACE_CPU_CHANGE: u32 = 0x0001_f003;
pub const TRC_SCHED_RUNSTATE_CHANGE: u32 = 0x0002_1001;
pub const TRC_SCHED_CONTINUE_RUNNING: u32 = 0x0002_1002;
pub const TRC_SCHED_WAKE: u32 = 0x0002_8004;
pub const TRC_SCHED_SWITCH: u32 = 0x0002_800a;
pub const TRC_CSCHED_ACCOUNT_START: u32 = 0x0002_2002;
pub const TRC_CSCHED_ACCOUNT_STOP: u32 = 0x0002_2003;
pub const TRC_CSCHED_BOOST_START: u32 = 0x0002_2007;
pub const TRC_CSCHED_BOOST_END: u32 = 0x0002_2008;
/// Xen's idle domain id (`DOMID_IDLE`).
pub const DOMID_IDLE: u32 = 0x7fff;
/// xenalyze's default TSC frequency [Hz].
pub const DEFAULT_TSC_HZ: u64 = 2_400_000_000;
/// Bytes each CPU's stream reads at a time.
pub const CHUNK: usize = 64 * 1024;
/// Most CPU windows indexed; a file with more is read up to there.
const MAX_WINDOWS: usize = 1 << 20;

/// Whether a file starts as xentrace's do: a `TRC_TRACE_CPU_CHANGE` record.
pub fn looks_like(head: &[u8]) -> bool {
    let Some(h) = head.get(..4) else { return false };
    let h = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
    let extra = (h >> 28) & 7;
    h & 0x0fff_ffff == TRC_TRACE_CPU_CHANGE && (extra == 1 || extra == 2) && h >> 31 == 0
}

/// One record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rec {
    pub event: u32,
    pub tsc: Option<u64>,
    pub extra: [u32; 7],
    pub n: usize,
}

impl Rec {
    fn bytes(h: u32) -> usize {
        4 + if h >> 31 == 1 { 8 } else { 0 } + 4 * ((h >> 28) & 7) as usize
    }

    /// Parses a record at the start of `b`; `None` when `b` is shorter than the record.
    fn parse(b: &[u8]) -> Option<(Rec, usize)> {
        let word = |i: usize| b.get(i..i + 4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        let h = word(0)?;
        let len = Rec::bytes(h);
        if b.len() < len {
            return None;
        }
        let mut at = 4;
        let tsc = if h >> 31 == 1 {
            at += 8;
            Some(u64::from(word(4)?) | u64::from(word(8)?) << 32)
        } else {
            None
        };
        let n = ((h >> 28) & 7) as usize;
        let mut extra = [0u32; 7];
        for (i, e) in extra.iter_mut().enumerate().take(n) {
            *e = word(at + 4 * i)?;
        }
        Some((Rec { event: h & 0x0fff_ffff, tsc, extra, n }, len))
    }

    /// The record's bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let h = self.event | ((self.n as u32) << 28) | if self.tsc.is_some() { 1 << 31 } else { 0 };
        out.extend_from_slice(&h.to_le_bytes());
        if let Some(t) = self.tsc {
            out.extend_from_slice(&(t as u32).to_le_bytes());
            out.extend_from_slice(&((t >> 32) as u32).to_le_bytes());
        }
        for e in &self.extra[..self.n] {
            out.extend_from_slice(&e.to_le_bytes());
        }
    }
}

/// Writes xentrace files as the documented layout has them: for the tests' fixtures and the benchmarks (no real
/// Xen host was traced for this project).
#[derive(Debug, Default)]
pub struct Writer {
    pub out: Vec<u8>,
}

impl Writer {
    /// One window of `cpu`'s records, after its `TRC_TRACE_CPU_CHANGE` record (with the window size).
    pub fn window(&mut self, cpu: u32, recs: &[Rec]) {
        let mut body = Vec::new();
        recs.iter().for_each(|r| r.encode(&mut body));
        let change =
            Rec { event: TRC_TRACE_CPU_CHANGE, tsc: None, extra: [cpu, body.len() as u32, 0, 0, 0, 0, 0], n: 2 };
        change.encode(&mut self.out);
        self.out.extend_from_slice(&body);
    }

    /// A record with a TSC.
    pub fn rec(event: u32, tsc: u64, extra: &[u32]) -> Rec {
        let mut e = [0u32; 7];
        e[..extra.len()].copy_from_slice(extra);
        Rec { event, tsc: Some(tsc), extra: e, n: extra.len() }
    }

    /// A runstate change of `dom`'s `vcpu` (runstates: 0 running, 1 runnable, 2 blocked, 3 offline).
    pub fn runstate(tsc: u64, dom: u32, vcpu: u32, old: u32, new: u32) -> Rec {
        Writer::rec(TRC_SCHED_RUNSTATE_CHANGE | (old & 3) << 8 | (new & 3) << 4, tsc, &[vcpu | dom << 16])
    }
}

/// A synthetic xentrace file of `duration_ms` (for tests and the throughput benchmark), written as Xen's Credit
/// scheduler would trace this host: 2 pCPUs at 2.4 GHz; on pCPU 0 domain 2's one vCPU wakes every `period_us`
/// (boosted), preempts domain 1's vCPU 0 after 10 us, runs 1/10 of the period and blocks; on pCPU 1 domain 1's
/// vCPU 1 and domain 3's vCPU 0 take turns of 30 and 10 ms. Each CPU's records go in windows of
/// `window_recs`, the two CPUs' windows interleaved in the file.
pub fn synthetic(duration_ms: u64, period_us: u64, window_recs: usize) -> Vec<u8> {
    let tick = |us: u64| us * 2_400;
    let end = duration_ms * 1_000;
    let period = period_us.max(20);
    let mut cpu0 = vec![Writer::runstate(0, 1, 0, 1, 0)];
    let mut t = 0;
    while t + period <= end {
        let run = period / 10;
        cpu0.extend([
            Writer::runstate(tick(t), 2, 0, 2, 1),
            Writer::rec(TRC_SCHED_WAKE, tick(t), &[2, 0]),
            Writer::rec(TRC_CSCHED_BOOST_START, tick(t), &[2, 0]),
            Writer::rec(TRC_SCHED_SWITCH, tick(t + 10), &[1, 0, 2, 0]),
            Writer::runstate(tick(t + 10), 1, 0, 0, 1),
            Writer::runstate(tick(t + 10), 2, 0, 1, 0),
            Writer::rec(TRC_CSCHED_BOOST_END, tick(t + 10 + run), &[2, 0]),
            Writer::rec(TRC_SCHED_SWITCH, tick(t + 10 + run), &[2, 0, 1, 0]),
            Writer::runstate(tick(t + 10 + run), 2, 0, 0, 2),
            Writer::runstate(tick(t + 10 + run), 1, 0, 1, 0),
        ]);
        t += period;
    }
    cpu0.push(Writer::runstate(tick(end), 1, 0, 0, 1));
    let mut cpu1 = vec![Writer::runstate(0, 1, 1, 1, 0)];
    let (mut t, mut d1) = (0, true);
    while t < end {
        t = (t + if d1 { 30_000 } else { 10_000 }).min(end);
        let (a, b) = if d1 { ((1, 1), (3, 0)) } else { ((3, 0), (1, 1)) };
        cpu1.extend([
            Writer::rec(TRC_SCHED_SWITCH, tick(t), &[a.0, a.1, b.0, b.1]),
            Writer::runstate(tick(t), a.0, a.1, 0, 1),
            Writer::runstate(tick(t), b.0, b.1, 1, 0),
        ]);
        d1 = !d1;
    }
    let mut w = Writer::default();
    let n = window_recs.max(1);
    let (mut c0, mut c1) = (cpu0.chunks(n), cpu1.chunks(n));
    loop {
        let (a, b) = (c0.next(), c1.next());
        if a.is_none() && b.is_none() {
            break;
        }
        if let Some(a) = a {
            w.window(0, a);
        }
        if let Some(b) = b {
            w.window(1, b);
        }
    }
    w.out
}

/// A CPU's window: its records lie in `[start, end)`.
#[derive(Debug, Clone, Copy)]
struct Window {
    cpu: u32,
    start: u64,
    end: u64,
}

/// A CPU's records in time order, read through its own buffer.
#[derive(Debug, Default)]
struct Stream {
    windows: std::collections::VecDeque<(u64, u64)>,
    buf: Vec<u8>,
    pos: usize,
    /// File offset of `buf[0]`.
    at: u64,
    /// End of the current window.
    end: u64,
    last_tsc: u64,
    /// The next record and its file offset.
    head: Option<(Rec, u64)>,
}

impl Stream {
    /// The next record of this CPU and its file offset.
    fn next<R: Read + Seek>(&mut self, f: &mut R) -> std::io::Result<Option<(Rec, u64)>> {
        loop {
            if let Some((r, len)) = Rec::parse(&self.buf[self.pos..]) {
                let offset = self.at + self.pos as u64;
                self.pos += len;
                return Ok(Some((r, offset)));
            }
            // Refill: what is left of the buffer, then the rest of the window (up to a chunk).
            let read_to = self.at + self.buf.len() as u64;
            if read_to >= self.end {
                // The window is done (the index pass checked that its records end on its edge).
                let Some((s, e)) = self.windows.pop_front() else { return Ok(None) };
                self.buf.clear();
                self.pos = 0;
                self.at = s;
                self.end = e;
                continue;
            }
            self.buf.drain(..self.pos);
            self.at += self.pos as u64;
            self.pos = 0;
            let want = ((self.end - read_to) as usize).min(CHUNK);
            let old = self.buf.len();
            self.buf.resize(old + want, 0);
            f.seek(SeekFrom::Start(read_to))?;
            f.read_exact(&mut self.buf[old..])?;
        }
    }
}

/// Reads a xentrace file, handing each scheduling event to `sink` in time order.
pub fn read<R: Read + Seek>(
    mut f: R,
    opts: &ReadOptions,
    sink: &mut dyn FnMut(&Event<'_>),
) -> Result<ReadSummary, NotATrace> {
    let io = |e: std::io::Error| NotATrace(format!("cannot read the trace: {e}"));
    let hz = opts.tsc_hz.unwrap_or(DEFAULT_TSC_HZ);
    if hz == 0 {
        return Err(NotATrace("tsc_hz must be positive".to_string()));
    }
    let mut s = ReadSummary::default();
    let (windows, damage, bytes) = index(&mut f).map_err(io)?;
    s.bytes = bytes;
    s.damage = damage;
    if windows.is_empty() && s.damage.as_ref().is_some_and(|d| d.offset > 0) {
        // A xentrace file damaged in its first window: nothing to read before the damage.
        return Ok(s);
    }
    if windows.is_empty() {
        return Err(NotATrace(
            "not a xentrace file: expected TRC_TRACE_CPU_CHANGE records (0x0001f003) marking each CPU's buffer"
                .to_string(),
        ));
    }
    let ncpu = windows.iter().map(|w| w.cpu).max().unwrap_or(0) as usize + 1;
    let mut streams: Vec<Stream> = (0..ncpu).map(|_| Stream::default()).collect();
    for w in &windows {
        streams[w.cpu as usize].windows.push_back((w.start, w.end));
    }
    drop(windows);
    for st in &mut streams {
        st.head = st.next(&mut f).map_err(io)?;
        st.last_tsc = st.head.and_then(|(r, _)| r.tsc).unwrap_or(0);
    }
    let base = streams.iter().filter_map(|st| st.head.and_then(|(r, _)| r.tsc)).min().unwrap_or(0);
    let mut names = Names::default();
    // The CPU whose next record comes first (records without a TSC keep their CPU's last).
    while let Some(cpu) = (0..ncpu)
        .filter(|&c| streams[c].head.is_some())
        .min_by_key(|&c| (streams[c].head.and_then(|(r, _)| r.tsc).unwrap_or(streams[c].last_tsc), c))
    {
        let st = &mut streams[cpu];
        let Some((r, at)) = st.head.take() else { break };
        if let Some(t) = r.tsc {
            if t < st.last_tsc {
                // Within a CPU's buffer Xen writes records in TSC order: an earlier one is damage.
                if s.damage.as_ref().is_none_or(|d| d.offset > at) {
                    let message =
                        format!("corrupt at byte {at}: CPU {cpu}'s TSC goes backwards ({t} after {})", st.last_tsc);
                    s.damage = Some(Damage { offset: at, line: None, message });
                }
                break;
            }
            st.last_tsc = t;
        }
        let tsc = st.last_tsc;
        st.head = st.next(&mut f).map_err(io)?;
        let t_ns = (u128::from(tsc.saturating_sub(base)) * 1_000_000_000 / u128::from(hz)) as u64;
        emit(&r, t_ns, cpu as u32, &mut names, &mut s, sink);
    }
    Ok(s)
}

/// vCPU names, formatted once each (`d1v0`).
#[derive(Default)]
struct Names {
    by_id: std::collections::HashMap<u64, String>,
}

impl Names {
    fn get(&mut self, dom: u32, vcpu: u32) -> &str {
        let id = u64::from(dom) << 16 | u64::from(vcpu & 0xffff);
        self.by_id.entry(id).or_insert_with(|| {
            if dom == DOMID_IDLE {
                format!("idle{vcpu}")
            } else {
                format!("d{dom}v{vcpu}")
            }
        })
    }
}

fn task(names: &mut Names, dom: u32, vcpu: u32) -> Task<'_> {
    let (dom, vcpu) = (dom & 0xffff, vcpu & 0xffff);
    let idle = dom == DOMID_IDLE;
    Task { id: u64::from(dom) << 16 | u64::from(vcpu), group: Some(u64::from(dom)), name: names.get(dom, vcpu), idle }
}

/// Hands on the event a record holds, or counts it as skipped.
fn emit(r: &Rec, t_ns: u64, cpu: u32, names: &mut Names, s: &mut ReadSummary, sink: &mut dyn FnMut(&Event<'_>)) {
    let e = r.event;
    let x = &r.extra;
    let packed = |w: u32| (w >> 16, w & 0xffff);
    let mut note = |what: &'static str, names: &mut Names, s: &mut ReadSummary| {
        if r.n >= 2 {
            s.events += 1;
            sink(&Event::Note { t_ns, cpu, task: task(names, x[0], x[1]), what });
        } else {
            s.skip(what);
        }
    };
    if e & 0xffff_f00f == TRC_SCHED_RUNSTATE_CHANGE && r.n >= 1 {
        let (old, new) = ((e >> 8) & 3, (e >> 4) & 3);
        let (dom, vcpu) = packed(x[0]);
        let t = task(names, dom, vcpu);
        let ev = match (old, new) {
            (_, 0) => Event::Run { t_ns, cpu, task: t },
            (0, n) => {
                Event::Stop { t_ns, cpu, task: t, state: if n == 1 { PrevState::Runnable } else { PrevState::Blocked } }
            }
            (2 | 3, 1) => Event::Wake { t_ns, cpu, task: t, target_cpu: None, waker: None },
            (1, _) => Event::Stop { t_ns, cpu, task: t, state: PrevState::Blocked },
            _ => {
                s.skip("runstate_change");
                return;
            }
        };
        s.events += 1;
        sink(&ev);
        return;
    }
    match e {
        TRC_SCHED_SWITCH if r.n >= 4 => {
            s.events += 1;
            sink(&Event::Note { t_ns, cpu, task: task(names, x[2], x[3]), what: "__enter_scheduler" });
        }
        TRC_SCHED_WAKE => note("wake", names, s),
        TRC_CSCHED_BOOST_START => note("csched:boost", names, s),
        TRC_CSCHED_BOOST_END => note("csched:unboost", names, s),
        TRC_CSCHED_ACCOUNT_START => note("csched:account_start", names, s),
        TRC_CSCHED_ACCOUNT_STOP => note("csched:account_stop", names, s),
        TRC_LOST_RECORDS => {
            // The count of records Xen could not write is the first word.
            let lost = u64::from(x[0]).max(1);
            *s.skipped.entry("lost_records".to_string()).or_default() += lost;
        }
        TRC_TRACE_WRAP_BUFFER => s.skip("wrap_buffer"),
        TRC_SCHED_CONTINUE_RUNNING => s.skip("continue_running"),
        _ => s.skip(&format!("0x{e:08x}")),
    }
}

/// Pass one: every CPU window's byte range, checking that records end on the windows' edges. Returns the windows
/// read before any damage, the damage, and the bytes looked at.
fn index<R: Read + Seek>(f: &mut R) -> std::io::Result<(Vec<Window>, Option<Damage>, u64)> {
    let len = f.seek(SeekFrom::End(0))?;
    f.seek(SeekFrom::Start(0))?;
    let mut r = std::io::BufReader::with_capacity(CHUNK, f);
    let mut windows: Vec<Window> = Vec::new();
    let mut at = 0u64;
    let damage = |offset: u64, message: String| Some(Damage { offset, line: None, message });
    let mut hdr = [0u8; 4];
    // The window open in the 3.x layout (CPU_CHANGE with the CPU only): it runs to the next CPU_CHANGE.
    let mut open: Option<Window> = None;
    let push = |windows: &mut Vec<Window>, w: Window| {
        match windows.last_mut() {
            Some(last) if last.cpu == w.cpu && last.end == w.start => last.end = w.end,
            _ => windows.push(w),
        }
        windows.len() <= MAX_WINDOWS
    };
    loop {
        if at == len {
            if let Some(w) = open.take() {
                push(&mut windows, Window { end: at, ..w });
            }
            return Ok((windows, None, at));
        }
        if len - at < 4 {
            return Ok((windows, damage(at, format!("truncated at byte {at}: a record header is cut")), at));
        }
        r.read_exact(&mut hdr)?;
        let h = u32::from_le_bytes(hdr);
        let rec_len = Rec::bytes(h) as u64;
        if at + rec_len > len {
            if let Some(w) = open.take() {
                push(&mut windows, Window { end: at, ..w });
            }
            return Ok((windows, damage(at, format!("truncated at byte {at}: a record is cut")), at));
        }
        let mut rest = [0u8; 40];
        r.read_exact(&mut rest[..rec_len as usize - 4])?;
        let event = h & 0x0fff_ffff;
        if event == TRC_TRACE_CPU_CHANGE && h >> 31 == 0 {
            if let Some(w) = open.take() {
                if !push(&mut windows, Window { end: at, ..w }) {
                    return Ok((windows, damage(at, "too many CPU windows".to_string()), at));
                }
            }
            let word = |i: usize| u32::from_le_bytes([rest[i], rest[i + 1], rest[i + 2], rest[i + 3]]);
            let n = (h >> 28) & 7;
            let cpu = word(0);
            if n == 0 || cpu >= MAX_CPUS {
                let msg = format!("corrupt at byte {at}: a CPU change record names CPU {cpu}");
                return Ok((windows, damage(at, msg), at));
            }
            let start = at + rec_len;
            if n >= 2 {
                let size = u64::from(word(4));
                if start + size > len {
                    // Read the complete records of the cut window.
                    let good = whole_records(&mut r, len - start)?;
                    if good > 0 {
                        push(&mut windows, Window { cpu, start, end: start + good });
                    }
                    let msg = format!(
                        "truncated: CPU {cpu}'s window at byte {at} holds {size} bytes, the file ends {} bytes into it",
                        len - start
                    );
                    return Ok((windows, damage(at, msg), len));
                }
                // Its records must end on its edge.
                let good = whole_records(&mut r, size)?;
                if good != size {
                    if good > 0 {
                        push(&mut windows, Window { cpu, start, end: start + good });
                    }
                    let msg = format!("corrupt at byte {}: a malformed record in CPU {cpu}'s window", start + good);
                    return Ok((windows, damage(start + good, msg), start + good));
                }
                if size > 0 && !push(&mut windows, Window { cpu, start, end: start + size }) {
                    return Ok((windows, damage(at, "too many CPU windows".to_string()), at));
                }
                at = start + size;
            } else {
                open = Some(Window { cpu, start, end: start });
                at = start;
            }
            continue;
        }
        if open.is_none() {
            let msg = if windows.is_empty() && at == 0 {
                "not a xentrace file: it does not start with a TRC_TRACE_CPU_CHANGE record".to_string()
            } else {
                format!("corrupt at byte {at}: a record outside any CPU window (0x{event:08x})")
            };
            return Ok((windows, damage(at, msg), at));
        }
        if event == 0 {
            if let Some(w) = open.take() {
                push(&mut windows, Window { end: at, ..w });
            }
            return Ok((windows, damage(at, format!("corrupt at byte {at}: a record with no event")), at));
        }
        at += rec_len;
    }
}

/// Walks whole records over the next `size` bytes; how many bytes of them are whole records (the rest is
/// skipped, so the reader stands at the end of the `size` bytes either way).
fn whole_records<R: Read>(r: &mut R, size: u64) -> std::io::Result<u64> {
    let mut done = 0u64;
    let mut hdr = [0u8; 4];
    let mut rest = [0u8; 40];
    let mut good = 0u64;
    while done + 4 <= size {
        r.read_exact(&mut hdr)?;
        let h = u32::from_le_bytes(hdr);
        let len = Rec::bytes(h) as u64;
        if done + len > size || h & 0x0fff_ffff == 0 {
            done += 4;
            break;
        }
        r.read_exact(&mut rest[..len as usize - 4])?;
        done += len;
        good = done;
    }
    // Skip what is left of the window.
    let left = size - done;
    std::io::copy(&mut r.take(left), &mut std::io::sink())?;
    Ok(good)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// Two pCPUs, domains 1 and 2 (one vCPU each) and the idle domain, in two windows per CPU written out of
    /// time order across CPUs, as xentrace writes them.
    pub(crate) fn fixture() -> Vec<u8> {
        let mhz = 2_400; // ticks per us at 2.4 GHz
        let us = |u: u64| u * mhz;
        let mut w = Writer::default();
        // CPU 0: d1v0 runs 0-1000 us, blocks; idle; d1v0 woken at 1500, runs 1600-2000.
        w.window(
            0,
            &[
                Writer::runstate(us(0), 1, 0, 1, 0),
                Writer::rec(TRC_CSCHED_BOOST_START, us(0), &[1, 0]),
                Writer::rec(TRC_SCHED_SWITCH, us(1000), &[1, 0, DOMID_IDLE, 0]),
                Writer::runstate(us(1000), 1, 0, 0, 2),
                Writer::runstate(us(1000), DOMID_IDLE, 0, 1, 0),
            ],
        );
        // CPU 1's first window, before CPU 0's second one in the file.
        w.window(
            1,
            &[
                Writer::runstate(us(0), 2, 0, 1, 0),
                Writer::rec(0x0002_2203, us(500), &[2, 10, 20, 30]),
                Writer::runstate(us(2000), 2, 0, 0, 1),
            ],
        );
        w.window(
            0,
            &[
                Writer::runstate(us(1500), 1, 0, 2, 1),
                Writer::runstate(us(1600), DOMID_IDLE, 0, 0, 1),
                Writer::runstate(us(1600), 1, 0, 1, 0),
                Writer::runstate(us(2000), 1, 0, 0, 1),
            ],
        );
        w.out
    }

    fn collect(bytes: &[u8]) -> (Vec<String>, ReadSummary) {
        let mut out = Vec::new();
        let s = read(Cursor::new(bytes), &ReadOptions::default(), &mut |e: &Event<'_>| {
            out.push(match *e {
                Event::Run { t_ns, cpu, task, .. } => format!("{t_ns} cpu{cpu} run {}", task.name),
                Event::Stop { t_ns, cpu, task, state } => format!("{t_ns} cpu{cpu} stop {} {state:?}", task.name),
                Event::Wake { t_ns, task, .. } => format!("{t_ns} wake {}", task.name),
                Event::Note { t_ns, what, task, .. } => format!("{t_ns} {what} {}", task.name),
                _ => "?".to_string(),
            })
        })
        .unwrap();
        (out, s)
    }

    #[test]
    fn reads_and_merges_cpus_by_tsc() {
        let bytes = fixture();
        assert!(looks_like(&bytes));
        let (ev, s) = collect(&bytes);
        assert_eq!(
            ev,
            vec![
                "0 cpu0 run d1v0",
                "0 csched:boost d1v0",
                "0 cpu1 run d2v0",
                "1000000 __enter_scheduler idle0",
                "1000000 cpu0 stop d1v0 Blocked",
                "1000000 cpu0 run idle0",
                "1500000 wake d1v0",
                "1600000 cpu0 stop idle0 Runnable",
                "1600000 cpu0 run d1v0",
                "2000000 cpu0 stop d1v0 Runnable",
                "2000000 cpu1 stop d2v0 Runnable",
            ]
        );
        assert_eq!(s.skipped.get("0x00022203"), Some(&1));
        assert!(s.damage.is_none());
        // A user-given frequency: 1.2 GHz doubles every time.
        let mut last = 0;
        read(Cursor::new(&bytes), &ReadOptions { tsc_hz: Some(1_200_000_000) }, &mut |e: &Event<'_>| last = e.t_ns())
            .unwrap();
        assert_eq!(last, 4_000_000);
    }

    #[test]
    fn truncated_and_corrupt_files_say_where() {
        let bytes = fixture();
        // Cut inside CPU 0's second window: the records before the cut are read.
        let cut = &bytes[..bytes.len() - 10];
        let (ev, s) = collect(cut);
        let d = s.damage.unwrap();
        assert!(d.message.starts_with("truncated: CPU 0's window"), "{}", d.message);
        assert!(ev.len() >= 8 && ev.len() < 11, "{ev:?}");
        // A cut header.
        let (_, s) = collect(&[bytes.as_slice(), &[1, 2]].concat());
        assert!(s.damage.unwrap().message.contains("record header is cut"));
        // A zeroed record inside the first window.
        let mut bad = bytes.clone();
        bad[12..16].copy_from_slice(&0u32.to_le_bytes());
        let (_, s) = collect(&bad);
        assert!(s.damage.unwrap().message.contains("corrupt at byte 12"));
        // A TSC that goes backwards within a CPU: damage at that record, the events before it read.
        let mut w = Writer::default();
        w.window(
            0,
            &[
                Writer::runstate(5000, 1, 0, 1, 0),
                Writer::runstate(9000, 1, 0, 0, 2),
                Writer::runstate(100, 1, 0, 2, 1),
            ],
        );
        let (ev, s) = collect(&w.out);
        let d = s.damage.unwrap();
        assert_eq!(d.offset, 12 + 2 * 16, "{}", d.message);
        assert!(d.message.contains("CPU 0's TSC goes backwards (100 after 9000)"), "{}", d.message);
        assert_eq!(ev.len(), 2);
        // A CPU change record past the CPUs a trace may have.
        let mut w = Writer::default();
        w.window(MAX_CPUS, &[Writer::runstate(0, 1, 0, 1, 0)]);
        let (_, s) = collect(&[fixture(), w.out].concat());
        assert!(s.damage.unwrap().message.contains(&format!("names CPU {MAX_CPUS}")));
        // Not xentrace at all.
        let e = read(Cursor::new(b"hello world, this is text"), &ReadOptions::default(), &mut |_: &Event<'_>| {})
            .unwrap_err();
        assert!(e.0.contains("TRC_TRACE_CPU_CHANGE"), "{e}");
        assert!(!looks_like(b"hello"));
    }
}
