//! How deep JSON text nests, read without parsing it.

/// Scans JSON text once: the depth reached when its arrays and objects nest
/// deeper than `max` (brackets inside strings do not count), else `None`.
/// The text need not be valid JSON; a parser judges it afterwards.
pub(crate) fn depth_over(text: &[u8], max: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::depth_over;

    #[test]
    fn brackets_in_strings_do_not_nest() {
        assert_eq!(depth_over(br#"{"a": "[[[[[[["}"#, 2), None);
        assert_eq!(depth_over(br#"{"a": "\"[[[", "b": [[1]]}"#, 2), Some(3));
        assert_eq!(depth_over(b"[[]]", 2), None);
        assert_eq!(depth_over(b"[[[]]]", 2), Some(3));
    }
}
