// The guide to code mode, one page (`guide.md`, inside the crate so that
// it packages): what a program sees, how its calls run, how it is bounded,
// and why QuickJS. Its Rust snippets are compiled and run as doctests.
#![doc = include_str!("../guide.md")]

/// The README's snippets, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
