//! The guide's MCP pages: serving a registry, and using the tools of other
//! servers. Every Rust snippet on them is compiled and run as a doctest.
//! The rest of the guide (writing tools, the executor, the journal) is
//! `tinyagents_tools::guide`.
//!
//! A page whose snippets need a cargo feature exists only with it: `server`
//! with `http`, `client` with `client`.

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
#[doc = include_str!("../docs/server.md")]
pub mod server {}

#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[doc = include_str!("../docs/client.md")]
pub mod client {}
