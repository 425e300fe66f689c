#!/usr/bin/env bash
# Records the validation suite: workload shapes run on this machine under its own Linux scheduler, each traced with
# `perf sched record`, so that `schedsim validate` can replay each under the `kvm` model and compare.
#
# Each shape runs its processes in cgroup v1 `cpu` groups (or v2 when that is what the host has) with the weights,
# quotas and nice levels it names, pinned to the CPUs it names, and writes into OUT_DIR/NAME/:
#   trace.txt.gz    `perf script --ns` text of the sched tracepoints (the readers' input)
#   mapping.json    which processes are which domain, with the cgroup settings they ran under
#   record.txt      the exact commands, perf's and the kernel's versions, and the kernel facts that matter
#                   (HZ, preemption model, scheduler features readable here)
# Shapes on one CPU move every other process off that CPU for the recording (their affinity is restored after),
# so the recording holds the shape alone; shapes over two CPUs share them with whatever else runs.
# Needs root (cgroups, tracepoints, affinity of other processes) and perf.
# Usage: scripts/record-validation.sh [OUT_DIR] [DURATION_S] [SHAPE...]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/../sim-wasm/core/tests/fixtures/validation"}
dur=${2:-3}
shift $(($# > 2 ? 2 : $#)) || true
only=("$@")
# Each compressed trace stays under this size: the suite is committed.
max_bytes=400000
mkdir -p "$out"
work=$(mktemp -d)
pids=()
groups=()
saved_affinity="$work/affinity"

v2() { [ -f /sys/fs/cgroup/cgroup.controllers ]; }

restore_affinity() {
  [ -f "$saved_affinity" ] || return 0
  while read -r pid mask; do taskset -a -p "$mask" "$pid" >/dev/null 2>&1 || true; done <"$saved_affinity"
  # Processes started meanwhile inherited the narrowed mask: give them every CPU back.
  for p in $(ps -e -o pid=); do taskset -a -p -c "0-$(($(getconf _NPROCESSORS_ONLN) - 1))" "$p" >/dev/null 2>&1 || true; done
  rm -f "$saved_affinity"
}

stop_load() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # Processes the load forked (the pipe ring's) are not our children: find them by their script.
  pkill -f "$work/load.py" 2>/dev/null || true
  wait 2>/dev/null || true
  pids=()
  for g in "${groups[@]}"; do rmdir "$g" 2>/dev/null || true; done
  groups=()
}

cleanup() {
  stop_load
  restore_affinity
  rm -rf "$work"
}
trap cleanup EXIT

# Moves every process but ours off CPU $1 (kernel threads bound to a CPU refuse, and stay). Three passes: a
# process forked by one not yet moved inherits the old mask.
isolate_cpu() {
  local cpu=$1 others pass
  others=$(seq 0 $(($(getconf _NPROCESSORS_ONLN) - 1)) | grep -vx "$cpu" | paste -sd, -)
  : >"$saved_affinity"
  for pass in 1 2 3; do
    isolate_pass "$others"
  done
}

isolate_pass() {
  local others=$1
  for p in $(ps -e -o pid=); do
    grep -q "^$p " "$saved_affinity" && continue
    [ "$p" = "$$" ] && continue
    case " ${pids[*]} " in *" $p "*) continue ;; esac
    { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -q "$work/load.py" && continue
    mask=$(taskset -p "$p" 2>/dev/null | awk '{print $NF}') || continue
    [ -n "$mask" ] || continue
    if taskset -a -p -c "$others" "$p" >/dev/null 2>&1; then echo "$p $mask" >>"$saved_affinity"; fi
  done
}

# A cgroup with CPU settings: make_group NAME SHARES [QUOTA_US PERIOD_US [BURST_US]] -> prints its directory.
make_group() {
  local name=$1 shares=$2 quota=${3:-} period=${4:-100000} burst=${5:-} dir
  if v2; then
    dir=/sys/fs/cgroup/$name
    mkdir -p "$dir"
    echo $((shares * 100 / 1024)) >"$dir/cpu.weight"
    [ -n "$quota" ] && echo "$quota $period" >"$dir/cpu.max"
    [ -n "$burst" ] && echo "$burst" >"$dir/cpu.max.burst"
  else
    dir=/sys/fs/cgroup/cpu/$name
    mkdir -p "$dir"
    echo "$shares" >"$dir/cpu.shares"
    if [ -n "$quota" ]; then
      echo "$period" >"$dir/cpu.cfs_period_us"
      echo "$quota" >"$dir/cpu.cfs_quota_us"
    fi
    [ -n "$burst" ] && echo "$burst" >"$dir/cpu.cfs_burst_us"
  fi
  groups+=("$dir")
  echo "$dir"
}

# start_in CGROUP CPUS COMM NICE COMMAND...: one process, named COMM, in CGROUP, on CPUS, at NICE.
start_in() {
  local g=$1 cpus=$2 comm=$3 nice=$4
  shift 4
  taskset -c "$cpus" nice -n "$nice" bash -c 'echo $$ > "$1/cgroup.procs"; printf %s "$2" > /proc/$$/comm; shift 2; exec "$@"' \
    _ "$g" "$comm" "$@" &
  pids+=($!)
}

cat >"$work/load.py" <<'EOF'
"""The shapes' processes that are more than a busy loop."""
import os, socket, sys, time

role = sys.argv[1]
open("/proc/self/comm", "w").write(sys.argv[2])

def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass

if role == "burn":
    while True:
        pass
elif role == "periodic":
    # work_ms of CPU every period_ms, on a fixed grid.
    work, period = float(sys.argv[3]) / 1e3, float(sys.argv[4]) / 1e3
    nxt = time.monotonic()
    while True:
        spin(work)
        nxt += period
        time.sleep(max(0.0, nxt - time.monotonic()))
elif role == "ring":
    # A token passed round a ring of processes through pipes, each hop doing a little work (hackbench-like).
    n, work = int(sys.argv[3]), float(sys.argv[4]) / 1e6
    pipes = [os.pipe() for _ in range(n)]
    me = 0
    for i in range(1, n):
        if os.fork() == 0:
            me = i
            open("/proc/self/comm", "w").write(f"{sys.argv[2]}{i}")
            break
    r, w = pipes[me][0], pipes[(me + 1) % n][1]
    if me == 0:
        os.write(w, b"t")
    while True:
        os.read(r, 1)
        spin(work)
        os.write(w, b"t")
elif role == "udp-echo":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", int(sys.argv[3])))
    while True:
        data, addr = s.recvfrom(2048)
        s.sendto(data, addr)
elif role == "udp-client":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    while True:
        s.sendto(b"x" * 32, ("127.0.0.1", int(sys.argv[3])))
        try:
            s.recvfrom(2048)
        except socket.timeout:
            pass
        time.sleep(0.002)
elif role == "burst":
    # busy_ms of work, then idle_ms asleep, over and over.
    busy, idle = float(sys.argv[3]) / 1e3, float(sys.argv[4]) / 1e3
    while True:
        spin(busy)
        time.sleep(idle)
EOF

py() { echo python3 "$work/load.py" "$@"; }

# record NAME CPUS MAPPING_DOMAINS_JSON DESCRIPTION: traces the running load and writes the shape's files.
record() {
  local name=$1 cpus=$2 domains=$3 what=$4 dir="$out/$1" cmd
  mkdir -p "$dir"
  sleep 0.5
  # The load runs on its own CPUs: catch whatever started meanwhile, and keep perf itself off them.
  if [ -f "$saved_affinity" ]; then
    isolate_pass "$(seq 0 $(($(getconf _NPROCESSORS_ONLN) - 1)) | grep -vx "$cpu" | paste -sd, -)"
    taskset -p -c "$(seq 0 $(($(getconf _NPROCESSORS_ONLN) - 1)) | grep -vx "$cpu" | paste -sd, -)" $$ >/dev/null
  fi
  cmd=(perf sched record -o "$work/$name.data" -- sleep "$dur")
  "${cmd[@]}" 2>"$work/$name.log"
  perf script --ns -i "$work/$name.data" -F comm,pid,tid,cpu,time,event,trace 2>/dev/null | gzip -9 -n >"$dir/trace.txt.gz"
  local size
  size=$(stat -c %s "$dir/trace.txt.gz")
  if [ "$size" -gt "$max_bytes" ]; then
    echo "record-validation: $name's trace is $size bytes, over the $max_bytes limit; record it shorter" >&2
    exit 1
  fi
  printf '{\n  "domains": %s,\n  "rest": "drop",\n  "cpus": [%s]\n}\n' "$domains" "$cpus" >"$dir/mapping.json"
  {
    echo "shape: $what"
    echo "command: ${cmd[*]}"
    echo "script: perf script --ns -F comm,pid,tid,cpu,time,event,trace | gzip -9 -n"
    echo "perf: $(perf --version)"
    echo "kernel: $(uname -r)"
    echo "cpus: $(getconf _NPROCESSORS_ONLN); load on CPU(s) $cpus$([ -f "$saved_affinity" ] && echo ', every other process moved off them')"
    echo "cgroups: $(v2 && echo v2 || echo v1)"
    if [ -r /proc/config.gz ]; then
      echo "config: $(zcat /proc/config.gz | grep -E '^CONFIG_(HZ|PREEMPT[A-Z_]*|NO_HZ[A-Z_]*|FAIR_GROUP_SCHED|CFS_BANDWIDTH|SCHED_AUTOGROUP)=' | paste -sd' ' -)"
    fi
    for f in base_slice_ns features preempt migration_cost_ns tunable_scaling; do
      if v=$(cat "/sys/kernel/debug/sched/$f" 2>/dev/null); then echo "debugfs $f: $v"; else echo "debugfs $f: not readable here"; fi
    done
    echo "sched_autogroup_enabled: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo '?')"
  } >"$dir/record.txt"
  echo "record-validation: $name: $(stat -c %s "$dir/trace.txt.gz") bytes" >&2
}

pid_of() { pgrep -x "$1" | head -1; }
pids_of() { pgrep "^$1" | paste -sd, -; }
wanted() { [ ${#only[@]} -eq 0 ] || printf '%s\n' "${only[@]}" | grep -qx "$1"; }
# Mapping weight = cpu.shares x 256 / 1024 (Xen's default weight 256 for Linux's default 1024).
dom() { # name weight pids [extra json]
  printf '{ "name": "%s", "weight": %s, "pids": [%s]%s }' "$1" "$2" "$3" "${4:+, $4}"
}

cpu=1
if wanted w13; then
  isolate_cpu $cpu
  a=$(make_group sl-lo 1024); b=$(make_group sl-hi 3072)
  start_in "$a" $cpu burn-lo 0 $(py burn burn-lo); start_in "$b" $cpu burn-hi 0 $(py burn burn-hi)
  sleep 1
  record w13 $cpu "[$(dom lo 256 "$(pid_of burn-lo)"), $(dom hi 768 "$(pid_of burn-hi)")]" \
    "two busy loops at cgroup weights 1:3 on one CPU"
  stop_load; restore_affinity
fi
if wanted w112; then
  isolate_cpu $cpu
  a=$(make_group sl-a 1024); b=$(make_group sl-b 1024); c=$(make_group sl-c 2048)
  start_in "$a" $cpu burn-a 0 $(py burn burn-a); start_in "$b" $cpu burn-b 0 $(py burn burn-b)
  start_in "$c" $cpu burn-c 0 $(py burn burn-c)
  sleep 1
  record w112 $cpu "[$(dom a 256 "$(pid_of burn-a)"), $(dom b 256 "$(pid_of burn-b)"), $(dom c 512 "$(pid_of burn-c)")]" \
    "three busy loops at cgroup weights 1:1:2 on one CPU"
  stop_load; restore_affinity
fi
if wanted spread; then
  a=$(make_group sl-a 1024); b=$(make_group sl-b 1024); c=$(make_group sl-c 2048)
  start_in "$a" 0,1 burn-a 0 $(py burn burn-a); start_in "$b" 0,1 burn-b 0 $(py burn burn-b)
  start_in "$c" 0,1 burn-c 0 $(py burn burn-c)
  sleep 1
  record spread 0,1 "[$(dom a 256 "$(pid_of burn-a)"), $(dom b 256 "$(pid_of burn-b)"), $(dom c 512 "$(pid_of burn-c)")]" \
    "three busy loops at cgroup weights 1:1:2 free to run on two CPUs (balancing moves them)"
  stop_load
fi
if wanted quota30; then
  isolate_cpu $cpu
  a=$(make_group sl-capped 1024 30000 100000); b=$(make_group sl-free 1024)
  start_in "$a" $cpu burn-cap 0 $(py burn burn-cap); start_in "$b" $cpu burn-free 0 $(py burn burn-free)
  sleep 1
  record quota30 $cpu "[$(dom capped 256 "$(pid_of burn-cap)" '"cpu_max_us": [30000, 100000]'), $(dom free 256 "$(pid_of burn-free)")]" \
    "a busy loop in a group under a 30% quota (cpu.max 30000 100000) beside a busy loop of equal weight, one CPU"
  stop_load; restore_affinity
fi
if wanted sleeper; then
  isolate_cpu $cpu
  a=$(make_group sl-tick 1024); b=$(make_group sl-b1 1024); c=$(make_group sl-b2 1024)
  start_in "$a" $cpu tick 0 $(py periodic tick 1 10)
  start_in "$b" $cpu burn-1 0 $(py burn burn-1); start_in "$c" $cpu burn-2 0 $(py burn burn-2)
  sleep 1
  record sleeper $cpu "[$(dom tick 256 "$(pid_of tick)"), $(dom b1 256 "$(pid_of burn-1)"), $(dom b2 256 "$(pid_of burn-2)")]" \
    "a periodic sleeper (1 ms of work every 10 ms) beside two busy loops, each its own group, one CPU"
  stop_load; restore_affinity
fi
if wanted pipe; then
  isolate_cpu $cpu
  a=$(make_group sl-ring 1024); b=$(make_group sl-b 1024)
  start_in "$a" $cpu ring 0 $(py ring ring 4 500)
  start_in "$b" $cpu burn 0 $(py burn burn)
  sleep 0.3
  sleep 1
  record pipe $cpu "[$(dom ring 256 "$(pids_of ring)"), $(dom b 256 "$(pid_of burn)")]" \
    "a ring of four processes passing a token through pipes (500 us of work a hop) beside a busy loop, one CPU"
  stop_load; restore_affinity
fi
if wanted udp; then
  isolate_cpu $cpu
  a=$(make_group sl-echo 1024); b=$(make_group sl-b 1024)
  port=$((20000 + RANDOM % 20000))
  start_in "$a" $cpu udp-echo 0 $(py udp-echo udp-echo $port); sleep 0.3
  start_in "$a" $cpu udp-client 0 $(py udp-client udp-client $port)
  start_in "$b" $cpu burn 0 $(py burn burn)
  sleep 1
  record udp $cpu "[$(dom echo 256 "$(pid_of udp-echo),$(pid_of udp-client)"), $(dom b 256 "$(pid_of burn)")]" \
    "a UDP echo server and its client (one 32-byte datagram every 2 ms) beside a busy loop, one CPU"
  stop_load; restore_affinity
fi
if wanted nice; then
  isolate_cpu $cpu
  a=$(make_group sl-nice 1024)
  start_in "$a" $cpu nice0 0 $(py burn nice0); start_in "$a" $cpu nice5 5 $(py burn nice5)
  sleep 1
  record nice $cpu "[$(dom n0 256 "$(pid_of nice0)" '"nice": 0, "cgroup": "nice"'), $(dom n5 256 "$(pid_of nice5)" '"nice": 5, "cgroup": "nice"')]" \
    "two busy loops at nice 0 and nice 5 in one group, one CPU"
  stop_load; restore_affinity
fi
if wanted burst; then
  isolate_cpu $cpu
  a=$(make_group sl-burst 1024 20000 100000 20000); b=$(make_group sl-b 1024)
  start_in "$a" $cpu bursty 0 $(py burst bursty 40 160)
  start_in "$b" $cpu burn 0 $(py burn burn)
  sleep 1
  record burst $cpu "[$(dom bursty 256 "$(pid_of bursty)" '"cpu_max_us": [20000, 100000], "cpu_max_burst_us": 20000'), $(dom b 256 "$(pid_of burn)")]" \
    "40 ms of work every 200 ms under cpu.max 20000 100000 with a 20 ms burst, beside a busy loop, one CPU"
  stop_load; restore_affinity
fi
ls -la "$out" >&2
