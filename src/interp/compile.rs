//! Compiles rules in flat normal form into join plans: literals ordered so that each one is
//! evaluated with as many variables bound as possible, checks (`distinct`, negation) placed
//! as soon as their variables are bound, and an access path chosen for every literal.

use super::relation::{functor_key, IndexKind, Relation};
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
    /// A relation evaluated on demand (never materialized): all arguments are bound, and its
    /// rules are run top-down to prove (or, with `neg`, to fail to prove) the tuple.
    Check {
        rel: RelId,
        args: Box<[Pat]>,
        neg: bool,
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

impl CRule {
    pub fn body_rels(&self) -> impl Iterator<Item = (RelId, bool)> + '_ {
        self.body.iter().filter_map(|l| match l {
            Lit::Pos { rel, .. } => Some((*rel, false)),
            Lit::Neg { rel, .. } => Some((*rel, true)),
            Lit::Check { rel, neg, .. } => Some((*rel, *neg)),
            _ => None,
        })
    }
}

/// Compilation context: relations by (name, arity) and the term store for constants.
pub struct Compiler<'a> {
    pub terms: &'a mut TermStore,
    pub rels: &'a mut Vec<Relation>,
    pub rel_ids: &'a mut FxHashMap<(Sym, usize), RelId>,
    pub symbols: &'a SymbolTable,
    /// Relations evaluated on demand: see [`Lit::Check`].
    pub checked: &'a rustc_hash::FxHashSet<(Sym, usize)>,
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
    Check(RelId, Vec<Pat>, bool),
}

impl Compiler<'_> {
    pub fn rel(&mut self, name: Sym, arity: usize) -> RelId {
        if let Some(&r) = self.rel_ids.get(&(name, arity)) {
            return r;
        }
        self.rels.push(Relation::new(arity));
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

    fn access(&mut self, rel: RelId, args: &[Pat], bound: &[bool]) -> Access {
        if args.iter().all(|p| pat_bound(p, bound)) {
            return Access::Member;
        }
        if let Some(pos) = args.iter().position(|p| pat_bound(p, bound)) {
            let slot = self.rels[rel].add_index(pos, IndexKind::Exact);
            return Access::Exact { slot, pos };
        }
        if let Some((pos, Pat::Func(f, ps))) = args.iter().enumerate().find(|(_, p)| matches!(p, Pat::Func(..))) {
            let slot = self.rels[rel].add_index(pos, IndexKind::Functor);
            return Access::Functor { slot, key: functor_key(*f, ps.len()) };
        }
        Access::Scan
    }

    /// Compiles one flat rule. With `head_bound`, the rule is compiled to check a given head
    /// tuple (all head variables bound on entry). Errors name unsafe variables.
    pub fn rule(&mut self, fr: &FlatRule, head_bound: bool) -> Result<CRule, String> {
        let mut vars: FxHashMap<Sym, u16> = FxHashMap::default();
        let (head_rel, head) = self.atom(&fr.head, &mut vars);
        let mut pending = Vec::new();
        for l in &fr.body {
            pending.push(match l {
                FlatLit::Pos(a) if self.checked.contains(&(a.rel, a.args.len())) => {
                    let (r, ps) = self.atom(a, &mut vars);
                    Pending::Check(r, ps, false)
                }
                FlatLit::Neg(a) if self.checked.contains(&(a.rel, a.args.len())) => {
                    let (r, ps) = self.atom(a, &mut vars);
                    Pending::Check(r, ps, true)
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
        if head_bound {
            let mut hv = Vec::new();
            head.iter().for_each(|p| pat_vars(p, &mut hv));
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
                    Pending::Neg(_, ps) | Pending::Check(_, ps, _) => ps.iter().all(|p| pat_bound(p, &bound)),
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
                    Pending::Check(rel, ps, neg) => body.push(Lit::Check { rel, args: ps.into(), neg }),
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
                    Pending::Pos(..) => unreachable!(),
                }
            }
            if emitted {
                continue;
            }
            // The most constrained positive literal next.
            // Score: fully bound (a look-up) first, then `does` (one tuple per role), then
            // literals with bound arguments (an index), then function patterns; fewer new
            // variables break ties.
            let does = self.rel_ids.get(&(crate::gdl::kw::DOES, 2)).copied();
            let mut best: Option<(usize, i32)> = None;
            for (i, p) in pending.iter().enumerate() {
                if let Pending::Pos(rel, ps) = p {
                    let nb = ps.iter().filter(|p| pat_bound(p, &bound)).count() as i32;
                    scratch.clear();
                    ps.iter().for_each(|p| pat_vars(p, &mut scratch));
                    let fresh = scratch.iter().filter(|v| !bound[**v as usize]).count() as i32;
                    let score = if nb == ps.len() as i32 {
                        10_000
                    } else if Some(*rel) == does {
                        5_000
                    } else if nb > 0 {
                        1_000 + 10 * nb - fresh
                    } else if ps.iter().any(|p| matches!(p, Pat::Func(..))) {
                        100 - fresh
                    } else {
                        -fresh
                    };
                    if best.is_none_or(|(_, s)| score > s) {
                        best = Some((i, score));
                    }
                }
            }
            if let Some((i, _)) = best {
                let Pending::Pos(rel, ps) = pending.remove(i) else { unreachable!() };
                let access = self.access(rel, &ps, &bound);
                scratch.clear();
                ps.iter().for_each(|p| pat_vars(p, &mut scratch));
                scratch.retain(|v| !bound[*v as usize]);
                for &v in &scratch {
                    bound[v as usize] = true;
                }
                body.push(Lit::Pos { rel, args: ps.into(), access, fresh: scratch.as_slice().into(), dead: false });
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
                Pending::Check(rel, ..) => {
                    return Err(format!("relation #{rel} is evaluated on demand but a variable of it is never bound"));
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
        let mut head_vars = Vec::new();
        if !head_bound {
            head.iter().for_each(|p| pat_vars(p, &mut head_vars));
        }
        if let Some(&v) = head_vars.iter().find(|&&v| !bound[v as usize]) {
            return Err(format!("unsafe rule: head variable {} is never bound", name_of(v)));
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
                Lit::Pos { args, fresh, dead, .. } => {
                    *dead = fresh.iter().all(|&v| !used_later[v as usize]);
                    if exists_from == 0 && fresh.iter().any(|&v| head_vars.contains(&v)) {
                        exists_from = k + 1;
                    }
                    args.iter().for_each(|p| pat_vars(p, &mut vs));
                }
                Lit::Neg { args, .. } | Lit::Check { args, .. } => args.iter().for_each(|p| pat_vars(p, &mut vs)),
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
