//! Workspace confinement: a corpus of escapes, all refused, and ordinary
//! paths accepted.

use std::path::Path;

use tinyagents_tools::policy::{PathViolation, WorkspacePath, resolve_in_root};

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("notes/2026")).unwrap();
    std::fs::write(dir.path().join("notes/today.md"), "hello").unwrap();
    dir
}

#[test]
fn ordinary_paths_resolve_inside_the_root() {
    let ws = workspace();
    let root = ws.path().canonicalize().unwrap();
    for (raw, expected) in [
        ("notes/today.md", "notes/today.md"),
        ("./notes/today.md", "notes/today.md"),
        ("notes/2026/../today.md", "notes/today.md"),
        ("notes/new-file.md", "notes/new-file.md"),
        ("new-dir/deeper/file.txt", "new-dir/deeper/file.txt"),
        ("notes/résumé.md", "notes/résumé.md"),
    ] {
        let resolved = resolve_in_root(ws.path(), raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
        assert_eq!(resolved, root.join(expected), "{raw}");
    }
    // An absolute path inside the root is accepted.
    let inside = root.join("notes/today.md");
    assert_eq!(
        resolve_in_root(ws.path(), inside.to_str().unwrap()).unwrap(),
        inside
    );
}

#[test]
fn every_escape_in_the_corpus_is_refused_with_its_rule() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "top secret").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path(), ws.path().join("link_out")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            ws.path().join("notes/secret_link"),
        )
        .unwrap();
        std::os::unix::fs::symlink("../../..", ws.path().join("notes/up")).unwrap();
    }
    let corpus: Vec<(String, &str)> = vec![
        ("../secret.txt".into(), "escapes_root"),
        ("notes/../../secret.txt".into(), "escapes_root"),
        ("./../..".into(), "escapes_root"),
        ("..".into(), "escapes_root"),
        ("/etc/passwd".into(), "absolute_outside_root"),
        (
            outside.path().join("secret.txt").display().to_string(),
            "absolute_outside_root",
        ),
        ("~/.ssh/id_rsa".into(), "home_shortcut"),
        ("~root/x".into(), "home_shortcut"),
        ("notes\0/../../etc".into(), "control_character"),
        ("notes/today.md\n".into(), "control_character"),
        ("..\\..\\windows".into(), "backslash"),
        ("notes\\today.md".into(), "backslash"),
        ("\u{2025}/\u{2025}/etc".into(), "look_alike"),
        ("\u{FF0E}\u{FF0E}/etc".into(), "look_alike"),
        ("notes\u{2215}..\u{2215}..".into(), "look_alike"),
        ("notes\u{FF0F}today.md".into(), "look_alike"),
        ("".into(), "empty"),
        #[cfg(unix)]
        ("link_out/secret.txt".into(), "symlink_escape"),
        #[cfg(unix)]
        ("link_out".into(), "symlink_escape"),
        #[cfg(unix)]
        ("notes/secret_link".into(), "symlink_escape"),
        #[cfg(unix)]
        ("notes/up/etc/passwd".into(), "symlink_escape"),
        #[cfg(unix)]
        ("link_out/new-file.txt".into(), "symlink_escape"),
    ];
    for (raw, rule) in &corpus {
        let err = resolve_in_root(ws.path(), raw)
            .err()
            .unwrap_or_else(|| panic!("{raw:?} was accepted"));
        assert_eq!(err.rule(), *rule, "{raw:?}: {err}");
        // The message explains; it never repeats the path.
        if raw.len() > 3 {
            assert!(!err.to_string().contains(raw.as_str()), "{err}");
        }
    }
    assert!(corpus.len() >= 17);
}

#[test]
fn a_missing_root_is_refused_not_guessed() {
    let err = resolve_in_root(Path::new("/no/such/root/anywhere"), "a.txt").unwrap_err();
    assert_eq!(err, PathViolation::RootUnavailable);
}

#[test]
fn the_argument_type_has_a_marked_string_schema() {
    let schema = schemars::schema_for!(WorkspacePath);
    assert_eq!(schema.get("type").unwrap(), "string");
    assert_eq!(schema.get("format").unwrap(), "workspace-path");
    let path: WorkspacePath = serde_json::from_str("\"a/b\"").unwrap();
    assert_eq!(path.as_str(), "a/b");
}

#[tokio::test]
async fn the_read_file_tool_refuses_every_escape_through_the_executor_and_shows_nothing_outside() {
    use tinyagents_tools::{RunContext, ToolExecutor};
    use tinyagents_tools_examples::ReadFileTool;
    use tinyagents_tools_tests::{call, execute_in, kind};

    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    let secret_file = outside.path().join("secret.txt");
    std::fs::write(&secret_file, "top secret").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), ws.path().join("link_out")).unwrap();
    let mut registry = tinyagents_tools::ToolRegistry::new();
    registry.register(ReadFileTool).unwrap();
    let exec = ToolExecutor::builder(registry, ()).build().unwrap();
    let run = RunContext::builder(()).workspace_root(ws.path()).build();
    let mut escapes = vec![
        "../secret.txt".to_owned(),
        "notes/../../secret.txt".to_owned(),
        secret_file.display().to_string(),
        "~/.ssh/id_rsa".to_owned(),
        "notes\0/../../etc".to_owned(),
        "..\\..\\secret.txt".to_owned(),
        "\u{2025}/\u{2025}/etc/passwd".to_owned(),
    ];
    if cfg!(unix) {
        escapes.push("link_out/secret.txt".to_owned());
    }
    for (i, path) in escapes.iter().enumerate() {
        let args = serde_json::json!({ "path": path });
        let r = execute_in(&exec, &run, call(&format!("e{i}"), "read_file", args)).await;
        assert_eq!(kind(&r), "denied", "{path:?}: {}", r.text());
        assert!(!r.text().contains("top secret"));
        assert!(!r.text().contains(path.as_str()), "{}", r.text());
    }
    let ok = execute_in(
        &exec,
        &run,
        call(
            "inside",
            "read_file",
            serde_json::json!({"path": "notes/today.md"}),
        ),
    )
    .await;
    assert!(ok.text().contains("hello"), "{}", ok.text());
}
