//! Keyed state: each key's group values and accumulators stored side by side in chunks of
//! one arena, found through a hash table of entry numbers.
//!
//! One entry per key is `width` values (the key's, then the accumulators), whose prefix is
//! the aggregate's output row, so emitting a key's row copies one slice. Chunks are fixed in size
//! and never move, so growing the state never copies it (a `Vec` of rows would double and
//! copy), and the table holds 4-byte entry numbers rather than two heap pointers per key.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use streamform_ir::Value;

/// Entries per chunk of the arena.
const CHUNK: usize = 1024;

/// The keyed store of one aggregate.
pub(crate) struct KeyedState {
    /// Values per entry: the key's, then the accumulators.
    width: usize,
    /// Values of the key at the start of each entry.
    key_len: usize,
    chunks: Vec<Vec<Value>>,
    len: usize,
    index: HashTable<u32>,
}

/// Where a key is in the store.
pub(crate) type Entry = usize;

/// A key the store does not hold, with its hash, from [`KeyedState::find`].
pub(crate) struct Vacant(u64);

impl KeyedState {
    /// An empty store of entries of `key_len` key values and `width - key_len` accumulators.
    pub(crate) fn new(key_len: usize, width: usize) -> KeyedState {
        KeyedState {
            width,
            key_len,
            chunks: Vec::new(),
            len: 0,
            index: HashTable::new(),
        }
    }

    fn hash(key: &[Value]) -> u64 {
        FxBuildHasher.hash_one(key)
    }

    /// The entry of `key`, or where it goes when the store does not hold it (its hash, so
    /// that inserting does not hash the key again).
    pub(crate) fn find(&self, key: &[Value]) -> Result<Entry, Vacant> {
        let hash = KeyedState::hash(key);
        self.index
            .find(hash, |&e| self.key(e as usize) == key)
            .map(|&e| e as usize)
            .ok_or(Vacant(hash))
    }

    /// Adds a key with its accumulators (the key must not be present).
    ///
    /// # Panics
    /// When the store already holds 2^32 keys.
    pub(crate) fn insert(
        &mut self,
        Vacant(hash): Vacant,
        key: &[Value],
        accumulators: &[Value],
    ) -> Entry {
        debug_assert_eq!(key.len() + accumulators.len(), self.width);
        let entry = self.len;
        let number = u32::try_from(entry).expect("at most 2^32 keys in one aggregate");
        if entry.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK * self.width));
        }
        let chunk = self.chunks.last_mut().expect("a chunk with room");
        chunk.extend_from_slice(key);
        chunk.extend_from_slice(accumulators);
        self.len += 1;
        let (chunks, width, key_len) = (&self.chunks, self.width, self.key_len);
        self.index.insert_unique(hash, number, |&e| {
            KeyedState::hash(&slot(chunks, width, e as usize)[..key_len])
        });
        entry
    }

    /// Values per entry: the key's, then the accumulators.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Number of keys held; also the entry the next new key gets.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The key of an entry.
    pub(crate) fn key(&self, entry: Entry) -> &[Value] {
        &self.row(entry)[..self.key_len]
    }

    /// An entry's key values and accumulators, as the aggregate emits them.
    pub(crate) fn row(&self, entry: Entry) -> &[Value] {
        slot(&self.chunks, self.width, entry)
    }

    /// An entry's accumulators, to fold into.
    pub(crate) fn accumulators_mut(&mut self, entry: Entry) -> &mut [Value] {
        let (chunk, at) = (entry / CHUNK, entry % CHUNK * self.width);
        &mut self.chunks[chunk][at + self.key_len..at + self.width]
    }

    /// Every entry as (key, accumulators), in insertion order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[Value], &[Value])> {
        (0..self.len).map(|e| self.row(e).split_at(self.key_len))
    }
}

fn slot(chunks: &[Vec<Value>], width: usize, entry: Entry) -> &[Value] {
    let at = entry % CHUNK * width;
    &chunks[entry / CHUNK][at..at + width]
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
            let number = u32::try_from(entry).expect("at most 2^32 keys in one aggregate");
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
