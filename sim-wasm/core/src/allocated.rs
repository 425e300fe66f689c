//! Bytes allocated on this thread, so that a script policy's copying counts as work: the script engine copies a
//! value whole each time a script reads it into an expression (`let b = a;`, `[a]`) and counts that as one
//! operation whatever the value's size, so a loop of cheap operations over a large value can take minutes.
//!
//! A front end installs [`Counting`] as its global allocator (the CLI, the page's module and the Python
//! extension do); without it [`bytes`] stays 0 and only the engine's own operations count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    // Const-initialised and without a destructor: usable from the allocator at any point of a thread's life.
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

/// Bytes allocated on this thread so far (reallocations count what they grew by).
pub fn bytes() -> u64 {
    BYTES.try_with(Cell::get).unwrap_or(0)
}

fn grew(n: usize) {
    let _ = BYTES.try_with(|b| b.set(b.get().wrapping_add(n as u64)));
}

/// The system allocator, counting what each thread allocates.
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size.saturating_sub(layout.size()));
        System.realloc(ptr, layout, new_size)
    }
}

// The library's own tests run scripts too.
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: Counting = Counting;
