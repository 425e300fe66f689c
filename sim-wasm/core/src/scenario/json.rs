//! The file as JSON before it is typed: strict parsing (duplicate keys refused), validation against
//! `scenarios/schema.json`, and errors worded with the field path.

use super::*;

/// Builds the schema validator now rather than at the first validation. Building it checks the schema against
/// JSON Schema's own meta-schema and compiles both: the largest part of a cold first validation in WebAssembly
/// (about 0.3 s before the engine has tiered its code up), which a page's worker can pay while the scenario is
/// still loading.
pub fn prepare_validator() {
    validator();
}

/// Where the validator finds `scenarios/schema.json` (its own `$id`).
pub(super) const SCHEMA_ID: &str = "https://schedlab.invalid/scenario.schema.json";

pub(super) fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA_JSON).expect("scenarios/schema.json is valid JSON");
        // Building a validator checks its root document against that document's meta-schema, and jsonschema has
        // no public switch to skip it: for the 2020-12 meta-schema that was most of a cold worker's first
        // validation. Our schema is fixed and checked once by a test (`the_schema_is_a_valid_2020_12_schema`), so
        // the root is a one-line draft-4 document (whose small meta-schema costs little) that refers to it; the
        // schema itself is compiled as the 2020-12 resource it declares, so it validates and words every error
        // as before.
        let root = serde_json::json!({ "$schema": "http://json-schema.org/draft-04/schema#", "$ref": SCHEMA_ID });
        let registry = jsonschema::Registry::new()
            .add(SCHEMA_ID, jsonschema::Resource::from_contents(schema))
            .and_then(|r| r.prepare())
            .expect("scenarios/schema.json is a resource");
        jsonschema::options()
            .with_registry(&registry)
            // As 2020-12 has it (a draft-4 root would otherwise make `format` an assertion).
            .should_validate_formats(false)
            .build(&root)
            .expect("scenarios/schema.json is a valid JSON Schema")
    })
}

/// `/domains/1/weight` -> `domains[1].weight`; the root is `(scenario)`.
pub fn pointer_to_path(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').skip(1) {
        let part = part.replace("~1", "/").replace("~0", "~");
        if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part);
        }
    }
    if out.is_empty() {
        "(scenario)".into()
    } else {
        out
    }
}

/// Parses JSON text as `serde_json` does but refuses an object with the same key twice (which `serde_json` would
/// silently resolve to the last value, so an edit could be lost without a word). Errors carry line and column. A
/// leading UTF-8 byte order mark (as some Windows editors save) is skipped.
pub fn parse_strict(text: &str) -> Result<Value, serde_json::Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
    struct Strict(Value);
    struct V;
    impl<'de> Deserialize<'de> for Strict {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
            d.deserialize_any(V).map(Strict)
        }
    }
    impl<'de> Visitor<'de> for V {
        type Value = Value;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
            Ok(Value::Bool(b))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_str<E>(self, s: &str) -> Result<Value, E> {
            Ok(Value::String(s.to_owned()))
        }
        fn visit_string<E>(self, s: String) -> Result<Value, E> {
            Ok(Value::String(s))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut out = Vec::new();
            while let Some(Strict(v)) = seq.next_element()? {
                out.push(v);
            }
            Ok(Value::Array(out))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut out = serde_json::Map::new();
            while let Some(k) = map.next_key::<String>()? {
                if out.contains_key(&k) {
                    return Err(de::Error::custom(format!("duplicate key '{}'", clip(k))));
                }
                let Strict(v) = map.next_value()?;
                out.insert(k, v);
            }
            Ok(Value::Object(out))
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let Strict(v) = Strict::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// When typed parsing fails after the schema passed, the usual cause is a whole number written as a float
/// (`"pcpus": 2.0`), which JSON Schema counts as an integer but the typed fields do not: name the field. Each
/// candidate is tried alone (written as an integer) and reported if that changes the outcome.
pub(super) fn integral_float_at(value: &Value) -> Option<String> {
    pub(super) fn floats(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|x| x.fract() == 0.0 && x.abs() < 9.0e15) => {
                out.push(at)
            }
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| floats(x, format!("{at}/{i}"), out)),
            Value::Object(o) => {
                o.iter().for_each(|(k, x)| floats(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out))
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    floats(value, String::new(), &mut found);
    let before = serde_json::from_value::<Scenario>(value.clone()).err()?.to_string();
    for at in found.into_iter().take(20) {
        let mut v = value.clone();
        let slot = v.pointer_mut(&at)?;
        let x = slot.as_f64()?;
        *slot = Value::from(x as i64);
        let after = serde_json::from_value::<Scenario>(v).err().map(|e| e.to_string());
        if after.as_deref() != Some(before.as_str()) {
            return Some(format!(
                "{}: {x:?} must be a whole number written without a fraction ({})",
                pointer_to_path(&at),
                x as i64
            ));
        }
    }
    None
}

/// Shortens a value quoted in an error so a hostile or huge input cannot flood the message.
pub(super) fn clip(s: String) -> String {
    pub(super) const MAX: usize = 160;
    if s.chars().count() <= MAX {
        s
    } else {
        let mut t: String = s.chars().take(MAX).collect();
        t.push('…');
        t
    }
}
