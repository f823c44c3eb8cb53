//! The time and randomness a call is given: one [`CallDraw`] per call (the
//! call's time and its random seed), drawn from its run when the call is
//! admitted, and the injectables that read it ([`Clock`], [`Random`],
//! [`Ids`]).
//!
//! A run reads the time from its [`TimeSource`] (the system clock unless
//! the run sets another) and derives each call's seed from its own seed
//! (from the operating system unless the run sets one) and the call's key
//! (turn and call id): the same run seed gives the same call the same
//! seed, in any process. With a [journal](crate::journal) the draw is kept
//! in the call's record when it is first admitted, so a call resumed or
//! delivered again, in this process or another, is given exactly the
//! values of its first delivery, and a tool declared deterministic given
//! injected time or randomness
//! ([`Determinism::GivenInjected`](crate::spec::Determinism::GivenInjected))
//! computes the same result again: its recorded result may be replayed
//! ([`ReplayCache`](crate::policy::ReplayCache)).
//!
//! The random values come from SplitMix64 (Steele, Lea and Flood, 2014)
//! seeded with the call's seed: a seed kept in a journal gives the same
//! values in every later version of this library.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::ids::{IdSource, ToolCallId};

/// Where a run's calls read the time. The system clock ([`SystemClock`])
/// unless the run sets another
/// ([`RunContextBuilder::time_source`](super::RunContextBuilder::time_source));
/// a [`SystemTime`] is a time source that never moves, and the testkit's
/// `ManualClock` moves only when a test tells it to.
pub trait TimeSource: Send + Sync + 'static {
    /// The time now.
    fn now(&self) -> SystemTime;
}

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SystemClock;

impl TimeSource for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A fixed instant: every call of the run is given this time.
impl TimeSource for SystemTime {
    fn now(&self) -> SystemTime {
        *self
    }
}

/// What one call is given: its time (to the millisecond) and its random
/// seed. Drawn once per call, before its body runs, and the same for every
/// attempt; kept in the call's journal record (`"draw": {"time": ms,
/// "seed": "16 hex digits"}`), so a redelivered call is given it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CallDraw {
    /// The call's time, in milliseconds since the Unix epoch.
    #[serde(rename = "time")]
    pub time_ms: i64,
    /// The call's random seed.
    #[serde(with = "hex_seed")]
    pub seed: u64,
}

impl CallDraw {
    /// The draw of call `call_id` of turn `turn` in a run with seed
    /// `run_seed`, at `now` (cut to the millisecond). The seed is the first
    /// 8 bytes (little-endian) of the SHA-256 of the run seed, the turn
    /// (both little-endian) and the call id's UTF-8 bytes.
    pub fn derive(run_seed: u64, turn: u32, call_id: &ToolCallId, now: SystemTime) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(run_seed.to_le_bytes());
        hasher.update(turn.to_le_bytes());
        hasher.update(call_id.as_str().as_bytes());
        let digest = hasher.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        CallDraw {
            time_ms: crate::approval::to_unix_ms(now),
            seed: u64::from_le_bytes(first),
        }
    }

    /// The call's time.
    pub fn time(&self) -> SystemTime {
        match u64::try_from(self.time_ms) {
            Ok(ms) => UNIX_EPOCH + Duration::from_millis(ms),
            Err(_) => UNIX_EPOCH - Duration::from_millis(self.time_ms.unsigned_abs()),
        }
    }
}

/// The seed as 16 lowercase hex digits: a JSON number above 2^53 is not
/// read back exactly by every JSON reader.
mod hex_seed {
    use super::*;

    pub(super) fn serialize<S: Serializer>(seed: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{seed:016x}"))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        let text = String::deserialize(deserializer)?;
        u64::from_str_radix(&text, 16).map_err(serde::de::Error::custom)
    }
}

/// The call's time, injected by `#[inject] clock: Clock`: the same instant
/// every time it is read in one call (every attempt included), and again
/// when the call is resumed or delivered again from a journal.
///
/// It implements neither `JsonSchema` nor `Deserialize`: it cannot be a
/// field of an argument struct.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    draw: CallDraw,
}

impl Clock {
    /// The clock of a call given `draw`.
    pub fn new(draw: CallDraw) -> Self {
        Clock { draw }
    }

    /// The call's time.
    pub fn now(&self) -> SystemTime {
        self.draw.time()
    }

    /// The call's time in milliseconds since the Unix epoch.
    pub fn unix_ms(&self) -> i64 {
        self.draw.time_ms
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Clock")
            .field("unix_ms", &self.draw.time_ms)
            .finish()
    }
}

/// The call's random values, injected by `#[inject] rng: Random`: a
/// SplitMix64 stream seeded with the call's seed, so the call is given the
/// same values in the same order each time it runs with that seed (every
/// attempt starts the stream anew).
///
/// For another generator (rand's `StdRng::seed_from_u64`), seed it with
/// [`seed`](Self::seed). It implements neither `JsonSchema` nor
/// `Deserialize`: it cannot be a field of an argument struct.
#[derive(Clone, PartialEq, Eq)]
pub struct Random {
    seed: u64,
    state: u64,
}

impl Random {
    /// A stream seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Random { seed, state: seed }
    }

    /// The seed the stream started from (the call's seed).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..bound`, without bias (multiply and reject,
    /// Lemire 2019).
    ///
    /// # Panics
    /// When `bound` is 0 (the range is empty).
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0, "Random::below(0): the range 0..0 is empty");
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(bound);
            if (product as u64) >= threshold {
                return (product >> 64) as u64;
            }
        }
    }

    /// A uniform float in `[0, 1)`, from the top 53 bits of the next value.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Fills `bytes` with random bytes (each 8 from one value, little-endian).
    pub fn fill(&mut self, bytes: &mut [u8]) {
        for chunk in bytes.chunks_mut(8) {
            let value = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&value[..chunk.len()]);
        }
    }
}

impl fmt::Debug for Random {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Random").field("seed", &self.seed).finish()
    }
}

/// The stream [`Ids`] draws from, apart from [`Random`]'s: the call's seed
/// with these bits flipped, so taking an id never changes the random values
/// a call is given.
const IDS_STREAM: u64 = 0x6964_735f_7374_7265;

/// New ids for what a tool creates, injected by `#[inject] ids: Ids`:
/// `prefix-` and 16 hex digits drawn from the call's seed, so a call given
/// the same draw makes the same ids. A run with an id source of its own
/// ([`RunContextBuilder::ids`](super::RunContextBuilder::ids), the
/// testkit's `SequentialIds`: `note-0`, `note-1`, ...) takes them from it
/// instead; those are as repeatable as the source is, and are not kept in
/// a journal.
#[derive(Clone)]
pub struct Ids {
    from: IdsFrom,
}

#[derive(Clone)]
enum IdsFrom {
    Drawn(Random),
    Source(std::sync::Arc<dyn IdSource>),
}

impl Ids {
    /// Ids drawn from `seed` (a call's seed).
    pub fn drawn(seed: u64) -> Self {
        Ids {
            from: IdsFrom::Drawn(Random::new(seed ^ IDS_STREAM)),
        }
    }

    /// Ids taken from `source`.
    pub fn from_source(source: std::sync::Arc<dyn IdSource>) -> Self {
        Ids {
            from: IdsFrom::Source(source),
        }
    }

    /// A new id starting with `prefix` and `-`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self, prefix: &str) -> String {
        match &mut self.from {
            IdsFrom::Drawn(random) => format!("{prefix}-{:016x}", random.next_u64()),
            IdsFrom::Source(source) => source.next_id(prefix),
        }
    }
}

impl fmt::Debug for Ids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from = match self.from {
            IdsFrom::Drawn(_) => "drawn",
            IdsFrom::Source(_) => "source",
        };
        f.debug_struct("Ids").field("from", &from).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_splitmix64_as_published() {
        // The reference outputs of splitmix64.c (Vigna) for seed 1234567.
        let mut random = Random::new(1234567);
        let first: Vec<u64> = (0..5).map(|_| random.next_u64()).collect();
        assert_eq!(
            first,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821,
            ]
        );
    }

    #[test]
    fn below_stays_in_range_and_unit_below_one() {
        let mut random = Random::new(7);
        for bound in [1, 2, 3, 10, u64::MAX] {
            for _ in 0..1000 {
                assert!(random.below(bound) < bound);
            }
        }
        for _ in 0..1000 {
            let x = random.unit();
            assert!((0.0..1.0).contains(&x));
        }
        let mut bytes = [0u8; 11];
        Random::new(1).fill(&mut bytes);
        let mut again = Random::new(1);
        let expected: Vec<u8> = again
            .next_u64()
            .to_le_bytes()
            .into_iter()
            .chain(again.next_u64().to_le_bytes().into_iter().take(3))
            .collect();
        assert_eq!(bytes.to_vec(), expected);
    }

    #[test]
    #[should_panic(expected = "the range 0..0 is empty")]
    fn below_zero_is_refused() {
        Random::new(1).below(0);
    }

    #[test]
    fn a_draw_depends_on_the_run_seed_the_turn_and_the_call_id_only() {
        let at = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        let id = ToolCallId::from("call_1");
        let one = CallDraw::derive(42, 1, &id, at);
        assert_eq!(one, CallDraw::derive(42, 1, &id, at));
        assert_ne!(one.seed, CallDraw::derive(43, 1, &id, at).seed);
        assert_ne!(one.seed, CallDraw::derive(42, 2, &id, at).seed);
        assert_ne!(
            one.seed,
            CallDraw::derive(42, 1, &ToolCallId::from("call_2"), at).seed
        );
        assert_eq!(one.time_ms, 1_700_000_000_123);
        assert_eq!(one.time(), at);
        // Cut to the millisecond.
        let later = at + Duration::from_micros(999);
        assert_eq!(CallDraw::derive(42, 1, &id, later).time(), at);
    }

    #[test]
    fn a_draw_reads_back_from_its_json_form() {
        let draw = CallDraw {
            time_ms: 1_700_000_000_000,
            seed: u64::MAX - 1,
        };
        let json = serde_json::to_value(draw).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"time": 1_700_000_000_000i64, "seed": "fffffffffffffffe"})
        );
        assert_eq!(serde_json::from_value::<CallDraw>(json).unwrap(), draw);
    }

    #[test]
    fn ids_are_drawn_apart_from_the_random_values() {
        let mut ids = Ids::drawn(5);
        let first = ids.next("note");
        assert!(
            first.starts_with("note-") && first.len() == 5 + 16,
            "{first}"
        );
        assert_ne!(first, ids.next("note"));
        assert_eq!(Ids::drawn(5).next("note"), first);
        let random = Random::new(5).next_u64();
        assert_ne!(first, format!("note-{random:016x}"));
    }
}
