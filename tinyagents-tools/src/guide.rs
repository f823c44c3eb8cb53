//! The guide: one page per topic, the pages of the crate's `docs/`. Every
//! Rust snippet on them is compiled and run as a doctest.
//!
//! Pages whose snippets need a cargo feature exist only with it: `collect`
//! (with `collect`), `streaming` (with `stream`) and `testing` (with
//! `testkit`). Code mode's page is the
//! guide of its own crate, `tinyagents-tools-code-mode`, and the MCP
//! server's and client's pages are the guide of `tinyagents-tools-mcp`.
#![doc = include_str!("../docs/README.md")]

#[doc = include_str!("../docs/tools.md")]
pub mod tools {}

#[doc = include_str!("../docs/services.md")]
pub mod services {}

#[cfg(feature = "collect")]
#[cfg_attr(docsrs, doc(cfg(feature = "collect")))]
#[doc = include_str!("../docs/collect.md")]
pub mod collect {}

#[doc = include_str!("../docs/injection.md")]
pub mod injection {}

#[doc = include_str!("../docs/safety.md")]
pub mod safety {}

#[doc = include_str!("../docs/middleware-and-policies.md")]
pub mod middleware_and_policies {}

#[doc = include_str!("../docs/executor.md")]
pub mod executor {}

#[doc = include_str!("../docs/events.md")]
pub mod events {}

#[doc = include_str!("../docs/journal.md")]
pub mod journal {}

#[doc = include_str!("../docs/providers.md")]
pub mod providers {}

#[cfg(feature = "stream")]
#[cfg_attr(docsrs, doc(cfg(feature = "stream")))]
#[doc = include_str!("../docs/streaming.md")]
pub mod streaming {}

#[cfg(feature = "isolated")]
#[cfg_attr(docsrs, doc(cfg(feature = "isolated")))]
#[doc = include_str!("../docs/isolation.md")]
pub mod isolation {}

#[cfg(feature = "testkit")]
#[cfg_attr(docsrs, doc(cfg(feature = "testkit")))]
#[doc = include_str!("../docs/testing.md")]
pub mod testing {}

#[doc = include_str!("../docs/compile-errors.md")]
pub mod compile_errors {}

/// The crate README's snippets, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
