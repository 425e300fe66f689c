//! Cross-field checks a schema cannot express: totals against the limits, names that must resolve, work too
//! small to model, and each policy and change by its scheduler's rules.

use super::*;

impl Scenario {
    /// Cross-field checks that JSON Schema cannot express.
    pub(super) fn check(&self, rules: &dyn SchedulerRules) -> Result<(), ScenarioError> {
        let mut p = Vec::new();
        if self.warmup_ms >= self.duration_ms {
            p.push(format!("warmup_ms: {} must be less than duration_ms ({})", self.warmup_ms, self.duration_ms));
        }
        let tpc = self.host.threads_per_core.max(1);
        if !self.host.pcpus.is_multiple_of(tpc) {
            p.push(format!(
                "host.threads_per_core: {tpc} does not divide host.pcpus ({}): every core has the same threads",
                self.host.pcpus
            ));
        }
        if let Some(cps) = self.host.cores_per_socket {
            let cores = self.host.pcpus / tpc;
            if cps == 0 || !cores.is_multiple_of(cps) {
                p.push(format!(
                    "host.cores_per_socket: {cps} does not divide the host's {cores} core(s) (pcpus / threads_per_core)"
                ));
            }
        }
        let total_vcpus: u32 = self.domains.iter().map(|d| d.vcpus).sum();
        if total_vcpus > MAX_TOTAL_VCPUS {
            p.push(format!("domains: {total_vcpus} vCPUs in all, more than the limit of {MAX_TOTAL_VCPUS}"));
        }
        let total_tasks: usize =
            self.domains.iter().flat_map(|d| d.tasks.iter().map(|t| t.workload.kind().threads())).sum();
        if total_tasks > MAX_TOTAL_TASKS {
            p.push(format!("domains: {total_tasks} tasks in all, more than the limit of {MAX_TOTAL_TASKS}"));
        }
        let mut clients = 0u64;
        let find = |path: &str| self.find_task(path).map(|(_, t)| &t.workload);
        let drivers: Vec<&str> =
            self.domains.iter().filter(|d| d.role == Role::Driver).map(|d| d.name.as_str()).collect();
        for (i, d) in self.domains.iter().enumerate() {
            if self.domains[..i].iter().any(|o| o.name == d.name) {
                p.push(format!("domains[{i}].name: '{}' is used by another domain", d.name));
            }
            if d.costs.is_some() && self.sensitivity.is_none() {
                p.push(format!(
                    "domains[{i}].costs: costs come from the host cost profile; overriding them makes the scenario a \
                     sensitivity study, which must say so in a top-level \"sensitivity\""
                ));
            }
            if d.backends != Backends::One && d.role != Role::Driver {
                p.push(format!("domains[{i}].backends: only a domain with role \"driver\" has backend threads"));
            }
            if let Some(drv) = &d.driver {
                if !drivers.contains(&drv.as_str()) {
                    p.push(format!("domains[{i}].driver: '{drv}' is not a domain with role \"driver\""));
                }
            }
            for (j, t) in d.tasks.iter().enumerate() {
                let at = format!("domains[{i}].tasks[{j}]");
                if d.tasks[..j].iter().any(|o| o.name == t.name) {
                    p.push(format!("{at}.name: '{}' is used by another task of '{}'", t.name, d.name));
                }
                if d.guest.balloon && (t.name == "balloon" || t.name.starts_with("balloon.")) {
                    p.push(format!("{at}.name: '{}' is the name of the guest's CPU balloon (guest.balloon)", t.name));
                }
                if let Some(v) = t.vcpu {
                    if v >= d.vcpus {
                        p.push(format!("{at}.vcpu: {v} but '{}' has {} vCPU(s)", d.name, d.vcpus));
                    }
                }
                let kind = t.workload.kind();
                let needs_driver = kind.needs_driver();
                // A driver domain owns the disk, so its own block I/O goes to the disk directly; its network
                // workloads would need a bridge to itself, which the model does not have.
                if needs_driver && d.role == Role::Driver && !kind.own_disk() {
                    p.push(format!(
                        "{at}.workload: a driver domain's own tasks can do disk I/O (disk_reader, io_loop with io \"disk\") but no network I/O"
                    ));
                } else if needs_driver && drivers.is_empty() {
                    p.push(format!(
                        "{at}.workload: this workload does I/O and needs a driver domain (a domain with \"role\": \"driver\")"
                    ));
                }
                clients += kind.clients();
                let path = format!("{}/{}", d.name, t.name);
                kind.validate(&CheckCx { at: &at, path: &path, pinned: t.vcpu.is_some(), find: &find }, &mut p);
                // Work shorter than a microsecond is below what a switch costs, so the model says nothing about it
                // and it would only flood the event queue; 0 means none.
                if let Some(us) = kind.cpu_us().filter(|&us| us > 0.0 && us < MIN_WORK_US) {
                    p.push(format!(
                        "{at}.workload.cpu_us: {us} is below the floor of {MIN_WORK_US} us (0 for none, or at least {MIN_WORK_US})"
                    ));
                }
                if let Some(port) = kind.port() {
                    if d.tasks[..j].iter().any(|o| o.workload.kind().port() == Some(port)) {
                        p.push(format!("{at}.workload.port: {port} is already served in '{}'", d.name));
                    }
                }
            }
        }
        // Links between tasks, once every task's own spec is checked.
        for (i, d) in self.domains.iter().enumerate() {
            for (j, t) in d.tasks.iter().enumerate() {
                let (at, path) = (format!("domains[{i}].tasks[{j}]"), format!("{}/{}", d.name, t.name));
                let cx = CheckCx { at: &at, path: &path, pinned: t.vcpu.is_some(), find: &find };
                t.workload.kind().validate_links(&cx, &mut p);
            }
        }
        if clients > MAX_TOTAL_CLIENTS {
            p.push(format!("domains: {clients} clients in all, more than the limit of {MAX_TOTAL_CLIENTS}"));
        }
        for (i, pol) in self.policies.iter().enumerate() {
            if self.policies[..i].iter().any(|o| o.id == pol.id) {
                p.push(format!("policies[{i}].id: '{}' is used by another policy", pol.id));
            }
            rules.check_policy(self, i, &mut p);
        }
        let policy_ids: Vec<&str> = self.policies.iter().map(|p| p.id.as_str()).collect();
        for (i, c) in self.changes.iter().enumerate() {
            match self.policies.iter().find(|p| p.id == c.policy) {
                None => p.push(format!("changes[{i}].policy: no policy with id '{}'", c.policy)),
                Some(_) => rules.check_change(self, i, &mut p),
            }
            if c.at_ms >= self.duration_ms {
                p.push(format!("changes[{i}].at_ms: {} is not before duration_ms ({})", c.at_ms, self.duration_ms));
            }
        }
        for (i, v) in self.variants.iter().enumerate() {
            if self.variants[..i].iter().any(|o| o.label == v.label) {
                p.push(format!("variants[{i}].label: '{}' is used by another variant", v.label));
            }
        }
        for (i, c) in self.claims.iter().enumerate() {
            if let Some(problem) = self.metric_names_missing(&c.metric) {
                p.push(format!("claims[{i}].metric: {problem}"));
            }
            for (field, val) in [("lower", &c.lower), ("higher", &c.higher), ("than", &c.than), ("policy", &c.policy)] {
                if let Some(id) = val {
                    if !policy_ids.contains(&id.as_str()) {
                        p.push(format!("claims[{i}].{field}: no policy with id '{id}'"));
                    }
                }
            }
            if c.not_reproduced() && (c.paper.is_none() || c.reason.is_none()) {
                p.push(format!(
                    "claims[{i}].status: a not_reproduced claim states the paper's value (paper) and why (reason)"
                ));
            }
        }
        if p.is_empty() {
            Ok(())
        } else {
            Err(ScenarioError { problems: p })
        }
    }
    /// Why a claim's metric path cannot match anything in a report of this scenario: it names a domain, task or
    /// job the scenario does not have (a wildcard matches whatever there is). `None` when it may match.
    pub(super) fn metric_names_missing(&self, metric: &str) -> Option<String> {
        let mut parts = metric.splitn(3, '.');
        let (kind, key) = (parts.next()?, parts.next()?);
        if key.contains('*') {
            return None;
        }
        match kind {
            "domains" if !self.domains.iter().any(|d| d.name == key) => {
                Some(format!("'{metric}' names no domain of this scenario ('{key}')"))
            }
            "tasks" | "jobs" => {
                let (dom, task) = key.split_once('/')?;
                let d = self.domains.iter().find(|d| d.name == dom);
                // The balloon task (guest.balloon) is added by the engine, so it is in reports though not in the file.
                let known = d.is_some_and(|d| {
                    d.tasks.iter().any(|t| t.name == task) || (d.guest.balloon && task.starts_with("balloon"))
                });
                (!known).then(|| format!("'{metric}' names no task of this scenario ('{key}')"))
            }
            _ => None,
        }
    }
}
