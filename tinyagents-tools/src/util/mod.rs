//! Small helpers shared by several modules: locks that survive a poisoned
//! mutex, the hasher of the crate's name-keyed maps, names compared in
//! line, and how deep JSON text nests.

pub(crate) mod fasthash;
pub(crate) mod json_depth;
pub(crate) mod names;
pub(crate) mod sync;
