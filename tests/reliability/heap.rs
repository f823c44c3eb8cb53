//! The heap in use, counted by this binary's allocator: what a leak grows.
//! (Resident memory also grows by the allocator's own arenas, in steps of
//! about 20 MiB when the runtime's second worker first runs many calls at
//! once, which is not a leak.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// The system allocator, counting the bytes in use.
struct Counting;

static IN_USE: AtomicIsize = AtomicIsize::new(0);

fn add(bytes: usize, sign: isize) {
    let bytes = isize::try_from(bytes).unwrap_or(isize::MAX);
    IN_USE.fetch_add(sign * bytes, Ordering::Relaxed);
}

// SAFETY: every call is passed to the system allocator unchanged; the
// counter is a plain atomic (no allocation, no lock).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as it is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            add(layout.size(), 1);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as it is.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            add(layout.size(), 1);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.dealloc(ptr, layout) };
        add(layout.size(), -1);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as it is.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            add(layout.size(), -1);
            add(new_size, 1);
        }
        new
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The heap in use now, in KiB.
pub fn in_use_kib() -> i64 {
    (IN_USE.load(Ordering::Relaxed) / 1024) as i64
}

#[test]
fn the_count_follows_what_is_allocated_and_freed() {
    // Other tests of the binary allocate in parallel threads: the block is
    // large enough to stand out from them.
    let before = in_use_kib();
    let block = vec![1u8; 64 << 20];
    let holding = in_use_kib();
    drop(block);
    let after = in_use_kib();
    assert!(
        holding - before >= (64 << 10) - 8 * 1024,
        "{before} {holding}"
    );
    assert!(
        holding - after >= (64 << 10) - 8 * 1024,
        "{holding} {after}"
    );
}
