//! The decision log: each decision's text in a chunked arena, or its facts worded only when read.

use super::*;

/// A stored decision: its text lives in the trace's text arena (`chunk`, `start`, `len`); when `chunk` is
/// [`FACTS`] it was recorded as facts: their kind is `fact_kinds[len]` and their arguments are encoded in
/// `fact_bytes` from `start`.
#[derive(Debug, Clone, Copy)]
pub(super) struct DecisionCell {
    t_ns: u64,
    pcpu: u32,
    chunk: u32,
    start: u32,
    len: u32,
}

/// `DecisionCell::chunk` of a decision stored as facts.
pub(super) const FACTS: u32 = u32::MAX;

/// Size of one chunk of the decision-text arena [bytes]; chunks never grow, so no text is copied twice.
pub(super) const TEXT_CHUNK: usize = 1 << 20;

/// What a decision recorded as facts shares with others of its kind: the words put before it, its writer and its
/// fixed word. Interned per trace (a handful exist), so a decision stores an index.
#[derive(Debug, Clone, Copy)]
pub(super) struct FactKind {
    prefix: &'static str,
    write: fn(&Facts, &[String], &mut String),
    word: &'static str,
}

impl FactKind {
    pub(super) fn same(&self, prefix: &'static str, f: &Facts) -> bool {
        // Compared by address: a writer that the compiler merged with an identical one words the same facts alike.
        self.prefix == prefix && self.word == f.word && self.write as usize == f.write as usize
    }
}

impl Trace {
    /// Records a decision whose text is formatted here, through a reused buffer (no allocation per decision).
    pub fn push_decision_fmt(&mut self, t_ns: u64, pcpu: usize, text: std::fmt::Arguments<'_>) {
        use std::fmt::Write;
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        // Writing to a String cannot fail.
        let _ = buf.write_fmt(text);
        self.push_decision(t_ns, pcpu, &buf);
        self.scratch = buf;
    }
    /// Names the vCPUs, for wording decisions stored as facts.
    pub fn set_vcpu_names(&mut self, names: Arc<[String]>) {
        self.vcpu_name = names;
    }
    /// Records a decision as its facts, worded (after `prefix` and ": ", when `prefix` is not empty) only when
    /// read. Charged against the budget as what it allocates, like a text.
    pub fn push_decision_facts(&mut self, t_ns: u64, pcpu: usize, prefix: &'static str, facts: Facts) {
        // At most 10 bytes per number in signed LEB128.
        let mut buf = [0u8; FACT_ARGS * 10];
        let mut rest = &mut buf[..];
        for a in facts.args {
            // Writing into a buffer sized for the worst case cannot fail.
            let _ = leb128::write::signed(&mut rest, a);
        }
        let len = FACT_ARGS * 10 - rest.len();
        let bytes = growth_bytes(&self.decisions) + growth_bytes_n(&self.fact_bytes, len);
        if !self.spend(t_ns, bytes) {
            self.decisions_dropped += 1;
            return;
        }
        let kind = match self.fact_kinds.iter().position(|k| k.same(prefix, &facts)) {
            Some(k) => k,
            None => {
                self.fact_kinds.push(FactKind { prefix, write: facts.write, word: facts.word });
                self.fact_kinds.len() - 1
            }
        };
        let start = self.fact_bytes.len() as u32;
        self.fact_bytes.extend_from_slice(&buf[..len]);
        self.decisions.push(DecisionCell { t_ns, pcpu: pcpu as u32, chunk: FACTS, start, len: kind as u32 });
    }
    pub fn push_decision(&mut self, t_ns: u64, pcpu: usize, text: &str) {
        // Budget by what is allocated: the record, its text, and a new arena chunk when one is started.
        let need_chunk = self.text.last().is_none_or(|c| c.len() + text.len() > c.capacity());
        let bytes = growth_bytes(&self.decisions) + if need_chunk { TEXT_CHUNK.max(text.len()) } else { 0 };
        if !self.spend(t_ns, bytes) {
            self.decisions_dropped += 1;
            return;
        }
        if need_chunk {
            self.text.push(String::with_capacity(TEXT_CHUNK.max(text.len())));
        }
        let chunk = self.text.len() - 1;
        let buf = &mut self.text[chunk];
        let start = buf.len();
        buf.push_str(text);
        self.decisions.push(DecisionCell {
            t_ns,
            pcpu: pcpu as u32,
            chunk: chunk as u32,
            start: start as u32,
            len: text.len() as u32,
        });
    }
    /// Decisions with `from_ns <= t < to_ns`, at most `limit`.
    pub fn decisions(&self, from_ns: u64, to_ns: u64, limit: usize) -> Vec<DecisionRec<'_>> {
        let start = self.decisions.partition_point(|d| d.t_ns < from_ns);
        self.decisions[start..]
            .iter()
            .take_while(|d| d.t_ns < to_ns)
            .take(limit)
            .map(|d| DecisionRec { t_ns: d.t_ns, pcpu: d.pcpu, text: self.decision_text(d) })
            .collect()
    }
    pub(super) fn decision_text(&self, d: &DecisionCell) -> Cow<'_, str> {
        if d.chunk != FACTS {
            return Cow::Borrowed(&self.text[d.chunk as usize][d.start as usize..(d.start + d.len) as usize]);
        }
        let kind = &self.fact_kinds[d.len as usize];
        let mut args = [0; FACT_ARGS];
        let mut bytes = &self.fact_bytes[d.start as usize..];
        for a in &mut args {
            // The bytes are those `push_decision_facts` wrote: FACT_ARGS numbers from `start`.
            *a = leb128::read::signed(&mut bytes).unwrap_or_default();
        }
        let f = Facts { write: kind.write, args, word: kind.word };
        let mut s = String::with_capacity(96);
        if !kind.prefix.is_empty() {
            s.push_str(kind.prefix);
            s.push_str(": ");
        }
        (f.write)(&f, &self.vcpu_name, &mut s);
        Cow::Owned(s)
    }
    pub fn decision_count(&self) -> usize {
        self.decisions.len()
    }
}

crate::size::no_heap!(DecisionCell, FactKind);
