//! The GDL abstract syntax: terms, atoms (relation applied to terms), literals and rules.

use super::symbol::Sym;

/// A position in a source file (1-based line and column).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A term: a variable, a constant, or a function applied to terms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    Var(Sym),
    Const(Sym),
    Func(Sym, Box<[Term]>),
}

impl Term {
    /// Calls `f` on every variable in this term, left to right.
    pub fn for_each_var(&self, f: &mut impl FnMut(Sym)) {
        match self {
            Term::Var(v) => f(*v),
            Term::Const(_) => {}
            Term::Func(_, args) => args.iter().for_each(|a| a.for_each_var(f)),
        }
    }

    pub fn is_ground(&self) -> bool {
        match self {
            Term::Var(_) => false,
            Term::Const(_) => true,
            Term::Func(_, args) => args.iter().all(Term::is_ground),
        }
    }
}

/// A relation applied to terms: `(cell 1 1 b)`, or a proposition such as `terminal`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Atom {
    pub rel: Sym,
    pub args: Vec<Term>,
}

impl Atom {
    pub fn for_each_var(&self, f: &mut impl FnMut(Sym)) {
        self.args.iter().for_each(|a| a.for_each_var(f));
    }
}

/// A body literal as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    Atom(Atom),
    Not(Box<Literal>),
    Distinct(Term, Term),
    Or(Vec<Literal>),
}

impl Literal {
    pub fn for_each_var(&self, f: &mut impl FnMut(Sym)) {
        match self {
            Literal::Atom(a) => a.for_each_var(f),
            Literal::Not(l) => l.for_each_var(f),
            Literal::Distinct(a, b) => {
                a.for_each_var(f);
                b.for_each_var(f);
            }
            Literal::Or(ls) => ls.iter().for_each(|l| l.for_each_var(f)),
        }
    }
}

/// A rule `(<= head body...)`; a fact is a rule with an empty body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub head: Atom,
    pub body: Vec<Literal>,
    pub pos: Pos,
}
