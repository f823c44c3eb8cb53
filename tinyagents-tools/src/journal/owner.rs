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

/// True unless `pid` is known not to exist. Only reached for an owner of
/// this boot, so on Linux (the boot id is read from `/proc`): a process
/// exists while `/proc/PID` does (a zombie included, as for `kill(pid,
/// 0)`). Under `hidepid=2` the processes of other users are not listed,
/// pid 1 among them: then nothing can be told, and the process counts as
/// alive.
fn pid_alive(pid: i32) -> bool {
    let proc = std::path::Path::new("/proc");
    !proc.join("1").exists() || proc.join(pid.to_string()).exists()
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
            // A running child, and pid 1, are not gone.
            let mut running = std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap();
            assert!(!process_gone(&format!("{}/{}/x", boot_id(), running.id())));
            assert!(!process_gone(&format!("{}/1/x", boot_id())));
            running.kill().unwrap();
            running.wait().unwrap();
            // Another boot's process is never judged from here.
            assert!(!process_gone(&format!("other-boot/{pid}/x")));
        }
    }
}
