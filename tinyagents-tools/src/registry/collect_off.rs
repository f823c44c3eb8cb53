//! `#[tool(collect)]` without the `collect` feature: a compile error that
//! names the feature, so nothing global happens by accident.

/// What `#[tool(collect)]` expands to without the `collect` feature.
#[doc(hidden)]
#[macro_export]
macro_rules! __collect_tool {
    ($tool:ident) => {
        ::core::compile_error!(
            "`#[tool(collect)]` needs the `collect` feature of tinyagents-tools: `tinyagents-tools = { version = \"0.1\", features = [\"collect\"] }`"
        );
    };
}
