//! A piece that only continues a marker the reader waits on (the start of
//! `<tool_call>`, `</arg_value>`, `<parameter=`, `<|tool_call_begin|>`, or
//! the whitespace before one) is appended where the reader is, without
//! its steps; these are the edges of that way: a marker cut anywhere, a
//! marker's start that turns out to be none, one the output cuts off, one
//! continued by a character of several bytes or half of one, and a value
//! that breaks the size bound while the text ends inside its end marker.
//! A JSON call's object is read in place a byte at a time too, keys' and
//! member values' first and last bytes included: the edges of that way are
//! a key or value closed in place and followed by a bad byte, a value that
//! closes at the size or depth bound, the object's last brace cut from the
//! one before or in a piece with the end marker, and many calls in one
//! stream, each event coming out with the piece that decides it.

use std::collections::BTreeMap;

use tinyagents_tools::call::RawArguments;
use tinyagents_tools::stream::text::{TextFormat, TextReader};
use tinyagents_tools::stream::{CallProblem, ModelOutput, OutputReader, StreamEvent, StreamLimits};

use super::text_support::{calls, everywhere, everywhere_with, one_malformed_call, reader, whole};

/// `pieces` read by `r`, then the end: the output collected.
fn read(mut r: TextReader, pieces: &[&[u8]]) -> ModelOutput {
    let mut events = Vec::new();
    for piece in pieces {
        r.push(piece, &mut events);
    }
    r.finish(&mut events);
    ModelOutput::collect(events)
}

/// The longest middle piece [`every_two_cuts`] makes: longer than any
/// marker of the formats read here (Kimi K2's longest has 28 bytes).
const MIDDLE: usize = 32;

/// `text` cut in three pieces at every pair of byte offsets at most
/// [`MIDDLE`] apart (each marker is then cut at every byte, once and
/// twice, with more text on either side), each read by a reader from
/// `make`: panics where one differs from `expected`.
fn every_two_cuts(make: impl Fn() -> TextReader, text: &str, expected: &ModelOutput) {
    let b = text.as_bytes();
    for i in 0..=b.len() {
        for j in i..=b.len().min(i + MIDDLE) {
            let got = read(make(), &[&b[..i], &b[i..j], &b[j..]]);
            assert_eq!(&got, expected, "cut at {i} and {j} of {text:?}");
        }
    }
}

/// An output of `format` with prose, two calls and prose between and
/// after, as the format writes them (several markers of several bytes).
fn two_calls(format: &TextFormat) -> String {
    match format.name.as_str() {
        "glm45" => "Let me check. <tool_call>get_weather\n<arg_key>city</arg_key>\n\
                    <arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n\
                    <arg_value>3</arg_value>\n</tool_call> and \
                    <tool_call>get_location</tool_call> done <"
            .to_owned(),
        "hermes" => "Let me check. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": \
                     {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>\n and <tool_call> \
                     {\"name\": \"get_location\", \"arguments\": {}} </tool_call> done <"
            .to_owned(),
        "qwen3-coder" => "Let me check. <tool_call>\n<function=get_weather>\n\
                          <parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n\
                          </parameter>\n</function>\n</tool_call> and \
                          <function=get_location>\n</function> done <"
            .to_owned(),
        "kimi-k2" => "Let me check. <|tool_calls_section_begin|> <|tool_call_begin|>\
                      functions.get_weather:0<|tool_call_argument_begin|>\
                      {\"city\": \"Paris\", \"days\": 3}<|tool_call_end|>\n\
                      <|tool_call_begin|>functions.get_location:1\
                      <|tool_call_argument_begin|>{}<|tool_call_end|>\
                      <|tool_calls_section_end|> done <"
            .to_owned(),
        other => panic!("no output for {other}"),
    }
}

fn formats() -> [TextFormat; 4] {
    [
        TextFormat::glm45(),
        TextFormat::hermes(),
        TextFormat::qwen3_coder(),
        TextFormat::kimi_k2(),
    ]
}

#[test]
fn a_marker_cut_at_every_byte_reads_as_the_whole_text() {
    for format in formats() {
        let output = two_calls(&format);
        let expected = everywhere(&format, &output);
        assert_eq!(
            calls(&expected),
            [
                (
                    "get_weather".to_owned(),
                    serde_json::json!({"city": "Paris", "days": 3})
                ),
                ("get_location".to_owned(), serde_json::json!({})),
            ],
            "{}",
            format.name
        );
        // The `<` the output ends with is a marker's start cut off: text.
        assert!(expected.text().ends_with(" done <"), "{}", format.name);
        every_two_cuts(|| reader(&format), &output, &expected);
    }
}

#[test]
fn the_start_of_a_marker_that_turns_out_to_be_none_is_text_or_value_again_in_order() {
    let glm = TextFormat::glm45();
    let output = "a <tool_cal> b <tool_call\n<tool_call>get_weather\n\
                  <arg_key>ci</arg_ke ty</arg_key>\n\
                  <arg_value>Par</arg_valu is <arg_value></arg_value>\n</tool_call>";
    let out = everywhere(&glm, output);
    assert_eq!(out.text(), "a <tool_cal> b <tool_call\n");
    assert_eq!(
        calls(&out),
        [(
            "get_weather".to_owned(),
            serde_json::json!({"ci</arg_ke ty": "Par</arg_valu is <arg_value>"})
        )]
    );
    every_two_cuts(|| reader(&glm), output, &out);

    // Visible text held back as a marker's start goes out, in order, as
    // soon as a piece shows it is none, and nothing is shown before.
    let hermes = TextFormat::hermes();
    let mut r = reader(&hermes);
    let mut events = Vec::new();
    for piece in ["one <", "too", "l_c", "all"] {
        r.push(piece.as_bytes(), &mut events);
    }
    assert_eq!(events, [StreamEvent::Text("one ".to_owned())]);
    r.push(b"x two", &mut events);
    let text: String = events
        .iter()
        .map(|e| match e {
            StreamEvent::Text(t) => t.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(text, "one <tool_callx two");

    let qwen = TextFormat::qwen3_coder();
    let output = "<tool_call>\n<function=write_file>\n<parameter=path>\na.md\n</parameter>\n\
                  <parameter=content>\nx </paramete y </function y\n</parameter>\n\
                  </function>\n</tool_call>";
    let out = everywhere(&qwen, output);
    assert_eq!(
        calls(&out),
        [(
            "write_file".to_owned(),
            serde_json::json!({"path": "a.md", "content": "x </paramete y </function y"})
        )]
    );
    every_two_cuts(|| reader(&qwen), output, &out);
}

#[test]
fn a_marker_the_output_cuts_off_is_text_or_a_truncated_call() {
    // (format, output, its text, its truncated calls, its failed ones)
    let cases = [
        (
            TextFormat::hermes(),
            "Just text <tool_ca",
            "Just text <tool_ca",
            0,
            0,
        ),
        (TextFormat::hermes(), "<tool_call>\n  ", "", 1, 0),
        (
            TextFormat::glm45(),
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_va",
            "",
            1,
            0,
        ),
        (
            TextFormat::glm45(),
            "<tool_call>get_weather\n<arg_key>city</arg_k",
            "",
            1,
            0,
        ),
        (
            TextFormat::glm45(),
            "<tool_call>get_weather\n<arg_ke",
            "",
            1,
            0,
        ),
        (
            TextFormat::qwen3_coder(),
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</param",
            "",
            1,
            0,
        ),
        // Between parameters, the end of the output is no parameter.
        (
            TextFormat::qwen3_coder(),
            "<tool_call>\n<function=get_weather>\n<param",
            "",
            0,
            1,
        ),
        // Where a call's start marker should be, the start of one is none.
        (
            TextFormat::kimi_k2(),
            "<|tool_calls_section_begin|><|tool_call_beg",
            "",
            0,
            1,
        ),
        (
            TextFormat::kimi_k2(),
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\
             <|tool_call_arg",
            "",
            1,
            0,
        ),
    ];
    for (format, output, text, truncated, failed) in cases {
        let out = everywhere(&format, output);
        assert_eq!(out.text(), text, "{output:?}");
        assert_eq!(out.truncated().count(), truncated, "{output:?}");
        assert_eq!(out.failed().count(), failed, "{output:?}");
        every_two_cuts(|| reader(&format), output, &out);
    }
    // A complete Hermes call before a cut-off end marker stays a call.
    let out = whole(
        &TextFormat::hermes(),
        "<tool_call>{\"name\": \"get_location\", \"arguments\": {}}\n</tool_",
    );
    assert_eq!(out.calls().count(), 1);
}

#[test]
fn a_marker_s_start_continued_by_a_character_of_several_bytes_or_half_of_one_is_decoded_whole() {
    // `é` (2 bytes) and `🦀` (4) right after a marker's start, and a
    // format whose own markers are not ASCII, cut inside their characters.
    let glm = TextFormat::glm45();
    let output = "<tool_calé <tool_🦀 <tool_call>get_weather\n<arg_key>city</arg_key>\
                  <arg_value>S</arg_é o</arg_🦀</arg_value></tool_call>";
    let out = everywhere(&glm, output);
    assert_eq!(out.text(), "<tool_calé <tool_🦀 ");
    assert_eq!(
        calls(&out),
        [(
            "get_weather".to_owned(),
            serde_json::json!({"city": "S</arg_é o</arg_🦀"})
        )]
    );
    every_two_cuts(|| reader(&glm), output, &out);
    // A byte at a time: each half of a character is held back until the
    // next piece.
    let bytes: Vec<&[u8]> = output.as_bytes().chunks(1).collect();
    assert_eq!(read(reader(&glm), &bytes), out);

    let tags = TextFormat::tags("[ÉTAPE]", "[/ÉTAPE]");
    let output = "avant [ÉTA [É🦀 [ÉTAPE]{\"name\": \"get_location\", \"args\": {}}[/ÉTAPE] après";
    let out = everywhere(&tags, output);
    assert_eq!(out.text(), "avant [ÉTA [É🦀  après");
    assert_eq!(out.calls().count(), 1);
    every_two_cuts(|| reader(&tags), output, &out);
}

#[test]
fn a_value_that_breaks_the_size_bound_inside_its_end_marker_is_refused_at_the_same_byte() {
    let limits = StreamLimits {
        max_argument_bytes: 16,
        ..StreamLimits::default()
    };
    let make = |format: &TextFormat| {
        let format = format.clone();
        move || reader(&format).with_limits(limits)
    };
    let x = "x".repeat(17);
    for (format, head, end, tail) in [
        (
            TextFormat::glm45(),
            "<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>",
            "</arg_value>",
            "\n</tool_call>ok",
        ),
        (
            TextFormat::qwen3_coder(),
            "<tool_call>\n<function=write_file>\n<parameter=path>",
            "</parameter>",
            "\n</function>\n</tool_call>ok",
        ),
    ] {
        // 16 bytes, the bound, then the end marker: read; 17: refused,
        // with what arrived up to one byte past the bound.
        let fits = format!("{head}{}{end}{tail}", &x[..16]);
        let out = everywhere_with(make(&format), &fits, 8);
        assert_eq!(
            calls(&out),
            [(
                "write_file".to_owned(),
                serde_json::json!({"path": &x[..16]})
            )],
            "{}",
            format.name
        );
        every_two_cuts(make(&format), &fits, &out);
        let over = format!("{head}{x}{end}{tail}");
        let out = everywhere_with(make(&format), &over, 8);
        let failed = out.failed().next().expect("refused");
        assert_eq!(failed.kind, CallProblem::TooLarge, "{}", format.name);
        assert_eq!(failed.raw, format!("{head}{x}"), "{}", format.name);
        assert_eq!(out.text(), "ok", "{}", format.name);
        every_two_cuts(make(&format), &over, &out);
        // The bound is broken by the value's 17th byte alone, whatever
        // the pieces of the end marker after it.
        let cut = head.len() + 16;
        let pieces: Vec<&[u8]> = vec![
            &over.as_bytes()[..cut],
            &over.as_bytes()[cut..cut + 1],
            &over.as_bytes()[cut + 1..cut + 4],
            &over.as_bytes()[cut + 4..],
        ];
        let mut r = make(&format)();
        let mut events = Vec::new();
        for (n, piece) in pieces.iter().enumerate() {
            r.push(piece, &mut events);
            let refused = events.iter().any(
                |e| matches!(e, StreamEvent::CallFailed(f) if f.kind == CallProblem::TooLarge),
            );
            assert_eq!(refused, n >= 1, "{} after piece {n}", format.name);
        }
    }
}

#[test]
fn whitespace_before_a_marker_alone_in_its_pieces_is_markup_as_in_the_whole_text() {
    let hermes = TextFormat::hermes();
    let output = "<tool_call>\n \n\t{\"name\": \"get_location\", \"arguments\": {}}\n\n  \n</tool_call>\n \
                  <tool_call>\n \n x</tool_call>after";
    let out = everywhere(&hermes, output);
    assert_eq!(out.calls().count(), 1);
    let failed = out.failed().next().expect("malformed");
    assert_eq!(failed.kind, CallProblem::MalformedMarkup);
    assert_eq!(out.text(), "\n after");
    every_two_cuts(|| reader(&hermes), output, &out);
    let glm = TextFormat::glm45();
    let output = "<tool_call>get_weather\n \n<arg_key>city</arg_key> \n \
                  <arg_value>Paris</arg_value>\n \n</tool_call>";
    let out = everywhere(&glm, output);
    assert_eq!(
        calls(&out),
        [(
            "get_weather".to_owned(),
            serde_json::json!({"city": "Paris"})
        )]
    );
    every_two_cuts(|| reader(&glm), output, &out);
}

/// The calls' events of `pieces` read by `r`: each with how many bytes
/// had been pushed when it came out (text and argument fragments left
/// out: how they are cut follows the pieces).
fn call_events(mut r: TextReader, pieces: &[&[u8]]) -> Vec<(usize, StreamEvent)> {
    let (mut events, mut timed, mut pushed) = (Vec::new(), Vec::new(), 0);
    for piece in pieces {
        r.push(piece, &mut events);
        pushed += piece.len();
        timed.extend(events.drain(..).map(|e| (pushed, e)));
    }
    r.finish(&mut events);
    timed.extend(events.drain(..).map(|e| (pushed, e)));
    timed.retain(|(_, e)| {
        !matches!(
            e,
            StreamEvent::Text(_) | StreamEvent::Reasoning(_) | StreamEvent::ArgumentsDelta(_)
        )
    });
    timed
}

/// Fed a byte at a time, each call event of `text` comes out after the
/// byte that decides it (a marker's last byte, mostly); cut in three
/// pieces anywhere ([`MIDDLE`] apart at most), it must come out with the
/// piece that holds that byte, not a piece later.
fn decided_at_the_same_byte(make: impl Fn() -> TextReader, text: &str) {
    let b = text.as_bytes();
    let bytes: Vec<&[u8]> = b.chunks(1).collect();
    let decided = call_events(make(), &bytes);
    assert!(!decided.is_empty(), "{text:?}");
    for i in 0..=b.len() {
        for j in i..=b.len().min(i + MIDDLE) {
            let got = call_events(make(), &[&b[..i], &b[i..j], &b[j..]]);
            let expected: Vec<(usize, StreamEvent)> = decided
                .iter()
                .map(|(at, e)| {
                    let with = [i, j, b.len()].into_iter().find(|end| end >= at);
                    (with.unwrap_or(b.len()), e.clone())
                })
                .collect();
            assert_eq!(got, expected, "cut at {i} and {j} of {text:?}");
        }
    }
}

#[test]
fn a_call_s_events_come_out_with_the_piece_that_holds_the_byte_deciding_them() {
    for format in formats() {
        let output = two_calls(&format);
        decided_at_the_same_byte(|| reader(&format), &output);
    }
}

#[test]
fn a_json_call_s_punctuation_read_a_byte_at_a_time_keeps_its_fragments_and_bounds() {
    // Whitespace, colons, commas and numbers between a JSON call's
    // strings, a byte at a time: the arguments go out as written, whole
    // as in pieces.
    let hermes = TextFormat::hermes();
    let args = "{ \"path\" :\t\"a.md\" ,\n \"content\": \"x\", \"lines\": [ 1 ,2.5e3, -3 ], \"append\": false }";
    let output = format!(
        "<tool_call>\n{{ \"name\" : \"write_file\" ,  \"arguments\" :  {args} }}\n</tool_call>"
    );
    let out = everywhere(&hermes, &output);
    assert_eq!(super::text_support::argument_texts(&out), [args]);
    let mut r = reader(&hermes);
    let mut events = Vec::new();
    for piece in output.as_bytes().chunks(1) {
        r.push(piece, &mut events);
    }
    r.finish(&mut events);
    let sent: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ArgumentsDelta(d) => Some(d.fragment.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(sent, args);
    decided_at_the_same_byte(|| reader(&hermes), &output);

    // The arguments before the name (Llama's bare object): nothing goes
    // out until the name is read, then all of it, in order.
    let llama = TextFormat::llama3_json();
    let args = "{\"city\": \"Paris\", \"days\": 3}";
    let output = format!("{{\"parameters\": {args} , \"name\": \"get_weather\"}}");
    let out = everywhere(&llama, &output);
    assert_eq!(super::text_support::argument_texts(&out), [args]);
    decided_at_the_same_byte(|| reader(&llama), &output);

    // A stop marker that begins with a letter: a number's `E` may start it.
    let tags = TextFormat::tags("CALL", "END");
    let output = "CALL{\"name\": \"f\", \"args\": {\"n\": 1E5, \"m\": [1, 2]}}END and \
                  CALL{\"name\": \"f\", \"args\": {\"n\": 1END after";
    let out = everywhere(&tags, output);
    assert_eq!(out.calls().count(), 1);
    assert_eq!(out.failed().count(), 1);
    decided_at_the_same_byte(|| reader(&tags), output);

    // The size bound met on a space or a comma: refused at that byte.
    let call = "{\"name\": \"f\", \"arguments\": {\"a\": 1, \"b\": 2}}";
    let output = format!("<tool_call>{call}</tool_call>ok");
    for bound in [call.find(", \"b").unwrap(), call.find(" 2").unwrap()] {
        let limits = StreamLimits {
            max_argument_bytes: bound,
            ..StreamLimits::default()
        };
        let make = || reader(&hermes).with_limits(limits);
        let out = everywhere_with(make, &output, 8);
        let failed = out.failed().next().expect("refused");
        assert_eq!(failed.kind, CallProblem::TooLarge);
        assert_eq!(failed.raw, format!("<tool_call>{}", &call[..bound + 1]));
        decided_at_the_same_byte(make, &output);
    }
}

/// Fed `size` bytes at a time (characters cut anywhere), each call event
/// of `text` comes out with the piece that holds the byte deciding it, as
/// found feeding a byte at a time.
fn decided_in_pieces_of(make: impl Fn() -> TextReader, text: &str, sizes: &[usize]) {
    let b = text.as_bytes();
    let decided = call_events(make(), &b.chunks(1).collect::<Vec<_>>());
    assert!(!decided.is_empty(), "{text:?}");
    for &size in sizes {
        let got = call_events(make(), &b.chunks(size).collect::<Vec<_>>());
        let expected: Vec<(usize, StreamEvent)> = decided
            .iter()
            .map(|(at, e)| {
                (
                    at.div_ceil(size).saturating_mul(size).min(b.len()),
                    e.clone(),
                )
            })
            .collect();
        assert_eq!(got, expected, "pieces of {size} of {text:?}");
    }
}

/// Fed in pieces of 1 to 8 bytes, each ready call's argument fragments,
/// joined in order, are the arguments it is ready with; `ready` calls at
/// least are.
fn fragments_are_the_arguments(make: impl Fn() -> TextReader, text: &str, ready: usize) {
    for size in 1..=8 {
        let mut r = make();
        let mut events = Vec::new();
        for piece in text.as_bytes().chunks(size) {
            r.push(piece, &mut events);
        }
        r.finish(&mut events);
        let mut sent: BTreeMap<usize, String> = BTreeMap::new();
        let mut carried = Vec::new();
        for event in &events {
            match event {
                StreamEvent::ArgumentsDelta(d) => {
                    sent.entry(d.index).or_default().push_str(&d.fragment)
                }
                StreamEvent::CallReady(c) => match &c.call.arguments {
                    RawArguments::Text(t) => carried.push((c.index, t.clone())),
                    RawArguments::Json(v) => carried.push((c.index, v.to_string())),
                },
                _ => {}
            }
        }
        assert!(carried.len() >= ready, "pieces of {size} of {text:?}");
        for (index, arguments) in carried {
            let fragments = sent.get(&index).map_or("", String::as_str);
            assert_eq!(
                fragments, arguments,
                "call {index}, pieces of {size} of {text:?}"
            );
        }
    }
}

/// `n` calls as the many-calls benchmark writes them: a sentence, then a
/// `write_file` call whose content holds escaped quotes, braces and `é`.
fn many_calls(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "Next, I will save this part of the notes.\n<tool_call>\n{{\"name\": \
                 \"write_file\", \"arguments\": {{\"path\": \"notes/{i}.md\", \"content\": \
                 \"line of notes, with \\\"quotes\\\", {{braces}} and \u{e9}\\n\"}}}}\n\
                 </tool_call>\n"
            )
        })
        .collect()
}

#[test]
fn many_calls_fed_one_and_four_characters_come_out_each_with_its_deciding_piece() {
    let hermes = TextFormat::hermes();
    let output = many_calls(4);
    let out = everywhere(&hermes, &output);
    let content = "line of notes, with \"quotes\", {braces} and \u{e9}\n";
    let expected: Vec<(String, serde_json::Value)> = (0..4)
        .map(|i| {
            let args = serde_json::json!({"path": format!("notes/{i}.md"), "content": content});
            ("write_file".to_owned(), args)
        })
        .collect();
    assert_eq!(calls(&out), expected);
    assert_eq!(
        out.text(),
        "Next, I will save this part of the notes.\n\n".repeat(4)
    );
    // Each call starts with its name's closing quote and is ready with
    // the object's last brace, fed a byte at a time.
    let b = output.as_bytes();
    let events = call_events(reader(&hermes), &b.chunks(1).collect::<Vec<_>>());
    let name_ends: Vec<usize> = output
        .match_indices("\"write_file\"")
        .map(|(at, m)| at + m.len())
        .collect();
    let object_ends: Vec<usize> = output
        .match_indices("}}\n</tool_call>")
        .map(|(at, _)| at + 2)
        .collect();
    let mut at = Vec::new();
    for (pushed, event) in &events {
        match event {
            StreamEvent::CallStarted(_) => at.push(("started", *pushed)),
            StreamEvent::CallReady(_) => at.push(("ready", *pushed)),
            StreamEvent::Finished(_) => {}
            other => panic!("{other:?}"),
        }
    }
    let expected_at: Vec<(&str, usize)> = name_ends
        .iter()
        .zip(&object_ends)
        .flat_map(|(&name, &object)| [("started", name), ("ready", object)])
        .collect();
    assert_eq!(at, expected_at);
    decided_in_pieces_of(|| reader(&hermes), &output, &[2, 3, 4, 5, 7, 16]);
    fragments_are_the_arguments(|| reader(&hermes), &output, 4);
    let chars = tinyagents_tools::testkit::chunk_text(
        &output,
        tinyagents_tools::testkit::Chunking::Fixed(4),
    );
    let four = reader(&hermes).read_all(chars.iter().map(|p| p.as_bytes()));
    assert_eq!(four, out);
}

#[test]
fn a_key_or_value_closed_in_place_then_a_bad_byte_fails_that_call_alone() {
    let hermes = TextFormat::hermes();
    let good = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>";
    let bad = [
        // After a key's closing quote, no colon.
        "{\"name\" x \"f\"}",
        // After the name's closing quote, no comma.
        "{\"name\": \"f\"x, \"arguments\": {}}",
        // After the arguments' closing brace, a byte that is no comma.
        "{\"name\": \"f\", \"arguments\": {\"a\": 1}x}",
        // After a number that ends a member, a second value.
        "{\"name\": \"f\", \"arguments\": 12 3}",
        // A key whose closing quote comes after a control character.
        "{\"name\u{1}\": \"f\", \"arguments\": {}}",
    ];
    for call in bad {
        let output = format!("<tool_call>{call}</tool_call> then {good} end");
        let out = everywhere(&hermes, &output);
        let failed = one_malformed_call(&out, &output);
        assert_eq!(failed.raw, format!("<tool_call>{call}</tool_call>"));
        assert_eq!(
            calls(&out),
            [("f".to_owned(), serde_json::json!({"a": 1}))],
            "{output:?}"
        );
        assert_eq!(out.text(), " then  end", "{output:?}");
        decided_at_the_same_byte(|| reader(&hermes), &output);
    }
}

#[test]
fn keys_and_values_the_walk_leaves_to_the_steps_read_as_the_whole_text() {
    let hermes = TextFormat::hermes();
    let cases = [
        // An escaped key: the steps unescape it.
        (
            "{\"na\\u006de\": \"f\", \"arguments\": {\"a\": 1}}",
            Some(("f", serde_json::json!({"a": 1}))),
        ),
        // The first member of a key counts; numbers, literals and arrays
        // end members as strings and objects do.
        (
            "{\"n\": 12, \"name\": \"f\", \"t\": true , \"l\": [1, [2]], \
             \"arguments\": {\"a\": [1, 2.5e3]}, \"arguments\": {\"b\": 2}, \"z\": null}",
            Some(("f", serde_json::json!({"a": [1, 2500.0]}))),
        ),
        // A name that is no string: no call.
        ("{\"name\": 3, \"arguments\": {}}", None),
        // A name with an escape: unescaped.
        (
            "{\"name\": \"f\\u0067\", \"arguments\": {}}",
            Some(("fg", serde_json::json!({}))),
        ),
    ];
    for (call, expected) in cases {
        let output = format!("a <tool_call>\n{call}\n</tool_call> b");
        let out = everywhere(&hermes, &output);
        match expected {
            Some((name, args)) => {
                assert_eq!(calls(&out), [(name.to_owned(), args)], "{output:?}");
                fragments_are_the_arguments(|| reader(&hermes), &output, 1);
            }
            None => {
                assert_eq!(out.calls().count(), 0, "{output:?}");
                let failed = out.failed().next().expect("failed");
                assert_eq!(failed.kind, CallProblem::MalformedMarkup, "{output:?}");
            }
        }
        decided_at_the_same_byte(|| reader(&hermes), &output);
    }
}

#[test]
fn arguments_written_before_the_name_or_an_id_after_them_go_out_whole() {
    // Llama's bare object, its arguments before its name: they go out when
    // the name's closing quote starts the call, all of them.
    let llama = TextFormat::llama3_json();
    let output = "{\"parameters\": {\"city\": \"Paris\", \"days\": [3, 4]}, \"name\": \
                  \"get_weather\"}; {\"name\": \"get_location\", \"parameters\": {}}";
    let out = everywhere(&llama, output);
    assert_eq!(out.calls().count(), 2);
    fragments_are_the_arguments(|| reader(&llama), output, 2);
    decided_at_the_same_byte(|| reader(&llama), output);

    // Mistral's id member, after the arguments or before the name: the call
    // starts once both its name and its id are read.
    let mistral = TextFormat::mistral();
    let output = "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \
                  \"Paris\"}, \"id\": \"abc123def\"}, {\"id\": \"xyz987uvw\", \"name\": \
                  \"get_location\", \"arguments\": {}}]";
    let out = everywhere(&mistral, output);
    assert_eq!(
        super::text_support::ids(&out),
        ["abc123def".to_owned(), "xyz987uvw".to_owned()]
    );
    fragments_are_the_arguments(|| reader(&mistral), output, 2);
    decided_at_the_same_byte(|| reader(&mistral), output);
}

#[test]
fn a_member_value_that_closes_at_the_size_or_depth_bound_is_refused_at_that_byte() {
    let hermes = TextFormat::hermes();
    let call = "{\"name\": \"f\", \"arguments\": {\"a\": \"xy\", \"b\": [[1]]}}";
    let output = format!("<tool_call>{call}</tool_call>ok");
    // The object's bytes up to the bound are allowed: a bound at a byte
    // that closes a key or a value (the name's, the arguments' key, a
    // string and an array inside them, the arguments) refuses that byte,
    // a bound at the byte after it the next.
    let closing = [
        call.find("\"f\"").unwrap() + 2,
        call.find("arguments\"").unwrap() + 9,
        call.find("xy\"").unwrap() + 2,
        call.find("]]").unwrap() + 1,
        call.len() - 2,
    ];
    for bound in closing.into_iter().flat_map(|at| [at, at + 1]) {
        let limits = StreamLimits {
            max_argument_bytes: bound,
            ..StreamLimits::default()
        };
        let make = || reader(&hermes).with_limits(limits);
        let out = everywhere_with(make, &output, 8);
        let failed = out.failed().next().expect("refused");
        assert_eq!(failed.kind, CallProblem::TooLarge, "bound {bound}");
        assert_eq!(
            failed.raw,
            format!("<tool_call>{}", &call[..=bound]),
            "bound {bound}"
        );
        assert_eq!(out.text(), "ok");
        decided_at_the_same_byte(make, &output);
    }
    // Depth: the object is one level, the arguments two, `b`'s array three
    // and four; a bound of three refuses the inner array's bracket.
    let limits = StreamLimits {
        max_argument_depth: 3,
        ..StreamLimits::default()
    };
    let make = || reader(&hermes).with_limits(limits);
    let out = everywhere_with(make, &output, 8);
    let failed = out.failed().next().expect("refused");
    assert_eq!(failed.kind, CallProblem::TooDeep);
    let inner = call.find("[[").unwrap() + 1;
    assert_eq!(failed.raw, format!("<tool_call>{}", &call[..=inner]));
    decided_at_the_same_byte(make, &output);
    // A bound of four: the arrays close within it, the call is ready.
    let limits = StreamLimits {
        max_argument_depth: 4,
        ..StreamLimits::default()
    };
    let out = everywhere_with(|| reader(&hermes).with_limits(limits), &output, 8);
    assert_eq!(out.calls().count(), 1);
}

#[test]
fn the_object_s_last_brace_cut_from_the_one_before_or_with_the_end_marker_reads_alike() {
    let hermes = TextFormat::hermes();
    let output =
        "x <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": \"}}\"}}\n</tool_call>\ny";
    let expected = everywhere(&hermes, output);
    assert_eq!(
        calls(&expected),
        [("f".to_owned(), serde_json::json!({"a": "}}"}))]
    );
    let end = output.rfind("}}").unwrap();
    let marker = output.find("\n</tool_call>").unwrap();
    let b = output.as_bytes();
    for pieces in [
        // `}` `}` in two pieces.
        vec![&b[..end + 1], &b[end + 1..]],
        // `}}` alone.
        vec![&b[..end], &b[end..end + 2], &b[end + 2..]],
        // Both braces with the end marker and what follows.
        vec![&b[..end], &b[end..]],
        // The last `}` with the end marker only.
        vec![&b[..end + 1], &b[end + 1..marker + 13], &b[marker + 13..]],
        // Both braces with the end marker, after a byte at a time.
        b[..end].chunks(1).chain([&b[end..]]).collect(),
    ] {
        let got = read(reader(&hermes), &pieces);
        assert_eq!(got, expected, "{pieces:?}");
        // The call is ready with the piece that holds the last brace.
        let events = call_events(reader(&hermes), &pieces);
        let ready = events
            .iter()
            .find(|(_, e)| matches!(e, StreamEvent::CallReady(_)))
            .map(|(at, _)| *at);
        let with_brace = pieces
            .iter()
            .scan(0, |pushed, p| {
                *pushed += p.len();
                Some(*pushed)
            })
            .find(|&pushed| pushed > end + 1);
        assert_eq!(ready, with_brace, "{pieces:?}");
    }
    decided_at_the_same_byte(|| reader(&hermes), output);
}
