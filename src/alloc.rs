//! The addon's allocator: mimalloc for blocks under [`LARGE`] (64 KiB), the system allocator
//! (glibc) for blocks of [`LARGE`] and more.
//!
//! Why two (measured, bench/NOTES.md "The addon's allocator"): a call's many small blocks (frames,
//! headers, maps, futures) cost ~20% less CPU with mimalloc (mimalloc alone, Bun, 32 HTTP calls in
//! flight: the client's CPU 14.8–15.8 → 11.6–12.3 µs a call; with this split, that row went from
//! 80k to 101–103k calls/s, past `fetch`); but the large-result path allocates and frees buffers of 64 KiB to 32 MiB per answer, which
//! glibc serves again from memory it kept, while mimalloc alone maps and faults them in again
//! (8 and 32 MiB results ~1.5× slower). Routing by size keeps every buffer of the large-answer
//! path (64 KiB and more: `sink::RAW_ANSWER_BYTES`) on glibc, as before, and the small blocks on
//! mimalloc.
//!
//! Routing is by the block's size alone, so `dealloc` (which gets the same layout as `alloc`)
//! always returns a block to the allocator it came from. A `realloc` across the line moves the
//! block: allocate on the new side, copy, free on the old side. (A caller that frees with another
//! size than it allocated breaks Rust's rules already; across the line it would now free on the
//! wrong side: debug builds check every `dealloc` and abort on a block freed on the wrong side.)
//!
//! It is installed with feature `node` (the addon's build, part of the default features): the
//! crate used as a Rust library, with `default-features = false`, leaves the choice of allocator
//! to its user. mimalloc 2.x, not 3.x: 3.x cost ~105 KiB (Node) and ~70 KiB (Bun) more per idle
//! stdio client, and the 3.x bundled (3.3.2) crashes when an addon first loaded in a worker thread
//! that exits is used from a later thread that reuses its id (mimalloc issue 1287; 3.5.0 has a
//! related defect in the same place, issue 1393).

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// Blocks of this size and more go to the system allocator.
pub const LARGE: usize = 64 * 1024;

/// The two-allocator router (see the module docs).
pub struct Split;

#[inline]
fn large(size: usize) -> bool {
    size >= LARGE
}

// SAFETY: every block is freed and resized by the allocator that made it: the side is a pure
// function of the size, and `GlobalAlloc` callers pass the block's own layout back.
unsafe impl GlobalAlloc for Split {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees (non-zero size).
        unsafe {
            if large(layout.size()) {
                System.alloc(layout)
            } else {
                MiMalloc.alloc(layout)
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if large(layout.size()) {
                System.alloc_zeroed(layout)
            } else {
                MiMalloc.alloc_zeroed(layout)
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout, so from the side its size picks.
        unsafe {
            // A panic must not unwind out of an allocator (and would allocate): abort.
            if cfg!(debug_assertions) && large(layout.size()) == mimalloc_owns(ptr) {
                std::process::abort();
            }
            if large(layout.size()) {
                System.dealloc(ptr, layout)
            } else {
                MiMalloc.dealloc(ptr, layout)
            }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (was, will) = (large(layout.size()), large(new_size));
        // SAFETY: same side: forwarded with the caller's guarantees. Across the line: the new
        // layout is valid (the caller guarantees `new_size` rounded to `layout.align()` does not
        // overflow), the copy covers the smaller of two live blocks that cannot overlap, and the
        // old block is freed by the side that made it.
        unsafe {
            match (was, will) {
                (false, false) => MiMalloc.realloc(ptr, layout, new_size),
                (true, true) => System.realloc(ptr, layout, new_size),
                _ => {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[global_allocator]
static GLOBAL: Split = Split;

unsafe extern "C" {
    // mimalloc's own: whether `p` lies in memory mimalloc manages (built in by libmimalloc-sys).
    fn mi_is_in_heap_region(p: *const std::ffi::c_void) -> bool;
}

/// Whether the block at `ptr` is mimalloc's (for the checks: debug builds and the tests).
fn mimalloc_owns(ptr: *const u8) -> bool {
    // SAFETY: a pure lookup in mimalloc's region map; any pointer value may be asked about.
    unsafe { mi_is_in_heap_region(ptr.cast()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each size goes to its side: under the line to mimalloc, on and over it to glibc.
    #[test]
    fn sizes_go_to_their_side() {
        for (size, mi) in [
            (1, true),
            (4096, true),
            (LARGE - 1, true),
            (LARGE, false),
            (LARGE * 40, false),
        ] {
            let v: Vec<u8> = Vec::with_capacity(size);
            assert_eq!(mimalloc_owns(v.as_ptr()), mi, "a block of {size} bytes");
        }
    }

    /// A block grown and shrunk across the line keeps its bytes and moves to the side of its new
    /// size each time.
    #[test]
    fn blocks_keep_their_bytes_and_move_across_the_line() {
        let mut v: Vec<u8> = Vec::with_capacity(16);
        assert!(mimalloc_owns(v.as_ptr()));
        for i in 0..(LARGE * 3) {
            v.push((i % 251) as u8);
        }
        assert!(v.capacity() >= LARGE);
        assert!(!mimalloc_owns(v.as_ptr()));
        v.truncate(1000);
        v.shrink_to_fit();
        assert!(v.capacity() < LARGE);
        assert!(mimalloc_owns(v.as_ptr()));
        assert!(v.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
        v.extend(std::iter::repeat_n(7u8, LARGE));
        assert!(!mimalloc_owns(v.as_ptr()));
        assert_eq!(v.len(), 1000 + LARGE);
        assert!(
            v[..1000]
                .iter()
                .enumerate()
                .all(|(i, b)| *b == (i % 251) as u8)
        );
        assert!(v[1000..].iter().all(|b| *b == 7));
    }

    /// Over-aligned blocks keep their alignment and bytes on both sides, across the line and
    /// within a side.
    #[test]
    fn alignment_holds_on_both_sides() {
        let cases = [
            (64, LARGE * 2),
            (LARGE - 64, 128),
            (LARGE, 128),
            (LARGE * 2, LARGE * 3),
            (128, 4096),
        ];
        for (size, new_size) in cases {
            let layout = Layout::from_size_align(size, 4096).unwrap();
            // SAFETY: non-zero sizes; the block is resized with its own layout, then freed with
            // its new one.
            unsafe {
                let p = GLOBAL.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert_eq!(p as usize % 4096, 0);
                assert_eq!(mimalloc_owns(p), !large(size));
                assert!(std::slice::from_raw_parts(p, size).iter().all(|b| *b == 0));
                p.write_bytes(0xab, size);
                let q = GLOBAL.realloc(p, layout, new_size);
                assert!(!q.is_null());
                assert_eq!(q as usize % 4096, 0);
                assert_eq!(mimalloc_owns(q), !large(new_size));
                let kept = std::slice::from_raw_parts(q, size.min(new_size));
                assert!(kept.iter().all(|b| *b == 0xab));
                GLOBAL.dealloc(q, Layout::from_size_align(new_size, 4096).unwrap());
            }
        }
    }
}
