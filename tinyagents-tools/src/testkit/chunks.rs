//! Cutting a model's output into the pieces a stream delivers it in, the way
//! a test chooses: whole, in pieces of a fixed size, one character at a
//! time, or at random lengths from a seed (the same seed, the same cuts).

/// How to cut an output into pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunking {
    /// One piece: the whole output.
    Whole,
    /// Pieces of this many units (characters for text, bytes for bytes);
    /// the last may be shorter. `Fixed(0)` is [`Whole`](Self::Whole).
    Fixed(usize),
    /// Pieces of random lengths from 1 to `max` units, drawn from `seed`.
    Random {
        /// The seed: the same seed cuts the same output the same way.
        seed: u64,
        /// The longest piece (at least 1).
        max: usize,
    },
}

impl Chunking {
    /// One character (or one byte) at a time.
    pub const ONE: Chunking = Chunking::Fixed(1);

    /// The chunkings a streaming test should hold for: whole, fixed sizes
    /// from 1 to 7 and 16, and `seeds` random chunkings of pieces up to 8
    /// units long.
    pub fn matrix(seeds: u64) -> Vec<Chunking> {
        let mut all = vec![Chunking::Whole];
        all.extend((1..=7).chain([16]).map(Chunking::Fixed));
        all.extend((0..seeds).map(|seed| Chunking::Random { seed, max: 8 }));
        all
    }

    /// The lengths of the pieces, in units, for an output of `len` units.
    fn lengths(self, len: usize) -> impl Iterator<Item = usize> {
        let mut left = len;
        let mut rng = SplitMix(match self {
            Chunking::Random { seed, .. } => seed,
            _ => 0,
        });
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            let n = match self {
                Chunking::Whole | Chunking::Fixed(0) => left,
                Chunking::Fixed(n) => n,
                Chunking::Random { max, .. } => 1 + (rng.next() % max.max(1) as u64) as usize,
            }
            .min(left);
            left -= n;
            Some(n)
        })
    }
}

/// `text` cut into pieces of whole characters (a piece never splits a
/// UTF-8 sequence; [`chunk_bytes`] does).
///
/// ```
/// use tinyagents_tools::testkit::{Chunking, chunk_text};
///
/// assert_eq!(chunk_text("héllo", Chunking::Fixed(2)), ["hé", "ll", "o"]);
/// assert_eq!(chunk_text("héllo", Chunking::Whole), ["héllo"]);
/// ```
pub fn chunk_text(text: &str, chunking: Chunking) -> Vec<&str> {
    let mut bounds = text.char_indices().map(|(i, _)| i).chain([text.len()]);
    let mut start = bounds.next().unwrap_or(0);
    let mut pieces = Vec::new();
    for n in chunking.lengths(text.chars().count()) {
        let end = bounds.nth(n - 1).unwrap_or(text.len());
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

/// `bytes` cut into pieces of bytes, anywhere (in the middle of a UTF-8
/// sequence too), as a network delivers them.
///
/// ```
/// use tinyagents_tools::testkit::{Chunking, chunk_bytes};
///
/// let pieces = chunk_bytes("é".as_bytes(), Chunking::ONE);
/// assert_eq!(pieces, [&[0xc3][..], &[0xa9][..]]);
/// ```
pub fn chunk_bytes(bytes: &[u8], chunking: Chunking) -> Vec<&[u8]> {
    let mut start = 0;
    chunking
        .lengths(bytes.len())
        .map(|n| {
            let piece = &bytes[start..start + n];
            start += n;
            piece
        })
        .collect()
}

/// SplitMix64: a small, well-mixed generator, enough to cut test input.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chunking_puts_the_pieces_back_together_as_the_whole() {
        let text = "a ✓ <tool_call>{\"é\": \"🦀\"}</tool_call>\n";
        for chunking in Chunking::matrix(20) {
            let pieces = chunk_text(text, chunking);
            assert_eq!(pieces.concat(), text, "{chunking:?}");
            assert!(pieces.iter().all(|p| !p.is_empty()), "{chunking:?}");
            let bytes = chunk_bytes(text.as_bytes(), chunking);
            assert_eq!(bytes.concat(), text.as_bytes(), "{chunking:?}");
        }
    }

    #[test]
    fn fixed_pieces_count_characters_for_text_and_bytes_for_bytes() {
        assert_eq!(chunk_text("✓✓✓", Chunking::Fixed(2)), ["✓✓", "✓"]);
        assert_eq!(chunk_bytes("✓".as_bytes(), Chunking::Fixed(2)).len(), 2);
        assert!(chunk_text("", Chunking::ONE).is_empty());
    }

    #[test]
    fn the_same_seed_cuts_the_same_way_and_another_seed_differently() {
        let text = "the quick brown fox jumps over the lazy dog";
        let a = chunk_text(text, Chunking::Random { seed: 7, max: 5 });
        let b = chunk_text(text, Chunking::Random { seed: 7, max: 5 });
        let c = chunk_text(text, Chunking::Random { seed: 8, max: 5 });
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|p| (1..=5).contains(&p.len())));
    }
}
