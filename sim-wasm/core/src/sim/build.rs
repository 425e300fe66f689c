//! Building the host from a scenario: vCPUs, guest tasks (one per task spec; a barrier job gets one thread per
//! vCPU; a driver domain gets its backend), the machines outside (clients, stream receivers, bulk peers), and the
//! disk. Every random stream is named after what it drives, so it is independent of scheduling.

use super::guest::guest_slice;
use super::*;
use crate::costs::HostCosts;
use crate::scenario::{DiskOp, Domain, PipeSpec, RtTag, TaskSpec};

/// Which report metrics apply to a domain, from the workloads it runs.
#[derive(Debug, Clone, Default)]
pub struct DomKinds {
    pub server: bool,
    pub io_loop: bool,
    pub disk_reader: bool,
    pub bulk: bool,
    pub stream: bool,
    pub pipe: bool,
}

pub(super) struct Built {
    pub vcpus: Vec<Vcpu>,
    pub dom_info: Vec<DomainInfo>,
    pub tasks: Vec<Task>,
    pub peers: Vec<Peer>,
    pub groups: Vec<BarrierGroup>,
    pub kinds: Vec<DomKinds>,
    pub driver_task_of: Vec<Option<TaskId>>,
    pub disk: Disk,
}

fn new_task(dom: usize, vcpu: VcpuId, name: String, priority: Priority, work: Work) -> Task {
    Task {
        dom: DomId(dom),
        vcpu,
        name,
        priority,
        state: TState::Blocked,
        burst_left: Some(0),
        slice_left: guest_slice(priority),
        sleep_avg: 0,
        expired: false,
        blocked_since: Nanos::ZERO,
        vruntime: 0,
        last_event: None,
        work,
    }
}

/// The task's work. `own_block_ns` is the block-layer CPU per request a task of this domain pays itself (the
/// driver domain's block backend cost, 0 in a guest).
fn work_of(t: &TaskSpec, kinds: &mut DomKinds, own_block_ns: u64) -> Work {
    match &t.workload {
        Workload::Cpu => Work::Cpu,
        Workload::Server(s) => {
            kinds.server = true;
            Work::Server {
                cpu_ns: us_to_ns(s.cpu_us),
                response_bytes: s.response_bytes,
                tcp: s.proto == "tcp",
                queue: VecDeque::new(),
                port: s.port,
                disk: s.disk.as_ref().map(|k| ServerDisk {
                    reads: k.reads,
                    writes: k.writes,
                    bytes: k.block_kb * 1024,
                    done: 0,
                    waiting: false,
                }),
            }
        }
        Workload::Interactive(s) => {
            kinds.server = true;
            Work::Server {
                cpu_ns: us_to_ns(s.cpu_us),
                response_bytes: 64,
                tcp: false,
                queue: VecDeque::new(),
                port: 0,
                disk: None,
            }
        }
        Workload::Tier(s) => {
            kinds.server = true;
            Work::Tier {
                cpu_ns: us_to_ns(s.cpu_us),
                next: None, // resolved once every task exists
                queue: VecDeque::new(),
                waiting: None,
                answered: false,
                port: s.port,
                response_bytes: s.response_bytes,
                request_bytes: s.request_bytes,
            }
        }
        Workload::IoLoop(s) => {
            kinds.io_loop = true;
            Work::IoLoop {
                disk: s.io == "disk",
                write: false,
                cpu_ns: us_to_ns(s.cpu_us),
                own_block_ns,
                bytes: s.block_kb * 1024,
                computing: true,
                issued_at: Nanos::ZERO,
                port: s.port.unwrap_or(0),
                peer: None,
            }
        }
        Workload::DiskReader(s) => {
            kinds.disk_reader = true;
            Work::IoLoop {
                disk: true,
                write: s.op == DiskOp::Write,
                cpu_ns: us_to_ns(s.cpu_us),
                own_block_ns,
                bytes: s.block_kb * 1024,
                computing: true,
                issued_at: Nanos::ZERO,
                port: 0,
                peer: None,
            }
        }
        Workload::NetBulk(s) => {
            kinds.bulk = true;
            let window = (s.window_kb * 1024).div_ceil(MSS).max(1);
            if s.direction == "rx" {
                Work::BulkRx {
                    cpu_ns: us_to_ns(s.cpu_us),
                    queue: VecDeque::new(),
                    unacked: 0,
                    window: s.flow_control.then_some(window),
                    advertised: window,
                    tcp: TcpReceiver::default(),
                    delack: Timer::default(),
                }
            } else {
                Work::BulkTx { cpu_ns: us_to_ns(s.cpu_us), peer: PeerId(0), window, sent: 0, acked: 0 }
            }
        }
        Workload::StreamServer(s) => {
            kinds.stream = true;
            Work::Stream {
                cpu_ns: us_to_ns(s.cpu_us),
                interval_ns: ms_to_ns(s.interval_ms).max(1),
                clients: Vec::new(),
                bps: u64::from(s.kbps) * 1000,
                owed: Vec::new(),
                last_send: Nanos::ZERO,
                to_send: VecDeque::new(),
            }
        }
        Workload::Barrier(_) | Workload::Pipe(_) => unreachable!("barrier jobs and pipe rings are built per thread"),
    }
}

/// A pipe spec's rings: thread `k` runs on vCPU `k mod vcpus` (or the pinned one) and hands its messages to the
/// next thread of its ring; the ring's messages start evenly spaced around it. The threads get consecutive task
/// ids from `base`; `add(vcpu index, name, work)` creates each.
fn build_pipe(s: &PipeSpec, spec: &TaskSpec, dom: &Domain, base: usize, mut add: impl FnMut(usize, String, Work)) {
    let (n, g, m) = (s.threads as usize, s.group as usize, s.messages as usize);
    for k in 0..n {
        let (ring, pos) = (k / g, k % g);
        let next = TaskId(base + ring * g + (pos + 1) % g);
        let holds = (0..m).any(|i| i * g / m == pos);
        let work = Work::Pipe { next, cpu_ns: us_to_ns(s.cpu_us).max(1), inbox: u32::from(holds) };
        let vcpu = spec.vcpu.map_or(k % dom.vcpus as usize, |v| v as usize);
        add(vcpu, format!("{}.{k}", spec.name), work);
    }
}

pub(super) fn build(sc: &Scenario, costs: &HostCosts) -> Built {
    let mut vcpus = Vec::new();
    let mut dom_info = Vec::new();
    let mut tasks: Vec<Task> = Vec::new();
    let mut groups = Vec::new();
    let mut kinds = Vec::new();
    // (task id, domain index, spec) of every task built from a spec, to wire up peers afterwards.
    let mut from_spec: Vec<(TaskId, usize, &TaskSpec)> = Vec::new();

    for (d, dom) in sc.domains.iter().enumerate() {
        let first = vcpus.len();
        for k in 0..dom.vcpus as usize {
            vcpus.push(Vcpu {
                dom: DomId(d),
                index: k,
                name: format!("{}.v{k}", dom.name),
                state: VState::Blocked,
                paused: false,
                on_pcpu: None,
                pending: VecDeque::new(),
                tasks: Vec::new(),
                runnable: Vec::new(),
                current: None,
                exec_start: None,
                guest_timer: Timer::default(),
                blocked_since: Some(Nanos::ZERO),
                descheduled_at: None,
                min_vruntime: 0,
                expired_since: None,
                balloon: None,
                balloon_since: Nanos::ZERO,
                kernel_until: Nanos::ZERO,
                kernel_left: 0,
                last_upcall: None,
            });
        }
        dom_info.push(DomainInfo {
            name: dom.name.clone(),
            weight: dom.weight,
            cap_pct: dom.cap_pct,
            vcpus: (first..vcpus.len()).map(VcpuId).collect(),
            is_driver: dom.role == Role::Driver,
        });
        let mut k_dom = DomKinds::default();
        let add = |tasks: &mut Vec<Task>, vcpus: &mut Vec<Vcpu>, k: usize, task: Task| -> TaskId {
            let id = TaskId(tasks.len());
            vcpus[first + k].tasks.push(id);
            tasks.push(Task { vcpu: VcpuId(first + k), ..task });
            id
        };
        if dom.role == Role::Driver {
            // The backend (netback/blkback) is a kernel thread on the driver domain's first vCPU.
            // The host cost profile, unless a labelled sensitivity study overrides this driver domain's costs.
            let (packet_ns, block_ns) = match &dom.costs {
                Some(c) => (us_to_ns(c.packet_us), us_to_ns(c.block_us)),
                None => (costs.net_backend_pkt_ns, costs.blk_backend_req_ns),
            };
            let work = Work::Driver { packet_ns, block_ns, queue: VecDeque::new(), batch: Vec::new(), tail_ns: None };
            let pr = dom.backend_priority.unwrap_or(Priority::Rt(RtTag::Rt));
            let t = new_task(d, VcpuId(first), "backend".into(), pr, work);
            add(&mut tasks, &mut vcpus, 0, t);
        }
        for (j, spec) in dom.tasks.iter().enumerate() {
            let pr = spec.priority.unwrap_or(Priority::Nice(0));
            if let Workload::Barrier(b) = &spec.workload {
                let g = groups.len();
                let mut members = Vec::new();
                for k in 0..dom.vcpus as usize {
                    let work = Work::Barrier {
                        group: g,
                        member: k,
                        compute_ns: us_to_ns(b.compute_us).max(1),
                        spin: b.sync == "spin",
                        phase: BarrierPhase::Compute,
                    };
                    let t = new_task(d, VcpuId(first), format!("{}.{k}", spec.name), pr, work);
                    members.push(add(&mut tasks, &mut vcpus, k, t));
                }
                groups.push(BarrierGroup {
                    key: format!("{}/{}", dom.name, spec.name),
                    members,
                    arrived: 0,
                    phases: b.phases,
                    phases_done: 0,
                    done_at: None,
                    spin_ns: 0,
                    spin_ns_by_member: vec![0; dom.vcpus as usize],
                });
                continue;
            }
            if let Workload::Pipe(s) = &spec.workload {
                k_dom.pipe = true;
                let base = tasks.len();
                build_pipe(s, spec, dom, base, |k, name, work| {
                    add(&mut tasks, &mut vcpus, k, new_task(d, VcpuId(first), name, pr, work));
                });
                continue;
            }
            let k = spec.vcpu.map_or(j % dom.vcpus as usize, |v| v as usize);
            let own_block_ns = match (&dom.costs, dom.role) {
                (_, Role::Guest) => 0,
                (Some(c), Role::Driver) => us_to_ns(c.block_us),
                (None, Role::Driver) => costs.blk_backend_req_ns,
            };
            let work = work_of(spec, &mut k_dom, own_block_ns);
            let id = add(&mut tasks, &mut vcpus, k, new_task(d, VcpuId(first), spec.name.clone(), pr, work));
            from_spec.push((id, d, spec));
        }
        if dom.guest.balloon && dom.role == Role::Guest {
            // One balloon per vCPU, at the lowest real-time priority: above normal tasks, below RT ones.
            for k in 0..dom.vcpus as usize {
                let name = if dom.vcpus == 1 { "balloon".to_string() } else { format!("balloon.{k}") };
                let work = Work::Balloon { sleeping: false };
                let id =
                    add(&mut tasks, &mut vcpus, k, new_task(d, VcpuId(first), name, Priority::Rt(RtTag::Rt), work));
                vcpus[first + k].balloon = Some(id);
            }
        }
        kinds.push(k_dom);
    }

    let driver_of = |dom: &Domain| -> Option<TaskId> {
        let name = dom.driver.as_deref();
        let d = sc.domains.iter().position(|x| x.role == Role::Driver && name.is_none_or(|n| n == x.name))?;
        tasks.iter().position(|t| t.dom == DomId(d) && matches!(t.work, Work::Driver { .. })).map(TaskId)
    };
    let driver_task_of: Vec<Option<TaskId>> = sc.domains.iter().map(driver_of).collect();

    let mut peers = Vec::new();
    for &(id, d, spec) in &from_spec {
        // A closed-loop client of this task, with its own think-time stream.
        let client = |k: usize, think: [f64; 2], request_bytes: u32, tcp: bool, port: u16| Peer::Client {
            server: id,
            think: (ms_to_ns(think[0]), ms_to_ns(think[1])),
            request_bytes,
            tcp,
            port,
            rng: Box::new(Stream::new(sc.seed, &format!("client/{}/{}/{k}", sc.domains[d].name, spec.name))),
        };
        match &spec.workload {
            Workload::Server(s) => {
                for k in 0..s.clients as usize {
                    peers.push(client(k, s.think_ms, s.request_bytes, s.proto == "tcp", s.port));
                }
            }
            // A keystroke is a few bytes through the driver domain (console/input backend).
            Workload::Interactive(s) => peers.push(client(0, s.think_ms, 8, false, 0)),
            Workload::Tier(s) => {
                for k in 0..s.clients as usize {
                    peers.push(client(k, s.think_ms, s.request_bytes, false, s.port));
                }
                if let Some(next) = &s.next {
                    let (nd, nspec) = sc.find_task(next).expect("validated tier next");
                    let nid = from_spec.iter().find(|(_, dd, sp)| *dd == nd && sp.name == nspec.name).map(|x| x.0);
                    if let Work::Tier { next, .. } = &mut tasks[id.0].work {
                        *next = nid;
                    }
                }
            }
            Workload::IoLoop(s) if s.io == "net" => {
                let p = PeerId(peers.len());
                peers.push(Peer::Echo);
                if let Work::IoLoop { peer, .. } = &mut tasks[id.0].work {
                    *peer = Some(p);
                }
            }
            Workload::NetBulk(s) => {
                let p = PeerId(peers.len());
                if s.direction == "rx" {
                    let window = (s.window_kb * 1024).div_ceil(MSS).max(1);
                    peers.push(Peer::BulkSender {
                        task: id,
                        tcp: Box::new(TcpSender::new(window)),
                        rto: Timer::default(),
                    });
                } else {
                    peers.push(Peer::BulkSink);
                    if let Work::BulkTx { peer, .. } = &mut tasks[id.0].work {
                        *peer = p;
                    }
                }
            }
            Workload::StreamServer(s) => {
                let first = peers.len();
                for _ in 0..s.clients {
                    peers.push(Peer::StreamClient(StreamClient {
                        server: id,
                        bps: u64::from(s.kbps) * 1000,
                        capacity: u64::from(s.buffer_kb) * 1024,
                        level: 0.0,
                        updated: Nanos::ZERO,
                        playing: false,
                        started_at: None,
                        underruns: 0,
                        empty: Timer::default(),
                    }));
                }
                if let Work::Stream { clients, owed, .. } = &mut tasks[id.0].work {
                    *clients = (first..peers.len()).map(PeerId).collect();
                    *owed = vec![0; clients.len()];
                }
            }
            _ => {}
        }
    }

    let disk = Disk {
        busy_until: Nanos::ZERO,
        mean_ns: us_to_ns(sc.host.disk.service_us),
        ns_per_byte: 1000.0 / sc.host.disk.mb_per_s,
        rng: Stream::new(sc.seed, "disk"),
        submitted: 0,
        completed: 0,
    };
    Built { vcpus, dom_info, tasks, peers, groups, kinds, driver_task_of, disk }
}

crate::size::no_heap!(DomKinds);
