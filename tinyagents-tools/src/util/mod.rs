//! Small helpers shared by several modules: locks that survive a poisoned
//! mutex, and the hasher of the crate's name-keyed maps.

pub(crate) mod fasthash;
pub(crate) mod sync;
