//! The JSON reader for argument text: serde_json's parser with a visitor
//! that refuses a key repeated within one object (serde_json's own value
//! keeps the last one silently) and reads integral floats as integers.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::bounds::{dispose, float};

/// A JSON [`Value`] deserializer that refuses a key repeated within one
/// object (serde_json's own keeps the last silently). On that refusal the
/// cell holds the path to the key, innermost segment first.
#[derive(Clone, Copy)]
pub(super) struct StrictValue<'a>(pub(super) &'a RefCell<Option<Vec<String>>>);

impl StrictValue<'_> {
    /// Adds the segment of the enclosing array or object to the recorded
    /// path of a duplicate found inside it.
    fn note(&self, segment: impl FnOnce() -> String) {
        if let Some(path) = self.0.borrow_mut().as_mut() {
            path.push(segment());
        }
    }
}

impl<'de> DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        loop {
            match seq.next_element_seed(self) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(Value::Array(items)),
                Err(e) => {
                    let index = items.len();
                    dispose(Value::Array(items));
                    self.note(|| index.to_string());
                    return Err(e);
                }
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            // One search of the map per key: its place is kept while the
            // value is read.
            let place = match map.entry(key) {
                Entry::Vacant(place) => place,
                Entry::Occupied(taken) => {
                    *self.0.borrow_mut() = Some(vec![taken.key().clone()]);
                    dispose(Value::Object(map));
                    return Err(de::Error::custom("a key appears twice in one object"));
                }
            };
            match access.next_value_seed(self) {
                Ok(value) => {
                    place.insert(value);
                }
                Err(e) => {
                    let key = place.key().clone();
                    dispose(Value::Object(map));
                    self.note(|| key);
                    return Err(e);
                }
            }
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Value, Vec<String>> {
        let duplicate = RefCell::new(None);
        let mut de = serde_json::Deserializer::from_str(text);
        StrictValue(&duplicate).deserialize(&mut de).map_err(|_| {
            let mut path = duplicate.into_inner().unwrap_or_default();
            path.reverse();
            path
        })
    }

    #[test]
    fn a_repeated_key_is_found_with_its_path_at_any_depth() {
        assert_eq!(parse(r#"{"a": 1, "a": 2}"#), Err(vec!["a".to_owned()]));
        assert_eq!(
            parse(r#"{"x": [0, {"b": {"c": 1, "c": 1}}]}"#),
            Err(vec!["x", "1", "b", "c"]
                .into_iter()
                .map(String::from)
                .collect())
        );
        assert_eq!(
            parse(r#"{"a": {"a": 1}, "b": [{"a": 1}]}"#).unwrap(),
            serde_json::json!({"a": {"a": 1}, "b": [{"a": 1}]})
        );
    }

    #[test]
    fn integral_floats_are_read_as_integers() {
        assert_eq!(
            parse("[5.0, 1e3, -0.0, 2.5, 1e300]").unwrap(),
            serde_json::json!([5, 1000, 0, 2.5, 1e300])
        );
    }
}
