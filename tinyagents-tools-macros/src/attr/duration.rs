//! The duration and size strings of the macro's options (`timeout = "30s"`,
//! `max_cpu = "2s"`, `retry(backoff = "1s")`, `max_memory = "256MiB"`),
//! read at compile time.

/// Why a duration literal is not valid.
#[derive(Debug, PartialEq, Eq)]
pub enum DurationError {
    NoNumber,
    NoUnit,
    Fraction,
    UnknownUnit,
    TooLong,
}

/// Parses `"30s"`, `"250ms"`, `"5m"`, `"1h"` into milliseconds.
pub fn parse_duration_ms(text: &str) -> Result<u64, DurationError> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(DurationError::NoNumber);
    }
    let value: u64 = text[..digits].parse().map_err(|_| DurationError::TooLong)?;
    let factor = match text[digits..].trim_start() {
        "" => return Err(DurationError::NoUnit),
        unit if unit.starts_with('.') => return Err(DurationError::Fraction),
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(DurationError::UnknownUnit),
    };
    value.checked_mul(factor).ok_or(DurationError::TooLong)
}

impl DurationError {
    /// What to write instead.
    pub fn message(&self, what: &str) -> String {
        let problem = match self {
            DurationError::NoNumber => "does not start with a whole number",
            DurationError::NoUnit => "has no unit",
            DurationError::Fraction => "has a fraction (use a smaller unit)",
            DurationError::UnknownUnit => "has an unknown unit",
            DurationError::TooLong => "is too long",
        };
        format!(
            "this {what} {problem}; write a whole number and a unit: ms, s, m or h (for example \"30s\" or \"250ms\")"
        )
    }
}

/// Parses `"256MiB"`, `"512KiB"`, `"2GiB"` into bytes; `None` when the text
/// is not a whole number and one of those units, or overflows.
pub fn parse_size_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let value: u64 = text[..digits].parse().ok()?;
    let shift = match text[digits..].trim_start() {
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        _ => return None,
    };
    value.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_past_u64_milliseconds_is_refused_and_the_message_names_the_option() {
        let error = parse_duration_ms("99999999999999999h").unwrap_err();
        assert_eq!(error, DurationError::TooLong);
        let message = error.message("timeout");
        assert!(
            message.starts_with("this timeout is too long; write a whole number and a unit"),
            "{message}"
        );
    }

    #[test]
    fn durations_take_a_whole_number_and_a_unit() {
        assert_eq!(parse_duration_ms("250ms"), Ok(250));
        assert_eq!(parse_duration_ms("30s"), Ok(30_000));
        assert_eq!(parse_duration_ms("5m"), Ok(300_000));
        assert_eq!(parse_duration_ms("1h"), Ok(3_600_000));
        assert_eq!(parse_duration_ms("0s"), Ok(0));
        assert_eq!(parse_duration_ms("30"), Err(DurationError::NoUnit));
        assert_eq!(parse_duration_ms("1.5s"), Err(DurationError::Fraction));
        assert_eq!(parse_duration_ms("s"), Err(DurationError::NoNumber));
        assert_eq!(parse_duration_ms("3d"), Err(DurationError::UnknownUnit));
    }

    #[test]
    fn sizes_take_a_whole_number_and_a_binary_unit() {
        for refused in ["256MB", "256", "MiB", "1.5GiB", "99999999999999GiB"] {
            assert_eq!(parse_size_bytes(refused), None, "{refused}");
        }
        assert_eq!(parse_size_bytes("256MiB"), Some(268_435_456));
        assert_eq!(parse_size_bytes("512KiB"), Some(524_288));
        assert_eq!(parse_size_bytes("2 GiB"), Some(2_147_483_648));
        assert_eq!(parse_size_bytes("0MiB"), Some(0));
    }
}
