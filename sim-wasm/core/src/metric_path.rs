//! Metric paths: dotted keys into a run object (`domains.web.cpu_share`), `*` standing for every key at one level.
//! The one reading of a metric path, for claims, sweep columns and the Python package's metric filters.

use serde_json::Value;

/// Every number a metric pattern matches in a run, as `(path, number)` in the run's key order; numbers are kept as
/// written (an integer stays an integer).
pub fn resolve<'a>(run: &'a Value, pattern: &str) -> Vec<(String, &'a Value)> {
    fn walk<'a>(v: &'a Value, parts: &[&str], prefix: &str, out: &mut Vec<(String, &'a Value)>) {
        let Some((head, rest)) = parts.split_first() else {
            if v.is_number() {
                out.push((prefix.to_string(), v));
            }
            return;
        };
        let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
        match (*head, v) {
            ("*", Value::Object(obj)) => obj.iter().for_each(|(k, child)| walk(child, rest, &join(k), out)),
            (key, _) => {
                if let Some(child) = v.get(key) {
                    walk(child, rest, &join(key), out);
                }
            }
        }
    }
    let parts: Vec<&str> = pattern.split('.').collect();
    let mut out = Vec::new();
    walk(run, &parts, "", &mut out);
    out
}

/// Whether the metric at `path` (dotted, as [`resolve`] names it) is one that `pattern` matches: as many keys, each
/// equal or `*`.
pub fn matches(pattern: &str, path: &str) -> bool {
    let (mut want, mut have) = (pattern.split('.'), path.split('.'));
    loop {
        match (want.next(), have.next()) {
            (None, None) => return true,
            (Some(w), Some(h)) if w == "*" || w == h => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patterns_keep_numbers_as_written() {
        let run = json!({"domains":{"a":{"cpu_share":0.5,"context_switches":7,"busy":true},"b":{"cpu_share":0.25}}});
        let owned = |r: Vec<(String, &Value)>| r.into_iter().map(|(k, v)| (k, v.clone())).collect::<Vec<_>>();
        assert_eq!(
            owned(resolve(&run, "domains.*.cpu_share")),
            vec![("domains.a.cpu_share".into(), json!(0.5)), ("domains.b.cpu_share".into(), json!(0.25))]
        );
        assert_eq!(
            owned(resolve(&run, "domains.a.*")),
            vec![("domains.a.cpu_share".into(), json!(0.5)), ("domains.a.context_switches".into(), json!(7))]
        );
        assert_eq!(resolve(&run, "domains.a.context_switches")[0].1.to_string(), "7");
        assert!(resolve(&run, "domains.c.cpu_share").is_empty());
    }

    /// `matches` agrees with `resolve`: a path is matched exactly when resolving the pattern finds it.
    #[test]
    fn matching_a_path_agrees_with_resolving_the_pattern() {
        let run = json!({"domains":{"a":{"cpu_share":0.5,"x":{"y":1}},"b":{"cpu_share":0.25}},"fairness":{"jain":1}});
        let paths = ["domains.a.cpu_share", "domains.b.cpu_share", "domains.a.x.y", "fairness.jain"];
        for pattern in ["domains.*.cpu_share", "domains.a.*", "*.*.x.y", "fairness.jain", "fairness", "*.*"] {
            let found: Vec<String> = resolve(&run, pattern).into_iter().map(|(p, _)| p).collect();
            for path in paths {
                assert_eq!(matches(pattern, path), found.iter().any(|f| f == path), "{pattern} vs {path}");
            }
        }
    }
}
