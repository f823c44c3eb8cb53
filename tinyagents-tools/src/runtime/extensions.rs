//! A small type map: one value per type, shared by `Arc`.
//!
//! Runs keep their stores, resources and secrets in type maps, so a tool asks
//! for `Store<DocIndex>` and gets exactly that, checked by type.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, DefaultHasher};
use std::sync::Arc;

/// A map from a type to one shared value of that type.
#[derive(Clone, Default)]
pub struct Extensions {
    map: HashMap<TypeId, (Arc<dyn Any + Send + Sync>, &'static str), ByType>,
}

/// Keys are the program's own type ids, never input: a fixed hasher is
/// enough, and an empty map is made without seeding one (a thread-local
/// read on every call's hook context).
type ByType = BuildHasherDefault<DefaultHasher>;

impl Extensions {
    /// An empty map.
    pub fn new() -> Self {
        Extensions::default()
    }

    /// Inserts `value`, replacing any earlier value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.insert_arc(Arc::new(value));
    }

    /// Inserts an already shared value.
    pub fn insert_arc<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.map.insert(
            TypeId::of::<T>(),
            (
                value as Arc<dyn Any + Send + Sync>,
                std::any::type_name::<T>(),
            ),
        );
    }

    /// The value of type `T`, if any.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.map
            .get(&TypeId::of::<T>())
            .and_then(|(v, _)| Arc::clone(v).downcast::<T>().ok())
    }

    /// True when a value of type `T` is present.
    pub fn contains<T: 'static>(&self) -> bool {
        self.map.contains_key(&TypeId::of::<T>())
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Type names only: values may be sensitive.
        f.debug_set()
            .entries(self.map.values().map(|(_, name)| name))
            .finish()
    }
}
