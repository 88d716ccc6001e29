//! Relations: sets of tuples of terms, appended in order (so a tuple index range is a
//! "delta" for semi-naive evaluation), with optional hash indexes on one argument.

use super::terms::{fold32, table_hash, TermId, TermStore};
use hashbrown::HashTable;
use rustc_hash::FxHashMap;
use std::hash::{BuildHasher, Hash, Hasher};

pub const NIL: u32 = u32::MAX;

/// Which key an index files tuples under.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IndexKind {
    /// The argument's term id.
    Exact,
    /// The argument's functor and arity.
    Functor,
    /// A hash of the term ids at the [`Col`]s [`Index::cols`] (tuples of other keys may share
    /// a chain: joins match every argument anyway).
    Multi,
}

/// An index of one argument position: chains of tuple indices, newest first.
#[derive(Clone, Debug)]
pub struct Index {
    pub pos: usize,
    pub kind: IndexKind,
    pub cols: Box<[Col]>,
    heads: FxHashMap<u64, u32>,
    next: Vec<u32>,
}

/// A place in a tuple: an argument, or a subterm of one. The low byte is the argument's
/// position; each further byte, while not zero, is one more than the index of an argument of
/// the term reached so far (`(p (f a b))`: `1 | 2 << 8` is `b`).
pub type Col = u64;

/// The column of argument `pos`.
pub fn col(pos: usize) -> Col {
    pos as Col
}

/// The column of argument `i` of the term at column `c` (at most seven levels deep).
pub fn sub_col(c: Col, i: usize) -> Option<Col> {
    let depth = (1..8).find(|&d| c >> (8 * d) == 0)?;
    (i < 255).then(|| c | ((i as Col + 1) << (8 * depth)))
}

/// The term at column `c` of tuple `t`, or `None` if `t` has no such subterm.
#[inline]
pub fn col_value(t: &[TermId], c: Col, terms: &TermStore) -> Option<TermId> {
    let mut v = *t.get((c & 0xff) as usize)?;
    let mut rest = c >> 8;
    while rest != 0 {
        let i = (rest & 0xff) as usize - 1;
        v = *terms.args(v).get(i)?;
        rest >>= 8;
    }
    Some(v)
}

/// The key of a [`IndexKind::Multi`] index for these argument values.
pub fn multi_key(vals: impl Iterator<Item = TermId>) -> u64 {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    for v in vals {
        v.hash(&mut h);
    }
    h.finish()
}

pub fn functor_key(functor: crate::gdl::Sym, arity: usize) -> u64 {
    ((functor.0 as u64) << 16) | arity as u64
}

impl Index {
    #[inline]
    fn key(&self, t: &[TermId], terms: &TermStore) -> u64 {
        let v = t[self.pos];
        match self.kind {
            IndexKind::Exact => v.0 as u64,
            IndexKind::Functor => functor_key(terms.functor(v), terms.args(v).len()),
            // A tuple without one of the subterms is filed under a key no look-up builds
            // (barring a collision, which the join's match rejects).
            IndexKind::Multi => {
                multi_key(self.cols.iter().map(|&c| col_value(t, c, terms).unwrap_or(TermId(u32::MAX))))
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Relation {
    pub arity: usize,
    pub len: u32,
    /// Tuples at or past `limit` are not visible to joins (they were added in the current
    /// round of a recursive evaluation).
    pub limit: u32,
    /// Start of the delta of the current round.
    pub delta_lo: u32,
    data: Vec<TermId>,
    /// Each tuple's id and its 32-bit hash (see [`table_hash`]).
    set: HashTable<(u32, u32)>,
    pub indexes: Vec<Index>,
}

fn hash_tuple(t: &[TermId]) -> u32 {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    t.hash(&mut h);
    fold32(h.finish())
}

impl Relation {
    pub fn new(arity: usize) -> Relation {
        Relation { arity, len: 0, limit: 0, delta_lo: 0, data: Vec::new(), set: HashTable::new(), indexes: Vec::new() }
    }

    /// Registers an index on an empty relation, returning its slot.
    pub fn add_index(&mut self, pos: usize, kind: IndexKind) -> usize {
        debug_assert!(kind == IndexKind::Exact && self.len == 0);
        self.add_index_filled(pos, kind, &[], &TermStore::new())
    }

    /// Registers an index, returning its slot. Tuples already present are filed in it (a
    /// join planned again between evaluations may ask for a new index).
    /// `cols`: the columns of a [`IndexKind::Multi`] index (else empty).
    pub fn add_index_filled(&mut self, pos: usize, kind: IndexKind, cols: &[Col], terms: &TermStore) -> usize {
        if let Some(i) = self.indexes.iter().position(|x| x.pos == pos && x.kind == kind && &*x.cols == cols) {
            return i;
        }
        let mut ix = Index {
            pos,
            kind,
            cols: cols.into(),
            heads: FxHashMap::default(),
            next: Vec::with_capacity(self.len as usize),
        };
        for id in 0..self.len {
            let t = self.tuple(id);
            let key = ix.key(t, terms);
            let head = ix.heads.entry(key).or_insert(NIL);
            ix.next.push(*head);
            *head = id;
        }
        self.indexes.push(ix);
        self.indexes.len() - 1
    }

    #[inline]
    pub fn tuple(&self, i: u32) -> &[TermId] {
        tuple_at(&self.data, self.arity, i)
    }

    /// The index of tuple `t`, if present.
    #[inline]
    pub fn find(&self, t: &[TermId]) -> Option<u32> {
        if self.arity == 0 {
            return (self.len > 0).then_some(0);
        }
        let h = hash_tuple(t);
        self.set.find(table_hash(h), |&(i, hi)| hi == h && self.tuple(i) == t).map(|&(i, _)| i)
    }

    /// Adds a tuple; returns whether it was new.
    pub fn insert(&mut self, t: &[TermId], terms: &TermStore) -> bool {
        debug_assert_eq!(t.len(), self.arity);
        if self.arity == 0 {
            if self.len > 0 {
                return false;
            }
            self.len = 1;
            return true;
        }
        let h = hash_tuple(t);
        let (arity, data) = (self.arity, &self.data);
        match self.set.entry(
            table_hash(h),
            |&(i, hi)| hi == h && tuple_at(data, arity, i) == t,
            |&(_, h)| table_hash(h),
        ) {
            hashbrown::hash_table::Entry::Occupied(_) => return false,
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert((self.len, h));
            }
        }
        let id = self.len;
        self.data.extend_from_slice(t);
        for ix in &mut self.indexes {
            let key = ix.key(t, terms);
            let head = ix.heads.entry(key).or_insert(NIL);
            ix.next.push(*head);
            *head = id;
        }
        self.len += 1;
        true
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.limit = 0;
        self.delta_lo = 0;
        self.data.clear();
        self.set.clear();
        for ix in &mut self.indexes {
            ix.heads.clear();
            ix.next.clear();
        }
    }

    /// The newest tuple filed under `key` in index `slot` ([`NIL`] if none).
    #[inline]
    pub fn chain_head(&self, slot: usize, key: u64) -> u32 {
        self.indexes[slot].heads.get(&key).copied().unwrap_or(NIL)
    }

    /// The tuple filed under the same key as tuple `i`, next older than it ([`NIL`] if none).
    #[inline]
    pub fn chain_next(&self, slot: usize, i: u32) -> u32 {
        self.indexes[slot].next[i as usize]
    }

    /// Number of distinct values at each argument position (for join planning).
    pub fn distinct_counts(&self) -> Vec<u32> {
        (0..self.arity)
            .map(|p| {
                let mut seen = rustc_hash::FxHashSet::default();
                for i in 0..self.len {
                    seen.insert(self.tuple(i)[p]);
                }
                seen.len() as u32
            })
            .collect()
    }
}

/// Tuple `i` of the flat tuple store `data` of a relation of arity `arity`: [`Relation::tuple`],
/// and the table's equality in [`Relation::insert`], where `self` is borrowed by the table.
#[inline]
fn tuple_at(data: &[TermId], arity: usize, i: u32) -> &[TermId] {
    &data[i as usize * arity..(i as usize + 1) * arity]
}
