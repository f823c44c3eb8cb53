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

/// Bytes the program holds in allocations right now (glibc's `mallinfo2`:
/// `uordblks` plus `hblkhd`, summed over every arena), in KiB; `None` off
/// glibc. Unlike `VmRSS`, this does not count memory the allocator keeps
/// after it was freed, so it is what grows when something leaks.
pub fn heap_in_use_kib() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallinfo2` only reads the allocator's statistics.
        let info = unsafe { libc::mallinfo2() };
        Some(((info.uordblks + info.hblkhd) / 1024) as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}

/// Bytes the program holds in allocations right now (see
/// [`heap_in_use_kib`]); `None` off glibc.
pub fn heap_in_use_bytes() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallinfo2` only reads the allocator's statistics.
        let info = unsafe { libc::mallinfo2() };
        Some((info.uordblks + info.hblkhd) as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}

/// Asks glibc to give freed memory back to the system (`malloc_trim`), so a
/// following `VmRSS` reading counts what is still held; a no-op off glibc.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
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
