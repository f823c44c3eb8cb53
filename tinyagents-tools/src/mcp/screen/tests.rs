//! The screen's own cases.

use super::*;

fn passed(message: &str) -> Value {
    match screen(message.as_bytes(), ArgumentsTo::Meta) {
        Screened::Pass(bytes) => serde_json::from_slice(&bytes).unwrap(),
        other => panic!("{message}: {other:?}"),
    }
}

#[test]
fn a_call_s_arguments_travel_as_the_text_sent_and_the_rest_is_kept() {
    let sent = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t","arguments":{"k":"}\"]","k":2},"_meta":{"progressToken":3}}}"#;
    let out = passed(sent);
    assert_eq!(out["id"], "a");
    assert_eq!(out["params"]["name"], "t");
    assert!(out["params"].get("arguments").is_none());
    assert_eq!(out["params"]["_meta"]["progressToken"], 3);
    assert_eq!(
        out["params"]["_meta"][ARGUMENTS_KEY],
        r#"{"k":"}\"]","k":2}"#
    );
}

#[test]
fn a_call_without_meta_keeps_every_other_member_and_checks_each() {
    let sent = r#"{"jsonrpc":"2.0", "id":7,"method":"tools/call","params":{"name":"t", "arguments" : {"a":[1, 2]},"x\u0041":{"n":null}},"extra":[true]}"#;
    let out = passed(sent);
    let expected = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call", "extra": [true],
        "params": {"name": "t", "xA": {"n": null}, "_meta": {ARGUMENTS_KEY: r#"{"a":[1, 2]}"#}},
    });
    assert_eq!(out, expected);
    let without = passed(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}"#);
    assert_eq!(without["params"]["_meta"], json!({}));
    let (open, close) = (
        "[".repeat(MAX_MESSAGE_DEPTH + 1),
        "]".repeat(MAX_MESSAGE_DEPTH + 1),
    );
    let deep =
        format!(r#"{{"id":7,"method":"tools/call","params":{{"name":"t","x":{open}{close}}}}}"#);
    let answer = screen(deep.as_bytes(), ArgumentsTo::Meta);
    assert_eq!(answer, Screened::Answer(too_deep(json!(7))));
}

#[test]
fn a_client_cannot_send_the_screen_s_own_keys() {
    let sent = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","_meta":{{"{ARGUMENTS_KEY}":"{{}}","{REFUSAL_KEY}":{{"code":1}}}}}}}}"#
    );
    let out = passed(&sent);
    let meta = out["params"]["_meta"].as_object().unwrap();
    assert!(meta.is_empty(), "{meta:?}");
}

#[test]
fn a_malformed_call_becomes_a_refusal_the_session_answers_with_its_id() {
    let out = passed(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}"#);
    assert_eq!(out["id"], 9);
    assert_eq!(out["params"]["_meta"][REFUSAL_KEY]["code"], -32602);
    let repeated = passed(
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","name":"u"}}"#,
    );
    assert_eq!(repeated["params"]["_meta"][REFUSAL_KEY]["code"], -32602);
}

#[test]
fn text_that_is_not_json_is_a_parse_error_and_blank_is_nothing() {
    for bad in [
        "x",
        "{",
        r#"{"a":1"#,
        r#"{"a" 1}"#,
        r#"{"a":1} 2"#,
        r#"{"id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":}}}"#,
    ] {
        assert_eq!(
            screen(bad.as_bytes(), ArgumentsTo::Meta),
            Screened::Answer(parse_error()),
            "{bad}"
        );
    }
    assert_eq!(screen(b"  \r", ArgumentsTo::Meta), Screened::Skip);
}

#[test]
fn other_messages_pass_as_sent() {
    let sent = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert_eq!(
        screen(sent.as_bytes(), ArgumentsTo::Meta),
        Screened::Pass(sent.as_bytes().to_vec())
    );
}

#[test]
fn a_member_is_judged_as_serde_json_judges_it() {
    let cases: [&[u8]; 26] = [
        br#""plain""#,
        br#""""#,
        "\"caf\u{e9}\"".as_bytes(),
        br#""esc\"aped""#,
        br#""\u00e9\n""#,
        br#""bad \x escape""#,
        b"\"a raw\ttab\"",
        b"\"\xff\xfe\"",
        b"0",
        b"-0",
        b"7",
        b"-42",
        b"01",
        b"-",
        b"123456789012345678",
        b"1234567890123456789012",
        b"1e400",
        b"1.5",
        b"1.",
        b"true",
        b"nul",
        b"null",
        b"[1, {\"a\": 2}]",
        b"{\"a\":}",
        b"{\"a\":1}",
        b"{\"a\":\"\xc3\"}",
    ];
    for raw in cases {
        let shown = String::from_utf8_lossy(raw);
        let parsed = serde_json::from_slice::<Value>(raw);
        assert_eq!(check(raw).is_ok(), parsed.is_ok(), "{shown}");
        let id = parsed
            .as_ref()
            .is_ok_and(|v| v.is_string() || v.is_number());
        assert_eq!(is_id(raw), id, "{shown}");
        if raw[0] == b'"' {
            let text = string_of(raw).map(|t| t.into_owned());
            assert_eq!(text, serde_json::from_slice::<String>(raw).ok(), "{shown}");
        }
    }
}

#[test]
fn keys_with_escapes_reach_rmcp_as_the_same_keys() {
    let sent = r#"{"jsonrpc":"2.0","id":"q\"1","method":"tools/call","params":{"name":"t","w\"x\\y\u00e9":1,"caf\u00e9":"\u00e9"},"z\n":0}"#;
    let out = passed(sent);
    let expected = json!({
        "jsonrpc": "2.0", "id": "q\"1", "method": "tools/call", "z\n": 0,
        "params": {"name": "t", "w\"x\\y\u{e9}": 1, "caf\u{e9}": "\u{e9}", "_meta": {}},
    });
    assert_eq!(out, expected);
}

/// Over HTTP a plain call goes on as sent, its argument text beside it;
/// a call rmcp could not read as sent, or with `_meta` (where a client
/// could pass the screen's own keys), is rewritten as over stdio.
#[cfg(feature = "mcp-http")]
#[test]
fn beside_a_call_rmcp_reads_as_sent_goes_unchanged_with_its_text() {
    let beside = |message: &str| screen(message.as_bytes(), ArgumentsTo::Beside);
    let call = |params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#)
    };
    let arguments = r#"{"b":1, "b" : "}\"]"}"#;
    for params in [
        format!(r#"{{"name":"t","arguments":{arguments}}}"#),
        // Unknown to the one-pass reading, judged member by member.
        format!(r#"{{"name":"t","arguments":{arguments},"task":{{"ttl":5}}}}"#),
    ] {
        let sent = call(&params);
        assert_eq!(
            beside(&sent),
            Screened::AsSent(Some(arguments.to_owned())),
            "{sent}"
        );
    }
    for params in [r#"{"name":"t"}"#, r#"{"name":"t","arguments":null}"#] {
        assert_eq!(beside(&call(params)), Screened::AsSent(None), "{params}");
    }
    let (open, close) = (
        "[".repeat(MAX_MESSAGE_DEPTH + 1),
        "]".repeat(MAX_MESSAGE_DEPTH + 1),
    );
    let rewritten = [
        call(&format!(
            r#"{{"name":"t","arguments":{{"a":{open}{close}}}}}"#
        )),
        call(r#"{"name":"t","arguments":{},"_meta":{"progressToken":1}}"#),
        r#"{"jsonrpc":"2.0","id":1,"id":1,"method":"tools/call","params":{"name":"t"}}"#.to_owned(),
    ];
    for sent in rewritten {
        let Screened::Pass(bytes) = beside(&sent) else {
            panic!("{sent}: not rewritten")
        };
        let out: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(out["params"]["_meta"].is_object(), "{sent}: {out}");
    }
    for params in [r#"{"arguments":{}}"#, r#"{"name":"t","arguments":[1]}"#] {
        let Screened::Pass(bytes) = beside(&call(params)) else {
            panic!("{params}: not refused")
        };
        let out: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            out["params"]["_meta"][REFUSAL_KEY]["code"], -32602,
            "{params}"
        );
    }
}
