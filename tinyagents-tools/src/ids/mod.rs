//! Names and identifiers: the validated [`ToolName`] and the opaque ids a call
//! carries ([`ToolCallId`], [`RunId`], [`ThreadId`]).
//!
//! All of them are cheap to clone because the executor copies them into
//! every event and result: one of up to 23 bytes (every usual name and id)
//! is kept in place, so a copy is a plain copy, with no allocation and no
//! reference count to change; a longer one is shared.

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use smol_str::SmolStr;

pub(crate) mod name_rules;

pub use name_rules::{MAX_NAME_LEN, NameError};

/// The string views every name and id here shares, through its `as_str`:
/// `Debug` as the quoted string, `Display` as the bare string, and
/// `AsRef<str>` and `Borrow<str>` (so a map keyed by it is read with a
/// `&str`; hashing and ordering are the string's).
macro_rules! str_views {
    ($name:ty) => {
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self.as_str(), f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                self.as_str()
            }
        }
    };
}

/// A canonical tool name: ASCII snake_case, 1 to 64 characters.
///
/// Construction validates the name (see [`NameError`] for every rule), so a
/// `ToolName` in hand is always one every provider accepts as is.
///
/// ```
/// use tinyagents_tools::ids::ToolName;
/// assert!(ToolName::new("search_docs").is_ok());
/// assert!(ToolName::new("Search Docs").is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName(SmolStr);

impl ToolName {
    /// Validates `name` and wraps it.
    pub fn new(name: impl AsRef<str>) -> Result<Self, NameError> {
        let name = name.as_ref();
        crate::ids::name_rules::check_tool_name(name)?;
        Ok(ToolName(SmolStr::new(name)))
    }

    /// The name as a string slice.
    #[inline]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

str_views!(ToolName);

impl TryFrom<&str> for ToolName {
    type Error = NameError;
    fn try_from(value: &str) -> Result<Self, Self::Error> {
        ToolName::new(value)
    }
}

impl Serialize for ToolName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ToolName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        ToolName::new(&s).map_err(serde::de::Error::custom)
    }
}

macro_rules! opaque_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        ///
        /// Up to 23 bytes it is kept in place (a copy is a plain copy),
        /// beyond that shared.
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(SmolStr);

        impl $name {
            /// Wraps an id as given (ids are opaque: any string is accepted).
            pub fn new(id: impl AsRef<str>) -> Self {
                $name(SmolStr::new(id))
            }

            /// The id as a string slice.
            #[inline]
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        str_views!($name);

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                $name(SmolStr::new(value))
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                $name(SmolStr::from(value))
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visit;
                impl serde::de::Visitor<'_> for Visit {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a string id")
                    }
                    fn visit_str<E: serde::de::Error>(self, id: &str) -> Result<$name, E> {
                        Ok($name::from(id))
                    }
                    fn visit_string<E: serde::de::Error>(self, id: String) -> Result<$name, E> {
                        Ok($name::from(id))
                    }
                }
                deserializer.deserialize_str(Visit)
            }
        }
    };
}

opaque_id! {
    /// The id a provider gave one tool call; every result answers it.
    ToolCallId
}

opaque_id! {
    /// The id of one agent run (one user request and the turns it takes).
    RunId
}

opaque_id! {
    /// The id of a conversation thread, which spans many runs.
    ThreadId
}

/// Where new ids come from: the run's and thread's ids when a run does not
/// name them, and the ids a tool makes with
/// [`Ids`](crate::runtime::Ids). A run takes its own source from
/// [`RunContextBuilder::ids`](crate::runtime::RunContextBuilder::ids);
/// without one, run and thread ids are `prefix-` and 16 random hex digits,
/// and a tool's ids are drawn from its call's seed. The testkit's
/// `SequentialIds` numbers them (`prefix-0`, `prefix-1`, ...).
pub trait IdSource: Send + Sync + 'static {
    /// A new id: `prefix`, `-`, and what makes it new.
    fn next_id(&self, prefix: &str) -> String;
}

/// The tool name a call spells, as the model wrote it: not checked (it may
/// be an alias, a provider's rewritten name, or a tool that does not exist),
/// and carried from the [`ToolCall`](crate::ToolCall) to its
/// [`ToolResult`](crate::ToolResult).
///
/// A name of up to 23 bytes (every usual tool name) is stored in place, so
/// a call's name costs no allocation to make, copy or drop; a longer one is
/// shared. It reads as a `&str` (`Deref`) and compares with
/// strings.
///
/// ```
/// use tinyagents_tools::ids::CallName;
/// let name = CallName::from("search_docs");
/// assert_eq!(name, "search_docs");
/// assert!(name.starts_with("search"));
/// assert_eq!(String::from(name), "search_docs");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallName(SmolStr);

impl CallName {
    /// Wraps a name as given.
    pub fn new(name: impl AsRef<str>) -> Self {
        CallName(SmolStr::new(name))
    }

    /// The name as a string slice.
    #[inline]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for CallName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

str_views!(CallName);

impl From<&str> for CallName {
    fn from(value: &str) -> Self {
        CallName::new(value)
    }
}

impl From<&String> for CallName {
    fn from(value: &String) -> Self {
        CallName::new(value)
    }
}

impl From<String> for CallName {
    fn from(value: String) -> Self {
        CallName(SmolStr::from(value))
    }
}

impl From<std::borrow::Cow<'_, str>> for CallName {
    fn from(value: std::borrow::Cow<'_, str>) -> Self {
        match value {
            std::borrow::Cow::Borrowed(name) => CallName::new(name),
            std::borrow::Cow::Owned(name) => CallName::from(name),
        }
    }
}

impl From<&ToolName> for CallName {
    fn from(value: &ToolName) -> Self {
        CallName(value.0.clone())
    }
}

impl From<CallName> for String {
    fn from(value: CallName) -> Self {
        value.0.to_string()
    }
}

macro_rules! call_name_eq {
    ($($other:ty),*) => {$(
        impl PartialEq<$other> for CallName {
            fn eq(&self, other: &$other) -> bool {
                self.as_str() == AsRef::<str>::as_ref(other)
            }
        }
        impl PartialEq<CallName> for $other {
            fn eq(&self, other: &CallName) -> bool {
                AsRef::<str>::as_ref(self) == other.as_str()
            }
        }
    )*};
}

call_name_eq!(str, &str, String);

#[cfg(test)]
mod call_name_tests {
    use super::*;

    #[test]
    fn names_of_any_length_round_trip_and_only_long_ones_are_shared() {
        let short = CallName::from("get_weather_forecast_now"); // 24 bytes
        let copy = short.clone();
        assert_eq!(copy, short);
        let in_place = CallName::from("get_weather_forecast"); // 20 bytes
        assert!(
            !std::ptr::eq(in_place.clone().as_str(), in_place.as_str()),
            "a copy of a short name has its own bytes"
        );
        let long = "a".repeat(64);
        let heap = CallName::from(long.clone());
        assert!(
            std::ptr::eq(heap.clone().as_str(), heap.as_str()),
            "a copy of a long name shares them"
        );
        assert_eq!(heap, long);
        assert_eq!(String::from(heap), long);
        let json = serde_json::to_string(&short).unwrap();
        assert_eq!(json, "\"get_weather_forecast_now\"");
        assert_eq!(serde_json::from_str::<CallName>(&json).unwrap(), short);
    }
}

#[cfg(test)]
mod str_view_tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;

    #[test]
    fn names_and_ids_print_as_their_string_and_are_found_by_a_str_key() {
        let runs = HashMap::from([(RunId::new("run-7"), 7)]);
        assert_eq!(runs.get("run-7"), Some(&7));
        let threads = BTreeMap::from([(ThreadId::from("t-1"), 1)]);
        assert_eq!(threads.get("t-1"), Some(&1));
        let tools = HashMap::from([(ToolName::new("search_docs").unwrap(), 2)]);
        assert_eq!(tools.get("search_docs"), Some(&2));

        let id = ToolCallId::from("call \"1\"");
        assert_eq!(format!("{id} {id:?}"), r#"call "1" "call \"1\"""#);
        let name = CallName::from("get_weather");
        assert_eq!(format!("{name} {name:?}"), r#"get_weather "get_weather""#);
        assert_eq!(AsRef::<str>::as_ref(&id), "call \"1\"");
    }
}

#[cfg(test)]
mod id_form_tests {
    use std::collections::{BTreeMap, HashMap};
    use std::sync::Arc;

    use super::*;

    #[test]
    fn ids_of_any_length_read_hash_and_order_as_their_strings() {
        let short = "toolu_01A09q90qw90lq9178"; // 24 bytes
        let long = "toolu_01A09q90qw90lq917835lq9"; // 29 bytes
        for id in [short, long, ""] {
            let made = [
                ToolCallId::from(id),
                ToolCallId::from(id.to_owned()),
                ToolCallId::new(Arc::<str>::from(id)),
                serde_json::from_str(&serde_json::to_string(id).unwrap()).unwrap(),
            ];
            for one in &made {
                assert_eq!(one.as_str(), id);
                assert_eq!(one, &made[0]);
                assert_eq!(serde_json::to_string(one).unwrap(), format!("\"{id}\""));
            }
            // Found by a `&str` key, hashed and ordered as the string is.
            let map = HashMap::from([(made[0].clone(), 1)]);
            assert_eq!(map.get(id), Some(&1));
            let ordered = BTreeMap::from([(RunId::from(id), 1), (RunId::from("~"), 2)]);
            assert_eq!(ordered.keys().next().unwrap().as_str(), id);
        }
        // Ids of either form order as their strings do.
        assert!(ToolCallId::from(long) < ToolCallId::from("zz"));
        assert!(ToolCallId::from("a") < ToolCallId::from(long));
        assert!(std::mem::size_of::<ToolCallId>() <= 32);
    }
}
