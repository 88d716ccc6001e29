//! Guards: demand for relations read positively (magic sets with one binding pattern per
//! relation), on the relaxed game.
//!
//! A relation's atoms matter only where some rule reads them. For each relation `P` and each
//! literal reading it (a *site*), the arguments bound before it are those of the reading
//! rule's own guard and of its literals placed before `P` (literals of relations that are
//! not guarded first, then the others as written). `P`'s *pattern* is the set of argument
//! positions bound at every site (a fixpoint, as a site's bindings depend on its rule's
//! pattern). Each site gives a rule `(#guard_P args at the pattern) :- (#guard_H ...),
//! literals before it that bind them`, and `P`'s rules (and their instance rules) get
//! `(#guard_P head args at the pattern)` first. In chess the "ignore square" of
//! `bishop_threatens` and the clear-line relations below it then ranges over the squares
//! moved from (64), not every pair of coordinates (256).
//!
//! Sound because the relaxed game has no negation: with a left-to-right order per rule this
//! is the magic-sets rewriting, whose least model has every atom some proof of an unguarded
//! relation's atom uses. Relations read under negation anywhere (their atoms are looked up,
//! not joined), keywords, and relations with no site are not guarded.

use crate::gdl::{Atom, Literal, Rule, Sym, SymbolTable, Term};
use rustc_hash::{FxHashMap, FxHashSet};

type Key = (Sym, usize);

fn key(a: &Atom) -> Key {
    (a.rel, a.args.len())
}

fn vars_of_term(t: &Term, out: &mut Vec<Sym>) {
    t.for_each_var(&mut |v| {
        if !out.contains(&v) {
            out.push(v)
        }
    });
}

/// Adds guards to the relaxed `rules`. `is_inst[i]` marks instance rules (not sites: their
/// bodies repeat what their twins' compute); `twin[i]` are the instance rules of head rule
/// `i`, which get the same guard. `eligible` says which relations may be guarded. Returns
/// the guard relations (to lead joins).
pub(crate) fn add_guards(
    rules: &mut Vec<Rule>,
    is_inst: &[bool],
    twin: &[Vec<usize>],
    eligible: impl Fn(Key) -> bool,
    symbols: &mut SymbolTable,
) -> Vec<Key> {
    let n = rules.len();
    // Candidates: eligible relations with a rule that has a body.
    let mut cand: FxHashSet<Key> = FxHashSet::default();
    for r in rules.iter() {
        let k = key(&r.head);
        if k.1 > 0 && !r.body.is_empty() && eligible(k) {
            cand.insert(k);
        }
    }
    // Sites and the order of each site rule's literals.
    let order_of = |r: &Rule, cand: &FxHashSet<Key>| -> Vec<usize> {
        let is_c = |l: &Literal| matches!(l, Literal::Atom(a) if cand.contains(&key(a)));
        let mut o: Vec<usize> = (0..r.body.len()).filter(|&i| !is_c(&r.body[i])).collect();
        o.extend((0..r.body.len()).filter(|&i| is_c(&r.body[i])));
        o
    };
    let mut has_site: FxHashSet<Key> = FxHashSet::default();
    for (i, r) in rules.iter().enumerate() {
        if is_inst[i] {
            continue;
        }
        for l in &r.body {
            if let Literal::Atom(a) = l {
                if cand.contains(&key(a)) {
                    has_site.insert(key(a));
                }
            }
        }
    }
    cand.retain(|k| has_site.contains(k));
    let mut pattern: FxHashMap<Key, Vec<bool>> = cand.iter().map(|&k| (k, vec![true; k.1])).collect();
    let head_bound = |r: &Rule, pattern: &FxHashMap<Key, Vec<bool>>| -> Vec<Sym> {
        let mut b = Vec::new();
        if let Some(p) = pattern.get(&key(&r.head)) {
            for (j, t) in r.head.args.iter().enumerate() {
                if p[j] {
                    vars_of_term(t, &mut b);
                }
            }
        }
        b
    };
    loop {
        let mut changed = false;
        for (i, r) in rules.iter().enumerate() {
            if is_inst[i] {
                continue;
            }
            let own = head_bound(r, &pattern);
            let order = order_of(r, &cand);
            for (pos, &t) in order.iter().enumerate() {
                let Literal::Atom(a) = &r.body[t] else { continue };
                let Some(p) = pattern.get(&key(a)) else { continue };
                let (bound, _) = site_context(r, &order[..pos], &own, a, p);
                let p = pattern.get_mut(&key(a)).expect("present");
                for (j, arg) in a.args.iter().enumerate() {
                    if p[j] {
                        let mut vs = Vec::new();
                        vars_of_term(arg, &mut vs);
                        if !vs.iter().all(|v| bound.contains(v)) {
                            p[j] = false;
                            changed = true;
                        }
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    pattern.retain(|_, p| p.iter().any(|&b| b));
    let guard_of: FxHashMap<Key, Sym> = {
        let mut ks: Vec<Key> = pattern.keys().copied().collect();
        ks.sort_unstable_by_key(|k| (k.0 .0, k.1));
        ks.into_iter().enumerate().map(|(g, k)| (k, symbols.intern(&format!("#guard{g}")))).collect()
    };
    let guard_atom = |a: &Atom, pattern: &FxHashMap<Key, Vec<bool>>| -> Option<Atom> {
        let p = pattern.get(&key(a))?;
        let g = guard_of[&key(a)];
        Some(Atom { rel: g, args: a.args.iter().zip(p).filter(|(_, &b)| b).map(|(t, _)| t.clone()).collect() })
    };
    // The guards' rules, one per site.
    let mut extra = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        if is_inst[i] {
            continue;
        }
        let own = guard_atom(&r.head, &pattern);
        let own_bound = head_bound(r, &pattern);
        let order = order_of(r, &cand);
        for (pos, &t) in order.iter().enumerate() {
            let Literal::Atom(a) = &r.body[t] else { continue };
            let Some(g) = guard_atom(a, &pattern) else { continue };
            let (_, context) = site_context(r, &order[..pos], &own_bound, a, &pattern[&key(a)]);
            let mut body: Vec<Literal> = own.iter().cloned().map(Literal::Atom).collect();
            body.extend(context.into_iter().map(|u| r.body[u].clone()));
            extra.push(Rule { head: g, body, pos: r.pos });
        }
    }
    // Each guarded relation's rules (and their instance twins) read the guard first.
    for i in 0..n {
        if is_inst[i] {
            continue;
        }
        let Some(g) = guard_atom(&rules[i].head, &pattern) else { continue };
        if rules[i].body.is_empty() {
            continue;
        }
        rules[i].body.insert(0, Literal::Atom(g.clone()));
        for &j in &twin[i] {
            rules[j].body.insert(0, Literal::Atom(g.clone()));
        }
    }
    rules.extend(extra);
    let mut out: Vec<Key> = guard_of.iter().map(|(k, &g)| (g, pattern[k].iter().filter(|&&b| b).count())).collect();
    out.sort_unstable_by_key(|k| (k.0 .0, k.1));
    out
}

/// What a site binds: the variables bound before literal `a` (with pattern `p`) and the
/// literals (indices into `r.body`, among `before`) its guard rule reads besides the reading
/// rule's own guard (whose variables are `own`). With an own guard, each argument variable it
/// does not bind comes from the first literal before that shares a variable with it (so the
/// guard rule is a join anchored on the own guard, never a product of unrelated literals);
/// without one, from the single literal before that covers most pattern positions.
fn site_context(r: &Rule, before: &[usize], own: &[Sym], a: &Atom, p: &[bool]) -> (Vec<Sym>, Vec<usize>) {
    let mut need = Vec::new();
    for (j, arg) in a.args.iter().enumerate() {
        if p[j] {
            vars_of_term(arg, &mut need);
        }
    }
    let atom_at = |u: usize| match &r.body[u] {
        Literal::Atom(b) => Some(b),
        _ => None,
    };
    if !own.is_empty() {
        let mut bound = own.to_vec();
        let mut context = Vec::new();
        for v in need {
            if bound.contains(&v) {
                continue;
            }
            let found = before
                .iter()
                .copied()
                .find(|&u| atom_at(u).is_some_and(|b| atom_has_var(b, v) && own.iter().any(|&w| atom_has_var(b, w))));
            if let Some(u) = found {
                vars_of_term_atom(atom_at(u).expect("atom"), &mut bound);
                context.push(u);
            }
        }
        return (bound, context);
    }
    let covered = |b: &Atom| {
        a.args
            .iter()
            .zip(p)
            .filter(|(arg, &on)| {
                let mut vs = Vec::new();
                vars_of_term(arg, &mut vs);
                on && vs.iter().all(|&v| atom_has_var(b, v))
            })
            .count()
    };
    let mut best: Option<(usize, usize)> = None;
    for &u in before {
        if let Some(b) = atom_at(u) {
            let c = covered(b);
            if c > 0 && best.is_none_or(|(bc, _)| c > bc) {
                best = Some((c, u));
            }
        }
    }
    match best {
        Some((_, u)) => {
            let mut bound = Vec::new();
            vars_of_term_atom(atom_at(u).expect("atom"), &mut bound);
            (bound, vec![u])
        }
        None => (Vec::new(), Vec::new()),
    }
}

fn vars_of_term_atom(a: &Atom, out: &mut Vec<Sym>) {
    for t in &a.args {
        vars_of_term(t, out);
    }
}

fn atom_has_var(a: &Atom, v: Sym) -> bool {
    let mut found = false;
    a.for_each_var(&mut |x| found |= x == v);
    found
}
