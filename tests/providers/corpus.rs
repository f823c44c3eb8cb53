//! The corpus of argument types every provider export is tested on: nested
//! structs, unit and data enums, `Option`, `Vec`, maps, recursion, string
//! formats, numeric and length bounds, and a tool without arguments.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Deserialize;
use tinyagents_tools::spec::{Effect, Idempotency, Reach};
use tinyagents_tools::{ToolSafety, ToolSchema, ToolSpec};

/// A point on Earth.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct Location {
    /// Latitude in degrees.
    #[schemars(range(min = -90.0, max = 90.0))]
    pub lat: f64,
    /// Longitude in degrees.
    #[schemars(range(min = -180.0, max = 180.0))]
    pub lon: f64,
}

/// Arguments of `create_event`: nested structs, formats and bounds.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct CreateEventArgs {
    /// The event title.
    #[schemars(length(min = 1, max = 120))]
    pub title: String,
    /// When it starts (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    pub starts_at: String,
    /// Who to invite.
    #[schemars(length(max = 20), inner(email))]
    pub attendees: Vec<String>,
    /// The calendar's id.
    #[schemars(extend("format" = "uuid"))]
    pub calendar_id: String,
    /// A link with details.
    #[schemars(url)]
    pub link: Option<String>,
    /// Priority from 1 (low) to 5 (urgent).
    #[schemars(range(min = 1, max = 5))]
    pub priority: u8,
    /// Where it happens.
    pub location: Option<Location>,
    /// The venue.
    pub venue: Location,
}

/// How fast to go.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum Speed {
    /// As fast as possible.
    Fast,
    /// Carefully.
    Slow,
}

/// A shape, externally tagged.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum Shape {
    /// A circle.
    Circle {
        /// Its radius.
        radius: f64,
    },
    /// A rectangle.
    Rect {
        /// Width.
        width: f64,
        /// Height.
        height: f64,
    },
}

/// What to do, internally tagged.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)]
pub enum Action {
    /// Move by an offset.
    Move {
        /// Offset in pixels.
        dx: i32,
    },
    /// Stop.
    Stop,
}

/// Arguments of `draw_shape`: unit and data enums.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct DrawShapeArgs {
    /// The shape to draw.
    pub shape: Shape,
    /// How fast to draw it.
    pub speed: Speed,
    /// What to do afterwards.
    pub then: Option<Action>,
}

/// Arguments of `count_tags`: maps and vectors.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct CountTagsArgs {
    /// Tag name to weight.
    pub weights: HashMap<String, u32>,
    /// Tags to ignore.
    pub ignore: Vec<String>,
}

/// A node of a tree.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct TreeNode {
    /// The node's label.
    pub label: String,
    /// Its children.
    pub children: Vec<TreeNode>,
}

/// Arguments of `walk_tree`: a recursive type.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct WalkTreeArgs {
    /// The root of the tree.
    pub root: TreeNode,
}

/// Arguments of `search_docs`: optional bounded values.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct SearchDocsArgs {
    /// What to look for.
    pub query: String,
    /// How many hits to return (1 to 50).
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

/// One search hit.
#[derive(serde::Serialize, JsonSchema)]
#[allow(dead_code)]
pub struct SearchHits {
    /// Matching document titles.
    pub titles: Vec<String>,
}

fn spec(builder: tinyagents_tools::spec::ToolSpecBuilder) -> ToolSpec {
    builder.build().expect("corpus specs are valid")
}

/// The corpus, in a fixed order.
pub fn corpus() -> Vec<ToolSpec> {
    vec![
        spec(
            ToolSpec::builder("create_event", "Create a calendar event.")
                .title("Create event")
                .input_schema(ToolSchema::for_input::<CreateEventArgs>()),
        ),
        spec(
            ToolSpec::builder("draw_shape", "Draw a shape on the canvas.")
                .input_schema(ToolSchema::for_input::<DrawShapeArgs>())
                .safety(ToolSafety::default().reach(Reach::Local)),
        ),
        spec(
            ToolSpec::builder("count_tags", "Count weighted tags.")
                .input_schema(ToolSchema::for_input::<CountTagsArgs>())
                .safety(ToolSafety::pure()),
        ),
        spec(
            ToolSpec::builder("walk_tree", "Walk a tree depth first.")
                .input_schema(ToolSchema::for_input::<WalkTreeArgs>())
                .safety(ToolSafety::pure()),
        ),
        spec(
            ToolSpec::builder("search_docs", "Search the document index.")
                .title("Search docs")
                .input_schema(ToolSchema::for_input::<SearchDocsArgs>())
                .output_schema(ToolSchema::for_output::<SearchHits>())
                .safety(
                    ToolSafety::default()
                        .effect(Effect::ReadOnly)
                        .idempotency(Idempotency::Idempotent),
                ),
        ),
        spec(
            ToolSpec::builder("delete_all", "Delete every record. Takes no arguments.")
                .safety(ToolSafety::default().effect(Effect::Destructive)),
        ),
    ]
}
