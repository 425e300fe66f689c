//! Policy parameters declared once. A scheduler's parameters are one serde struct: its doc comments are the
//! descriptions, `#[schemars(range(min = .., max = ..))]` the ranges, its `Default` the defaults, serde's
//! `deny_unknown_fields` the closed key set. From that declaration come
//!
//! - the scheduler's `$defs` in `scenarios/schema.json` ([`defs`]; a test regenerates them and fails when the
//!   committed file differs, `SCHEDSIM_BLESS=1 cargo test -p schedsim-core schema_defs` rewrites it), which
//!   the scenario loader validates files against and the page's editor builds its form from;
//! - the checks of a file's `params` and of a run-time change ([`from_value`], [`set`], [`change`]): the value is
//!   checked against the part of those `$defs` the parameter's path names (so with the same ranges; the module
//!   reads the committed file, which the test keeps equal to the declaration, so the wasm module carries no schema
//!   generator), then written into the serialized struct, which is deserialized back.
//!
//! A parameter path is dotted: `tavs.pb_ratio` is the key `pb_ratio` of the object `tavs`, and a free map (a
//! per-domain table, a script's `vars`) takes any key: `tavs.domains.web.io_threshold_us`, `vars.slice_ms`.
//! Setting an object replaces it (the keys it leaves out get their defaults).
//!
//! Declaring a scheduler's parameters: derive `Serialize, Deserialize, JsonSchema` with
//! `#[serde(default, deny_unknown_fields)]`, implement `Default` and [`Params`] (its name, its `$defs` name, keys
//! fixed at boot), name it in the scheduler's registry row (`params: params::declared::<T>()`), and bless the
//! schema. A free-form
//! table (a script policy's `vars`) is a map to `serde_json::Value`: any key, any value.

use schemars::{JsonSchema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

/// A scheduler's parameter struct (see the module header).
pub trait Params: Serialize + DeserializeOwned + JsonSchema + Default {
    /// The scheduler's name as errors give it ("unknown credit2 parameter").
    const SCHEDULER: &'static str;
    /// The name of the struct's definition in the scenario schema's `$defs` (`credit2_params`).
    const DEF: &'static str;
    /// A key whose value chooses the defaults the other keys override (Credit's `version`): a file's is read
    /// before its other keys whatever their order, and setting it at run time starts again from its defaults.
    const PRESET: Option<&'static str> = None;

    /// Keys a run-time change may not set (they shape what the policy builds at boot).
    const FIXED: &'static [&'static str] = &[];

    /// The defaults under the preset `value` (checked against the schema already).
    fn preset(_value: &Value) -> Result<Self, String> {
        Ok(Self::default())
    }

    /// Checks that span several fields (each field's own range comes from the declaration), after every change.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }

    /// The schema the checks read: the scenario schema (`scenarios/schema.json`, compiled in), whose `$defs`
    /// [`Params::DEF`] is generated from this declaration and kept equal to it by a test. Reading the committed
    /// file rather than generating the schema at run time keeps the generator out of the wasm module.
    /// A declaration that is not in the scenario schema (a test's) generates it: `crate::params_schema!()`.
    fn schema() -> &'static Value {
        scenario_schema()
    }
}

/// The scenario schema, parsed once.
pub fn scenario_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::from_str(crate::scenario::SCHEMA_JSON).expect("scenarios/schema.json is JSON"))
}

/// Implements [`Params::schema`] with a schema generated once and kept, for a declaration that is not in the
/// scenario schema.
#[macro_export]
macro_rules! params_schema {
    () => {
        fn schema() -> &'static serde_json::Value {
            static SCHEMA: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
            SCHEMA.get_or_init($crate::policy::params::generate::<Self>)
        }
    };
}

/// The JSON schema of `P` as the scenario schema holds it: draft 2020-12, nested types under `$defs`, each
/// schema's keywords in one order (type, range, default, then the description), descriptions on one line (doc
/// comments wrap). Integer and float formats (`uint64`, `double`) are left out: they say nothing the type and
/// range do not, and the validator would only ignore them.
pub fn generate<P: JsonSchema>() -> Value {
    let generator = SchemaGenerator::new(schemars::generate::SchemaSettings::draft2020_12());
    let mut v = generator.into_root_schema_for::<P>().to_value();
    if let Value::Object(m) = &mut v {
        m.remove("$schema");
        m.remove("title");
    }
    tidy(&mut v);
    v
}

/// The order of a schema's keywords; others follow in the order they came.
const KEYWORD_ORDER: [&str; 10] = [
    "$ref",
    "type",
    "additionalProperties",
    "enum",
    "minimum",
    "maximum",
    "default",
    "description",
    "required",
    "properties",
];

/// Tidies one schema and the schemas inside it (see [`generate`]).
fn tidy(v: &mut Value) {
    let Value::Object(m) = v else { return };
    if m.get("format").and_then(Value::as_str).is_some_and(|f| {
        matches!(f, "uint" | "uint8" | "uint16" | "uint32" | "uint64" | "int32" | "int64" | "double" | "float")
    }) {
        m.remove("format");
    }
    if let Some(Value::String(d)) = m.get_mut("description") {
        *d = d.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    for (k, x) in m.iter_mut() {
        match (k.as_str(), x) {
            ("properties" | "$defs", Value::Object(named)) => named.values_mut().for_each(tidy),
            ("items" | "additionalProperties" | "not", x) => tidy(x),
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(a)) => a.iter_mut().for_each(tidy),
            _ => {}
        }
    }
    let mut old = std::mem::take(m);
    for k in KEYWORD_ORDER {
        if let Some(x) = old.shift_remove(k) {
            m.insert(k.to_string(), x);
        }
    }
    m.extend(old);
    // A map's schema for its values (a per-domain table) reads best after the map's own description.
    if m.get("additionalProperties").is_some_and(Value::is_object) {
        let values = m.shift_remove("additionalProperties").expect("present");
        m.insert("additionalProperties".to_string(), values);
    }
}

/// A declaration's [`defs`], as a list of declarations holds it.
pub type DefsOf = fn() -> Vec<(String, Value)>;

/// The `$defs` entries `P` adds to the scenario schema: its own definition under [`Params::DEF`], then the
/// nested types it refers to under their names.
pub fn defs<P: Params>() -> Vec<(String, Value)> {
    let mut root = generate::<P>();
    let nested = root.as_object_mut().and_then(|m| m.remove("$defs"));
    let mut out = vec![(P::DEF.to_string(), root)];
    if let Some(Value::Object(m)) = nested {
        out.extend(m);
    }
    out
}

/// A scheduler's parameter declaration as its registry row holds it (built by [`declared`]).
#[derive(Clone, Copy)]
pub struct Declared {
    /// The `$defs` entry of the scenario schema its `params` are checked against ([`Params::DEF`]).
    pub def: &'static str,
    /// A policy of this scheduler must give `params` (a script's source has no default).
    pub required: bool,
    /// The `$defs` entries the declaration generates; tests only, so the generator stays out of the wasm module.
    #[cfg(test)]
    pub defs: DefsOf,
}

/// The declaration of the parameter struct `P`, for a registry row.
pub const fn declared<P: Params>() -> Declared {
    Declared {
        def: P::DEF,
        required: false,
        #[cfg(test)]
        defs: defs::<P>,
    }
}

impl Declared {
    /// The same declaration, with `params` required in every policy of the scheduler.
    pub const fn required(self) -> Declared {
        Declared { required: true, ..self }
    }
}

/// Reads a file's `params` (null = every default): the preset key first, then every other key in file order.
pub fn from_value<P: Params>(v: &Value) -> Result<P, String> {
    let obj = match v {
        Value::Null => return Ok(P::default()),
        Value::Object(m) => m,
        other => return Err(format!("{} params: expected an object, got {other}", P::SCHEDULER)),
    };
    let mut p = P::default();
    if let Some(key) = P::PRESET {
        if let Some(pv) = obj.get(key) {
            set(&mut p, key, pv)?;
        }
    }
    for (k, val) in obj.iter().filter(|(k, _)| Some(k.as_str()) != P::PRESET) {
        set(&mut p, k, val)?;
    }
    Ok(p)
}

/// A run-time change (scenario `changes`): [`set`], except for the keys fixed at boot and what is inside them.
pub fn change<P: Params>(p: &mut P, param: &str, value: &Value) -> Result<(), String> {
    let top = param.split('.').next().unwrap_or(param);
    if P::FIXED.contains(&top) {
        return Err(format!("{param}: fixed at boot"));
    }
    set(p, param, value)
}

/// Sets one parameter by its dotted path, checked against the declaration; `p` is unchanged on error.
pub fn set<P: Params>(p: &mut P, param: &str, value: &Value) -> Result<(), String> {
    let root = P::schema();
    let start = root.pointer(&format!("/$defs/{}", P::DEF)).unwrap_or(root);
    let path: Vec<&str> = param.split('.').collect();
    let node = locate(root, start, &path, P::SCHEDULER)?;
    check(root, node, param, value)?;
    if Some(param) == P::PRESET {
        *p = P::preset(value)?;
        return p.check();
    }
    let mut json = serde_json::to_value(&*p).map_err(|e| format!("{param}: {e}"))?;
    let mut at = &mut json;
    for seg in &path {
        if !at.is_object() {
            // An optional part left out (null), now given: it starts from its defaults.
            *at = Value::Object(Map::new());
        }
        at = at.as_object_mut().expect("made an object").entry(seg.to_string()).or_insert(Value::Null);
    }
    *at = value.clone();
    let next: P = serde_json::from_value(json).map_err(|e| format!("{param}: {e}"))?;
    next.check()?;
    *p = next;
    Ok(())
}

/// `node` with its `$ref` (to `#/$defs/NAME`) followed.
fn deref<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    let mut n = node;
    for _ in 0..16 {
        let Some(r) = n.get("$ref").and_then(Value::as_str) else { break };
        match r.strip_prefix("#/$defs/").and_then(|name| root.pointer(&format!("/$defs/{name}"))) {
            Some(t) => n = t,
            None => break,
        }
    }
    n
}

/// The keys an object schema declares, for messages.
fn known(node: &Value) -> String {
    node.get("properties")
        .and_then(Value::as_object)
        .map_or(String::new(), |m| m.keys().map(String::as_str).collect::<Vec<_>>().join(", "))
}

/// The schema of the parameter at `path`, or an error naming the part that is no parameter.
fn locate<'a>(root: &'a Value, start: &'a Value, path: &[&str], scheduler: &str) -> Result<&'a Value, String> {
    let mut node = deref(root, start);
    for (i, seg) in path.iter().enumerate() {
        let next = node.get("properties").and_then(|m| m.get(*seg)).or_else(|| {
            node.get("additionalProperties").filter(|a| a.is_object()).or_else(|| {
                // A free map (`"additionalProperties": true` or none) takes any key, any value.
                (node.get("type").and_then(Value::as_str) == Some("object")
                    && !node.get("properties").is_some_and(Value::is_object)
                    && node.get("additionalProperties") != Some(&Value::Bool(false)))
                .then_some(&Value::Bool(true))
            })
        });
        node = match next {
            Some(n) => deref(root, n),
            None if i == 0 => {
                return Err(format!("unknown {scheduler} parameter '{seg}' (known: {})", known(node)));
            }
            None => {
                return Err(format!("{}: unknown parameter '{seg}' (known: {})", path[..i].join("."), known(node)));
            }
        };
    }
    Ok(node)
}

/// A schema bound as the messages print it: whole numbers without a fraction.
fn bound(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        _ => v.to_string(),
    }
}

/// What an integer or number range reads as in a message: `in 1..=1000`, `>= 0`, or nothing.
fn range(node: &Value) -> String {
    match (node.get("minimum"), node.get("maximum")) {
        (Some(lo), Some(hi)) => format!(" in {}..={}", bound(lo), bound(hi)),
        (Some(lo), None) => format!(" >= {}", bound(lo)),
        (None, Some(hi)) => format!(" <= {}", bound(hi)),
        (None, None) => String::new(),
    }
}

fn within(node: &Value, x: f64) -> bool {
    node.get("minimum").and_then(Value::as_f64).is_none_or(|lo| x >= lo)
        && node.get("maximum").and_then(Value::as_f64).is_none_or(|hi| x <= hi)
}

/// Checks `value` against the schema `node`, naming it `label` in errors: types, ranges, enums and, for an
/// object, every key (a key the schema does not declare is an error unless it is a free map).
fn check(root: &Value, node: &Value, label: &str, value: &Value) -> Result<(), String> {
    let node = deref(root, node);
    if let Some(options) = node.get("enum").and_then(Value::as_array) {
        if options.contains(value) {
            return Ok(());
        }
        let words: Vec<String> = options.iter().map(Value::to_string).collect();
        let list = match words.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => words.join(""),
        };
        return Err(format!("{label}: expected {list}, got {value}"));
    }
    if let Some(branches) = node.get("anyOf").or_else(|| node.get("oneOf")).and_then(Value::as_array) {
        let mut first = None;
        for b in branches {
            match check(root, b, label, value) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        return Err(first.unwrap_or_else(|| format!("{label}: no alternative fits {value}")));
    }
    match node.get("type").and_then(Value::as_str) {
        Some("boolean") if !value.is_boolean() => Err(format!("{label}: expected true or false, got {value}")),
        Some("integer") => {
            let whole = value.as_i64().map(|x| x as f64).or_else(|| value.as_u64().map(|x| x as f64));
            match whole {
                Some(x) if within(node, x) => Ok(()),
                _ => Err(format!("{label}: expected an integer{}, got {value}", range(node))),
            }
        }
        Some("number") => match value.as_f64() {
            Some(x) if within(node, x) => Ok(()),
            _ => Err(format!("{label}: expected a number{}, got {value}", range(node))),
        },
        Some("string") if !value.is_string() => Err(format!("{label}: expected a string, got {value}")),
        Some("array") => {
            let list = value.as_array().ok_or_else(|| format!("{label}: expected an array, got {value}"))?;
            if let Some(most) = node.get("maxItems").and_then(Value::as_u64) {
                if list.len() as u64 > most {
                    return Err(format!("{label}: at most {most} entries, got {}", list.len()));
                }
            }
            match node.get("items") {
                Some(items) => {
                    list.iter().enumerate().try_for_each(|(i, x)| check(root, items, &format!("{label}[{i}]"), x))
                }
                None => Ok(()),
            }
        }
        Some("object") => {
            let obj = value.as_object().ok_or_else(|| format!("{label}: expected an object, got {value}"))?;
            for key in node.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
                if !obj.contains_key(key) {
                    return Err(format!("{label}.{key}: required"));
                }
            }
            let props = node.get("properties").and_then(Value::as_object);
            let extra = node.get("additionalProperties");
            for (k, x) in obj {
                let sub = format!("{label}.{k}");
                match (props.and_then(|m| m.get(k)), extra) {
                    (Some(s), _) => check(root, s, &sub, x)?,
                    (None, Some(Value::Bool(false))) => {
                        return Err(format!("{label}: unknown parameter '{k}' (known: {})", known(node)));
                    }
                    (None, Some(s)) if s.is_object() => check(root, s, &sub, x)?,
                    (None, _) => {}
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// A policy's parameters as a test declares them: a range, an enum, a nested optional object, a free map.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields)]
    struct Demo {
        /// Slice [ms].
        #[schemars(range(min = 1, max = 100))]
        slice_ms: u64,
        /// Mode.
        mode: Mode,
        /// Optional part.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Part")]
        part: Option<Part>,
        /// Anything (a script's own variables).
        vars: BTreeMap<String, Value>,
        /// A list.
        #[schemars(length(max = 2))]
        list: Vec<Item>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Item {
        name: String,
        #[schemars(range(min = 1))]
        len: u64,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields)]
    struct Part {
        /// A fraction.
        #[schemars(range(min = 0.0, max = 1.0))]
        ratio: f64,
        on: bool,
    }

    impl Default for Demo {
        fn default() -> Demo {
            Demo { slice_ms: 30, mode: Mode::Fast, part: None, vars: BTreeMap::new(), list: Vec::new() }
        }
    }

    impl Default for Part {
        fn default() -> Part {
            Part { ratio: 0.5, on: true }
        }
    }

    impl Params for Demo {
        const SCHEDULER: &'static str = "demo";
        const DEF: &'static str = "demo_params";
        crate::params_schema!();
    }

    #[test]
    fn set_checks_against_the_declaration() {
        let mut d = Demo::default();
        set(&mut d, "slice_ms", &json!(10)).unwrap();
        assert_eq!(d.slice_ms, 10);
        assert_eq!(set(&mut d, "slice_ms", &json!(0)).unwrap_err(), "slice_ms: expected an integer in 1..=100, got 0");
        assert_eq!(
            set(&mut d, "slice_ms", &json!(1.5)).unwrap_err(),
            "slice_ms: expected an integer in 1..=100, got 1.5"
        );
        assert_eq!(set(&mut d, "mode", &json!("x")).unwrap_err(), "mode: expected \"fast\" or \"slow\", got \"x\"");
        assert_eq!(
            set(&mut d, "nope", &json!(1)).unwrap_err(),
            "unknown demo parameter 'nope' (known: slice_ms, mode, part, vars, list)"
        );
        assert_eq!(d.slice_ms, 10, "a failed set leaves the parameters as they were");
        // An optional part starts from its defaults when one key of it is set; an object replaces it.
        set(&mut d, "part.ratio", &json!(0.25)).unwrap();
        assert_eq!(d.part, Some(Part { ratio: 0.25, on: true }));
        set(&mut d, "part", &json!({ "on": false })).unwrap();
        assert_eq!(d.part, Some(Part { ratio: 0.5, on: false }));
        assert_eq!(set(&mut d, "part.ratio", &json!(2)).unwrap_err(), "part.ratio: expected a number in 0..=1, got 2");
        assert_eq!(
            set(&mut d, "part", &json!({ "x": 1 })).unwrap_err(),
            "part: unknown parameter 'x' (known: ratio, on)"
        );
        assert_eq!(set(&mut d, "part.x", &json!(1)).unwrap_err(), "part: unknown parameter 'x' (known: ratio, on)");
        assert_eq!(set(&mut d, "part.on", &json!(3)).unwrap_err(), "part.on: expected true or false, got 3");
        // A free map takes any key and value.
        set(&mut d, "vars.slice", &json!([1, 2])).unwrap();
        set(&mut d, "vars", &json!({ "a": "b" })).unwrap();
        assert_eq!(d.vars.get("a"), Some(&json!("b")));
        assert_eq!(d.vars.len(), 1);
        // A list's entries are checked one by one, with their place in the label.
        set(&mut d, "list", &json!([{ "name": "a", "len": 1 }])).unwrap();
        assert_eq!(d.list, vec![Item { name: "a".into(), len: 1 }]);
        let bad = json!([{ "name": "a", "len": 1 }, { "name": "b", "len": 0 }]);
        assert_eq!(set(&mut d, "list", &bad).unwrap_err(), "list[1].len: expected an integer >= 1, got 0");
        assert_eq!(set(&mut d, "list", &json!([{ "len": 2 }])).unwrap_err(), "list[0].name: required");
        assert_eq!(set(&mut d, "list", &json!([{}, {}, {}])).unwrap_err(), "list: at most 2 entries, got 3");
    }

    #[test]
    fn from_value_reads_every_key() {
        let d: Demo = from_value(&json!({ "mode": "slow", "part": { "ratio": 1 } })).unwrap();
        assert_eq!((d.mode, d.part.map(|p| p.ratio)), (Mode::Slow, Some(1.0)));
        assert_eq!(from_value::<Demo>(&Value::Null).unwrap(), Demo::default());
        assert_eq!(from_value::<Demo>(&json!(3)).unwrap_err(), "demo params: expected an object, got 3");
    }

    #[test]
    fn the_schema_carries_docs_ranges_and_defaults() {
        let defs = defs::<Demo>();
        assert_eq!(defs.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["demo_params", "Mode", "Part", "Item"]);
        let s = &defs[0].1;
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(
            s["properties"]["slice_ms"],
            json!({
            "description": "Slice [ms].", "type": "integer", "minimum": 1, "maximum": 100, "default": 30 })
        );
        assert!(s.pointer("/properties/part/default").is_none(), "{s}");
    }
}
