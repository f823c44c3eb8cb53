//! The hasher of the executor's name tables.
//!
//! Tool names are short and the tables are built from registered names only,
//! so the DoS resistance of the standard SipHash buys nothing there (a model
//! chooses lookup keys, never inserted ones). `foldhash`'s fixed-seed hasher
//! (the one `hashbrown` uses by default) reads a short name eight bytes at a
//! time.

use std::collections::HashMap;

/// A `HashMap` keyed by names, hashed with `foldhash` (fixed seed: lookups
/// are the same from run to run).
pub(crate) type NameMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
