//! Join evaluation over the relation database. Materialized relations are read-only during a
//! join (solutions are collected as bindings of the head's variables and inserted
//! afterwards); calls to relations evaluated top-down fill their tables as they go (see
//! `table.rs`).

use super::compile::{Access, CRule, Lit, Pat};
use super::relation::{Relation, NIL};
use super::table::{Mode, Table, TopDown};
use super::terms::{TermId, TermStore, UNBOUND};
use std::sync::Arc;
use std::time::Instant;

/// All relations of a game plus the terms they hold.
#[derive(Clone, Debug)]
pub struct Db {
    pub terms: TermStore,
    pub rels: Vec<Relation>,
    /// Relations evaluated top-down: one entry per (relation, bound arguments) pair.
    pub modes: Arc<Vec<Mode>>,
    /// The memo tables of the modes, by mode.
    pub tables: Vec<Table>,
    pub(super) td: TopDown,
    /// Set when a join produced more than [`MAX_SOLUTIONS`] values, or a table more than
    /// [`super::MAX_TUPLES`] answers, and evaluation was cut short.
    pub overflow: bool,
    /// Set when evaluation ran past `deadline` and was cut short.
    pub timed_out: bool,
    pub deadline: Option<Instant>,
    /// Join steps since the deadline was last looked at.
    steps: u32,
}

/// Most head-variable values one join may collect before it gives up (memory guard).
pub const MAX_SOLUTIONS: usize = 32 << 20;

/// Small fixed buffer for argument lists, so the hot path does not allocate.
pub(super) const BUF: usize = 24;

/// Join steps between two looks at the clock.
const STEPS_PER_CLOCK: u32 = 4096;

/// Where a literal's candidate tuples come from; holds no borrow, so the join can go on
/// mutating tables while it walks a relation.
enum Cursor {
    Range(u32, u32),
    Chain { slot: usize, cur: u32, lo: u32, hi: u32 },
    One(Option<u32>),
}

impl Cursor {
    #[inline]
    fn next(&mut self, r: &Relation) -> Option<u32> {
        match self {
            Cursor::Range(lo, hi) => {
                if lo < hi {
                    *lo += 1;
                    Some(*lo - 1)
                } else {
                    None
                }
            }
            Cursor::Chain { slot, cur, lo, hi } => {
                while *cur != NIL {
                    let c = *cur;
                    if c < *lo {
                        *cur = NIL;
                        return None;
                    }
                    *cur = r.chain_next(*slot, c);
                    if c < *hi {
                        return Some(c);
                    }
                }
                None
            }
            Cursor::One(o) => o.take(),
        }
    }
}

impl Db {
    pub fn new(terms: TermStore, rels: Vec<Relation>, modes: Vec<Mode>) -> Db {
        let tables = modes.iter().map(Table::new).collect();
        Db {
            terms,
            rels,
            modes: Arc::new(modes),
            tables,
            td: TopDown::default(),
            overflow: false,
            timed_out: false,
            deadline: None,
            steps: 0,
        }
    }

    /// Whether evaluation has been cut short (memory guard or deadline).
    #[inline]
    pub fn interrupted(&self) -> bool {
        self.overflow || self.timed_out
    }

    /// Join steps counted so far (wrapping): how much work the joins did.
    #[cfg(test)]
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Counts one join step; every [`STEPS_PER_CLOCK`] steps, looks at the deadline. True
    /// when evaluation must stop.
    #[inline]
    pub fn tick(&mut self) -> bool {
        if self.interrupted() {
            return true;
        }
        self.steps = self.steps.wrapping_add(1);
        if self.steps % STEPS_PER_CLOCK == 0 {
            if let Some(d) = self.deadline {
                if Instant::now() >= d {
                    self.timed_out = true;
                    return true;
                }
            }
        }
        false
    }

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

    /// [`Db::unify`] where `q`'s variables are bound but the term it denotes may never have
    /// been built: such a term is matched structurally.
    fn unify_same_frame(&self, p: &Pat, q: &Pat, b: &mut [TermId]) -> bool {
        if let Some(t) = self.ground(q, b) {
            return self.unify(p, t, b);
        }
        match (p, q) {
            (Pat::Func(f, ps), Pat::Func(g, qs)) => {
                f == g && ps.len() == qs.len() && ps.iter().zip(qs.iter()).all(|(x, y)| self.unify_same_frame(x, y, b))
            }
            // A variable would have to take a term that does not exist; nothing stored can
            // equal such a term either.
            _ => false,
        }
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

    /// The candidate tuple indices for a literal, in `[lo, hi)`. (A `Multi` column inside a
    /// pattern always lies on it: the compiler chose it from the pattern.)
    #[inline]
    fn cursor(&self, r: &Relation, args: &[Pat], access: &Access, lo: u32, hi: u32, b: &[TermId]) -> Cursor {
        match access {
            Access::Scan => Cursor::Range(lo, hi),
            Access::Member => Cursor::One(self.find(r, args, b).filter(|&i| i >= lo && i < hi)),
            Access::Exact { slot, pos } => match self.ground(&args[*pos], b) {
                Some(key) => Cursor::Chain { slot: *slot, cur: r.chain_head(*slot, key.0 as u64), lo, hi },
                None => Cursor::One(None),
            },
            Access::Functor { slot, key } => Cursor::Chain { slot: *slot, cur: r.chain_head(*slot, *key), lo, hi },
            Access::Multi { slot, cols } => {
                let mut vals = [TermId(0); BUF];
                for (k, &c) in cols.iter().enumerate() {
                    match pat_at(args, c).and_then(|p| self.ground(p, b)) {
                        Some(v) => vals[k] = v,
                        None => return Cursor::One(None),
                    }
                }
                let key = super::relation::multi_key(vals[..cols.len()].iter().copied());
                Cursor::Chain { slot: *slot, cur: r.chain_head(*slot, key), lo, hi }
            }
        }
    }

    /// Evaluates the body of `rule` from literal `k` on; pushes the head variables' values of
    /// each solution to `out`. Returns true when a solution was found and the literals from
    /// `rule.exists_from` on need no other (for a ground head: it has been proven), or when
    /// evaluation was interrupted.
    /// After literal `k` matched one candidate (`ok`) or not: joins the rest of the body,
    /// unbinds the literal's fresh variables, and says whether the join must return now
    /// (`Some(result)`: the head is proven, a dead literal needs no other candidate, or
    /// evaluation is interrupted) or go on to the next candidate (`None`).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn rest(
        &mut self,
        rule: &CRule,
        k: usize,
        b: &mut [TermId],
        out: &mut Vec<TermId>,
        ok: bool,
        fresh: &[u16],
        dead: bool,
    ) -> Option<bool> {
        let stop = ok && self.join(rule, k + 1, b, out);
        for &v in fresh {
            b[v as usize] = UNBOUND;
        }
        if stop && (k >= rule.exists_from || self.interrupted()) {
            return Some(true);
        }
        if ok && dead {
            return Some(false);
        }
        self.tick().then_some(true)
    }

    /// Whether a positive literal of `rule` ranges over no tuple now (its relation empty, or
    /// the delta it reads empty), so that the rule has no instance: a join that orders such
    /// a literal last would otherwise enumerate every match of the literals before it.
    pub fn has_empty_literal(&self, rule: &CRule) -> bool {
        rule.body.iter().enumerate().any(|(k, lit)| match lit {
            Lit::Pos { rel, .. } => {
                let r = &self.rels[*rel];
                r.limit == if rule.delta == Some(k) { r.delta_lo } else { 0 }
            }
            _ => false,
        })
    }

    pub fn join(&mut self, rule: &CRule, k: usize, b: &mut [TermId], out: &mut Vec<TermId>) -> bool {
        let Some(lit) = rule.body.get(k) else {
            out.extend(rule.head_vars.iter().map(|&v| b[v as usize]));
            if out.len() > MAX_SOLUTIONS {
                self.overflow = true;
                return true;
            }
            return rule.head_vars.is_empty();
        };
        match lit {
            Lit::Pos { rel, args, access, fresh, dead } => {
                let r = &self.rels[*rel];
                let lo = if rule.delta == Some(k) { r.delta_lo } else { 0 };
                let mut cur = self.cursor(r, args, access, lo, r.limit, b);
                loop {
                    let r = &self.rels[*rel];
                    let Some(i) = cur.next(r) else { break };
                    let ok = args.iter().zip(r.tuple(i)).all(|(p, &v)| self.unify(p, v, b));
                    if let Some(done) = self.rest(rule, k, b, out, ok, fresh, *dead) {
                        return done;
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
                    let mut cur = self.cursor(r, args, access, 0, r.limit, b);
                    while let Some(i) = cur.next(r) {
                        let ok = args.iter().zip(r.tuple(i)).all(|(p, &v)| self.unify(p, v, b));
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
            Lit::Same(p, q, fresh) => {
                let ok = if fresh.is_empty() { self.same(p, q, b) } else { self.unify_same_frame(p, q, b) };
                let stop = ok && self.join(rule, k + 1, b, out);
                for &v in fresh.iter() {
                    b[v as usize] = UNBOUND;
                }
                stop
            }
            Lit::Call { args, mode, fresh, neg, dead, .. } => {
                let Some(sg) = self.call(*mode, args, b) else { return true };
                let modes = Arc::clone(&self.modes);
                let free = &modes[*mode].free;
                let mut cur = self.tables[*mode].first_answer(sg);
                while cur != NIL {
                    let answers = &self.tables[*mode].answers;
                    let next = answers.chain_next(0, cur);
                    let t = &answers.tuple(cur)[1..];
                    let ok = free.iter().zip(t).all(|(&pos, &v)| self.unify(&args[pos], v, b));
                    if *neg {
                        for &v in fresh.iter() {
                            b[v as usize] = UNBOUND;
                        }
                        if ok {
                            return false;
                        }
                    } else if let Some(done) = self.rest(rule, k, b, out, ok, fresh, *dead) {
                        return done;
                    }
                    cur = next;
                }
                *neg && self.join(rule, k + 1, b, out)
            }
        }
    }
}

/// The subpattern of `args` at column `c` (see [`super::relation::Col`]).
fn pat_at(args: &[Pat], c: super::relation::Col) -> Option<&Pat> {
    let mut p = args.get((c & 0xff) as usize)?;
    let mut rest = c >> 8;
    while rest != 0 {
        let Pat::Func(_, ps) = p else { return None };
        p = ps.get((rest & 0xff) as usize - 1)?;
        rest >>= 8;
    }
    Some(p)
}
