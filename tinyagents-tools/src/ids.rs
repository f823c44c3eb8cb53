//! Names and identifiers: the validated [`ToolName`] and the opaque ids a call
//! carries ([`ToolCallId`], [`RunId`], [`ThreadId`]).
//!
//! All of them are cheap to clone (`Arc<str>` inside) because the executor
//! copies them into every event and result.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use crate::name_rules::{MAX_NAME_LEN, NameError};

/// A canonical tool name: ASCII snake_case, 1 to 64 characters.
///
/// Construction validates the name (see [`NameError`] for every rule), so a
/// `ToolName` in hand is always one every provider accepts as is.
///
/// ```
/// use tinyagents_tools::ToolName;
/// assert!(ToolName::new("search_docs").is_ok());
/// assert!(ToolName::new("Search Docs").is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName(Arc<str>);

impl ToolName {
    /// Validates `name` and wraps it.
    pub fn new(name: impl AsRef<str>) -> Result<Self, NameError> {
        let name = name.as_ref();
        crate::name_rules::check_tool_name(name)?;
        Ok(ToolName(Arc::from(name)))
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The shared string, for handing the name on without copying it.
    pub fn shared(&self) -> &Arc<str> {
        &self.0
    }
}

impl fmt::Debug for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ToolName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for ToolName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

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
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Arc<str>);

        impl $name {
            /// Wraps an id as given (ids are opaque: any string is accepted).
            pub fn new(id: impl Into<Arc<str>>) -> Self {
                $name(id.into())
            }

            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&*self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                $name(Arc::from(value))
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                $name(Arc::from(value))
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
