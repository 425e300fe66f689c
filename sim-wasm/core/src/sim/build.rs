//! Building the host from a scenario: vCPUs, guest tasks (one per task spec; a barrier job gets one thread per
//! vCPU; a driver domain gets its backend), the machines outside (clients, stream receivers, bulk peers), and the
//! disk. Every random stream is named after what it drives, so it is independent of scheduling.

use super::guest::guest_slice;
use super::*;
use crate::costs::HostCosts;
use crate::scenario::{Backends, RtTag, TaskSpec};
use crate::workload::{Builder, DomKinds, PeerCx};

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

/// Whether domain `d` is the driver domain carrying guest `g`'s I/O: the one `g` names, or the first.
fn serves(sc: &Scenario, d: usize, g: usize) -> bool {
    let (drv, guest) = (&sc.domains[d], &sc.domains[g]);
    drv.role == Role::Driver
        && guest.role == Role::Guest
        && guest
            .driver
            .as_deref()
            .map_or_else(|| sc.domains.iter().position(|x| x.role == Role::Driver) == Some(d), |n| n == drv.name)
}

pub(super) fn build(sc: &Scenario, costs: &HostCosts) -> Built {
    let mut vcpus = Vec::new();
    let mut dom_info = Vec::new();
    let mut tasks: Vec<Task> = Vec::new();
    let mut groups = Vec::new();
    let mut kinds = Vec::new();
    // The backend thread of its own of each domain whose driver domain has one per domain served.
    let mut backend_of: Vec<Option<TaskId>> = vec![None; sc.domains.len()];
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
                last_pcpu: None,
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
            backend_for: Vec::new(),
        });
        let mut k_dom = DomKinds::default();
        let add = |tasks: &mut Vec<Task>, vcpus: &mut Vec<Vcpu>, k: usize, task: Task| -> TaskId {
            let id = TaskId(tasks.len());
            vcpus[first + k].tasks.push(id);
            tasks.push(Task { vcpu: VcpuId(first + k), ..task });
            id
        };
        if dom.role == Role::Driver {
            // The backend (netback/blkback, or vhost) is a kernel thread: one on the first vCPU, or one per
            // domain served, dealt out over the vCPUs.
            // The host cost profile, unless a labelled sensitivity study overrides this driver domain's costs.
            let (packet_ns, block_ns) = match &dom.costs {
                Some(c) => (us_to_ns(c.packet_us), us_to_ns(c.block_us)),
                None => (costs.net_backend_pkt_ns, costs.blk_backend_req_ns),
            };
            let pr = dom.backend_priority.unwrap_or(Priority::Rt(RtTag::Rt));
            let work =
                || Work::Driver { packet_ns, block_ns, queue: VecDeque::new(), batch: Vec::new(), tail_ns: None };
            match dom.backends {
                Backends::One => {
                    let t = new_task(d, VcpuId(first), "backend".into(), pr, work());
                    add(&mut tasks, &mut vcpus, 0, t);
                }
                Backends::PerDomain => {
                    let served: Vec<usize> = (0..sc.domains.len()).filter(|&g| serves(sc, d, g)).collect();
                    let mut carries: Vec<Vec<usize>> = vec![Vec::new(); dom.vcpus as usize];
                    for (k, &g) in served.iter().enumerate() {
                        let at = k % dom.vcpus as usize;
                        let name = format!("backend.{}", sc.domains[g].name);
                        let t = add(&mut tasks, &mut vcpus, at, new_task(d, VcpuId(first), name, pr, work()));
                        backend_of[g] = Some(t);
                        carries[at].push(g);
                    }
                    let info = dom_info.last_mut().expect("pushed above");
                    info.backend_for =
                        carries.iter().map(|c| if let [g] = c[..] { Some(DomId(g)) } else { None }).collect();
                }
            }
        }
        for (j, spec) in dom.tasks.iter().enumerate() {
            let pr = spec.priority.unwrap_or(Priority::Nice(0));
            let kind = spec.workload.kind();
            kind.metrics(&mut k_dom);
            let own_block_ns = match (&dom.costs, dom.role) {
                (_, Role::Guest) => 0,
                (Some(c), Role::Driver) => us_to_ns(c.block_us),
                (None, Role::Driver) => costs.blk_backend_req_ns,
            };
            let next_id = tasks.len();
            let mut add_task = |k: usize, name: String, work: Work| {
                add(&mut tasks, &mut vcpus, k, new_task(d, VcpuId(first), name, pr, work))
            };
            let mut b = Builder {
                name: &spec.name,
                key: format!("{}/{}", dom.name, spec.name),
                vcpu: spec.vcpu,
                index: j,
                vcpus: dom.vcpus,
                own_block_ns,
                next_id,
                groups: &mut groups,
                add: &mut add_task,
            };
            if let Some(id) = kind.build(&mut b) {
                from_spec.push((id, d, spec));
            }
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

    let driver_of = |(g, dom): (usize, &crate::scenario::Domain)| -> Option<TaskId> {
        let name = dom.driver.as_deref();
        let d = sc.domains.iter().position(|x| x.role == Role::Driver && name.is_none_or(|n| n == x.name))?;
        backend_of[g].or_else(|| {
            tasks.iter().position(|t| t.dom == DomId(d) && matches!(t.work, Work::Driver { .. })).map(TaskId)
        })
    };
    let driver_task_of: Vec<Option<TaskId>> = sc.domains.iter().enumerate().map(driver_of).collect();

    let mut peers = Vec::new();
    let resolve = |next: &str| {
        let (nd, nspec) = sc.find_task(next).expect("validated tier next");
        from_spec.iter().find(|(_, dd, sp)| *dd == nd && sp.name == nspec.name).map(|x| x.0)
    };
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
        let mut cx = PeerCx { peers: &mut peers, tasks: &mut tasks, client: &client, resolve: &resolve };
        spec.workload.kind().peers(id, &mut cx);
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
