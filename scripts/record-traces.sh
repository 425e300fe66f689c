#!/usr/bin/env bash
# Records the perf scheduler traces the recorded-run tests read (sim-wasm/core/tests/fixtures/perf/).
#
# Load, all pinned to one CPU so the cgroups contend there (the other CPU keeps whatever else the host runs):
#   - burn-hi and burn-lo: two CPU-bound shell loops in cgroups of CPU weight 4:1
#     (cgroup v1 cpu.shares 2048 / 512, or cgroup v2 cpu.weight 200 / 50);
#   - udp-echo: a UDP echo server, and udp-client sending it one 32-byte datagram every 2 ms.
# Then `perf sched record` of the whole host for DURATION seconds, and from its perf.data:
#   sched.perf-script.txt.gz   `perf script --ns` text (the reader's input; --ns: timehist's own nanoseconds)
#   sched.timehist.txt         `perf sched timehist -s` (the independent per-task totals the tests compare with)
#   sched.mapping.json         the domains: each cgroup's processes, weight = shares x 256 / 1024 (Xen's default
#                              weight 256 for Linux's default 1024), pids as recorded
#   sched.data.gz              the perf.data itself, when small enough
# Needs root (cgroups, tracepoints) and perf. Usage: scripts/record-traces.sh [OUT_DIR] [DURATION_S]
set -euo pipefail

out=${1:-"$(dirname "$0")/../sim-wasm/core/tests/fixtures/perf"}
dur=${2:-2}
cpu=${CPU:-1}
mkdir -p "$out"
work=$(mktemp -d)
pids=()
groups=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for g in "${groups[@]}"; do rmdir "$g" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A cgroup with a relative CPU weight (v1: cpu.shares, default 1024; v2: cpu.weight, default 100).
make_group() { # name shares_v1 -> prints the cgroup dir
  local name=$1 shares=$2 dir
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    dir=/sys/fs/cgroup/$name
    mkdir -p "$dir"
    echo $((shares * 100 / 1024)) >"$dir/cpu.weight"
  else
    dir=/sys/fs/cgroup/cpu/$name
    mkdir -p "$dir"
    echo "$shares" >"$dir/cpu.shares"
  fi
  echo "$dir"
}
hi=$(make_group schedlab-hi 2048)
lo=$(make_group schedlab-lo 512)
groups+=("$hi" "$lo")

# Each load process names itself (comm) and joins its cgroup before it starts working.
start_in() { # cgroup comm command...
  local g=$1 comm=$2
  shift 2
  taskset -c "$cpu" bash -c 'echo $$ > "$1/cgroup.procs"; printf %s "$2" > /proc/$$/comm; shift 2; exec "$@"' \
    _ "$g" "$comm" "$@" &
  pids+=($!)
}
start_in "$hi" burn-hi bash -c 'printf burn-hi > /proc/$$/comm; while :; do :; done'
start_in "$lo" burn-lo bash -c 'printf burn-lo > /proc/$$/comm; while :; do :; done'
cat >"$work/echo.py" <<'EOF'
import socket, sys, time
role, port = sys.argv[1], int(sys.argv[2])
open("/proc/self/comm", "w").write(role)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if role == "udp-echo":
    s.bind(("127.0.0.1", port))
    while True:
        data, addr = s.recvfrom(2048)
        s.sendto(data, addr)
else:
    s.settimeout(1.0)
    while True:
        s.sendto(b"x" * 32, ("127.0.0.1", port))
        try:
            s.recvfrom(2048)
        except socket.timeout:
            pass
        time.sleep(0.002)
EOF
port=$((20000 + RANDOM % 20000))
start_in "$hi" udp-echo python3 "$work/echo.py" udp-echo "$port"
sleep 0.3
start_in "$hi" udp-client python3 "$work/echo.py" udp-client "$port"
sleep 0.5

cmd=(perf sched record -o "$work/sched.data" -- sleep "$dur")
echo "recording: ${cmd[*]}" >&2
"${cmd[@]}" 2>"$work/record.log"

# The mapping: the pids of the load, by the cgroup they were started in.
pid_of() { pgrep -x "$1" | head -1; }
cat >"$out/sched.mapping.json" <<EOF
{
  "domains": [
    { "name": "hi", "weight": 512, "pids": [$(pid_of burn-hi), $(pid_of udp-echo), $(pid_of udp-client)] },
    { "name": "lo", "weight": 128, "pids": [$(pid_of burn-lo)] }
  ],
  "rest": "drop",
  "cpus": [$cpu]
}
EOF

perf script --ns -i "$work/sched.data" -F comm,pid,tid,cpu,time,event,trace 2>/dev/null | gzip -9 -n >"$out/sched.perf-script.txt.gz"
perf sched timehist -i "$work/sched.data" -s 2>/dev/null >"$out/sched.timehist.txt"
gzip -9 -n -c "$work/sched.data" >"$work/sched.data.gz"
if [ "$(stat -c %s "$work/sched.data.gz")" -le 700000 ]; then cp "$work/sched.data.gz" "$out/"; fi
{
  echo "command: ${cmd[*]}"
  echo "perf: $(perf --version)"
  echo "kernel: $(uname -r)"
  echo "cpus: $(nproc); load pinned to CPU $cpu"
  echo "cgroups: $([ -f /sys/fs/cgroup/cgroup.controllers ] && echo v2 cpu.weight 200/50 || echo v1 cpu.shares 2048/512)"
  echo "script: perf script --ns -F comm,pid,tid,cpu,time,event,trace | gzip -9 -n"
} >"$out/sched.record.txt"
ls -la "$out" >&2
