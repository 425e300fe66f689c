// Classroom lessons (issue 9): each paper's story as data, in steps. A step names a library scenario, the
// columns, where the playhead goes, the window to show and the views to point at. The lesson player
// (components/Lessons.tsx) loads the scenario when it changes and otherwise only moves the playhead.

/** A view to point at: a `data-testid` of DESIGN.md 7, in the column of `policy` (any column when absent). */
export interface LessonMark {
  readonly view: string;
  readonly policy?: string;
  /** What to look at there, shown beside the mark. */
  readonly note: string;
}

export interface LessonStep {
  readonly title: string;
  readonly text: string;
  /** Library scenario id. */
  readonly scenario: string;
  /** Column policy ids; the scenario's first ones when absent. */
  readonly policies?: readonly string[];
  /** Playhead [ms]. */
  readonly t_ms: number;
  /** Timelines' window [ms]; the default window around the playhead when absent. */
  readonly view_ms?: readonly [number, number];
  readonly marks?: readonly LessonMark[];
}

export interface Lesson {
  readonly id: string;
  /** Paper number in papers/README.md. */
  readonly paper: '000' | '001' | '002' | '003' | '004';
  readonly title: string;
  readonly summary: string;
  readonly steps: readonly LessonStep[];
}

/**
 * Scenarios lessons use that other branches are still writing. The lesson player says so when one is missing;
 * the lead empties this list once they are merged (lessons.test.ts then requires every id to be in the index).
 */
export const PENDING_SCENARIOS: readonly string[] = [];

export const LESSONS: readonly Lesson[] = [
  {
    id: 'p000-boost',
    paper: '000',
    title: 'Why an I/O task waits: Credit BOOST and the mixed domain',
    summary:
      'Paper 000, Fig. 1: Xen Credit boosts a blocked vCPU, but never one that is busy with other work.',
    steps: [
      {
        title: 'The setup',
        text:
          'One physical CPU, the driver domain dom0, five CPU-bound domains and two domains with the same UDP echo ' +
          "server: 'io' runs it alone, 'mixed' beside a busy loop. Each column is the same host under one policy.",
        scenario: 'credit-boost',
        policies: ['credit', 'noboost'],
        t_ms: 2000,
        view_ms: [2000, 2200],
        marks: [{ view: 'timeline', policy: 'credit', note: 'Who runs on the pCPU, slice by slice' }],
      },
      {
        title: 'BOOST jumps the queue',
        text:
          "At 2041.9 ms a request for the 'io' echo server arrives. dom0 wakes with BOOST and preempts the " +
          "CPU-bound domain to handle the packet, then notifies 'io'. Its vCPU was blocked with credit left, so " +
          'it wakes with BOOST too and runs next, ahead of every UNDER vCPU: the answer leaves within a tenth of a ' +
          'millisecond.',
        scenario: 'credit-boost',
        policies: ['credit', 'noboost'],
        t_ms: 2041.953,
        view_ms: [2041.5, 2042.5],
        marks: [
          { view: 'runqueue-pcpu-0', policy: 'credit', note: 'BOOST sits ahead of UNDER and OVER' },
          { view: 'event-log', policy: 'credit', note: 'Each decision and its reason' },
        ],
      },
      {
        title: 'The mixed domain is never boosted',
        text:
          "'mixed' always has its busy loop to run, so its vCPU never blocks and never earns BOOST. A request to its " +
          'echo server waits until the vCPU’s turn comes round behind the CPU-bound domains: up to about 6 × 30 ms.',
        scenario: 'credit-boost',
        policies: ['credit', 'noboost'],
        t_ms: 10000,
        view_ms: [10000, 10400],
        marks: [{ view: 'timeline', policy: 'credit', note: '30 ms slices of the CPU-bound domains' }],
      },
      {
        title: 'What the numbers say',
        text:
          'The response-time distributions and the claims: BOOST cuts the lone server’s response by over 10× ' +
          'against Xen 3.0.3 without BOOST, while the mixed domain is no better off either way. This gap is what ' +
          'task-aware scheduling closes (next lesson).',
        scenario: 'credit-boost',
        policies: ['credit', 'noboost'],
        t_ms: 60000,
        marks: [
          { view: 'cdf-chart', note: 'Response-time CDF of each column' },
          { view: 'claims-panel', note: 'The paper’s claims, checked on this run' },
        ],
      },
    ],
  },
  {
    id: 'p000-tavs',
    paper: '000',
    title: 'Task-aware scheduling: partial boosting of a mixed domain',
    summary:
      'Paper 000, Fig. 10: infer the I/O-bound task from address-space switches and boost only for it.',
    steps: [
      {
        title: 'Stock Credit makes the echo server wait',
        text:
          'A TCP echo server shares its domain with a busy loop, beside five CPU-bound domains. Under stock Credit ' +
          'a request waits for the mixed vCPU’s turn: its scheduling latency reaches about 5 × 30 ms.',
        scenario: 'p000-fig10-partial-boost',
        policies: ['credit', 'tavs'],
        t_ms: 6000,
        view_ms: [6000, 6300],
        marks: [{ view: 'timeline', policy: 'credit', note: 'The mixed vCPU gets one slice per round' }],
      },
      {
        title: 'Belief: which task is I/O-bound?',
        text:
          'The hypervisor sees the guest switch address spaces. A task that runs briefly right after an event gains ' +
          'belief (+5), one that runs long loses it (−20); above the threshold it is taken to be I/O-bound.',
        scenario: 'p000-fig10-partial-boost',
        policies: ['credit', 'tavs'],
        t_ms: 8000,
        marks: [{ view: 'belief-chart', policy: 'tavs', note: 'Belief per task and the threshold line' }],
      },
      {
        title: 'Partial boost, revoked at once',
        text:
          'At 7552.8 ms an event is pending for the mixed domain, whose echo task is believed I/O-bound: TAVS ' +
          'boosts its vCPU (UNDER → BOOST) so it runs right after dom0, and revokes the boost 0.05 ms later, when ' +
          'the guest switches back to its busy loop. The busy loop gets no extra CPU.',
        scenario: 'p000-fig10-partial-boost',
        policies: ['credit', 'tavs'],
        t_ms: 7552.82,
        view_ms: [7552.6, 7553.4],
        marks: [
          { view: 'runqueue-pcpu-0', policy: 'tavs', note: 'The mixed vCPU jumps the queue briefly' },
          { view: 'event-log', policy: 'tavs', note: 'Partial boost and its revocation' },
        ],
      },
      {
        title: 'Fast answers, fair shares',
        text:
          'Responses drop to about the network round trip (over 10× better), and every busy domain keeps its sixth ' +
          'of the CPU: Jain’s index stays above 0.999.',
        scenario: 'p000-fig10-partial-boost',
        policies: ['credit', 'tavs'],
        t_ms: 60000,
        marks: [
          { view: 'cdf-chart', note: 'Fig. 10a: response-time CDFs' },
          { view: 'share-chart', policy: 'tavs', note: 'Fig. 10c: shares stay on the fair line' },
          { view: 'claims-panel', note: 'Claims with their values' },
        ],
      },
    ],
  },
  {
    id: 'p000-idd',
    paper: '000',
    title: 'The driver domain and priority inversion',
    summary: 'Paper 000, Fig. 7 and 14: a network receiver starves when dom0 waits behind CPU-bound domains.',
    steps: [
      {
        title: 'Every packet goes through dom0',
        text:
          'An iperf receiver shares one pCPU with the driver domain and five CPU-bound domains. Each packet and each ' +
          'acknowledgement passes through dom0, so the receiver can go no faster than dom0 gets the CPU.',
        scenario: 'p000-fig7a-idd-starvation',
        policies: ['credit', 'pi'],
        t_ms: 3000,
        view_ms: [3000, 3200],
        marks: [{ view: 'timeline', policy: 'credit', note: 'dom0 and the receiver take turns' }],
      },
      {
        title: 'Priority inversion',
        text:
          'dom0 has used up its BOOST and waits as UNDER behind the CPU-bound domains’ 30 ms slices: it runs only ' +
          'at slice ends, every 60 to 90 ms here, while the receiver waits for it. The TCP window stalls and ' +
          'throughput collapses from 97 Mbit/s towards nothing.',
        scenario: 'p000-fig7a-idd-starvation',
        policies: ['credit', 'pi'],
        t_ms: 14000,
        view_ms: [13950, 14250],
        marks: [
          { view: 'runqueue-pcpu-0', policy: 'credit', note: 'dom0 queued behind the CPU-bound vCPUs' },
        ],
      },
      {
        title: 'Priority inheritance',
        text:
          'With IDD priority inheritance, dom0 inherits the priority of the domain it serves when that domain sends ' +
          'it an event: dom0 answers within milliseconds and the receiver gets over 20× the throughput.',
        scenario: 'p000-fig7a-idd-starvation',
        policies: ['credit', 'pi'],
        t_ms: 30000,
        marks: [{ view: 'claims-panel', note: 'Throughput and dom0 latency, per policy' }],
      },
    ],
  },
  {
    id: 'p001-coscheduling',
    paper: '001',
    title: 'Co-scheduling concurrent domains',
    summary: 'Paper 001, Sec. 2: ten slots, proportional share against co-proportional share.',
    steps: [
      {
        title: 'Threads that wait for each other',
        text:
          'A concurrent domain runs threads that meet at a barrier. Under proportional share its vCPUs run at ' +
          'different times, so the first to arrive spins for the others: the job takes more steps.',
        scenario: 'p001-sec2-ten-slots',
        t_ms: 0,
        marks: [{ view: 'timeline', note: 'When each vCPU of the concurrent domain runs' }],
      },
      {
        title: 'Co-scheduling keeps them together',
        text:
          'Co-proportional share runs the concurrent domain’s vCPUs at the same time, so barriers are met at once. ' +
          'The paper’s ten-slot example finishes in 2 steps instead of 3; the makespan gap is twice the Lag.',
        scenario: 'p001-sec2-ten-slots',
        t_ms: 0,
        marks: [{ view: 'claims-panel', note: 'Makespan per policy' }],
      },
    ],
  },
  {
    id: 'p002-xballoon',
    paper: '002',
    title: 'xBalloon: keeping I/O prioritized under a CPU cap',
    summary: 'Paper 002: a capped guest loses its I/O priority; the balloon and two clocks restore it.',
    steps: [
      {
        title: 'Priority inversion inside a capped guest',
        text:
          'A guest with an I/O task and a CPU task runs under a cap. The guest scheduler cannot see the time its ' +
          'vCPU is descheduled, so the I/O task’s priority is lost and its requests wait behind the CPU task.',
        scenario: 'p002-io-cpu-xballoon',
        t_ms: 0,
        marks: [{ view: 'timeline', note: 'When the capped vCPU is paused' }],
      },
      {
        title: 'The balloon',
        text:
          'xBalloon lets the guest see its CPU budget: a balloon task holds the CPU the guest may not use, so the ' +
          'guest scheduler spends what is left on the I/O task first (semi-work-conserving).',
        scenario: 'p002-io-cpu-xballoon',
        t_ms: 0,
        marks: [{ view: 'claims-panel', note: 'I/O latency with and without the balloon' }],
      },
    ],
  },
  {
    id: 'p003-schedulers',
    paper: '003',
    title: 'Xen’s schedulers under a busy dom0',
    summary: 'Paper 003, Table 5: how the Xen schedulers share the CPU when dom0 is under stress.',
    steps: [
      {
        title: 'dom0 under stress',
        text:
          'The driver domain does heavy work while guests compete for the CPU. Each column is one of Xen’s ' +
          'schedulers on the same load: compare who gets the CPU and how quickly dom0 answers.',
        scenario: 'p003-table5-dom0-stress',
        t_ms: 0,
        marks: [{ view: 'share-chart', note: 'Each domain’s share against its fair share' }],
      },
      {
        title: 'The comparison',
        text: 'The thesis’s Table 5 compares the schedulers; the claims check its direction on this run.',
        scenario: 'p003-table5-dom0-stress',
        t_ms: 0,
        marks: [{ view: 'claims-panel', note: 'Per-scheduler results' }],
      },
    ],
  },
  {
    id: 'p004-streaming',
    paper: '004',
    title: 'Communication-aware scheduling of a streaming server',
    summary: 'Paper 004, Fig. 6: SEDF against XenCo for a media server that must not under-run its clients.',
    steps: [
      {
        title: 'A streaming server beside CPU hogs',
        text:
          'A media server streams at a constant bit rate to buffered clients. Under plain SEDF the server is not ' +
          'run when its packets arrive, so clients’ buffers drain and under-run.',
        scenario: 'p004-fig6-streaming',
        t_ms: 0,
        marks: [{ view: 'timeline', note: 'When the server domain runs' }],
      },
      {
        title: 'Prefer the recipient, anticipate the sender',
        text:
          'XenCo runs a domain soon after it receives data and anticipates domains that are about to send, within ' +
          'their SEDF reservations: fewer under-runs and more clients supported.',
        scenario: 'p004-fig6-streaming',
        t_ms: 0,
        marks: [{ view: 'claims-panel', note: 'Under-runs per policy' }],
      },
    ],
  },
];

export function findLesson(id: string): Lesson | undefined {
  return LESSONS.find((l) => l.id === id);
}
