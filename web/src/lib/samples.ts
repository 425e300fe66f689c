// Recordings of this project's own machine, shipped with the page so a lesson can put one beside the model: the
// validation suite's traces (scripts/record-validation.sh), each with the mapping it was recorded under.
import w13Mapping from '../../../sim-wasm/core/tests/fixtures/validation/w13/mapping.json' with { type: 'json' };

export interface SampleRecording {
  readonly id: string;
  /** The file name the recorded column shows. */
  readonly name: string;
  /** Where the built page serves the trace (perf script text, gzip-compressed). */
  readonly url: string;
  /** Its thread-to-domain mapping as JSON text. */
  readonly mapping: string;
  readonly what: string;
}

export const SAMPLE_RECORDINGS: readonly SampleRecording[] = [
  {
    id: 'two-loops-1-3',
    name: 'two-busy-loops-weights-1-3.txt.gz',
    url: new URL('../../../sim-wasm/core/tests/fixtures/validation/w13/trace.txt.gz', import.meta.url).href,
    mapping: JSON.stringify(w13Mapping),
    what: 'two busy loops in cgroups at cpu.shares 1024 and 3072 on one CPU of this machine (perf sched, Linux 6.18)',
  },
];

export function findSample(id: string): SampleRecording | undefined {
  return SAMPLE_RECORDINGS.find((s) => s.id === id);
}
