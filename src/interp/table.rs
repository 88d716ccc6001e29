//! Top-down evaluation with tabling, for relations that are cheaper to answer for the
//! arguments their callers bind than to list: recursions with accumulators or lists
//! (`count_loop`, hex's `connection`), large joins read for a few keys (mummy maze's
//! `movetoward`), tests such as chess's `threatened_with_capture`.
//!
//! A *mode* is a relation with a set of bound argument positions; its rules are compiled
//! with the head's bound arguments bound on entry. A *subgoal* is a mode with values for the
//! bound arguments. Each subgoal is evaluated once and its answers (the values of the free
//! arguments) kept in the mode's table until the state (or joint move) they depend on
//! changes.
//!
//! Recursion among subgoals is handled by iteration at the leader: a subgoal that reads the
//! answers of a subgoal still being evaluated (lower on the call stack) is incomplete; the
//! lowest subgoal so read, the leader, re-runs its rules until no answer is added anywhere,
//! then marks itself and every subgoal incomplete since it started complete. Stratification
//! guarantees that negated calls only ever meet complete subgoals.

use super::compile::{CRule, Pat, RelId};
use super::eval::{Db, BUF};
use super::relation::{Relation, NIL};
use super::terms::{TermId, UNBOUND};
use super::MAX_TUPLES;
use std::sync::Arc;

/// A relation evaluated top-down with some arguments bound.
#[derive(Clone, Debug)]
pub struct Mode {
    pub rel: RelId,
    /// Which argument positions the caller binds.
    pub bound: Box<[bool]>,
    /// The other positions, in order: the answer columns.
    pub free: Box<[usize]>,
    /// The relation's rules compiled with the bound head arguments bound.
    pub rules: Vec<CRule>,
    /// Whether the relation depends on the state or the joint move (tables are cleared when
    /// they change).
    pub on_state: bool,
    pub on_move: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Status {
    /// Its rules are running (it is on the call stack).
    Active,
    /// Evaluated, but it read an active subgoal: its answers may still grow.
    Incomplete,
    Complete,
}

/// The memo table of one mode.
#[derive(Clone, Debug)]
pub struct Table {
    /// Bound-argument values of each subgoal; a subgoal's id is its tuple index here.
    calls: Relation,
    /// Answers: (subgoal id, free-argument values...), indexed by subgoal id.
    pub answers: Relation,
    status: Vec<Status>,
    /// Call-stack depth of active subgoals.
    depth: Vec<u32>,
    /// When each subgoal was last evaluated (a count of evaluations started).
    stamp: Vec<u64>,
}

impl Table {
    pub fn new(mode: &Mode) -> Table {
        let mut answers = Relation::new(1 + mode.free.len());
        answers.add_index(0, super::relation::IndexKind::Exact);
        Table {
            calls: Relation::new(mode.bound.iter().filter(|&&b| b).count()),
            answers,
            status: Vec::new(),
            depth: Vec::new(),
            stamp: Vec::new(),
        }
    }

    pub fn clear(&mut self) {
        self.calls.clear();
        self.answers.clear();
        self.status.clear();
        self.depth.clear();
        self.stamp.clear();
    }

    /// Number of answers held.
    pub fn len(&self) -> u32 {
        self.answers.len
    }

    /// The newest answer of a subgoal ([`NIL`] if none); older ones follow its chain.
    #[inline]
    pub fn first_answer(&self, sg: u32) -> u32 {
        self.answers.chain_head(0, sg as u64)
    }
}

/// State of the top-down evaluation in progress.
#[derive(Clone, Debug, Default)]
pub(super) struct TopDown {
    /// Depth of the call stack of active subgoals.
    depth: u32,
    /// Lowest depth of an active subgoal read since the current subgoal started.
    low: u32,
    /// Answers added so far (to notice that a pass changed something).
    added: u64,
    /// Evaluations started so far.
    evaluations: u64,
    /// Incomplete subgoals (mode, id) waiting for their leader to complete.
    incomplete: Vec<(usize, u32)>,
}

/// Deepest nesting of top-down calls before evaluation gives up (sets the overflow flag).
pub const MAX_CALL_DEPTH: u32 = 1000;

impl Db {
    /// Calls `mode` with the arguments `args` under the bindings `b` (its bound positions are
    /// bound): finds or evaluates the subgoal and returns its id, or `None` when evaluation
    /// was interrupted.
    pub(super) fn call(&mut self, mode: usize, args: &[Pat], b: &[TermId]) -> Option<u32> {
        let modes = Arc::clone(&self.modes);
        let m = &modes[mode];
        let mut small = [UNBOUND; BUF];
        let mut big = Vec::new();
        let key: &mut [TermId] = if args.len() <= BUF {
            &mut small[..]
        } else {
            big.resize(args.len(), UNBOUND);
            &mut big[..]
        };
        let mut n = 0;
        for (p, _) in args.iter().zip(m.bound.iter()).filter(|(_, &bd)| bd) {
            key[n] = self.build(p, b);
            n += 1;
        }
        let key = &key[..n];
        let t = &mut self.tables[mode];
        let sg = match t.calls.find(key) {
            Some(sg) => match t.status[sg as usize] {
                Status::Complete => return Some(sg),
                Status::Active => {
                    self.td.low = self.td.low.min(t.depth[sg as usize]);
                    return Some(sg);
                }
                Status::Incomplete => sg,
            },
            None => {
                let sg = t.calls.len;
                t.calls.insert(key, &self.terms);
                t.status.push(Status::Incomplete);
                t.depth.push(0);
                t.stamp.push(0);
                sg
            }
        };
        // Each nested call takes a few stack frames; past this depth, stop (as the memory
        // guard does) rather than overflow the thread's stack.
        if self.td.depth >= MAX_CALL_DEPTH {
            self.overflow = true;
            return None;
        }
        self.evaluate(mode, m, sg, key);
        (!self.interrupted()).then_some(sg)
    }

    /// Runs the rules of subgoal `sg` (of mode `m`, bound values `key`) until its answers
    /// are complete, or until it turns out to depend on an active subgoal below it.
    fn evaluate(&mut self, mode: usize, m: &Mode, sg: u32, key: &[TermId]) {
        let d = self.td.depth;
        self.td.depth += 1;
        self.tables[mode].status[sg as usize] = Status::Active;
        self.tables[mode].depth[sg as usize] = d;
        self.td.evaluations += 1;
        self.tables[mode].stamp[sg as usize] = self.td.evaluations;
        let outer_low = self.td.low;
        let marker = self.td.incomplete.len();
        let mut frame = Vec::new();
        let mut out = Vec::new();
        let mut tuple = Vec::with_capacity(1 + m.free.len());
        let low = loop {
            self.td.low = u32::MAX;
            let added = self.td.added;
            let pass = self.td.evaluations;
            for rule in &m.rules {
                frame.clear();
                frame.resize(rule.nvars, UNBOUND);
                let mut j = 0;
                let mut ok = true;
                for (p, _) in rule.head.iter().zip(m.bound.iter()).filter(|(_, &bd)| bd) {
                    ok = ok && self.unify(p, key[j], &mut frame);
                    j += 1;
                }
                if !ok {
                    continue;
                }
                out.clear();
                let proved = self.join(rule, 0, &mut frame, &mut out);
                if self.interrupted() {
                    break;
                }
                let hv = rule.head_vars.len();
                let mut emit = |db: &mut Db, frame: &[TermId]| {
                    tuple.clear();
                    tuple.push(TermId(sg));
                    for &pos in m.free.iter() {
                        let t = db.build(&rule.head[pos], frame);
                        tuple.push(t);
                    }
                    let Db { tables, terms, td, .. } = db;
                    if tables[mode].answers.insert(&tuple, terms) {
                        td.added += 1;
                    }
                };
                if hv == 0 {
                    if proved {
                        emit(self, &frame);
                    }
                } else {
                    for chunk in out.chunks_exact(hv) {
                        for (&v, &val) in rule.head_vars.iter().zip(chunk) {
                            frame[v as usize] = val;
                        }
                        emit(self, &frame);
                    }
                }
                if self.tables[mode].answers.len > MAX_TUPLES {
                    self.overflow = true;
                    break;
                }
                // A fully bound call needs one proof.
                if m.free.is_empty() && self.tables[mode].first_answer(sg) != NIL {
                    break;
                }
            }
            let low = self.td.low;
            if self.interrupted() {
                break low;
            }
            if low < d {
                // Depends on an active subgoal further down: the leader will finish it.
                self.tables[mode].status[sg as usize] = Status::Incomplete;
                self.td.incomplete.push((mode, sg));
                break low;
            }
            if low == d && self.td.added > added {
                // Read its own (or its cycle's) incomplete answers and found new ones: again.
                continue;
            }
            // The subgoals of the cycle re-evaluated in this last pass are complete. Others
            // were not reached this time (a proof was found sooner): their answers are sound
            // but maybe not all there, and they will be evaluated again if called.
            for (m2, s2) in self.td.incomplete.drain(marker..) {
                let t = &mut self.tables[m2];
                if t.stamp[s2 as usize] > pass {
                    t.status[s2 as usize] = Status::Complete;
                }
            }
            self.tables[mode].status[sg as usize] = Status::Complete;
            break u32::MAX;
        };
        self.td.depth -= 1;
        self.td.low = outer_low.min(low);
    }

    /// Forgets the answers of the modes `which` selects (their inputs changed).
    pub fn clear_tables(&mut self, which: impl Fn(&Mode) -> bool) {
        let modes = Arc::clone(&self.modes);
        for (m, t) in modes.iter().zip(self.tables.iter_mut()) {
            if which(m) {
                t.clear();
            }
        }
    }

    /// Forgets all tables and any evaluation in progress (after an interruption).
    pub fn reset_tables(&mut self) {
        self.tables.iter_mut().for_each(Table::clear);
        self.td = TopDown::default();
    }
}
