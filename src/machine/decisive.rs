//! Decisive and anti-decisive moves in playouts (Teytaud and Teytaud 2010, "On the huge
//! benefit of decisive moves in Monte-Carlo tree search algorithms"), for any engine.
//!
//! A *decisive move* of a role in a state is a move after which the game ends with that
//! role's goal at 100. A playout with decisive moves plays such a move whenever a role has
//! one (the first role in role order that has one, the first such move found from a random
//! start in its legal list), instead of what the playout policy chose.
//!
//! An *anti-decisive move* avoids giving the opponent one: when exactly one role has a
//! choice (a turn-taking ply) and, after the move the policy chose, another role would have
//! a decisive move, the mover's other moves are tried (from a random start) and the first
//! after which no other role has a decisive move is played; if every move allows one, the
//! policy's move stays. The check of the next state is the decisive-move search the next ply
//! would make anyway, so it is kept for that ply when the next state has one role with a
//! choice: in turn-taking games, anti-decisive moves cost little beyond decisive ones.
//!
//! Each candidate costs a successor state and a terminal test (and a goal on terminal
//! states): a ply with `b` legal moves costs about `b + 1` steps instead of one, so the
//! playouts are slower and better informed; whether that pays is a game's question (meta-
//! gaming and tournaments answer it). In simultaneous-move plies, a role's decisive move is
//! judged against the moves the policy chose for the others, and there is no anti-decisive
//! step.
//!
//! **The learned filter of ending moves** ([`DecisiveBuffers::learned`]; Sancho's
//! "terminating moves", from its greedy rollouts): only moves that have ended a playout
//! before (the last joint move of every decisive playout that reached a terminal state is
//! remembered, per role and move) are tried as candidates. In a race game, where few moves
//! can end it (breakthrough: a step onto the far row), a ply then costs a few successor
//! states instead of `b`; where any move may end the game (connect four) every move is soon
//! learned and nothing is saved. The search is no longer exact: a win by a move that has
//! never ended a playout is missed until one does. Moves without a
//! [`StateMachine::move_number`], or numbered past the table made at the start, are always
//! tried.

use super::{PlayoutBuffers, PlayoutPolicy, PlayoutResult, StateMachine};
use rand::Rng;

/// The goal that makes a terminal move decisive for its role.
pub const WIN: u32 = 100;

/// What a playout with decisive moves found about a state before reaching it: the search of
/// the ply that produced it, kept so that the state's own ply need not search again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known<Mv> {
    /// Nothing is known.
    Unknown,
    /// No role has a decisive move.
    NoWin,
    /// This role has this decisive move.
    Win(usize, Mv),
}

/// Reusable buffers of [`decisive_playout`] (beside the playout's [`PlayoutBuffers`]):
/// allocated once, so that playouts allocate nothing once their sizes are reached.
#[derive(Debug)]
pub struct DecisiveBuffers<M: StateMachine> {
    /// Legal moves per role in the current state.
    legal: Vec<Vec<M::Move>>,
    /// The successor under another move of the mover (anti-decisive moves).
    alt: M::State,
    probe: Probe<M>,
    counts: DecisiveCounts,
}

/// What decisive playouts have done so far (see [`DecisiveBuffers::counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecisiveCounts {
    /// Plies played.
    pub plies: u64,
    /// Plies where exactly one role had a choice (turn-taking plies).
    pub single: u64,
    /// The legal moves of the roles with a choice, summed over the plies.
    pub choices: u64,
    /// Candidates tried (successor states computed for decisive moves).
    pub tried: u64,
    /// Plies where a decisive or an anti-decisive move replaced the policy's.
    pub overrides: u64,
}

impl DecisiveCounts {
    /// The counts since `earlier` (taken from the same buffers).
    pub fn since(self, earlier: DecisiveCounts) -> DecisiveCounts {
        DecisiveCounts {
            plies: self.plies - earlier.plies,
            single: self.single - earlier.single,
            choices: self.choices - earlier.choices,
            tried: self.tried - earlier.tried,
            overrides: self.overrides - earlier.overrides,
        }
    }
}

impl<M: StateMachine> DecisiveBuffers<M> {
    /// Buffers for exact decisive moves: every legal move is a candidate.
    pub fn new(machine: &mut M) -> Self {
        Self::with_filter(machine, false)
    }

    /// Buffers for decisive moves with the learned filter of ending moves (see the module's
    /// documentation): the filter starts empty.
    pub fn learned(machine: &mut M) -> Self {
        Self::with_filter(machine, true)
    }

    /// [`DecisiveBuffers::learned`] if `filter`, else [`DecisiveBuffers::new`].
    pub fn with_filter(machine: &mut M, filter: bool) -> Self {
        let roles = machine.roles().len();
        let keys = if filter { machine.move_number_bound().saturating_mul(roles).min(MAX_KEYS) } else { 0 };
        let enders = Enders { filter, roles, bits: vec![0; keys.div_ceil(64)] };
        DecisiveBuffers {
            legal: vec![Vec::new(); roles],
            alt: machine.initial_state(),
            probe: Probe {
                roles,
                legal: Vec::new(),
                cand: Vec::new(),
                after: machine.initial_state(),
                enders,
                tried: 0,
            },
            counts: DecisiveCounts::default(),
        }
    }

    /// What the playouts with these buffers have done so far.
    pub fn counts(&self) -> DecisiveCounts {
        DecisiveCounts { tried: self.probe.tried, ..self.counts }
    }

    /// Whether the filter lets `role`'s move `mv` be tried (always without a filter).
    pub fn may_end(&self, role: usize, mv: M::Move) -> bool {
        self.probe.enders.may_end::<M>(role, mv)
    }
}

/// Most (role, move) keys the learned filter holds (512 KiB of bits); moves numbered past
/// are always tried.
const MAX_KEYS: usize = 1 << 22;

/// The learned filter: per (role, move number), whether that move has ended a playout.
#[derive(Debug)]
struct Enders {
    filter: bool,
    roles: usize,
    bits: Vec<u64>,
}

impl Enders {
    fn key<M: StateMachine>(&self, role: usize, mv: M::Move) -> Option<usize> {
        let k = M::move_number(mv)?.checked_mul(self.roles)?.checked_add(role)?;
        (k < self.bits.len() * 64).then_some(k)
    }

    #[inline]
    fn may_end<M: StateMachine>(&self, role: usize, mv: M::Move) -> bool {
        !self.filter || self.key::<M>(role, mv).is_none_or(|k| self.bits[k / 64] >> (k % 64) & 1 == 1)
    }

    /// Remembers every role's move of the joint move that ended a playout.
    fn learn<M: StateMachine>(&mut self, joint: &[M::Move]) {
        if !self.filter {
            return;
        }
        for (r, &mv) in joint.iter().enumerate() {
            if let Some(k) = self.key::<M>(r, mv) {
                self.bits[k / 64] |= 1 << (k % 64);
            }
        }
    }
}

/// The buffers of a search for decisive moves in one state.
#[derive(Debug)]
struct Probe<M: StateMachine> {
    roles: usize,
    /// Legal moves of one role in the state searched.
    legal: Vec<M::Move>,
    /// A candidate joint move, and its successor.
    cand: Vec<M::Move>,
    after: M::State,
    enders: Enders,
    /// Candidates tried.
    tried: u64,
}

impl<M: StateMachine> Probe<M> {
    /// Whether `cand` played in `state` ends the game with `role`'s goal at [`WIN`] (false
    /// without a try when the filter says `role`'s move cannot end it).
    fn wins(&mut self, machine: &mut M, state: &M::State, role: usize) -> bool {
        if !self.enders.may_end::<M>(role, self.cand[role]) {
            return false;
        }
        self.tried += 1;
        machine.next_state(state, &self.cand, &mut self.after);
        machine.is_terminal(&self.after) && machine.goal(&self.after, role) == Some(WIN)
    }

    /// A decisive move in `state` for a role whose legal moves are `legal[role]` (two or
    /// more), the others playing `joint`'s moves; searched from a random start in each list.
    fn find_win<R: Rng>(
        &mut self,
        machine: &mut M,
        state: &M::State,
        legal: &[Vec<M::Move>],
        joint: &[M::Move],
        rng: &mut R,
    ) -> Option<(usize, M::Move)> {
        for (r, moves) in legal.iter().enumerate() {
            if moves.len() < 2 {
                continue;
            }
            let start = rng.gen_range(0..moves.len());
            for k in 0..moves.len() {
                let mv = moves[(start + k) % moves.len()];
                self.cand.clear();
                self.cand.extend_from_slice(joint);
                self.cand[r] = mv;
                if self.wins(machine, state, r) {
                    return Some((r, mv));
                }
            }
        }
        None
    }

    /// What is known of the decisive moves in `next` (not terminal), found by searching it
    /// when exactly one role has a choice there (the others' single moves make the search
    /// exact); `Unknown` in a simultaneous-move state or where a role has no legal move.
    fn next_known<R: Rng>(&mut self, machine: &mut M, next: &M::State, rng: &mut R) -> Known<M::Move> {
        // The joint move of the single moves, and the one role with a choice.
        let mut chooser = None;
        self.cand.clear();
        for r in 0..self.roles {
            machine.legal_moves(next, r, &mut self.legal);
            match self.legal.len() {
                0 => return Known::Unknown,
                1 => {}
                _ if chooser.is_some() => return Known::Unknown,
                _ => chooser = Some(r),
            }
            self.cand.push(self.legal[0]);
        }
        let Some(r) = chooser else { return Known::NoWin };
        machine.legal_moves(next, r, &mut self.legal);
        let n = self.legal.len();
        let start = rng.gen_range(0..n);
        for k in 0..n {
            let mv = self.legal[(start + k) % n];
            self.cand[r] = mv;
            if self.wins(machine, next, r) {
                return Known::Win(r, mv);
            }
        }
        Known::NoWin
    }
}

/// A playout from `state` (which ends as the last state reached) whose moves `policy`
/// chooses, overridden by decisive moves and, with `anti`, anti-decisive moves (see the
/// module's documentation). Every joint move played is shown to `policy.seen` before it is
/// applied. Ends as [`StateMachine::playout`] does.
#[allow(clippy::too_many_arguments)]
pub fn decisive_playout<M: StateMachine, R: Rng, P: PlayoutPolicy<M::Move>>(
    machine: &mut M,
    state: &mut M::State,
    rng: &mut R,
    max_depth: usize,
    bufs: &mut PlayoutBuffers<M>,
    dec: &mut DecisiveBuffers<M>,
    policy: &mut P,
    anti: bool,
) -> PlayoutResult {
    let roles = machine.roles().len();
    let mut depth = 0;
    let mut known: Known<M::Move> = Known::Unknown;
    loop {
        if machine.is_terminal(state) {
            if depth > 0 {
                dec.probe.enders.learn::<M>(&bufs.joint);
            }
            return PlayoutResult { depth, terminal: true };
        }
        if depth >= max_depth || bufs.out_of_time(depth) {
            return PlayoutResult { depth, terminal: false };
        }
        // The policy's joint move, and who has a choice.
        bufs.joint.clear();
        let mut choosers = 0;
        let mut mover = 0;
        for r in 0..roles {
            machine.legal_moves(state, r, &mut dec.legal[r]);
            let moves = &dec.legal[r];
            let i = match moves.len() {
                0 => return PlayoutResult { depth, terminal: false },
                1 => 0,
                n => {
                    choosers += 1;
                    dec.counts.choices += n as u64;
                    mover = r;
                    policy.choose(r, moves, rng)
                }
            };
            bufs.joint.push(moves[i]);
        }
        // A decisive move, known from the last ply or searched now.
        let win = match known {
            Known::Win(r, mv) => Some((r, mv)),
            Known::NoWin => None,
            Known::Unknown => dec.probe.find_win(machine, state, &dec.legal, &bufs.joint, rng),
        };
        known = Known::Unknown;
        dec.counts.plies += 1;
        dec.counts.single += (choosers == 1) as u64;
        if let Some((r, mv)) = win {
            dec.counts.overrides += (bufs.joint[r] != mv) as u64;
            bufs.joint[r] = mv;
            machine.next_state(state, &bufs.joint, &mut bufs.next);
        } else {
            machine.next_state(state, &bufs.joint, &mut bufs.next);
            if anti && choosers == 1 && !machine.is_terminal(&bufs.next) {
                known = dec.probe.next_known(machine, &bufs.next, rng);
                if matches!(known, Known::Win(r, _) if r != mover) {
                    // The policy's move lets another role win: the first other move that
                    // does not (else the policy's move stays, and the reply found for it
                    // is played next).
                    let threat = known;
                    let chosen = bufs.joint[mover];
                    let n = dec.legal[mover].len();
                    let start = rng.gen_range(0..n);
                    for k in 0..n {
                        let mv = dec.legal[mover][(start + k) % n];
                        if mv == chosen {
                            continue;
                        }
                        bufs.joint[mover] = mv;
                        machine.next_state(state, &bufs.joint, &mut dec.alt);
                        known = if machine.is_terminal(&dec.alt) {
                            Known::Unknown
                        } else {
                            dec.probe.next_known(machine, &dec.alt, rng)
                        };
                        if !matches!(known, Known::Win(r, _) if r != mover) {
                            std::mem::swap(&mut bufs.next, &mut dec.alt);
                            dec.counts.overrides += 1;
                            break;
                        }
                        bufs.joint[mover] = chosen;
                    }
                    if bufs.joint[mover] == chosen {
                        known = threat;
                    }
                }
            }
        }
        policy.seen(&bufs.joint);
        std::mem::swap(state, &mut bufs.next);
        depth += 1;
    }
}

#[cfg(test)]
#[path = "decisive_tests.rs"]
mod tests;
