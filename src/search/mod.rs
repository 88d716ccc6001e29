//! Move selection over the [`StateMachine`] trait: random, first legal, flat Monte Carlo and
//! MCTS. Generic over the engine, so every searcher runs on the propnet or the interpreter
//! (or a toy machine in tests). No tokio, no IO: a search is handed a state, a role and a
//! [`Limit`] (a deadline and an optional cancel flag), and returns a move.

mod classes;
pub mod factored;
pub mod mcts;
pub mod metagame;
pub mod nst;
pub mod split;
pub mod trap_check;
pub mod trap_memory;

pub use factored::{FactoredMcts, FactoredOptions};
pub use mcts::{Mcts, MctsConfig, ParallelMcts, Playout, Simultaneous, TreeParallelMcts};

use crate::machine::{PlayoutBuffers, StateMachine};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// When a search must stop: at its deadline, or as soon as its cancel flag is raised (the
/// server raises it on `stop`, `abort`, or when the next `play` arrives).
#[derive(Clone, Copy, Debug)]
pub struct Limit<'a> {
    pub deadline: Instant,
    pub cancel: Option<&'a AtomicBool>,
    /// The same flag as `cancel`, shared, where the caller holds it so: a slow engine's
    /// playouts keep a clone ([`PlayoutBuffers::stop`]) and stop within a few joint moves
    /// of its raising (a play that arrives while a ponder's playout of the interpreter runs
    /// for a second waited that second, and missed its reply deadline).
    pub shared: Option<&'a Arc<AtomicBool>>,
    /// Most iterations (MCTS) or playouts (flat Monte Carlo) to run, for searches measured by
    /// their budget rather than a clock (the trap-avoidance suite; deterministic tests).
    pub iterations: Option<u64>,
}

impl<'a> Limit<'a> {
    /// Searches until `deadline`, not cancellable.
    pub fn until(deadline: Instant) -> Limit<'static> {
        Limit { deadline, cancel: None, shared: None, iterations: None }
    }

    /// Searches until `deadline` or until `cancel` is raised.
    pub fn cancellable(deadline: Instant, cancel: &'a AtomicBool) -> Limit<'a> {
        Limit { deadline, cancel: Some(cancel), shared: None, iterations: None }
    }

    /// [`Limit::cancellable`] by a shared flag, which slow engines' playouts read too.
    pub fn cancellable_shared(deadline: Instant, cancel: &'a Arc<AtomicBool>) -> Limit<'a> {
        Limit { deadline, cancel: Some(&**cancel), shared: Some(cancel), iterations: None }
    }

    /// At most `n` iterations, with no deadline to speak of (a day).
    pub fn iterations(n: u64) -> Limit<'static> {
        Limit {
            deadline: Instant::now() + std::time::Duration::from_secs(86_400),
            cancel: None,
            shared: None,
            iterations: Some(n),
        }
    }

    /// Whether `done` iterations use up the iteration budget.
    pub fn spent(&self, done: u64) -> bool {
        self.iterations.is_some_and(|n| done >= n)
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Whether the search must stop now.
    pub fn over(&self) -> bool {
        self.cancelled() || Instant::now() >= self.deadline
    }
}

/// A chosen move with what the search knows about it.
#[derive(Clone, Debug)]
pub struct Choice<Mv> {
    pub mv: Mv,
    /// Expected goal of the searching role after this move, in 0..=1 (None if not estimated).
    pub value: Option<f64>,
    /// Playouts (or tree iterations) run for this choice.
    pub iterations: u64,
    /// Set when the value is proven (MCTS-Solver).
    pub proven: bool,
}

/// A trap the search found at the state it searched (see `crate::traps` for the definition):
/// a move of `role` after which the other roles force its loss, while another move does not
/// lose by force.
#[derive(Clone, Debug)]
pub struct TrapFound<Mv> {
    pub role: usize,
    pub mv: Mv,
    /// The refutation: joint moves from the searched state, the trap's own first, to the
    /// terminal state of the loss (the proof's line: the others' best, the role's defence).
    pub line: Vec<Vec<Mv>>,
    /// Whether `line` reaches a terminal state; false when the tree no longer holds the
    /// whole proof (cut back to its node budget since).
    pub complete: bool,
    /// The role's proven value after the move, 0..=1.
    pub value: f64,
    /// How it was found: `"solver"` (MCTS-Solver proved the move lost), `"similarity"` (a
    /// similarity hint led the exact trap finder to it: see [`trap_memory`]), `"collapse"` or
    /// `"choice"` (the exact trap finder checked a move whose mean collapsed, or the move
    /// about to be played: see [`trap_check`]).
    pub how: &'static str,
    /// The move the search chose.
    pub chosen: Mv,
    /// For a trap found by a similarity hint: where the hint came from.
    pub hint: Option<Hint>,
}

/// A similarity hint that found a trap: the remembered trap position it came from, how
/// similar that position was, and the moves move matching paired.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hint {
    /// The measure and its depth (`tactics d=2`).
    pub measure: String,
    /// The similarity of the remembered position to this one.
    pub similarity: f64,
    /// The remembered position's facts, and its trap move.
    pub source: Vec<String>,
    pub source_move: String,
    /// The refutation's first reply there (the choosing roles' moves), and the reply move
    /// matching paired with it here, when the refutation went through it.
    pub killer: Option<String>,
    pub matched_killer: Option<String>,
}

/// A move chooser. Implementations keep what they like between calls (MCTS keeps its tree).
pub trait Search<M: StateMachine>: Send {
    fn name(&self) -> &'static str;
    /// Chooses a move for `role` in `state`, searching until `limit` is over. `None` when the
    /// role has no legal move (or the state is terminal).
    fn select(&mut self, machine: &mut M, state: &M::State, role: usize, limit: Limit<'_>) -> Option<Choice<M::Move>>;
    /// The traps found since the last call, each state and move once (searchers that prove
    /// nothing find none).
    fn take_traps(&mut self) -> Vec<TrapFound<M::Move>> {
        Vec::new()
    }
    /// What similarity-guided AMAF has cost this searcher (MCTS only).
    fn similarity_stats(&self) -> Option<mcts::SimStats> {
        None
    }
    /// The moves of `role` at the root of the last search, with their visits and reward
    /// sums (rewards in 0..=1); empty for searchers that keep no statistics.
    fn root_moves(&self, _role: usize) -> Vec<(M::Move, u64, f64)> {
        Vec::new()
    }
    /// The factors searched apart now (factored search only; `None` while the game is
    /// searched whole).
    fn factors(&self) -> Option<usize> {
        None
    }
}

/// Goal of `role` in `state` scaled to 0..=1 (an undefined goal counts as 0).
pub(crate) fn reward<M: StateMachine>(machine: &mut M, state: &M::State, role: usize) -> f64 {
    machine.goal(state, role).map(|g| g.min(100) as f64 / 100.0).unwrap_or(0.0)
}

/// Always the first legal move.
#[derive(Default)]
pub struct FirstLegal;

impl<M: StateMachine> Search<M> for FirstLegal {
    fn name(&self) -> &'static str {
        "first"
    }
    fn select(&mut self, machine: &mut M, state: &M::State, role: usize, _: Limit<'_>) -> Option<Choice<M::Move>> {
        if machine.is_terminal(state) {
            return None;
        }
        let mut legal = Vec::new();
        machine.legal_moves(state, role, &mut legal);
        legal.first().map(|&mv| Choice { mv, value: None, iterations: 0, proven: false })
    }
}

/// A uniformly random legal move.
pub struct RandomMove {
    rng: Pcg64Mcg,
}

impl RandomMove {
    pub fn new(seed: u64) -> RandomMove {
        RandomMove { rng: Pcg64Mcg::seed_from_u64(seed) }
    }
}

impl<M: StateMachine> Search<M> for RandomMove {
    fn name(&self) -> &'static str {
        "random"
    }
    fn select(&mut self, machine: &mut M, state: &M::State, role: usize, _: Limit<'_>) -> Option<Choice<M::Move>> {
        if machine.is_terminal(state) {
            return None;
        }
        let mut legal = Vec::new();
        machine.legal_moves(state, role, &mut legal);
        if legal.is_empty() {
            return None;
        }
        let mv = legal[self.rng.gen_range(0..legal.len())];
        Some(Choice { mv, value: None, iterations: 0, proven: false })
    }
}

/// Flat Monte Carlo: each legal move of the role in turn, the others random, then a random
/// playout; the move with the best mean goal wins.
pub struct FlatMc {
    rng: Pcg64Mcg,
    max_depth: usize,
}

impl FlatMc {
    pub fn new(seed: u64, max_depth: usize) -> FlatMc {
        FlatMc { rng: Pcg64Mcg::seed_from_u64(seed), max_depth }
    }
}

impl<M: StateMachine> Search<M> for FlatMc {
    fn name(&self) -> &'static str {
        "flatmc"
    }
    fn select(&mut self, machine: &mut M, state: &M::State, role: usize, limit: Limit<'_>) -> Option<Choice<M::Move>> {
        if machine.is_terminal(state) {
            return None;
        }
        let roles = machine.roles().len();
        let mut mine = Vec::new();
        machine.legal_moves(state, role, &mut mine);
        if mine.is_empty() {
            return None;
        }
        if mine.len() == 1 {
            return Some(Choice { mv: mine[0], value: None, iterations: 0, proven: false });
        }
        let mut others: Vec<Vec<M::Move>> = vec![Vec::new(); roles];
        for (r, o) in others.iter_mut().enumerate() {
            if r != role {
                machine.legal_moves(state, r, o);
                if o.is_empty() {
                    return Some(Choice { mv: mine[0], value: None, iterations: 0, proven: false });
                }
            }
        }
        let mut sum = vec![0.0f64; mine.len()];
        let mut n = vec![0u64; mine.len()];
        let mut bufs = PlayoutBuffers::new(machine);
        // A slow engine's playout stops at the deadline, or the cancel flag, too.
        bufs.deadline = Some(limit.deadline);
        bufs.stop = limit.shared.cloned();
        let mut joint = Vec::with_capacity(roles);
        let mut s = state.clone();
        let mut iterations = 0u64;
        let mut i = 0;
        while !limit.over() && !limit.spent(iterations) {
            joint.clear();
            for (r, o) in others.iter().enumerate() {
                joint.push(if r == role { mine[i] } else { o[self.rng.gen_range(0..o.len())] });
            }
            machine.next_state(state, &joint, &mut s);
            machine.playout(&mut s, &mut self.rng, self.max_depth, &mut bufs);
            sum[i] += reward(machine, &s, role);
            n[i] += 1;
            iterations += 1;
            i = (i + 1) % mine.len();
        }
        let mean = |k: usize| if n[k] == 0 { 0.0 } else { sum[k] / n[k] as f64 };
        let best = (0..mine.len()).max_by(|&a, &b| mean(a).total_cmp(&mean(b))).unwrap_or(0);
        Some(Choice { mv: mine[best], value: (n[best] > 0).then(|| mean(best)), iterations, proven: false })
    }
}

#[cfg(test)]
mod tests;
