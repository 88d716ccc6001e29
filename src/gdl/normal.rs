//! A flat normal form of rules: `or` expanded into several rules, `not` pushed onto atoms.
//! Shared by validation and by every engine that compiles rules.

use super::ast::{Atom, Literal, Pos, Rule, Term};

/// Most rules one written rule may expand into when its `or`s are multiplied out.
pub const MAX_EXPANSION: usize = 4096;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FlatLit {
    Pos(Atom),
    Neg(Atom),
    Distinct(Term, Term),
    /// `(not (distinct a b))`.
    Same(Term, Term),
}

impl FlatLit {
    /// Calls `f` on every variable of the literal, left to right.
    pub fn for_each_var(&self, f: &mut impl FnMut(super::symbol::Sym)) {
        match self {
            FlatLit::Pos(a) | FlatLit::Neg(a) => a.for_each_var(f),
            FlatLit::Distinct(a, b) | FlatLit::Same(a, b) => {
                a.for_each_var(f);
                b.for_each_var(f);
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct FlatRule {
    pub head: Atom,
    pub body: Vec<FlatLit>,
    pub pos: Pos,
}

/// Expands one rule into its disjunctive normal form. Errors if the expansion exceeds
/// [`MAX_EXPANSION`] rules.
pub fn expand_rule(rule: &Rule) -> Result<Vec<FlatRule>, String> {
    let mut alts: Vec<Vec<FlatLit>> = vec![Vec::new()];
    for lit in &rule.body {
        alts = and(alts, &dnf(lit, false)?)?;
    }
    Ok(alts.into_iter().map(|body| FlatRule { head: rule.head.clone(), body, pos: rule.pos }).collect())
}

fn too_large() -> String {
    format!("`or` expands into more than {MAX_EXPANSION} rules")
}

/// The conjunction of two disjunctions of conjunctions (their product).
fn and(acc: Vec<Vec<FlatLit>>, part: &[Vec<FlatLit>]) -> Result<Vec<Vec<FlatLit>>, String> {
    if acc.len() * part.len() > MAX_EXPANSION {
        return Err(too_large());
    }
    let mut next = Vec::with_capacity(acc.len() * part.len());
    for a in &acc {
        for p in part {
            let mut c = a.clone();
            c.extend(p.iter().cloned());
            next.push(c);
        }
    }
    Ok(next)
}

/// The literal as a disjunction of conjunctions.
fn dnf(lit: &Literal, negated: bool) -> Result<Vec<Vec<FlatLit>>, String> {
    Ok(match (lit, negated) {
        (Literal::Atom(a), false) => vec![vec![FlatLit::Pos(a.clone())]],
        (Literal::Atom(a), true) => vec![vec![FlatLit::Neg(a.clone())]],
        (Literal::Distinct(x, y), false) => vec![vec![FlatLit::Distinct(x.clone(), y.clone())]],
        (Literal::Distinct(x, y), true) => vec![vec![FlatLit::Same(x.clone(), y.clone())]],
        (Literal::Not(l), n) => dnf(l, !n)?,
        (Literal::Or(ls), false) => {
            let mut out = Vec::new();
            for l in ls {
                out.extend(dnf(l, false)?);
                if out.len() > MAX_EXPANSION {
                    return Err(too_large());
                }
            }
            out
        }
        (Literal::Or(ls), true) => {
            // not (a or b) = (not a) and (not b): a product of the negated parts.
            let mut acc: Vec<Vec<FlatLit>> = vec![Vec::new()];
            for l in ls {
                acc = and(acc, &dnf(l, true)?)?;
            }
            acc
        }
    })
}
