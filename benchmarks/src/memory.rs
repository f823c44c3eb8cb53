//! Peak and current resident set size of this process, from
//! `/proc/self/status` (Linux).

/// A field of `/proc/self/status` in kibibytes (`VmHWM`, `VmRSS`), or `None`
/// where the file or field does not exist.
pub fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

/// Peak resident set size so far (`VmHWM`), in KiB.
pub fn peak_rss_kib() -> Option<u64> {
    status_kib("VmHWM")
}

/// Current resident set size (`VmRSS`), in KiB.
pub fn rss_kib() -> Option<u64> {
    status_kib("VmRSS")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_is_at_least_current_on_linux() {
        if let (Some(peak), Some(now)) = (peak_rss_kib(), rss_kib()) {
            assert!(peak >= now && now > 0);
        }
    }
}
