//! The operating system's limits, set inside a worker, and how a dead
//! worker's exit status is read.
//!
//! On Linux and macOS the worker sets `RLIMIT_AS` (address space) once at
//! start and `RLIMIT_CPU` (CPU seconds) before each call, and turns core
//! dumps off. Elsewhere the limits cannot be set and a bounded isolated tool
//! refuses to start its worker rather than run unbounded.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

/// How a worker died, as far as its exit status and stderr tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Death {
    /// Killed by the CPU time limit (`SIGXCPU`).
    Cpu,
    /// Aborted after an allocation failed under the memory limit.
    Memory,
    /// Any other death: a crash, an abort, a kill from outside, an exit.
    Crash,
}

/// Rust's default allocation-error handler prints this before aborting.
pub(crate) const ALLOCATION_FAILED: &str = "memory allocation of ";

#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
mod imp {
    use super::*;
    use nix::sys::resource::{Resource, UsageWho, getrlimit, getrusage, setrlimit};
    use nix::sys::signal::Signal;
    use nix::sys::time::TimeValLike;
    use std::os::unix::process::ExitStatusExt;

    pub(crate) const SUPPORTED: bool = true;

    pub(crate) fn limit_memory(bytes: u64) -> io::Result<()> {
        setrlimit(Resource::RLIMIT_AS, bytes, bytes).map_err(io::Error::from)
    }

    pub(crate) fn no_core_dumps() -> io::Result<()> {
        setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(io::Error::from)
    }

    /// Lets the process use `cpu` more CPU time from now: the soft limit
    /// becomes the time used so far plus `cpu`, each rounded up to whole
    /// seconds (the unit the OS counts in).
    pub(crate) fn limit_cpu_from_now(cpu: Duration) -> io::Result<()> {
        let usage = getrusage(UsageWho::RUSAGE_SELF).map_err(io::Error::from)?;
        let used_us = usage.user_time().num_microseconds() + usage.system_time().num_microseconds();
        let used_s = u64::try_from(used_us).unwrap_or(0).div_ceil(1_000_000);
        let allowed_s = u64::try_from(cpu.as_millis())
            .unwrap_or(u64::MAX)
            .div_ceil(1000)
            .max(1);
        let (_, hard) = getrlimit(Resource::RLIMIT_CPU).map_err(io::Error::from)?;
        let soft = used_s.saturating_add(allowed_s).min(hard);
        setrlimit(Resource::RLIMIT_CPU, soft, hard).map_err(io::Error::from)
    }

    /// `allocation_failed`: the worker printed Rust's allocation-failure
    /// message.
    pub(crate) fn death(status: ExitStatus, allocation_failed: bool) -> Death {
        match status.signal().and_then(|n| Signal::try_from(n).ok()) {
            Some(Signal::SIGXCPU) => Death::Cpu,
            Some(Signal::SIGABRT) if allocation_failed => Death::Memory,
            _ => Death::Crash,
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
mod imp {
    use super::*;

    pub(crate) const SUPPORTED: bool = false;

    fn unsupported() -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "resource limits for isolated tools need Linux or macOS",
        ))
    }

    pub(crate) fn limit_memory(_: u64) -> io::Result<()> {
        unsupported()
    }

    pub(crate) fn no_core_dumps() -> io::Result<()> {
        Ok(())
    }

    pub(crate) fn limit_cpu_from_now(_: Duration) -> io::Result<()> {
        unsupported()
    }

    pub(crate) fn death(_: ExitStatus, allocation_failed: bool) -> Death {
        if allocation_failed {
            Death::Memory
        } else {
            Death::Crash
        }
    }
}

pub(crate) use imp::{SUPPORTED, death, limit_cpu_from_now, limit_memory, no_core_dumps};
