//! Hyperstates in play (issue 18, item 1): a one-player game's machine that leaves out, in
//! the states of its hyperstate graph, the moves into hyperstates proven worse than another
//! move's.
//!
//! The paper's rule is to avoid implicitly failed hyperstates: no win is reachable from them.
//! Here the threshold is set per state by its moves: a move is pruned when the hyperstate it
//! leads to is closed (everything it reaches was explored) and the best goal reachable from
//! it is below the best goal found under another move of the same state. With a sibling that
//! reaches a win, that is exactly the move into a fail or implicitly failed hyperstate;
//! without one, it keeps partial credit from being thrown away for nothing (a move into a
//! hyperstate with a sure 90 is not pruned for a 100 nobody can reach). A one-player game
//! is deterministic, so a closed hyperstate's best goal is what perfect play gets there, and a
//! pruned move can never be the only optimal one.
//!
//! Search sees the pruned moves as the legal ones, in the tree and in playouts alike, so the
//! playouts stop wandering into dead ends. States outside the explored graph, and states left
//! open by the bounds, keep all their moves.
//!
//! Statistics shared across the states of a hyperstate ([`PrunedMachine::with_position_key`]):
//! the states of one *strong* hyperstate (mutually reachable) have the same value under
//! perfect play in a one-player game, since each reaches everything the other does; but a
//! well-formed GDL game terminates, so its state graph has no cycle and every strong
//! hyperstate is one state (the search's transpositions already pool a state's statistics).
//! The states a reversible detour joins differ only in their step counters: they are one
//! state of the weak quotient ([`super::Ssg::quotient`] by [`super::BaseMask`]). The machine
//! can give that class as its position key, so that the search pools what it learns of a
//! position over the times it is reached at. (Pooling over a whole weak hyperstate would be
//! too coarse: every ordering of the pancakes is one, so its states would all look alike.)

use super::{Hsg, HsgError, HsgOptions, Ssg, Tag};
use crate::machine::{Goal, StateMachine};
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::time::Instant;

/// What the exploration found and pruned.
#[derive(Clone, Debug)]
pub struct PruneReport {
    pub states: usize,
    pub hyperstates: usize,
    pub complete: bool,
    pub start_tag: Tag,
    /// The best goal reachable from the start (exact when `complete`).
    pub start_best: Option<u32>,
    /// States with at least one move pruned, and the moves pruned in them.
    pub pruned_states: usize,
    pub pruned_moves: usize,
    pub ms: f64,
}

/// The moves kept, per state where some were pruned.
type Kept<M> = FxHashMap<<M as StateMachine>::State, Box<[<M as StateMachine>::Move]>>;

/// A position key: equal for states search may pool statistics over.
pub type PositionKey<S> = Arc<dyn Fn(&S) -> u64 + Send + Sync>;

/// A one-player machine whose legal moves leave out the moves proven worse (module docs).
/// Clones share the table of pruned states.
#[derive(Clone)]
pub struct PrunedMachine<M: StateMachine> {
    pub(super) inner: M,
    kept: Arc<Kept<M>>,
    key: Option<PositionKey<M::State>>,
}

impl<M: StateMachine> PrunedMachine<M> {
    /// Explores `inner`'s game from its initial state within `opts`' bounds and prunes. A game
    /// of more than one role is left as it is (the table stays empty).
    pub fn new(mut inner: M, opts: &HsgOptions) -> Result<(Self, PruneReport), HsgError> {
        let t = Instant::now();
        let start = inner.initial_state();
        if inner.roles().len() != 1 {
            let report = PruneReport {
                states: 0,
                hyperstates: 0,
                complete: false,
                start_tag: Tag::Open,
                start_best: None,
                pruned_states: 0,
                pruned_moves: 0,
                ms: 0.0,
            };
            return Ok((PrunedMachine { inner, kept: Arc::default(), key: None }, report));
        }
        let ssg = Ssg::explore(&mut inner, &start, opts)?;
        let hsg = Hsg::build(&ssg, opts);
        let (kept, pruned_moves) = kept_moves(&ssg, &hsg);
        let report = PruneReport {
            states: ssg.nodes.len(),
            hyperstates: hsg.hyper.len(),
            complete: ssg.complete(),
            start_tag: hsg.start().tag,
            start_best: hsg.start().best,
            pruned_states: kept.len(),
            pruned_moves,
            ms: t.elapsed().as_secs_f64() * 1000.0,
        };
        Ok((PrunedMachine { inner, kept: Arc::new(kept), key: None }, report))
    }

    /// The machine with `key` as its [`StateMachine::position_key`] (module docs).
    pub fn with_position_key(self, key: PositionKey<M::State>) -> Self {
        PrunedMachine { key: Some(key), ..self }
    }

    /// The moves kept in `state`, if some were pruned there.
    pub fn kept(&self, state: &M::State) -> Option<&[M::Move]> {
        self.kept.get(state).map(|k| &k[..])
    }
}

/// Per fully expanded state where a move is pruned: the moves kept; and how many moves were
/// pruned in all.
fn kept_moves<S: Clone + std::hash::Hash + Eq, Mv: Copy>(
    ssg: &Ssg<S, Mv>,
    hsg: &Hsg,
) -> (FxHashMap<S, Box<[Mv]>>, usize) {
    let mut kept = FxHashMap::default();
    let mut pruned = 0;
    for (s, node) in ssg.nodes.iter().enumerate() {
        if node.terminal || node.open || ssg.edges(s).len() < 2 {
            continue;
        }
        let target = |t: u32| &hsg.hyper[hsg.of_state[t as usize] as usize];
        let edges = ssg.edges(s);
        let Some(best) = edges.iter().filter_map(|&(_, t)| target(t).best).max() else { continue };
        let keep: Vec<Mv> = edges
            .iter()
            .filter(|&&(_, t)| {
                let h = target(t);
                !(h.closed && h.best.is_none_or(|b| b < best))
            })
            .map(|&(label, _)| ssg.joints[label as usize][0])
            .collect();
        if keep.len() < edges.len() {
            pruned += edges.len() - keep.len();
            kept.insert(ssg.states[s].clone(), keep.into_boxed_slice());
        }
    }
    (kept, pruned)
}

impl<M: StateMachine> StateMachine for PrunedMachine<M> {
    type State = M::State;
    type Move = M::Move;

    fn roles(&self) -> &[String] {
        self.inner.roles()
    }
    fn initial_state(&mut self) -> Self::State {
        self.inner.initial_state()
    }
    fn legal_moves(&mut self, state: &Self::State, role: usize, out: &mut Vec<Self::Move>) {
        self.inner.legal_moves(state, role, out);
        if let Some(keep) = self.kept.get(state) {
            out.retain(|m| keep.contains(m));
        }
    }
    fn next_state(&mut self, state: &Self::State, joint: &[Self::Move], out: &mut Self::State) {
        self.inner.next_state(state, joint, out)
    }
    fn is_terminal(&mut self, state: &Self::State) -> bool {
        self.inner.is_terminal(state)
    }
    fn goal(&mut self, state: &Self::State, role: usize) -> Goal {
        self.inner.goal(state, role)
    }
    fn move_text(&self, m: Self::Move) -> String {
        self.inner.move_text(m)
    }
    fn overflowed(&self) -> bool {
        self.inner.overflowed()
    }
    fn state_facts(&self, state: &Self::State) -> Vec<String> {
        self.inner.state_facts(state)
    }
    fn position_key(&self, state: &Self::State) -> Option<u64> {
        match &self.key {
            Some(key) => Some(key(state)),
            None => self.inner.position_key(state),
        }
    }
    fn anchor(&mut self, state: &Self::State) {
        self.inner.anchor(state)
    }
    fn clones_share_states(&self) -> bool {
        self.inner.clones_share_states()
    }
    // Playouts run on the trait's own loops (not overridden here), through `legal_moves`, so
    // they are pruned too; the engine's faster loops and its batch machine would not be (so no
    // batch lanes).
    fn move_number(m: Self::Move) -> Option<usize> {
        M::move_number(m)
    }
    fn move_number_bound(&self) -> usize {
        self.inner.move_number_bound()
    }
}
