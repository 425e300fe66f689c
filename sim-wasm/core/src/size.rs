//! Heap size of the simulation state, for the memory budget of replay checkpoints: each type says what it owns
//! on the heap, by capacity, so a checkpoint's cost is known without asking the allocator. Scalars own nothing;
//! a struct sums the fields that own something (`heap_size!`). The impls of the crate's own types sit beside
//! the types, so this module imports none of them.

use std::collections::{BTreeMap, VecDeque};
use std::mem::size_of;

/// What a value owns on the heap [bytes] (not counting the value itself).
pub trait HeapSize {
    fn heap_size(&self) -> usize;
}

/// Types that own no heap memory.
macro_rules! no_heap {
    ($($t:ty),* $(,)?) => {
        $(impl $crate::size::HeapSize for $t {
            fn heap_size(&self) -> usize {
                0
            }
        })*
    };
}

/// A struct's heap size: the sum of the listed fields' (the others are scalars).
macro_rules! heap_size {
    ($t:ty { $($f:ident),* $(,)? }) => {
        impl $crate::size::HeapSize for $t {
            fn heap_size(&self) -> usize {
                0 $(+ $crate::size::HeapSize::heap_size(&self.$f))*
            }
        }
    };
}

pub(crate) use {heap_size, no_heap};

no_heap!(u8, u16, u32, u64, u128, usize, i8, i32, i64, bool, f64, &'static str);

impl HeapSize for String {
    fn heap_size(&self) -> usize {
        self.capacity()
    }
}

impl<T: HeapSize> HeapSize for Vec<T> {
    fn heap_size(&self) -> usize {
        self.capacity() * size_of::<T>() + self.iter().map(HeapSize::heap_size).sum::<usize>()
    }
}

impl<T: HeapSize> HeapSize for VecDeque<T> {
    fn heap_size(&self) -> usize {
        self.capacity() * size_of::<T>() + self.iter().map(HeapSize::heap_size).sum::<usize>()
    }
}

impl<T: HeapSize> HeapSize for Option<T> {
    fn heap_size(&self) -> usize {
        self.as_ref().map_or(0, HeapSize::heap_size)
    }
}

impl<T: HeapSize + ?Sized> HeapSize for Box<T> {
    fn heap_size(&self) -> usize {
        size_of_val(self.as_ref()) + self.as_ref().heap_size()
    }
}

impl<T: HeapSize, const N: usize> HeapSize for [T; N] {
    fn heap_size(&self) -> usize {
        self.iter().map(HeapSize::heap_size).sum()
    }
}

impl<A: HeapSize, B: HeapSize> HeapSize for (A, B) {
    fn heap_size(&self) -> usize {
        self.0.heap_size() + self.1.heap_size()
    }
}

impl<A: HeapSize, B: HeapSize, C: HeapSize> HeapSize for (A, B, C) {
    fn heap_size(&self) -> usize {
        self.0.heap_size() + self.1.heap_size() + self.2.heap_size()
    }
}

/// A B-tree node holds up to 11 entries; counted as one node's share per entry plus the entries' own heap.
impl<K: HeapSize, V: HeapSize> HeapSize for BTreeMap<K, V> {
    fn heap_size(&self) -> usize {
        let per_entry = size_of::<K>() + size_of::<V>() + size_of::<usize>();
        self.iter().map(|(k, v)| per_entry + k.heap_size() + v.heap_size()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_count_capacity_and_what_their_elements_own() {
        let v: Vec<String> = vec![String::with_capacity(10), String::with_capacity(5)];
        assert_eq!(v.heap_size(), v.capacity() * size_of::<String>() + 15);
        let b: Box<u64> = Box::new(1);
        assert_eq!(b.heap_size(), 8);
        let none: Option<Vec<u8>> = None;
        assert_eq!(none.heap_size(), 0);
    }
}
