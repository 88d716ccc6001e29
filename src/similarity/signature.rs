//! Tactical signatures: the measure [`super::tactics`] computed once per position and
//! compared in microseconds, for use inside a search.
//!
//! [`super::tactics`] compares two [`super::LocalTree`]s, which are built with strings for
//! labels and hash maps per comparison: right for a benchmark, too slow for MCTS, which wants
//! to compare a node with its ancestors thousands of times a second. A [`TacticsSig`] keeps
//! only what tactical similarity reads of a position's local tree of depth d: its *outcome
//! sequences* (each root-to-terminal move sequence within the depth, simplified to a
//! multiset of moves as in the paper's similarity of sequences P_seq, with the rewards it
//! ends in, and its multiplicity k) and its *outcome shape* (how many sequences end the game
//! at each depth with each reward). Both are sorted vectors of hashed keys, so comparing two
//! signatures is one merge: [`TacticsSig::similarity`] is max(P_seq over outcome sequences,
//! Σmin/Σmax over outcome shapes), the same number `tactics` gives on the same trees.
//!
//! Differences from `tactics` over a [`super::MachineView`], both deliberate: a move is
//! labelled by its role and its identity in the machine (not by its printed text, so black's
//! `(drop 3)` is not white's), and a terminal state is keyed by every role's reward (not one
//! role's view), so one signature serves every role. In a two-player zero-sum game the
//! rewards key the same partition either way.
//!
//! Computing a signature expands the local tree once (at depth 2, k² states for k moves a
//! ply); [`SigScratch`] keeps the states and buffers (grown on first use), so after that
//! only the signature itself is allocated. Past `max_states` expansions it gives up (`None`): the caller treats such
//! positions as not comparable.

use crate::machine::StateMachine;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// What tactical similarity reads of one position's local tree.
#[derive(Clone, Debug, PartialEq)]
pub struct TacticsSig {
    /// Outcome sequences: (hash of the sorted move multiset and the rewards, multiplicity),
    /// sorted by key.
    seqs: Box<[(u64, u32)]>,
    /// Outcome shape: (hash of the depth and the rewards, count), sorted by key.
    shapes: Box<[(u64, u32)]>,
    /// The rewards (0..=1 per role) when the position itself is terminal.
    terminal: Option<Box<[f64]>>,
}

impl TacticsSig {
    /// Tactical similarity of two signatures, in 0..=1: the larger of the similarity of
    /// outcomes (P_seq over the outcome sequences: Σ over shared sequences of k₁ + k₂, over
    /// Σk₁ + Σk₂; 1 when neither tree ends within the depth) and the similarity of outcome
    /// shapes (Σmin / Σmax of the counts; 1 when neither ends). A terminal position against
    /// another compares by the terminal similarity of section 2.4 (1 − |R₂ − R₁|, the largest
    /// difference over the roles), and against a non-terminal one scores 0.
    pub fn similarity(&self, other: &TacticsSig) -> f64 {
        match (&self.terminal, &other.terminal) {
            (Some(a), Some(b)) => {
                let d = a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
                return 1.0 - d.min(1.0);
            }
            (None, None) => {}
            _ => return 0.0,
        }
        let (mut shared, mut total) = (0u64, 0u64);
        merge(&self.seqs, &other.seqs, |a, b| {
            total += (a + b) as u64;
            if a > 0 && b > 0 {
                shared += (a + b) as u64;
            }
        });
        let outcomes = if total == 0 { 1.0 } else { shared as f64 / total as f64 };
        let (mut lo, mut hi) = (0u64, 0u64);
        merge(&self.shapes, &other.shapes, |a, b| {
            lo += a.min(b) as u64;
            hi += a.max(b) as u64;
        });
        let shapes = if hi == 0 { 1.0 } else { lo as f64 / hi as f64 };
        outcomes.max(shapes)
    }

    /// Outcome sequences in the local tree (with multiplicity).
    pub fn sequences(&self) -> u32 {
        self.seqs.iter().map(|s| s.1).sum()
    }
}

/// Calls `f(count in a, count in b)` for every key of either sorted list.
fn merge(a: &[(u64, u32)], b: &[(u64, u32)], mut f: impl FnMut(u32, u32)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i].0 < b[j].0) {
            f(a[i].1, 0);
            i += 1;
        } else if i == a.len() || b[j].0 < a[i].0 {
            f(0, b[j].1);
            j += 1;
        } else {
            f(a[i].1, b[j].1);
            i += 1;
            j += 1;
        }
    }
}

/// Deepest signature: a sequence's moves are sorted in a fixed array of this size.
pub const MAX_DEPTH: u32 = 8;

/// Reused buffers for computing signatures of one machine's states.
pub struct SigScratch<M: StateMachine> {
    /// Per ply below the root: the state reached and each role's legal moves.
    states: Vec<Option<M::State>>,
    legal: Vec<Vec<Vec<M::Move>>>,
    idx: Vec<Vec<usize>>,
    joint: Vec<Vec<M::Move>>,
    path: Vec<u64>,
    seqs: FxHashMap<u64, u32>,
    shapes: FxHashMap<u64, u32>,
    rewards: Vec<u32>,
    expanded: u64,
    max_states: u64,
}

impl<M: StateMachine> SigScratch<M> {
    /// Buffers for signatures that expand at most `max_states` states each.
    pub fn new(max_states: u64) -> Self {
        SigScratch {
            states: Vec::new(),
            legal: Vec::new(),
            idx: Vec::new(),
            joint: Vec::new(),
            path: Vec::new(),
            seqs: FxHashMap::default(),
            shapes: FxHashMap::default(),
            rewards: Vec::new(),
            expanded: 0,
            max_states,
        }
    }

    /// States expanded by the last [`SigScratch::compute`].
    pub fn expanded(&self) -> u64 {
        self.expanded
    }

    /// The signature of `state` at depth `depth` (1 to [`MAX_DEPTH`]; clamped); `None` when
    /// it would expand more than `max_states` states.
    pub fn compute(&mut self, m: &mut M, state: &M::State, depth: u32) -> Option<TacticsSig> {
        let roles = m.roles().len();
        self.expanded = 0;
        if m.is_terminal(state) {
            let r = (0..roles).map(|r| m.goal(state, r).unwrap_or(0) as f64 / 100.0).collect();
            return Some(TacticsSig { seqs: Box::default(), shapes: Box::default(), terminal: Some(r) });
        }
        let d = depth.clamp(1, MAX_DEPTH) as usize;
        if self.states.len() < d {
            self.states.resize_with(d, || None);
            self.legal.resize_with(d, Vec::new);
            self.idx.resize_with(d, Vec::new);
            self.joint.resize_with(d, Vec::new);
        }
        self.seqs.clear();
        self.shapes.clear();
        self.path.clear();
        if !self.walk(m, state, 0, d, roles) {
            return None;
        }
        let sorted = |map: &FxHashMap<u64, u32>| {
            let mut v: Vec<(u64, u32)> = map.iter().map(|(&k, &c)| (k, c)).collect();
            v.sort_unstable();
            v.into_boxed_slice()
        };
        Some(TacticsSig { seqs: sorted(&self.seqs), shapes: sorted(&self.shapes), terminal: None })
    }

    /// Expands the joint moves of `state` (at ply `level`), recording the sequences that end
    /// the game; false when the budget ran out.
    fn walk(&mut self, m: &mut M, state: &M::State, level: usize, d: usize, roles: usize) -> bool {
        let legal = &mut self.legal[level];
        legal.resize_with(roles, Vec::new);
        for (r, l) in legal.iter_mut().enumerate() {
            m.legal_moves(state, r, l);
            if l.is_empty() {
                return true;
            }
        }
        let choosers = legal.iter().filter(|l| l.len() > 1).count();
        self.idx[level].clear();
        self.idx[level].resize(roles, 0);
        let mut next = self.states[level].take().unwrap_or_else(|| state.clone());
        let mut ok = true;
        'joints: loop {
            self.expanded += 1;
            if self.expanded > self.max_states {
                ok = false;
                break;
            }
            let joint = &mut self.joint[level];
            joint.clear();
            let mut h = FxHasher::default();
            for r in 0..roles {
                let mv = self.legal[level][r][self.idx[level][r]];
                joint.push(mv);
                if choosers == 0 || self.legal[level][r].len() > 1 {
                    (r, mv).hash(&mut h);
                }
            }
            m.next_state(state, &self.joint[level], &mut next);
            self.path.push(h.finish());
            if m.is_terminal(&next) {
                self.rewards.clear();
                for r in 0..roles {
                    self.rewards.push(m.goal(&next, r).unwrap_or(0));
                }
                let mut sorted = [0u64; 8];
                let n = self.path.len().min(8);
                sorted[..n].copy_from_slice(&self.path[..n]);
                sorted[..n].sort_unstable();
                let mut k = FxHasher::default();
                sorted[..n].hash(&mut k);
                self.rewards.hash(&mut k);
                *self.seqs.entry(k.finish()).or_insert(0) += 1;
                let mut s = FxHasher::default();
                (level as u32 + 1).hash(&mut s);
                self.rewards.hash(&mut s);
                *self.shapes.entry(s.finish()).or_insert(0) += 1;
            } else if level + 1 < d && !self.walk(m, &next, level + 1, d, roles) {
                self.path.pop();
                ok = false;
                break;
            }
            self.path.pop();
            // Odometer over the roles' choices.
            let mut r = roles;
            loop {
                if r == 0 {
                    break 'joints;
                }
                r -= 1;
                self.idx[level][r] += 1;
                if self.idx[level][r] < self.legal[level][r].len() {
                    break;
                }
                self.idx[level][r] = 0;
            }
        }
        self.states[level] = Some(next);
        ok
    }
}

#[cfg(test)]
#[path = "signature_tests.rs"]
mod tests;
