//! Where a JSON value written piece by piece ends, read without parsing it.
//!
//! A [`JsonScanner`] is fed a value's text in pieces of any size and says,
//! in one linear pass that keeps a few bytes of state, when the value is
//! complete (the byte just after it), and refuses it the moment it grows
//! past a size or depth bound: a stream never buffers a value it would
//! refuse. It does not check that the text is valid JSON: a parser judges
//! the complete text afterwards. Brackets and quotes inside strings, escaped
//! quotes included, never count.

/// What a scanner knows after a piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// The value has not ended yet (or has not begun: only whitespace so
    /// far).
    Incomplete,
    /// The value ended: `end` is the byte offset, within the piece just
    /// fed, just after its last byte. What follows is not part of it.
    Complete {
        /// The offset just after the value, in the last piece.
        end: usize,
    },
    /// The value's text grew past the size bound (counted from its first
    /// byte, leading whitespace included).
    TooLarge,
    /// Its arrays and objects nest deeper than the depth bound.
    TooDeep,
}

/// Finds the end of one JSON value fed in pieces.
///
/// ```
/// use tinyagents_tools::stream::json_scan::{JsonScanner, Scan};
///
/// let mut scan = JsonScanner::new(1 << 20, 64);
/// assert_eq!(scan.push(r#"{"a": "}"#), Scan::Incomplete);
/// assert_eq!(scan.push(r#"", "b": [1]}</tool_call>"#), Scan::Complete { end: 12 });
/// ```
#[derive(Debug, Clone)]
pub struct JsonScanner {
    max_bytes: usize,
    max_depth: usize,
    seen: usize,
    depth: usize,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the value: only whitespace so far.
    Before,
    /// Inside arrays or objects, outside a string.
    Nested,
    /// Inside a string; `escaped` after a backslash.
    InString { escaped: bool },
    /// Inside a top-level number or literal (`true`, `false`, `null`):
    /// it ends at the first byte that cannot continue it.
    Bare,
    /// The value ended (or a bound was broken): further pieces are not
    /// scanned.
    Done(Scan),
}

impl JsonScanner {
    /// A scanner that refuses a value over `max_bytes` bytes or nested
    /// deeper than `max_depth`.
    pub fn new(max_bytes: usize, max_depth: usize) -> Self {
        JsonScanner {
            max_bytes,
            max_depth,
            seen: 0,
            depth: 0,
            state: State::Before,
        }
    }

    /// The number of bytes of the value scanned so far.
    pub fn len(&self) -> usize {
        self.seen
    }

    /// Whether nothing has been scanned yet.
    pub fn is_empty(&self) -> bool {
        self.seen == 0
    }

    /// Whether the value began (a byte other than whitespace came).
    pub fn started(&self) -> bool {
        self.state != State::Before
    }

    /// Whether the last byte scanned is inside a string (so a marker read
    /// there is part of the string, not markup around the value).
    pub fn in_string(&self) -> bool {
        matches!(self.state, State::InString { .. })
    }

    /// Scans the next piece. Once a value is complete or refused, every
    /// later piece answers the same, with `end` 0 for a complete value (it
    /// ended in an earlier piece).
    pub fn push(&mut self, piece: &str) -> Scan {
        if let State::Done(scan) = self.state {
            return match scan {
                Scan::Complete { .. } => Scan::Complete { end: 0 },
                other => other,
            };
        }
        let bytes = piece.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if self.state == (State::InString { escaped: false }) {
                // A string's plain bytes change nothing but the count: skip
                // them up to its next quote or backslash at once.
                let plain = memchr::memchr2(b'"', b'\\', &bytes[i..]).unwrap_or(bytes.len() - i);
                if plain > 0 {
                    if self.seen.saturating_add(plain) > self.max_bytes {
                        self.seen = self.max_bytes.saturating_add(1);
                        self.state = State::Done(Scan::TooLarge);
                        return Scan::TooLarge;
                    }
                    self.seen += plain;
                    i += plain;
                    continue;
                }
            }
            if let Some(scan) = self.step(bytes[i], i) {
                self.state = State::Done(scan);
                return scan;
            }
            i += 1;
        }
        Scan::Incomplete
    }

    /// Inside a string: whether its last byte was a backslash that
    /// escapes the next one (`None` outside a string, or once the value
    /// ended).
    pub(crate) fn string_escape(&self) -> Option<bool> {
        match self.state {
            State::InString { escaped } => Some(escaped),
            _ => None,
        }
    }

    /// How many more bytes the value may have before it breaks the size
    /// bound.
    pub(crate) fn room(&self) -> usize {
        self.max_bytes.saturating_sub(self.seen)
    }

    /// Counts `n` bytes that continue the string being read without
    /// ending it and that fit in [`room`](Self::room), the last of them
    /// leaving it `escaped` or not (see [`string_goes_on`]): the state
    /// [`push`](Self::push) would leave, without reading them again.
    pub(crate) fn skip_in_string(&mut self, n: usize, escaped: bool) {
        debug_assert!(self.string_escape().is_some() && n <= self.room());
        self.state = State::InString { escaped };
        self.seen += n;
    }

    /// How deep the last byte scanned is inside arrays and objects (0
    /// outside them).
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// How many more arrays or objects may open, nested where the last
    /// byte scanned is, before the depth bound is broken.
    pub(crate) fn depth_room(&self) -> usize {
        self.max_depth.saturating_sub(self.depth)
    }

    /// Counts `n` bytes inside the arrays and objects of the value that
    /// leave it open and within the bounds, after which it is `depth`
    /// deep and in a string when `string` is `Some(escaped)` (see
    /// [`string_escape`](Self::string_escape)): the state
    /// [`push`](Self::push) of them would leave, read by whoever knows
    /// where they end.
    pub(crate) fn skip_nested(&mut self, n: usize, depth: usize, string: Option<bool>) {
        debug_assert!(n <= self.room() && (1..=self.max_depth).contains(&depth));
        self.seen += n;
        self.depth = depth;
        self.state = match string {
            Some(escaped) => State::InString { escaped },
            None => State::Nested,
        };
    }

    /// Whether the last byte scanned is inside an array or object,
    /// outside its strings.
    pub(crate) fn nested(&self) -> bool {
        self.state == State::Nested
    }

    /// Scans one more byte when the value then stays incomplete and
    /// within the bounds: what [`push`](Self::push) of it does. Says
    /// whether it did; otherwise nothing changed (the byte ends the value
    /// or breaks a bound, for `push` to say).
    ///
    /// Decided before anything changes, as [`step`](Self::step) would
    /// decide it: a byte past the size bound, a quote or bracket that
    /// closes the value, an opening bracket past the depth bound or a
    /// byte that ends a top-level number or literal is not read.
    #[inline(always)]
    pub(crate) fn step_within(&mut self, b: u8) -> bool {
        if self.seen >= self.max_bytes {
            return false;
        }
        let state = match self.state {
            State::InString { escaped: true } => State::InString { escaped: false },
            State::InString { escaped: false } => match b {
                b'\\' => State::InString { escaped: true },
                b'"' if self.depth == 0 => return false,
                b'"' => State::Nested,
                _ => return self.count(),
            },
            State::Before | State::Nested => match b {
                b' ' | b'\t' | b'\n' | b'\r' if self.state == State::Before => {
                    return self.count();
                }
                b'"' => State::InString { escaped: false },
                b'[' | b'{' => {
                    if self.depth >= self.max_depth {
                        return false;
                    }
                    self.depth += 1;
                    State::Nested
                }
                b']' | b'}' => {
                    if self.depth <= 1 {
                        return false;
                    }
                    self.depth -= 1;
                    State::Nested
                }
                _ if self.state == State::Before => State::Bare,
                _ => return self.count(),
            },
            State::Bare if continues_bare(b) => return self.count(),
            State::Bare | State::Done(_) => return false,
        };
        self.state = state;
        self.count()
    }

    /// Counts one more byte read by [`step_within`](Self::step_within).
    #[inline(always)]
    fn count(&mut self) -> bool {
        self.seen += 1;
        true
    }

    /// Tells the scanner the text ended: a top-level number or literal is
    /// then complete (it had no byte after it to show its end).
    pub fn finish(&mut self) -> Scan {
        match self.state {
            State::Bare => {
                let scan = Scan::Complete { end: 0 };
                self.state = State::Done(scan);
                scan
            }
            State::Done(scan) => scan,
            _ => Scan::Incomplete,
        }
    }

    /// One byte at offset `i` of the current piece (inlined in
    /// [`push`](Self::push)'s loop).
    #[inline(always)]
    fn step(&mut self, b: u8, i: usize) -> Option<Scan> {
        if self.state == State::Bare && !continues_bare(b) {
            return Some(Scan::Complete { end: i });
        }
        if self.state == State::Before && matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            self.seen += 1;
            return self.over_size();
        }
        self.seen += 1;
        if let Some(refused) = self.over_size() {
            return Some(refused);
        }
        match self.state {
            State::InString { escaped: true } => self.state = State::InString { escaped: false },
            State::InString { escaped: false } => match b {
                b'\\' => self.state = State::InString { escaped: true },
                b'"' if self.depth == 0 => return Some(Scan::Complete { end: i + 1 }),
                b'"' => self.state = State::Nested,
                _ => {}
            },
            State::Before | State::Nested => match b {
                b'"' => self.state = State::InString { escaped: false },
                b'[' | b'{' => {
                    self.depth += 1;
                    if self.depth > self.max_depth {
                        return Some(Scan::TooDeep);
                    }
                    self.state = State::Nested;
                }
                b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(Scan::Complete { end: i + 1 });
                    }
                }
                _ if self.state == State::Before => self.state = State::Bare,
                _ => {}
            },
            State::Bare | State::Done(_) => {}
        }
        None
    }

    fn over_size(&self) -> Option<Scan> {
        (self.seen > self.max_bytes).then_some(Scan::TooLarge)
    }
}

/// Whether a string goes on after `piece`, which continues it (`escaped`:
/// the byte before the piece was a backslash that escapes the next):
/// `Some` with whether the piece ends just after such a backslash, `None`
/// when a quote in it ends the string.
pub(crate) fn string_goes_on(piece: &[u8], mut escaped: bool) -> Option<bool> {
    let mut i = 0;
    while i < piece.len() {
        if escaped {
            escaped = false;
            i += 1;
            continue;
        }
        let rest = &piece[i..];
        let special = if rest.len() < 16 {
            rest.iter().position(|&b| b == b'"' || b == b'\\')
        } else {
            memchr::memchr2(b'"', b'\\', rest)
        };
        match special {
            None => break,
            Some(k) if rest[k] == b'"' => return None,
            Some(k) => {
                escaped = true;
                i += k + 1;
            }
        }
    }
    Some(escaped)
}

/// Whether `b` can continue a number or a literal.
fn continues_bare(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `text` in pieces of `size` bytes (at character boundaries) and
    /// returns where the value ended, as an offset into `text`.
    fn end_in_pieces(text: &str, size: usize) -> Option<usize> {
        let mut scan = JsonScanner::new(1 << 20, 64);
        let mut offset = 0;
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = size.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            let (piece, tail) = rest.split_at(cut);
            if let Scan::Complete { end } = scan.push(piece) {
                return Some(offset + end);
            }
            offset += piece.len();
            rest = tail;
        }
        match scan.finish() {
            Scan::Complete { .. } => Some(text.len()),
            _ => None,
        }
    }

    #[test]
    fn a_value_ends_at_the_same_byte_for_every_piece_size() {
        let cases: &[(&str, Option<usize>)] = &[
            (r#"{"a": 1}</tool_call>"#, Some(8)),
            (r#"  {"a": "}{\"]"} tail"#, Some(16)),
            (r#"{"a": "\\"}x"#, Some(11)),
            (r#"[{"k": ["é", "🦀"]}, 2] and more"#, Some(26)),
            (r#""a \" string" rest"#, Some(13)),
            ("{\"open\": [1, 2", None),
            ("   ", None),
        ];
        for &(text, expected) in cases {
            for size in 1..=text.len().max(1) {
                assert_eq!(
                    end_in_pieces(text, size),
                    expected,
                    "{text:?} in pieces of {size}"
                );
            }
        }
    }

    #[test]
    fn a_top_level_number_or_literal_ends_at_the_first_byte_that_cannot_continue_it() {
        assert_eq!(end_in_pieces("12.5e3, next", 1), Some(6));
        assert_eq!(end_in_pieces("true}", 2), Some(4));
        assert_eq!(end_in_pieces("null", 4), Some(4));
    }

    #[test]
    fn a_value_over_the_bounds_is_refused_as_soon_as_it_breaks_them() {
        let mut scan = JsonScanner::new(10, 64);
        assert_eq!(scan.push(r#"{"a": "#), Scan::Incomplete);
        assert_eq!(scan.push(r#""12345"}"#), Scan::TooLarge);
        assert_eq!(scan.push("}"), Scan::TooLarge);

        let mut scan = JsonScanner::new(1 << 20, 3);
        assert_eq!(scan.push("[[["), Scan::Incomplete);
        assert_eq!(scan.push("["), Scan::TooDeep);

        // Brackets in strings do not nest.
        let mut scan = JsonScanner::new(1 << 20, 2);
        assert_eq!(
            scan.push(r#"{"a": "[[[[[[", "b": [1]}"#),
            Scan::Complete { end: 25 }
        );
    }

    #[test]
    fn a_refused_value_counts_its_bytes_to_one_past_the_bound_whatever_the_pieces() {
        // 40 bytes of string after `{"a": "`: the bound (20) breaks inside
        // the string, at the same count fed whole or a byte at a time.
        let text = format!(r#"{{"a": "{}"}}"#, "x\\y ".repeat(10));
        for size in [1, 3, text.len()] {
            let mut scan = JsonScanner::new(20, 64);
            let mut got = Scan::Incomplete;
            for piece in text.as_bytes().chunks(size) {
                got = scan.push(std::str::from_utf8(piece).unwrap());
                if got != Scan::Incomplete {
                    break;
                }
            }
            assert_eq!((got, scan.len()), (Scan::TooLarge, 21), "pieces of {size}");
        }
    }

    #[test]
    fn a_string_skipped_in_place_leaves_the_state_push_leaves() {
        // Pieces that continue a string (and fit) are counted with
        // `skip_in_string`, the others read by `push`: the end and the
        // count are those `push` alone gives, piece after piece.
        let texts = [
            r#"{"a": "plain \\ then \" and \\\\", "b": "x"} tail"#,
            r#""é🦀 \u00e9 \\"x"#,
            r#"["a\\\\\\\"", "}]"]"#,
        ];
        for text in texts {
            let mut skipped = 0;
            for size in 1..=6 {
                let mut pushed = JsonScanner::new(1 << 20, 64);
                let mut skipping = JsonScanner::new(1 << 20, 64);
                let (mut a, mut b) = (Scan::Incomplete, Scan::Incomplete);
                let mut rest = text;
                while !rest.is_empty() {
                    let cut = rest.ceil_char_boundary(size.min(rest.len()));
                    let (piece, tail) = rest.split_at(cut);
                    rest = tail;
                    if a == Scan::Incomplete {
                        a = pushed.push(piece);
                    }
                    if b == Scan::Incomplete {
                        let goes_on = skipping
                            .string_escape()
                            .and_then(|escaped| string_goes_on(piece.as_bytes(), escaped));
                        match goes_on {
                            Some(escaped) if piece.len() <= skipping.room() => {
                                skipping.skip_in_string(piece.len(), escaped);
                                skipped += 1;
                            }
                            _ => b = skipping.push(piece),
                        }
                    }
                    assert_eq!((a, pushed.len()), (b, skipping.len()), "{text} by {size}");
                    assert_eq!(pushed.string_escape(), skipping.string_escape());
                }
                assert!(matches!(a, Scan::Complete { .. }), "{text} by {size}");
            }
            assert!(skipped > 0, "{text}");
        }
    }

    #[test]
    fn a_string_goes_on_up_to_a_quote_that_is_not_escaped() {
        assert_eq!(string_goes_on(b"plain text", false), Some(false));
        assert_eq!(string_goes_on(b"", true), Some(true));
        assert_eq!(string_goes_on(br#"ends"here"#, false), None);
        assert_eq!(string_goes_on(br#"\"still in"#, false), Some(false));
        assert_eq!(string_goes_on(br#"" escaped"#, true), Some(false));
        assert_eq!(string_goes_on(br#"one \"#, false), Some(true));
        assert_eq!(string_goes_on(br#"\\"#, false), Some(false));
        assert_eq!(string_goes_on(br#"\\""#, false), None);
        let long = format!("{}\\", "x".repeat(40));
        assert_eq!(string_goes_on(long.as_bytes(), false), Some(true));
        let long = format!("{}\"{}", "x".repeat(40), "y".repeat(40));
        assert_eq!(string_goes_on(long.as_bytes(), false), None);
    }

    #[test]
    fn the_room_left_is_what_the_size_bound_allows_more() {
        let mut scan = JsonScanner::new(12, 64);
        assert_eq!(scan.push(r#"{"a": ""#), Scan::Incomplete);
        assert_eq!((scan.room(), scan.string_escape()), (5, Some(false)));
        scan.skip_in_string(5, true);
        assert_eq!(
            (scan.room(), scan.len(), scan.string_escape()),
            (0, 12, Some(true))
        );
        // At the bound: one byte more is refused.
        assert_eq!(scan.push("y"), Scan::TooLarge);
        assert_eq!(JsonScanner::new(12, 64).string_escape(), None);
    }

    #[test]
    fn a_byte_stepped_within_is_read_as_push_reads_it_and_an_ending_one_is_refused() {
        // Every byte of each text (ASCII, as the bytes read in place are),
        // at each bound: `step_within` reads it exactly when `push` of it
        // leaves the value incomplete, and then leaves the state `push`
        // leaves; otherwise it changes nothing.
        let texts = [
            r#"  {"a": "x\"y", "b": [1, {"c": null}], "d": -2.5e3, "e": true} tail"#,
            r#""a \\ \" end" x"#,
            "12.5, 3",
            "[[[[]]]]",
            "}",
            "  true}",
        ];
        for text in texts {
            for (max_bytes, max_depth) in [(1 << 20, 64), (9, 64), (1 << 20, 2), (3, 1)] {
                let mut pushed = JsonScanner::new(max_bytes, max_depth);
                let mut stepped = JsonScanner::new(max_bytes, max_depth);
                for (i, &b) in text.as_bytes().iter().enumerate() {
                    let before = format!("{stepped:?}");
                    let within = stepped.step_within(b);
                    let scan = pushed.push(&text[i..=i]);
                    let case = format!("{text:?} byte {i} at {max_bytes}/{max_depth}");
                    assert_eq!(within, scan == Scan::Incomplete, "{case}");
                    if !within {
                        assert_eq!(format!("{stepped:?}"), before, "{case}");
                        break;
                    }
                    assert_eq!(format!("{stepped:?}"), format!("{pushed:?}"), "{case}");
                }
            }
        }
    }

    #[test]
    fn once_complete_later_pieces_are_not_part_of_the_value() {
        let mut scan = JsonScanner::new(1 << 20, 64);
        assert_eq!(scan.push("{}"), Scan::Complete { end: 2 });
        assert_eq!(scan.push("{"), Scan::Complete { end: 0 });
        assert_eq!(scan.len(), 2);
    }
}
