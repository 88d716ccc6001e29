//! The `StateMachine` trait every engine implements, and engine-independent helpers built on
//! it (random playouts). Search, conformance and benchmarks see engines only through this.

pub mod decisive;
pub mod explore;

use rand::Rng;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

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

    /// A key that states of one *position class* share: states the search may pool its
    /// statistics over (`search::mcts::MctsConfig::position_classes`), such as states equal
    /// but for a step counter (`hsg::prune`). `None` (the default): no classes.
    fn position_key(&self, _state: &Self::State) -> Option<u64> {
        None
    }

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
        self.playout_seen(state, rng, max_depth, bufs, |_| {})
    }

    /// [`StateMachine::playout`], showing each joint move played (one move per role, in role
    /// order) to `seen` before it is applied: the search's AMAF statistics are gathered so.
    fn playout_seen<R: Rng, F: FnMut(&[Self::Move])>(
        &mut self,
        state: &mut Self::State,
        rng: &mut R,
        max_depth: usize,
        bufs: &mut PlayoutBuffers<Self>,
        seen: F,
    ) -> PlayoutResult
    where
        Self: Sized,
    {
        random_playout_seen(self, state, rng, max_depth, bufs, seen)
    }

    /// A playout whose moves `policy` chooses (a learned playout policy such as MAST): each
    /// role with two or more legal moves plays the one `policy.choose` picks, a role with one
    /// plays it, and every joint move is shown to `policy.seen` before it is applied. Ends as
    /// [`StateMachine::playout`] does. Engines may override it with a faster loop.
    fn playout_policy<R: Rng, P: PlayoutPolicy<Self::Move>>(
        &mut self,
        state: &mut Self::State,
        rng: &mut R,
        max_depth: usize,
        bufs: &mut PlayoutBuffers<Self>,
        policy: &mut P,
    ) -> PlayoutResult
    where
        Self: Sized,
    {
        policy_playout(self, state, rng, max_depth, bufs, policy)
    }

    /// A hint: the caller will keep coming back to states near `state` (MCTS: its root, which
    /// every descent starts from). Engines may keep it ready so that moving there, or near
    /// it, is cheap; answers never change. The default does nothing.
    fn anchor(&mut self, _state: &Self::State) {}

    /// Whether a clone of this machine reads the states and moves this machine makes after
    /// the clone was taken, and the other way round. Threads that hand states to each other
    /// (tree-parallel helpers, root-parallel trees) need it. True for engines whose states
    /// stand alone (the propnet's bits); false for the interpreter, whose states and moves
    /// are ids into its own term store, which each clone extends on its own.
    fn clones_share_states(&self) -> bool {
        true
    }

    /// A dense number for a move, the same for every state (per-move tables in search, such
    /// as MAST's, are indexed by it); numbers stay below [`StateMachine::move_number_bound`]
    /// for the moves seen so far. `None` for engines whose moves have none.
    fn move_number(_m: Self::Move) -> Option<usize> {
        None
    }

    /// A bound on the [`StateMachine::move_number`]s of the moves seen so far (0 without
    /// numbers).
    fn move_number_bound(&self) -> usize {
        0
    }

    /// The state as bits, one per base proposition in the order of
    /// [`StateMachine::base_texts`], for engines whose states are bit sets (`None` for the
    /// others): what learned heuristics count ([`crate::heuristic`]).
    fn state_bits<'a>(&self, _state: &'a Self::State) -> Option<&'a [u64]> {
        None
    }

    /// Every base proposition's text in ggp-base's form, in the order of
    /// [`StateMachine::state_bits`] (empty where states are not bit sets).
    fn base_texts(&self) -> Vec<String> {
        Vec::new()
    }

    /// Playouts the engine runs at once in [`StateMachine::batch_playouts`]: 0 for engines
    /// without a batch machine.
    fn batch_lanes(&self) -> usize {
        0
    }

    /// Uniformly random playouts from several states at once, on the engine's batch machine
    /// (as many as [`StateMachine::batch_lanes`], `batch_lanes / starts.len()` from each
    /// start). Writes each start's rewards summed over its playouts into
    /// `sums[start * roles + role]` (a reward is the final goal / 100, 0 without one, as
    /// search scores a playout) and returns the playouts per start. `None` (and `sums`
    /// untouched) without a batch machine or with more starts than lanes; `Some(0)` (`sums`
    /// untouched) when `until` came before the playouts ended.
    fn batch_playouts<R: Rng>(
        &mut self,
        _starts: &[Self::State],
        _max_depth: usize,
        _rng: &mut R,
        _sums: &mut [f64],
        _until: Option<std::time::Instant>,
    ) -> Option<usize>
    where
        Self: Sized,
    {
        None
    }
}

/// How a playout chooses each role's move, for [`StateMachine::playout_policy`].
pub trait PlayoutPolicy<Mv> {
    /// The index in `legal` (two or more moves) of the move `role` plays.
    fn choose<R: Rng>(&mut self, role: usize, legal: &[Mv], rng: &mut R) -> usize;
    /// Each joint move played (one move per role, in role order), before it is applied.
    fn seen(&mut self, _joint: &[Mv]) {}
}

/// Uniformly random moves: [`StateMachine::playout_policy`] with it is a random playout.
pub struct Uniform;

impl<Mv> PlayoutPolicy<Mv> for Uniform {
    fn choose<R: Rng>(&mut self, _role: usize, legal: &[Mv], rng: &mut R) -> usize {
        rng.gen_range(0..legal.len())
    }
}

/// The generic loop of [`StateMachine::playout_policy`].
pub fn policy_playout<M: StateMachine, R: Rng, P: PlayoutPolicy<M::Move>>(
    machine: &mut M,
    state: &mut M::State,
    rng: &mut R,
    max_depth: usize,
    bufs: &mut PlayoutBuffers<M>,
    policy: &mut P,
) -> PlayoutResult {
    let roles = machine.roles().len();
    let mut depth = 0;
    loop {
        if machine.is_terminal(state) {
            return PlayoutResult { depth, terminal: true };
        }
        if depth >= max_depth || bufs.out_of_time(depth) {
            return PlayoutResult { depth, terminal: false };
        }
        bufs.joint.clear();
        for r in 0..roles {
            machine.legal_moves(state, r, &mut bufs.legal);
            let i = match bufs.legal.len() {
                0 => return PlayoutResult { depth, terminal: false },
                1 => 0,
                _ => policy.choose(r, &bufs.legal, rng),
            };
            bufs.joint.push(bufs.legal[i]);
        }
        policy.seen(&bufs.joint);
        machine.next_state(state, &bufs.joint, &mut bufs.next);
        std::mem::swap(state, &mut bufs.next);
        depth += 1;
    }
}

/// Reusable buffers for [`random_playout`].
#[derive(Debug)]
pub struct PlayoutBuffers<M: StateMachine> {
    pub legal: Vec<M::Move>,
    pub joint: Vec<M::Move>,
    pub next: M::State,
    /// When a playout of the generic loops ([`random_playout`], [`policy_playout`],
    /// `decisive_playout`) stops, not terminal, if it is still going (read every
    /// [`DEADLINE_EVERY`] joint moves). For slow engines: one playout of the interpreter on a
    /// large game (amazons) takes about a second, past a play clock's reply deadline. The
    /// propnet's own playout loops do not read it (their playouts take microseconds).
    pub deadline: Option<Instant>,
    /// As `deadline`: the playout also stops once this flag is raised (a search's cancel
    /// flag, see `search::Limit::shared`).
    pub stop: Option<Arc<AtomicBool>>,
}

/// Joint moves between two readings of [`PlayoutBuffers::deadline`].
pub const DEADLINE_EVERY: usize = 8;

impl<M: StateMachine> PlayoutBuffers<M> {
    pub fn new(machine: &mut M) -> Self {
        PlayoutBuffers {
            legal: Vec::new(),
            joint: Vec::new(),
            next: machine.initial_state(),
            deadline: None,
            stop: None,
        }
    }

    /// Whether a playout `depth` joint moves long stops here for the deadline or the stop
    /// flag.
    #[inline]
    pub fn out_of_time(&self, depth: usize) -> bool {
        depth % DEADLINE_EVERY == DEADLINE_EVERY - 1
            && (self.deadline.is_some_and(|d| Instant::now() >= d)
                || self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)))
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
    random_playout_seen(machine, state, rng, max_depth, bufs, |_| {})
}

/// [`random_playout`], showing each joint move to `seen` before it is applied.
pub fn random_playout_seen<M: StateMachine, R: Rng>(
    machine: &mut M,
    state: &mut M::State,
    rng: &mut R,
    max_depth: usize,
    bufs: &mut PlayoutBuffers<M>,
    mut seen: impl FnMut(&[M::Move]),
) -> PlayoutResult {
    let roles = machine.roles().len();
    let mut depth = 0;
    loop {
        if machine.is_terminal(state) {
            return PlayoutResult { depth, terminal: true };
        }
        if depth >= max_depth || bufs.out_of_time(depth) {
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
        seen(&bufs.joint);
        machine.next_state(state, &bufs.joint, &mut bufs.next);
        std::mem::swap(state, &mut bufs.next);
        depth += 1;
    }
}

/// A move text in a canonical spelling for comparison: lower case, one space between atoms,
/// none inside parentheses (`( mark 1 1 )`, `(MARK 1  1)` and `(mark 1 1)` agree).
pub fn canonical_move_text(text: &str) -> String {
    let spaced = text.replace('(', " ( ").replace(')', " ) ");
    let mut out = String::new();
    for tok in spaced.split_whitespace() {
        if !out.is_empty() && !out.ends_with('(') && tok != ")" {
            out.push(' ');
        }
        out.push_str(&tok.to_lowercase());
    }
    out
}

/// Splits a list of moves written one after another (`(mark 1 1) noop (mark 2 2)`) into the
/// texts of the moves: top-level terms.
pub fn split_moves(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                if depth == 0 {
                    return Err(format!("unbalanced ')' in {text:?}"));
                }
                depth -= 1;
                cur.push(c);
                if depth == 0 {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c if c.is_whitespace() && depth == 0 => {
                if !cur.trim().is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                cur.clear();
            }
            c => cur.push(c),
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced '(' in {text:?}"));
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// The legal move of `role` in `state` whose text is `text` (compared canonically).
pub fn find_move<M: StateMachine>(m: &mut M, state: &M::State, role: usize, text: &str) -> Option<M::Move> {
    let want = canonical_move_text(text);
    let mut legal = Vec::new();
    m.legal_moves(state, role, &mut legal);
    legal.into_iter().find(|&mv| canonical_move_text(&m.move_text(mv)) == want)
}

/// Plays moves given one ply at a time as the moves of the roles that have a choice (the
/// role on turn in a turn-taking game; every role with more than one legal move, in role
/// order, in a simultaneous one); roles with one legal move play it. Returns the state
/// reached, or which ply failed and why.
pub fn play_texts<M: StateMachine>(m: &mut M, start: &M::State, moves: &[String]) -> Result<M::State, String> {
    let roles = m.roles().len();
    let mut state = start.clone();
    let mut legal = Vec::new();
    let mut next = start.clone();
    let mut i = 0;
    let mut ply = 0;
    while i < moves.len() {
        if ply > 100_000 {
            return Err(format!("no choice for any role in 100000 plies before {}", moves[i]));
        }
        if m.is_terminal(&state) {
            return Err(format!("ply {}: the game is over before {}", ply + 1, moves[i]));
        }
        let mut joint = Vec::with_capacity(roles);
        for r in 0..roles {
            m.legal_moves(&state, r, &mut legal);
            match legal.len() {
                0 => return Err(format!("ply {}: {} has no legal move", ply + 1, m.roles()[r])),
                1 => joint.push(legal[0]),
                _ => {
                    let Some(text) = moves.get(i) else {
                        return Err(format!("ply {}: no move given for {}", ply + 1, m.roles()[r]));
                    };
                    let Some(mv) = find_move(m, &state, r, text) else {
                        return Err(format!("ply {}: {text} is not a legal move of {}", ply + 1, m.roles()[r]));
                    };
                    joint.push(mv);
                    i += 1;
                }
            }
        }
        m.next_state(&state, &joint, &mut next);
        std::mem::swap(&mut state, &mut next);
        ply += 1;
    }
    Ok(state)
}
