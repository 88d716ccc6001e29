//! Compound moves chosen part by part: the whole game searched in one tree, where a role whose
//! move is a compound of per-factor parts (Cox et al.'s factors, [`crate::factor`]: a move
//! `(drop c1 c2)` that drops on two boards at once) chooses it one factor's part per tree
//! level.
//!
//! [`SplitMachine`] is the game's machine with each joint move cut into one *sub-step* per
//! factor split along ([`SplitMachine::steps`]). At sub-step `k` a role's moves are the
//! classes, in factor `k`, of its legal inputs that agree with the parts it chose at the
//! sub-steps before (one representative input per class, as
//! [`super::factored::FactorMachine`] has them); the last sub-step's representative is a
//! legal input whose parts are all the ones chosen, and the game moves on with it. Terminal
//! and goals are the game's own, asked of real states only (a state part way through a move
//! is never terminal). So the game is searched exactly, as one game: what couples the factors
//! (a race to the first line on either board, a goal that adds boards, legality) is in the
//! tree as the game has it. Only the choice is re-shaped: a role with `a` parts in one factor
//! and `b` in the other chooses among `a` then `b` children, not `a·b`, and the statistics of
//! a part are shared by every completion of it, which is what a tree per factor
//! ([`super::factored`]) gains without freezing one board while it searches the other.
//!
//! Rollouts run on the game's own machine: a state part way through a move is completed at
//! random (its parts kept), then the inner machine's playout runs (batched, with a policy, as
//! the searcher asks). [`SplitSearch`] wraps any searcher over the split machine (the agent's
//! own: threads, meta-gaming's playouts) into a searcher of the game: it searches the first
//! sub-step for most of the time and each later one in what is left, on the same tree.

use super::factored::ClassStamps;
use super::{Choice, Limit, Search};
use crate::factor::{Analysis, MoveShape, Verdict};
use crate::machine::{PlayoutBuffers, PlayoutPolicy, PlayoutResult, StateMachine};
use crate::propnet::{PnState, PropnetMachine};
use rand::Rng;
use std::sync::Arc;
use std::time::Instant;

/// Not chosen yet (a part of a state at sub-step 0 or past the sub-step).
const NONE: u32 = u32::MAX;

/// The share of a move's time spent on its first part; the later parts share the rest.
const FIRST_SHARE: f64 = 0.8;

/// A playout policy's choice among the inputs that agree: `(role, inputs, rng)` to an index.
type Chooser<'a, R> = &'a mut dyn FnMut(usize, &[u32], &mut R) -> usize;

/// A state of the [`SplitMachine`]: the game's state and the parts chosen so far of the joint
/// move being made.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SplitState {
    /// The game's state.
    pub pn: PnState,
    /// The sub-step: how many parts of the joint move are chosen (0: none, a real state).
    k: u32,
    /// Per role, per sub-step: the class chosen (`NONE` past `k`); `roles × steps`.
    parts: Vec<u32>,
}

/// The game's propnet machine with each joint move cut into one sub-step per factor (see the
/// module docs).
#[derive(Debug)]
pub struct SplitMachine {
    inner: PropnetMachine,
    /// Per sub-step: each input's class in that sub-step's factor.
    steps: Arc<Vec<Vec<u32>>>,
    /// The factors split along, in sub-step order.
    factors: Arc<Vec<usize>>,
    roles: usize,
    tmp: Vec<u32>,
    cands: Vec<u32>,
    joint: Vec<u32>,
    seen: ClassStamps,
    scratch: PnState,
    starts: Vec<PnState>,
    /// A state to complete a batch's starts part way through a move in.
    pending: Option<SplitState>,
    bufs: Option<PlayoutBuffers<PropnetMachine>>,
}

impl Clone for SplitMachine {
    fn clone(&self) -> SplitMachine {
        SplitMachine {
            inner: self.inner.clone(),
            steps: self.steps.clone(),
            factors: self.factors.clone(),
            roles: self.roles,
            tmp: Vec::new(),
            cands: Vec::new(),
            joint: Vec::new(),
            seen: self.seen.clone(),
            scratch: PnState::default(),
            starts: Vec::new(),
            pending: None,
            bufs: None,
        }
    }
}

impl SplitMachine {
    /// The split machine of a game that factors (`a`) and in which some role's moves are
    /// compounds of per-factor parts; the sub-steps are the factors in which some role has two
    /// classes of moves or more. `None` where the game does not factor, no move is a
    /// compound, or fewer than two factors offer a choice (there is nothing to split).
    pub fn new(inner: PropnetMachine, a: &Analysis) -> Option<SplitMachine> {
        if a.verdict != Verdict::Factorable
            || !a.shapes.iter().any(|s| matches!(s, MoveShape::Compound | MoveShape::Mixed))
        {
            return None;
        }
        let factors: Vec<usize> =
            (0..a.factors.len()).filter(|&k| a.factors[k].classes.iter().any(|c| c.len() >= 2)).collect();
        if factors.len() < 2 {
            return None;
        }
        let steps: Vec<Vec<u32>> = factors.iter().map(|&k| a.factors[k].class_of.clone()).collect();
        let classes = steps.iter().flatten().copied().max().map_or(0, |m| m as usize + 1);
        let roles = inner.roles().len();
        Some(SplitMachine {
            inner,
            steps: Arc::new(steps),
            factors: Arc::new(factors),
            roles,
            tmp: Vec::new(),
            cands: Vec::new(),
            joint: Vec::new(),
            seen: ClassStamps::new(classes),
            scratch: PnState::default(),
            starts: Vec::new(),
            pending: None,
            bufs: None,
        })
    }

    /// The factors split along (indices into the analysis' factors), one per sub-step.
    pub fn steps(&self) -> &[usize] {
        &self.factors
    }

    /// The split state of a real state of the game (no part chosen).
    pub fn root(&self, pn: &PnState) -> SplitState {
        SplitState { pn: pn.clone(), k: 0, parts: vec![NONE; self.roles * self.steps.len()] }
    }

    /// Whether `input` agrees with the parts `role` chose in `state`.
    fn agrees(steps: &[Vec<u32>], state: &SplitState, role: usize, input: u32) -> bool {
        let n = steps.len();
        (0..state.k as usize).all(|j| steps[j][input as usize] == state.parts[role * n + j])
    }

    /// Completes the joint move part way through in `state` at random (each role's parts
    /// kept; with `policy`, its choice among the inputs that agree), reports it to `seen` and
    /// plays it: `state` becomes the real state after it.
    fn complete<R: Rng>(
        &mut self,
        state: &mut SplitState,
        rng: &mut R,
        mut policy: Option<Chooser<'_, R>>,
        seen: &mut dyn FnMut(&[u32]),
    ) {
        self.joint.clear();
        for r in 0..self.roles {
            self.inner.legal_moves(&state.pn, r, &mut self.tmp);
            self.cands.clear();
            let steps = &self.steps;
            self.cands.extend(self.tmp.iter().copied().filter(|&m| Self::agrees(steps, state, r, m)));
            // Nothing agrees only if the game gave the role no legal move: play on as the
            // game's machine would with what it has.
            let pick = match (self.cands.len(), policy.as_mut()) {
                (0, _) => self.tmp.first().copied().unwrap_or(0),
                (1, _) => self.cands[0],
                (n, Some(p)) => self.cands[p(r, &self.cands, rng).min(n - 1)],
                (n, None) => self.cands[rng.gen_range(0..n)],
            };
            self.joint.push(pick);
        }
        seen(&self.joint);
        self.inner.next_state(&state.pn, &self.joint, &mut self.scratch);
        std::mem::swap(&mut state.pn, &mut self.scratch);
        state.k = 0;
        state.parts.iter_mut().for_each(|p| *p = NONE);
    }
}

impl StateMachine for SplitMachine {
    type State = SplitState;
    type Move = u32;

    fn roles(&self) -> &[String] {
        self.inner.roles()
    }
    fn initial_state(&mut self) -> SplitState {
        let pn = self.inner.initial_state();
        self.root(&pn)
    }
    /// The hint reaches the game's machine as the game's state.
    fn anchor(&mut self, state: &SplitState) {
        self.inner.anchor(&state.pn);
    }
    fn legal_moves(&mut self, state: &SplitState, role: usize, out: &mut Vec<u32>) {
        self.inner.legal_moves(&state.pn, role, &mut self.tmp);
        out.clear();
        self.seen.next_round();
        let k = state.k as usize;
        for &m in &self.tmp {
            if Self::agrees(&self.steps, state, role, m) && self.seen.first(self.steps[k][m as usize] as usize) {
                out.push(m);
            }
        }
    }
    fn next_state(&mut self, state: &SplitState, joint: &[u32], out: &mut SplitState) {
        let (k, n) = (state.k as usize, self.steps.len());
        out.parts.clone_from(&state.parts);
        if k + 1 < n {
            out.pn.clone_from(&state.pn);
            out.k = state.k + 1;
            for (r, &m) in joint.iter().enumerate() {
                out.parts[r * n + k] = self.steps[k][m as usize];
            }
        } else {
            // The last part: each role's representative agrees with every part it chose, so
            // it is the role's input.
            self.inner.next_state(&state.pn, joint, &mut out.pn);
            out.k = 0;
            out.parts.iter_mut().for_each(|p| *p = NONE);
        }
    }
    fn is_terminal(&mut self, state: &SplitState) -> bool {
        state.k == 0 && self.inner.is_terminal(&state.pn)
    }
    fn goal(&mut self, state: &SplitState, role: usize) -> crate::machine::Goal {
        self.inner.goal(&state.pn, role)
    }
    fn move_text(&self, m: u32) -> String {
        self.inner.move_text(m)
    }
    fn overflowed(&self) -> bool {
        self.inner.overflowed()
    }
    fn state_facts(&self, state: &SplitState) -> Vec<String> {
        self.inner.state_facts(&state.pn)
    }
    fn move_number(m: u32) -> Option<usize> {
        Some(m as usize)
    }
    fn move_number_bound(&self) -> usize {
        self.inner.move_number_bound()
    }

    fn playout_seen<R: Rng, F: FnMut(&[u32])>(
        &mut self,
        state: &mut SplitState,
        rng: &mut R,
        max_depth: usize,
        _bufs: &mut PlayoutBuffers<Self>,
        mut seen: F,
    ) -> PlayoutResult {
        let mut extra = 0;
        if state.k > 0 {
            self.complete(state, rng, None, &mut seen);
            extra = 1;
        }
        let mut bufs = self.bufs.take().unwrap_or_else(|| PlayoutBuffers::new(&mut self.inner));
        let mut r = self.inner.playout_seen(&mut state.pn, rng, max_depth.saturating_sub(extra), &mut bufs, seen);
        self.bufs = Some(bufs);
        r.depth += extra;
        r
    }

    fn playout_policy<R: Rng, P: PlayoutPolicy<u32>>(
        &mut self,
        state: &mut SplitState,
        rng: &mut R,
        max_depth: usize,
        _bufs: &mut PlayoutBuffers<Self>,
        policy: &mut P,
    ) -> PlayoutResult {
        let mut extra = 0;
        if state.k > 0 {
            {
                let mut choose = |r: usize, legal: &[u32], rng: &mut R| policy.choose(r, legal, rng);
                self.complete(state, rng, Some(&mut choose), &mut |_| {});
            }
            // `complete` leaves the joint move it played in `self.joint`.
            policy.seen(&self.joint);
            extra = 1;
        }
        let mut bufs = self.bufs.take().unwrap_or_else(|| PlayoutBuffers::new(&mut self.inner));
        let mut r = self.inner.playout_policy(&mut state.pn, rng, max_depth.saturating_sub(extra), &mut bufs, policy);
        self.bufs = Some(bufs);
        r.depth += extra;
        r
    }

    fn batch_lanes(&self) -> usize {
        self.inner.batch_lanes()
    }

    fn batch_playouts<R: Rng>(
        &mut self,
        starts: &[SplitState],
        max_depth: usize,
        rng: &mut R,
        sums: &mut [f64],
        until: Option<Instant>,
    ) -> Option<usize> {
        let mut pns = std::mem::take(&mut self.starts);
        pns.resize_with(starts.len(), PnState::default);
        let mut own = self.pending.take();
        for (pn, s) in pns.iter_mut().zip(starts) {
            if s.k > 0 {
                let st = own.get_or_insert_with(|| s.clone());
                st.clone_from(s);
                self.complete(st, rng, None, &mut |_| {});
                pn.clone_from(&st.pn);
            } else {
                pn.clone_from(&s.pn);
            }
        }
        self.pending = own;
        let r = self.inner.batch_playouts(&pns, max_depth, rng, sums, until);
        self.starts = pns;
        r
    }
}

/// A searcher of the game that searches its [`SplitMachine`] with another searcher (see the
/// module docs): the move is chosen one part per sub-step on the same tree.
pub struct SplitSearch {
    machine: SplitMachine,
    inner: Box<dyn Search<SplitMachine>>,
    legal: Vec<u32>,
    next: SplitState,
}

impl SplitSearch {
    pub fn new(machine: SplitMachine, inner: Box<dyn Search<SplitMachine>>) -> SplitSearch {
        let next = machine.root(&PnState::default());
        SplitSearch { machine, inner, legal: Vec::new(), next }
    }
}

impl Search<PropnetMachine> for SplitSearch {
    fn name(&self) -> &'static str {
        "split-mcts"
    }

    fn select(
        &mut self,
        machine: &mut PropnetMachine,
        state: &PnState,
        role: usize,
        limit: Limit<'_>,
    ) -> Option<Choice<u32>> {
        let mut s = self.machine.root(state);
        machine.legal_moves(state, role, &mut self.legal);
        if self.legal.len() == 1 {
            // Nothing to choose: the tree grows for the turns to come.
            let mv = self.legal[0];
            let c = self.inner.select(&mut self.machine, &s, role, limit);
            let _ = self.inner.take_traps();
            return Some(Choice {
                mv,
                value: c.as_ref().and_then(|c| c.value),
                iterations: c.map_or(0, |c| c.iterations),
                proven: false,
            });
        }
        let n = self.machine.steps.len();
        let start = Instant::now();
        let first_end = start + limit.deadline.saturating_duration_since(start).mul_f64(FIRST_SHARE);
        let mut iterations = 0;
        for k in 0..n {
            let now = Instant::now();
            let end =
                if k == 0 { first_end } else { now + limit.deadline.saturating_duration_since(now) / (n - k) as u32 };
            let Some(c) = self.inner.select(&mut self.machine, &s, role, Limit { deadline: end, ..limit }) else {
                // The inner search gave no part (it could not search): the first input that
                // agrees with the parts chosen.
                let steps = self.machine.steps.clone();
                machine.legal_moves(state, role, &mut self.legal);
                let mv = self.legal.iter().copied().find(|&m| SplitMachine::agrees(&steps, &s, role, m))?;
                return Some(Choice { mv, value: None, iterations, proven: false });
            };
            iterations += c.iterations;
            if k + 1 == n {
                // The traps the inner search reports are about parts of moves at sub-steps:
                // not moves of the game, so not reported.
                let _ = self.inner.take_traps();
                return Some(Choice { iterations, ..c });
            }
            // The other roles' parts: their most visited at this sub-step (one, where they
            // wait), else their first.
            let mut joint = Vec::with_capacity(self.machine.roles);
            for r in 0..self.machine.roles {
                if r == role {
                    joint.push(c.mv);
                    continue;
                }
                let best = self.inner.root_moves(r).into_iter().max_by_key(|x| x.1).map(|x| x.0);
                let mv = match best {
                    Some(mv) => mv,
                    None => {
                        self.machine.legal_moves(&s, r, &mut self.legal);
                        *self.legal.first()?
                    }
                };
                joint.push(mv);
            }
            self.machine.next_state(&s, &joint, &mut self.next);
            std::mem::swap(&mut s, &mut self.next);
        }
        None
    }

    /// The split tree holds one factor's parts per level: its root statistics are parts of
    /// moves, not moves of the game, so none are shown.
    fn root_moves(&self, _role: usize) -> Vec<(u32, u64, f64)> {
        Vec::new()
    }

    /// The factors the moves are split along.
    fn factors(&self) -> Option<usize> {
        Some(self.machine.steps.len())
    }
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
