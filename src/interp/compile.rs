//! Compiles rules in flat normal form into join plans: literals ordered so that each one is
//! evaluated with as many variables bound as possible, checks (`distinct`, negation) placed
//! as soon as their variables are bound, and an access path chosen for every literal.

use super::relation::{col, functor_key, sub_col, Col, IndexKind, Relation};
use super::terms::{TermId, TermStore};
use crate::gdl::{Atom, FlatLit, FlatRule, Sym, SymbolTable, Term};
use rustc_hash::FxHashMap;

pub type RelId = usize;

/// A term pattern: variables are slots in a binding array.
#[derive(Clone, Debug)]
pub enum Pat {
    Var(u16),
    Ground(TermId),
    Func(Sym, Box<[Pat]>),
}

/// How a literal finds its candidate tuples.
#[derive(Clone, Debug)]
pub enum Access {
    /// Every tuple of the relation.
    Scan,
    /// All arguments are bound: one hash look-up.
    Member,
    /// Argument `pos` is bound: the chain of its value in index `slot`.
    Exact { slot: usize, pos: usize },
    /// Argument pattern is a function term: the chain of its functor in index `slot`.
    Functor { slot: usize, key: u64 },
    /// The terms at `cols` (arguments, or variables or constants inside function terms) are
    /// bound: the chain of their values' hash in index `slot`.
    Multi { slot: usize, cols: Box<[Col]> },
}

#[derive(Clone, Debug)]
pub enum Lit {
    /// `dead`: the variables this literal binds are used by no later literal nor the head, so
    /// one matching tuple is as good as all of them.
    Pos {
        rel: RelId,
        args: Box<[Pat]>,
        access: Access,
        fresh: Box<[u16]>,
        dead: bool,
    },
    /// Negation; `locals` are variables that occur nowhere else (read as "no such tuple").
    Neg {
        rel: RelId,
        args: Box<[Pat]>,
        access: Access,
        locals: Box<[u16]>,
    },
    Distinct(Pat, Pat),
    /// A relation evaluated top-down (never materialized), called in `mode` (see
    /// `table.rs`): the arguments at its bound positions are bound. `fresh` variables get
    /// bound by its answers (with `neg`: they are local, and the literal holds when no answer
    /// matches); `dead` as for `Pos`.
    Call {
        args: Box<[Pat]>,
        mode: usize,
        fresh: Box<[u16]>,
        neg: bool,
        dead: bool,
    },
    /// `(not (distinct a b))`: the second pattern is bound; `fresh` variables of the first
    /// get bound by matching.
    Same(Pat, Pat, Box<[u16]>),
}

#[derive(Clone, Debug)]
pub struct CRule {
    pub head_rel: RelId,
    pub head: Box<[Pat]>,
    pub head_vars: Box<[u16]>,
    pub body: Box<[Lit]>,
    pub nvars: usize,
    /// In semi-naive evaluation: the literal that ranges over the last round's new tuples.
    pub delta: Option<usize>,
    /// From this literal on all head variables are bound: one solution of the rest suffices.
    pub exists_from: usize,
}

/// Compilation context: relations by (name, arity) and the term store for constants.
pub struct Compiler<'a> {
    pub terms: &'a mut TermStore,
    pub rels: &'a mut Vec<Relation>,
    pub rel_ids: &'a mut FxHashMap<(Sym, usize), RelId>,
    /// The (name, arity) of each relation, by id.
    pub rel_keys: Vec<(Sym, usize)>,
    pub symbols: &'a SymbolTable,
    /// Relations evaluated top-down: see [`Lit::Call`].
    pub moded: &'a rustc_hash::FxHashSet<(Sym, usize)>,
    /// Modes requested so far: (relation, bound positions). Their rules are compiled later.
    pub modes: Vec<(RelId, Box<[bool]>)>,
    pub mode_ids: FxHashMap<(RelId, Box<[bool]>), usize>,
    pub stats: &'a Stats,
    /// Relations whose literals lead every join they are in (after a delta literal): the
    /// grounder's demand relations, which bind a rule's head to the atoms asked for.
    pub lead: &'a rustc_hash::FxHashSet<(Sym, usize)>,
    /// Index all the bound arguments of a literal together when there are several (the
    /// grounder's plans, over large relations of wide tuples).
    pub multi_index: bool,
}

/// Size estimates for join ordering, by relation name and arity: number of tuples and
/// number of distinct values per argument. Known exactly for static relations once they
/// have been evaluated; `true` is estimated from the initial state, per functor of its
/// argument.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub rels: FxHashMap<(Sym, usize), (f64, Vec<f64>)>,
    pub state: FxHashMap<(Sym, usize), (f64, Vec<f64>)>,
}

/// Assumed size of a relation nothing is known of, and of its arguments' domains.
const DEFAULT_SIZE: f64 = 1000.0;
const DEFAULT_DOMAIN: f64 = 10.0;

/// Join-order weight of each unbound leaf of a top-down call (see `Compiler::rule`).
const CALL_COST: f64 = 100.0;

/// Number of variable and constant leaves of a pattern.
fn leaves(p: &Pat) -> usize {
    match p {
        Pat::Func(_, ps) => ps.iter().map(leaves).sum(),
        _ => 1,
    }
}

/// Fraction of the variable and constant leaves of `p` that are bound.
fn bound_fraction(p: &Pat, bound: &[bool]) -> f64 {
    fn count(p: &Pat, bound: &[bool], n: &mut u32, b: &mut u32) {
        match p {
            Pat::Var(v) => {
                *n += 1;
                *b += bound[*v as usize] as u32;
            }
            Pat::Ground(_) => {
                *n += 1;
                *b += 1;
            }
            Pat::Func(_, ps) => ps.iter().for_each(|q| count(q, bound, n, b)),
        }
    }
    let (mut n, mut b) = (0, 0);
    count(p, bound, &mut n, &mut b);
    if n == 0 {
        1.0
    } else {
        b as f64 / n as f64
    }
}

/// The columns (see [`Col`]) of the bound parts of pattern `p` at column `c`: `c` itself if
/// `p` is bound, else those of its bound subpatterns.
fn bound_cols(p: &Pat, c: Col, bound: &[bool], out: &mut Vec<Col>) {
    if pat_bound(p, bound) {
        out.push(c);
    } else if let Pat::Func(_, ps) = p {
        for (i, q) in ps.iter().enumerate() {
            if let Some(d) = sub_col(c, i) {
                bound_cols(q, d, bound, out);
            }
        }
    }
}

fn pat_vars(p: &Pat, out: &mut Vec<u16>) {
    match p {
        Pat::Var(v) => {
            if !out.contains(v) {
                out.push(*v)
            }
        }
        Pat::Ground(_) => {}
        Pat::Func(_, ps) => ps.iter().for_each(|q| pat_vars(q, out)),
    }
}

fn pat_bound(p: &Pat, bound: &[bool]) -> bool {
    match p {
        Pat::Var(v) => bound[*v as usize],
        Pat::Ground(_) => true,
        Pat::Func(_, ps) => ps.iter().all(|q| pat_bound(q, bound)),
    }
}

enum Pending {
    Pos(RelId, Vec<Pat>),
    Neg(RelId, Vec<Pat>),
    Distinct(Pat, Pat),
    Same(Pat, Pat),
    Call(RelId, Vec<Pat>, bool),
}

impl Compiler<'_> {
    pub fn rel(&mut self, name: Sym, arity: usize) -> RelId {
        if let Some(&r) = self.rel_ids.get(&(name, arity)) {
            return r;
        }
        self.rels.push(Relation::new(arity));
        self.rel_keys.push((name, arity));
        let id = self.rels.len() - 1;
        self.rel_ids.insert((name, arity), id);
        id
    }

    fn pat(&mut self, t: &Term, vars: &mut FxHashMap<Sym, u16>) -> Pat {
        match t {
            Term::Var(v) => {
                let n = vars.len() as u16;
                Pat::Var(*vars.entry(*v).or_insert(n))
            }
            _ if t.is_ground() => Pat::Ground(self.terms.intern_ast(t)),
            Term::Func(f, args) => Pat::Func(*f, args.iter().map(|a| self.pat(a, vars)).collect()),
            Term::Const(_) => unreachable!(),
        }
    }

    fn atom(&mut self, a: &Atom, vars: &mut FxHashMap<Sym, u16>) -> (RelId, Vec<Pat>) {
        let r = self.rel(a.rel, a.args.len());
        (r, a.args.iter().map(|t| self.pat(t, vars)).collect())
    }

    /// The mode of a call to `rel` with these arguments bound, registering it if new.
    fn mode(&mut self, rel: RelId, args: &[Pat], bound: &[bool]) -> usize {
        let mask: Box<[bool]> = args.iter().map(|p| pat_bound(p, bound)).collect();
        if let Some(&m) = self.mode_ids.get(&(rel, mask.clone())) {
            return m;
        }
        self.modes.push((rel, mask.clone()));
        self.mode_ids.insert((rel, mask), self.modes.len() - 1);
        self.modes.len() - 1
    }

    /// Estimated number of tuples a positive literal yields per binding of the variables
    /// bound so far.
    fn estimate(&self, rel: RelId, args: &[Pat], bound: &[bool]) -> f64 {
        let key = self.rel_keys.get(rel).copied();
        let from = |n: f64, doms: &[f64], ps: &[Pat]| -> f64 {
            let mut e = n;
            for (p, &d) in ps.iter().zip(doms) {
                e /= d.max(1.0).powf(bound_fraction(p, bound));
            }
            e
        };
        let mut e = match key {
            Some((s, 1)) if s == crate::gdl::kw::TRUE => match &args[0] {
                Pat::Func(f, ps) => match self.stats.state.get(&(*f, ps.len())) {
                    Some((n, doms)) => from(n.max(1.0), doms, ps),
                    None => 1.0,
                },
                Pat::Ground(_) => 1.0,
                Pat::Var(_) => self.stats.state.values().map(|(n, _)| n).sum::<f64>().max(1.0),
            },
            Some(k) => match self.stats.rels.get(&k) {
                Some((n, doms)) => from(*n, doms, args),
                None => from(DEFAULT_SIZE, &vec![DEFAULT_DOMAIN; args.len()], args),
            },
            None => DEFAULT_SIZE,
        };
        if args.iter().all(|p| pat_bound(p, bound)) {
            e = e.min(1.0);
        }
        e
    }

    fn access(&mut self, rel: RelId, args: &[Pat], bound: &[bool]) -> Access {
        if args.iter().all(|p| pat_bound(p, bound)) {
            return Access::Member;
        }
        if self.multi_index {
            // Every bound argument, and the bound leaves of partly bound function terms.
            let mut cols: Vec<Col> = Vec::new();
            for (i, p) in args.iter().enumerate() {
                bound_cols(p, col(i), bound, &mut cols);
            }
            let inner = cols.iter().any(|&c| c > 0xff);
            if (cols.len() >= 2 || inner) && cols.len() <= super::eval::BUF {
                let pos = (cols[0] & 0xff) as usize;
                let slot = self.rels[rel].add_index_filled(pos, IndexKind::Multi, &cols, self.terms);
                return Access::Multi { slot, cols: cols.into() };
            }
        }
        // The bound argument with the most distinct values (when they are known), else
        // the first.
        let doms = self.rel_keys.get(rel).and_then(|k| self.stats.rels.get(k)).map(|(_, d)| d);
        let dom = |pos: usize| doms.and_then(|d| d.get(pos)).copied().unwrap_or(0.0);
        let mut choice: Option<usize> = None;
        for (pos, p) in args.iter().enumerate() {
            if pat_bound(p, bound) && choice.is_none_or(|c| dom(pos) > dom(c)) {
                choice = Some(pos);
            }
        }
        if let Some(pos) = choice {
            let slot = self.rels[rel].add_index_filled(pos, IndexKind::Exact, &[], self.terms);
            return Access::Exact { slot, pos };
        }
        if let Some((pos, Pat::Func(f, ps))) = args.iter().enumerate().find(|(_, p)| matches!(p, Pat::Func(..))) {
            let slot = self.rels[rel].add_index_filled(pos, IndexKind::Functor, &[], self.terms);
            return Access::Functor { slot, key: functor_key(*f, ps.len()) };
        }
        Access::Scan
    }

    /// Compiles one flat rule. With `head_bound`, the rule is compiled for a top-down call:
    /// the head arguments at the positions it marks are bound on entry, and the rule
    /// yields the values of the variables of the others. Errors name unsafe variables.
    pub fn rule(&mut self, fr: &FlatRule, head_bound: Option<&[bool]>) -> Result<CRule, String> {
        self.rule_inner(fr, head_bound, false)
    }

    /// Compiles the semi-naive variant of a rule that reads the delta of its body literal
    /// `j` (a positive literal): that literal is joined first, so a round whose delta is
    /// empty costs nothing. Returns the rule and the index of that literal in its body.
    pub fn delta_rule(&mut self, fr: &FlatRule, j: usize) -> Result<(CRule, usize), String> {
        let mut body = fr.body.clone();
        let lit = body.remove(j);
        body.insert(0, lit);
        let reordered = FlatRule { head: fr.head.clone(), body, pos: fr.pos };
        let mut cr = self.rule_inner(&reordered, None, true)?;
        let k = cr.body.iter().position(|l| matches!(l, Lit::Pos { .. })).ok_or("no positive literal")?;
        cr.delta = Some(k);
        Ok((cr, k))
    }

    fn rule_inner(&mut self, fr: &FlatRule, head_bound: Option<&[bool]>, pos_first: bool) -> Result<CRule, String> {
        let mut pos_first = pos_first;
        let mut vars: FxHashMap<Sym, u16> = FxHashMap::default();
        let (head_rel, head) = self.atom(&fr.head, &mut vars);
        let mut pending = Vec::new();
        for l in &fr.body {
            pending.push(match l {
                FlatLit::Pos(a) if self.moded.contains(&(a.rel, a.args.len())) => {
                    let (r, ps) = self.atom(a, &mut vars);
                    Pending::Call(r, ps, false)
                }
                FlatLit::Neg(a) if self.moded.contains(&(a.rel, a.args.len())) => {
                    let (r, ps) = self.atom(a, &mut vars);
                    Pending::Call(r, ps, true)
                }
                FlatLit::Pos(a) => {
                    let (r, ps) = self.atom(a, &mut vars);
                    Pending::Pos(r, ps)
                }
                FlatLit::Neg(a) => {
                    let (r, ps) = self.atom(a, &mut vars);
                    Pending::Neg(r, ps)
                }
                FlatLit::Distinct(x, y) => Pending::Distinct(self.pat(x, &mut vars), self.pat(y, &mut vars)),
                FlatLit::Same(x, y) => Pending::Same(self.pat(x, &mut vars), self.pat(y, &mut vars)),
            });
        }
        let nvars = vars.len();
        let name_of = |v: u16| -> String {
            vars.iter().find(|(_, &i)| i == v).map(|(s, _)| self.symbols.name(*s).to_string()).unwrap_or_default()
        };
        let mut bound = vec![false; nvars];
        if let Some(mask) = head_bound {
            let mut hv = Vec::new();
            head.iter().zip(mask).filter(|(_, &b)| b).for_each(|(p, _)| pat_vars(p, &mut hv));
            for v in hv {
                bound[v as usize] = true;
            }
        }
        let mut body = Vec::new();
        let mut scratch = Vec::new();
        while !pending.is_empty() {
            // Checks whose variables are all bound go first.
            let mut i = 0;
            let mut emitted = false;
            while i < pending.len() {
                let ready = match &pending[i] {
                    Pending::Neg(_, ps) => ps.iter().all(|p| pat_bound(p, &bound)),
                    // Calls cost more than look-ups: see below.
                    Pending::Call(..) => false,
                    Pending::Distinct(x, y) => pat_bound(x, &bound) && pat_bound(y, &bound),
                    Pending::Same(x, y) => pat_bound(x, &bound) || pat_bound(y, &bound),
                    Pending::Pos(..) => false,
                };
                if !ready {
                    i += 1;
                    continue;
                }
                emitted = true;
                match pending.remove(i) {
                    Pending::Neg(rel, ps) => {
                        let access = self.access(rel, &ps, &bound);
                        body.push(Lit::Neg { rel, args: ps.into(), access, locals: Box::new([]) });
                    }
                    Pending::Distinct(x, y) => body.push(Lit::Distinct(x, y)),
                    Pending::Same(x, y) => {
                        let (x, y) = if pat_bound(&y, &bound) { (x, y) } else { (y, x) };
                        scratch.clear();
                        pat_vars(&x, &mut scratch);
                        scratch.retain(|v| !bound[*v as usize]);
                        for &v in &scratch {
                            bound[v as usize] = true;
                        }
                        body.push(Lit::Same(x, y, scratch.as_slice().into()));
                    }
                    Pending::Pos(..) | Pending::Call(..) => unreachable!(),
                }
            }
            if emitted {
                continue;
            }
            // The positive literal expected to yield fewest tuples next; fewer new variables
            // break ties. A delta variant starts with its delta literal (the first one).
            let mut best: Option<(usize, f64, usize)> = None;
            let mut forced = false;
            if std::mem::take(&mut pos_first) {
                best = pending.iter().position(|p| matches!(p, Pending::Pos(..))).map(|i| (i, 0.0, 0));
                forced = best.is_some();
            }
            if !forced && !self.lead.is_empty() {
                best = pending
                    .iter()
                    .position(|p| matches!(p, Pending::Pos(r, _) if self.lead.contains(&self.rel_keys[*r])))
                    .map(|i| (i, 0.0, 0));
                forced = best.is_some();
            }
            for (i, p) in pending.iter().enumerate().filter(|_| !forced) {
                let (rel, ps) = match p {
                    Pending::Pos(rel, ps) => (*rel, ps),
                    Pending::Call(rel, ps, false) if !ps.iter().all(|p| pat_bound(p, &bound)) => (*rel, ps),
                    _ => continue,
                };
                scratch.clear();
                ps.iter().for_each(|p| pat_vars(p, &mut scratch));
                let fresh = scratch.iter().filter(|v| !bound[**v as usize]).count();
                let est = match p {
                    // Nothing is known of a top-down relation's size; what matters is that
                    // its inputs be bound: fewer unbound leaves first, and after the
                    // materialized literals that could bind them cheaply.
                    Pending::Call(..) => {
                        CALL_COST * ps.iter().map(|p| (1.0 - bound_fraction(p, &bound)) * leaves(p) as f64).sum::<f64>()
                    }
                    _ => self.estimate(rel, ps, &bound),
                };
                if best.is_none_or(|(_, e, f)| est < e * 0.999 || (est <= e * 1.001 && fresh < f)) {
                    best = Some((i, est, fresh));
                }
            }
            // A call whose arguments are all bound is a test, but a costly one: it goes after
            // the look-ups and filters (estimate at most one tuple) that are possible now.
            let ready_call = pending
                .iter()
                .position(|p| matches!(p, Pending::Call(_, ps, _) if ps.iter().all(|p| pat_bound(p, &bound))));
            if let Some(i) = ready_call.filter(|_| best.is_none_or(|(_, e, _)| e > 1.0)) {
                let Pending::Call(rel, ps, neg) = pending.remove(i) else { unreachable!() };
                let mode = self.mode(rel, &ps, &bound);
                body.push(Lit::Call { args: ps.into(), mode, fresh: Box::new([]), neg, dead: false });
                continue;
            }
            if let Some((i, _, _)) = best {
                let (rel, ps, call) = match pending.remove(i) {
                    Pending::Pos(rel, ps) => (rel, ps, false),
                    Pending::Call(rel, ps, _) => (rel, ps, true),
                    _ => unreachable!(),
                };
                scratch.clear();
                ps.iter().for_each(|p| pat_vars(p, &mut scratch));
                scratch.retain(|v| !bound[*v as usize]);
                if call {
                    let mode = self.mode(rel, &ps, &bound);
                    body.push(Lit::Call {
                        args: ps.into(),
                        mode,
                        fresh: scratch.as_slice().into(),
                        neg: false,
                        dead: false,
                    });
                } else {
                    let access = self.access(rel, &ps, &bound);
                    body.push(Lit::Pos { rel, args: ps.into(), access, fresh: scratch.as_slice().into(), dead: false });
                }
                for &v in &scratch {
                    bound[v as usize] = true;
                }
                continue;
            }
            // Only checks with unbound variables are left.
            match pending.remove(0) {
                Pending::Neg(rel, ps) => {
                    scratch.clear();
                    ps.iter().for_each(|p| pat_vars(p, &mut scratch));
                    scratch.retain(|v| !bound[*v as usize]);
                    let access = self.access(rel, &ps, &bound);
                    body.push(Lit::Neg { rel, args: ps.into(), access, locals: scratch.as_slice().into() });
                }
                Pending::Call(rel, ps, neg) => {
                    scratch.clear();
                    ps.iter().for_each(|p| pat_vars(p, &mut scratch));
                    scratch.retain(|v| !bound[*v as usize]);
                    let mode = self.mode(rel, &ps, &bound);
                    body.push(Lit::Call { args: ps.into(), mode, fresh: scratch.as_slice().into(), neg, dead: false });
                }
                Pending::Distinct(x, y) | Pending::Same(x, y) => {
                    scratch.clear();
                    pat_vars(&x, &mut scratch);
                    pat_vars(&y, &mut scratch);
                    scratch.retain(|v| !bound[*v as usize]);
                    let names: Vec<String> = scratch.iter().map(|&v| name_of(v)).collect();
                    return Err(format!(
                        "unsafe rule: variable(s) {} of a `distinct` are never bound",
                        names.join(", ")
                    ));
                }
                Pending::Pos(..) => unreachable!(),
            }
        }
        // The head variables the rule yields: all of them, or those of the free positions.
        let mut head_vars = Vec::new();
        let mask = head_bound.map(<[bool]>::to_vec).unwrap_or_else(|| vec![false; head.len()]);
        head.iter().zip(&mask).filter(|(_, &b)| !b).for_each(|(p, _)| pat_vars(p, &mut head_vars));
        if let Some(&v) = head_vars.iter().find(|&&v| !bound[v as usize]) {
            return Err(format!("unsafe rule: head variable {} is never bound", name_of(v)));
        }
        if head_bound.is_some() {
            let mut hv = Vec::new();
            head.iter().zip(&mask).filter(|(_, &b)| b).for_each(|(p, _)| pat_vars(p, &mut hv));
            head_vars.retain(|v| !hv.contains(v));
        }
        // Which literals bind only variables nobody reads later, and where the head is bound.
        let mut used_later = vec![false; nvars];
        for &v in &head_vars {
            used_later[v as usize] = true;
        }
        let mut exists_from = 0;
        for k in (0..body.len()).rev() {
            let mut vs = Vec::new();
            match &mut body[k] {
                Lit::Pos { args, fresh, dead, .. } | Lit::Call { args, fresh, dead, neg: false, .. } => {
                    *dead = fresh.iter().all(|&v| !used_later[v as usize]);
                    if exists_from == 0 && fresh.iter().any(|&v| head_vars.contains(&v)) {
                        exists_from = k + 1;
                    }
                    args.iter().for_each(|p| pat_vars(p, &mut vs));
                }
                Lit::Neg { args, .. } | Lit::Call { args, .. } => args.iter().for_each(|p| pat_vars(p, &mut vs)),
                Lit::Distinct(x, y) => {
                    pat_vars(x, &mut vs);
                    pat_vars(y, &mut vs);
                }
                Lit::Same(x, y, fresh) => {
                    if exists_from == 0 && fresh.iter().any(|&v| head_vars.contains(&v)) {
                        exists_from = k + 1;
                    }
                    pat_vars(x, &mut vs);
                    pat_vars(y, &mut vs);
                }
            }
            for v in vs {
                used_later[v as usize] = true;
            }
        }
        Ok(CRule {
            head_rel,
            head: head.into(),
            head_vars: head_vars.into(),
            body: body.into(),
            nvars,
            delta: None,
            exists_from,
        })
    }
}
