//! Streaming and text formats: our text readers against `tool-parser` on
//! the same outputs, for the formats both read, whole and fed 1 and 4
//! characters at a time (megabytes per second, speed-up paired by round),
//! and the growth with length (1 character at a time against the whole
//! text, 1 KiB to 1 MiB).
//!
//! The other parts of the case: the chunking-invariance corpus
//! ([`super::stream_corpus`]) and the streamed turn ([`super::stream_turn`]).
//!
//! What each contender pays per output: ours builds its reader (the
//! format's markers compiled, the tools' schemas copied), reads every
//! piece and collects the [`ModelOutput`](tinyagents_tools::stream::ModelOutput);
//! `tool-parser` reuses one parser (`reset` between outputs; it compiles
//! its regexes when a parser is made, which a server does per request) and
//! the text and call pieces it yields are gathered
//! ([`TheirParser::streamed`]). The pieces are cut before timing.

use serde_json::{Value, json};
use tinyagents_tools::stream::text::{Family, TextFormat};
use tinyagents_tools::stream::{ModelOutput, OutputReader};
use tinyagents_tools::testkit::{Chunking, chunk_text};
use tinyagents_tools::{ToolCall, ToolSchema, ToolSpec};

use crate::contenders::tool_parser::{COMMON_FORMATS, Parsed, TheirParser, tools};
use crate::harness::{Budget, Contender, measure_interleaved, measure_runs, quartiles};
use crate::report::{Bound, Report, Unit};

/// The tools every output of the case was written for
/// (`fixtures/stream/tools.json`, those of `tests/stream/`).
pub fn specs() -> Vec<ToolSpec> {
    let text = include_str!("../../fixtures/stream/tools.json");
    let tools: Vec<Value> = serde_json::from_str(text).expect("tools.json");
    tools
        .iter()
        .map(|t| {
            ToolSpec::builder(
                t["name"].as_str().expect("a name"),
                t["description"].as_str().expect("a description"),
            )
            .input_schema(ToolSchema::from_value(t["input_schema"].clone()))
            .build()
            .expect("a valid spec")
        })
        .collect()
}

/// About 600 bytes of an assistant's prose, with punctuation and
/// non-ASCII, that spells no marker of any format.
const PROSE: &str = "Sure, I will look into that for you. First I will check the weather in \
    both cities you mentioned, Paris and São Paulo, for the next three days, so that you \
    know whether to pack an umbrella (the forecast last week was rather mixed). Then I \
    will write your notes to a file: the packing list, the budget in euros and the \
    addresses of the two hotels, exactly as you gave them to me, résumé and all. \
    Finally I will find out where you are right now, to work out how long the drive to \
    the airport takes. Give me a moment while the tools run; I will come back with a \
    short summary of everything, in the same order as above.\n\n";

/// The four calls of the throughput output: small arguments, a
/// non-ASCII value, a 330-byte string with escapes and braces, and no
/// arguments at all.
fn four_calls() -> Vec<ToolCall> {
    let notes = "# Trip\n\nPack: umbrella, \"good\" shoes, {maps} and a charger.\n\
                 Budget: 1200 EUR (hotels 800, food 300, trains 100).\n\
                 Hotel A: 12 rue de Rivoli, Paris.\n\
                 Hotel B: Avenida Paulista 1000, São Paulo.\n\
                 Remember: passport, tickets, the \\ backslash in the wifi password.\n";
    [
        ("get_weather", json!({"city": "Paris", "days": 3})),
        (
            "get_weather",
            json!({"city": "São Paulo", "days": 3, "unit": "celsius"}),
        ),
        (
            "write_file",
            json!({"path": "notes/trip.md", "content": notes, "append": false}),
        ),
        ("get_location", json!({})),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (name, args))| ToolCall::new(format!("functions.{name}:{i}"), name, args.to_string()))
    .collect()
}

/// `calls` written in `format` as its models write them after some text:
/// Llama 3.x JSON after `<|python_tag|>`, pythonic in Llama 4's wrapper.
fn written_calls(format: &TextFormat, calls: &[ToolCall]) -> String {
    let body = format.render_calls(calls);
    match format.family {
        Family::Llama3Json => format!("<|python_tag|>{body}"),
        Family::Pythonic => format!("<|python_start|>{body}<|python_end|>"),
        _ => body,
    }
}

/// The throughput output of `format`: [`PROSE`], then [`four_calls`].
pub fn throughput_output(format: &TextFormat) -> String {
    format!("{PROSE}{}", written_calls(format, &four_calls()))
}

/// A Hermes output of about `bytes` bytes made of many turns' worth of text
/// and calls: a sentence, then one `write_file` call of about 300 bytes of
/// arguments, again and again.
pub fn many_calls_output(bytes: usize) -> String {
    let hermes = TextFormat::hermes();
    let content = "line of notes, with \"quotes\", {braces} and é\n".repeat(6);
    let mut out = String::with_capacity(bytes + 1024);
    let mut i = 0;
    while out.len() < bytes {
        out.push_str("Next, I will save this part of the notes.\n");
        let args = json!({"path": format!("notes/{i}.md"), "content": content});
        out.push_str(&hermes.render_calls(&[ToolCall::new(
            format!("c{i}"),
            "write_file",
            args.to_string(),
        )]));
        out.push('\n');
        i += 1;
    }
    out
}

/// A Hermes output of about `bytes` bytes holding one call whose `content`
/// argument is most of it.
pub fn one_call_output(bytes: usize) -> String {
    let line = "a long file, written in one call: \"quotes\", {braces}, é\n";
    // The arguments' text, escapes included, stays under the executor's
    // default bound (1 MiB) at the largest size.
    let escaped = serde_json::to_string(line).expect("a string").len() - 2;
    let content = line.repeat(bytes.saturating_sub(200) / escaped);
    let args = json!({"path": "big.txt", "content": content});
    format!(
        "Writing it now.\n{}",
        TextFormat::hermes().render_calls(&[ToolCall::new("c0", "write_file", args.to_string())])
    )
}

/// What the throughput part measured, for the targets.
pub struct Throughput {
    /// The smallest speed-up over `tool-parser` (its time / ours, paired)
    /// over every format and chunking.
    pub min_speedup: f64,
}

/// Runs the throughput and growth parts and records them.
pub fn run(budget: Budget, growth_samples: usize, report: &mut Report) -> Throughput {
    let specs = specs();
    let their_tools = tools(&specs);
    let rt = crate::harness::runtime();
    let mut min_speedup = f64::INFINITY;
    for (ours_name, their_name) in COMMON_FORMATS {
        let format = TextFormat::by_name(ours_name).expect("a format");
        let output = throughput_output(&format);
        let one = chunk_text(&output, Chunking::Fixed(1));
        let four = chunk_text(&output, Chunking::Fixed(4));
        let mut theirs = [0, 1, 2].map(|_| TheirParser::new(their_name, their_tools.clone()));
        // Both read the same calls, whole and streamed, or the comparison
        // would be of different work.
        let ours_whole = Parsed::ours(&format.parse(&specs, &output));
        let read_by_them = [
            theirs[0].whole(&output),
            theirs[1].streamed(one.iter().copied()),
            theirs[2].streamed(four.iter().copied()),
        ];
        let agree = read_by_them.each_ref().map(|p| p.calls == ours_whole.calls);
        if std::env::var_os("STREAM_DEBUG").is_some() {
            eprintln!("{ours_name}: {output:?}\nours {ours_whole:?}");
            for (p, ok) in read_by_them.iter().zip(agree) {
                if !ok {
                    eprintln!("theirs {p:?}");
                }
            }
        }
        report.value(
            "stream",
            &format!("{ours_name}_same_calls"),
            &format!("{ours_name} / {their_name}: tool-parser reads our 4 calls (whole, 1, 4)"),
            json!(agree),
        );
        let [t_whole, t_one, t_four] = &mut theirs;
        let stats = rt.block_on(async {
            let mut contenders = [
                Contender::synchronous(|| format.parse(&specs, &output)),
                Contender::synchronous(|| read(&format, &specs, &one)),
                Contender::synchronous(|| read(&format, &specs, &four)),
                Contender::synchronous(|| t_whole.whole(&output)),
                Contender::synchronous(|| t_one.streamed(one.iter().copied())),
                Contender::synchronous(|| t_four.streamed(four.iter().copied())),
            ];
            measure_interleaved(budget, &mut contenders).await
        });
        let bytes = output.len() as f64;
        for (i, how) in ["whole", "1-char", "4-char"].into_iter().enumerate() {
            let (ours, theirs) = (stats.stats(i), stats.stats(i + 3));
            let speedup = stats.paired_ratio(i + 3, i);
            min_speedup = min_speedup.min(speedup);
            report.values(
                "stream",
                [
                    (
                        &format!("{ours_name}_{how}_ours_mb_s"),
                        &format!("{ours_name} {how}: ours MB/s ({bytes} B)"),
                        json!(mb_per_s(bytes, ours.median_ns)),
                    ),
                    (
                        &format!("{ours_name}_{how}_theirs_mb_s"),
                        &format!("{ours_name} {how}: tool-parser {their_name} MB/s"),
                        json!(mb_per_s(bytes, theirs.median_ns)),
                    ),
                ],
            );
            report.paired(
                &format!("stream_{ours_name}_{how}_speedup"),
                &format!("{ours_name} {how}: tool-parser time / ours, paired"),
                speedup,
            );
            report.quartiles(
                &format!("stream_{ours_name}_{how}_speedup_quartiles"),
                &format!("{ours_name} {how}: its quartiles"),
                stats.paired_quartiles(i + 3, i),
            );
        }
    }
    construction(&specs, report);
    growth(&specs, &rt, growth_samples, report);
    Throughput { min_speedup }
}

/// Ours fed `pieces`, reader built and output collected.
fn read(format: &TextFormat, specs: &[ToolSpec], pieces: &[&str]) -> ModelOutput {
    format
        .reader(specs)
        .read_all(pieces.iter().map(|p| p.as_bytes()))
}

fn mb_per_s(bytes: f64, ns: f64) -> f64 {
    (bytes / ns * 1e3 * 10.0).round() / 10.0
}

/// What making a parser costs: our reader (it is made per output) and
/// `tool-parser`'s (a server makes one per request), Hermes.
fn construction(specs: &[ToolSpec], report: &mut Report) {
    let hermes = TextFormat::hermes();
    let theirs = TheirParser::new("qwen", tools(specs));
    let runs = 201;
    report.stats(
        "stream",
        "hermes_reader_new",
        "hermes: ours, a reader made and fed nothing",
        Unit::Us,
        measure_runs(runs, || hermes.reader(specs)),
    );
    report.stats(
        "stream",
        "hermes_their_parser_new",
        "hermes: tool-parser, create_parser(\"qwen\")",
        Unit::Us,
        measure_runs(runs, || theirs.create()),
    );
}

/// The growth part: Hermes outputs of 1 KiB, 64 KiB and 1 MiB (many calls,
/// and one call holding most of the output), 1 and 4 characters at a time
/// against the whole text, paired by round. `tool-parser` at 1 KiB and 64
/// KiB (fed 1 character at a time its cost grows with the square of a
/// call's length: 1 MiB would take hours), one run at 64 KiB.
fn growth(specs: &[ToolSpec], rt: &tokio::runtime::Runtime, samples: usize, report: &mut Report) {
    let hermes = TextFormat::hermes();
    let budget = Budget {
        sample: std::time::Duration::from_millis(20),
        samples,
        warmup: std::time::Duration::from_millis(50),
    };
    for (shape, make) in [
        ("many_calls", many_calls_output as fn(usize) -> String),
        ("one_call", one_call_output),
    ] {
        for (size, kib) in [(1 << 10, "1KiB"), (64 << 10, "64KiB"), (1 << 20, "1MiB")] {
            let output = make(size);
            let one = chunk_text(&output, Chunking::Fixed(1));
            let four = chunk_text(&output, Chunking::Fixed(4));
            let whole = hermes.parse(specs, &output);
            assert!(
                whole.failed().count() + whole.truncated().count() == 0
                    && whole.calls().count() > 0,
                "the {shape} output of {kib} reads as calls"
            );
            let stats = rt.block_on(async {
                let mut contenders = [
                    Contender::synchronous(|| hermes.parse(specs, &output)),
                    Contender::synchronous(|| read(&hermes, specs, &one)),
                    Contender::synchronous(|| read(&hermes, specs, &four)),
                ];
                measure_interleaved(budget, &mut contenders).await
            });
            let key = format!("growth_{shape}_{kib}");
            report.stats(
                "stream",
                &format!("{key}_whole"),
                &format!("growth, {shape}, {kib} ({} B): ours whole", output.len()),
                Unit::Us,
                stats.stats(0),
            );
            report.stats(
                "stream",
                &format!("{key}_1char"),
                &format!("growth, {shape}, {kib}: ours 1 char at a time"),
                Unit::Us,
                stats.stats(1),
            );
            report.paired(
                &format!("{key}_1char_vs_whole"),
                &format!("growth, {shape}, {kib}: ours 1-char / whole, paired"),
                stats.paired_ratio(1, 0),
            );
            report.quartiles(
                &format!("{key}_1char_vs_whole_quartiles"),
                &format!("growth, {shape}, {kib}: its quartiles"),
                stats.paired_quartiles(1, 0),
            );
            report.paired(
                &format!("{key}_4char_vs_whole"),
                &format!("growth, {shape}, {kib}: ours 4-char / whole, paired"),
                stats.paired_ratio(2, 0),
            );
            if size == 1 << 20 {
                report.target(
                    &format!("stream_growth_{shape}_1mib"),
                    &format!("1 MiB Hermes ({shape}) fed 1 char / whole, ours (paired)"),
                    Some(stats.paired_ratio(1, 0)),
                    Some(Bound::AtMost(3.0)),
                );
                continue;
            }
            let mut theirs = TheirParser::new("qwen", tools(specs));
            // At 64 KiB one run of theirs fed 1 character at a time takes
            // seconds: one run each, after the whole-text warm-up.
            let runs = if size > 4096 { 1 } else { samples };
            let mut ratios = Vec::with_capacity(runs);
            let mut t_one = Vec::with_capacity(runs);
            std::hint::black_box(theirs.whole(&output));
            for _ in 0..runs {
                let t = std::time::Instant::now();
                std::hint::black_box(theirs.whole(&output));
                let w = t.elapsed().as_nanos() as f64;
                let t = std::time::Instant::now();
                std::hint::black_box(theirs.streamed(one.iter().copied()));
                let o = t.elapsed().as_nanos() as f64;
                ratios.push(o / w);
                t_one.push(o);
            }
            let median = crate::harness::Stats::from_samples(ratios.clone(), 1).median_ns;
            report.stats(
                "stream",
                &format!("{key}_theirs_1char"),
                &format!("growth, {shape}, {kib}: tool-parser 1 char at a time"),
                Unit::Us,
                crate::harness::Stats::from_samples(t_one, 1),
            );
            report.paired(
                &format!("{key}_theirs_1char_vs_whole"),
                &format!("growth, {shape}, {kib}: tool-parser 1-char / whole, paired"),
                median,
            );
            report.quartiles(
                &format!("{key}_theirs_1char_vs_whole_quartiles"),
                &format!("growth, {shape}, {kib}: its quartiles"),
                quartiles(ratios),
            );
        }
    }
}

/// The outputs a profile reads: with `STREAM_OUTPUT=one_call|many_calls`
/// the growth part's Hermes output of that shape, of `STREAM_BYTES` bytes
/// (default 65536); otherwise the throughput output of each format both
/// read (`STREAM_FORMAT=NAME`: that format's alone; `default` when unset).
/// Says on stderr what each output holds, for counts per character.
fn profile_outputs(default: Option<&str>) -> Vec<(TextFormat, String)> {
    let outputs: Vec<(TextFormat, String)> = match std::env::var("STREAM_OUTPUT").ok() {
        Some(shape) => {
            let bytes = std::env::var("STREAM_BYTES")
                .map(|b| b.parse().expect("STREAM_BYTES: a size in bytes"))
                .unwrap_or(64 << 10);
            let output = match shape.as_str() {
                "one_call" => one_call_output(bytes),
                "many_calls" => many_calls_output(bytes),
                other => panic!("STREAM_OUTPUT: one_call or many_calls, not {other}"),
            };
            vec![(TextFormat::hermes(), output)]
        }
        None => {
            let only = std::env::var("STREAM_FORMAT").ok();
            let only = only.as_deref().or(default);
            COMMON_FORMATS
                .iter()
                .filter(|(name, _)| only.is_none_or(|only| only == *name))
                .map(|(name, _)| {
                    let format = TextFormat::by_name(name).expect("a format");
                    let output = throughput_output(&format);
                    (format, output)
                })
                .collect()
        }
    };
    for (format, output) in &outputs {
        eprintln!(
            "{}: {} bytes, {} characters",
            format.name,
            output.len(),
            output.chars().count()
        );
    }
    outputs
}

/// The throughput Hermes output read one character at a time, `n` times
/// (for callgrind: `--profile-stream-1char N`; `STREAM_FORMAT=NAME` reads
/// that format's output instead, `STREAM_OUTPUT` a growth output, see
/// [`profile_outputs`]).
pub fn profile_one_char(n: u64) {
    profile_chunked(n, 1);
}

/// [`profile_one_char`] with 4 characters a piece (for callgrind:
/// `--profile-stream-4char N`, the same variables).
pub fn profile_four_chars(n: u64) {
    profile_chunked(n, 4);
}

/// The profile outputs (Hermes's unless told otherwise) cut into pieces of
/// `size` characters, each read `n` times.
fn profile_chunked(n: u64, size: usize) {
    let specs = specs();
    let outputs = profile_outputs(Some("hermes"));
    let pieces: Vec<Vec<&str>> = outputs
        .iter()
        .map(|(_, output)| chunk_text(output, Chunking::Fixed(size)))
        .collect();
    for _ in 0..n {
        for ((format, _), chunked) in outputs.iter().zip(&pieces) {
            std::hint::black_box(read(format, &specs, chunked));
        }
    }
}

/// The throughput output of every format both read, each read whole, `n`
/// times (for callgrind: `--profile-stream-whole N`; `STREAM_FORMAT=NAME`
/// reads that format's alone, `STREAM_OUTPUT` a growth output, see
/// [`profile_outputs`]).
pub fn profile_whole(n: u64) {
    let specs = specs();
    let outputs = profile_outputs(None);
    for _ in 0..n {
        for (format, output) in &outputs {
            std::hint::black_box(format.parse(&specs, output));
        }
    }
}
