//! The `StateMachine` trait every engine implements, and engine-independent helpers built on
//! it (random playouts). Search, conformance and benchmarks see engines only through this.

use rand::Rng;
use std::fmt::Debug;
use std::hash::Hash;

/// A goal value: 0..=100 in well-formed games; `None` where the game defines none, or more
/// than one, for a role in a state.
pub type Goal = Option<u32>;

/// A game's rules as a deterministic state machine, in the spirit of ggp-base's StateMachine.
///
/// Queries take the state they are about; engines cache the work done for the last state
/// they saw, so asking for legal moves, terminal and goals of one state costs one evaluation.
/// Output goes to caller-owned buffers so that playouts need not allocate.
pub trait StateMachine {
    /// A game state: the set of true base facts.
    type State: Clone + Eq + Hash + Debug + Send + Sync;
    /// A move of one role.
    type Move: Copy + Eq + Hash + Debug + Send + Sync;

    /// Role names, in the order of the game's `(role ...)` facts.
    fn roles(&self) -> &[String];
    fn initial_state(&mut self) -> Self::State;
    /// Writes the legal moves of `role` in `state` into `out` (cleared first).
    fn legal_moves(&mut self, state: &Self::State, role: usize, out: &mut Vec<Self::Move>);
    /// Writes the successor of `state` under `joint` (one move per role) into `out`.
    fn next_state(&mut self, state: &Self::State, joint: &[Self::Move], out: &mut Self::State);
    fn is_terminal(&mut self, state: &Self::State) -> bool;
    fn goal(&mut self, state: &Self::State, role: usize) -> Goal;

    /// The move in ggp-base's printed form, e.g. `( mark 1 1 )` or `noop`.
    fn move_text(&self, m: Self::Move) -> String;
    /// Whether an evaluation was cut short by a resource limit, so that answers since may be
    /// incomplete. Engines without limits never overflow.
    fn overflowed(&self) -> bool {
        false
    }

    /// The state's facts in ggp-base's printed form, sorted by bytes.
    fn state_facts(&self, state: &Self::State) -> Vec<String>;

    /// A depth charge: plays uniformly random joint moves from `state` (which ends as the
    /// last state reached), as [`random_playout`]. Engines may override it with a faster
    /// loop that draws other (equally uniform) moves from the same generator.
    fn playout<R: Rng>(
        &mut self,
        state: &mut Self::State,
        rng: &mut R,
        max_depth: usize,
        bufs: &mut PlayoutBuffers<Self>,
    ) -> PlayoutResult
    where
        Self: Sized,
    {
        random_playout(self, state, rng, max_depth, bufs)
    }
}

/// Reusable buffers for [`random_playout`].
#[derive(Debug)]
pub struct PlayoutBuffers<M: StateMachine> {
    pub legal: Vec<M::Move>,
    pub joint: Vec<M::Move>,
    pub next: M::State,
}

impl<M: StateMachine> PlayoutBuffers<M> {
    pub fn new(machine: &mut M) -> Self {
        PlayoutBuffers { legal: Vec::new(), joint: Vec::new(), next: machine.initial_state() }
    }
}

/// Outcome of a random playout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayoutResult {
    /// Joint moves played.
    pub depth: usize,
    /// Whether the playout ended in a terminal state (otherwise a role had no legal move or
    /// `max_depth` was reached).
    pub terminal: bool,
}

/// Plays uniformly random joint moves from `state` (which ends as the last state reached)
/// until a terminal state, a role with no legal move, or `max_depth` joint moves.
pub fn random_playout<M: StateMachine, R: Rng>(
    machine: &mut M,
    state: &mut M::State,
    rng: &mut R,
    max_depth: usize,
    bufs: &mut PlayoutBuffers<M>,
) -> PlayoutResult {
    let roles = machine.roles().len();
    let mut depth = 0;
    loop {
        if machine.is_terminal(state) {
            return PlayoutResult { depth, terminal: true };
        }
        if depth >= max_depth {
            return PlayoutResult { depth, terminal: false };
        }
        bufs.joint.clear();
        for r in 0..roles {
            machine.legal_moves(state, r, &mut bufs.legal);
            if bufs.legal.is_empty() {
                return PlayoutResult { depth, terminal: false };
            }
            bufs.joint.push(bufs.legal[rng.gen_range(0..bufs.legal.len())]);
        }
        machine.next_state(state, &bufs.joint, &mut bufs.next);
        std::mem::swap(state, &mut bufs.next);
        depth += 1;
    }
}
