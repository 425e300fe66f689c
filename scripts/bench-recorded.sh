#!/usr/bin/env bash
# Throughput and peak memory of the recorded-run readers on ~100 MB traces (not committed: generated here).
#   text: the perf fixture (sim-wasm/core/tests/fixtures/perf) repeated with shifted timestamps;
#   xentrace: the synthetic layout of schedsim_core::recorded::xentrace::synthetic (2 pCPUs, a 100 us period),
#             written by the same rules in Python.
#   perf.data (optional, PERF_DATA=FILE): one recorded here, e.g. a pipe ping-pong pinned to one CPU,
#             `perf sched record -o big.data -- taskset -c 1 perf bench sched pipe -l 160000` (~100 MB).
# Needs a release build: (cd sim-wasm && cargo build --release -p schedsim-cli).
# Usage: [PERF_DATA=big.data] scripts/bench-recorded.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${SCHEDSIM:-$(cd "$root/sim-wasm" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/schedsim}
tmp=${TMPDIR:-/tmp}/schedsim-bench-recorded
mkdir -p "$tmp"
python3 - "$root" "$tmp" <<'PY'
import gzip, re, struct, sys
root, tmp = sys.argv[1], sys.argv[2]
text = gzip.open(f"{root}/sim-wasm/core/tests/fixtures/perf/sched.perf-script.txt.gz", "rt").read().splitlines(True)
stamp = re.compile(r"\] (\d+)\.(\d{9}):")
span = 3_000_000_000  # each copy 3 s after the last
with open(f"{tmp}/big.txt", "w") as out:
    k = 0
    while out.tell() < 100_000_000:
        shift = k * span
        for l in text:
            m = stamp.search(l)
            if m:
                t = int(m.group(1)) * 10**9 + int(m.group(2)) + shift
                l = l[: m.start()] + f"] {t // 10**9}.{t % 10**9:09d}:" + l[m.end():]
            out.write(l)
        k += 1
def rec(ev, tsc, extra):
    h = ev | (len(extra) << 28) | (1 << 31)
    return struct.pack("<IQ" + "I" * len(extra), h, tsc, *extra)
def rs(tsc, dom, vcpu, old, new):
    return rec(0x00021001 | (old & 3) << 8 | (new & 3) << 4, tsc, [vcpu | dom << 16])
tick = lambda us: us * 2400
period, end = 100, 51_000_000  # us
cpu0, cpu1 = [rs(0, 1, 0, 1, 0)], [rs(0, 1, 1, 1, 0)]
t = 0
while t + period <= end:
    run = period // 10
    cpu0 += [rs(tick(t), 2, 0, 2, 1), rec(0x28004, tick(t), [2, 0]), rec(0x22007, tick(t), [2, 0]),
             rec(0x2800a, tick(t + 10), [1, 0, 2, 0]), rs(tick(t + 10), 1, 0, 0, 1), rs(tick(t + 10), 2, 0, 1, 0),
             rec(0x22008, tick(t + 10 + run), [2, 0]), rec(0x2800a, tick(t + 10 + run), [2, 0, 1, 0]),
             rs(tick(t + 10 + run), 2, 0, 0, 2), rs(tick(t + 10 + run), 1, 0, 1, 0)]
    t += period
t, d1 = 0, True
while t < end:
    t = min(t + (30_000 if d1 else 10_000), end)
    a, b = ((1, 1), (3, 0)) if d1 else ((3, 0), (1, 1))
    cpu1 += [rec(0x2800a, tick(t), [a[0], a[1], b[0], b[1]]), rs(tick(t), a[0], a[1], 0, 1), rs(tick(t), b[0], b[1], 1, 0)]
    d1 = not d1
with open(f"{tmp}/big.xt", "wb") as out:
    n = 4096
    for i in range(0, max(len(cpu0), len(cpu1)), n):
        for cpu, recs in ((0, cpu0), (1, cpu1)):
            body = b"".join(recs[i : i + n])
            if body:
                out.write(struct.pack("<III", 0x0001F003 | (2 << 28), cpu, len(body)) + body)
PY
files=("$tmp/big.txt" "$tmp/big.xt")
if [ -n "${PERF_DATA:-}" ]; then files+=("$PERF_DATA"); fi
for path in "${files[@]}"; do
  f=$(basename "$path")
  size=$(stat -c %s "$path")
  /usr/bin/time -v "$bin" trace report "$path" >"$tmp/$f.json" 2>"$tmp/$f.time"
  wall=$(grep "Elapsed (wall clock)" "$tmp/$f.time" | awk '{print $NF}')
  rss=$(grep "Maximum resident set size" "$tmp/$f.time" | awk '{print $NF}')
  secs=$(python3 -c "p='$wall'.split(':'); print(sum(float(x)*60**i for i,x in enumerate(reversed(p))))")
  python3 -c "print('$f: %.1f MB, %.2f s, %.1f MB/s (two passes), peak RSS %.1f MB' % ($size/1e6, $secs, $size/1e6/$secs, $rss/1024))"
done
