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
    table: HashTable<u32>,
}

fn hash_of(functor: Sym, args: &[TermId]) -> u64 {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    functor.hash(&mut h);
    args.hash(&mut h);
    h.finish()
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
            .find(h, |&i| {
                let n = self.nodes[i as usize];
                n.functor == functor && &self.args[n.start as usize..(n.start + n.len) as usize] == args
            })
            .map(|&i| TermId(i))
    }

    /// The id of `functor(args)`, creating it if needed.
    pub fn intern(&mut self, functor: Sym, args: &[TermId]) -> TermId {
        if let Some(t) = self.lookup(functor, args) {
            return t;
        }
        let id = self.nodes.len() as u32;
        let start = self.args.len() as u32;
        self.args.extend_from_slice(args);
        self.nodes.push(Node { functor, start, len: args.len() as u32 });
        let h = hash_of(functor, args);
        let (nodes, all_args) = (&self.nodes, &self.args);
        self.table.insert_unique(h, id, |&i| {
            let n = nodes[i as usize];
            hash_of(n.functor, &all_args[n.start as usize..(n.start + n.len) as usize])
        });
        TermId(id)
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
