#!/usr/bin/env bash
# Hostile inputs, tried as a user would: builds each input class (files near the size limit with many variants or
# ablations, hosts whose work the estimate once missed, grids of many combinations or seeds, tampered shards, a
# field swept twice, a duration that cuts off changes, a FIFO, a BOM, duplicate keys, /dev/zero, bad Python
# arguments), runs each with the release CLI (or the Python package in python/.venv) under a memory cap and a
# timeout, and prints one row per case: class, exit code, the message's first line, peak RSS and wall time.
#
# Usage: bash scripts/hostile-inputs.sh            (MEM_CAP=2G TIMEOUT=120 by default)
#        SECTION=traces bash scripts/hostile-inputs.sh   (only the trace readers, gzip and script policies)
# A row's exit code is the program's: 0 accepted, 1 or 2 refused with a message; 124 would be the timeout (a
# hang), 134/137 an abort or a kill (memory). SCHEDSIM=path picks another CLI binary.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
mem_cap=${MEM_CAP:-2G}
limit_s=${TIMEOUT:-120}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -z "${SCHEDSIM:-}" ]; then
  (cd sim-wasm && cargo build --release -q -p schedsim-cli)
  target=$(cd sim-wasm && cargo metadata --format-version 1 --no-deps | jq -r .target_directory)
  SCHEDSIM="$target/release/schedsim"
fi
py="$root/python/.venv/bin/python"

# The inputs, made from the library's own scenarios.
python3 - "$root/scenarios" "$work" <<'EOF'
import copy, json, sys
lib, out = sys.argv[1], sys.argv[2]

def load(name):
    with open(f"{lib}/{name}") as f:
        return json.load(f)

def save(name, v, text=None):
    with open(f"{out}/{name}", "w") as f:
        f.write(text if text is not None else json.dumps(v, separators=(",", ":")))

def pad(v, nbytes):
    # Idle CPU tasks in extra domains: the shape whose parsed form is largest for its size.
    tasks, i, n = nbytes // 55, 0, 0
    while i < tasks:
        k = min(4000, tasks - i)
        v["domains"].append({"name": f"pad{n}", "tasks": [
            {"name": f"task-number-{j:08}", "workload": {"type": "cpu"}} for j in range(i, i + k)]})
        i, n = i + k, n + 1
    return v

base = load("credit-weights.json")
plain = copy.deepcopy(base)
for k in ("claims", "variants"):
    plain.pop(k, None)
save("plain.json", plain)
op = [{"op": "replace", "path": "/duration_ms", "value": 20000}]
claim = {"text": "t", "metric": "fairness.jain", "policy": "credit", "at_least": 0}

big = pad(copy.deepcopy(plain), 3_000_000)
v = copy.deepcopy(big); v["variants"] = [{"label": f"v{i}", "patch": op} for i in range(20)]
save("variants-20.json", v)
v = copy.deepcopy(big); v["claims"] = [dict(claim, text=f"c{i}", without={"label": f"w{i}", "patch": op}) for i in range(200)]
save("withouts-200.json", v)
v["variants"] = [{"label": f"v{i}", "patch": op} for i in range(20)]
save("both.json", v)
save("big-plain.json", big)
v = copy.deepcopy(plain)
v["variants"] = [{"label": "huge", "patch": [{"op": "add", "path": "/focus", "value": [0] * 2_000_000}]}]
save("huge-value.json", v)

def host(workload, vcpus, policy, ms=60000):
    # The estimate's worst-case shape: a driver domain, the workload's domain and a CPU hog, on 4 pCPUs.
    return {"schema": 1, "id": "w", "title": "w", "seed": 1, "duration_ms": ms, "host": {"pcpus": 4},
            "domains": [{"name": "dom0", "role": "driver"}, {"name": "g", "vcpus": vcpus, "tasks": workload},
                        {"name": "h", "vcpus": 2, "tasks": [{"name": "burn", "workload": {"type": "cpu"}}]}],
            "policies": [policy]}

credit = {"id": "credit", "scheduler": "credit"}
pipe = [{"name": "p", "workload": {"type": "pipe", "threads": 65536, "group": 2, "cpu_us": 1}}]
save("pipe-65536.json", dict(host(pipe, 4, credit), domains=[{"name": "g", "vcpus": 4, "tasks": pipe}]))
save("bvt-mcu.json", host([{"name": f"c{i}", "workload": {"type": "cpu"}} for i in range(8)], 8,
                          {"id": "bvt", "scheduler": "bvt", "params": {"mcu_us": 1, "ctx_allow_us": 0}}))
save("changes.json", load("p000-fig18-io-threshold.json"))
save("nested.json", None, json.dumps(plain)[:-1] + ',"deep":' + "[" * 100000 + "]" * 100000 + "}")
text = json.dumps(plain, indent=1)
save("bom.json", None, "\ufeff" + text)
save("duplicate-key.json", None, text.replace('"seed": 1,', '"seed": 1, "seed": 2,', 1))
dup = copy.deepcopy(plain)
dup["domains"].append({"name": "1", "tasks": [{"name": "t", "workload": {"type": "cpu"}}]})
save("domain-named-1.json", dup)
with open(f"{out}/values-100", "w") as f:
    f.write(",".join(str(256 + i) for i in range(100)))
with open(f"{out}/values-1000", "w") as f:
    f.write(",".join(str(256 + i) for i in range(1000)))
EOF
mkfifo "$work/fifo.json"

# Shards of a small sweep, one tampered copy per way of tampering.
short=$work/short.json
jq '.duration_ms = 2000 | .warmup_ms = 500' "$work/plain.json" >"$short"
jq '.duration_ms = 2 | .warmup_ms = 1' "$work/plain.json" >"$work/tiny.json"
for i in 0 1; do
  "$SCHEDSIM" sweep "$short" --set domains.heavy.weight=256,512,1024 --shard "$i/2" --out "$work/shards" 2>/dev/null
done
tamper() { # NAME SED-EXPRESSION: a copy of the shards with shard 0's CSV edited
  cp -r "$work/shards" "$work/$1"
  [ -z "$2" ] || sed -i "$2" "$work/$1/shard-00000-of-00002.csv"
}
tamper truncated ''
truncate -s -4 "$work/truncated/shard-00000-of-00002.csv"
tamper seed-edited '2 s/,1,credit,/,7,credit,/'
tamper columns-swapped '1 s/light1.cpu_share,domains.heavy.cpu_share/heavy.cpu_share,domains.light1.cpu_share/'
tamper policy-edited '2 s/,credit,/,credit-1ms,/'
mkdir -p "$work/other"
jq '.duration_ms = 3000' "$short" >"$work/short3.json"
for i in 0 1; do
  "$SCHEDSIM" sweep "$work/short3.json" --set domains.heavy.weight=256,512,1024 --shard "$i/2" --out "$work/other" 2>/dev/null
done
cp -r "$work/shards" "$work/mixed"
cp "$work/other/shard-00001-of-00002.csv" "$work/mixed/"

rows=()
# case CLASS CMD...: runs CMD under the memory cap and the timeout, and records its row.
case_() {
  local class=$1
  shift
  local out=$work/out err=$work/err stats=$work/stats code=0
  /usr/bin/time -v -o "$stats" timeout "$limit_s" prlimit --as="$(numfmt --from=iec "$mem_cap")" -- "$@" \
    >"$out" 2>"$err" </dev/null || code=$?
  local msg rss wall
  msg=$(grep -v '^\s*$' "$err" | head -n 1 | cut -c 1-110 || true)
  # A Python exception's own line is the traceback's last.
  [[ $msg != Traceback* ]] || msg=$(grep -v '^\s*$' "$err" | tail -n 1 | cut -c 1-110 || true)
  [ -n "$msg" ] || msg="(stdout) $(head -c 80 "$out" | head -n 1 || true)"
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f MB", $2 / 1024}' "$stats")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$stats")
  rows+=("$(printf '| %s | %s | %s | %s | %s |' "$class" "$code" "${msg//|/\\|}" "$rss" "$wall")")
  printf '%-44s exit %-3s %s\n' "$class" "$code" "$wall" >&2
}

s=$SCHEDSIM
if [ "${SECTION:-all}" = traces ]; then
  # The trace readers, gzip and script policies (SECTION=traces): crafted perf.data sizes, seeded bit flips, CPU
  # and thread numbers out of range, time going backwards, a gzip bomb, a FIFO, script floods and storms.
  fx=$root/sim-wasm/core/tests/fixtures
  python3 - "$fx" "$work" <<'PYEOF'
import gzip, json, random, struct, sys, zlib
fx, out = sys.argv[1], sys.argv[2]
data = gzip.open(f"{fx}/perf/sched.data.gz").read()
text = gzip.open(f"{fx}/perf/sched.perf-script.txt.gz").read().decode()
def save(name, b):
    with open(f"{out}/{name}", "wb") as f:
        f.write(b if isinstance(b, bytes) else b.encode())
def put(b, at, v):
    b = bytearray(b); b[at:at + 8] = struct.pack("<Q", v); return bytes(b)
off, size = struct.unpack("<QQ", data[40:56])
save("perf-data-size.data", put(data, 48, 1 << 40))
save("perf-attr-size.data", put(data, 32, 1 << 40))
save("perf-feature-size.data", put(data, off + size + 8, 1 << 40))
save("perf-feature-offset.data", put(data, off + size, (1 << 64) - 8))
save("perf-attr-size-0.data", put(data, 16, 0))
rnd = random.Random(7)
for i in range(20):
    b = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        j = rnd.randrange(0, 4096) if i % 2 == 0 else rnd.randrange(off + size, len(b))
        b[j] ^= 1 << rnd.randrange(8)
    save(f"perf-flip-{i:02}.data", bytes(b))
lines = text.splitlines(keepends=True)
ev = next(i for i, l in enumerate(lines) if "sched_switch" in l)
# A later switch on CPU 0 with its CPU replaced, so that its time is in order and the CPU is what is wrong.
k = next(i for i in range(ev + 5, len(lines)) if "sched_switch" in lines[i] and "[000]" in lines[i])
sw = lines[k]
save("cpu-99999999.txt", "".join(lines[:k]) + sw.replace("[000]", "[99999999]", 1))
save("cpu-4294967295.txt", "".join(lines[:k]) + sw.replace("[000]", "[4294967295]", 1))
mig = sw.split("sched_switch")[0].replace("sched:", "") + "sched:sched_migrate_task: comm=x pid=5 prio=120 orig_cpu=0 dest_cpu=-1\n"
save("dest-cpu-minus-1.txt", "".join(lines[:k]) + mig)
body = lines[ev:]
rnd.shuffle(body)
save("shuffled.txt", "".join(lines[:ev]) + "".join(body))
def rec(event, tsc, extra):
    h = event | len(extra) << 28 | (1 << 31 if tsc is not None else 0)
    b = struct.pack("<I", h) + (struct.pack("<II", tsc & 0xffffffff, tsc >> 32) if tsc is not None else b"")
    return b + b"".join(struct.pack("<I", e) for e in extra)
recs = rec(0x21001 | 1 << 8, 5000, [1 << 16]) + rec(0x21001 | 2 << 4, 9000, [1 << 16]) + rec(0x21001 | 2 << 8 | 1 << 4, 100, [1 << 16])
save("xentrace-tsc-back.xt", rec(0x1f003, None, [0, len(recs)]) + recs)
save("xentrace-cpu-huge.xt", rec(0x1f003, None, [99999999, len(recs)]) + recs)
c = zlib.compressobj(9, zlib.DEFLATED, 31)
zero = bytes(1 << 24)
bomb = b"".join(c.compress(zero) for _ in range(128)) + c.flush()
save("zeros-2GiB.txt.gz", bomb)
def scripted(name, src, ms=3000):
    sc = {"schema": 1, "id": "s", "title": "s", "seed": 1, "duration_ms": ms, "host": {"pcpus": 2},
          "domains": [{"name": "a", "vcpus": 2, "tasks": [{"name": "x", "workload": {"type": "cpu"}}, {"name": "y", "workload": {"type": "cpu"}}]}],
          "policies": [{"id": "mine", "scheduler": "script", "params": {"source": src}}]}
    save(name, json.dumps(sc))
pick = "fn wake(v, cause) { resched(v % 2); }\nfn do_schedule(p, cur, runnable) { #{ next: p, slice_us: 1000 } }\n"
scripted("script-print-flood.json", "fn init(host) { for i in 0..400000 { print(i); } }\n" + pick)
scripted("script-log-flood.json", "fn tick(p) { for i in 0..1000 { log(p, `line ${i}`); } }\nfn timers() { #{ tick_us: 1000 } }\n" + pick)
scripted("script-timer-storm.json", "fn init(host) { timer_at(0); }\nfn timer() { timer_at(now()); }\n" + pick)
scripted("script-resched-storm.json", "fn wake(v, cause) { resched(0); }\nfn do_schedule(p, cur, runnable) { resched(p); #{ next: () } }\n")
scripted("script-nested.json", "fn init(host) { let a = []; for i in 0..20000 { a = [a]; } this.a = a; }\n" + pick)
scripted("script-this-growth.json", "fn tick(p) { this.l.push(`${now()} and some text to grow it`); }\nfn init(host) { this.l = []; }\nfn timers() { #{ tick_us: 100 } }\n" + pick, 600000)
scripted("script-this-values.json", "fn tick(p) { for i in 0..100 { this.a.push(now()); this.b.push(now()); } }\nfn init(host) { this.a = []; this.b = []; }\nfn timers() { #{ tick_us: 100 } }\n" + pick)
scripted("script-copy-loop.json", "fn init(host) { let a = []; a.pad(90000, 0); for i in 0..100000 { let b = a; } }\n" + pick)
scripted("script-this-deep.json", "fn tick(p) { this.a = [this.a]; }\nfn init(host) { this.a = []; }\nfn timers() { #{ tick_us: 1000 } }\n" + pick)
scripted("script-slow-calls.json", "fn tick(p) { let n = 0; while n < 100000 { n += 1; } }\nfn timers() { #{ tick_us: 1000 } }\n" + pick, 60000)
scripted("script-bom.json", "\ufeff" + pick)
PYEOF
  mkfifo "$work/trace.fifo"
  for f in "$work"/perf-*.data; do case_ "perf.data: $(basename "$f" .data)" "$s" trace report "$f"; done
  for f in cpu-99999999.txt cpu-4294967295.txt dest-cpu-minus-1.txt shuffled.txt xentrace-tsc-back.xt \
    xentrace-cpu-huge.xt zeros-2GiB.txt.gz; do
    case_ "trace: $f" "$s" trace report "$work/$f"
  done
  case_ "trace: FIFO" "$s" trace report "$work/trace.fifo"
  for f in "$work"/script-*.json; do case_ "$(basename "$f" .json)" "$s" run "$f"; done
  # The page's wasm module in Node (scripts/hostile-page.mjs): V8 reserves address space for wasm memories far
  # past its use, so these run under a larger cap (PAGE_MEM_CAP) of address space; the RSS is what they take.
  if [ -f web/src/sim/pkg/schedsim_wasm_bg.wasm ]; then
    cap_was=$mem_cap
    mem_cap=${PAGE_MEM_CAP:-16G}
    for f in perf-data-size.data perf-feature-size.data perf-flip-00.data cpu-99999999.txt cpu-4294967295.txt \
      dest-cpu-minus-1.txt shuffled.txt xentrace-tsc-back.xt xentrace-cpu-huge.xt zeros-2GiB.txt.gz; do
      case_ "page: trace $f" node scripts/hostile-page.mjs "$work/$f"
    done
    for f in "$work"/script-*.json; do case_ "page: $(basename "$f" .json)" node scripts/hostile-page.mjs "$f"; done
    mem_cap=$cap_was
  fi
  if [ -x "$py" ]; then
    for f in perf-data-size.data perf-feature-size.data cpu-4294967295.txt zeros-2GiB.txt.gz trace.fifo; do
      case_ "python: trace_report($f)" "$py" -c "import schedsim, sys; schedsim.trace_report(sys.argv[1])" "$work/$f"
    done
    case_ "python: trace_report(.gz fixture)" "$py" -c "import schedsim, sys; print(len(schedsim.trace_report(sys.argv[1])['runs']))" "$fx/perf/sched.perf-script.txt.gz"
    for f in script-nested.json script-this-growth.json script-print-flood.json script-timer-storm.json; do
      case_ "python: run($f)" "$py" -c "import schedsim, sys; schedsim.run(sys.argv[1])" "$work/$f"
    done
    case_ "python: estimate(script-slow-calls.json)" "$py" -c "import schedsim, sys; print(schedsim.estimate(sys.argv[1])['seconds'])" "$work/script-slow-calls.json"
    case_ "python: run(seed=-1)" "$py" -c "import schedsim, sys; schedsim.run(sys.argv[1], seed=-1)" "$short"
    case_ "python: sweep(max_runs=-1)" "$py" -c "import schedsim, sys; schedsim.sweep(sys.argv[1], {'host.pcpus': [1]}, max_runs=-1, cache=False)" "$short"
    case_ "python: sweep(client=1)" "$py" -c "import schedsim, sys; schedsim.sweep(sys.argv[1], {'host.pcpus': [1]}, client=1, cache=False)" "$short"
  fi
  printf '\n| class | exit | first line of the message | peak RSS | wall |\n|---|---|---|---|---|\n'
  printf '%s\n' "${rows[@]}"
  printf '\n(memory cap %s of address space, timeout %s s)\n' "$mem_cap" "$limit_s"
  exit 0
fi
case_ "3 MB file, 20 variants: run --max-events 1" "$s" run "$work/variants-20.json" --variant v0 --max-events 1
case_ "3 MB file, 20 variants: check" "$s" check "$work/variants-20.json"
case_ "3 MB file, 200 withouts: check" "$s" check "$work/withouts-200.json"
case_ "3 MB file, 20 variants + 200 withouts: check" "$s" check "$work/both.json"
case_ "2,000,000-element patch value: check" "$s" check "$work/huge-value.json"
case_ "value nested 100,000 deep" "$s" run "$work/nested.json"
for f in "$root"/sim-wasm/core/tests/bounded/*.json; do
  case_ "kept worst case $(basename "$f"): check" "$s" check "$f"
done
case_ "pipe of 65,536 threads, 60 s" "$s" run "$work/pipe-65536.json"
case_ "pipe of 65,536 threads, 20 ms" "$s" run "$work/pipe-65536.json" --duration-ms 20
case_ "BVT mcu_us 1, ctx_allow_us 0, 60 s" "$s" run "$work/bvt-mcu.json"
case_ "BVT mcu_us 1, 60 s, --max-events 1e7" "$s" run "$work/bvt-mcu.json" --max-events 10000000
# 1,000 x 100 values: one argument of 100,000 values passes the kernel's limit on an argument's length.
grid100k=(--set "domains.heavy.weight=$(cat "$work/values-1000")" --set "domains.light1.weight=$(cat "$work/values-100")")
case_ "100,000-combination grid, 1.5 kB, 30 s runs (accepted: ~12 min)" "$s" sweep "$work/plain.json" "${grid100k[@]}" --policy credit
case_ "100,000-combination grid, 3 MB scenario" "$s" sweep "$work/big-plain.json" "${grid100k[@]}" --policy credit
case_ "100,000 combinations, 1.5 kB, 2 ms each" "$s" sweep "$work/tiny.json" "${grid100k[@]}" --policy credit
case_ "1,000 combinations x --seeds 100000" "$s" sweep "$work/plain.json" \
  --set "domains.heavy.weight=$(cat "$work/values-1000")" --seeds 100000
case_ "300 combinations of a 3 MB scenario" "$s" sweep "$work/big-plain.json" \
  --set "host.pcpus=$(seq -s, 1 300)" --policy credit
case_ "merge: untouched shards" "$s" sweep --merge "$work/shards"
case_ "merge: CSV truncated mid-number" "$s" sweep --merge "$work/truncated"
case_ "merge: a seed edited" "$s" sweep --merge "$work/seed-edited"
case_ "merge: two columns swapped under headers" "$s" sweep --merge "$work/columns-swapped"
case_ "merge: a policy edited" "$s" sweep --merge "$work/policy-edited"
case_ "merge: a shard of another sweep" "$s" sweep --merge "$work/mixed"
case_ "--set one field by name and by index" "$s" sweep "$short" \
  --set domains.heavy.weight=256,1024 --set domains.1.weight=256
case_ "--set domains.1 with a domain named 1" "$s" sweep "$work/domain-named-1.json" \
  --set domains.1.weight=128,256 --set domains.heavy.weight=512
case_ "--duration-ms 10000 cutting changes at 20 s" "$s" sweep "$work/changes.json" \
  --set seed=1,2 --duration-ms 10000
case_ "--duration-ms 10000 cutting changes: run" "$s" run "$work/changes.json" --duration-ms 10000
case_ "FIFO as the scenario file" "$s" run "$work/fifo.json"
case_ "FIFO named shard-*.json in --merge" bash -c "mkdir -p '$work/fifo-dir' && \
  cp '$work/shards/'* '$work/fifo-dir/' && rm '$work/fifo-dir/shard-00001-of-00002.json' && \
  mkfifo '$work/fifo-dir/shard-00001-of-00002.json' && exec '$s' sweep --merge '$work/fifo-dir'"
case_ "UTF-8 BOM" "$s" run "$work/bom.json" --duration-ms 2000
case_ "duplicate key" "$s" run "$work/duplicate-key.json"
case_ "/dev/zero" "$s" run /dev/zero
case_ "run --seeds 1 (no trace recorded)" "$s" run "$root/scenarios/bench-large.json" --seeds 1

if [ -x "$py" ]; then
  pycase() { # CLASS CODE: Python code with schedsim imported and sc the short scenario's path
    case_ "python: $1" "$py" -c "import schedsim, sys; sc = sys.argv[1]; $2" "$short"
  }
  pycase "run(seed=2**53)" "schedsim.run(sc, seed=2**53)"
  pycase "run('/dev/zero')" "schedsim.run('/dev/zero')"
  pycase "run(FIFO)" "schedsim.run('$work/fifo.json')"
  pycase "sweep(policies='credit')" "schedsim.sweep(sc, {'host.pcpus': [1]}, policies='credit', cache=False)"
  pycase "sweep metric matching nothing" \
    "schedsim.sweep(sc, {'host.pcpus': [1]}, metrics=['domains.nope.x'], cache=False, progress=False)"
  pycase "sweep of 1,000 x seeds=100000" \
    "schedsim.sweep(sc, {'domains.heavy.weight': list(range(1000))}, seeds=100000, cache=False)"
  pycase "sweep of 100,000 combinations, 3 MB" \
    "schedsim.sweep('$work/big-plain.json', {'host.pcpus': list(range(1, 100001))}, policies=['credit'], cache=False)"
  case_ "python: sweep from stdin, no main guard" bash -c "printf '%s\n' 'import schedsim' \
    'df = schedsim.sweep(\"$short\", {\"host.pcpus\": [1, 2]}, cache=False, progress=False)' \
    'print(len(df), \"rows\")' | '$py' -"
fi

printf '\n| class | exit | first line of the message | peak RSS | wall |\n|---|---|---|---|---|\n'
printf '%s\n' "${rows[@]}"
printf '\n(memory cap %s of address space, timeout %s s, %s)\n' "$mem_cap" "$limit_s" "$("$SCHEDSIM" --version 2>/dev/null || true)"
