//! Which recorded threads are which domain's vCPUs: a [`Survey`] of the trace (one pass over its events), a
//! default [`Mapping`] proposed from it, and the mapping resolved against the survey into the model's domains.
//!
//! CPUs become pCPUs. On Linux, threads become vCPUs grouped into domains by process: a QEMU process's `CPU n/KVM`
//! threads are its vCPUs (its I/O threads are not), any other process with a noticeable share of the CPU is a
//! domain of the threads that ran, and the rest are dropped or gathered into one domain `other`. On Xen, domains
//! and vCPUs map directly. The mapping is a plain serde struct the caller may edit (weights, which processes,
//! single threads by id or name) before the replay.

use super::{Event, Task};
use crate::limits::MAX_PCPUS;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// What one pass over a trace saw of each thread.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Survey {
    /// By thread id.
    pub threads: BTreeMap<u64, ThreadInfo>,
    /// Highest CPU number seen, plus one.
    pub cpus: u32,
    /// Whether the ids are Xen's (`domid << 16 | vcpu`).
    pub xen: bool,
    #[serde(skip)]
    running: Vec<Option<(u64, u64)>>,
    /// Events taken in, and the first that named a CPU past the model's pCPUs: (CPU, event number, time [ns]).
    #[serde(skip)]
    events: u64,
    #[serde(skip)]
    past_pcpus: Option<(u32, u64, u64)>,
}

/// One thread as the survey saw it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ThreadInfo {
    /// Its name as last recorded.
    pub name: String,
    /// Its process (tgid) or Xen domain, when some record said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<u64>,
    /// CPU time between a switch to it and the next switch away [ns].
    pub run_ns: u64,
}

impl Survey {
    pub fn new(xen: bool) -> Survey {
        Survey { xen, ..Survey::default() }
    }

    fn see(&mut self, t: &Task<'_>) {
        if t.idle || (self.threads.len() >= MAX_THREADS && !self.threads.contains_key(&t.id)) {
            return;
        }
        let info = self.threads.entry(t.id).or_default();
        if info.name != t.name {
            info.name = t.name.to_string();
        }
        if t.group.is_some() {
            info.group = t.group;
        }
    }

    fn cpu(&mut self, cpu: u32, t_ns: u64) -> &mut Option<(u64, u64)> {
        let c = cpu as usize;
        if cpu >= MAX_PCPUS && self.past_pcpus.is_none() {
            self.past_pcpus = Some((cpu, self.events, t_ns));
        }
        if c >= self.running.len() {
            self.running.resize(c + 1, None);
        }
        self.cpus = self.cpus.max(cpu + 1);
        &mut self.running[c]
    }

    fn ran(&mut self, cpu: u32, t_ns: u64, next: Option<u64>) {
        if let Some((id, since)) = std::mem::replace(self.cpu(cpu, t_ns), next.map(|n| (n, t_ns))) {
            if let Some(info) = self.threads.get_mut(&id) {
                info.run_ns += t_ns.saturating_sub(since);
            }
        }
    }

    /// Takes in one event.
    pub fn add(&mut self, e: &Event<'_>) {
        self.events += 1;
        match *e {
            Event::Switch { t_ns, cpu, prev, next, .. } => {
                self.see(&prev);
                self.see(&next);
                self.ran(cpu, t_ns, (!next.idle).then_some(next.id));
            }
            Event::Run { t_ns, cpu, task } => {
                self.see(&task);
                self.ran(cpu, t_ns, (!task.idle).then_some(task.id));
            }
            Event::Stop { t_ns, cpu, task, .. } => {
                self.see(&task);
                if self.cpu(cpu, t_ns).is_some_and(|(id, _)| id == task.id) {
                    self.ran(cpu, t_ns, None);
                }
            }
            Event::Wake { t_ns, cpu, task, waker, .. } => {
                self.cpu(cpu, t_ns);
                self.see(&task);
                if let Some(w) = waker {
                    self.see(&w);
                }
            }
            Event::Migrate { t_ns, task, to_cpu } => {
                self.cpu(to_cpu, t_ns);
                self.see(&task);
            }
            Event::Note { t_ns, cpu, task, .. } => {
                self.cpu(cpu, t_ns);
                self.see(&task);
            }
        }
    }

    /// A thread's process: the one recorded, else itself.
    pub fn group_of(&self, id: u64) -> u64 {
        self.threads.get(&id).and_then(|t| t.group).unwrap_or(id)
    }
}

/// Threads no domain of the mapping takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rest {
    /// Left out: the pCPU time they used counts as neither a domain's nor idle.
    #[default]
    Drop,
    /// One domain `other`, a vCPU for each such thread that ran.
    Other,
}

/// The caller's say over which threads are which domain's vCPUs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    /// In order; a thread goes to the first domain that takes it.
    pub domains: Vec<DomainMap>,
    #[serde(default)]
    pub rest: Rest,
    /// Only these CPUs are the host's pCPUs (in this order); all of them when empty. For a load pinned to some
    /// CPUs of a larger machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<u32>,
}

/// One domain: the threads it takes become its vCPUs, ordered by thread id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainMap {
    /// The domain's name in the report (`[A-Za-z0-9_.-]{1,32}`).
    pub name: String,
    /// Its weight, as a scenario's (Linux's cgroup `cpu.shares` x 256 / 1024; `cpu.weight` x 256 / 100).
    #[serde(default = "default_weight")]
    pub weight: u32,
    /// Every thread of these processes (Linux tgid; Xen domain id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pids: Vec<u64>,
    /// These threads (Linux tid; Xen `domid << 16 | vcpu`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tids: Vec<u64>,
    /// Threads by name: exact, or a prefix when it ends in `*`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comms: Vec<String>,
    /// The cgroup's `cpu.max` as [QUOTA, PERIOD] in microseconds (v1 `cpu.cfs_quota_us`, `cpu.cfs_period_us`):
    /// the fitted scenario's `kvm` quota, and a cap of QUOTA / PERIOD of a pCPU under Xen's schedulers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_max_us: Option<[u64; 2]>,
    /// The cgroup's `cpu.max.burst` (v1 `cpu.cfs_burst_us`) [us].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_max_burst_us: Option<u64>,
    /// The nice level its threads ran at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i64>,
    /// The cgroup its threads ran in, where domains shared one ("/" = the root group, where each thread competes
    /// on its own, as processes of different nice levels without cgroups do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
}

fn default_weight() -> u32 {
    256
}

impl Default for DomainMap {
    fn default() -> DomainMap {
        DomainMap {
            name: String::new(),
            weight: default_weight(),
            pids: Vec::new(),
            tids: Vec::new(),
            comms: Vec::new(),
            cpu_max_us: None,
            cpu_max_burst_us: None,
            nice: None,
            cgroup: None,
        }
    }
}

impl DomainMap {
    /// The host settings beyond the weight, as a `kvm` policy's `domains.NAME` entry takes them (its
    /// `cpu_weight` from the weight: 256 = `cpu.weight` 100 = `cpu.shares` 1024).
    pub fn host_settings(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("cpu_weight".into(), ((u64::from(self.weight) * 100 + 128) / 256).clamp(1, 10_000).into());
        if let Some(q) = self.cpu_max_us {
            m.insert("cpu_max_us".into(), serde_json::json!(q));
        }
        if let Some(b) = self.cpu_max_burst_us {
            m.insert("cpu_max_burst_us".into(), b.into());
        }
        if let Some(n) = self.nice {
            m.insert("nice".into(), n.into());
        }
        if let Some(c) = &self.cgroup {
            m.insert("cgroup".into(), c.clone().into());
        }
        serde_json::Value::Object(m)
    }
}

/// Most threads a survey keeps (a trace naming more keeps the first ones; the rest stay outside the model).
pub const MAX_THREADS: usize = 1 << 18;
/// Share of the traced CPU time a process needs to be a domain of the default mapping.
const MIN_SHARE: f64 = 0.01;
/// Most vCPUs in one domain and on the host (the scenario limits).
pub const MAX_DOMAIN_VCPUS: usize = 256;
pub const MAX_VCPUS: usize = 4096;

impl DomainMap {
    fn takes(&self, id: u64, info: &ThreadInfo, group: u64) -> bool {
        self.tids.contains(&id)
            || self.pids.contains(&group)
            || self.comms.iter().any(|c| match c.strip_suffix('*') {
                Some(prefix) => info.name.starts_with(prefix),
                None => info.name == *c,
            })
    }
}

/// A QEMU vCPU thread's index (`CPU 3/KVM` -> 3).
fn qemu_vcpu(name: &str) -> Option<u32> {
    name.strip_prefix("CPU ")?.strip_suffix("/KVM")?.parse().ok()
}

/// A name the scenario format accepts, unique among `taken`.
pub fn domain_name(raw: &str, taken: &[String]) -> String {
    let mut base: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || "_.-".contains(c) { c } else { '_' }).take(24).collect();
    if base.is_empty() {
        base = "dom".to_string();
    }
    let mut name = base.clone();
    let mut k = 2;
    while taken.contains(&name) {
        name = format!("{base}-{k}");
        k += 1;
    }
    name
}

impl Mapping {
    /// The default mapping of a survey (see the module's header).
    pub fn propose(survey: &Survey) -> Mapping {
        let mut domains: Vec<DomainMap> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut by_group: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for &id in survey.threads.keys() {
            by_group.entry(survey.group_of(id)).or_default().push(id);
        }
        let total: u64 = survey.threads.values().map(|t| t.run_ns).sum();
        for (group, ids) in &by_group {
            let run: u64 = ids.iter().map(|id| survey.threads[id].run_ns).sum();
            // Whatever the group is (a process, a QEMU VM, a Xen domain): under 1% of the traced CPU it would be a
            // domain that barely ran, so it is left to `rest`.
            if (run as f64) < MIN_SHARE * total as f64 || run == 0 {
                continue;
            }
            let (label, tids) = if survey.xen {
                (format!("d{group}"), Vec::new())
            } else {
                let qemu: Vec<u64> =
                    ids.iter().copied().filter(|id| qemu_vcpu(&survey.threads[id].name).is_some()).collect();
                let main = survey.threads.get(group).or_else(|| ids.first().map(|id| &survey.threads[id]));
                let label = main.map_or_else(|| format!("p{group}"), |t| t.name.clone());
                if !qemu.is_empty() {
                    (format!("vm-{group}"), qemu)
                } else {
                    (label, Vec::new())
                }
            };
            let name = domain_name(&label, &names);
            names.push(name.clone());
            let pids = if tids.is_empty() { vec![*group] } else { Vec::new() };
            domains.push(DomainMap { name, weight: 256, pids, tids, ..DomainMap::default() });
        }
        Mapping { domains, rest: Rest::Drop, cpus: Vec::new() }
    }

    /// The model the mapping makes of a survey's threads.
    pub fn resolve(&self, survey: &Survey) -> Result<Model, String> {
        let mut m = Model { pcpus: survey.cpus.max(1), ..Model::default() };
        if !self.cpus.is_empty() {
            if self.cpus.len() > MAX_PCPUS as usize {
                return Err(format!("mapping: at most {MAX_PCPUS} cpus"));
            }
            m.pcpu_of = vec![None; survey.cpus.max(1) as usize];
            for (i, &c) in self.cpus.iter().enumerate() {
                match m.pcpu_of.get_mut(c as usize) {
                    Some(slot @ None) => *slot = Some(i as u32),
                    Some(_) => return Err(format!("mapping: cpu {c} is listed twice")),
                    None => return Err(format!("mapping: cpu {c} is not in the trace (it has {})", survey.cpus)),
                }
            }
            m.pcpus = self.cpus.len() as u32;
        } else {
            if let Some((cpu, event, t_ns)) = survey.past_pcpus {
                return Err(format!(
                    "the model runs at most {MAX_PCPUS} pCPUs and the trace names CPU {cpu} (event {event}, at \
                     {}.{:09} s in the trace's clock): list the CPUs to keep in the mapping's `cpus`",
                    t_ns / 1_000_000_000,
                    t_ns % 1_000_000_000
                ));
            }
            m.pcpu_of = (0..survey.cpus.max(1)).map(Some).collect();
        }
        let mut members: Vec<Vec<u64>> = vec![Vec::new(); self.domains.len()];
        let mut other = Vec::new();
        for (&id, info) in &survey.threads {
            let group = survey.group_of(id);
            match self.domains.iter().position(|d| d.takes(id, info, group)) {
                Some(d) => members[d].push(id),
                None if self.rest == Rest::Other && info.run_ns > 0 => other.push(id),
                None => {}
            }
        }
        let mut doms: Vec<(DomainMap, Vec<u64>)> = self.domains.iter().cloned().zip(members).collect();
        if !other.is_empty() {
            let names: Vec<String> = doms.iter().map(|d| d.0.name.clone()).collect();
            doms.push((DomainMap { name: domain_name("other", &names), ..DomainMap::default() }, other));
        }
        for (dm, ids) in doms {
            let (name, weight) = (dm.name.clone(), dm.weight);
            if ids.is_empty() {
                continue;
            }
            if name.is_empty()
                || name.len() > 32
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
            {
                return Err(format!("mapping: domain name {name:?} must match [A-Za-z0-9_.-]{{1,32}}"));
            }
            if ids.len() > MAX_DOMAIN_VCPUS {
                return Err(format!(
                    "mapping: domain {name} has {} threads; a domain has at most {MAX_DOMAIN_VCPUS} vCPUs",
                    ids.len()
                ));
            }
            if !(1..=65535).contains(&weight) {
                return Err(format!("mapping: domain {name}'s weight {weight} is outside 1..=65535"));
            }
            let d = m.domains.len();
            let mut vcpus = Vec::new();
            for id in ids {
                let v = m.vcpus.len();
                m.vcpu_of.insert(id, v);
                let info = &survey.threads[&id];
                m.vcpus.push(VcpuOf { thread: id, name: info.name.clone(), domain: d });
                vcpus.push(v);
            }
            if let Some([quota, period]) = dm.cpu_max_us {
                if quota == 0 || !(1_000..=1_000_000).contains(&period) {
                    return Err(format!(
                        "mapping: domain {name}'s cpu_max_us [{quota}, {period}] needs a quota above 0 and a period \
                         of 1000..=1000000 us"
                    ));
                }
            }
            if dm.nice.is_some_and(|n| !(-20..=19).contains(&n)) {
                return Err(format!("mapping: domain {name}'s nice level must be -20..=19"));
            }
            let settings = dm.host_settings();
            let cap_pct = dm.cpu_max_us.map_or(0, |[q, p]| ((q * 100 + p / 2) / p).clamp(1, 25_600) as u32);
            m.domains.push(DomainOf { name, weight, vcpus, settings, cap_pct });
        }
        if m.vcpus.len() > MAX_VCPUS {
            return Err(format!("mapping: {} vCPUs; the host has at most {MAX_VCPUS}", m.vcpus.len()));
        }
        if m.domains.is_empty() {
            return Err("mapping: no thread of the trace is in any domain".to_string());
        }
        Ok(m)
    }
}

/// The model's host as a mapping made it.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub pcpus: u32,
    /// Trace CPU -> the model's pCPU (None: left out).
    pub pcpu_of: Vec<Option<u32>>,
    pub domains: Vec<DomainOf>,
    /// Global vCPU index order: domain by domain.
    pub vcpus: Vec<VcpuOf>,
    /// Thread id -> global vCPU index.
    pub vcpu_of: HashMap<u64, usize>,
}

#[derive(Debug, Clone)]
pub struct DomainOf {
    pub name: String,
    pub weight: u32,
    /// Global vCPU indices.
    pub vcpus: Vec<usize>,
    /// Its host settings as a `kvm` policy's `domains.NAME` entry ([`DomainMap::host_settings`]).
    pub settings: serde_json::Value,
    /// Its quota as a Xen cap [% of one pCPU]; 0 = none.
    pub cap_pct: u32,
}

#[derive(Debug, Clone)]
pub struct VcpuOf {
    pub thread: u64,
    pub name: String,
    pub domain: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: u64, group: u64, name: &str) -> Task<'_> {
        Task { id, group: Some(group), name, idle: false }
    }

    /// A trace naming more CPUs than the model runs is refused with the first event that named one.
    #[test]
    fn too_many_cpus_name_their_event() {
        let mut s = Survey::new(false);
        let task = |id| Task { id, group: None, name: "t", idle: false };
        for (t_ns, cpu) in [(1_000, 3), (2_500_000_000, 300), (3_000_000_000, 400)] {
            s.add(&Event::Wake { t_ns, cpu, task: task(7), target_cpu: None, waker: None });
        }
        let m = Mapping { domains: vec![], rest: Rest::Other, cpus: vec![] };
        let e = m.resolve(&s).unwrap_err();
        assert!(e.contains("at most 256 pCPUs and the trace names CPU 300 (event 2, at 2.500000000 s"), "{e}");
        // Keeping some of them passes that check (and meets the next: no thread ran).
        let m = Mapping { cpus: vec![3, 300], ..m };
        assert_eq!(m.resolve(&s).unwrap_err(), "mapping: no thread of the trace is in any domain");
    }

    #[test]
    fn qemu_vcpu_threads_and_busy_processes_become_domains() {
        let mut s = Survey::new(false);
        let idle = Task { id: 0, group: None, name: "swapper/0", idle: true };
        let run = |s: &mut Survey, at: u64, task: Task<'_>, ns: u64| {
            s.add(&Event::Switch {
                t_ns: at,
                cpu: 0,
                prev: idle,
                prev_state: super::super::PrevState::Runnable,
                next: task,
            });
            s.add(&Event::Switch {
                t_ns: at + ns,
                cpu: 0,
                prev: task,
                prev_state: super::super::PrevState::Blocked,
                next: idle,
            });
        };
        run(&mut s, 0, t(101, 100, "CPU 0/KVM"), 1000);
        run(&mut s, 2000, t(102, 100, "CPU 1/KVM"), 1000);
        run(&mut s, 4000, t(103, 100, "qemu-io"), 1000);
        run(&mut s, 6000, t(200, 200, "burn"), 100_000);
        run(&mut s, 200_000, t(300, 300, "tiny"), 10);
        let m = Mapping::propose(&s);
        assert_eq!(m.domains.len(), 2, "{m:?}");
        assert_eq!((m.domains[0].name.as_str(), &m.domains[0].tids[..]), ("vm-100", &[101, 102][..]));
        assert_eq!((m.domains[1].name.as_str(), &m.domains[1].pids[..]), ("burn", &[200][..]));
        let model = m.resolve(&s).unwrap();
        assert_eq!(model.vcpus.len(), 3);
        assert_eq!(model.vcpu_of[&200], 2);
        // Edited: everything else in `other`, a name by prefix.
        let edited = Mapping {
            domains: vec![DomainMap {
                name: "q".into(),
                weight: 512,
                pids: vec![],
                tids: vec![],
                comms: vec!["CPU *".into()],
                ..DomainMap::default()
            }],
            rest: Rest::Other,
            cpus: vec![],
        };
        let model = edited.resolve(&s).unwrap();
        assert_eq!(
            model.domains.iter().map(|d| (d.name.as_str(), d.vcpus.len())).collect::<Vec<_>>(),
            vec![("q", 2), ("other", 3)]
        );
        let bad = Mapping {
            domains: vec![DomainMap { name: "a b".into(), ..edited.domains[0].clone() }],
            rest: Rest::Drop,
            cpus: vec![],
        };
        assert!(bad.resolve(&s).unwrap_err().contains("must match"));
        let json = serde_json::to_string(&edited).unwrap();
        assert_eq!(serde_json::from_str::<Mapping>(&json).unwrap(), edited);
    }
}
