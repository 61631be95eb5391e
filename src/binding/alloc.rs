//! The addon's allocator: mimalloc for blocks under [`LARGE`], the system allocator (glibc) for
//! blocks of [`LARGE`] and more.
//!
//! Why two (measured, bench/NOTES.md "The addon's allocator"): a call's many small blocks (frames,
//! headers, maps, futures) cost a third less CPU with mimalloc, which is what brings HTTP at 32
//! in flight on Bun to `fetch`; but the large-result path allocates and frees buffers of 1–32 MiB
//! per answer, which glibc serves again from memory it kept, while mimalloc alone maps and faults
//! them in again (large results ~1.5× slower). Routing by size keeps each path on the allocator
//! that serves it best.
//!
//! Routing is by the block's size alone, so `dealloc` (which gets the same layout as `alloc`)
//! always returns a block to the allocator it came from. A `realloc` across the line moves the
//! block: allocate on the new side, copy, free on the old side.
//!
//! Only the addon (feature `node`) installs it: the crate used as a Rust library leaves the
//! choice of allocator to its user.

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// Blocks of this size and more go to the system allocator.
pub const LARGE: usize = 256 * 1024;

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A block grown and shrunk across the line keeps its bytes, and each side frees its own
    /// (a block freed by the wrong allocator would crash or be reported by the allocator).
    #[test]
    fn blocks_keep_their_bytes_across_the_line() {
        let mut v: Vec<u8> = Vec::with_capacity(16);
        for i in 0..(LARGE * 3) {
            v.push((i % 251) as u8);
        }
        assert!(v.capacity() >= LARGE);
        v.truncate(1000);
        v.shrink_to_fit();
        assert!(v.capacity() < LARGE);
        assert!(v.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
        v.extend(std::iter::repeat_n(7u8, LARGE));
        assert_eq!(v.len(), 1000 + LARGE);
        assert!(
            v[..1000]
                .iter()
                .enumerate()
                .all(|(i, b)| *b == (i % 251) as u8)
        );
        assert!(v[1000..].iter().all(|b| *b == 7));
    }

    /// Over-aligned blocks on both sides and across the line keep their alignment.
    #[test]
    fn alignment_holds_on_both_sides() {
        for size in [64, LARGE - 64, LARGE, LARGE * 2] {
            let layout = Layout::from_size_align(size, 4096).unwrap();
            // SAFETY: non-zero size; freed with the same layout, or resized then freed.
            unsafe {
                let p = GLOBAL.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert_eq!(p as usize % 4096, 0);
                assert!(std::slice::from_raw_parts(p, size).iter().all(|b| *b == 0));
                p.write_bytes(0xab, size);
                let new_size = if large(size) { 128 } else { LARGE * 2 };
                let q = GLOBAL.realloc(p, layout, new_size);
                assert!(!q.is_null());
                assert_eq!(q as usize % 4096, 0);
                assert!(
                    std::slice::from_raw_parts(q, size.min(new_size))
                        .iter()
                        .all(|b| *b == 0xab)
                );
                GLOBAL.dealloc(q, Layout::from_size_align(new_size, 4096).unwrap());
            }
        }
    }
}
