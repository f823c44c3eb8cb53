//! Who runs a call's body, and whether that instance is gone.
//!
//! An owner is named `BOOT/PID/NONCE`: the machine's boot id (Linux's
//! `/proc/sys/kernel/random/boot_id`, or `-`), the process id and a random
//! nonce per [`Journal`](super::Journal). A `started` record whose lease has
//! run out, or whose owner is a process of this same boot that no longer
//! exists, belongs to an owner that is gone. (Deciding "gone" too early can
//! never run a body twice: a call found so is answered `interrupted`, never
//! run again.)

use std::sync::OnceLock;

/// This process's boot id, read once.
fn boot_id() -> &'static str {
    static BOOT: OnceLock<String> = OnceLock::new();
    BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .map(|s| s.trim().replace('/', "-"))
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "-".to_owned())
    })
}

/// A new owner name for this process, `BOOT/PID/NONCE`: what a piece of
/// durable work (a call's `started` record, an adapter's task) records as
/// the instance working on it, for [`process_gone`] to judge. Every call
/// gives a new name (the nonce from std's randomly seeded hasher): two
/// journals, or two servers, of one process never share one.
pub fn new_owner() -> String {
    use std::hash::BuildHasher;
    let seed = std::collections::hash_map::RandomState::new();
    let nonce = seed.hash_one((std::process::id(), std::time::SystemTime::now()));
    format!("{}/{}/{nonce:016x}", boot_id(), std::process::id())
}

/// True when `owner` (a name from [`new_owner`]) names a process of this
/// machine's boot, other than this one, that no longer exists. False for
/// an owner of another boot or machine and for a name of another form:
/// those are judged by their lease alone.
pub fn process_gone(owner: &str) -> bool {
    let mut parts = owner.split('/');
    let (Some(boot), Some(pid)) = (parts.next(), parts.next()) else {
        return false;
    };
    if boot == "-" || boot != boot_id() {
        return false;
    }
    let Ok(pid) = pid.parse::<i32>() else {
        return false;
    };
    if pid == std::process::id() as i32 {
        return false;
    }
    !pid_alive(pid)
}

#[cfg(unix)]
fn pid_alive(pid: i32) -> bool {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    // Signal 0 checks existence only; EPERM means it exists (another user's).
    !matches!(kill(Pid::from_raw(pid), None), Err(Errno::ESRCH))
}

#[cfg(not(unix))]
fn pid_alive(_: i32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_never_gone_and_a_dead_pid_of_this_boot_is() {
        let me = new_owner();
        assert!(!process_gone(&me));
        if boot_id() != "-" {
            // A child that has exited and been reaped: its pid is free.
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let pid = child.id();
            child.wait().unwrap();
            assert!(process_gone(&format!("{}/{pid}/x", boot_id())));
            // Another boot's process is never judged from here.
            assert!(!process_gone(&format!("other-boot/{pid}/x")));
        }
    }
}
