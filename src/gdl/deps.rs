//! Rule-level dependencies. A body literal depends on exactly the rules whose head it may
//! unify with, so `(goal r 100) <= (not (goal r 0))` does not depend on itself: negation
//! only needs to be stratified at this finer grain (as ggp-base's top-down prover allows).

use super::ast::Term;
use super::normal::{FlatLit, FlatRule};
use super::symbol::Sym;
use crate::graph::sccs;
use rustc_hash::FxHashMap;

/// Whether two terms could unify (variables renamed apart; repeated variables are not
/// checked, so this may say yes where unification fails, never the reverse).
pub fn may_unify(a: &Term, b: &Term) -> bool {
    match (a, b) {
        (Term::Var(_), _) | (_, Term::Var(_)) => true,
        (Term::Const(x), Term::Const(y)) => x == y,
        (Term::Func(f, xs), Term::Func(g, ys)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| may_unify(x, y))
        }
        _ => false,
    }
}

/// The dependency graph of flat rules and its strongly connected components.
#[derive(Clone, Debug)]
pub struct RuleDeps {
    /// For each rule: (rule it depends on, through a negation).
    pub edges: Vec<Vec<(usize, bool)>>,
    /// Components, dependencies first.
    pub comps: Vec<Vec<usize>>,
    pub comp_of: Vec<usize>,
}

impl RuleDeps {
    /// Whether a component's rules depend on each other (it needs a fixpoint).
    pub fn is_recursive(&self, c: usize) -> bool {
        let comp = &self.comps[c];
        comp.len() > 1 || self.edges[comp[0]].iter().any(|&(j, _)| j == comp[0])
    }
}

pub fn rule_deps(rules: &[FlatRule]) -> RuleDeps {
    let mut by_head: FxHashMap<(Sym, usize), Vec<usize>> = FxHashMap::default();
    for (i, r) in rules.iter().enumerate() {
        by_head.entry((r.head.rel, r.head.args.len())).or_default().push(i);
    }
    let mut edges = vec![Vec::new(); rules.len()];
    for (i, r) in rules.iter().enumerate() {
        for l in &r.body {
            let (a, neg) = match l {
                FlatLit::Pos(a) => (a, false),
                FlatLit::Neg(a) => (a, true),
                _ => continue,
            };
            let Some(heads) = by_head.get(&(a.rel, a.args.len())) else { continue };
            for &j in heads {
                let h = &rules[j].head;
                if h.args.iter().zip(&a.args).all(|(x, y)| may_unify(x, y)) {
                    edges[i].push((j, neg));
                }
            }
        }
    }
    let succ: Vec<Vec<usize>> = edges.iter().map(|e| e.iter().map(|&(j, _)| j).collect()).collect();
    let comps = sccs(rules.len(), &succ);
    let mut comp_of = vec![0; rules.len()];
    for (c, comp) in comps.iter().enumerate() {
        for &r in comp {
            comp_of[r] = c;
        }
    }
    RuleDeps { edges, comps, comp_of }
}
