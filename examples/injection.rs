//! Hidden injection: everything a tool receives that the model never sees.
//!
//! ```sh
//! cargo run --example injection
//! ```
//!
//! One tool takes the application state, the run's context, a store, a
//! secret, its call id, a stream writer, an event emitter and its
//! cancellation token, next to one model-visible argument. The example
//! prints the schema the model gets (one property), runs calls through the
//! executor with a subscriber that prints progress and custom events, and
//! shows what happens when a model forges a hidden argument, when a tool
//! echoes the secret, and when a run lacks the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::prelude::*;

/// The executor's application state, shared by every run. `State<T>`
/// hands each call a clone, so what calls share sits behind an `Arc`.
#[derive(Clone, Default)]
struct AppState {
    greetings_sent: Arc<AtomicU64>,
}

/// This run's context: whom the agent works for.
struct Session {
    user: String,
}

/// A store registered on the run: the user's address book.
struct Contacts {
    entries: Vec<(&'static str, &'static str)>,
}

impl Contacts {
    fn email_of(&self, name: &str) -> Option<&'static str> {
        self.entries
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, email)| *email)
    }
}

/// A secret registered on the run. It is only reachable through
/// `Secret<MailPassword>`, and its text is masked wherever it would reach
/// the model or an event.
struct MailPassword(String);

impl AsRef<str> for MailPassword {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

// The arguments of `send_greeting`, the only part the model fills in. The
// doc comments below are what the model reads.

/// Whom to greet.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GreetArgs {
    /// The contact to greet, by first name.
    name: String,
}

/// What [`send_greeting`] reports back.
#[derive(Serialize, JsonSchema)]
struct Sent {
    to: String,
    message: String,
    call_id: String,
    sent_so_far: u64,
}

/// Send a short greeting email to one of the user's contacts.
#[tool(mutating, networked, timeout = "5s")]
#[allow(clippy::too_many_arguments)]
async fn send_greeting(
    args: GreetArgs,
    #[inject] state: State<AppState>,
    #[inject] session: Ctx<Session>,
    #[inject] contacts: Store<Contacts>,
    #[inject] password: Secret<MailPassword>,
    #[inject] call_id: ToolCallId,
    #[inject] progress: StreamWriter,
    #[inject] events: EventEmitter,
    #[inject] cancel: CancellationToken,
) -> Result<Sent, ToolError> {
    progress.progress(1.0, Some(3.0), Some("looking the contact up"));
    let to = contacts.email_of(&args.name).ok_or_else(|| {
        ToolError::repair(format!(
            "`name`: no contact is called {:?}; ask the user for the address",
            args.name
        ))
    })?;
    progress.progress(2.0, Some(3.0), Some("signing in to the mail server"));
    // A real tool would hand the password to its SMTP client; it never
    // needs to print it.
    let signed_in = !password.expose().as_ref().is_empty();
    if cancel.is_cancelled() || !signed_in {
        return Err(ToolError::retry("the mail server is not reachable"));
    }
    let message = format!("Hello {}, greetings from {}!", args.name, session.user);
    let sent_so_far = state.greetings_sent.fetch_add(1, Ordering::Relaxed) + 1;
    events.emit("mail.sent", json!({ "to": to, "bytes": message.len() }));
    progress.progress(3.0, Some(3.0), Some("sent"));
    Ok(Sent {
        to: to.to_owned(),
        message,
        call_id: call_id.to_string(),
        sent_so_far,
    })
}

/// A careless diagnostic tool: it puts the secret into its output. The
/// executor masks it before the model, an event or a log line sees it.
#[tool(read_only, local)]
async fn mail_settings(#[inject] password: Secret<MailPassword>) -> String {
    format!(
        "server smtp.example.org:587, password {}",
        password.expose().as_ref()
    )
}

/// Prints progress, custom events and outcomes as they happen.
struct PrintEvents;

impl EventSubscriber for PrintEvents {
    fn on_event(&self, e: &ToolEvent) {
        let detail = match e.kind {
            EventKind::Progress => e.progress.as_ref().map(|p| {
                format!(
                    "{}/{} {}",
                    p.progress,
                    p.total.unwrap_or(0.0),
                    p.message.as_deref().unwrap_or("")
                )
            }),
            EventKind::Custom => Some(format!(
                "{} {}",
                e.name.as_deref().unwrap_or("?"),
                e.data.as_ref().map(|d| d.to_string()).unwrap_or_default()
            )),
            _ => e
                .error_kind
                .map(|kind| format!("[{}: {kind}]", e.error_class.expect("a class"))),
        };
        println!(
            "   {:<15} {:<7} {:<14} {}",
            e.kind.as_str(),
            e.call_id,
            e.tool,
            detail.unwrap_or_default()
        );
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

const PASSWORD: &str = "correct-horse-battery-staple";

fn run_with(contacts: bool) -> RunContext<Session> {
    let mut run = RunContext::builder(Session {
        user: "Ada".to_owned(),
    })
    .run_id("run-1")
    .secret(MailPassword(PASSWORD.to_owned()));
    if contacts {
        run = run.store(Contacts {
            entries: vec![("Grace", "grace@example.org"), ("Alan", "alan@example.org")],
        });
    }
    run.build()
}

/// The model's calls: two honest ones, a forged one, a careless tool.
fn model_calls() -> Vec<ToolCall> {
    vec![
        ToolCall::new("c1", "send_greeting", json!({"name": "Grace"})),
        ToolCall::new("c2", "send_greeting", json!({"name": "Linus"})),
        // The model tries to pick the password and the call id itself.
        ToolCall::new(
            "c3",
            "send_greeting",
            json!({"name": "Alan", "password": "guess", "call_id": "c999"}),
        ),
        ToolCall::new("c4", "mail_settings", json!({})),
    ]
}

fn registry() -> Result<ToolRegistry<AppState, Session>, tinyagents_tools::RegistryError> {
    let mut registry = ToolRegistry::<AppState, Session>::default();
    registry
        .register(SendGreetingTool)?
        .register(MailSettingsTool)?;
    Ok(registry)
}

#[cfg_attr(test, allow(dead_code))]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = registry()?;

    println!("== 1. What the model sees, and what stays hidden");
    let spec = registry.get("send_greeting").expect("registered").spec();
    println!("   input schema: {}", spec.input_schema.as_value());
    for hidden in &spec.injected {
        println!("   hidden: {:<9} {:?}", hidden.name, hidden.kind);
    }

    let executor = ToolExecutor::builder(registry, AppState::default())
        .subscribe(PrintEvents)
        .build()?;
    let turn = Turn::new(1);
    let run = run_with(true);

    println!("\n== 2. Calls through the executor (events as they happen)");
    let results = executor.execute_batch(&run, &turn, model_calls()).await;

    println!("\n== 3. What goes back to the model");
    for r in &results {
        println!("   {:<3} {}", r.tool_call_id, r.text());
    }
    let leaked = results.iter().any(|r| r.text().contains(PASSWORD));
    println!("   the password appears in a result: {leaked}");

    println!("\n== 4. A run without the contacts store");
    let bare = run_with(false);
    let greeting = ToolCall::new("c5", "send_greeting", json!({"name": "Grace"}));
    let r = executor.execute(&bare, &turn, greeting).await;
    let e = r.error.as_ref().expect("refused");
    println!("   {} [{}: {}]", r.text(), e.class(), e.kind().as_str());
    println!(
        "\n   greetings sent by this executor: {}",
        executor.state().greetings_sent.load(Ordering::Relaxed)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_walkthrough_does_what_it_prints() {
        let spec = SendGreetingTool::spec();
        let visible: Vec<&str> = spec.input_schema.property_names().collect();
        assert_eq!(visible, ["name"]);
        assert_eq!(spec.injected.len(), 8);

        let executor = ToolExecutor::builder(registry().unwrap(), AppState::default())
            .build()
            .unwrap();
        let results = executor
            .execute_batch(&run_with(true), &Turn::new(1), model_calls())
            .await;
        let kinds: Vec<&str> = results.iter().map(ToolResult::outcome).collect();
        assert_eq!(kinds, ["ok", "tool", "invalid_arguments", "ok"]);
        assert_eq!(results[0].structured.as_ref().unwrap()["call_id"], "c1");
        assert!(results[2].text().contains("`password`"));
        assert!(!results[2].text().contains("guess"));
        assert!(results[3].text().contains("[redacted]"));
        assert!(results.iter().all(|r| !r.text().contains(PASSWORD)));
        assert_eq!(executor.state().greetings_sent.load(Ordering::Relaxed), 1);

        let r = executor
            .execute(
                &run_with(false),
                &Turn::new(1),
                ToolCall::new("c5", "send_greeting", json!({"name": "Grace"})),
            )
            .await;
        assert_eq!(r.outcome(), "injection_failed");
        assert!(!r.text().contains("Contacts"), "{}", r.text());
    }
}
