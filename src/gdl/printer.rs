//! Writes terms and atoms in ggp-base's canonical form: `( cell 1 1 b )`, bare constants.

use super::ast::{Atom, Term};
use super::symbol::SymbolTable;
use std::fmt::Write;

pub fn write_term(t: &Term, symbols: &SymbolTable, out: &mut String) {
    match t {
        Term::Var(v) | Term::Const(v) => out.push_str(symbols.name(*v)),
        Term::Func(f, args) => {
            let _ = write!(out, "( {}", symbols.name(*f));
            for a in args.iter() {
                out.push(' ');
                write_term(a, symbols, out);
            }
            out.push_str(" )");
        }
    }
}

pub fn write_atom(a: &Atom, symbols: &SymbolTable, out: &mut String) {
    if a.args.is_empty() {
        out.push_str(symbols.name(a.rel));
        return;
    }
    let _ = write!(out, "( {}", symbols.name(a.rel));
    for t in &a.args {
        out.push(' ');
        write_term(t, symbols, out);
    }
    out.push_str(" )");
}
