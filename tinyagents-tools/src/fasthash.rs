//! A small, fast hasher for the executor's name tables.
//!
//! Tool names are short and the tables are built from registered names only,
//! so the DoS resistance of the standard SipHash buys nothing there (a model
//! chooses lookup keys, never inserted ones) while costing a noticeable share
//! of a call. FNV-1a is a few instructions per byte.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a, 64 bits.
#[derive(Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// A `HashMap` keyed by names, hashed with [`Fnv`].
pub(crate) type NameMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;
