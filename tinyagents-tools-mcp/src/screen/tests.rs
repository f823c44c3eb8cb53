//! The screen's own cases.

use super::*;

fn passed(message: &str) -> Value {
    match screen(message.as_bytes()) {
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
    let answer = screen(deep.as_bytes());
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
            screen(bad.as_bytes()),
            Screened::Answer(parse_error()),
            "{bad}"
        );
    }
    assert_eq!(screen(b"  \r"), Screened::Skip);
}

#[test]
fn other_messages_pass_as_sent() {
    let sent = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert_eq!(
        screen(sent.as_bytes()),
        Screened::Pass(sent.as_bytes().to_vec())
    );
    // A byte order mark is ignored, with the whitespace around it.
    for marked in [
        format!("\u{feff}{sent}"),
        format!(" \u{feff}{sent}\n"),
        format!("\u{feff} \r\n{sent}"),
    ] {
        assert_eq!(
            screen(marked.as_bytes()),
            Screened::Pass(sent.as_bytes().to_vec()),
            "{marked:?}"
        );
    }
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

/// The one-pass reading of a plain call writes what the general path
/// writes; anything it does not know is left to the general path.
#[test]
fn a_plain_call_is_rewritten_as_the_general_path_rewrites_it() {
    let call = |params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#)
    };
    let plain = [
        call(r#"{"name":"add","arguments":{"a":40,"b":2}}"#),
        call(r#"{"name":"t\u00e9\"","arguments":{"k":"}\"]","k":2, "n": {"x": [1, {}]}}}"#),
        call(r#"{"arguments":null,"name":"t"}"#),
        call(r#"{"name":"t"}"#),
        "{ \"params\" : { \"name\" : \"t\" , \"arguments\" : { } } ,\n \"method\":\"tools/call\", \"id\" : \"q\\\"1\", \"jsonrpc\":\"2.0\" }".to_owned(),
        r#"{"jsonrpc":"2.0","id":-7,"method":"tools/call","params":{"name":"t","arguments":{}}}"#
            .to_owned(),
    ];
    for sent in &plain {
        let b = sent.as_bytes();
        let fast = plain::plain_call(b).unwrap_or_else(|| panic!("{sent}: not plain"));
        let (top, _) = members(b, 0).unwrap();
        let Ok(general) = tools_call(b, &top) else {
            panic!("{sent}: refused")
        };
        let read = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).unwrap();
        assert_eq!(read(&fast), read(&general), "{sent}");
        assert_eq!(passed(sent), read(&general), "{sent}");
    }
    let (open, close) = (
        "[".repeat(MAX_MESSAGE_DEPTH + 1),
        "]".repeat(MAX_MESSAGE_DEPTH + 1),
    );
    let general = [
        call(r#"{"name":"t","arguments":{},"_meta":{"progressToken":1}}"#),
        call(r#"{"name":"t","arguments":{},"task":{}}"#),
        call(r#"{"name":"t","name":"u"}"#),
        call(r#"{"n\u0061me":"t"}"#),
        call(r#"{"name":"t","arguments":[1]}"#),
        call(r#"{"name":"t","arguments":{"a":}}"#),
        call(r#"{"name":7}"#),
        call(&format!(
            r#"{{"name":"t","arguments":{{"a":{open}{close}}}}}"#
        )),
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"t"}}"#.to_owned(),
        r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"name":"t"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"t"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"x":0}"#.to_owned(),
    ];
    for sent in &general {
        assert_eq!(plain::plain_call(sent.as_bytes()), None, "{sent}");
    }
}

/// Over HTTP a plain call reaches rmcp without its arguments, and their
/// text, as sent, is found in the body beside it; any other message is left
/// to the screen.
#[cfg(feature = "http")]
#[test]
fn over_http_a_plain_call_s_arguments_are_left_beside_the_message() {
    let sent = " \u{feff}{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"tools/call\",\"params\":{\"arguments\":{\"a\": [1, {\"b\":\"\\u00e9\",\"b\":2}]},\"name\":\"add\"}}\n";
    let (message, arguments) = split_plain_call(sent.as_bytes()).expect("plain");
    assert_eq!(
        arguments.as_deref(),
        Some(r#"{"a": [1, {"b":"\u00e9","b":2}]}"#)
    );
    let read = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).unwrap();
    let bare =
        json!({"jsonrpc": "2.0", "id": "q", "method": "tools/call", "params": {"name": "add"}});
    assert_eq!(read(&message), bare);
    for without in [
        r#"{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"add"}}"#,
        r#"{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"add","arguments":null}}"#,
    ] {
        let (message, arguments) = split_plain_call(without.as_bytes()).expect("plain");
        assert_eq!(
            (read(&message), arguments),
            (bare.clone(), None),
            "{without}"
        );
    }
    for other in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"progressToken":1}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ] {
        assert!(split_plain_call(other.as_bytes()).is_none(), "{other}");
    }
}

#[test]
fn brackets_in_strings_do_not_nest() {
    use super::scan::depth_over;
    assert!(!depth_over(br#"{"a": "[[[[[[["}"#, 2));
    assert!(depth_over(br#"{"a": "\"[[[", "b": [[1]]}"#, 2));
    assert!(!depth_over(b"[[]]", 2));
    assert!(depth_over(b"[[[]]]", 2));
}

/// The one-pass reading bounds the arguments' nesting where the general
/// path does: arguments exactly as deep as rmcp reads are read plainly (and
/// rewritten as the general path rewrites them), one level more are left to
/// the general path.
#[test]
fn the_plain_reading_bounds_nesting_where_the_general_path_does() {
    use super::scan::{depth_over, value_end, value_end_within};
    for (levels, plain_reads) in [(MAX_MESSAGE_DEPTH - 1, true), (MAX_MESSAGE_DEPTH, false)] {
        let (open, close) = ("[".repeat(levels), "]".repeat(levels));
        let arguments = format!(r#"{{"a":{open}"[{{"{close}}}"#);
        assert_eq!(
            depth_over(arguments.as_bytes(), MAX_MESSAGE_DEPTH),
            !plain_reads
        );
        let sent = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{arguments}}}}}"#
        );
        let b = sent.as_bytes();
        assert_eq!(plain::plain_call(b).is_some(), plain_reads, "{levels}");
        let (top, _) = members(b, 0).unwrap();
        if plain_reads {
            let Ok(general) = tools_call(b, &top) else {
                panic!("{levels}: refused")
            };
            let read = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).unwrap();
            assert_eq!(read(&plain::plain_call(b).unwrap()), read(&general));
        }
        let whole = arguments.as_bytes();
        assert_eq!(value_end(whole, 0), Some(whole.len()));
        assert_eq!(
            value_end_within(whole, 0, MAX_MESSAGE_DEPTH),
            plain_reads.then_some(whole.len())
        );
    }
}
