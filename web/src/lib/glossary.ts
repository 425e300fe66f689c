// The words the lab uses, explained once for a newcomer: the glossary panel lists them, and a view links a
// term's first use to its entry (findTerms).

export interface GlossaryEntry {
  /** Anchor id: `glossary-${id}`. */
  readonly id: string;
  readonly term: string;
  /** The spellings a text uses for it (case-sensitive where the word is an abbreviation). */
  readonly match: RegExp;
  readonly text: string;
  /**
   * False for words so common in the views' texts (domain, Xen) that linking each view's first use would
   * underline half the labels: the glossary lists them, the views do not link them.
   */
  readonly linked?: boolean;
}

export const GLOSSARY: readonly GlossaryEntry[] = [
  {
    id: 'hypervisor',
    term: 'hypervisor',
    match: /\bhypervisors?\b/,
    text:
      'The layer of software that runs several operating systems on one machine at once, each in its own ' +
      'virtual machine, and shares the real CPUs, memory and devices among them. Its CPU scheduler decides ' +
      'which virtual machine’s CPU runs on which real CPU, and for how long: that is what this lab simulates.',
  },
  {
    id: 'xen',
    term: 'Xen',
    match: /\bXen\b/,
    linked: false,
    text:
      'An open-source hypervisor (used by many clouds): a small hypervisor under the virtual machines, with a ' +
      'privileged Linux virtual machine, dom0, that drives the real devices. Its CPU schedulers (Credit, ' +
      'Credit2, SEDF and others) are the ones the papers study.',
  },
  {
    id: 'kvm',
    term: 'KVM',
    match: /\bKVM\b/,
    text:
      'The hypervisor built into Linux: each virtual machine is a Linux process and each of its virtual CPUs ' +
      'a thread, so the ordinary Linux scheduler places them on the real CPUs.',
  },
  {
    id: 'boost',
    term: 'BOOST',
    match: /\bBOOST(?:ed)?\b/,
    text:
      'Xen Credit’s highest priority: a vCPU that wakes from blocking with credit left runs ahead of every ' +
      'UNDER and OVER vCPU, so I/O gets answered at once. It lasts until the vCPU is next descheduled.',
  },
  {
    id: 'under-over',
    term: 'UNDER / OVER',
    match: /\b(?:UNDER|OVER)\b/,
    text:
      'Credit’s two ordinary priorities: UNDER while a vCPU has credit left in the accounting period, OVER once ' +
      'it has spent its share. UNDER vCPUs run before OVER ones.',
  },
  {
    id: 'credit',
    term: 'credit',
    match: /\bcredits?\b/,
    text:
      'What Xen’s Credit scheduler hands each domain every accounting period (30 ms) in proportion to its ' +
      'weight, and charges for each tick a vCPU runs; its sign decides UNDER or OVER.',
  },
  {
    id: 'lag',
    term: 'Lag',
    match: /\bLag\b/,
    text:
      'How far a vCPU’s received CPU time is ahead of (positive) or behind (negative) its fair share at a ' +
      'moment, in ms (paper 001). Co-scheduling keeps the Lag of a concurrent domain’s vCPUs close together.',
  },
  {
    id: 'jain',
    term: 'Jain’s index',
    match: /\bJain(?:’s|'s)?(?: index)?\b/,
    text:
      'A fairness score over the domains’ CPU shares relative to their entitlements: 1 when every domain gets ' +
      'exactly its share, 1/n when one domain gets everything.',
  },
  {
    id: 'pbhr',
    term: 'PBHR',
    match: /\bPBHR\b/,
    text:
      'Partial boost hit ratio (paper 000): the fraction of partial boosts after which the boosted vCPU did run ' +
      'the I/O-bound task the boost was for.',
  },
  {
    id: 'belief',
    term: 'belief',
    match: /\bbelief\b/,
    text:
      'TAVS’s degree of belief that a guest task is I/O-bound: +5 when it runs briefly right after an event, −20 ' +
      'when it runs long, kept within [−100, 300]; above the threshold (20) the task counts as I/O-bound.',
  },
  {
    id: 'partial-boost',
    term: 'partial boosting',
    match: /\bpartial(?:ly)? boost(?:ing|s)?\b/,
    text:
      'TAVS boosts a vCPU only while it runs the task believed I/O-bound, and revokes the boost when the guest ' +
      'switches to another task; PBratio bounds how much CPU that may take.',
  },
  {
    id: 'coscheduling',
    term: 'co-scheduling',
    match: /\bco-?(?:proportional share|scheduling|scheduled?|schedules)\b/,
    text:
      'Running all vCPUs of a concurrent domain at the same time on different pCPUs, so threads that wait for ' +
      'each other (a barrier, a spin lock) do not spin while a sibling is descheduled (paper 001).',
  },
  {
    id: 'entitled-share',
    term: 'entitled share',
    match: /\b(?:entitled|fair|weighted) share\b/,
    text:
      'The CPU a domain should get by its weight (and cap) when every domain wants CPU: its weight over the sum ' +
      'of the weights, of the pCPUs it may use.',
  },
  {
    id: 'spinning',
    term: 'spinning',
    match: /\bspin(?:ning|s)?\b/,
    text:
      'A vCPU that runs but makes no progress: a thread busy-waits at a barrier or a spin lock for a sibling ' +
      'whose vCPU is descheduled, burning its CPU time (the timeline draws it orange; paper 001).',
  },
  {
    id: 'wake-to-run',
    term: 'wake-to-run',
    match: /\bwake(?:-| → )(?:to-)?run\b/,
    text:
      'The wait from a vCPU becoming runnable (an event arrives for it) to its running on a pCPU: the ' +
      'scheduling latency the I/O wait strip and the event latency figures show.',
  },
  {
    id: 'dom0',
    term: 'dom0 (driver domain, IDD)',
    match: /\b(?:dom0|IDD|driver domain)\b/,
    text:
      'The privileged domain that owns the real devices: every packet and disk block of the guests passes ' +
      'through it, so a guest’s I/O can go no faster than dom0 gets the CPU.',
  },
  {
    id: 'domain',
    term: 'domain',
    match: /\bdomains?\b/,
    linked: false,
    text:
      'Xen’s word for a virtual machine: a guest operating system with its own memory and virtual CPUs. Each ' +
      'domain has a weight (its share of the CPU against the others) and may have a cap.',
  },
  {
    id: 'vcpu',
    term: 'vCPU / pCPU',
    match: /\b[vp]CPUs?\b/,
    text:
      'A vCPU is a virtual CPU: what a domain’s operating system sees as one of its processors. A pCPU is a ' +
      'physical CPU (a core) of the real machine. The hypervisor runs each vCPU on some pCPU for a while, then ' +
      'another; while a vCPU waits for a pCPU, everything inside it waits.',
  },
];

export interface TermPart {
  readonly text: string;
  /** The glossary entry this part is the first use of, if it is one. */
  readonly entry?: GlossaryEntry;
}

/**
 * Splits `text` at the first use of each glossary term that `seen` does not hold yet (adding it), so a view
 * links only a term's first use.
 */
export function findTerms(text: string, seen: Set<string> = new Set()): TermPart[] {
  const hits: { at: number; len: number; entry: GlossaryEntry }[] = [];
  for (const entry of GLOSSARY) {
    if (seen.has(entry.id) || entry.linked === false) continue;
    const m = entry.match.exec(text);
    if (!m) continue;
    hits.push({ at: m.index, len: m[0].length, entry });
  }
  hits.sort((a, b) => a.at - b.at);
  const parts: TermPart[] = [];
  let pos = 0;
  for (const h of hits) {
    if (h.at < pos) continue; // overlaps a term already linked
    if (h.at > pos) parts.push({ text: text.slice(pos, h.at) });
    parts.push({ text: text.slice(h.at, h.at + h.len), entry: h.entry });
    seen.add(h.entry.id);
    pos = h.at + h.len;
  }
  if (pos < text.length) parts.push({ text: text.slice(pos) });
  return parts;
}
