//! Hash-consed ground terms: every distinct ground term of a game gets one [`TermId`], so
//! terms compare and hash as integers.

use crate::gdl::{Sym, SymbolTable, Term};
use hashbrown::HashTable;
use std::hash::{BuildHasher, Hash, Hasher};

/// An interned ground term.
#[derive(Copy, Clone, Eq, PartialEq, Hash, Ord, PartialOrd, Debug)]
pub struct TermId(pub u32);

/// A variable slot that holds no value yet.
pub const UNBOUND: TermId = TermId(u32::MAX);

#[derive(Copy, Clone, Debug)]
struct Node {
    functor: Sym,
    start: u32,
    len: u32,
}

/// The store of all ground terms seen so far.
#[derive(Clone, Debug, Default)]
pub struct TermStore {
    nodes: Vec<Node>,
    args: Vec<TermId>,
    /// Each term's id and its 32-bit hash (see [`table_hash`]): a grounding interns millions,
    /// and rereading them scattered in memory at each doubling cost more than the probes.
    table: HashTable<(u32, u32)>,
}

/// A term's 32-bit hash.
fn hash_of(functor: Sym, args: &[TermId]) -> u32 {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    functor.hash(&mut h);
    args.hash(&mut h);
    fold32(h.finish())
}

/// A 64-bit hash folded to the 32 bits a table entry keeps beside its id.
#[inline]
pub(crate) fn fold32(h: u64) -> u32 {
    (h ^ (h >> 32)) as u32
}

/// A hash table's hash of an entry's 32-bit hash: its low bits pick the bucket, its top seven
/// are the tag the table filters with, both taken from the 32 bits. Tables of millions of
/// entries (terms, tuples) keep the 32 bits beside each id, so they grow without reading the
/// entries again and a probe reads an entry only when the hashes agree.
#[inline]
pub(crate) fn table_hash(h: u32) -> u64 {
    (h as u64) << 32 | h as u64
}

/// Whether the store's term `i` (its `nodes` and `args`) is `functor(args)`: the table's
/// equality, shared by [`TermStore::lookup`] and [`TermStore::intern`].
#[inline]
fn is_term(nodes: &[Node], all_args: &[TermId], i: u32, functor: Sym, args: &[TermId]) -> bool {
    let n = nodes[i as usize];
    n.functor == functor && &all_args[n.start as usize..(n.start + n.len) as usize] == args
}

impl TermStore {
    pub fn new() -> TermStore {
        TermStore::default()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    #[inline]
    pub fn functor(&self, t: TermId) -> Sym {
        self.nodes[t.0 as usize].functor
    }

    #[inline]
    pub fn args(&self, t: TermId) -> &[TermId] {
        let n = self.nodes[t.0 as usize];
        &self.args[n.start as usize..(n.start + n.len) as usize]
    }

    /// The id of `functor(args)` (a constant when `args` is empty), if it exists.
    #[inline]
    pub fn lookup(&self, functor: Sym, args: &[TermId]) -> Option<TermId> {
        let h = hash_of(functor, args);
        self.table
            .find(table_hash(h), |&(i, hi)| hi == h && is_term(&self.nodes, &self.args, i, functor, args))
            .map(|&(i, _)| TermId(i))
    }

    /// The id of `functor(args)`, creating it if needed.
    pub fn intern(&mut self, functor: Sym, args: &[TermId]) -> TermId {
        let h = hash_of(functor, args);
        let TermStore { nodes, args: all_args, table } = self;
        let entry = table.entry(
            table_hash(h),
            |&(i, hi)| hi == h && is_term(nodes, all_args, i, functor, args),
            |&(_, h)| table_hash(h),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => TermId(e.get().0),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let id = nodes.len() as u32;
                let start = all_args.len() as u32;
                all_args.extend_from_slice(args);
                nodes.push(Node { functor, start, len: args.len() as u32 });
                e.insert((id, h));
                TermId(id)
            }
        }
    }

    /// Interns a ground AST term. Panics on variables: callers check groundness first.
    pub fn intern_ast(&mut self, t: &Term) -> TermId {
        match t {
            Term::Const(c) => self.intern(*c, &[]),
            Term::Func(f, args) => {
                let ids: Vec<TermId> = args.iter().map(|a| self.intern_ast(a)).collect();
                self.intern(*f, &ids)
            }
            Term::Var(_) => panic!("intern_ast on a variable"),
        }
    }

    /// Finds a ground AST term without interning it.
    pub fn lookup_ast(&self, t: &Term) -> Option<TermId> {
        match t {
            Term::Const(c) => self.lookup(*c, &[]),
            Term::Func(f, args) => {
                let ids: Option<Vec<TermId>> = args.iter().map(|a| self.lookup_ast(a)).collect();
                self.lookup(*f, &ids?)
            }
            Term::Var(_) => None,
        }
    }

    /// Writes a term in ggp-base's printed form.
    pub fn write(&self, t: TermId, symbols: &SymbolTable, out: &mut String) {
        let n = self.nodes[t.0 as usize];
        if n.len == 0 {
            out.push_str(symbols.name(n.functor));
            return;
        }
        out.push_str("( ");
        out.push_str(symbols.name(n.functor));
        for &a in self.args(t) {
            out.push(' ');
            self.write(a, symbols, out);
        }
        out.push_str(" )");
    }

    pub fn to_string(&self, t: TermId, symbols: &SymbolTable) -> String {
        let mut s = String::new();
        self.write(t, symbols, &mut s);
        s
    }
}
