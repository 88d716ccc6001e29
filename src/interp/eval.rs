//! Join evaluation over the relation database. Read-only during a join: solutions are
//! collected as bindings of the head's variables and inserted afterwards.

use super::compile::{Access, CRule, Lit, Pat};
use super::relation::Relation;
use super::terms::{TermId, TermStore, UNBOUND};

/// All relations of a game plus the terms they hold.
#[derive(Clone, Debug)]
pub struct Db {
    pub terms: TermStore,
    pub rels: Vec<Relation>,
    /// For relations evaluated on demand: their rules compiled with the head bound.
    pub check_rules: std::sync::Arc<Vec<Vec<CRule>>>,
    /// Set when a join produced more than [`MAX_SOLUTIONS`] values and was cut short.
    pub overflow: std::cell::Cell<bool>,
}

/// Most head-variable values one join may collect before it gives up (memory guard).
pub const MAX_SOLUTIONS: usize = 32 << 20;

/// Small fixed buffer for argument lists, so the hot path does not allocate.
const BUF: usize = 24;

impl Db {
    /// The term a pattern denotes under the bindings, if all its variables are bound and the
    /// term exists (a term that was never created is in no relation).
    #[inline]
    pub fn ground(&self, p: &Pat, b: &[TermId]) -> Option<TermId> {
        match p {
            Pat::Var(v) => {
                let t = b[*v as usize];
                (t != UNBOUND).then_some(t)
            }
            Pat::Ground(t) => Some(*t),
            Pat::Func(f, ps) => {
                if ps.len() <= BUF {
                    let mut buf = [UNBOUND; BUF];
                    for (i, q) in ps.iter().enumerate() {
                        buf[i] = self.ground(q, b)?;
                    }
                    self.terms.lookup(*f, &buf[..ps.len()])
                } else {
                    let v: Option<Vec<TermId>> = ps.iter().map(|q| self.ground(q, b)).collect();
                    self.terms.lookup(*f, &v?)
                }
            }
        }
    }

    /// Matches a pattern against a term, binding unbound variables.
    #[inline]
    pub fn unify(&self, p: &Pat, t: TermId, b: &mut [TermId]) -> bool {
        match p {
            Pat::Var(v) => {
                let slot = &mut b[*v as usize];
                if *slot == UNBOUND {
                    *slot = t;
                    true
                } else {
                    *slot == t
                }
            }
            Pat::Ground(g) => *g == t,
            Pat::Func(f, ps) => {
                if self.terms.functor(t) != *f {
                    return false;
                }
                let args = self.terms.args(t);
                args.len() == ps.len() && ps.iter().zip(args).all(|(q, &a)| self.unify(q, a, b))
            }
        }
    }

    /// Structural equality of two fully bound patterns.
    fn same(&self, p: &Pat, q: &Pat, b: &mut [TermId]) -> bool {
        match (p, q) {
            (Pat::Func(f, ps), Pat::Func(g, qs)) => {
                f == g && ps.len() == qs.len() && ps.iter().zip(qs.iter()).all(|(x, y)| self.same(x, y, b))
            }
            (Pat::Func(..), _) => {
                let t = self.value(q, b);
                self.unify(p, t, b)
            }
            _ => {
                let t = self.value(p, b);
                self.unify(q, t, b)
            }
        }
    }

    fn value(&self, p: &Pat, b: &[TermId]) -> TermId {
        match p {
            Pat::Var(v) => b[*v as usize],
            Pat::Ground(t) => *t,
            Pat::Func(..) => unreachable!("value of a function pattern"),
        }
    }

    /// Builds (interning) the term a fully bound pattern denotes.
    pub fn build(&mut self, p: &Pat, b: &[TermId]) -> TermId {
        match p {
            Pat::Var(v) => b[*v as usize],
            Pat::Ground(t) => *t,
            Pat::Func(f, ps) => {
                if ps.len() <= BUF {
                    let mut buf = [UNBOUND; BUF];
                    for (i, q) in ps.iter().enumerate() {
                        buf[i] = self.build(q, b);
                    }
                    self.terms.intern(*f, &buf[..ps.len()])
                } else {
                    let v: Vec<TermId> = ps.iter().map(|q| self.build(q, b)).collect();
                    self.terms.intern(*f, &v)
                }
            }
        }
    }

    /// Matches pattern `p` (binding into `pb`) against pattern `q`, fully bound under `qb`.
    /// Unlike [`Db::unify`] this works when `q` denotes a term that was never built: such a
    /// term is matched structurally.
    fn unify_into(&self, p: &Pat, pb: &mut [TermId], q: &Pat, qb: &[TermId]) -> bool {
        if let Some(t) = self.ground(q, qb) {
            return self.unify(p, t, pb);
        }
        match (p, q) {
            (Pat::Func(f, ps), Pat::Func(g, qs)) => {
                f == g && ps.len() == qs.len() && ps.iter().zip(qs.iter()).all(|(x, y)| self.unify_into(x, pb, y, qb))
            }
            // A variable would have to take a term that does not exist; nothing stored can
            // equal such a term either.
            _ => false,
        }
    }

    /// [`Db::unify_into`] within one frame: `q`'s variables are bound, `p`'s may not be.
    fn unify_same_frame(&self, p: &Pat, q: &Pat, b: &mut [TermId]) -> bool {
        if let Some(t) = self.ground(q, b) {
            return self.unify(p, t, b);
        }
        match (p, q) {
            (Pat::Func(f, ps), Pat::Func(g, qs)) => {
                f == g && ps.len() == qs.len() && ps.iter().zip(qs.iter()).all(|(x, y)| self.unify_same_frame(x, y, b))
            }
            _ => false,
        }
    }

    /// Proves the tuple `args` (bound under `b`) of an on-demand relation with its check
    /// rules, top-down.
    pub fn check(&self, rel: usize, args: &[Pat], b: &[TermId]) -> bool {
        let Some(rules) = self.check_rules.get(rel) else { return false };
        let mut none = Vec::new();
        for rule in rules.iter() {
            let mut frame = [UNBOUND; 64];
            let mut big;
            let caller = b;
            let frame: &mut [TermId] = if rule.nvars <= 64 {
                &mut frame[..rule.nvars]
            } else {
                big = vec![UNBOUND; rule.nvars];
                &mut big
            };
            if rule.head.iter().zip(args).all(|(p, q)| self.unify_into(p, frame, q, caller))
                && self.join(rule, 0, frame, &mut none)
            {
                return true;
            }
        }
        false
    }

    /// Finds the tuple a fully bound argument list denotes.
    fn find(&self, r: &Relation, args: &[Pat], b: &[TermId]) -> Option<u32> {
        if args.len() <= BUF {
            let mut buf = [UNBOUND; BUF];
            for (i, p) in args.iter().enumerate() {
                buf[i] = self.ground(p, b)?;
            }
            r.find(&buf[..args.len()])
        } else {
            let v: Option<Vec<TermId>> = args.iter().map(|p| self.ground(p, b)).collect();
            r.find(&v?)
        }
    }

    /// The candidate tuple indices for a literal, in `[lo, hi)`.
    #[inline]
    fn candidates<'r>(
        &self,
        r: &'r Relation,
        args: &[Pat],
        access: &Access,
        lo: u32,
        hi: u32,
        b: &[TermId],
    ) -> Cands<'r> {
        match access {
            Access::Scan => Cands::Range(lo..hi),
            Access::Member => Cands::One(self.find(r, args, b).filter(|&i| i >= lo && i < hi)),
            Access::Exact { slot, pos } => match self.ground(&args[*pos], b) {
                Some(key) => Cands::Chain(r.chain(*slot, key.0 as u64, lo, hi)),
                None => Cands::One(None),
            },
            Access::Functor { slot, key } => Cands::Chain(r.chain(*slot, *key, lo, hi)),
        }
    }

    /// Evaluates the body of `rule` from literal `k` on; pushes the head variables' values of
    /// each solution to `out`. Returns true when a solution was found and the literals from
    /// `rule.exists_from` on need no other (for a ground head: it has been proven).
    pub fn join(&self, rule: &CRule, k: usize, b: &mut [TermId], out: &mut Vec<TermId>) -> bool {
        let Some(lit) = rule.body.get(k) else {
            out.extend(rule.head_vars.iter().map(|&v| b[v as usize]));
            if out.len() > MAX_SOLUTIONS {
                self.overflow.set(true);
                return true;
            }
            return rule.head_vars.is_empty();
        };
        match lit {
            Lit::Pos { rel, args, access, fresh, dead } => {
                let r = &self.rels[*rel];
                let lo = if rule.delta == Some(k) { r.delta_lo } else { 0 };
                for i in self.candidates(r, args, access, lo, r.limit, b) {
                    let t = r.tuple(i);
                    let ok = args.iter().zip(t).all(|(p, &v)| self.unify(p, v, b));
                    let stop = ok && self.join(rule, k + 1, b, out);
                    for &v in fresh.iter() {
                        b[v as usize] = UNBOUND;
                    }
                    if stop && (k >= rule.exists_from || self.overflow.get()) {
                        return true;
                    }
                    if ok && *dead {
                        return false;
                    }
                }
                false
            }
            Lit::Neg { rel, args, access, locals } => {
                let r = &self.rels[*rel];
                let exists = if locals.is_empty() {
                    self.find(r, args, b).is_some_and(|i| i < r.limit)
                } else {
                    let mut found = false;
                    for i in self.candidates(r, args, access, 0, r.limit, b) {
                        let t = r.tuple(i);
                        let ok = args.iter().zip(t).all(|(p, &v)| self.unify(p, v, b));
                        for &v in locals.iter() {
                            b[v as usize] = UNBOUND;
                        }
                        if ok {
                            found = true;
                            break;
                        }
                    }
                    found
                };
                !exists && self.join(rule, k + 1, b, out)
            }
            Lit::Distinct(p, q) => !self.same(p, q, b) && self.join(rule, k + 1, b, out),
            Lit::Check { rel, args, neg } => self.check(*rel, args, b) != *neg && self.join(rule, k + 1, b, out),
            Lit::Same(p, q, fresh) => {
                let ok = if fresh.is_empty() { self.same(p, q, b) } else { self.unify_same_frame(p, q, b) };
                let stop = ok && self.join(rule, k + 1, b, out);
                for &v in fresh.iter() {
                    b[v as usize] = UNBOUND;
                }
                stop
            }
        }
    }
}

/// Candidate tuple indices of one literal.
pub enum Cands<'r> {
    Range(std::ops::Range<u32>),
    Chain(super::relation::Chain<'r>),
    One(Option<u32>),
}

impl Iterator for Cands<'_> {
    type Item = u32;
    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            Cands::Range(r) => r.next(),
            Cands::Chain(c) => c.next(),
            Cands::One(o) => o.take(),
        }
    }
}
