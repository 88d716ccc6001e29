//! Exact trap checks during the search (issue 14, deliverable 3): the ways the search finds
//! traps beside MCTS-Solver's proofs, both through the exact trap finder
//! ([`crate::traps::TrapSearch::move_loses`]).
//!
//! A trap (Ramanujan, Sabharwal and Selman 2010; Evans and Turrini,
//! `../shared/papers/positional-similarity-traps.txt`, section 1) is a move that looks good
//! until the search finds the reply that refutes it. MCTS-Solver proves the loss only when
//! the tree has grown to every terminal state of the refutation; the exact finder proves a
//! shallow one in a few thousand states. Two triggers choose which moves it checks, at a
//! root where the role alone chooses:
//! - **a collapse**: the move's mean value (of the role to move) *collapses* once the
//!   refutation is found and played below it. [`TrapWatch`] follows each root move's mean
//!   every [`EVERY`] iterations, once the move has [`VISITS`] visits, and names the moves
//!   whose mean has fallen [`DROP`] or more below the highest it showed;
//! - **the choice**: a trap the search has not seen through still looks good, and is the
//!   move it is about to play. The move chosen is checked once the search ends (the search
//!   stops [`RESERVE`] of its time early for it), and the next best while a check proves
//!   the choice lost, [`CHOICES`] at most.
//!
//! Each check looks [`DEPTH`] plies after the move within [`BUDGET`] states and the time
//! left; a move proven lost is kept out of the search and of the choice, and reported as a
//! trap found by `"collapse"` or `"choice"` (when some other move is not lost).
//!
//! Sound by construction: a trigger only chooses which moves to prove; the proof is exact.
//! Bounded: each move is checked once per root; the checks on collapses take at most a
//! [`SHARE`] of the search time so far (the first always runs) and none starts with less
//! than [`MIN_LEFT`] to go. Nothing allocates on the iterations between scans, and a scan
//! allocates nothing.

use std::time::Duration;

/// Iterations between two scans of the root.
pub const EVERY: u64 = 256;
/// Visits a root move needs before its mean counts.
pub const VISITS: u32 = 32;
/// Fall of a move's mean below its highest (rewards in 0..=1) that calls for a proof.
pub const DROP: f64 = 0.25;
/// Plies after the move within which the exact finder looks for a forced loss.
pub const DEPTH: u32 = 5;
/// States the exact finder may expand per move checked.
pub const BUDGET: u64 = 5_000;
/// Largest share of the search time the checks on collapses may take (one in `SHARE`).
pub const SHARE: u32 = 10;
/// Least time left before the deadline for a new check to start.
pub const MIN_LEFT: Duration = Duration::from_millis(30);
/// Moves checked at the end of the search, the choice first.
pub const CHOICES: usize = 3;
/// Share of the search's time kept for the checks of the choice (one in `RESERVE`).
pub const RESERVE: u32 = 10;
/// The most time kept for the checks of the choice.
pub const RESERVE_MAX: Duration = Duration::from_millis(150);

/// Each root move's highest mean, and which moves were checked, at the current root.
#[derive(Default)]
pub struct TrapWatch {
    /// The root's state hash.
    at: Option<u64>,
    peak: Vec<f64>,
    checked: Vec<bool>,
    /// Iterations of the current call at which the next scan is due.
    next: u64,
    /// Time the exact finder has taken at this root.
    spent: Duration,
    collapsed: Vec<usize>,
    /// Checks run and moves proven lost, over the searcher's life.
    pub checks: u64,
    pub proven: u64,
}

impl TrapWatch {
    pub fn new() -> Self {
        Self::default()
    }

    /// A new call to the search at the root of hash `hash`, whose role to move has `k`
    /// moves: peaks and checks carry over when the root is the same, else start afresh.
    pub fn start(&mut self, hash: u64, k: usize) {
        self.next = EVERY;
        if self.at != Some(hash) || self.peak.len() != k {
            self.at = Some(hash);
            self.peak.clear();
            self.peak.resize(k, f64::NEG_INFINITY);
            self.checked.clear();
            self.checked.resize(k, false);
            self.spent = Duration::ZERO;
        }
    }

    /// No watch for the rest of this call (the root is not one where the role alone chooses).
    pub fn stop(&mut self) {
        self.at = None;
        self.peak.clear();
        self.checked.clear();
        self.next = u64::MAX;
    }

    /// Whether a scan is due after `iterations` iterations of this call.
    pub fn due(&self, iterations: u64) -> bool {
        iterations >= self.next
    }

    /// Records each move's mean (visits `n`, reward sums `w` of the role, parallel to the
    /// root's moves) and returns the moves not yet checked whose mean has collapsed, the
    /// greatest fall first.
    pub fn scan(&mut self, iterations: u64, n: &[u32], w: &[f64]) -> &[usize] {
        self.next = iterations + EVERY;
        self.collapsed.clear();
        for (i, (&n, &w)) in n.iter().zip(w).enumerate().take(self.peak.len()) {
            if n < VISITS {
                continue;
            }
            let mean = w / f64::from(n);
            self.peak[i] = self.peak[i].max(mean);
            if !self.checked[i] && self.peak[i] - mean >= DROP {
                self.collapsed.push(i);
            }
        }
        let (peak, collapsed) = (&self.peak, &mut self.collapsed);
        let fall = |i: usize| peak[i] - w[i] / f64::from(n[i]);
        collapsed.sort_unstable_by(|&a, &b| fall(b).total_cmp(&fall(a)));
        &self.collapsed
    }

    /// The moves the last scan named.
    pub fn collapsed(&self) -> &[usize] {
        &self.collapsed
    }

    /// Whether a check may start now: the checks so far have taken at most a [`SHARE`] of
    /// the search's `elapsed` time (the first check always may), and `left` is enough.
    pub fn may_check(&self, elapsed: Duration, left: Duration) -> bool {
        left >= MIN_LEFT && (self.spent.is_zero() || self.spent * SHARE <= elapsed)
    }

    /// Move `i` was checked, in `took`; `lost`: proven lost.
    pub fn checked(&mut self, i: usize, took: Duration, lost: bool) {
        self.checked[i] = true;
        self.spent += took;
        self.checks += 1;
        self.proven += u64::from(lost);
    }

    /// Whether move `i` was checked at this root (or the watch is stopped).
    pub fn is_checked(&self, i: usize) -> bool {
        self.checked.get(i).copied().unwrap_or(true)
    }

    /// The time a search with `left` to go keeps for the checks of its choice.
    pub fn reserve(left: Duration) -> Duration {
        (left / RESERVE).min(RESERVE_MAX)
    }

    /// Time the checks have taken at this root.
    pub fn spent(&self) -> Duration {
        self.spent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_is_named_once_its_mean_falls_by_the_drop_and_checked_once() {
        let mut c = TrapWatch::new();
        c.start(7, 3);
        assert!(!c.due(EVERY - 1) && c.due(EVERY));
        // Move 0 looks good, move 1 is steady, move 2 has too few visits to count.
        assert!(c.scan(EVERY, &[40, 40, 10], &[32.0, 20.0, 0.0]).is_empty());
        assert!(!c.due(EVERY + 1));
        // Move 0 falls from 0.8 to 0.5 (by 0.3): named; move 1 from 0.5 to 0.4: not.
        assert_eq!(c.scan(2 * EVERY, &[100, 60, 10], &[50.0, 24.0, 0.0]), &[0]);
        // Both fall; the greater fall first.
        assert_eq!(c.scan(3 * EVERY, &[200, 200, 10], &[60.0, 40.0, 0.0]), &[0, 1]);
        c.checked(0, Duration::from_millis(1), true);
        assert_eq!(c.scan(4 * EVERY, &[200, 200, 10], &[60.0, 40.0, 0.0]), &[1]);
        // The same root on the next call keeps its peaks and checks; a new root does not.
        c.start(7, 3);
        assert_eq!(c.scan(EVERY, &[200, 200, 10], &[60.0, 40.0, 0.0]), &[1]);
        c.start(8, 3);
        assert!(c.scan(EVERY, &[200, 200, 10], &[60.0, 40.0, 0.0]).is_empty());
        assert_eq!((c.checks, c.proven), (1, 1));
    }

    #[test]
    fn checks_keep_to_their_share_of_the_search_time() {
        let mut c = TrapWatch::new();
        c.start(1, 2);
        let ms = Duration::from_millis;
        assert!(c.may_check(ms(0), ms(500)), "the first check always runs");
        assert!(!c.may_check(ms(0), ms(10)), "not with too little time left");
        c.checked(0, ms(20), false);
        assert!(!c.may_check(ms(100), ms(500)));
        assert!(c.may_check(ms(200), ms(500)));
        assert_eq!(c.spent(), ms(20));
    }
}
