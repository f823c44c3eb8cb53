//! Comparing two names (tool, property and argument names: short
//! strings) in line, without a call of `memcmp`.

/// Whether two names are the same, bytes compared in line: a name is short,
/// and a call of `memcmp` costs more than the comparison.
#[inline]
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Two loads from each end, overlapping when the name is shorter than
    // twice their width: together they cover every byte.
    if n >= 8 {
        if n > 16 {
            return a == b;
        }
        let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap());
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    if n >= 4 {
        let word = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap());
        return word(a, 0) == word(b, 0) && word(a, n - 4) == word(b, n - 4);
    }
    if n >= 2 {
        let word = |s: &[u8], at: usize| u16::from_le_bytes(s[at..at + 2].try_into().unwrap());
        return word(a, 0) == word(b, 0) && word(a, n - 2) == word(b, n - 2);
    }
    n == 0 || a[0] == b[0]
}

#[cfg(test)]
mod tests {
    use super::same_name;

    #[test]
    fn names_compared_in_line_agree_with_byte_equality() {
        // Every length up to past the in-line widths, each pair differing in
        // one byte at every position, or in length only.
        for n in 0..=40usize {
            let a: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            assert!(same_name(&a, &a.clone()), "{a}");
            for at in 0..n {
                let mut b = a.clone().into_bytes();
                b[at] = b'Z';
                let b = String::from_utf8(b).unwrap();
                assert!(!same_name(&a, &b), "{a} vs {b}");
                assert!(!same_name(&b, &a), "{b} vs {a}");
            }
            let longer = format!("{a}a");
            assert!(!same_name(&a, &longer));
            assert!(!same_name(&longer, &a));
        }
        assert!(same_name("", ""));
        assert!(!same_name("é", "e\u{301}"));
    }
}
