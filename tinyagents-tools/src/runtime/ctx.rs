//! [`Ctx`]: the application's context value, as a tool takes it.

use std::fmt;
use std::ops::Deref;

use super::RunContext;

/// The application's context value, injected by `#[inject] ctx: Ctx<C>`.
/// Dereferences to `C`.
pub struct Ctx<C>(RunContext<C>);

impl<C> Ctx<C> {
    /// The whole run context.
    pub fn run(&self) -> &RunContext<C> {
        &self.0
    }
}

impl<C> Deref for Ctx<C> {
    type Target = C;
    fn deref(&self) -> &C {
        self.0.context()
    }
}

impl<C> Clone for Ctx<C> {
    fn clone(&self) -> Self {
        Ctx(self.0.clone())
    }
}

impl<C> fmt::Debug for Ctx<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Ctx").field(&self.0).finish()
    }
}

impl<C> From<RunContext<C>> for Ctx<C> {
    fn from(run: RunContext<C>) -> Self {
        Ctx(run)
    }
}
