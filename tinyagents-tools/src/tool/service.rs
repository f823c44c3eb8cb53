//! Tools on a service's methods: [`ToolService`], implemented by `#[tools]`
//! for a type whose `impl` blocks declare `&self` methods as tools, and
//! registered with [`ToolRegistry::register_service`](crate::ToolRegistry::register_service).
//!
//! A type may spread its tools over several `impl` blocks: the main block
//! is marked `#[tools]`, every further one `#[tools(block = N)]` with a
//! number from 2 to 16 unique to the type. The main block implements
//! [`ToolService`], and its tools list includes every further block's,
//! found at compile time: nothing is collected at run time, and a block
//! whose tools cannot work with the service's state or context type is a
//! compile error, never a tool left out.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::tool::Tool;

/// A service whose `&self` methods are tools: every tool holds a clone of
/// the one `Arc<Self>`, so they share its state (a connection pool, a
/// cache, an in-memory table). `#[tools]` implements it; register the
/// service with [`ToolRegistry::register_service`](crate::ToolRegistry::register_service).
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no tools for a `ToolRegistry<{S}, {C}>`",
    label = "not a tool service",
    note = "put `#[tools]` on one `impl` block of `{Self}` and `#[tool]` on its tool methods; further blocks take `#[tools(block = 2)]`, `#[tools(block = 3)]`, ...",
    note = "when a block's tools need a state or context type, name it on the main block: `#[tools(state = AppState, context = Session)]`"
)]
pub trait ToolService<S = (), C = ()>: Send + Sync + 'static
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    /// One tool per `#[tool]` method of every `#[tools]` block of the type
    /// (the main block's first, then blocks 2, 3, ... in order, each in
    /// source order), each holding a clone of `service`.
    fn tools(service: &Arc<Self>) -> Vec<Arc<dyn Tool<S, C>>>;
}

/// Marks `#[tools(block = N)]` of a type: the block exists.
#[doc(hidden)]
pub trait ToolBlock<const N: u8> {}

/// The tools of block `N`, for a registry of state `S` and context `C`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "the tools of `#[tools(block = {N})]` on `{Self}` do not work with state `{S}` and context `{C}`",
    note = "name the state and context types the blocks' tools need on the main `#[tools]` block: `#[tools(state = AppState, context = Session)]`"
)]
pub trait BlockTools<const N: u8, S, C>: Sized {
    /// Appends the block's tools, each holding a clone of `service`.
    fn block_tools(service: &Arc<Self>, out: &mut Vec<Arc<dyn Tool<S, C>>>);
}

/// Finds block `N` of `T` by autoref specialization: [`BlockPresent`]
/// when the block exists, [`BlockAbsent`] (nothing to add) otherwise.
#[doc(hidden)]
pub struct BlockProbe<T, const N: u8>(PhantomData<fn() -> T>);

impl<T, const N: u8> BlockProbe<T, N> {
    /// A probe for block `N` of `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        BlockProbe(PhantomData)
    }
}

/// Chosen when block `N` of `T` exists: adds its tools.
#[doc(hidden)]
pub trait BlockPresent<T, const N: u8> {
    /// Appends block `N`'s tools.
    fn add<S, C>(&self, service: &Arc<T>, out: &mut Vec<Arc<dyn Tool<S, C>>>)
    where
        T: BlockTools<N, S, C>;
}

impl<T: ToolBlock<N>, const N: u8> BlockPresent<T, N> for &BlockProbe<T, N> {
    fn add<S, C>(&self, service: &Arc<T>, out: &mut Vec<Arc<dyn Tool<S, C>>>)
    where
        T: BlockTools<N, S, C>,
    {
        T::block_tools(service, out);
    }
}

/// Chosen when block `N` of `T` does not exist: adds nothing.
#[doc(hidden)]
pub trait BlockAbsent<T, const N: u8> {
    /// Appends nothing.
    fn add<S, C>(&self, _service: &Arc<T>, _out: &mut Vec<Arc<dyn Tool<S, C>>>) {}
}

impl<T, const N: u8> BlockAbsent<T, N> for BlockProbe<T, N> {}
