//! Pieces that only continue what the reader is reading (visible text
//! with no byte that may start a marker, a run of a string in a JSON
//! call's object) are read where they are; these are the edges of that
//! way: the piece after them that does not only continue (a quote, a
//! backslash, a marker's first byte, half a UTF-8 character), and a
//! piece that reaches or breaks the size bound.

use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools::stream::{CallProblem, ModelOutput, OutputReader, StreamEvent, StreamLimits};

use super::text_support::{
    argument_texts, everywhere, everywhere_with, one_malformed_call, reader, whole,
};

/// `pieces` pushed one by one into a reader of `format`, then finished:
/// each event with how many pieces had been pushed when it came out.
fn fed(
    format: &TextFormat,
    limits: Option<StreamLimits>,
    pieces: &[&[u8]],
) -> Vec<(usize, StreamEvent)> {
    let mut r = reader(format);
    if let Some(limits) = limits {
        r = r.with_limits(limits);
    }
    let (mut events, mut timed) = (Vec::new(), Vec::new());
    for (i, piece) in pieces.iter().enumerate() {
        r.push(piece, &mut events);
        timed.extend(events.drain(..).map(|e| (i + 1, e)));
    }
    r.finish(&mut events);
    timed.extend(events.drain(..).map(|e| (pieces.len(), e)));
    timed
}

fn collect(events: &[(usize, StreamEvent)]) -> ModelOutput {
    ModelOutput::collect(events.iter().map(|(_, e)| e.clone()))
}

/// Call `index`'s argument fragments, joined.
fn fragments(events: &[(usize, StreamEvent)], index: usize) -> String {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::ArgumentsDelta(d) if d.index == index => Some(d.fragment.as_str()),
            _ => None,
        })
        .collect()
}

/// Each character of `text` a piece, or each byte.
fn characters(text: &str) -> Vec<&[u8]> {
    text.char_indices()
        .map(|(i, c)| &text.as_bytes()[i..i + c.len_utf8()])
        .collect()
}

fn bytes(text: &str) -> Vec<&[u8]> {
    text.as_bytes().chunks(1).collect()
}

/// Arguments whose strings hold an escaped quote, a backslash that closes
/// a string, non-ASCII of two and four bytes and a marker.
const ARGS: &str = r#"{"path": "é🦀.md", "content": "say \"hi\" <tool_call> \\", "append": false}"#;

#[test]
fn quotes_and_backslashes_alone_after_a_string_s_plain_pieces_keep_it_exact() {
    let hermes = TextFormat::hermes();
    let output = format!(
        "Saving it.\n<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {ARGS}}}\n</tool_call>\nDone."
    );
    let expected = everywhere(&hermes, &output);
    assert_eq!(argument_texts(&expected), [ARGS]);
    assert_eq!(expected.text(), "Saving it.\n\nDone.");
    // One character, then one byte at a time: the `\`, the `"` after it,
    // the `\` that closes `content` and each half of `é` arrive alone.
    for pieces in [characters(&output), bytes(&output)] {
        let events = fed(&hermes, None, &pieces);
        assert_eq!(collect(&events), expected);
        assert_eq!(fragments(&events, 0), ARGS);
    }
}

#[test]
fn a_character_split_across_pieces_after_plain_pieces_is_decoded_whole() {
    let hermes = TextFormat::hermes();
    let output = "Price: 5 € and 🦀!<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"São Paulo €🦀\"}}</tool_call>";
    let b = output.as_bytes();
    let euro = output.find('€').unwrap();
    let crab = output.find('🦀').unwrap();
    let sao = output.find("ão").unwrap();
    // Plain pieces, then `€` and `🦀` cut inside (in the text), then the
    // same inside a string value.
    let cuts = [
        0,
        3,
        euro,
        euro + 1,
        euro + 3,
        crab + 2,
        crab + 3,
        sao + 1,
        sao + 2,
        b.len() - 20,
        b.len() - 19,
        b.len(),
    ];
    let pieces: Vec<&[u8]> = cuts.windows(2).map(|w| &b[w[0]..w[1]]).collect();
    let events = fed(&hermes, None, &pieces);
    assert!(
        events
            .iter()
            .all(|(_, e)| !matches!(e, StreamEvent::Problem(_)))
    );
    let out = collect(&events);
    assert_eq!(out, whole(&hermes, output));
    assert_eq!(out.text(), "Price: 5 € and 🦀!");
    assert_eq!(argument_texts(&out), [r#"{"city": "São Paulo €🦀"}"#]);
}

#[test]
fn a_marker_s_first_byte_right_after_plain_text_is_held_back_until_decided() {
    let hermes = TextFormat::hermes();
    let output =
        "Hi <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call> a<b <tool_x";
    let out = everywhere(&hermes, output);
    assert_eq!(out.text(), "Hi  a<b <tool_x");
    assert_eq!(out.calls().count(), 1);
    // `<` alone after plain pieces shows nothing until the bytes after it
    // decide; `<b` then shows at once.
    let pieces: Vec<&[u8]> = ["Hi", " ", "<", "tool_call>"]
        .iter()
        .map(|p| p.as_bytes())
        .collect();
    let events = fed(&hermes, None, &pieces);
    let texts: Vec<(usize, &str)> = events
        .iter()
        .filter_map(|(n, e)| match e {
            StreamEvent::Text(t) => Some((*n, t.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(texts, [(1, "Hi"), (2, " ")]);
    let pieces: Vec<&[u8]> = ["x", "<", "b"].iter().map(|p| p.as_bytes()).collect();
    let events = fed(&hermes, None, &pieces);
    let texts: Vec<(usize, &str)> = events
        .iter()
        .filter_map(|(n, e)| match e {
            StreamEvent::Text(t) => Some((*n, t.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(texts, [(1, "x"), (3, "<b")]);
}

/// The object, before its string of `x`s: 34 bytes.
const HEAD: &str = r#"{"name": "f", "arguments": {"c": ""#;

#[test]
fn plain_pieces_that_reach_the_size_bound_exactly_are_read_and_one_byte_more_is_refused_then() {
    let limits = StreamLimits {
        max_argument_bytes: 64,
        max_argument_depth: 4,
    };
    let hermes = TextFormat::hermes();
    assert_eq!(HEAD.len(), 34);
    // 30 `x`s bring the object to 64 bytes, the bound, inside the string;
    // the 31st breaks it.
    let output = format!("<tool_call>{HEAD}{}\"}}}}</tool_call>ok", "x".repeat(40));
    let expected = everywhere_with(|| reader(&hermes).with_limits(limits), &output, 8);
    let failed = expected.failed().next().expect("refused");
    assert_eq!(failed.kind, CallProblem::TooLarge);
    // What arrived up to one byte past the bound.
    assert_eq!(failed.raw, format!("<tool_call>{HEAD}{}", "x".repeat(31)));
    assert_eq!(expected.text(), "ok");
    let x = "x".repeat(40);
    let start = format!("<tool_call>{HEAD}");
    for (to, past) in [(30, 31), (29, 33), (30, 40)] {
        // A piece that ends at the bound exactly (or one byte before it),
        // then one that breaks it: refused as that piece arrives.
        let pieces: Vec<&[u8]> = vec![
            start.as_bytes(),
            &x.as_bytes()[..to],
            &x.as_bytes()[to..past],
            &x.as_bytes()[past..],
            b"\"}}</tool_call>ok",
        ];
        let events = fed(&hermes, Some(limits), &pieces);
        assert_eq!(collect(&events), expected, "{to}, {past}");
        let refused_at = events.iter().find_map(|(n, e)| match e {
            StreamEvent::CallFailed(f) if f.kind == CallProblem::TooLarge => Some(*n),
            _ => None,
        });
        assert_eq!(refused_at, Some(3), "{to}, {past}");
    }
    // 27 `x`s: the whole object is 64 bytes and reads, fed a character at
    // a time or as one piece of string that ends at 61 bytes.
    let output = format!("<tool_call>{HEAD}{}\"}}}}</tool_call>", "x".repeat(27));
    let out = everywhere_with(|| reader(&hermes).with_limits(limits), &output, 8);
    assert_eq!(out.calls().count(), 1);
    let pieces: Vec<&[u8]> = vec![start.as_bytes(), &x.as_bytes()[..27], b"\"}}</tool_call>"];
    assert_eq!(collect(&fed(&hermes, Some(limits), &pieces)), out);
}

#[test]
fn a_call_that_starts_after_its_arguments_sends_them_once_its_id_is_read() {
    // Mistral writes the id after the arguments: the call starts, and
    // its arguments go out, only when the id's string has closed.
    let mistral = TextFormat::mistral();
    let args = r#"{"city": "São Paulo, \"SP\"", "days": 3}"#;
    let output = format!(
        "[TOOL_CALLS] [{{\"name\": \"get_weather\", \"arguments\": {args}, \"id\": \"abc123def\"}}]"
    );
    let expected = everywhere(&mistral, &output);
    assert_eq!(argument_texts(&expected), [args]);
    let pieces = characters(&output);
    let events = fed(&mistral, None, &pieces);
    assert_eq!(collect(&events), expected);
    assert_eq!(fragments(&events, 0), args);
    let id_closed = output.find("abc123def").unwrap() + "abc123def\"".len();
    let pieces_to = |bytes: usize| output[..bytes].chars().count();
    let started = events.iter().find_map(|(n, e)| match e {
        StreamEvent::CallStarted(s) => Some((*n, s.id.as_str().to_owned())),
        _ => None,
    });
    assert_eq!(
        started,
        Some((pieces_to(id_closed), "abc123def".to_owned()))
    );
    let first_fragment = events
        .iter()
        .find(|(_, e)| matches!(e, StreamEvent::ArgumentsDelta(_)))
        .map(|(n, _)| *n);
    assert_eq!(first_fragment, Some(pieces_to(id_closed)));
}

#[test]
fn a_string_read_after_the_object_stopped_being_a_call_s_is_kept_in_the_failed_call() {
    // A missing comma: the members can no longer be read, while the
    // strings after it still are (the call ends where its object does).
    let hermes = TextFormat::hermes();
    let call = r#"{"name": "write_file" "arguments": {"path": "a", "content": "a long string, then more"}}"#;
    let output = format!("<tool_call>{call}</tool_call>after");
    let out = everywhere(&hermes, &output);
    let failed = out.failed().next().expect("failed");
    assert_eq!(failed.kind, CallProblem::MalformedArguments);
    assert_eq!(failed.raw, format!("<tool_call>{call}</tool_call>"));
    assert_eq!(out.text(), "after");
}

#[test]
fn a_key_value_call_s_names_keys_and_the_space_between_its_pairs_wait_where_they_are() {
    let glm = TextFormat::glm45();
    // Keys of 1,024 bytes (as long as a name or key may be) and 1,025.
    let (longest, too_long) = ("k".repeat(1024), "k".repeat(1025));
    let output = format!(
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n \n\
         <arg_key>days</arg_key><arg_value>3</arg_value>\n</tool_call>ok \
         <tool_call>write_file\n<arg_key>{longest}</arg_key><arg_value>x</arg_value></tool_call>\
         <tool_call>write_file\n<arg_key>{too_long}</arg_key>\n<arg_value>x</arg_value>\n</tool_call>"
    );
    let out = everywhere(&glm, &output);
    assert_eq!(
        super::text_support::calls(&out),
        [
            (
                "get_weather".to_owned(),
                serde_json::json!({"city": "Paris", "days": 3})
            ),
            ("write_file".to_owned(), serde_json::json!({ longest: "x" })),
        ]
    );
    assert_eq!(out.text(), "ok ");
    // One byte longer, it is refused, whole as in pieces.
    let failed = out.failed().next().expect("refused");
    assert_eq!(failed.kind, CallProblem::MalformedMarkup);
    assert_eq!(failed.name.as_ref().map(|n| n.as_str()), Some("write_file"));
    let events = fed(&glm, None, &characters(&output));
    assert_eq!(collect(&events), out);
}

#[test]
fn a_name_and_an_id_written_as_text_wait_where_they_are_up_to_their_markers() {
    let v11 = TextFormat::mistral_v11();
    let output = "[TOOL_CALLS]get_weather[CALL_ID]abc123def[ARGS]{\"city\": \"Paris\"}\
                  [TOOL_CALLS]get_location[ARGS]{}";
    let out = everywhere(&v11, output);
    assert_eq!(
        super::text_support::ids(&out)[0],
        "abc123def",
        "the id is the one written"
    );
    assert_eq!(
        super::text_support::calls(&out),
        [
            (
                "get_weather".to_owned(),
                serde_json::json!({"city": "Paris"})
            ),
            ("get_location".to_owned(), serde_json::json!({})),
        ]
    );
    let events = fed(&v11, None, &characters(output));
    assert_eq!(collect(&events), out);
    // A name of 1,024 bytes (as long as a name may be) is read, one of
    // 1,025 refused, whole as in pieces.
    let longest = "n".repeat(1024);
    let out = everywhere(&v11, &format!("[TOOL_CALLS]{longest}[ARGS]{{}}"));
    assert_eq!(
        super::text_support::calls(&out),
        [(longest, serde_json::json!({}))]
    );
    let long = format!("[TOOL_CALLS]{}[ARGS]{{}}", "n".repeat(1025));
    let out = everywhere(&v11, &long);
    assert_eq!(
        out.failed().next().map(|f| f.kind),
        Some(CallProblem::MalformedMarkup)
    );
    assert_eq!(out.calls().count(), 0);
}

#[test]
fn raw_value_pieces_that_reach_the_size_bound_exactly_are_read_and_one_byte_more_is_refused_then() {
    let limits = StreamLimits {
        max_argument_bytes: 16,
        max_argument_depth: 4,
    };
    let glm = TextFormat::glm45();
    let head = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>";
    let read = |value: &str| format!("{head}{value}</arg_value>\n</tool_call>ok");
    let make = || reader(&glm).with_limits(limits);
    // 16 bytes, the bound: read.
    let x = "x".repeat(20);
    let out = everywhere_with(make, &read(&x[..16]), 8);
    assert_eq!(
        super::text_support::calls(&out),
        [(
            "get_weather".to_owned(),
            serde_json::json!({"city": &x[..16]})
        )]
    );
    let whole_output = read(&x[..16]);
    let tail = &whole_output[head.len() + 16..];
    let pieces: Vec<&[u8]> = vec![head.as_bytes(), &x.as_bytes()[..16], tail.as_bytes()];
    assert_eq!(collect(&fed(&glm, Some(limits), &pieces)), out);
    // 20 bytes: refused when the 17th arrives, with what arrived up to it.
    let expected = everywhere_with(make, &read(&x), 8);
    let failed = expected.failed().next().expect("refused");
    assert_eq!(failed.kind, CallProblem::TooLarge);
    assert_eq!(failed.raw, format!("{head}{}", &x[..17]));
    assert_eq!(expected.text(), "ok");
    let output = read(&x);
    let rest = &output[head.len() + 17..];
    let pieces: Vec<&[u8]> = vec![head.as_bytes(), &x.as_bytes()[..16], b"x", rest.as_bytes()];
    let events = fed(&glm, Some(limits), &pieces);
    assert_eq!(collect(&events), expected);
    let refused_at = events.iter().find_map(|(n, e)| match e {
        StreamEvent::CallFailed(f) if f.kind == CallProblem::TooLarge => Some(*n),
        _ => None,
    });
    assert_eq!(refused_at, Some(3));
}

/// Outputs cut off inside each kind of piece read in place: visible text,
/// a string of a JSON call's object, a raw parameter value.
fn cut_inside_each_in_place_read() -> [(TextFormat, &'static str); 3] {
    [
        (TextFormat::hermes(), "Plain text, then more"),
        (
            TextFormat::hermes(),
            "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"content\": \"abc",
        ),
        (
            TextFormat::glm45(),
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par",
        ),
    ]
}

#[test]
fn pieces_after_the_end_of_the_output_add_nothing_whatever_was_being_read() {
    for (format, output) in cut_inside_each_in_place_read() {
        let expected = everywhere(&format, output);
        for drain in [false, true] {
            let mut r = reader(&format);
            let mut events = Vec::new();
            for piece in characters(output) {
                r.push(piece, &mut events);
            }
            r.finish(&mut events);
            assert_eq!(ModelOutput::collect(events.clone()), expected, "{output:?}");
            let ended = if drain {
                events.clear();
                Vec::new()
            } else {
                events.clone()
            };
            // Plain bytes of what was being read, a quote, a marker's
            // first byte, a whole and a half character.
            let after: [&[u8]; 6] = [b"x", b"yz", b"\"", b"<", "é".as_bytes(), b"\xc3"];
            for piece in after {
                r.push(piece, &mut events);
            }
            r.finish(&mut events);
            assert_eq!(events, ended, "{output:?}, drained: {drain}");
        }
    }
}

#[test]
fn a_piece_after_a_held_back_utf8_byte_is_read_after_it_wherever_pieces_are_read_in_place() {
    let cases = [
        (TextFormat::hermes(), "Plain ", " text."),
        (
            TextFormat::hermes(),
            "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"content\": \"ab",
            "cd\"}}</tool_call>",
        ),
        (
            TextFormat::glm45(),
            "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>ab",
            "cd</arg_value>\n</tool_call>",
        ),
    ];
    for (format, head, tail) in cases {
        // `é` cut in two, each half a piece, after pieces read in place
        // and before more of them.
        let valid = format!("{head}é{tail}");
        let mut pieces = characters(head);
        pieces.extend([&b"\xc3"[..], b"\xa9"]);
        pieces.extend(characters(tail));
        let events = fed(&format, None, &pieces);
        let out = collect(&events);
        assert_eq!(out, everywhere(&format, &valid), "{valid:?}");
        assert!(out.problems.is_empty());
        // Its first byte alone, then a plain byte: the byte that cannot
        // complete it becomes U+FFFD, before the plain byte.
        let bad = [head.as_bytes(), b"\xc3", tail.as_bytes()].concat();
        let mut pieces = characters(head);
        pieces.push(b"\xc3");
        pieces.extend(characters(tail));
        let mut out = collect(&fed(&format, None, &pieces));
        assert_eq!(
            out,
            collect(&fed(&format, None, &[bad.as_slice()])),
            "{head:?}"
        );
        let problems = std::mem::take(&mut out.problems);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].raw, "\\xc3");
        assert_eq!(out, everywhere(&format, &format!("{head}\u{FFFD}{tail}")));
    }
}

#[test]
fn a_caller_that_takes_events_out_or_adds_its_own_between_pieces_gets_each_fragment_byte_once() {
    let hermes = TextFormat::hermes();
    let output = format!(
        "Saving it.\n<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {ARGS}}}\n</tool_call>\nDone."
    );
    let expected = everywhere(&hermes, &output);
    // Events of the caller's own that the reader must never add to:
    // another call's fragment, and a signature (Hermes writes none).
    let mine = |i: usize| match i % 2 {
        0 => StreamEvent::ArgumentsDelta(tinyagents_tools::stream::ArgumentsDelta {
            index: 7,
            fragment: format!("mine {i}"),
        }),
        _ => StreamEvent::ReasoningSignature(format!("mine {i}")),
    };
    let threes: Vec<&[u8]> = output.as_bytes().chunks(3).collect();
    let four_characters: Vec<&[u8]> = tinyagents_tools::testkit::chunk_text(
        &output,
        tinyagents_tools::testkit::Chunking::Fixed(4),
    )
    .into_iter()
    .map(str::as_bytes)
    .collect();
    for pieces in [characters(&output), bytes(&output), threes, four_characters] {
        let mut r = reader(&hermes);
        let (mut out, mut seen, mut put) = (Vec::new(), Vec::new(), Vec::new());
        for (i, piece) in pieces.iter().enumerate() {
            r.push(piece, &mut out);
            match i % 4 {
                // Taken out.
                0 => seen.append(&mut out),
                // Taken out, then one of the caller's own put in: `out`
                // may be as long as the reader left it.
                1 => {
                    seen.append(&mut out);
                    out.push(mine(i));
                    put.push(mine(i));
                }
                // Left in.
                2 => {}
                // One of the caller's own put after the reader's.
                _ => {
                    out.push(mine(i));
                    put.push(mine(i));
                }
            }
        }
        r.finish(&mut out);
        seen.append(&mut out);
        let (theirs, ours): (Vec<_>, Vec<_>) = seen.into_iter().partition(|e| match e {
            StreamEvent::ArgumentsDelta(d) => d.index == 7,
            StreamEvent::ReasoningSignature(_) => true,
            _ => false,
        });
        // The caller's own are as it made them: nothing was added to them.
        assert_eq!(theirs, put);
        let ours: Vec<(usize, StreamEvent)> = ours.into_iter().map(|e| (0, e)).collect();
        assert_eq!(collect(&ours), expected);
        assert_eq!(fragments(&ours, 0), ARGS);
    }
}

/// `text` cut into pieces of `n` bytes, the first `offset` bytes long
/// (so every cut position of pieces of `n` bytes is met by some offset).
fn pieces_of(text: &str, n: usize, offset: usize) -> Vec<&[u8]> {
    let b = text.as_bytes();
    let first = offset.min(b.len());
    let mut pieces = vec![&b[..first]];
    pieces.extend(b[first..].chunks(n));
    pieces.retain(|p| !p.is_empty());
    pieces
}

/// Arguments whose strings hold each escape next to another: an escaped
/// quote, an escaped backslash just before the closing quote, `\n`, and
/// a value after them.
const ESCAPES: &str = r#"{"content": "x\"y\\z\\\"w\n\\", "path": "a\\b", "append": true}"#;

#[test]
fn multi_byte_pieces_that_end_inside_an_escape_or_hold_a_quote_keep_the_string_exact() {
    let hermes = TextFormat::hermes();
    let output = format!(
        "Saving.\n<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {ESCAPES}}}\n</tool_call>"
    );
    let expected = everywhere(&hermes, &output);
    assert_eq!(argument_texts(&expected), [ESCAPES]);
    // Pieces of 2 to 5 bytes at every offset: some end just after a
    // backslash (the next starts with the byte it escapes), some hold a
    // backslash and the byte it escapes, some hold the closing quote in
    // their middle, with the bytes after the string.
    for n in 2..=5 {
        for offset in 0..n {
            let pieces = pieces_of(&output, n, offset);
            let events = fed(&hermes, None, &pieces);
            assert_eq!(collect(&events), expected, "{n} bytes, from {offset}");
            assert_eq!(fragments(&events, 0), ESCAPES, "{n} bytes, from {offset}");
        }
    }
    // Each piece ends just after a backslash that escapes the next byte,
    // or holds the closing quote with what follows it.
    let head = "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"content\": \"";
    let pieces: Vec<&[u8]> = vec![
        head.as_bytes(),
        br#"ab\"#,
        br#""c\"#,
        br#"\\"#,
        br#""d"#,
        br#"e", "#,
        br#""path": "p"}}</tool_call>"#,
    ];
    let output: String = pieces
        .iter()
        .map(|p| std::str::from_utf8(p).unwrap())
        .collect();
    let expected = everywhere(&hermes, &output);
    let events = fed(&hermes, None, &pieces);
    assert_eq!(collect(&events), expected);
    let args = r#"{"content": "ab\"c\\\"de", "path": "p"}"#;
    assert_eq!(argument_texts(&expected), [args]);
    assert_eq!(fragments(&events, 0), args);
}

#[test]
fn multi_byte_pieces_cut_inside_a_character_are_decoded_whole_in_text_and_in_strings() {
    let hermes = TextFormat::hermes();
    // Characters of 2, 3 and 4 bytes, next to each other and to ASCII, in
    // the text and in a string of the arguments.
    let args = r#"{"city": "São Paulo €🦀 ñé€x🦀🦀"}"#;
    let output = format!(
        "Olá, ça coûte 5 € 🦀🦀 ok.<tool_call>{{\"name\": \"get_weather\", \"arguments\": {args}}}</tool_call>"
    );
    let expected = everywhere(&hermes, &output);
    assert!(expected.problems.is_empty());
    assert_eq!(expected.text(), "Olá, ça coûte 5 € 🦀🦀 ok.");
    assert_eq!(argument_texts(&expected), [args]);
    for n in 2..=6 {
        for offset in 0..n {
            let pieces = pieces_of(&output, n, offset);
            let events = fed(&hermes, None, &pieces);
            assert!(
                events
                    .iter()
                    .all(|(_, e)| !matches!(e, StreamEvent::Problem(_))),
                "{n} bytes, from {offset}"
            );
            assert_eq!(collect(&events), expected, "{n} bytes, from {offset}");
            assert_eq!(fragments(&events, 0), args, "{n} bytes, from {offset}");
        }
    }
    // A piece that is not UTF-8 at all, inside the string and in the
    // text: U+FFFD and a problem each, as whole.
    let bad = [
        "A\u{e9}b<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"P".as_bytes(),
        b"\xff\xfeab",
        b"\"}}</tool_call>x",
        b"\xc3(z",
    ];
    let joined = bad.concat();
    let mut out = collect(&fed(&hermes, None, &bad));
    assert_eq!(out, collect(&fed(&hermes, None, &[joined.as_slice()])));
    assert_eq!(std::mem::take(&mut out.problems).len(), 3);
    assert_eq!(out.text(), "A\u{e9}bx\u{FFFD}(z");
    assert_eq!(
        argument_texts(&out),
        ["{\"city\": \"P\u{FFFD}\u{FFFD}ab\"}"]
    );
}

#[test]
fn a_text_piece_holding_a_marker_s_first_byte_where_no_marker_starts_is_shown_at_once() {
    let hermes = TextFormat::hermes();
    let pieces: Vec<&[u8]> = [
        "a<b ",
        "x<<c",
        "< 1 ",
        "c <t",
        "ool_",
        "call",
        ">{\"name\": \"get_location\", \"arguments\": {}}</tool_call>",
    ]
    .iter()
    .map(|p| p.as_bytes())
    .collect();
    let output: String = pieces
        .iter()
        .map(|p| std::str::from_utf8(p).unwrap())
        .collect();
    let expected = everywhere(&hermes, &output);
    assert_eq!(expected.text(), "a<b x<<c< 1 c ");
    assert_eq!(expected.calls().count(), 1);
    let events = fed(&hermes, None, &pieces);
    assert_eq!(collect(&events), expected);
    let texts: Vec<(usize, &str)> = events
        .iter()
        .filter_map(|(n, e)| match e {
            StreamEvent::Text(t) => Some((*n, t.as_str())),
            _ => None,
        })
        .collect();
    // `<b`, `<<c` and `< ` start no marker: shown with their piece; `<t`
    // at the end of a piece may, and waits for the next.
    assert_eq!(texts, [(1, "a<b "), (2, "x<<c"), (3, "< 1 "), (4, "c ")]);
}

#[test]
fn whitespace_of_any_width_after_a_call_leaves_the_output_ending_with_the_call() {
    let hermes = TextFormat::hermes();
    let call = "<tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>";
    // No-break space (2 bytes), ideographic space (3), then ASCII
    // whitespace: the output still ends with its call.
    let spaces = format!("{call}\n\u{a0} \u{3000}\t\u{a0}\u{a0}\n");
    // The same, then a letter: it ends with text.
    let text = format!("{spaces}\u{e9}");
    for (output, reason) in [
        (&spaces, tinyagents_tools::stream::FinishReason::ToolCalls),
        (&text, tinyagents_tools::stream::FinishReason::EndOfStream),
    ] {
        let expected = everywhere(&hermes, output);
        assert_eq!(expected.finish.as_ref().map(|f| &f.reason), Some(&reason));
        for n in 1..=4 {
            for offset in 0..n {
                let pieces = pieces_of(output, n, offset);
                assert_eq!(
                    collect(&fed(&hermes, None, &pieces)),
                    expected,
                    "{n} bytes, from {offset}"
                );
            }
        }
    }
}

#[test]
fn multi_byte_pieces_that_cross_the_size_bound_are_refused_at_the_piece_holding_its_first_byte_past()
 {
    let limits = StreamLimits {
        max_argument_bytes: 64,
        max_argument_depth: 4,
    };
    let hermes = TextFormat::hermes();
    // The 65th byte of the object is the one that breaks the bound. In
    // the first output it is a backslash that an escape's backslash
    // escapes, and the string holds escapes and characters of two bytes
    // on the way; in the second it is a plain byte of a string inside an
    // array of the arguments, reached by plain pieces of up to eight
    // bytes.
    let escapes = format!(
        "<tool_call>{HEAD}{}\"}}}}</tool_call>ok",
        r#"é\\x\"yz"#.repeat(6)
    );
    let nested = format!(
        "<tool_call>{}{}\"]}}}}</tool_call>ok",
        r#"{"name": "f", "arguments": {"a": [1, ""#,
        "abcdefgh".repeat(8)
    );
    let past = "<tool_call>".len() + 64;
    assert_eq!(&escapes[past - 1..=past], r"\\");
    assert!(
        nested[past - 8..=past]
            .bytes()
            .all(|b| b.is_ascii_lowercase())
    );
    for output in [escapes, nested] {
        let expected = everywhere_with(|| reader(&hermes).with_limits(limits), &output, 8);
        let failed = expected.failed().next().expect("refused");
        assert_eq!(failed.kind, CallProblem::TooLarge);
        assert_eq!(failed.raw, &output[..=past]);
        assert_eq!(expected.text(), "ok");
        for n in 2..=8 {
            for offset in 0..n {
                let pieces = pieces_of(&output, n, offset);
                let events = fed(&hermes, Some(limits), &pieces);
                assert_eq!(collect(&events), expected, "{n} bytes, from {offset}");
                // The piece that holds byte `past`, counted from 1.
                let mut end = 0;
                let holding = pieces
                    .iter()
                    .position(|p| {
                        end += p.len();
                        end > past
                    })
                    .map(|i| i + 1);
                let refused_at = events.iter().find_map(|(i, e)| match e {
                    StreamEvent::CallFailed(f) if f.kind == CallProblem::TooLarge => Some(*i),
                    _ => None,
                });
                assert_eq!(refused_at, holding, "{n} bytes, from {offset}");
            }
        }
    }
}

/// Characters of two, three and four bytes, and a string of them between
/// ASCII.
const WIDE: &str = "é€🦀 aé€b🦀";

#[test]
fn whole_characters_of_two_three_and_four_bytes_continue_what_is_read_in_place() {
    let hermes = TextFormat::hermes();
    let glm = TextFormat::glm45();
    let args = format!(r#"{{"path": "{WIDE}", "content": "x\"{WIDE}\\"}}"#);
    let json = format!(
        "{WIDE}<tool_call>{{\"name\": \"write_file\", \"arguments\": {args}}}</tool_call>{WIDE}"
    );
    let raw = format!(
        "{WIDE}<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>{WIDE}</arg_value>\n</tool_call>{WIDE}"
    );
    for (format, output) in [(&hermes, &json), (&glm, &raw)] {
        let expected = everywhere(format, output);
        assert_eq!(expected.calls().count(), 1, "{output:?}");
        assert_eq!(expected.text(), format!("{WIDE}{WIDE}"));
        let pieces = characters(output);
        let events = fed(format, None, &pieces);
        assert_eq!(collect(&events), expected, "{output:?}");
        // Visible text is shown with the piece that holds it: each
        // character of the text before the call at its own piece.
        let shown: Vec<(usize, &str)> = events
            .iter()
            .filter_map(|(n, e)| match e {
                StreamEvent::Text(t) => Some((*n, t.as_str())),
                _ => None,
            })
            .take(WIDE.chars().count())
            .collect();
        let each: Vec<(usize, &str)> = characters(WIDE)
            .into_iter()
            .enumerate()
            .map(|(i, c)| (i + 1, std::str::from_utf8(c).unwrap()))
            .collect();
        assert_eq!(shown, each, "{output:?}");
    }
    // Fed a character at a time, taken out after each piece: every byte of
    // the arguments once, in order, each character with its own piece.
    let events = fed(&hermes, None, &characters(&json));
    assert_eq!(fragments(&events, 0), args);
    let start = json.find("<tool_call>").unwrap()
        + r#"<tool_call>{"name": "write_file", "arguments": {"path": ""#.len();
    let first = json[..start].chars().count();
    let sent: Vec<(usize, &str)> = events
        .iter()
        .filter_map(|(n, e)| match e {
            StreamEvent::ArgumentsDelta(d) => Some((*n, d.fragment.as_str())),
            _ => None,
        })
        .skip_while(|(n, _)| *n <= first)
        .take(WIDE.chars().count())
        .collect();
    let each: Vec<(usize, &str)> = characters(WIDE)
        .into_iter()
        .enumerate()
        .map(|(i, c)| (first + i + 1, std::str::from_utf8(c).unwrap()))
        .collect();
    assert_eq!(sent, each);
}

#[test]
fn a_wide_character_that_reaches_the_size_bound_is_read_and_one_past_it_is_refused_at_its_piece() {
    let hermes = TextFormat::hermes();
    let glm = TextFormat::glm45();
    let hermes_head = format!("<tool_call>{HEAD}");
    let glm_head = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>";
    let json = |value: &str| format!("{hermes_head}{value}\"}}}}</tool_call>ok");
    let raw = |value: &str| format!("{glm_head}{value}</arg_value>\n</tool_call>ok");
    // A JSON object's bound (64 bytes: the head holds 34, the string's end
    // 3) and a raw value's (16 bytes); `past`: where the first byte past
    // the bound is in the output; `longest`: the longest value that reads.
    type Write<'a> = &'a dyn Fn(&str) -> String;
    let cases: [(&TextFormat, Write, usize, &str, usize, usize); 2] = [
        (
            &hermes,
            &json,
            64,
            &hermes_head,
            "<tool_call>".len() + 64,
            27,
        ),
        (&glm, &raw, 16, glm_head, glm_head.len() + 16, 16),
    ];
    for (format, write, bound, head, past, longest) in cases {
        let limits = StreamLimits {
            max_argument_bytes: bound,
            max_argument_depth: 4,
        };
        let make = || reader(format).with_limits(limits);
        for wide in ["é", "€", "🦀"] {
            // `extra` 0: the character's last byte is the bound's, and the
            // `y` after it breaks it; 1: the character crosses the bound.
            for extra in [0, 1] {
                let fill = "x".repeat(past - head.len() - wide.len() + extra);
                let output = write(&format!("{fill}{wide}y"));
                let expected = everywhere_with(make, &output, 8);
                let failed = expected.failed().next().expect("refused");
                assert_eq!(failed.kind, CallProblem::TooLarge);
                assert_eq!(expected.text(), "ok");
                let pieces = characters(&output);
                let events = fed(format, Some(limits), &pieces);
                assert_eq!(collect(&events), expected, "{output:?}");
                let refused_at = events.iter().find_map(|(n, e)| match e {
                    StreamEvent::CallFailed(f) if f.kind == CallProblem::TooLarge => Some(*n),
                    _ => None,
                });
                // The piece that holds byte `past`, counted from 1: the `y`,
                // or the character that crosses the bound.
                let mut end = 0;
                let holding = pieces.iter().position(|p| {
                    end += p.len();
                    end > past
                });
                assert_eq!(refused_at, holding.map(|i| i + 1), "{output:?}");
                let breaking: &[u8] = if extra == 0 { b"y" } else { wide.as_bytes() };
                assert_eq!(pieces[holding.unwrap()], breaking, "{output:?}");
            }
            // A value at the bound exactly, ending with the character: read,
            // as whole and a character at a time.
            let output = write(&format!("{}{wide}", "x".repeat(longest - wide.len())));
            let expected = everywhere_with(make, &output, 8);
            assert_eq!(expected.calls().count(), 1, "{output:?}");
            assert_eq!(
                collect(&fed(format, Some(limits), &characters(&output))),
                expected
            );
        }
    }
}

#[test]
fn a_wide_character_cut_in_two_pieces_after_whole_ones_read_in_place_is_decoded_whole() {
    let cases = [
        (TextFormat::hermes(), "Plain é€ ", " é text."),
        (
            TextFormat::hermes(),
            "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"content\": \"é€",
            "🦀\"}}</tool_call>",
        ),
        (
            TextFormat::glm45(),
            "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>é€",
            "🦀</arg_value>\n</tool_call>",
        ),
    ];
    for (format, head, tail) in cases {
        for wide in ["€", "🦀"] {
            for cut in 1..wide.len() {
                let valid = format!("{head}{wide}{tail}");
                let mut pieces = characters(head);
                pieces.extend([&wide.as_bytes()[..cut], &wide.as_bytes()[cut..]]);
                pieces.extend(characters(tail));
                let events = fed(&format, None, &pieces);
                let out = collect(&events);
                assert_eq!(out, everywhere(&format, &valid), "{valid:?} cut at {cut}");
                assert!(out.problems.is_empty());
                if format.name == "hermes" && head.contains("arguments") {
                    assert_eq!(
                        fragments(&events, 0),
                        format!("{{\"content\": \"é€{wide}🦀\"}}")
                    );
                }
            }
        }
    }
}

#[test]
fn pieces_shaped_like_one_wide_character_that_are_not_utf8_are_replaced_as_read_whole() {
    // Overlong forms, a surrogate, a code point past U+10FFFF, and lead
    // bytes that begin no character, each one piece.
    let bad: [&[u8]; 8] = [
        b"\xc0\x80",
        b"\xc1\xbf",
        b"\xe0\x80\x80",
        b"\xe0\x9f\xbf",
        b"\xed\xa0\x80",
        b"\xf0\x8f\xbf\xbf",
        b"\xf4\x90\x80\x80",
        b"\xf5\x80\x80\x80",
    ];
    for (format, head) in cut_inside_each_in_place_read() {
        let tail = match format.name.as_str() {
            "hermes" if head.contains("arguments") => "z\"}}</tool_call>",
            "hermes" => " z",
            _ => "z</arg_value>\n</tool_call>",
        };
        for sequence in bad {
            let all = [head.as_bytes(), sequence, tail.as_bytes()].concat();
            let expected = reader(&format).read_all([all.as_slice()]);
            assert!(!expected.problems.is_empty(), "{sequence:x?}");
            let mut pieces = characters(head);
            pieces.push(sequence);
            pieces.extend(characters(tail));
            let events = fed(&format, None, &pieces);
            assert_eq!(collect(&events), expected, "{head:?} then {sequence:x?}");
        }
    }
}

/// A call whose arguments nest arrays and objects, with strings holding
/// escapes, brackets, a marker and non-ASCII, written after its name.
const NESTED: &str = r#"{"name": "f", "arguments": {"a": [1, {"b": "x\"]}\\"}, [[]], "<tool_call> é"], "c": {"d": null, "e": -1.5e3}}}"#;

#[test]
fn every_byte_inside_nested_arguments_is_sent_at_the_piece_that_carries_it() {
    // Fed a byte at a time (and a character at a time), the fragments
    // sent by the time each piece is read are exactly the arguments text
    // up to that piece: nothing inside the arguments' arrays, objects and
    // strings waits for the value to close.
    let hermes = TextFormat::hermes();
    let output = format!("<tool_call>{NESTED}</tool_call>");
    let expected = everywhere(&hermes, &output);
    let arguments = &argument_texts(&expected)[0];
    let from = output.find(r#"{"a""#).unwrap();
    for pieces in [bytes(&output), characters(&output)] {
        let mut r = reader(&hermes);
        let (mut events, mut sent, mut at) = (Vec::new(), String::new(), 0);
        for piece in &pieces {
            r.push(piece, &mut events);
            at += piece.len();
            for e in events.drain(..) {
                if let StreamEvent::ArgumentsDelta(d) = e {
                    sent.push_str(&d.fragment);
                }
            }
            let end = at.saturating_sub(from).min(arguments.len());
            // Up to the arguments' last byte, all of what arrived is out.
            assert_eq!(
                sent,
                &arguments[..arguments.floor_char_boundary(end)],
                "after {at} bytes"
            );
        }
        assert_eq!(&sent, arguments);
    }
}

#[test]
fn the_depth_bound_inside_the_arguments_is_broken_at_the_byte_that_opens_one_level_too_many() {
    let limits = StreamLimits {
        max_argument_bytes: 1 << 20,
        max_argument_depth: 5,
    };
    let hermes = TextFormat::hermes();
    let make = || reader(&hermes).with_limits(limits);
    // The call object, the arguments and three arrays inside them: five
    // levels, the bound; one more array breaks it.
    let fits = r#"<tool_call>{"name": "f", "arguments": {"a": [[["x"]]]}}</tool_call>"#;
    assert_eq!(everywhere_with(make, fits, 8).calls().count(), 1);
    let deep = r#"<tool_call>{"name": "f", "arguments": {"a": [[[["x"]]]]}}</tool_call>ok"#;
    let expected = everywhere_with(make, deep, 8);
    let failed = expected.failed().next().expect("refused");
    assert_eq!(failed.kind, CallProblem::TooDeep);
    assert_eq!(expected.text(), "ok");
    // Byte by byte it is refused as the fourth `[` arrives, not later.
    let fourth = deep.find("[[[[").unwrap() + 4;
    let events = fed(&hermes, Some(limits), &bytes(deep));
    assert_eq!(collect(&events), expected);
    let refused_at = events.iter().find_map(|(n, e)| match e {
        StreamEvent::CallFailed(f) if f.kind == CallProblem::TooDeep => Some(*n),
        _ => None,
    });
    assert_eq!(refused_at, Some(fourth));
}

#[test]
fn the_size_bound_inside_the_arguments_is_broken_at_the_first_byte_past_it_outside_strings_too() {
    let limits = StreamLimits {
        max_argument_bytes: 40,
        max_argument_depth: 8,
    };
    let hermes = TextFormat::hermes();
    let head = r#"<tool_call>{"name": "f", "arguments": {"a": ["#;
    for n in [1, 2, 3, 4, 6] {
        // Numbers and commas, no strings: the bytes that cross the bound
        // are between tokens.
        let list = vec!["1"; n].join(", ");
        let output = format!("{head}{list}]}}}}</tool_call>ok");
        let expected = everywhere_with(|| reader(&hermes).with_limits(limits), &output, 8);
        let events = fed(&hermes, Some(limits), &bytes(&output));
        assert_eq!(collect(&events), expected, "{n}");
        let object = &output["<tool_call>".len()..output.find("</tool_call>").unwrap()];
        match expected.failed().next() {
            Some(failed) => {
                assert!(object.len() > 40, "{n}: {object}");
                assert_eq!(failed.kind, CallProblem::TooLarge, "{n}");
                // What arrived up to one byte past the bound.
                assert_eq!(failed.raw, &output[..head.find('{').unwrap() + 41], "{n}");
                // Byte by byte, refused as that byte arrives.
                let refused_at = events.iter().find_map(|(i, e)| match e {
                    StreamEvent::CallFailed(f) if f.kind == CallProblem::TooLarge => Some(*i),
                    _ => None,
                });
                assert_eq!(refused_at, Some(head.find('{').unwrap() + 41), "{n}");
            }
            None => assert!(object.len() <= 40, "{n}: {object}"),
        }
    }
}

#[test]
fn a_marker_outside_the_strings_of_nested_arguments_ends_the_call_as_read_whole() {
    let hermes = TextFormat::hermes();
    for output in [
        r#"<tool_call>{"name": "f", "arguments": {"a": [1, </tool_call>after"#,
        r#"<tool_call>{"name": "f", "arguments": {"a": {"b": 2 <tool_call>{"name": "g", "arguments": {}}</tool_call>"#,
        r#"<tool_call>{"name": "f", "arguments": {"a": ["</tool_call>", 3]}}</tool_call>"#,
    ] {
        let expected = everywhere(&hermes, output);
        let events = fed(&hermes, None, &bytes(output));
        assert_eq!(collect(&events), expected, "{output}");
        assert_eq!(collect(&fed(&hermes, None, &characters(output))), expected);
    }
    // The marker inside a string is the string's.
    let out = whole(
        &hermes,
        r#"<tool_call>{"name": "f", "arguments": {"a": ["</tool_call>", 3]}}</tool_call>"#,
    );
    assert_eq!(argument_texts(&out), [r#"{"a": ["</tool_call>", 3]}"#]);
}

/// The arguments of a JSON call read in place are checked as JSON while
/// they are read, and not parsed again when they close (only the rest
/// of the call's object is). Each of these is valid or not exactly as
/// serde_json says of the whole object, fed in every chunking: a byte
/// the check let through wrongly would make a call of invalid JSON when
/// streamed and a malformed call when read whole.
#[test]
fn arguments_checked_as_they_are_read_are_refused_where_a_parser_refuses_them() {
    let hermes = TextFormat::hermes();
    let llama = TextFormat::llama3_json();
    let arguments = [
        // Valid, with every token the check follows.
        r#"{"city": "Paris"}"#,
        r#"{}"#,
        r#"[]"#,
        r#"{"city": "a \"quoted\" \\ name\/ \b\f\n\r\t", "n": [0, -0, 12, -3.25, 1e9, 2E-3, 4.5e+1]}"#,
        r#"{"city": "é ü", "ok": true, "no": false, "none": null, "deep": [[{"a": [{}]}]]}"#,
        " { \"city\" :\t\"x\" ,\n\"k\" : [ 1 , 2 ] } ",
        // A `\u` escape the check does not follow: parsed as before.
        r#"{"city": "caf\u00e9"}"#,
        r#"{"city": "\u00zz"}"#,
        // Invalid, one rule each.
        r#"{"city": "\x"}"#,
        "{\"city\": \"a\u{1}b\"}",
        "{\"city\": \"tab\tin\"}",
        r#"{"n": 01}"#,
        r#"{"n": 1.}"#,
        r#"{"n": .5}"#,
        r#"{"n": 1e}"#,
        r#"{"n": 1e+}"#,
        r#"{"n": -}"#,
        r#"{"n": +1}"#,
        r#"{"n": tru}"#,
        r#"{"n": truex}"#,
        r#"{"n": nul}"#,
        r#"{"n": [1 2]}"#,
        r#"{"n": [1,]}"#,
        r#"{"n": [,1]}"#,
        r#"{"n": 1,}"#,
        r#"{"n" 1}"#,
        r#"{n: 1}"#,
        r#"{"n": [}"#,
        r#"{"n": {]}"#,
        r#"{"n": 1 "m": 2}"#,
        r#"{"n": {"a"}}"#,
        r#"[1 true]"#,
    ];
    // Nested past the check's 32 levels: parsed whole, as before.
    let deep = |inner: &str| format!("{{\"d\": {}{inner}{}}}", "[".repeat(40), "]".repeat(40));
    let deep = [deep("1"), deep("1,")];
    let arguments = arguments
        .iter()
        .copied()
        .chain(deep.iter().map(String::as_str));
    for args in arguments {
        for (format, object) in [
            (
                &hermes,
                format!("{{\"name\": \"get_weather\", \"arguments\": {args}}}"),
            ),
            (
                &llama,
                format!("{{\"name\": \"get_weather\", \"parameters\": {args}}}"),
            ),
            // Valid arguments, the rest of the object not: still refused.
            (
                &hermes,
                format!("{{\"name\": \"get_weather\", \"arguments\": {args}, \"x\": 01}}"),
            ),
            (
                &hermes,
                format!("{{\"name\": \"get_weather\", \"arguments\": {args} \"x\": 1}}"),
            ),
        ] {
            let valid = serde_json::from_str::<serde::de::IgnoredAny>(&object).is_ok();
            let output = if format.name == hermes.name {
                format!("<tool_call>\n{object}\n</tool_call>")
            } else {
                format!("<|python_tag|>{object}")
            };
            let out = everywhere(format, &output);
            if valid {
                assert_eq!(argument_texts(&out), [args.trim()], "{output:?}");
            } else if format.name != hermes.name {
                // A bare Llama object that is not valid JSON is text.
                assert_eq!(out.calls().count(), 0, "{output:?}");
            } else {
                assert_eq!(out.calls().count(), 0, "{output:?}");
                one_malformed_call(&out, &output);
            }
        }
    }
}

/// Arguments near valid JSON: an object of members whose values are
/// strings (escapes and accented letters included), numbers, literals
/// and nested arrays and objects, written out, then one byte replaced or
/// inserted (or none) from those that break JSON most often.
fn jsonish_arguments() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let leaf = prop::sample::select(vec![
        r#""plain""#,
        r#""a \"b\" \\ \/ \n\t é""#,
        r#""\u00e9""#,
        "0",
        "-12.5e+3",
        "true",
        "false",
        "null",
    ])
    .prop_map(str::to_owned);
    // An object of `values`, under keys `prefix` and their index.
    fn object_of(values: &[String], prefix: &str, sep: &str) -> String {
        let members: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("\"{prefix}{i}\":{sep}{v}"))
            .collect();
        format!("{{{}}}", members.join(&format!(",{sep}")))
    }
    let value = leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(inner, 0..3).prop_map(|v| object_of(&v, "k", " ")),
        ]
    });
    let object = prop::collection::vec(value, 0..4).prop_map(|v| object_of(&v, "m", ""));
    let byte = prop::sample::select(b"\\x\",:}]0.e\x01 u".to_vec());
    (object, any::<usize>(), byte, 0u8..3).prop_map(|(text, at, byte, how)| {
        let mut bytes = text.into_bytes();
        let at = at % bytes.len();
        match how {
            0 => {}
            1 if bytes[at].is_ascii() => bytes[at] = byte,
            _ => bytes.insert(at, byte),
        }
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any arguments text, valid or not, reads the same in every
    /// chunking as whole; every call it makes carries arguments serde_json
    /// reads, and a call object serde_json reads is a call.
    #[test]
    fn arguments_of_any_text_read_as_a_parser_reads_them(args in jsonish_arguments()) {
        let object = format!("{{\"name\": \"get_weather\", \"arguments\": {args}}}");
        let output = format!("<tool_call>\n{object}\n</tool_call>");
        let out = everywhere(&TextFormat::hermes(), &output);
        for text in argument_texts(&out) {
            proptest::prop_assert!(
                serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok(),
                "{:?} made a call of {:?}", output, text
            );
        }
        if serde_json::from_str::<serde::de::IgnoredAny>(&object).is_ok() {
            proptest::prop_assert_eq!(argument_texts(&out), [args.trim()], "{:?}", output);
        }
    }
}
