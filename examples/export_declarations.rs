//! Prints the tool declarations for one provider as one JSON array on stdout.
//!
//! ```sh
//! cargo run --example export_declarations -- openai-chat
//! cargo run --example export_declarations -- openai-responses
//! cargo run --example export_declarations -- anthropic
//! cargo run --example export_declarations -- gemini
//! cargo run --example export_declarations -- mcp
//! cargo run --example export_declarations -- gemini --allow get_weather
//! cargo run --example export_declarations -- openai-chat --allow get_weather --required
//! cargo run --example export_declarations -- anthropic --defer plan_trip
//! cargo run --example export_declarations -- gemini --defer plan_trip
//! ```
//!
//! With `--allow a,b` the output is the request's fields instead: the full,
//! stable `tools` list and the subset as the provider's tool choice
//! (`tool_choice` with `allowed_tools` for OpenAI, `toolConfig` with
//! `allowedFunctionNames` for Gemini; Anthropic and MCP have no such field,
//! and get none). `--required` makes the model call one of them.
//!
//! With `--defer a,b` those tools are deferred: for OpenAI Responses and
//! Anthropic they carry `defer_loading: true` beside the provider's tool
//! search tool; for the others they leave the request and the built-in
//! `search_tools` tool (which finds and enables them for the next turn) is
//! offered instead.
//!
//! The tools are the quickstart's four and `plan_trip`, whose arguments use
//! every shape the exporters handle: nested structs, unit and data enums,
//! `Option`, `Vec`, maps, recursion, string formats, numeric and length
//! bounds. A declaration the provider cannot take (a map or a recursive type
//! under Gemini's `parameters`, for example) is left out of the array and
//! reported on stderr with the tool and the JSON pointer.

use std::collections::BTreeMap;
use std::process::ExitCode;

use schemars::JsonSchema;
use serde::Deserialize;
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::{
    AllowedMode, Provider, allowed_tools_choice, export_declarations, request_tools_deferred,
};
use tinyagents_tools::tool::ToolSearch;
use tinyagents_tools_examples::quickstart_registry;

/// A place on the itinerary.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// The city.
    #[schemars(length(min = 1, max = 80))]
    pub city: String,
    /// Nights to stay (1 to 30).
    #[schemars(range(min = 1, max = 30))]
    pub nights: u8,
    /// Stops visited from here, as side trips (a recursive type).
    #[serde(default)]
    pub side_trips: Vec<Stop>,
}

/// How to travel between stops.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// By train.
    Train,
    /// By plane, with a seat class.
    Plane {
        /// `economy` or `business`.
        class: String,
    },
}

/// Arguments of `plan_trip`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TripArgs {
    /// The traveller's e-mail for the booking.
    #[schemars(email)]
    pub email: String,
    /// When the trip starts (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    pub starts_at: String,
    /// The stops, in order.
    #[schemars(length(min = 1, max = 10))]
    pub stops: Vec<Stop>,
    /// How to travel.
    pub transport: Transport,
    /// Budget per category, in euros.
    #[serde(default)]
    pub budget: BTreeMap<String, u32>,
    /// A note for the travel agent.
    #[serde(default)]
    pub note: Option<String>,
}

/// Plan a multi-city trip and return an itinerary id.
#[tool(read_only, idempotent, networked)]
pub async fn plan_trip(args: TripArgs) -> String {
    format!("trip-{}-stops", args.stops.len())
}

fn main() -> ExitCode {
    let Some(name) = std::env::args().nth(1) else {
        eprintln!(
            "usage: export_declarations <openai-chat|openai-responses|anthropic|gemini|mcp> [--allow a,b [--required] | --defer a,b]"
        );
        return ExitCode::from(2);
    };
    let provider: Provider = match name.parse() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut registry = match quickstart_registry() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot build the registry: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = registry.register(PlanTripTool) {
        eprintln!("cannot register plan_trip: {e}");
        return ExitCode::FAILURE;
    }
    let exported = export_declarations(provider.default_target(), registry.specs());
    for error in &exported.errors {
        eprintln!("left out: {error}");
    }
    let rest: Vec<String> = std::env::args().skip(2).collect();
    let allowed = rest
        .iter()
        .position(|a| a == "--allow")
        .and_then(|i| rest.get(i + 1));
    let mode = if rest.iter().any(|a| a == "--required") {
        AllowedMode::Required
    } else {
        AllowedMode::Auto
    };
    let deferred = rest
        .iter()
        .position(|a| a == "--defer")
        .and_then(|i| rest.get(i + 1));
    let output = match (allowed, deferred) {
        (None, Some(names)) => {
            match request_tools_deferred(&exported, names.split(',')) {
                Some(tools) => serde_json::json!({ "tools": tools }),
                None => {
                    // No tool search of the provider's own: the deferred
                    // tools leave the request, and the built-in
                    // `search_tools` tool finds them for the next turn.
                    let deferred: Vec<&str> = names.split(',').collect();
                    let specs: Vec<_> = registry
                        .specs()
                        .filter(|s| deferred.contains(&s.name.as_str()))
                        .collect();
                    let search = ToolSearch::new(specs.iter().copied());
                    let offered = registry
                        .specs()
                        .filter(|s| !deferred.contains(&s.name.as_str()))
                        .chain(std::iter::once(Tool::<(), ()>::spec(&*search)));
                    eprintln!(
                        "{provider} has no tool search of its own: deferred tools are found with `search_tools`"
                    );
                    serde_json::json!({
                        "tools": export_declarations(provider.default_target(), offered).request_tools()
                    })
                }
            }
        }
        (None, None) => exported.to_json(),
        (Some(names), _) => {
            let target = provider.default_target();
            let choice = allowed_tools_choice(target, names.split(','), mode);
            let field = match provider {
                Provider::Gemini => "toolConfig",
                _ => "tool_choice",
            };
            let mut request = serde_json::json!({ "tools": exported.request_tools() });
            if let Some(choice) = choice {
                request[field] = choice;
            } else {
                eprintln!(
                    "{provider} has no allowed-tools field: the executor alone enforces the subset"
                );
            }
            request
        }
    };
    match serde_json::to_string_pretty(&output) {
        Ok(text) => println!("{text}"),
        Err(e) => {
            eprintln!("cannot print the declarations: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
