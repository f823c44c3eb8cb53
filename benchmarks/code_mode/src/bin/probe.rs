//! The candidate sandboxes of code mode, measured side by side on the same
//! questions: start (runtime + context + a trivial program), the cost of
//! one host call from a program (a name and JSON text in, JSON text out),
//! what stops an endless loop and how fast, what stops unbounded
//! allocation, and the memory one instance holds.
//!
//! `cargo run --release --bin probe --features quickjs` (or `boa`, `monty`).
// Built without an engine (the default features, for `code-mode-bench`),
// the shared helpers have no caller.
#![cfg_attr(
    not(any(feature = "quickjs", feature = "boa", feature = "monty")),
    allow(dead_code)
)]
#[cfg(any(feature = "quickjs", feature = "monty"))]
use std::time::Duration;
use std::time::Instant;

/// The median of `rounds` timings of `f`, in microseconds.
fn median_us(rounds: usize, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The host function every engine calls: JSON text in, JSON text out.
fn host(name: &str, args: &str) -> String {
    std::hint::black_box((name, args));
    String::from("{\"ok\":1}")
}

const CALLS: usize = 10_000;

/// Prints the cost of one host call (`how` the values cross), from the
/// medians `with` and `without` of [`CALLS`] calls with and without the
/// crossing, in microseconds.
fn print_host_call(how: &str, with: f64, without: f64) {
    println!(
        "one host call ({how}): {:.3} us; of which the crossing: {:.3} us",
        with / CALLS as f64,
        (with - without) / CALLS as f64
    );
}

/// Runs `stop` (a program that would never end by itself) and prints how
/// long it took to be stopped, and how.
fn print_stopped<T: std::fmt::Debug>(what: &str, stop: impl FnOnce() -> T) {
    let t = Instant::now();
    let r = stop();
    println!("{what}: stopped after {:?}: {r:?}", t.elapsed());
}

#[cfg(feature = "quickjs")]
mod quickjs {
    use super::*;
    use rquickjs::{Context, Function, Runtime};

    fn new_engine(deadline: Option<Instant>) -> (Runtime, Context) {
        let rt = Runtime::new().unwrap();
        rt.set_memory_limit(16 << 20);
        rt.set_max_stack_size(512 << 10);
        if let Some(d) = deadline {
            rt.set_interrupt_handler(Some(Box::new(move || Instant::now() > d)));
        }
        let ctx = Context::full(&rt).unwrap();
        ctx.with(|ctx| {
            let f = Function::new(ctx.clone(), |n: String, a: String| host(&n, &a)).unwrap();
            ctx.globals().set("__call", f).unwrap();
        });
        (rt, ctx)
    }

    pub fn run() {
        println!("== rquickjs 0.14 (QuickJS-ng, C, built by cc) ==");
        let start = median_us(200, || {
            let (_rt, ctx) = new_engine(None);
            ctx.with(|ctx| {
                let _: i32 = ctx.eval("1 + 1").unwrap();
            });
        });
        println!("start (runtime + context + eval `1+1`): {start:.1} us");
        let (rt, ctx) = new_engine(None);
        println!(
            "memory of one fresh instance: {} bytes",
            rt.memory_usage().memory_used_size
        );
        let prog = format!(
            "(() => {{ let n = 0; for (let i = 0; i < {CALLS}; i++) {{ n += JSON.parse(__call('t', JSON.stringify({{i}}))).ok }} return n }})()"
        );
        let empty = format!(
            "(() => {{ let n = 0; for (let i = 0; i < {CALLS}; i++) {{ n += JSON.parse(((n, a) => '{{\"ok\":1}}')('t', JSON.stringify({{i}}))).ok }} return n }})()"
        );
        let with = median_us(11, || {
            ctx.with(|ctx| {
                let _: i32 = ctx.eval(prog.as_str()).unwrap();
            })
        });
        let without = median_us(11, || {
            ctx.with(|ctx| {
                let _: i32 = ctx.eval(empty.as_str()).unwrap();
            })
        });
        print_host_call("JSON both ways", with, without);
        drop((ctx, rt));
        print_stopped("endless loop, 50 ms deadline (interrupt handler)", || {
            let (_rt, ctx) = new_engine(Some(Instant::now() + Duration::from_millis(50)));
            ctx.with(|ctx| ctx.eval::<(), _>("for(;;){}").map_err(|e| format!("{e}")))
        });
        let (_rt, ctx) = new_engine(None);
        let r = ctx.with(|ctx| {
            ctx.eval::<(), _>("let a = []; for(;;) { a.push('x'.repeat(1000) + a.length) }")
                .map_err(|e| format!("{e}"))
        });
        println!("unbounded allocation, 16 MiB limit: {r:?}");
        let (_rt, ctx) = new_engine(None);
        let r = ctx.with(|ctx| {
            ctx.eval::<(), _>("function f(){ return f() + 1 } f()")
                .map_err(|e| format!("{e}"))
        });
        println!("unbounded recursion, 512 KiB stack: {r:?}");
        let r = ctx.with(|ctx| {
            ctx.eval::<(), _>("let x = ;\n").map_err(|_| {
                let e = ctx.catch();
                format!(
                    "{:?}",
                    e.as_object().map(|o| (
                        o.get::<_, String>("message").ok(),
                        o.get::<_, String>("stack").ok()
                    ))
                )
            })
        });
        println!("syntax error: {r:?}");
        let r = ctx.with(|ctx| ctx.eval::<String, _>("[typeof fetch, typeof require, typeof process, typeof Deno, typeof std, typeof os, typeof XMLHttpRequest].join()").unwrap());
        println!("ambient APIs (fetch, require, process, Deno, std, os, XMLHttpRequest): {r}");
        let r = ctx.with(|ctx| {
            ctx.eval::<String, _>("[typeof Date.now, typeof Math.random].join()")
                .unwrap()
        });
        println!("clock and randomness present in Context::full: {r} (removed by code mode)");
    }
}

#[cfg(feature = "boa")]
mod boa {
    use super::*;
    use boa_engine::{Context, JsValue, NativeFunction, Source, js_string};

    fn new_engine() -> Context {
        let mut ctx = Context::default();
        ctx.runtime_limits_mut()
            .set_loop_iteration_limit(10_000_000);
        ctx.runtime_limits_mut().set_recursion_limit(512);
        ctx.register_global_callable(
            js_string!("__call"),
            2,
            NativeFunction::from_fn_ptr(|_, args, ctx| {
                let n = args
                    .first()
                    .cloned()
                    .unwrap_or_default()
                    .to_string(ctx)?
                    .to_std_string_escaped();
                let a = args
                    .get(1)
                    .cloned()
                    .unwrap_or_default()
                    .to_string(ctx)?
                    .to_std_string_escaped();
                Ok(JsValue::from(js_string!(host(&n, &a))))
            }),
        )
        .unwrap();
        ctx
    }

    /// Runs `code` in a fresh engine: `Ok` when it ran to its end, else why
    /// it stopped.
    fn eval_fresh(code: &str) -> Result<(), String> {
        new_engine()
            .eval(Source::from_bytes(code))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    pub fn run() {
        println!("== boa_engine 0.22 (pure Rust, default features off) ==");
        let start = median_us(50, || {
            let mut ctx = new_engine();
            ctx.eval(Source::from_bytes("1 + 1")).unwrap();
        });
        println!("start (context + eval `1+1`): {start:.1} us");
        let mut ctx = new_engine();
        let prog = format!(
            "(() => {{ let n = 0; for (let i = 0; i < {CALLS}; i++) {{ n += JSON.parse(__call('t', JSON.stringify({{i}}))).ok }} return n }})()"
        );
        let empty = format!(
            "(() => {{ let n = 0; for (let i = 0; i < {CALLS}; i++) {{ n += JSON.parse(((n, a) => '{{\"ok\":1}}')('t', JSON.stringify({{i}}))).ok }} return n }})()"
        );
        let with = median_us(5, || {
            ctx.eval(Source::from_bytes(&prog)).unwrap();
        });
        let without = median_us(5, || {
            ctx.eval(Source::from_bytes(&empty)).unwrap();
        });
        print_host_call("JSON both ways", with, without);
        print_stopped(
            "endless loop (loop_iteration_limit 1e7; no clock-based interrupt)",
            || eval_fresh("for(;;){}"),
        );
        print_stopped("endless loop with a call per iteration", || {
            eval_fresh("let i = 0; function g(){ i++; } for(;;){ g() }")
        });
        let r = eval_fresh("function f(){ return f() + 1 } f()");
        println!("unbounded recursion (recursion_limit 512): {r:?}");
        let r = eval_fresh("let x = ;\n");
        println!("syntax error: {r:?}");
        println!(
            "unbounded allocation: boa has no heap limit (RuntimeLimits: loops, recursion, stack only); not run"
        );
    }
}

#[cfg(feature = "monty")]
mod monty_probe {
    use super::*;
    use monty::{MontyRun, RunProgress};
    use monty_types::{CompileOptions, MontyObject, PrintWriter, ResourceLimits, ResourceTracker};

    fn limits() -> ResourceTracker {
        ResourceTracker::new(ResourceLimits {
            max_duration: Some(Duration::from_millis(50)),
            max_suspensions: 1_000_000,
            ..ResourceLimits::default()
        })
    }

    fn drive(code: &str) -> Result<MontyObject, String> {
        let f = MontyObject::Function {
            name: "call".to_owned(),
            docstring: None,
        };
        let runner = MontyRun::new(
            code.to_owned(),
            "main.py",
            vec!["call".to_owned()],
            CompileOptions::default(),
        )
        .map_err(|e| e.to_string())?;
        let mut p = runner
            .start(vec![f], limits(), PrintWriter::Disabled)
            .map_err(|e| e.to_string())?;
        loop {
            match p {
                RunProgress::Complete(v) => return Ok(v),
                RunProgress::FunctionCall(c) => {
                    let (n, a) = match c.args.as_slice() {
                        [MontyObject::String(n), MontyObject::String(a)] => (n.clone(), a.clone()),
                        _ => (String::new(), String::new()),
                    };
                    let out = MontyObject::String(host(&n, &a));
                    p = c
                        .resume(out, PrintWriter::Disabled)
                        .map_err(|e| e.to_string())?;
                }
                _ => return Err("unexpected suspension".into()),
            }
        }
    }

    pub fn run() {
        println!(
            "== monty 0.0.23 (pure Rust Python subset; newest release 1.4.0 needs rustc 1.96) =="
        );
        let start = median_us(200, || {
            drive("1 + 1").unwrap();
        });
        println!("start (parse + compile + run `1+1`): {start:.1} us");
        let prog =
            format!("n = 0\nfor i in range({CALLS}):\n    n += len(call('t', '{{\"i\": 1}}'))\nn");
        let empty = format!("n = 0\nfor i in range({CALLS}):\n    n += len('{{\"ok\":1}}')\nn");
        let with = median_us(11, || {
            drive(&prog).unwrap();
        });
        let without = median_us(11, || {
            drive(&empty).unwrap();
        });
        print_host_call(
            "strings both ways, no JSON parse in the program",
            with,
            without,
        );
        print_stopped("endless loop, 50 ms max_duration", || {
            drive("while True:\n    pass\n")
        });
        let r = drive("def f():\n    return f() + 1\nf()\n");
        println!(
            "unbounded recursion (max_recursion_depth 1000): {:?}",
            r.map_err(|e| e.chars().take(200).collect::<String>())
        );
        let r = drive("x = (\n");
        println!("syntax error: {r:?}");
        println!(
            "unbounded allocation: max_memory needs the executable to install monty-alloc as its global allocator (a library cannot); not run"
        );
    }
}

fn main() {
    #[cfg(feature = "quickjs")]
    quickjs::run();
    #[cfg(feature = "boa")]
    boa::run();
    #[cfg(feature = "monty")]
    monty_probe::run();
}
