//! Symbol interning. Every constant, function name, relation name and variable name of a game
//! becomes a [`Sym`], a small copyable id. GDL keywords are interned case-insensitively (in
//! lower case, at fixed ids, see [`kw`]); everything else keeps its case as written, because
//! the reference traces and game managers compare case-sensitively.

use rustc_hash::FxHashMap;

/// An interned symbol: an index into a [`SymbolTable`].
#[derive(Copy, Clone, Eq, PartialEq, Hash, Ord, PartialOrd, Debug)]
pub struct Sym(pub u32);

/// The GDL keywords, interned first so that their ids are constants.
pub mod kw {
    use super::Sym;
    pub const ROLE: Sym = Sym(0);
    pub const INIT: Sym = Sym(1);
    pub const TRUE: Sym = Sym(2);
    pub const DOES: Sym = Sym(3);
    pub const NEXT: Sym = Sym(4);
    pub const LEGAL: Sym = Sym(5);
    pub const GOAL: Sym = Sym(6);
    pub const TERMINAL: Sym = Sym(7);
    pub const BASE: Sym = Sym(8);
    pub const INPUT: Sym = Sym(9);
    pub const DISTINCT: Sym = Sym(10);
    pub const NOT: Sym = Sym(11);
    pub const OR: Sym = Sym(12);
    pub const SEES: Sym = Sym(13);
    pub const IMPLIES: Sym = Sym(14);
    /// Keyword texts, in id order.
    pub const NAMES: [&str; 15] = [
        "role", "init", "true", "does", "next", "legal", "goal", "terminal", "base", "input", "distinct", "not", "or",
        "sees", "<=",
    ];
}

/// Interns strings to [`Sym`]s and back.
#[derive(Clone, Debug)]
pub struct SymbolTable {
    names: Vec<Box<str>>,
    map: FxHashMap<Box<str>, Sym>,
}

impl Default for SymbolTable {
    fn default() -> Self {
        Self::new()
    }
}

impl SymbolTable {
    pub fn new() -> SymbolTable {
        let mut t = SymbolTable { names: Vec::new(), map: FxHashMap::default() };
        for name in kw::NAMES {
            t.insert_raw(name);
        }
        t
    }

    fn insert_raw(&mut self, name: &str) -> Sym {
        if let Some(&s) = self.map.get(name) {
            return s;
        }
        let s = Sym(self.names.len() as u32);
        self.names.push(name.into());
        self.map.insert(name.into(), s);
        s
    }

    /// Interns a constant, function or relation name. Keywords match case-insensitively.
    pub fn intern(&mut self, name: &str) -> Sym {
        if let Some(&s) = self.map.get(name) {
            return s;
        }
        if let Some(k) = kw::NAMES.iter().position(|k| k.eq_ignore_ascii_case(name)) {
            return Sym(k as u32);
        }
        self.insert_raw(name)
    }

    /// Looks a name up without interning it.
    pub fn get(&self, name: &str) -> Option<Sym> {
        if let Some(&s) = self.map.get(name) {
            return Some(s);
        }
        kw::NAMES.iter().position(|k| k.eq_ignore_ascii_case(name)).map(|k| Sym(k as u32))
    }

    pub fn name(&self, s: Sym) -> &str {
        &self.names[s.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_fold_case_other_symbols_do_not() {
        let mut t = SymbolTable::new();
        assert_eq!(t.intern("TRUE"), kw::TRUE);
        assert_eq!(t.intern("Legal"), kw::LEGAL);
        let a = t.intern("canSwap");
        let b = t.intern("canswap");
        assert_ne!(a, b);
        assert_eq!(t.name(a), "canSwap");
    }
}
