// Classroom lessons: each paper's story as data, in steps. A step names a library scenario, the
// columns, where the playhead goes, the window to show and the views to point at. The lesson player
// (components/Lessons.tsx) loads the scenario when it changes and otherwise only moves the playhead.
//
// A step's text never types a figure the model computes: `{K:POLICY}` stands for the value claim K of the step's
// scenario was judged on for POLICY, filled in from the run on screen (renderLessonText), so a change to the
// model cannot leave a lesson saying what its run no longer shows.
import { fmt } from './format';
import type { ScenarioRef } from './share';

/** A view to point at: a `data-testid` (docs/test-hooks.md), in the column of `policy` (any column when absent). */
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
  /** Index of the scenario claim the step's text is about (lessons.test.ts checks the text against it). */
  readonly claim?: number;
  /**
   * Predict, then reveal: the results (key figures, claims, comparison, the scenario's summary) stay hidden, on
   * this step and on every step of the lesson before it, until the class has picked which policy wins; `answer` is the one the
   * claim says wins (lessons.test.ts checks it against the model's figures), and the reveal names the winner
   * the run on screen shows (predictVerdict).
   */
  readonly predict?: {
    readonly question: string;
    readonly options: readonly string[];
    readonly answer: string;
  };
  /** A recording shipped with the page (lib/samples) to show beside the columns, opened once. */
  readonly recording?: string;
}

export interface Lesson {
  readonly id: string;
  /** Paper number in papers/README.md; null for a lesson on today's hosts, which no paper covers. */
  readonly paper: '000' | '001' | '002' | '003' | '004' | null;
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
          "Just after the playhead a request for the 'io' echo server arrives. dom0 wakes with BOOST and preempts the " +
          "CPU-bound domain to handle the packet, then notifies 'io'. Its vCPU was blocked with credit left, so " +
          'it wakes with BOOST too and runs next, ahead of every UNDER vCPU: the answer leaves within a tenth of a ' +
          'millisecond.',
        scenario: 'credit-boost',
        policies: ['credit', 'noboost'],
        t_ms: 2041.986,
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
        title: 'Predict: does BOOST answer the lone server faster?',
        text:
          'Two columns, the same host: Xen Credit with BOOST, and Xen 3.0.3’s Credit without it. Before the ' +
          'numbers: over the whole minute, which one answers the lone server’s echo requests faster on average?',
        scenario: 'credit-boost',
        policies: ['credit', 'noboost'],
        t_ms: 20000,
        view_ms: [20000, 20400],
        claim: 3,
        marks: [
          { view: 'timeline', policy: 'noboost', note: 'Who runs when a request arrives, without BOOST' },
        ],
        predict: {
          question: 'Which policy gives the lone server the lower mean response time?',
          options: ['credit', 'noboost'],
          answer: 'credit',
        },
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
        view_ms: [2000, 60000],
        claim: 3,
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
        view_ms: [5000, 10000],
        marks: [{ view: 'belief-chart', policy: 'tavs', note: 'Belief per task and the threshold line' }],
      },
      {
        title: 'Partial boost, revoked at once',
        text:
          'At the playhead an event is pending for the mixed domain, whose echo task is believed I/O-bound: TAVS ' +
          'boosts its vCPU (UNDER → BOOST) so it runs right after dom0, and revokes the boost a fraction of a millisecond ' +
          'later, when ' +
          'the guest switches back to its busy loop. The busy loop gets no extra CPU.',
        scenario: 'p000-fig10-partial-boost',
        policies: ['credit', 'tavs'],
        t_ms: 8236.12,
        view_ms: [8235.9, 8236.7],
        marks: [
          { view: 'runqueue-pcpu-0', policy: 'tavs', note: 'The mixed vCPU jumps the queue briefly' },
          { view: 'event-log', policy: 'tavs', note: 'Partial boost and its revocation' },
        ],
      },
      {
        title: 'Predict: whose answers are faster?',
        text:
          'Two columns, the same host: stock Credit and TAVS, both with KeepOnRunQ. Before the numbers: over the ' +
          'whole minute, which one answers the mixed domain’s echo requests faster on average?',
        scenario: 'p000-fig10-partial-boost',
        policies: ['credit', 'tavs'],
        t_ms: 30000,
        view_ms: [29500, 31000],
        marks: [{ view: 'timeline', policy: 'tavs', note: 'When the mixed domain runs under each policy' }],
        claim: 0,
        predict: {
          question: 'Which policy gives the mixed domain the lower mean response time?',
          options: ['credit', 'tavs'],
          answer: 'tavs',
        },
      },
      {
        title: 'Fast answers, fair shares',
        text:
          'Responses drop to about the network round trip (here a mean of {0:tavs} against {0:credit} ms), and ' +
          'every busy domain keeps its sixth of the CPU: Jain’s index stays above 0.999.',
        scenario: 'p000-fig10-partial-boost',
        policies: ['credit', 'tavs'],
        t_ms: 60000,
        view_ms: [5000, 60000],
        claim: 3,
        marks: [
          { view: 'cdf-chart', note: 'Fig. 10a: response-time CDFs' },
          { view: 'claims-panel', note: 'Fig. 10c: the shares stay fair' },
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
          'dom0 has used up its BOOST. At the playhead the receiver, woken BOOSTed by dom0’s notification, preempts ' +
          'it, and dom0 waits as UNDER behind a CPU-bound domain’s 30 ms slice before it runs again, while the ' +
          'receiver waits for it, so its throughput falls well short of the link’s 100 Mbit/s; the paper saw near ' +
          'starvation, which this model reaches on some seeds only (the claims say why, once you have predicted).',
        scenario: 'p000-fig7a-idd-starvation',
        policies: ['credit', 'pi'],
        t_ms: 4451.2,
        view_ms: [4445, 4515],
        marks: [
          { view: 'runqueue-pcpu-0', policy: 'credit', note: 'dom0 queued behind the CPU-bound vCPUs' },
        ],
      },
      {
        title: 'Predict: does dom0 wait less?',
        text:
          'Two columns, the same host: stock Credit, and Credit with IDD priority inheritance (dom0 inherits the ' +
          'priority of the domain it serves). Watch how often dom0 gets the pCPU under each while the receiver ' +
          'waits for it. Before the numbers: under which one does dom0 wait less for the CPU once an event is ' +
          'pending?',
        scenario: 'p000-fig7a-idd-starvation',
        policies: ['credit', 'pi'],
        t_ms: 20000,
        view_ms: [20000, 20300],
        claim: 5,
        marks: [{ view: 'timeline', policy: 'pi', note: 'How often dom0 runs under each policy' }],
        predict: {
          question: 'Which policy gives dom0 the lower mean wait for the CPU?',
          options: ['credit', 'pi'],
          answer: 'pi',
        },
      },
      {
        title: 'Priority inheritance',
        text:
          'With IDD priority inheritance, dom0 inherits the priority of the domain it serves when that domain sends ' +
          'it an event: dom0 answers within a few milliseconds on average and the receiver’s throughput rises ' +
          '({3:pi} against {3:credit} Mbit/s here; the paper’s recovery is larger, see the claims).',
        scenario: 'p000-fig7a-idd-starvation',
        policies: ['credit', 'pi'],
        t_ms: 30000,
        view_ms: [24000, 30000],
        claim: 3,
        marks: [
          { view: 'key-figures', note: 'Throughput and dom0 latency, per policy' },
          { view: 'claims-panel', note: 'The paper’s claims, checked on this run' },
        ],
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
          'A concurrent domain runs four threads that meet at a barrier after every step. Under proportional share ' +
          'its vCPUs run at different times, so the first to arrive spins until the last one has run: those slots ' +
          'are spent but the step does not advance.',
        scenario: 'p001-sec2-ten-slots',
        policies: ['ps', 'cps'],
        t_ms: 0,
        view_ms: [0, 100],
        marks: [{ view: 'timeline', policy: 'ps', note: 'The job’s vCPUs run at different times' }],
      },
      {
        title: 'Predict: which finishes more steps?',
        text:
          'Same host, same weights; on the right, co-proportional share runs the concurrent domain’s vCPUs together. ' +
          'In the same time, which policy lets the job complete more steps?',
        scenario: 'p001-sec2-ten-slots',
        policies: ['ps', 'cps'],
        t_ms: 100,
        view_ms: [100, 200],
        marks: [{ view: 'timeline', policy: 'cps', note: 'The job’s vCPUs start together' }],
        claim: 2,
        predict: {
          question: 'Which policy completes more steps of the job?',
          options: ['ps', 'cps'],
          answer: 'cps',
        },
      },
      {
        title: 'Co-scheduling keeps them together',
        text:
          'Co-proportional share runs the concurrent domain’s vCPUs at the same time, so every barrier is met at ' +
          'once. In the paper’s ten-slot example co-scheduling finishes 3 steps where proportional share finishes ' +
          'only 2 (4 of its 10 slots go to spinning); here co-scheduling completes {2:cps} steps in 100 slots and ' +
          'proportional share {2:ps}, its vCPUs spinning while a sibling waits (the key figures).',
        scenario: 'p001-sec2-ten-slots',
        policies: ['ps', 'cps'],
        t_ms: 500,
        view_ms: [500, 600],
        claim: 0,
        marks: [
          { view: 'key-figures', note: 'Steps done per policy' },
          { view: 'timeline', policy: 'cps', note: 'All four vCPUs in the same slots' },
        ],
      },
      {
        title: 'Asynchronous scheduling loses steps too',
        text:
          'The hybrid scheduler with the job domain marked high-throughput (HIT) schedules it asynchronously, like ' +
          'Credit: it loses steps to spinning as proportional share does. Marking the domain concurrent is what ' +
          'buys the steps back.',
        scenario: 'p001-sec2-ten-slots',
        policies: ['ps', 'cps', 'hit'],
        t_ms: 800,
        view_ms: [800, 900],
        claim: 3,
        marks: [{ view: 'timeline', policy: 'hit', note: 'HIT: the vCPUs drift apart again' }],
      },
      {
        title: 'Fair shares all the same',
        text:
          'Co-scheduling does not take CPU from anyone: every domain still gets its weighted share, 3 of 10 slots ' +
          'for the job. The makespan gap comes from wasted spinning, not from more CPU.',
        scenario: 'p001-sec2-ten-slots',
        policies: ['ps', 'cps'],
        t_ms: 1000,
        view_ms: [0, 1000],
        claim: 4,
        marks: [
          { view: 'share-chart', policy: 'cps', note: 'Shares on the fair line' },
          { view: 'claims-panel', note: 'Steps and shares, checked' },
        ],
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
        title: 'Priority inversion inside a shared pCPU',
        text:
          'A guest with an I/O task and a CPU task shares one pCPU with a neighbour. The guest scheduler cannot see ' +
          'the time its vCPU is descheduled, so a request that arrives then waits until the vCPU returns, and then ' +
          'behind the CPU task.',
        scenario: 'p002-sharing-xballoon',
        policies: ['credit', 'xballoon'],
        t_ms: 500,
        view_ms: [500, 600],
        marks: [{ view: 'timeline', policy: 'credit', note: 'The guest and its neighbour take turns' }],
      },
      {
        title: 'Predict: whose I/O throughput is higher?',
        text:
          'On the right, the guest runs a balloon task and the hypervisor uses xBalloon’s semi-work-conserving ' +
          'scheduling. Before the numbers: in which column does the guest’s I/O task serve more requests?',
        scenario: 'p002-sharing-xballoon',
        policies: ['credit', 'xballoon'],
        t_ms: 1000,
        view_ms: [1000, 1100],
        marks: [
          { view: 'timeline', policy: 'xballoon', note: 'The balloon holds the CPU the guest may not use' },
        ],
        claim: 1,
        predict: {
          question: 'Which policy gives the guest’s I/O task the higher throughput?',
          options: ['credit', 'xballoon'],
          answer: 'xballoon',
        },
      },
      {
        title: 'The balloon',
        text:
          'xBalloon lets the guest see its CPU budget: a balloon task holds the CPU the guest may not use, so the ' +
          'guest scheduler spends what is left on the I/O task first. Its throughput rises and the neighbour keeps ' +
          'its half of the pCPU. The tail latency falls too, from {0:credit} to {0:xballoon} ms, though not by the slides’ ' +
          '71%: the claims keep that as not reproduced.',
        scenario: 'p002-sharing-xballoon',
        policies: ['credit', 'xballoon'],
        t_ms: 1500,
        view_ms: [1500, 1560],
        claim: 1,
        marks: [
          { view: 'key-figures', note: 'Throughput and CPU shares per policy' },
          { view: 'event-log', policy: 'xballoon', note: 'Balloon and I/O task decisions' },
        ],
      },
      {
        title: 'Close to running I/O alone',
        text:
          'Under a 50% cap the same holds: the I/O task of the ballooned guest gets within 10% of the throughput of ' +
          'a guest that runs I/O only, while the guest still uses its whole cap (semi-work-conserving).',
        scenario: 'p002-io-cpu-xballoon',
        policies: ['credit', 'xballoon'],
        t_ms: 3000,
        view_ms: [300, 3000],
        claim: 1,
        marks: [
          { view: 'key-figures', note: 'I/O-only, I/O + CPU and xBalloon throughput' },
          { view: 'claims-panel', note: 'The slides’ claims, checked' },
        ],
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
          'dom0 both forwards the domU’s network traffic and runs CPU stress of its own on a 2-pCPU host. Each column ' +
          'is one of Xen’s schedulers on the same load: watch who gets the pCPUs when dom0’s packet thread needs one.',
        scenario: 'p003-table5-dom0-stress',
        policies: ['credit', 'credit2', 'enhanced'],
        t_ms: 600,
        view_ms: [600, 640],
        marks: [{ view: 'timeline', policy: 'credit', note: 'dom0’s stress and its packet work' }],
      },
      {
        title: 'Predict: what does preempting dom0 at once cost?',
        text:
          'The thesis’s stress scenario (4.5): the enhanced Credit lets a woken vCPU preempt at once, with no rate ' +
          'limit. Does the host switch vCPUs more or less often than under Credit?',
        scenario: 'p003-s45-enhanced-stress',
        policies: ['credit', 'enhanced'],
        t_ms: 1000,
        view_ms: [1000, 1020],
        claim: 0,
        marks: [{ view: 'timeline', policy: 'enhanced', note: 'Who runs, and how often it changes' }],
        predict: {
          question: 'Which scheduler makes more context switches host-wide?',
          options: ['credit', 'enhanced'],
          answer: 'enhanced',
        },
      },
      {
        title: 'Which scheduler loses most?',
        text:
          'The same dom0 stress, now with the domU reading its disk through dom0 (Table 4). SEDF gives each domain ' +
          'a reserved slice by deadline; Credit shares by weight. In the thesis SEDF loses 41-45% of the domU’s ' +
          'disk throughput and Credit 4-5%; here every scheduler gives about the same rate (SEDF {2:sedf} blocks/s, ' +
          'Credit {2:credit}), because the disk, not ' +
          'the CPU, bounds it: the claim is kept as not reproduced.',
        scenario: 'p003-table4-disk-stress',
        policies: ['credit', 'sedf'],
        t_ms: 1000,
        view_ms: [1000, 1020],
        marks: [{ view: 'timeline', policy: 'sedf', note: 'Who gets the pCPUs under SEDF' }],
        claim: 2,
      },
      {
        title: 'Credit2 loses less',
        text:
          'Back to the network stream: Credit2 runs dom0’s packet work sooner, so the domU’s throughput drops less ' +
          'than under Credit ({1:credit2} against {1:credit} Mbit/s here; Table 5: 79.15 against 72.71). The claims keep it as ' +
          'not reproduced: it holds with Credit’s rate limit off too, so the rate limit is not what decides it.',
        scenario: 'p003-table5-dom0-stress',
        policies: ['credit', 'credit2', 'enhanced'],
        t_ms: 1500,
        view_ms: [1500, 1520],
        claim: 1,
        marks: [
          { view: 'key-figures', note: 'domU throughput per scheduler' },
          { view: 'runqueue-pcpu-0', policy: 'credit2', note: 'Credit2 orders by credit' },
        ],
      },
      {
        title: 'The enhanced credit scheduler',
        text:
          'The thesis’s enhanced Credit has no rate limit: the domU preempts dom0 at once, often while dom0’s ' +
          'packet thread is still current; dom0’s kernel then makes that thread wait behind its busy task. So ' +
          'here the domU streams less than under Credit ({2:enhanced} against {2:credit} Mbit/s; the thesis: ' +
          '80.47 against 72.71).',
        scenario: 'p003-table5-dom0-stress',
        policies: ['credit', 'credit2', 'enhanced'],
        t_ms: 2000,
        view_ms: [500, 2000],
        claim: 2,
        marks: [
          { view: 'timeline', policy: 'enhanced', note: 'Shorter turns for dom0' },
          { view: 'claims-panel', note: 'Table 5’s direction, not reproduced here' },
        ],
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
          'A media server streams at a constant bit rate to buffered clients beside seven CPU-bound domains. Under ' +
          'plain SEDF the server, a best-effort domain, waits for its turn of extra time behind them.',
        scenario: 'p004-fig6-streaming',
        policies: ['sedf', 'xenco'],
        t_ms: 1500,
        view_ms: [1500, 1700],
        marks: [{ view: 'timeline', policy: 'sedf', note: 'When the server domain runs' }],
      },
      {
        title: 'Preferred only within the slice',
        text:
          'Now 60 clients, the paper’s capacity for Xen and Co. Xen and Co. prefers dom0 and the domains packets ' +
          'wait on, but only while they have received less than their slice in the period (3.2). Here the guests ' +
          'are best effort, with no slice, and dom0’s reservation already runs first under SEDF: the under-runs are ' +
          'about the same under both columns.',
        scenario: 'p004-fig6d-capacity',
        policies: ['sedf', 'xenco'],
        t_ms: 2000,
        view_ms: [2000, 2200],
        claim: 4,
        marks: [
          { view: 'timeline', policy: 'xenco', note: 'dom0 and the server run first in each period' },
          { view: 'event-log', policy: 'xenco', note: 'Why each domain runs now' },
        ],
      },
      {
        title: 'Predict: who pays when the bound is lifted?',
        text:
          'The third column prefers the server in extra time too, past its slice: not the paper’s rule. It ' +
          'carries all 60 clients. Before the numbers: under which column does a CPU-bound domain get less CPU?',
        scenario: 'p004-fig6d-capacity',
        policies: ['sedf', 'xenco', 'unbounded'],
        t_ms: 3000,
        view_ms: [3000, 3100],
        marks: [{ view: 'timeline', policy: 'unbounded', note: 'The server runs in the others’ extra time' }],
        claim: 6,
        predict: {
          question: 'Under which scheduler does a CPU-bound domain get less CPU?',
          options: ['xenco', 'unbounded'],
          answer: 'unbounded',
        },
      },
      {
        title: 'The server’s wait for the CPU',
        text:
          'Once it has something to send the server waits about the same under both (paper, Fig. 6b: 95% of data ' +
          'units within 25 ms instead of 2300 ms): within the slice there is no one to prefer.',
        scenario: 'p004-fig6-streaming',
        policies: ['sedf', 'xenco'],
        t_ms: 4000,
        view_ms: [4000, 4050],
        claim: 3,
        marks: [{ view: 'timeline', policy: 'xenco', note: 'I/O waits under each policy' }],
      },
      {
        title: 'Who pays for it',
        text: 'Here dom0’s share is about the same under both (paper, Fig. 8b: 4-5% more under Xen and Co.).',
        scenario: 'p004-fig6-streaming',
        policies: ['sedf', 'xenco'],
        t_ms: 6000,
        view_ms: [4000, 6000],
        claim: 7,
        marks: [
          { view: 'share-chart', policy: 'xenco', note: 'dom0’s share over time' },
          { view: 'claims-panel', note: 'Findings reproduced and not' },
        ],
      },
    ],
  },
  {
    id: 'kvm-your-machine',
    paper: null,
    title: 'Your machine is a hypervisor',
    summary:
      'A load recorded on this machine, run under a model of the Linux scheduler that ran it (KVM’s) and under ' +
      'Xen Credit, with the recording beside them.',
    steps: [
      {
        title: 'A VM is a cgroup of threads',
        text:
          'On a KVM host every vCPU is a thread of the host’s Linux scheduler and every VM a cgroup: its ' +
          'cpu.weight divides the CPU and its cpu.max caps it. Three busy VMs share one pCPU here at weights ' +
          '1:3:5, the last capped at 30 ms of CPU every 100 ms. Once that quota is used the whole VM waits for the ' +
          'next period, every vCPU on every pCPU.',
        scenario: 'kvm-cgroups',
        policies: ['kvm', 'kvm-cfs'],
        t_ms: 3000,
        view_ms: [3000, 3300],
        marks: [
          { view: 'timeline', policy: 'kvm', note: 'The capped VM stops for the rest of each period' },
          { view: 'timeline', policy: 'kvm-cfs', note: 'CFS (before Linux 6.6) cuts other turns' },
        ],
      },
      {
        title: 'Two busy loops, two schedulers',
        text:
          'This machine ran two busy loops on one CPU, each in its own cgroup: the light one at cpu.shares 1024, ' +
          'the heavy one at 3072. On a Linux host a KVM virtual machine is just such a group: its vCPUs are ' +
          'threads of the host’s scheduler. The same load runs here under a model of that scheduler, EEVDF, and ' +
          'under Xen’s Credit at the same weights.',
        scenario: 'kvm-your-machine',
        policies: ['kvm', 'credit'],
        t_ms: 1000,
        view_ms: [1000, 1060],
        marks: [
          { view: 'timeline', policy: 'kvm', note: 'EEVDF: turns of whole 4 ms ticks' },
          { view: 'timeline', policy: 'credit', note: 'Credit: 10 ms ticks, 30 ms slices' },
        ],
      },
      {
        title: 'Predict: how much does the light loop get?',
        text:
          'Its weight asks for a quarter of the CPU. Before the numbers: which of the two models gives the light ' +
          'loop less?',
        scenario: 'kvm-your-machine',
        policies: ['kvm', 'credit'],
        t_ms: 2000,
        view_ms: [2000, 2200],
        claim: 1,
        marks: [{ view: 'timeline', policy: 'credit', note: 'How often the light loop runs' }],
        predict: {
          question: 'Under which scheduler does the light loop get less of the CPU?',
          options: ['kvm', 'credit'],
          answer: 'kvm',
        },
      },
      {
        title: 'The recording answers',
        text:
          'EEVDF gives the light loop {0:kvm} of the CPU, the quarter its weight asks for; Credit gives it ' +
          '{1:credit}. The recorded column beside them is what this machine did: it sides with the model of the ' +
          'scheduler that ran it. Credit is a model of another hypervisor, not a wrong model of this one.',
        scenario: 'kvm-your-machine',
        policies: ['kvm', 'credit'],
        recording: 'two-loops-1-3',
        t_ms: 2500,
        view_ms: [2500, 2560],
        claim: 0,
        marks: [
          { view: 'key-figures', note: 'The light loop’s share in each model' },
          { view: 'recorded-panel', note: 'The recording: “Simulate this load” fits every model to it' },
        ],
      },
    ],
  },
  {
    id: 'xen-core-scheduling',
    paper: null,
    title: 'What core scheduling costs',
    summary:
      'Xen 4.13+ can schedule whole cores (sched-gran=core) so that two VMs never share one: what that costs a ' +
      'mix of 1-, 2- and 4-vCPU VMs on a host with two threads per core.',
    steps: [
      {
        title: 'Two threads per core',
        text:
          'Four cores with two hardware threads each: eight pCPUs, two to a core. Four CPU-bound VMs with 1, 1, 2 ' +
          'and 4 vCPUs fill them. Two threads of one core share its execution units, so each runs slower while ' +
          'its sibling is busy, and a VM on one thread can spy on the VM on the other (the SMT side channels). ' +
          'Under sched-gran=cpu every thread is scheduled on its own.',
        scenario: 'xen-core-scheduling',
        policies: ['cpu', 'core'],
        t_ms: 2000,
        view_ms: [2000, 2100],
        claim: 1,
        marks: [{ view: 'timeline', policy: 'cpu', note: 'pCPUs 0-1, 2-3, 4-5, 6-7 are the cores' }],
      },
      {
        title: 'One VM per core',
        text:
          'Under sched-gran=core a core only ever runs one VM at a time: the 2- and 4-vCPU VMs fill whole cores, ' +
          'and the two 1-vCPU VMs can no longer share the fourth core. They take turns on it, and while one runs ' +
          'the thread beside it has nothing it may run.',
        scenario: 'xen-core-scheduling',
        policies: ['cpu', 'core'],
        t_ms: 2500,
        view_ms: [2500, 2600],
        claim: 0,
        marks: [
          { view: 'timeline', policy: 'core', note: 'The 1-vCPU VMs take turns; the other thread idles' },
        ],
      },
      {
        title: 'Predict: who loses?',
        text:
          'A thread alone on its core runs at full speed, one beside a busy sibling at 0.65 of it. Before the ' +
          'numbers: under which granularity does a 1-vCPU VM get less work done?',
        scenario: 'xen-core-scheduling',
        policies: ['cpu', 'core'],
        t_ms: 3000,
        view_ms: [3000, 3100],
        claim: 3,
        marks: [{ view: 'timeline', policy: 'core', note: 'How often the 1-vCPU VMs run' }],
        predict: {
          question: 'Under which granularity does a 1-vCPU VM get less work done?',
          options: ['cpu', 'core'],
          answer: 'core',
        },
      },
      {
        title: 'Forced idle',
        text:
          'Under core a 1-vCPU VM does {3:core} ms of work per second against {3:cpu} under cpu: it runs at full ' +
          'speed, but only half the time, while the thread beside it sits idle ({2:core} ms of forced idle). ' +
          'The 2- and 4-vCPU VMs lose nothing, and no core is ever shared ({0:core} ms, against {1:cpu} ms ' +
          'under cpu). The cost of core scheduling is the threads your VMs cannot fill.',
        scenario: 'xen-core-scheduling',
        policies: ['cpu', 'core'],
        t_ms: 5000,
        view_ms: [5000, 5200],
        claim: 2,
        marks: [
          { view: 'key-figures', note: 'Forced idle and each VM’s progress' },
          { view: 'claims-panel', note: 'Each claim fails when its mechanism is switched off' },
        ],
      },
      {
        title: 'Or switch SMT off',
        text:
          'The other way to close the side channel is to switch SMT off: the same four cores, one thread each. ' +
          'Nothing is shared and nothing slows, but the 4-vCPU VM now gets {0:credit} ms of work per second, ' +
          'less than under either granularity with SMT on: core scheduling keeps most of what SMT gives.',
        scenario: 'xen-core-scheduling-nosmt',
        policies: ['credit'],
        t_ms: 2000,
        view_ms: [2000, 2100],
        claim: 0,
        marks: [{ view: 'key-figures', note: 'The 4-vCPU VM’s progress with SMT off' }],
      },
    ],
  },
  {
    id: 'lock-holder-ladder',
    paper: null,
    title: 'The lock holder was preempted',
    summary:
      'A vCPU preempted while it holds a spinlock leaves its siblings spinning: the problem on an overcommitted ' +
      'KVM host, then each answer hypervisors ship, from pause-loop exiting to co-scheduling.',
    steps: [
      {
        title: 'Eleven vCPUs on four pCPUs',
        text:
          'Two 4-vCPU VMs each run a thread per vCPU that takes its VM’s one spinlock for 20 us, then works ' +
          '180 us; db uses a ticket lock, dbpv a paravirtual one. A 3-vCPU batch VM of busy loops shares the four ' +
          'pCPUs. When the host preempts the vCPU holding the lock (or next in line for it), its siblings spin on ' +
          'the lock for the rest of their slice: CPU burnt, nothing done.',
        scenario: 'lock-holder-ladder',
        policies: ['none', 'ple'],
        t_ms: 1000,
        view_ms: [1000, 1050],
        marks: [
          { view: 'timeline', policy: 'none', note: 'Spinning vCPUs of db, waiting for a preempted holder' },
        ],
      },
      {
        title: 'Predict: does pause-loop exiting help?',
        text:
          'A spinning vCPU executes PAUSE in a tight loop. With pause-loop exiting (PLE) the CPU exits to KVM when ' +
          'a vCPU has paused for longer than its window, and KVM gives the pCPU away. Before the numbers: which ' +
          'column spends less time spinning on db’s ticket lock?',
        scenario: 'lock-holder-ladder',
        policies: ['none', 'ple'],
        t_ms: 1500,
        view_ms: [1500, 1550],
        claim: 0,
        marks: [{ view: 'timeline', policy: 'ple', note: 'Spins cut short by a pause-loop exit' }],
        predict: {
          question: 'Which column spends less time spinning on the ticket lock?',
          options: ['none', 'ple'],
          answer: 'ple',
        },
      },
      {
        title: 'Directed yield',
        text:
          'PLE alone spins {0:ple} ms in db against {0:none} ms without it, yet the pCPU it gives up may go to ' +
          'anyone. kvm_vcpu_on_spin yields it to a preempted vCPU of the same VM, most likely the lock holder: db ' +
          'takes its lock {1:ple_dy} times a second against {1:ple} with an exit that only yields.',
        scenario: 'lock-holder-ladder',
        policies: ['ple', 'ple_dy'],
        t_ms: 2000,
        view_ms: [2000, 2050],
        claim: 1,
        marks: [{ view: 'key-figures', note: 'Lock acquisitions per second and spin time' }],
      },
      {
        title: 'Paravirtual spinlocks',
        text:
          'A paravirtual lock spins only 2^15 PAUSEs, then halts its vCPU until the releaser kicks it: the guest ' +
          'stops burning CPU on a holder it cannot see. Under the same PLE and directed yield, dbpv spins ' +
          '{2:ple_dy} ms where db spins far longer.',
        scenario: 'lock-holder-ladder',
        policies: ['ple', 'ple_dy'],
        t_ms: 2500,
        view_ms: [2500, 2550],
        claim: 2,
        marks: [{ view: 'claims-panel', note: 'Each claim fails when its mechanism is switched off' }],
      },
      {
        title: 'Co-scheduling, and what it costs',
        text:
          'Co-scheduling runs all of a VM’s vCPUs at once, so a holder is never preempted while its siblings run: ' +
          'the hybrid scheduler gives db {4:hybrid} acquisitions a second against {4:ple} under PLE. But gangs ' +
          'fragment the host: the 3-vCPU batch VM gets {5:hybrid} of the host against {5:ple}.',
        scenario: 'lock-holder-ladder',
        policies: ['ple', 'hybrid'],
        t_ms: 3000,
        view_ms: [3000, 3050],
        claim: 4,
        marks: [{ view: 'timeline', policy: 'hybrid', note: 'db’s vCPUs run together' }],
      },
    ],
  },
];

/**
 * Homework, the lesson kind whose task is "write a policy for which these claims hold": the page states the
 * goal, opens the policy editor on the student's scripted policy (the scenario ships it with a starting
 * template), runs it beside `against`, and shows each goal claim of the scenario hold or fail with its values
 * (judged by the simulator, as every claim). The share link carries the student's code (a scenario edit).
 */
export interface Homework {
  readonly id: string;
  /** Paper number in papers/README.md. */
  readonly paper: Lesson['paper'];
  readonly title: string;
  readonly summary: string;
  /** The task, as the page states it. */
  readonly goal: string;
  /** A hint for where to start (the hooks that matter). */
  readonly hint: string;
  /** Library scenario id: it carries the student's policy and the goal claims. */
  readonly scenario: string;
  /** The student's scripted policy (scheduler "script"). */
  readonly policy: string;
  /** The policy it runs beside (a column), which fails the goal. */
  readonly against: string;
  /** Indices of the scenario claims that are the goal (status "goal"). */
  readonly claims: readonly number[];
}

export const HOMEWORK: readonly Homework[] = [
  {
    id: 'hw-mixed-response',
    paper: '000',
    title: 'Answer the mixed domain at once, and stay fair',
    summary:
      'Paper 000: write a scheduler under which a server beside a busy loop answers within 5 ms, with fair shares.',
    goal:
      "Write a policy under which the 'mixed' domain (a TCP echo server beside a busy loop, five CPU-bound " +
      'domains, one pCPU) answers its requests within 5 ms on average, while every busy domain keeps its fair ' +
      "share: Jain's index at least 0.99. Credit, in the other column, makes each request wait for the mixed " +
      'vCPU’s turn behind 30 ms slices.',
    hint:
      'The mixed vCPU never blocks, so wake() never sees it; event_sent(from, to) tells you when dom0 has a ' +
      'packet for it. A short turn then costs little CPU.',
    scenario: 'hw-mixed-response',
    policy: 'student',
    against: 'credit',
    claims: [0, 1],
  },
  {
    id: 'hw-barrier-makespan',
    paper: '001',
    title: 'Co-schedule a spin-barrier job, and stay fair',
    summary:
      'Paper 001: write a scheduler under which a barrier job steps as fast as co-scheduling lets it, with fair shares.',
    goal:
      'Write a policy under which the 4-vCPU job, whose threads spin at a barrier after every 10 ms step, ' +
      'completes at least 27 steps in the second (co-scheduling gets 30 from its 3 in 10 slots), while every ' +
      'domain keeps its weighted fair share within 0.02. Under Credit its vCPUs run at different times and spin.',
    hint:
      'Run the job’s four vCPUs in the same slots on all four pCPUs (timer_at and resched every pCPU at once), ' +
      'often enough for its weight and no more.',
    scenario: 'hw-barrier-makespan',
    policy: 'student',
    against: 'credit',
    claims: [0, 1],
  },
];

/** Two figures count as different when they are at least this fraction of the larger apart; closer than that,
 * a reveal says the policies are about the same (a 5% gap is over twice the seed-to-seed spread of the
 * throughputs the lessons compare, docs/fidelity.md). */
export const DIFFERENCE_MARGIN = 0.05;

/** The value claim results were judged on for `policy`: `values` is `{policy: {metric path: value}}`. */
export function claimFigure(values: unknown, policy: string): { path: string; value: number } | null {
  if (typeof values !== 'object' || values === null) return null;
  const per = (values as Record<string, unknown>)[policy];
  if (typeof per !== 'object' || per === null) return null;
  for (const [path, value] of Object.entries(per as Record<string, unknown>))
    if (typeof value === 'number' && Number.isFinite(value)) return { path, value };
  return null;
}

/** Whether `a` and `b` differ by more than DIFFERENCE_MARGIN of the larger. */
export function differ(a: number, b: number): boolean {
  const big = Math.max(Math.abs(a), Math.abs(b));
  return big > 0 && Math.abs(a - b) >= DIFFERENCE_MARGIN * big;
}

/** What a predict step's figures show: the winner (null: about the same) and the two figures it rests on. */
export interface Verdict {
  readonly winner: string | null;
  readonly path: string;
  readonly figures: readonly { readonly policy: string; readonly value: number }[];
}

/**
 * The winner of a predict step by the figures its claim was judged on: the lower or higher of the claim's two
 * policies, as the claim puts it, when they differ by the margin; null when the figures are missing.
 */
export function predictVerdict(
  claim: { readonly lower?: string | null; readonly higher?: string | null; readonly than?: string | null },
  values: unknown,
): Verdict | null {
  const subject = claim.lower ?? claim.higher;
  const than = claim.than;
  if (!subject || !than) return null;
  const a = claimFigure(values, subject);
  const b = claimFigure(values, than);
  if (!a || !b) return null;
  const better = claim.lower ? (a.value < b.value ? subject : than) : a.value > b.value ? subject : than;
  return {
    winner: differ(a.value, b.value) ? better : null,
    path: a.path,
    figures: [
      { policy: subject, value: a.value },
      { policy: than, value: b.value },
    ],
  };
}

/** A step's text with each `{K:POLICY}` replaced by claim K's figure for POLICY ('…' until it is judged). */
export function renderLessonText(
  text: string,
  claims: readonly { readonly values: unknown }[] | null,
): string {
  return text.replace(/\{(\d+):([A-Za-z0-9_~-]+)\}/g, (_, k: string, policy: string) => {
    const f = claims ? claimFigure(claims[Number(k)]?.values, policy) : null;
    return f ? fmt(f.value, 3) : '…';
  });
}

/** The `{K:POLICY}` figures a text refers to. */
export function textFigures(text: string): { claim: number; policy: string }[] {
  return [...text.matchAll(/\{(\d+):([A-Za-z0-9_~-]+)\}/g)].map((m) => ({
    claim: Number(m[1]),
    policy: m[2]!,
  }));
}

/**
 * Whether step `step` of `lesson` must hide its results: a predict step of the lesson, this one or a later one,
 * still waits for the class's pick (`chosen` says which steps have one). The steps after a predict step are its
 * reveal, so a lesson shows no results before its first predict step (lessons.test.ts).
 */
/** What a lesson is from, as its heading names it: "Paper 000", or "Today's hosts". */
export function lessonSource(lesson: Pick<Lesson, 'paper'>): string {
  return lesson.paper ? `Paper ${lesson.paper}` : 'Today’s hosts';
}

export function concealedAt(lesson: Lesson, step: number, chosen: (step: number) => boolean): boolean {
  if (!lesson.steps[step]) return false;
  // Whatever the scenario: an earlier step's figures may answer a later question on a sibling scenario (the
  // same metric under the same policies), so nothing is shown before the class has answered.
  return lesson.steps.some((s, j) => j >= step && s.predict !== undefined && !chosen(j));
}

/** What a predict step points at once the class has chosen: the figures the reveal names and the claim. */
export const REVEAL_MARKS: readonly LessonMark[] = [
  { view: 'key-figures', note: 'The figures the question was about' },
  { view: 'claims-panel', note: 'The claim, judged on this run' },
];

/** The views a step points at: a predict step's own until the class has chosen, then the answer's. */
export function stepMarks(
  step: LessonStep | undefined,
  revealed: boolean,
): readonly LessonMark[] | undefined {
  return step?.predict && revealed ? REVEAL_MARKS : step?.marks;
}

export function findHomework(id: string): Homework | undefined {
  return HOMEWORK.find((h) => h.id === id);
}

export function findLesson(id: string): Lesson | undefined {
  return LESSONS.find((l) => l.id === id);
}

/** The lesson after `id` in the list (papers in order), or undefined after the last. */
export function nextLesson(id: string): Lesson | undefined {
  const i = LESSONS.findIndex((l) => l.id === id);
  return i >= 0 ? LESSONS[i + 1] : undefined;
}

/** The parts of a share link a lesson step fills in. */
export interface LessonLink {
  readonly scenario: ScenarioRef | null;
  readonly policies: readonly string[] | null;
  readonly time: number | null;
  readonly view: readonly [number, number] | null;
  readonly lesson: string | null;
  readonly step: number;
}

/**
 * A link that names a lesson step shows that step: its scenario, columns, playhead and window, except what the
 * link itself gives for that same scenario (a link made on the step, then scrubbed). A step past the lesson's
 * end is its last step; a homework opens on its scenario.
 */
export function linkWithLesson<T extends LessonLink>(link: T): T {
  const hw = link.lesson ? findHomework(link.lesson) : undefined;
  if (hw) {
    if (link.scenario) return { ...link, step: 0 };
    return { ...link, step: 0, scenario: { kind: 'library', id: hw.scenario, patch: null } };
  }
  const lesson = link.lesson ? findLesson(link.lesson) : undefined;
  if (!lesson) return link;
  const step = Math.min(link.step, lesson.steps.length - 1);
  const s = lesson.steps[step]!;
  const same =
    link.scenario?.kind === 'inline' ||
    (link.scenario?.kind === 'library' && link.scenario.id === s.scenario);
  if (same)
    return {
      ...link,
      step,
      policies: link.policies ?? s.policies ?? null,
      time: link.time ?? s.t_ms,
      view: link.view ?? s.view_ms ?? null,
    };
  return {
    ...link,
    step,
    scenario: { kind: 'library', id: s.scenario, patch: null },
    policies: s.policies ?? null,
    time: s.t_ms,
    view: s.view_ms ?? null,
  };
}
