//! Safety policies: the declared metadata of four tools, enforced by the
//! executor's middleware, one refusal at a time.
//!
//! ```sh
//! cargo run --example policies
//! ```
//!
//! An order-desk assistant has a read-only lookup, a refund that spends
//! money, a shell tool and a customer lookup whose output carries a token.
//! The example shows an access list (and the typo it catches when it is
//! built), per-turn exposure by relevance, an approver that approves, edits
//! and rejects refunds, redaction of a field, a per-turn call limit, and a
//! read-only run.

use std::num::NonZeroUsize;

use serde_json::{Value, json};
use tinyagents_tools::approval::{ApprovalDecision, ApprovalRequest, Approver};
use tinyagents_tools::async_trait;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::policy::{AccessPolicy, ConfirmationPolicy, ToolSelector};
use tinyagents_tools::prelude::*;
use tinyagents_tools::runtime::CallLimits;

/// Which orders to list.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// Only orders of this status: "open" or "shipped".
    status: String,
}

/// List the customer's orders with a given status.
#[tool(read_only, idempotent, local, tags = ["orders"])]
async fn list_orders(args: ListArgs) -> Vec<Value> {
    vec![json!({"order": "A-17", "status": args.status, "total": 42.0})]
}

/// Which order to refund, and how much.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RefundArgs {
    /// The order id, such as "A-17".
    order: String,
    /// The amount to refund, in euros.
    #[schemars(range(min = 0.01, max = 10000))]
    amount: f64,
}

/// Refund part or all of an order to the customer's card.
#[tool(mutating, networked, spend, tags = ["orders", "payments"])]
async fn refund_order(args: RefundArgs) -> String {
    format!("refunded {:.2} EUR on order {}", args.amount, args.order)
}

/// Run a shell command on the order server.
#[tool(destructive, local, shell)]
async fn run_shell(
    /// The command line.
    command: String,
) -> String {
    format!("would run: {command}")
}

/// Whom to look up.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CustomerArgs {
    /// The customer's email address.
    email: String,
}

/// Look a customer's account up.
#[tool(read_only, idempotent, local, redact(fields = ["api_token"]))]
async fn lookup_customer(args: CustomerArgs) -> Value {
    json!({"email": args.email, "tier": "gold", "api_token": "tok_live_51HxYz"})
}

/// The person behind the refund button: approves small refunds, caps
/// middle ones at 50 EUR (an edit, validated again), rejects large ones.
struct RefundDesk;

#[async_trait]
impl Approver for RefundDesk {
    async fn review(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let amount = request.arguments["amount"].as_f64().unwrap_or(f64::MAX);
        let decision = if amount <= 50.0 {
            ApprovalDecision::Approve
        } else if amount <= 200.0 {
            let mut capped = request.arguments.clone();
            capped["amount"] = json!(50.0);
            ApprovalDecision::Edit { arguments: capped }
        } else {
            ApprovalDecision::Reject {
                reason: "refunds above 200 EUR go through a supervisor".to_owned(),
            }
        };
        println!(
            "   ? {} asks approval ({:?}) for {}: {}",
            request.tool,
            request.reasons,
            request.arguments,
            match &decision {
                ApprovalDecision::Approve => "approved".to_owned(),
                ApprovalDecision::Edit { arguments } => format!("edited to {arguments}"),
                ApprovalDecision::Reject { reason } => format!("rejected: {reason}"),
                ApprovalDecision::Defer => "left for a person to decide".to_owned(),
            }
        );
        decision
    }
}

/// Prints each refusal with the policy that made it.
struct PrintRefusals;

impl EventSubscriber for PrintRefusals {
    fn on_event(&self, e: &ToolEvent) {
        if e.kind == EventKind::Rejected {
            println!(
                "   tool.rejected  {:<4} {:<16} by {}",
                e.call_id,
                e.tool,
                e.policy.as_deref().unwrap_or("the executor")
            );
        }
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

fn registry() -> Result<ToolRegistry, Box<dyn std::error::Error>> {
    let mut registry = ToolRegistry::new();
    registry
        .register(ListOrdersTool)?
        .register(RefundOrderTool)?
        .register(RunShellTool)?
        .register(LookupCustomerTool)?;
    Ok(registry)
}

/// The desk's executor: no shell, refunds approved by [`RefundDesk`], six
/// calls a turn, calls run one at a time (so the printout reads in order).
fn desk() -> Result<ToolExecutor, Box<dyn std::error::Error>> {
    let registry = registry()?;
    let no_shell = AccessPolicy::builder()
        .deny(["run_shell"])
        .build(&registry)?;
    Ok(ToolExecutor::builder(registry, ())
        .middleware(no_shell)
        .middleware(ConfirmationPolicy::new(RefundDesk))
        .subscribe(PrintRefusals)
        .configure(|c| {
            c.limits = CallLimits::none().per_turn(4);
            c.max_concurrency = NonZeroUsize::MIN;
        })
        .build()?)
}

/// The model's seven calls in a turn that advertises every tool.
fn model_calls() -> Vec<ToolCall> {
    vec![
        ToolCall::new("r1", "refund_order", json!({"order": "A-17", "amount": 20})),
        ToolCall::new(
            "r2",
            "refund_order",
            json!({"order": "A-17", "amount": 120}),
        ),
        ToolCall::new(
            "r3",
            "refund_order",
            json!({"order": "A-17", "amount": 900}),
        ),
        ToolCall::new("r4", "run_shell", json!({"command": "rm -rf /var/orders"})),
        ToolCall::new("r5", "lookup_customer", json!({"email": "ada@example.org"})),
        ToolCall::new("r6", "list_orders", json!({"status": "open"})),
        // The fifth call of the turn to reach its tool is over the limit of
        // four: the two refused above spent none of it.
        ToolCall::new("r7", "list_orders", json!({"status": "shipped"})),
    ]
}

fn print_results(results: &[ToolResult]) {
    for r in results {
        let verdict = r.error.as_ref().map_or("ok".to_owned(), |e| {
            format!("{}: {}", e.class(), e.kind().as_str())
        });
        println!("   {:<4} [{verdict}] {}", r.tool_call_id, r.text());
    }
}

#[cfg_attr(test, allow(dead_code))]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = registry()?;

    println!("== 1. An access list is checked against the registry when it is built");
    match AccessPolicy::builder().deny(["run_shel"]).build(&registry) {
        Ok(_) => println!("   (accepted)"),
        Err(e) => println!("   refused: {e}"),
    }
    let executor = desk()?;
    let run = RunContext::empty();

    println!("\n== 2. Per-turn exposure: the tools that fit the request are advertised");
    let selector = ToolSelector::builder()
        .rank_by_relevance(2)
        .build(executor.registry())?;
    let request = "refund order A-17, the customer's orders";
    let narrow = selector.turn(executor.registry(), &run, request, 1);
    let mut advertised: Vec<&String> = narrow.advertised().into_iter().flatten().collect();
    advertised.sort();
    println!("   request: {request:?}");
    println!("   advertised: {advertised:?}");
    let lookup = ToolCall::new("s1", "lookup_customer", json!({"email": "ada@example.org"}));
    print_results(&[executor.execute(&run, &narrow, lookup).await]);

    println!("\n== 3. A turn with every tool; seven calls (refusals as they happen)");
    let turn = Turn::new(2);
    let results = executor.execute_batch(&run, &turn, model_calls()).await;
    println!("\n== 4. What goes back to the model (the customer's token is masked)");
    print_results(&results);

    println!("\n== 5. The same desk in a read-only run");
    // The refund still needs an approver (the build refuses otherwise), but
    // read-only mode refuses it first.
    let read_only = ToolExecutor::builder(self::registry()?, ())
        .middleware(AccessPolicy::read_only())
        .middleware(ConfirmationPolicy::new(RefundDesk))
        .subscribe(PrintRefusals)
        .build()?;
    let everything = Turn::new(1);
    let results = read_only
        .execute_batch(
            &run,
            &everything,
            vec![
                ToolCall::new("o1", "list_orders", json!({"status": "open"})),
                ToolCall::new("o2", "refund_order", json!({"order": "A-17", "amount": 5})),
            ],
        )
        .await;
    print_results(&results);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_walkthrough_does_what_it_prints() {
        let typo = AccessPolicy::builder()
            .deny(["run_shel"])
            .build(&registry().unwrap());
        assert!(typo.unwrap_err().to_string().contains("`run_shell`"));

        let executor = desk().unwrap();
        let results = executor
            .execute_batch(&RunContext::empty(), &Turn::new(2), model_calls())
            .await;
        let kinds: Vec<&str> = results.iter().map(ToolResult::outcome).collect();
        assert_eq!(
            kinds,
            ["ok", "ok", "denied", "denied", "ok", "ok", "limit_exceeded"]
        );
        assert!(results[1].text().contains("50.00"), "{}", results[1].text());
        assert!(results[2].text().contains("supervisor"));
        assert!(!results[4].text().contains("tok_live"));
        assert!(results[4].text().contains("[redacted]"));

        let read_only = ToolExecutor::builder(registry().unwrap(), ())
            .middleware(AccessPolicy::read_only())
            .middleware(ConfirmationPolicy::new(RefundDesk))
            .build()
            .unwrap();
        let refund = ToolCall::new("o2", "refund_order", json!({"order": "A-17", "amount": 5}));
        let r = read_only
            .execute(&RunContext::empty(), &Turn::new(1), refund)
            .await;
        assert_eq!(r.outcome(), "denied");
    }
}
