//! Keyed state: each key's group values and accumulators stored side by side in chunks of
//! one arena, found through a hash table of entry numbers.
//!
//! One entry per key is `width` values (the key's, then the accumulators), whose prefix is
//! the aggregate's output row, so emitting a key's row copies one slice. Chunks are fixed in size
//! and never move, so growing the state never copies it (a `Vec` of rows would double and
//! copy), and the table holds 4-byte entry numbers rather than two heap pointers per key.
//! An entry can be released (a window's state is freed when it fires): it goes on a free
//! list and the next new entry takes it, so the arena is as large as the most entries held
//! at once, not as all entries ever made.
//!
//! [`Arena`] is the storage alone; [`KeyedState`] is an arena with one index over it. A
//! window keeps one arena and an index per window ([`Index`]), so a fired window's index
//! is dropped whole instead of key by key.

use std::hash::{BuildHasher, Hash, Hasher};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use streamform_ir::Value;

/// Entries per chunk of the arena.
const CHUNK: usize = 1024;

/// Where an entry is in the arena.
pub(crate) type Entry = usize;

/// Whether two values are one key, as Flink tells grouping keys (and distinct values)
/// apart: by value, except that a float64 is told by its bits, so 0.0 and -0.0 are two
/// keys and every NaN is one (Flink compares a key's binary form, where a NaN is always
/// written alike).
#[inline]
pub(crate) fn same_key_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float64(x), Value::Float64(y)) => float_bits(x.0) == float_bits(y.0),
        _ => a == b,
    }
}

/// Hashes `v` consistently with [`same_key_value`].
#[inline]
pub(crate) fn hash_key_value<H: Hasher>(v: &Value, h: &mut H) {
    match v {
        Value::Float64(f) => float_bits(f.0).hash(h),
        _ => v.hash(h),
    }
}

/// A float64's bits, with every NaN as one.
fn float_bits(f: f64) -> u64 {
    if f.is_nan() {
        f64::NAN.to_bits()
    } else {
        f.to_bits()
    }
}

/// A key's values as a map key: compared and hashed as [`same_key_value`] tells values
/// apart.
#[derive(Debug, Clone)]
pub(crate) struct KeyValues(pub(crate) Vec<Value>);

impl PartialEq for KeyValues {
    fn eq(&self, other: &KeyValues) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| same_key_value(a, b))
    }
}

impl Eq for KeyValues {}

impl Hash for KeyValues {
    fn hash<H: Hasher>(&self, h: &mut H) {
        for v in &self.0 {
            hash_key_value(v, h);
        }
    }
}

/// The hash of a key given as its values: a stored key's and a row's grouping columns hash
/// alike, so a row is looked up without copying its key.
#[inline]
pub(crate) fn hash_key<'v>(values: impl IntoIterator<Item = &'v Value>) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    for v in values {
        hash_key_value(v, &mut h);
    }
    h.finish()
}

/// Entries of `width` values (`key_len` key values, then the accumulators) in fixed-size
/// chunks, with a free list.
pub(crate) struct Arena {
    /// Values per entry: the key's, then the accumulators.
    width: usize,
    /// Values of the key at the start of each entry.
    key_len: usize,
    chunks: Vec<Vec<Value>>,
    /// Entries in the arena, held or free.
    len: usize,
    /// Entries released, the next to be taken last.
    free: Vec<u32>,
    /// Per entry, whether it is free (empty until an entry is first released).
    vacated: Vec<bool>,
}

impl Arena {
    /// An empty arena of entries of `key_len` key values and `width - key_len`
    /// accumulators.
    pub(crate) fn new(key_len: usize, width: usize) -> Arena {
        Arena {
            width,
            key_len,
            chunks: Vec::new(),
            len: 0,
            free: Vec::new(),
            vacated: Vec::new(),
        }
    }

    /// Stores a new entry: the key's values, then the accumulators, in the entry
    /// [`Arena::next_entry`] names.
    ///
    /// # Panics
    /// When the arena already holds 2^32 entries.
    #[inline]
    pub(crate) fn alloc<'v>(
        &mut self,
        key: impl IntoIterator<Item = &'v Value>,
        accumulators: &[Value],
    ) -> Entry {
        if let Some(free) = self.free.pop() {
            let entry = free as usize;
            self.vacated[entry] = false;
            let (chunk, at) = (entry / CHUNK, entry % CHUNK * self.width);
            let slot = &mut self.chunks[chunk][at..at + self.width];
            let (k, a) = slot.split_at_mut(self.key_len);
            for (dst, v) in k.iter_mut().zip(key) {
                dst.clone_from(v);
            }
            a.clone_from_slice(accumulators);
            entry
        } else {
            let entry = self.len;
            if entry.is_multiple_of(CHUNK) {
                self.chunks.push(Vec::with_capacity(CHUNK * self.width));
            }
            let chunk = self.chunks.last_mut().expect("a chunk with room");
            let before = chunk.len();
            chunk.extend(key.into_iter().cloned());
            debug_assert_eq!(chunk.len() - before, self.key_len);
            chunk.extend_from_slice(accumulators);
            self.len += 1;
            if !self.vacated.is_empty() {
                self.vacated.push(false);
            }
            entry
        }
    }

    /// The entry the next new entry is stored in.
    pub(crate) fn next_entry(&self) -> Entry {
        self.free.last().map_or(self.len, |&e| e as usize)
    }

    /// Releases `entry` (which must be held): a later entry takes its place. Its values
    /// stay until then (replaced when it is taken), so releasing costs nothing per value;
    /// the arena never holds more than its most entries at once.
    pub(crate) fn release(&mut self, entry: Entry) {
        if self.vacated.is_empty() {
            self.vacated.resize(self.len, false);
        }
        self.vacated[entry] = true;
        self.free.push(entry_number(entry));
    }

    /// Number of entries held.
    pub(crate) fn held(&self) -> usize {
        self.len - self.free.len()
    }

    /// The key of an entry.
    #[inline]
    pub(crate) fn key(&self, entry: Entry) -> &[Value] {
        &self.row(entry)[..self.key_len]
    }

    /// An entry's key values and accumulators, as the aggregate emits them.
    #[inline]
    pub(crate) fn row(&self, entry: Entry) -> &[Value] {
        let at = entry % CHUNK * self.width;
        &self.chunks[entry / CHUNK][at..at + self.width]
    }

    /// An entry's accumulators, to fold into.
    #[inline]
    pub(crate) fn accumulators_mut(&mut self, entry: Entry) -> &mut [Value] {
        let (chunk, at) = (entry / CHUNK, entry % CHUNK * self.width);
        &mut self.chunks[chunk][at + self.key_len..at + self.width]
    }

    /// Every entry held as (entry, key, accumulators), in entry order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Entry, &[Value], &[Value])> {
        (0..self.len)
            .filter(|&e| !self.vacated.get(e).copied().unwrap_or(false))
            .map(|e| {
                let (k, v) = self.row(e).split_at(self.key_len);
                (e, k, v)
            })
    }
}

/// A hash index of entry numbers over an [`Arena`], by the entries' keys.
#[derive(Default)]
pub(crate) struct Index(HashTable<u32>);

/// A key an index does not hold, with its hash, from [`Index::find`].
pub(crate) struct Vacant(u64);

impl Index {
    /// The entry whose key is `key` (given as values, compared one by one with the stored
    /// key's), or where it goes when the index does not hold it.
    #[inline]
    pub(crate) fn find<'v, I>(&self, arena: &Arena, key: I) -> Result<Entry, Vacant>
    where
        I: IntoIterator<Item = &'v Value> + Clone,
    {
        let hash = hash_key(key.clone());
        self.0
            .find(hash, |&e| {
                let stored = arena.key(e as usize);
                let mut probe = key.clone().into_iter();
                stored
                    .iter()
                    .all(|a| probe.next().is_some_and(|b| same_key_value(a, b)))
                    && probe.next().is_none()
            })
            .map(|&e| e as usize)
            .ok_or(Vacant(hash))
    }

    /// Indexes `entry` (just stored in `arena`) under the key [`Index::find`] did not find.
    #[inline]
    pub(crate) fn insert(&mut self, arena: &Arena, Vacant(hash): Vacant, entry: Entry) {
        self.0.insert_unique(hash, entry_number(entry), |&e| {
            hash_key(arena.key(e as usize))
        });
    }

    /// Stops indexing `entry` (held in `arena`, under its key).
    pub(crate) fn remove(&mut self, arena: &Arena, entry: Entry) {
        let number = entry_number(entry);
        if let Ok(found) = self
            .0
            .find_entry(hash_key(arena.key(entry)), |&e| e == number)
        {
            found.remove();
        }
    }

    /// Forgets every entry, keeping the table's memory for the next use.
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

/// The keyed store of one aggregate: an arena and its index.
pub(crate) struct KeyedState {
    arena: Arena,
    index: Index,
}

impl KeyedState {
    /// An empty store of entries of `key_len` key values and `width - key_len` accumulators.
    pub(crate) fn new(key_len: usize, width: usize) -> KeyedState {
        KeyedState {
            arena: Arena::new(key_len, width),
            index: Index::default(),
        }
    }

    /// The entry of `key`, or where it goes when the store does not hold it (its hash, so
    /// that inserting does not hash the key again).
    /// `key` is given as its values in order, which need not be a slice of their own (an
    /// operator looks a row's key up from the row's columns without copying them out).
    #[inline]
    pub(crate) fn find<'v, I>(&self, key: I) -> Result<Entry, Vacant>
    where
        I: IntoIterator<Item = &'v Value> + Clone,
    {
        self.index.find(&self.arena, key)
    }

    /// Adds a key with its accumulators (the key must not be present), in the entry
    /// [`KeyedState::next_entry`] names.
    ///
    /// # Panics
    /// When the store already holds 2^32 keys.
    pub(crate) fn insert(
        &mut self,
        vacant: Vacant,
        key: &[Value],
        accumulators: &[Value],
    ) -> Entry {
        let entry = self.arena.alloc(key, accumulators);
        self.index.insert(&self.arena, vacant, entry);
        entry
    }

    /// The entry the next new key is stored in.
    pub(crate) fn next_entry(&self) -> Entry {
        self.arena.next_entry()
    }

    /// An entry's key values and accumulators, as the aggregate emits them.
    pub(crate) fn row(&self, entry: Entry) -> &[Value] {
        self.arena.row(entry)
    }

    /// An entry's accumulators, to fold into.
    pub(crate) fn accumulators_mut(&mut self, entry: Entry) -> &mut [Value] {
        self.arena.accumulators_mut(entry)
    }

    /// Every entry held as (entry, key, accumulators), in entry order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Entry, &[Value], &[Value])> {
        self.arena.iter()
    }

    /// Forgets `entry` and its key: a group emptied by retractions, a key deleted. A later
    /// key may take its entry.
    pub(crate) fn remove(&mut self, entry: Entry) {
        self.index.remove(&self.arena, entry);
        self.arena.release(entry);
    }
}

/// An entry's number as the index and count(distinct x) sets store it (the store holds at
/// most 2^32).
pub(crate) fn entry_number(entry: Entry) -> u32 {
    u32::try_from(entry).expect("at most 2^32 keys in one keyed store")
}

/// The retention a keyed node declares, as the simulator enforces it.
pub(crate) fn expiry_of(keyed: &streamform_ir::KeyedState) -> Option<Expiry> {
    match keyed.retention {
        streamform_ir::Retention::Unbounded => None,
        streamform_ir::Retention::After(ms) => Some(Expiry::new(ms)),
    }
}

/// Records that the event at `time` wrote `entry` (with retention only).
pub(crate) fn touch(expiry: &mut Option<Expiry>, entry: Entry, time: Option<i64>) {
    if let (Some(x), Some(t)) = (expiry, time) {
        x.touch(entry, t);
    }
}

/// Live keyed state (expired entries left out) as (key, stored values) pairs sorted by
/// key.
pub(crate) fn sorted(state: &KeyedState, expiry: Option<&Expiry>) -> Vec<(Vec<Value>, Vec<Value>)> {
    let mut out: Vec<(Vec<Value>, Vec<Value>)> = state
        .iter()
        .filter(|(e, _, _)| !expiry.is_some_and(|x| x.is_expired(*e)))
        .map(|(_, k, v)| (k.to_vec(), v.to_vec()))
        .collect();
    out.sort_by(|a, b| crate::operator::cmp_rows(&a.0, &b.0));
    out
}

/// Retention in event time for one keyed store: each entry's latest event time, and which
/// entries have expired. An entry expires once the watermark reaches its latest event
/// time plus the retention (inclusive); its key then starts over with its next event.
pub(crate) struct Expiry {
    retention: i64,
    /// Per entry: the largest event time that touched it.
    latest: Vec<i64>,
    /// Per entry: whether its state has expired (and not been written since).
    expired: Vec<bool>,
    /// (expiry time, entry), earliest first; an item is stale when the entry's latest
    /// time has moved on since it was queued.
    queue: std::collections::BinaryHeap<std::cmp::Reverse<(i64, u32)>>,
}

impl Expiry {
    /// Expiry after `retention` milliseconds.
    pub(crate) fn new(retention: u64) -> Expiry {
        Expiry {
            retention: i64::try_from(retention).unwrap_or(i64::MAX),
            latest: Vec::new(),
            expired: Vec::new(),
            queue: std::collections::BinaryHeap::new(),
        }
    }

    /// Whether `entry`'s state has expired.
    pub(crate) fn is_expired(&self, entry: Entry) -> bool {
        self.expired.get(entry).copied().unwrap_or(false)
    }

    /// Records a write of an event at `time` into `entry` (which may be the newest entry):
    /// its state is alive again, and lives until `time` plus the retention at least. An
    /// earlier time than one seen never shortens it.
    pub(crate) fn touch(&mut self, entry: Entry, time: i64) {
        if entry >= self.latest.len() {
            self.latest.resize(entry + 1, i64::MIN);
            self.expired.resize(entry + 1, false);
        }
        self.expired[entry] = false;
        if time > self.latest[entry] {
            self.latest[entry] = time;
            let number = entry_number(entry);
            self.queue.push(std::cmp::Reverse((
                time.saturating_add(self.retention),
                number,
            )));
        }
    }

    /// The entries whose state expires at `watermark`, marked expired.
    pub(crate) fn expire(&mut self, watermark: i64) -> Vec<Entry> {
        let mut out = Vec::new();
        while let Some(&std::cmp::Reverse((at, number))) = self.queue.peek() {
            if at > watermark {
                break;
            }
            self.queue.pop();
            let entry = number as usize;
            if !self.expired[entry] && self.latest[entry].saturating_add(self.retention) == at {
                self.expired[entry] = true;
                // A later write queues the entry again from its new latest time.
                self.latest[entry] = i64::MIN;
                out.push(entry);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_across_chunks_are_found_and_updated() {
        let mut state = KeyedState::new(1, 2);
        for i in 0..3 * CHUNK as i64 {
            let vacant = state.find(&[Value::Int64(i)]).expect_err("not yet held");
            state.insert(vacant, &[Value::Int64(i)], &[Value::Int64(i * 10)]);
        }
        let e = state.find(&[Value::Int64(2_500)]).ok().expect("present");
        assert_eq!(state.row(e), [Value::Int64(2_500), Value::Int64(25_000)]);
        state.accumulators_mut(e)[0] = Value::Int64(7);
        assert_eq!(state.row(e)[1], Value::Int64(7));
        assert_eq!(state.iter().count(), 3 * CHUNK);
        assert!(state.find(&[Value::Null]).is_err());
    }

    #[test]
    fn a_released_entry_is_taken_by_the_next_entry_and_an_index_clears_whole() {
        let mut arena = Arena::new(1, 2);
        let mut index = Index::default();
        for i in 0..3 {
            let key = [Value::Int64(i)];
            let vacant = index.find(&arena, &key).expect_err("not yet held");
            let e = arena.alloc(&key, &[Value::Int64(i * 10)]);
            index.insert(&arena, vacant, e);
        }
        let one = index
            .find(&arena, &[Value::Int64(1)])
            .ok()
            .expect("present");
        arena.release(one);
        assert_eq!(arena.held(), 2);
        let keys: Vec<_> = arena.iter().map(|(_, k, _)| k[0].clone()).collect();
        assert_eq!(keys, [Value::Int64(0), Value::Int64(2)]);
        // The freed entry is reused: the arena does not grow.
        assert_eq!(arena.next_entry(), one);
        let e = arena.alloc(&[Value::String("seven".into())], &[Value::Int64(70)]);
        assert_eq!(e, one);
        assert_eq!(
            arena.row(e),
            [Value::String("seven".into()), Value::Int64(70)]
        );
        assert_eq!(arena.next_entry(), 3);
        assert_eq!(arena.held(), 3);
        // A key is found from values held anywhere, here a row's column.
        let row = [Value::Int64(9), Value::Int64(2)];
        assert_eq!(index.find(&arena, &row[1..]).ok(), Some(2));
        index.clear();
        assert!(index.find(&arena, &row[1..]).is_err());
    }

    #[test]
    fn expiry_counts_from_the_latest_event_time_and_includes_the_edge() {
        let mut x = Expiry::new(10);
        x.touch(0, 100);
        x.touch(1, 105);
        // An earlier event never shortens a key's life.
        x.touch(1, 95);
        assert_eq!(x.expire(109), Vec::<Entry>::new());
        assert_eq!(x.expire(110), vec![0]);
        assert!(x.is_expired(0));
        assert!(!x.is_expired(1));
        // Written again, the entry lives from its new time.
        x.touch(0, 120);
        assert!(!x.is_expired(0));
        assert_eq!(x.expire(125), vec![1]);
        assert_eq!(x.expire(130), vec![0]);
        assert_eq!(x.expire(1000), Vec::<Entry>::new());
    }

    #[test]
    fn a_key_of_no_columns_is_one_entry() {
        let mut state = KeyedState::new(0, 1);
        let vacant = state.find(&[]).expect_err("empty");
        let e = state.insert(vacant, &[], &[Value::Int64(0)]);
        assert_eq!(state.find(&[]).ok(), Some(e));
    }
}
