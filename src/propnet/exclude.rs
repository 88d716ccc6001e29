//! Exclusion chains: a rule that asks for some local value *other than* one of its head's.
//!
//! Chess's `(<= (threatened_with_capture ?o ?cx ?cy ?x ?y ?ix ?iy) (opponent ?o ?p)
//! (rook_threatens ?p ?u ?v ?x ?y ?ix ?iy) (different_cells ?cx ?cy ?u ?v))` is an OR over
//! attackers `(?u ?v)` other than `(?cx ?cy)`: grounded as written it has one instance per
//! head and attacker. Here the literals over the locals become a rule of their own,
//! `(#cand_k ?o ?x ?y ?ix ?iy ?u ?v)` (the *candidates*, keyed by the head variables they
//! use), and the rule reads `(#excl_k ?o ?x ?y ?ix ?iy ?cx ?cy)`: "a candidate of this key
//! other than `(?cx ?cy)`". That relation is not instantiated from rules but built in the
//! ground net, per key, from the candidates' tuples in a fixed order: either directly (one
//! rule per candidate other than the excluded one) or, where that is larger, from prefix and
//! suffix ORs (`#pre` over the candidates before, `#suf` over those after: the atom excluding
//! the `j`-th candidate is `pre(j-1) ∨ suf(j+1)`), so a key with `n` candidates and `m`
//! excluded values costs about `4n + 2m` ground rules, not `n·m`.
//!
//! The disequality is either `(distinct ?c ?l)` or a relation that is one: each of its `k`
//! rules says `(distinct ?x_i ?y_i)` for another `i` under the same filters over its head
//! (chess's `different_cells`), so it holds iff the filters do and the two halves differ.
//! Exact: the candidates' relaxed tuples cover every tuple true in any state, and an
//! exclusion atom is the OR of all candidates of its key whose tuple is not its own.

use crate::gdl::{kw, Atom, FlatLit, FlatRule, Sym, SymbolTable, Term};
use crate::interp::{TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};

use super::ground::{GLit, GRule};

/// One exclusion relation: `ne(key, a)` holds iff some `cand(key, b)` with `b != a` does.
#[derive(Clone, Debug)]
pub(crate) struct Exclusion {
    /// `(ne key... a...)`: read by the rewritten rule, built by [`build_chains`].
    pub ne: Sym,
    /// `(cand key... b...)`: an ordinary rule's head.
    pub cand: Sym,
    /// `(any key...)`: stands for `ne` in the relaxed game (the disequality dropped).
    pub any: Sym,
    pub pre: Sym,
    pub suf: Sym,
    pub key_len: usize,
    pub width: usize,
}

/// Relations that are a disequality between their two halves under filters: for each, the
/// filters over canonical variables (`?#p0` ... for the head's positions).
fn disequalities(flats: &[FlatRule], canon: &[Sym]) -> FxHashMap<(Sym, usize), Vec<FlatLit>> {
    let mut by_rel: FxHashMap<(Sym, usize), Vec<&FlatRule>> = FxHashMap::default();
    for fr in flats {
        by_rel.entry((fr.head.rel, fr.head.args.len())).or_default().push(fr);
    }
    let mut out = FxHashMap::default();
    'rel: for (&(rel, arity), rules) in &by_rel {
        if (rel.0 as usize) < kw::NAMES.len() || arity == 0 || arity % 2 != 0 || rules.len() != arity / 2 {
            continue;
        }
        if arity > canon.len() {
            continue;
        }
        let k = arity / 2;
        let mut covered = vec![false; k];
        let mut filters: Option<Vec<FlatLit>> = None;
        for fr in rules {
            let Some((i, f)) = disequality_rule(fr, k, canon) else { continue 'rel };
            if covered[i] {
                continue 'rel;
            }
            covered[i] = true;
            match &filters {
                None => filters = Some(f),
                Some(g) => {
                    if g.len() != f.len() || !g.iter().all(|l| f.contains(l)) || !f.iter().all(|l| g.contains(l)) {
                        continue 'rel;
                    }
                }
            }
        }
        if covered.iter().all(|&c| c) {
            out.insert((rel, arity), filters.unwrap_or_default());
        }
    }
    out
}

/// If `fr` is `(rel ?x_0 .. ?x_k-1 ?y_0 .. ?y_k-1) :- (distinct ?x_i ?y_i), filters over the
/// head`, with distinct head variables: `i` and the filters over canonical variables.
fn disequality_rule(fr: &FlatRule, k: usize, canon: &[Sym]) -> Option<(usize, Vec<FlatLit>)> {
    let mut hv: Vec<Sym> = Vec::with_capacity(2 * k);
    for t in &fr.head.args {
        match t {
            Term::Var(v) if !hv.contains(v) => hv.push(*v),
            _ => return None,
        }
    }
    let pos = |v: Sym| hv.iter().position(|&x| x == v);
    let mut which = None;
    let mut filters = Vec::new();
    for l in &fr.body {
        if let FlatLit::Distinct(Term::Var(a), Term::Var(b)) = l {
            let (pa, pb) = (pos(*a)?, pos(*b)?);
            let (lo, hi) = (pa.min(pb), pa.max(pb));
            if which.is_none() && lo < k && hi == lo + k {
                which = Some(lo);
                continue;
            }
        }
        let mut inside = true;
        l.for_each_var(&mut |v| inside &= pos(v).is_some());
        if !inside {
            return None;
        }
        filters.push(subst_lit(l, &|v| Term::Var(canon[pos(v).expect("checked")])));
    }
    Some((which?, filters))
}

fn subst_term(t: &Term, f: &impl Fn(Sym) -> Term) -> Term {
    match t {
        Term::Var(v) => f(*v),
        Term::Const(c) => Term::Const(*c),
        Term::Func(g, args) => Term::Func(*g, args.iter().map(|a| subst_term(a, f)).collect()),
    }
}

fn subst_lit(l: &FlatLit, f: &impl Fn(Sym) -> Term) -> FlatLit {
    let atom = |a: &Atom| Atom { rel: a.rel, args: a.args.iter().map(|t| subst_term(t, f)).collect() };
    match l {
        FlatLit::Pos(a) => FlatLit::Pos(atom(a)),
        FlatLit::Neg(a) => FlatLit::Neg(atom(a)),
        FlatLit::Distinct(a, b) => FlatLit::Distinct(subst_term(a, f), subst_term(b, f)),
        FlatLit::Same(a, b) => FlatLit::Same(subst_term(a, f), subst_term(b, f)),
    }
}

fn vars_of(l: &FlatLit) -> Vec<Sym> {
    let mut v = Vec::new();
    l.for_each_var(&mut |x| {
        if !v.contains(&x) {
            v.push(x)
        }
    });
    v
}

/// Rewrites every rule whose one disequality ties a tuple of head variables to a tuple of
/// local ones (and nothing else ties them) into a read of an exclusion relation (see the
/// module doc). Returns the rules (the rewritten ones and the candidates' rules) and the
/// exclusion relations.
pub(crate) fn exclude_chains(flats: Vec<FlatRule>, symbols: &mut SymbolTable) -> (Vec<FlatRule>, Vec<Exclusion>) {
    let max_arity = flats.iter().map(|fr| fr.head.args.len()).max().unwrap_or(0);
    let canon: Vec<Sym> = (0..max_arity).map(|i| symbols.intern(&format!("?#p{i}"))).collect();
    let diseq = disequalities(&flats, &canon);
    let mut out = Vec::with_capacity(flats.len());
    let mut extra = Vec::new();
    let mut excls: Vec<Exclusion> = Vec::new();
    // Rules that differ only in their candidates (the disjuncts of an `or`: rook, bishop,
    // queen) share one exclusion relation, whose candidates' rule has one body per rule.
    let mut made: FxHashMap<(Atom, Vec<FlatLit>, Vec<Sym>, Vec<Sym>, Vec<Sym>), usize> = FxHashMap::default();
    let mut parts: FxHashSet<(usize, Vec<FlatLit>)> = FxHashSet::default();
    for fr in flats {
        match exclusion_of(&fr, &diseq, &canon) {
            None => out.push(fr),
            Some((a_part, c_part, key, a, b)) => {
                let cand_args: Vec<Term> = key.iter().chain(&b).map(|&v| Term::Var(v)).collect();
                let id = (fr.head.clone(), c_part.clone(), key.clone(), a.clone(), b.clone());
                let e = match made.get(&id) {
                    Some(&e) => e,
                    None => {
                        let n = excls.len();
                        excls.push(Exclusion {
                            ne: symbols.intern(&format!("#excl{n}")),
                            cand: symbols.intern(&format!("#cand{n}")),
                            any: symbols.intern(&format!("#any{n}")),
                            pre: symbols.intern(&format!("#pre{n}")),
                            suf: symbols.intern(&format!("#suf{n}")),
                            key_len: key.len(),
                            width: b.len(),
                        });
                        made.insert(id, n);
                        let mut body = c_part;
                        let ne_args = key.iter().chain(&a).map(|&v| Term::Var(v)).collect();
                        body.push(FlatLit::Pos(Atom { rel: excls[n].ne, args: ne_args }));
                        out.push(FlatRule { head: fr.head, body, pos: fr.pos });
                        n
                    }
                };
                if parts.insert((e, a_part.clone())) {
                    let head = Atom { rel: excls[e].cand, args: cand_args };
                    extra.push(FlatRule { head, body: a_part, pos: fr.pos });
                }
            }
        }
    }
    out.extend(extra);
    (out, excls)
}

/// The parts of a rule that [`exclude_chains`] rewrites: the literals over locals, the
/// others, the key (head variables the former use), the excluded tuple `a` (head variables)
/// and the candidates' tuple `b` (locals).
#[allow(clippy::type_complexity)]
fn exclusion_of(
    fr: &FlatRule,
    diseq: &FxHashMap<(Sym, usize), Vec<FlatLit>>,
    canon: &[Sym],
) -> Option<(Vec<FlatLit>, Vec<FlatLit>, Vec<Sym>, Vec<Sym>, Vec<Sym>)> {
    let mut head_vars = Vec::new();
    fr.head.for_each_var(&mut |x| head_vars.push(x));
    let is_local = |v: &Sym| !head_vars.contains(v);
    let as_vars = |ts: &[Term]| -> Option<Vec<Sym>> {
        ts.iter().map(|t| if let Term::Var(v) = t { Some(*v) } else { None }).collect()
    };
    // (literal index, a, b, filters)
    let mut found: Vec<(usize, Vec<Sym>, Vec<Sym>, Vec<FlatLit>)> = Vec::new();
    for (j, l) in fr.body.iter().enumerate() {
        let (x, y, filters) = match l {
            FlatLit::Pos(at) => {
                let Some(f) = diseq.get(&(at.rel, at.args.len())) else { continue };
                let k = at.args.len() / 2;
                let (Some(x), Some(y)) = (as_vars(&at.args[..k]), as_vars(&at.args[k..])) else { continue };
                let filters = f
                    .iter()
                    .map(|l| {
                        subst_lit(l, &|v| {
                            let p = canon.iter().position(|&c| c == v).expect("canonical variable");
                            at.args[p].clone()
                        })
                    })
                    .collect();
                (x, y, filters)
            }
            FlatLit::Distinct(Term::Var(x), Term::Var(y)) => (vec![*x], vec![*y], Vec::new()),
            _ => continue,
        };
        let outer = |t: &[Sym]| t.iter().all(|v| !is_local(v));
        let inner = |t: &[Sym]| t.iter().all(is_local);
        if outer(&x) && inner(&y) {
            found.push((j, x, y, filters));
        } else if outer(&y) && inner(&x) {
            found.push((j, y, x, filters));
        }
    }
    if found.len() != 1 {
        return None;
    }
    let (j, a, b, filters) = found.pop().expect("one");
    let mut body: Vec<FlatLit> = fr.body.iter().enumerate().filter(|&(i, _)| i != j).map(|(_, l)| l.clone()).collect();
    for f in filters {
        if !body.contains(&f) {
            body.push(f);
        }
    }
    let (mut a_part, mut c_part) = (Vec::new(), Vec::new());
    for l in body {
        if vars_of(&l).iter().any(is_local) {
            a_part.push(l)
        } else {
            c_part.push(l)
        }
    }
    let a_vars: Vec<Sym> = a_part.iter().flat_map(vars_of).collect();
    if a.iter().any(|v| a_vars.contains(v)) || !b.iter().all(|v| a_vars.contains(v)) {
        return None;
    }
    let mut key: Vec<Sym> = Vec::new();
    for &v in &a_vars {
        if !is_local(&v) && !key.contains(&v) {
            key.push(v);
        }
    }
    // The candidates' rule is safe: its positive literals bind every variable it uses.
    let bound = |part: &[FlatLit]| -> Vec<Sym> {
        part.iter().filter(|l| matches!(l, FlatLit::Pos(_))).flat_map(vars_of).collect()
    };
    let a_bound = bound(&a_part);
    if !a_vars.iter().all(|v| a_bound.contains(v)) {
        return None;
    }
    // So is the rewritten rule in the relaxed game, where `(any key)` binds only the key:
    // the other literals' positive ones bind the excluded tuple and the rest of the head.
    let c_bound = bound(&c_part);
    let c_vars: Vec<Sym> = c_part.iter().flat_map(vars_of).collect();
    let ok = |v: &Sym| c_bound.contains(v) || key.contains(v);
    if !a.iter().all(|v| c_bound.contains(v)) || !head_vars.iter().all(ok) || !c_vars.iter().all(ok) {
        return None;
    }
    Some((a_part, c_part, key, a, b))
}

/// Builds the ground rules of the exclusion atoms `needed` (per exclusion) from the
/// candidates' tuples `cands` (per exclusion, rows of `key_len + width` values), appending
/// to `rules` and `lits`. Per key: one rule per candidate other than the excluded one, or
/// prefix and suffix chains where those are fewer.
pub(crate) fn build_chains(
    excls: &[Exclusion],
    cands: &[Vec<TermId>],
    needed: &[FxHashSet<TermId>],
    terms: &mut TermStore,
    rules: &mut Vec<GRule>,
    lits: &mut Vec<GLit>,
) {
    let mut push = |rules: &mut Vec<GRule>, head: TermId, atom: TermId| {
        rules.push(GRule { head, start: lits.len() as u32, len: 1 });
        lits.push(GLit { atom, neg: false });
    };
    for (e, ex) in excls.iter().enumerate() {
        let w = ex.key_len + ex.width;
        if w == 0 {
            continue;
        }
        let before = rules.len();
        let mut rows: Vec<&[TermId]> = cands[e].chunks(w).collect();
        rows.sort_unstable();
        rows.dedup();
        let mut needs: Vec<(Vec<TermId>, TermId)> = needed[e].iter().map(|&t| (terms.args(t).to_vec(), t)).collect();
        needs.sort_unstable();
        let mut i = 0;
        while i < needs.len() {
            let key = needs[i].0[..ex.key_len].to_vec();
            let mut end = i;
            while end < needs.len() && needs[end].0[..ex.key_len] == key[..] {
                end += 1;
            }
            let lo = rows.partition_point(|r| r[..ex.key_len] < key[..]);
            let hi = rows.partition_point(|r| r[..ex.key_len] <= key[..]);
            let group = &rows[lo..hi];
            let (n, m) = (group.len(), end - i);
            let cand_of = |terms: &mut TermStore, r: &[TermId]| terms.intern(ex.cand, r);
            if n * m <= 4 * n + 2 * m {
                for (args, t) in &needs[i..end] {
                    for r in group {
                        if r[ex.key_len..] != args[ex.key_len..] {
                            let c = cand_of(terms, r);
                            push(rules, *t, c);
                        }
                    }
                }
            } else {
                let pre: Vec<TermId> = group.iter().map(|r| terms.intern(ex.pre, r)).collect();
                let suf: Vec<TermId> = group.iter().map(|r| terms.intern(ex.suf, r)).collect();
                for (k, r) in group.iter().enumerate() {
                    let c = cand_of(terms, r);
                    push(rules, pre[k], c);
                    push(rules, suf[k], c);
                    if k > 0 {
                        push(rules, pre[k], pre[k - 1]);
                    }
                    if k + 1 < n {
                        push(rules, suf[k], suf[k + 1]);
                    }
                }
                for (args, t) in &needs[i..end] {
                    match group.binary_search_by(|r| r[ex.key_len..].cmp(&args[ex.key_len..])) {
                        Ok(k) => {
                            if k > 0 {
                                push(rules, *t, pre[k - 1]);
                            }
                            if k + 1 < n {
                                push(rules, *t, suf[k + 1]);
                            }
                        }
                        Err(_) => push(rules, *t, pre[n - 1]),
                    }
                }
            }
            i = end;
        }
        tracing::debug!(
            exclusion = e,
            candidates = cands[e].len() / w,
            needed = needed[e].len(),
            rules = rules.len() - before,
            "exclusion built"
        );
    }
}
