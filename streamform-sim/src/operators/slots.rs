//! The state of a join in time per key (docs/joins.md, "Joins in time"): a slab of slots,
//! one per key that keeps something, found through a hash map, and given back when its key
//! keeps nothing, so that the state is bounded by what the watermark has not expired.
//! Timers name a key by its slot.

use std::collections::HashMap;
use std::ops::{Index, IndexMut};

use crate::keyed::KeyValues as Key;

/// Per key, a `T`; a freed slot is reset and taken by the next new key.
pub(crate) struct Slots<T> {
    slots: Vec<(Option<Key>, T)>,
    by_key: HashMap<Key, usize, rustc_hash::FxBuildHasher>,
    free: Vec<usize>,
}

impl<T: Default> Slots<T> {
    pub(crate) fn new() -> Slots<T> {
        Slots {
            slots: Vec::new(),
            by_key: HashMap::default(),
            free: Vec::new(),
        }
    }

    /// The slot of `key`, made when new.
    pub(crate) fn slot(&mut self, key: Key) -> usize {
        if let Some(&at) = self.by_key.get(&key) {
            return at;
        }
        let at = match self.free.pop() {
            Some(at) => at,
            None => {
                self.slots.push((None, T::default()));
                self.slots.len() - 1
            }
        };
        self.slots[at].0 = Some(key.clone());
        self.by_key.insert(key, at);
        at
    }

    /// Gives back slot `at` when `empty` says its key keeps nothing.
    pub(crate) fn release_if(&mut self, at: usize, empty: impl Fn(&T) -> bool) {
        let (key, value) = &mut self.slots[at];
        if empty(value)
            && let Some(key) = key.take()
        {
            *value = T::default();
            self.by_key.remove(&key);
            self.free.push(at);
        }
    }

    /// What every slot keeps (a free one keeps nothing).
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().map(|(_, v)| v)
    }

    /// The keys held, with their slots, sorted by key (lexicographic `Value::sort_cmp`).
    pub(crate) fn sorted(&self) -> Vec<(&Key, usize)> {
        let mut keys: Vec<(&Key, usize)> = self.by_key.iter().map(|(k, &at)| (k, at)).collect();
        keys.sort_by(|a, b| crate::operator::cmp_rows(&a.0.0, &b.0.0));
        keys
    }
}

impl<T> Index<usize> for Slots<T> {
    type Output = T;

    fn index(&self, at: usize) -> &T {
        &self.slots[at].1
    }
}

impl<T> IndexMut<usize> for Slots<T> {
    fn index_mut(&mut self, at: usize) -> &mut T {
        &mut self.slots[at].1
    }
}
