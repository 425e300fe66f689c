//! perf.data's layout checked against the file before the `linux-perf-data` crate reads it. The crate sizes
//! buffers from what the file says (the header's sections, each feature section, the counts inside
//! `HEADER_EVENT_DESC` and the attribute sections, an `AUXTRACE` record's payload) before it reads them, so a
//! crafted size would ask for terabytes; here every such size, count and offset is checked against the file's
//! length and against what perf writes, and a file that fails is refused naming the field and its offset.
//!
//! The data section's records are walked once (their 8-byte headers only): a record that does not fit, or a
//! round longer than the crate should sort in memory, cuts the data there; [`Patched`] makes the crate see the
//! data end at that record, so what comes before it is read and the rest is reported as damage.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

/// Size of `struct perf_file_header` [bytes].
pub const HEADER_BYTES: u64 = 104;
/// `PERF_ATTR_SIZE_VER0`: the smallest `perf_event_attr` [bytes].
const ATTR_MIN: u64 = 64;
/// Largest `perf_event_attr` accepted [bytes] (today's kernels write 136).
const ATTR_MAX: u64 = 4096;
/// Most event attributes: `perf sched record` writes about a dozen.
pub const MAX_ATTRS: u64 = 4096;
/// Most event ids over all attributes (perf writes one per event per CPU).
pub const MAX_IDS: u64 = 1 << 22;
/// Most records between two `FINISHED_ROUND` marks: the crate holds a round in memory to sort it.
pub const MAX_ROUND_RECORDS: u64 = 1 << 20;
/// `HEADER_EVENT_DESC`, `HEADER_SIMPLEPERF_META_INFO` (feature bits).
const EVENT_DESC: u32 = 12;
const SIMPLEPERF_META_INFO: u32 = 129;
/// Record types whose size the walk reads beyond the header.
const PERF_RECORD_FINISHED_ROUND: u32 = 68;
const PERF_RECORD_AUXTRACE: u32 = 71;

/// Where the data section's records stop being readable, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutAt {
    pub offset: u64,
    pub why: String,
}

/// What the check found: the data section and, when a record does not fit, where to cut it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub data_end: u64,
    /// Size of the feature sections' table after the data [bytes].
    pub table_bytes: u64,
    pub cut: Option<CutAt>,
}

#[derive(Clone, Copy)]
struct Endian(bool);

impl Endian {
    fn u64(self, b: &[u8]) -> u64 {
        let a: [u8; 8] = b[..8].try_into().unwrap_or([0; 8]);
        if self.0 {
            u64::from_be_bytes(a)
        } else {
            u64::from_le_bytes(a)
        }
    }
    fn u32(self, b: &[u8]) -> u32 {
        let a: [u8; 4] = b[..4].try_into().unwrap_or([0; 4]);
        if self.0 {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }
    fn u16(self, b: &[u8]) -> u16 {
        let a: [u8; 2] = b[..2].try_into().unwrap_or([0; 2]);
        if self.0 {
            u16::from_be_bytes(a)
        } else {
            u16::from_le_bytes(a)
        }
    }
}

fn at<R: Read + Seek>(r: &mut R, offset: u64, buf: &mut [u8]) -> Result<(), String> {
    r.seek(SeekFrom::Start(offset)).and_then(|_| r.read_exact(buf)).map_err(|e| format!("cannot read: {e}"))
}

/// A `(offset, size)` pair that must lie inside the file.
fn section(name: &str, where_: u64, offset: u64, size: u64, len: u64) -> Result<(u64, u64), String> {
    match offset.checked_add(size) {
        Some(end) if end <= len => Ok((offset, end)),
        _ => Err(format!(
            "corrupt: the {name} (offset {offset}, size {size}, given at byte {where_}) ends past the file's end \
             (byte {len})"
        )),
    }
}

/// Checks the header, the feature sections, the attribute descriptions and the data section's records of a
/// perf.data file of `len` bytes. `Err` is the reason to refuse it (without the `perf.data: ` prefix).
pub fn check<R: Read + Seek>(r: &mut R, len: u64) -> Result<Layout, String> {
    let mut h = [0u8; HEADER_BYTES as usize];
    at(r, 0, &mut h)?;
    let e = match &h[..8] {
        b"PERFILE2" => Endian(false),
        b"2ELIFREP" => Endian(true),
        _ => return Err("only version 2 files (magic PERFILE2) are read".to_string()),
    };
    let header_size = e.u64(&h[8..]);
    if !(HEADER_BYTES..=len).contains(&header_size) {
        return Err(format!("corrupt: the header's size (byte 8) is {header_size}, not {HEADER_BYTES}"));
    }
    let attr_size = e.u64(&h[16..]);
    if !(ATTR_MIN..=ATTR_MAX).contains(&attr_size) {
        return Err(format!(
            "corrupt: the header's attribute size (byte 16) is {attr_size}; perf writes {ATTR_MIN} to {ATTR_MAX}"
        ));
    }
    let attrs = section("attribute section", 24, e.u64(&h[24..]), e.u64(&h[32..]), len)?;
    let (data_off, data_size) = (e.u64(&h[40..]), e.u64(&h[48..]));
    let data_end = match data_off.checked_add(data_size) {
        Some(end) if end <= len => end,
        _ => {
            return Err(format!(
                "truncated: its data section ends at byte {}, the file at byte {len}; a perf.data file is read \
                 only whole (perf writes the event names and formats after the data)",
                data_off.saturating_add(data_size),
            ))
        }
    };
    let types = section("event types section", 56, e.u64(&h[56..]), e.u64(&h[64..]), len)?;
    // The feature sections' table follows the data: one (offset, size) per feature bit set, in bit order.
    let bits: Vec<u32> =
        (0..256u32).filter(|&b| e.u64(&h[72 + 8 * (b as usize / 64)..]) >> (b % 64) & 1 == 1).collect();
    data_end.checked_add(16 * bits.len() as u64).filter(|&t| t <= len).ok_or_else(|| {
        format!(
            "corrupt: the header names {} feature sections, whose table at byte {data_end} ends past the file's \
             end (byte {len})",
            bits.len()
        )
    })?;
    let mut table = vec![0u8; 16 * bits.len()];
    at(r, data_end, &mut table)?;
    let (mut total, mut event_desc, mut simpleperf) = (0u64, None, false);
    for (i, &bit) in bits.iter().enumerate() {
        let where_ = data_end + 16 * i as u64;
        let name = format!("feature section {bit}");
        let (off, end) = section(&name, where_, e.u64(&table[16 * i..]), e.u64(&table[16 * i + 8..]), len)?;
        total += end - off;
        if total > len {
            return Err(format!(
                "corrupt: the feature sections (the table at byte {data_end}) add up to more than the file's \
                 {len} bytes"
            ));
        }
        match bit {
            EVENT_DESC => event_desc = Some((off, end)),
            SIMPLEPERF_META_INFO => simpleperf = true,
            _ => {}
        }
    }
    // The attributes, where the crate will take them from (its order of preference).
    if let Some((off, end)) = event_desc {
        check_event_desc(r, e, off, end)?;
    } else if types.1 > types.0 {
        check_attr_entries(r, e, "event types section", types, attr_size, len)?;
    } else if simpleperf {
        if attr_size < ATTR_MIN + 16 {
            return Err(format!("corrupt: the header's attribute size (byte 16) is {attr_size}, too small"));
        }
        check_attr_entries(r, e, "attribute section", attrs, attr_size - 16, len)?;
    } else if (attrs.1 - attrs.0) / attr_size > MAX_ATTRS {
        return Err(format!(
            "corrupt: the attribute section at byte {} holds more than {MAX_ATTRS} attributes",
            attrs.0
        ));
    }
    let cut = walk_records(r, e, data_off, data_end)?;
    Ok(Layout { data_end, table_bytes: 16 * bits.len() as u64, cut })
}

/// `HEADER_EVENT_DESC`: `nr`, `attr_size`, then per event the attribute, `nr_ids`, a string and the ids.
fn check_event_desc<R: Read + Seek>(r: &mut R, e: Endian, off: u64, end: u64) -> Result<(), String> {
    let bad = |at: u64, what: &str| Err(format!("corrupt: the event descriptions (byte {off}): {what} at byte {at}"));
    let mut b = [0u8; 8];
    if end - off < 8 {
        return bad(off, "the section is shorter than its 8-byte head");
    }
    at(r, off, &mut b)?;
    let (nr, attr_size) = (u64::from(e.u32(&b)), u64::from(e.u32(&b[4..])));
    if nr > MAX_ATTRS {
        return bad(off, &format!("{nr} events, more than {MAX_ATTRS}"));
    }
    if !(ATTR_MIN..=ATTR_MAX).contains(&attr_size) {
        return bad(off + 4, &format!("an attribute size of {attr_size}"));
    }
    let (mut p, mut ids) = (off + 8, 0u64);
    for i in 0..nr {
        // The attribute's own size (its second word) may not exceed the section's.
        if end - p < attr_size + 8 {
            return bad(p, &format!("event {i} does not fit"));
        }
        at(r, p + 4, &mut b[..4])?;
        if u64::from(e.u32(&b)) > attr_size {
            return bad(p + 4, &format!("event {i}'s attribute is longer than {attr_size} bytes"));
        }
        p += attr_size;
        at(r, p, &mut b)?;
        let (nr_ids, str_len) = (u64::from(e.u32(&b)), u64::from(e.u32(&b[4..])));
        p += 8;
        ids += nr_ids;
        if ids > MAX_IDS || end - p < str_len || end - p - str_len < 8 * nr_ids {
            return bad(p - 8, &format!("event {i}'s {nr_ids} ids and {str_len}-byte name do not fit"));
        }
        p += str_len + 8 * nr_ids;
    }
    Ok(())
}

/// The event types section (old perf) or simpleperf's attribute section: entries of an attribute of `attr` bytes
/// and the (offset, size) of its ids, every ids section inside the file.
fn check_attr_entries<R: Read + Seek>(
    r: &mut R,
    e: Endian,
    name: &str,
    (off, end): (u64, u64),
    attr: u64,
    len: u64,
) -> Result<(), String> {
    let count = (end - off) / (attr + 16);
    if count > MAX_ATTRS {
        return Err(format!("corrupt: the {name} at byte {off} holds more than {MAX_ATTRS} attributes"));
    }
    let mut ids = 0u64;
    let mut b = [0u8; 16];
    for i in 0..count {
        let p = off + i * (attr + 16) + attr;
        at(r, p, &mut b)?;
        let (s, e_) = section(&format!("ids of attribute {i}"), p, e.u64(&b), e.u64(&b[8..]), len)?;
        ids += (e_ - s) / 8;
        if ids > MAX_IDS {
            return Err(format!("corrupt: the {name} at byte {off} names more than {MAX_IDS} event ids"));
        }
    }
    Ok(())
}

/// Walks the data section's record headers: the first record that does not fit in the data section (or whose
/// `AUXTRACE` payload does not), or that makes a round longer than [`MAX_ROUND_RECORDS`].
fn walk_records<R: Read + Seek>(r: &mut R, e: Endian, start: u64, end: u64) -> Result<Option<CutAt>, String> {
    r.seek(SeekFrom::Start(start)).map_err(|e| format!("cannot read: {e}"))?;
    let mut br = BufReader::with_capacity(64 * 1024, &mut *r);
    let (mut p, mut round) = (start, 0u64);
    let cut = |offset: u64, why: String| Ok(Some(CutAt { offset, why }));
    let mut hdr = [0u8; 16];
    while p < end {
        if end - p < 8 {
            return cut(p, format!("the record at byte {p} is cut by the data section's end (byte {end})"));
        }
        br.read_exact(&mut hdr[..8]).map_err(|e| format!("cannot read: {e}"))?;
        let (ty, size) = (e.u32(&hdr), u64::from(e.u16(&hdr[6..])));
        if size < 8 {
            return cut(p, format!("the record at byte {p} has a size of {size}, less than its 8-byte header"));
        }
        if size > end - p {
            return cut(
                p,
                format!("the record at byte {p} ({size} bytes) runs past the data section's end (byte {end})"),
            );
        }
        let (mut skip, mut aux_bytes) = (size - 8, 0);
        if ty == PERF_RECORD_AUXTRACE {
            if size < 16 {
                return cut(p, format!("the AUXTRACE record at byte {p} is too short"));
            }
            br.read_exact(&mut hdr[8..16]).map_err(|e| format!("cannot read: {e}"))?;
            skip -= 8;
            let aux = e.u64(&hdr[8..]);
            if aux > end - p - size {
                return cut(p, format!("the AUXTRACE record at byte {p} carries {aux} bytes, past the data's end"));
            }
            skip += aux;
            aux_bytes = aux;
        }
        round = if ty == PERF_RECORD_FINISHED_ROUND { 0 } else { round + 1 };
        if round > MAX_ROUND_RECORDS {
            return cut(
                p,
                format!(
                    "more than {MAX_ROUND_RECORDS} records without a FINISHED_ROUND mark (perf writes one after each \
                     pass over its buffers); the reader sorts a round at a time"
                ),
            );
        }
        // Skip the body within the buffer where it can, seeking past it otherwise.
        let mut left = skip;
        while left > 0 {
            let avail = br.fill_buf().map_err(|e| format!("cannot read: {e}"))?.len() as u64;
            if avail == 0 {
                return cut(p, format!("the record at byte {p} is cut by the file's end"));
            }
            let n = left.min(avail);
            br.consume(n as usize);
            left -= n;
        }
        p += size + aux_bytes;
    }
    Ok(None)
}

/// The file as the crate is shown it when the data is cut at `cut`: the header's data size ends the data there,
/// and the feature table (which perf writes right after the data) reads at the cut as well, so the crate reads
/// the records before the cut as a whole file's, sorting and handing on every one of them.
pub struct Patched<R> {
    inner: R,
    pos: u64,
    /// Where `inner` stands (it stays behind while a patch is read).
    inner_pos: u64,
    /// (offset, the bytes read there instead of the file's).
    patches: Vec<(u64, Vec<u8>)>,
}

impl<R: Read + Seek> Patched<R> {
    pub fn new(mut inner: R, layout: &Layout) -> std::io::Result<Patched<R>> {
        let mut patches = Vec::new();
        if let Some(c) = &layout.cut {
            let mut h = [0u8; HEADER_BYTES as usize];
            inner.seek(SeekFrom::Start(0))?;
            inner.read_exact(&mut h)?;
            let e = Endian(&h[..8] == b"2ELIFREP");
            let size = c.offset - e.u64(&h[40..]);
            let size = if e.0 { size.to_be_bytes() } else { size.to_le_bytes() };
            let mut table = vec![0u8; layout.table_bytes as usize];
            inner.seek(SeekFrom::Start(layout.data_end))?;
            inner.read_exact(&mut table)?;
            patches = vec![(48, size.to_vec()), (c.offset, table)];
        }
        inner.seek(SeekFrom::Start(0))?;
        Ok(Patched { inner, pos: 0, inner_pos: 0, patches })
    }
}

impl<R: Read + Seek> Read for Patched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut want = buf.len();
        for (at, bytes) in &self.patches {
            let end = at + bytes.len() as u64;
            if (*at..end).contains(&self.pos) {
                let from = (self.pos - at) as usize;
                let n = want.min(bytes.len() - from);
                buf[..n].copy_from_slice(&bytes[from..from + n]);
                self.pos += n as u64;
                return Ok(n);
            }
            if self.pos < *at {
                want = want.min((at - self.pos) as usize);
            }
        }
        if self.inner_pos != self.pos {
            self.inner_pos = self.inner.seek(SeekFrom::Start(self.pos))?;
        }
        let n = self.inner.read(&mut buf[..want])?;
        self.pos += n as u64;
        self.inner_pos = self.pos;
        Ok(n)
    }
}

impl<R: Seek> Seek for Patched<R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = match to {
            SeekFrom::Current(d) => {
                let p = self.pos.checked_add_signed(d).ok_or(std::io::ErrorKind::InvalidInput)?;
                self.inner.seek(SeekFrom::Start(p))?
            }
            _ => self.inner.seek(to)?,
        };
        self.inner_pos = self.pos;
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorded::perfdata::read_bytes;
    use crate::recorded::replay::tests::fixture;
    use crate::recorded::Event;

    fn put(b: &mut [u8], at: usize, v: u64) {
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }

    fn refused(b: &[u8]) -> String {
        match read_bytes(b, &mut |_: &Event<'_>| {}) {
            Err(e) => e.0,
            Ok(s) => format!("read, damage: {:?}", s.damage.map(|d| d.message)),
        }
    }

    /// Crafted sizes in the header and in the feature table are refused naming the field and its offset, before
    /// anything is sized from them (the crate would ask for terabytes: a test that regressed aborts).
    #[test]
    fn crafted_sizes_are_refused_before_allocation() {
        let data = fixture("perf/sched.data.gz");
        let len = data.len() as u64;
        let e = Endian(false);
        let feat_table = (e.u64(&data[40..]) + e.u64(&data[48..])) as usize;
        let huge = [1u64 << 40, u64::MAX, len + 1, u64::MAX - 7];
        // Header fields: attr_size, each section's offset and size.
        for (at, field) in [
            (16, "attribute size"),
            (24, "attribute section"),
            (32, "attribute section"),
            (56, "event types"),
            (64, "event types"),
        ] {
            for &v in &huge {
                let mut b = data.clone();
                put(&mut b, at, v);
                let m = refused(&b);
                assert!(m.contains(field) && m.contains("byte"), "{at}={v}: {m}");
            }
        }
        for at in [40, 48] {
            let mut b = data.clone();
            put(&mut b, at, 1 << 40);
            assert!(refused(&b).contains("truncated: its data section ends at byte"));
        }
        // Every feature section's size and offset.
        let n = (0..4).map(|i| e.u64(&data[72 + 8 * i..]).count_ones() as usize).sum::<usize>();
        for i in 0..n {
            for half in [0, 8] {
                for &v in &huge {
                    let mut b = data.clone();
                    put(&mut b, feat_table + 16 * i + half, v);
                    let m = refused(&b);
                    assert!(m.contains("feature section") && m.contains("past the file's end"), "{i} {half} {v}: {m}");
                }
            }
        }
        // All 256 feature bits set: the table reads the file's tail as sections, which do not fit.
        let mut b = data.clone();
        b[72..104].fill(0xff);
        assert!(refused(&b).contains("past the file's end"), "{}", refused(&b));
        b.truncate(feat_table + 100);
        assert!(refused(&b).contains("256 feature sections"), "{}", refused(&b));
        // attr_size 0 would divide by zero in the crate.
        let mut b = data.clone();
        put(&mut b, 16, 0);
        assert!(refused(&b).contains("attribute size (byte 16) is 0"));
    }

    /// The event descriptions' counts (events, ids, name lengths) are checked against their section.
    #[test]
    fn crafted_event_descriptions_are_refused() {
        let data = fixture("perf/sched.data.gz");
        let e = Endian(false);
        let table = (e.u64(&data[40..]) + e.u64(&data[48..])) as usize;
        let bits: Vec<u32> =
            (0..256u32).filter(|&b| e.u64(&data[72 + 8 * (b as usize / 64)..]) >> (b % 64) & 1 == 1).collect();
        let i = bits.iter().position(|&b| b == EVENT_DESC).expect("the fixture has HEADER_EVENT_DESC");
        let off = e.u64(&data[table + 16 * i..]) as usize;
        let attr_size = e.u32(&data[off + 4..]) as usize;
        for (at, v) in [
            (off, u32::MAX),
            (off + 4, 0),
            (off + 4, u32::MAX),
            (off + 8 + attr_size, u32::MAX),
            (off + 12 + attr_size, u32::MAX),
        ] {
            let mut b = data.clone();
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            let m = refused(&b);
            assert!(m.starts_with("perf.data: corrupt: the event descriptions"), "{at}={v}: {m}");
        }
    }

    /// A record whose size does not fit, or an AUXTRACE record carrying more than the file, cuts the data there:
    /// the events before it are read and the damage names its offset.
    #[test]
    fn a_record_that_does_not_fit_is_damage_at_its_offset() {
        let data = fixture("perf/sched.data.gz");
        let e = Endian(false);
        let start = e.u64(&data[40..]) as usize;
        // Walk to a record half way through the data (past some rounds) and break it three ways.
        let mut p = start;
        while p < start + e.u64(&data[48..]) as usize / 2 {
            p += e.u16(&data[p + 6..]) as usize;
        }
        for (what, patch) in [("size of 0", 0u8), ("AUXTRACE", 1), ("size of 7", 2)] {
            let mut b = data.clone();
            match patch {
                0 => b[p + 6..p + 8].copy_from_slice(&0u16.to_le_bytes()),
                1 => {
                    b[p..p + 4].copy_from_slice(&PERF_RECORD_AUXTRACE.to_le_bytes());
                    b[p + 8..p + 16].copy_from_slice(&(1u64 << 40).to_le_bytes());
                }
                _ => b[p + 6..p + 8].copy_from_slice(&7u16.to_le_bytes()),
            }
            let mut n = 0;
            let s = read_bytes(&b, &mut |_: &Event<'_>| n += 1).unwrap();
            let d = s.damage.unwrap_or_else(|| panic!("{what}: no damage"));
            assert_eq!(d.offset, p as u64, "{what}");
            assert!(d.message.contains(what) && d.message.contains(&format!("byte {p}")), "{what}: {}", d.message);
            assert!(n > 100, "{what}: {n} events before the cut");
        }
    }

    /// Seeded mutants of the fixture's first 4 KiB (the header, the attributes and the first records) and of its
    /// feature table: bit flips and crafted 64-bit words, each read or refused with a message.
    #[test]
    fn seeded_header_mutants_never_crash() {
        let data = fixture("perf/sched.data.gz");
        let e = Endian(false);
        let table = (e.u64(&data[40..]) + e.u64(&data[48..])) as usize;
        let mut next = crate::recorded::tests::xorshift(0x2545_f491_4f6c_dd1d);
        let words = [0, 1, 7, 8, 64, 4096, 1 << 31, 1 << 40, u64::MAX, u64::MAX / 2];
        for case in 0..300 {
            let mut b = data.clone();
            let region = if case % 2 == 0 { 0..4096 } else { table..data.len() };
            for _ in 0..(next() % 3 + 1) {
                let at = region.start + (next() as usize) % (region.len() - 8);
                if next().is_multiple_of(2) {
                    b[at] ^= 1 << (next() % 8);
                } else {
                    put(&mut b, at & !7, words[(next() as usize) % words.len()]);
                }
            }
            let mut n = 0u64;
            match read_bytes(&b, &mut |_: &Event<'_>| n += 1) {
                Ok(s) => assert_eq!(s.events, n),
                Err(m) => assert!(m.0.starts_with("perf.data: "), "{m}"),
            }
        }
    }
}
