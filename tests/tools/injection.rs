//! Hidden runtime injection: built-in injectables, user injectables, and the
//! errors of a missing store, secret or resource.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::events::{Delivery, EventBus, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::inject::{FromState, InjectError};
use tinyagents_tools::spec::InjectedKind;
use tinyagents_tools::*;

struct DocIndex {
    docs: Vec<&'static str>,
}

struct HttpClient {
    base: &'static str,
}

struct ApiKey(String);

impl AsRef<str> for ApiKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[derive(Clone)]
struct AppState {
    hits: Arc<AtomicUsize>,
    region: Region,
}

#[derive(Clone, Debug, PartialEq)]
struct Region(&'static str);

impl FromState<AppState> for Region {
    fn from_state(state: &AppState) -> Self {
        state.region.clone()
    }
}

struct Session {
    user: String,
}

fn run() -> RunContext<Session> {
    RunContext::builder(Session { user: "ada".into() })
        .run_id("run-7")
        .thread_id("thread-3")
        .store(DocIndex {
            docs: vec!["intro", "guide"],
        })
        .resource(HttpClient {
            base: "http://127.0.0.1:9",
        })
        .secret(ApiKey("sk-test-123".into()))
        .workspace_root("/srv/workspace")
        .build()
}

fn state() -> AppState {
    AppState {
        hits: Arc::new(AtomicUsize::new(0)),
        region: Region("eu"),
    }
}

fn inject<T: Inject<AppState, Session>>(rt: &ToolRuntime<Session>) -> Result<T, InjectError> {
    T::inject(&state(), rt)
}

#[test]
fn every_built_in_injectable_receives_its_runtime_part() {
    let rt = ToolRuntime::new(run(), "call-42", "search_docs").with_attempt(2);
    assert_eq!(inject::<RunId>(&rt).unwrap().as_str(), "run-7");
    assert_eq!(inject::<ThreadId>(&rt).unwrap().as_str(), "thread-3");
    assert_eq!(inject::<ToolCallId>(&rt).unwrap().as_str(), "call-42");
    assert_eq!(inject::<Ctx<Session>>(&rt).unwrap().user, "ada");
    assert_eq!(
        inject::<RunContext<Session>>(&rt)
            .unwrap()
            .run_id()
            .as_str(),
        "run-7"
    );
    assert_eq!(inject::<ToolRuntime<Session>>(&rt).unwrap().attempt(), 2);
    assert_eq!(
        inject::<Store<DocIndex>>(&rt).unwrap().docs,
        ["intro", "guide"]
    );
    assert_eq!(
        inject::<Resource<HttpClient>>(&rt).unwrap().base,
        "http://127.0.0.1:9"
    );
    assert_eq!(
        inject::<Secret<ApiKey>>(&rt).unwrap().expose().0,
        "sk-test-123"
    );
    assert_eq!(
        inject::<WorkspaceRoot>(&rt).unwrap().path(),
        std::path::Path::new("/srv/workspace")
    );
    assert_eq!(inject::<State<Region>>(&rt).unwrap().0, Region("eu"));
    let whole = inject::<State<AppState>>(&rt).unwrap();
    whole.hits.fetch_add(1, Ordering::Relaxed);
    let _emitter: EventEmitter = inject(&rt).unwrap();
    let _writer: StreamWriter = inject(&rt).unwrap();
    let token: CancellationToken = inject(&rt).unwrap();
    assert!(!token.is_cancelled());
}

#[test]
fn the_call_token_fires_when_the_run_is_cancelled() {
    let run = run();
    let rt = ToolRuntime::new(run.clone(), "c", "t");
    let token: CancellationToken = inject(&rt).unwrap();
    run.cancel();
    assert!(token.is_cancelled());
}

#[test]
fn injected_kinds_are_listed_for_the_spec() {
    fn kind<T: Inject<AppState, Session>>() -> InjectedKind {
        T::KIND
    }
    assert_eq!(kind::<Secret<ApiKey>>(), InjectedKind::Secret);
    assert_eq!(kind::<Store<DocIndex>>(), InjectedKind::Store);
    assert_eq!(kind::<Resource<HttpClient>>(), InjectedKind::Resource);
    assert_eq!(kind::<CancellationToken>(), InjectedKind::Cancellation);
    assert_eq!(kind::<State<Region>>(), InjectedKind::State);
    assert_eq!(kind::<Ctx<Session>>(), InjectedKind::Context);
    assert_eq!(kind::<ToolCallId>(), InjectedKind::ToolCallId);
    assert_eq!(kind::<StreamWriter>(), InjectedKind::Stream);
    assert_eq!(kind::<EventEmitter>(), InjectedKind::Events);
}

#[test]
fn a_missing_store_secret_or_resource_is_fatal_and_names_no_internals() {
    let bare = ToolRuntime::new(
        RunContext::builder(Session { user: "x".into() }).build(),
        "c",
        "t",
    );
    let errors = [
        (
            inject::<Store<DocIndex>>(&bare).map(|_| ()).unwrap_err(),
            "DocIndex",
        ),
        (
            inject::<Secret<ApiKey>>(&bare).map(|_| ()).unwrap_err(),
            "ApiKey",
        ),
        (
            inject::<Resource<HttpClient>>(&bare)
                .map(|_| ())
                .unwrap_err(),
            "HttpClient",
        ),
        (
            inject::<WorkspaceRoot>(&bare).map(|_| ()).unwrap_err(),
            "workspace root",
        ),
    ];
    for (err, what) in errors {
        let internal = err.to_string();
        let tool_error = err.into_tool_error();
        assert_eq!(tool_error.class(), ErrorClass::Fatal);
        assert!(matches!(
            tool_error.kind(),
            ErrorKind::InjectionFailed { .. }
        ));
        let shown = tool_error.message();
        assert_eq!(
            shown,
            "the tool could not run: a resource it needs is not available"
        );
        for secret_word in [
            "DocIndex",
            "ApiKey",
            "HttpClient",
            "injection",
            "registered",
        ] {
            assert!(!shown.contains(secret_word), "{shown}");
        }
        // The application still learns what was missing.
        assert!(internal.contains(what), "{internal}");
        assert!(std::error::Error::source(&tool_error).is_some());
    }
}

#[test]
fn a_user_type_becomes_injectable_by_implementing_inject() {
    struct CurrentUser(String);
    impl<S> Inject<S, Session> for CurrentUser {
        fn inject(_: &S, rt: &ToolRuntime<Session>) -> Result<Self, InjectError> {
            Ok(CurrentUser(rt.context().user.clone()))
        }
    }
    let rt = ToolRuntime::new(run(), "c", "t");
    assert_eq!(inject::<CurrentUser>(&rt).unwrap().0, "ada");
    assert_eq!(
        <CurrentUser as Inject<(), Session>>::KIND,
        InjectedKind::Custom
    );
}

#[test]
fn secrets_show_no_value_in_debug_output_anywhere() {
    let run = run();
    let rt = ToolRuntime::new(run.clone(), "c", "t");
    let secret: Secret<ApiKey> = inject(&rt).unwrap();
    for shown in [
        format!("{secret:?}"),
        format!("{run:?}"),
        format!("{rt:?}"),
        format!("{:?}", run.secrets()),
    ] {
        assert!(!shown.contains("sk-test-123"), "{shown}");
    }
    assert_eq!(format!("{secret:?}"), "Secret<ApiKey>(***)");
    assert_eq!(run.secrets().redaction_values().len(), 1);
}

#[tokio::test]
async fn progress_and_custom_events_carry_the_call_ids() {
    use std::sync::Mutex;
    struct Recorder(Arc<Mutex<Vec<ToolEvent<'static>>>>);
    impl EventSubscriber for Recorder {
        fn on_event(&self, event: &ToolEvent) {
            self.0.lock().unwrap().push(event.clone().into_owned());
        }
        fn delivery(&self) -> Delivery {
            Delivery::Inline
        }
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut bus = EventBus::new();
    bus.subscribe(Recorder(Arc::clone(&seen)));
    let rt = ToolRuntime::new(run(), "call-9", "search_docs").with_events(Arc::new(bus));
    let writer: StreamWriter = inject(&rt).unwrap();
    writer.progress(1.0, Some(4.0), Some("indexing"));
    let emitter: EventEmitter = inject(&rt).unwrap();
    emitter.emit("cache.hit", serde_json::json!({"key": "intro"}));
    let events = seen.lock().unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].kind, EventKind::Progress);
    assert_eq!(events[0].progress.as_ref().unwrap().total, Some(4.0));
    assert_eq!(events[1].kind, EventKind::Custom);
    assert_eq!(events[1].name.as_deref(), Some("cache.hit"));
    for e in events.iter() {
        assert_eq!(e.call_id.as_str(), "call-9");
        assert_eq!(e.run_id.as_str(), "run-7");
        assert_eq!(e.thread_id.as_str(), "thread-3");
        assert_eq!(e.tool, "search_docs");
    }
}

#[tokio::test]
async fn a_panicking_or_slow_subscriber_does_not_break_emission() {
    struct Panicker;
    impl EventSubscriber for Panicker {
        fn on_event(&self, _: &ToolEvent) {
            panic!("subscriber bug");
        }
        fn delivery(&self) -> Delivery {
            Delivery::Inline
        }
    }
    let mut bus = EventBus::new();
    bus.subscribe(Panicker);
    bus.subscribe(|_: &ToolEvent| std::thread::sleep(std::time::Duration::from_millis(50)));
    let bus = Arc::new(bus);
    let rt = ToolRuntime::new(run(), "c", "t").with_events(Arc::clone(&bus));
    let writer = rt.stream_writer();
    let started = std::time::Instant::now();
    for i in 0..2000 {
        writer.progress(i as f64, None, None);
    }
    // 2000 events to a 50 ms subscriber would take 100 s if emission waited.
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(bus.panics(), 2000);
    assert!(bus.dropped() > 0, "a full queue drops instead of blocking");
}
