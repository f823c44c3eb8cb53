//! Tools of the official MCP conformance suite whose schemas carry JSON
//! Schema 2020-12 keywords and MCP annotations beyond what a plain struct
//! gives, written as schemars argument structs:
//!
//! - [`json_schema_2020_12_tool`] (scenario `json-schema-2020-12`, SEP-1613
//!   and SEP-2106): `$defs` with an `$anchor`, a `$ref`, `allOf`/`anyOf` and
//!   `if`/`then`/`else`, each added with `#[schemars(extend(...))]`;
//! - [`test_custom_headers`] and [`test_custom_headers_null`] (scenarios
//!   `http-custom-header-server-validation` and
//!   `http-custom-header`, SEP-2243): arguments annotated with
//!   `x-mcp-header`, which a client mirrors into `Mcp-Param-{Name}` HTTP
//!   headers and the server checks against the body.
//!
//! An optional argument is written `#[serde(default, skip_serializing_if =
//! "Option::is_none")]` with `#[schemars(with = "T")]`: its property is then
//! `{"type": T}`, not required and without `"default": null`, as the suite
//! declares it (an `x-mcp-header` property needs a single primitive `type`).

use tinyagents_tools::prelude::*;
use tinyagents_tools::tool;

// A postal address: `$defs/address` of the schema, anchored as
// `addressDef`. (Plain comments: a doc comment would become a
// `description` the suite's document does not have.)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
struct Address {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    street: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    city: Option<String>,
}

// How to reach the person: by phone (then `phone` is required) or by
// email (then `email` is). Inlined, as `{"type": "string", "enum": [...]}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum ContactMethod {
    Phone,
    Email,
}

/// A contact: a phone number or an email address at least (`allOf`/`anyOf`),
/// and the one `contactMethod` chooses (`if`/`then`/`else`: the phone number
/// for `phone`, else the email address).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend(
    "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if" = {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then" = {"required": ["phone"]},
    "else" = {"required": ["email"]},
))]
pub struct ContactArgs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Address")]
    address: Option<Address>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "contactMethod"
    )]
    #[schemars(with = "ContactMethod")]
    contact_method: Option<ContactMethod>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    email: Option<String>,
}

/// Tool with JSON Schema 2020-12 features.
#[tool(read_only, idempotent, local)]
pub async fn json_schema_2020_12_tool(args: ContactArgs) -> String {
    let (street, city) = args
        .address
        .map(|a| (a.street.unwrap_or_default(), a.city.unwrap_or_default()))
        .unwrap_or_default();
    // The schema guarantees the number or the address `contactMethod` names.
    let reach = match args.contact_method {
        Some(ContactMethod::Phone) => args.phone,
        Some(ContactMethod::Email) | None => args.email.or(args.phone),
    };
    format!(
        "name: {}, street: {street}, city: {city}, contact: {}",
        args.name.unwrap_or_default(),
        reach.unwrap_or_default()
    )
}

/// Arguments of [`test_custom_headers`]: every kind of value a client
/// mirrors into an `Mcp-Param-{Name}` header, and two it must not.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomHeadersArgs {
    /// Plain ASCII string value
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
    /// Integer numeric value
    #[schemars(extend("x-mcp-header" = "Priority"))]
    pub priority: i64,
    /// Boolean value
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("x-mcp-header" = "Verbose"))]
    pub verbose: Option<bool>,
    /// Boolean true value
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("x-mcp-header" = "Debug"))]
    pub debug: Option<bool>,
    /// Empty string value
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "EmptyVal"))]
    pub empty_val: Option<String>,
    /// Value for header named "Method" — tests that x-mcp-header "Method" produces Mcp-Param-Method (not Mcp-Method)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "Method"))]
    pub method_val: Option<String>,
    /// Floating point value — no x-mcp-header annotation, should not be mirrored
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64")]
    pub float_val: Option<f64>,
    /// Non-ASCII string value — requires Base64 encoding
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "NonAscii"))]
    pub non_ascii_val: Option<String>,
    /// String with leading/trailing whitespace — requires Base64 encoding
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "Whitespace"))]
    pub whitespace_val: Option<String>,
    /// String with leading space only — requires Base64 encoding
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "LeadingSpace"))]
    pub leading_space_val: Option<String>,
    /// String with trailing space only — requires Base64 encoding
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "TrailingSpace"))]
    pub trailing_space_val: Option<String>,
    /// String with internal spaces only — plain ASCII, no Base64
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "InternalSpace"))]
    pub internal_space_val: Option<String>,
    /// String with control characters — requires Base64 encoding
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "ControlChar"))]
    pub control_char_val: Option<String>,
    /// String with carriage return and line feed — requires Base64 encoding
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "CrLf"))]
    pub crlf_val: Option<String>,
    /// String with leading tab — requires Base64 encoding
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("x-mcp-header" = "Tab"))]
    pub tab_val: Option<String>,
    /// No x-mcp-header annotation - should not be mirrored
    pub query: String,
}

/// A tool with x-mcp-header annotations to test custom header mirroring and encoding
#[tool(read_only, idempotent, local)]
pub async fn test_custom_headers(args: CustomHeadersArgs) -> String {
    let _ = args;
    "Custom headers test completed".to_owned()
}

/// Arguments of [`test_custom_headers_null`]: `verbose` is left out (or
/// null) to check that its header is left out too.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomHeadersNullArgs {
    /// Plain ASCII string value
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
    /// Integer numeric value
    #[schemars(extend("x-mcp-header" = "Priority"))]
    pub priority: i64,
    /// Boolean value — will be null to test omission
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("x-mcp-header" = "Verbose"))]
    pub verbose: Option<bool>,
    /// No x-mcp-header annotation
    pub query: String,
}

/// A tool for testing null/omitted x-mcp-header parameter handling
#[tool(read_only, idempotent, local)]
pub async fn test_custom_headers_null(args: CustomHeadersNullArgs) -> String {
    let _ = args;
    "Custom headers test completed".to_owned()
}
