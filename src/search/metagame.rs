//! Meta-gaming: a few seconds of self-play in the start clock to choose, per game, among an
//! agent's search options, as strong GGP players do (CadiaPlayer and Sancho tune their
//! playouts to the game at hand). Today the choice is the playout policy: uniformly random
//! against MAST ([`Playout`]), which wins clearly at some games (breakthrough, pentago) and
//! loses at others (connect four, where a column's worth depends on its height).
//!
//! The candidates play each other on the engine the agent will use, with fast searches (a
//! fixed number of iterations per move, set so that a game fits in a small share of the
//! time), roles rotated from game to game; in a one-role game each candidate plays alone in
//! turn. The candidate with the higher mean score is chosen; on a tie, or when fewer than
//! [`MIN_GAMES`] games fit in the time, the first candidate (the agent's default) stays.

use super::mcts::{Mcts, MctsConfig, Playout};
use super::{Limit, Search};
use crate::machine::StateMachine;
use std::time::{Duration, Instant};

/// Games the candidates must have played for the choice to leave the default.
pub const MIN_GAMES: u32 = 2;
/// Iterations per move in the self-play games: at least, at most.
const ITERATIONS: (u64, u64) = (50, 1000);
/// Joint moves a self-play game may last before it is scored as it stands.
const MAX_PLIES: usize = 1000;

/// What the self-play found: the candidates, how each scored, and which was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    pub candidates: Vec<Playout>,
    /// Per candidate: the sum of its goals (0..=1) over the games it played, and their count.
    pub score: Vec<(f64, u32)>,
    /// Games played to the end.
    pub games: u32,
    /// Iterations per move in the self-play searches.
    pub iterations: u64,
    pub chosen: Playout,
    pub millis: u64,
}

impl Trial {
    /// A candidate's mean goal, 0..=1 (0 before any game).
    pub fn mean(&self, i: usize) -> f64 {
        let (w, n) = self.score[i];
        if n == 0 {
            0.0
        } else {
            w / n as f64
        }
    }
}

/// Chooses the playout policy for `base` by self-play on a clone of `machine` from its
/// initial state until `deadline`: random (the default) against MAST.
pub fn choose_playout<M>(machine: &M, base: MctsConfig, deadline: Instant) -> Trial
where
    M: StateMachine + Clone,
{
    let t0 = Instant::now();
    let candidates = vec![Playout::Random, Playout::Mast];
    let mut m = machine.clone();
    let roles = m.roles().len();
    let mut trial = Trial {
        candidates: candidates.clone(),
        score: vec![(0.0, 0); candidates.len()],
        games: 0,
        iterations: 0,
        chosen: candidates[0],
        millis: 0,
    };
    if roles == 0 {
        return trial;
    }
    let start = m.initial_state();
    // Speed and game length, measured: a short search of the initial state and its
    // playouts' depth, so that one game takes about a tenth of the time.
    let probe_until = (t0 + deadline.saturating_duration_since(t0) / 20).min(deadline);
    let mut probe = Mcts::<M>::new(base);
    let probe_role = (0..roles).find(|&r| legal_count(&mut m, &start, r) > 1).unwrap_or(0);
    let probed = probe.select(&mut m, &start, probe_role, Limit::until(probe_until));
    let spent = t0.elapsed().max(Duration::from_millis(1));
    let rate = probed.map_or(0, |c| c.iterations) as f64 / spent.as_secs_f64();
    let plies = playout_depth(&mut m, &start, base.seed).max(1) as f64;
    let left = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
    trial.iterations = ((rate * left / 10.0 / plies) as u64).clamp(ITERATIONS.0, ITERATIONS.1);

    let mut game = 0u64;
    while Instant::now() < deadline {
        // Which candidate plays which role: in game g, candidate g % 2 plays role
        // (g / 2) % roles and the other candidate every other role (one role: alone).
        let first = (game % 2) as usize;
        let seat = ((game / 2) % roles as u64) as usize;
        let who: Vec<usize> = (0..roles).map(|r| if roles == 1 || r == seat { first } else { 1 - first }).collect();
        let seed = base.seed.wrapping_add(game.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut trees: Vec<Mcts<M>> = (0..roles)
            .map(|r| Mcts::new(MctsConfig { playout: candidates[who[r]], seed: seed ^ r as u64, ..base }))
            .collect();
        let Some(end) = self_play(&mut m, &start, &mut trees, trial.iterations, deadline) else { break };
        for c in 0..candidates.len() {
            let mine: Vec<usize> = (0..roles).filter(|&r| who[r] == c).collect();
            if mine.is_empty() {
                continue;
            }
            let v = mine.iter().map(|&r| super::reward(&mut m, &end, r)).sum::<f64>() / mine.len() as f64;
            trial.score[c].0 += v;
            trial.score[c].1 += 1;
        }
        trial.games += 1;
        game += 1;
    }
    let played_both = trial.score.iter().all(|s| s.1 > 0);
    if trial.games >= MIN_GAMES && played_both {
        let best =
            (0..candidates.len()).max_by(|&a, &b| trial.mean(a).total_cmp(&trial.mean(b)).then(b.cmp(&a))).unwrap_or(0);
        trial.chosen = candidates[best];
    }
    trial.millis = t0.elapsed().as_millis() as u64;
    trial
}

fn legal_count<M: StateMachine>(m: &mut M, state: &M::State, role: usize) -> usize {
    let mut legal = Vec::new();
    m.legal_moves(state, role, &mut legal);
    legal.len()
}

/// The depth of one random playout from `state`.
fn playout_depth<M: StateMachine>(m: &mut M, state: &M::State, seed: u64) -> usize {
    use rand::SeedableRng;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let mut s = state.clone();
    let mut bufs = crate::machine::PlayoutBuffers::new(m);
    m.playout(&mut s, &mut rng, MAX_PLIES, &mut bufs).depth
}

/// One game from `start`, each role searching with its own tree for `iterations` per move
/// (roles with one legal move play it); the final state, or `None` if `deadline` came first.
fn self_play<M: StateMachine>(
    m: &mut M,
    start: &M::State,
    trees: &mut [Mcts<M>],
    iterations: u64,
    deadline: Instant,
) -> Option<M::State> {
    let roles = trees.len();
    let mut state = start.clone();
    let mut next = start.clone();
    let mut legal = Vec::new();
    let mut joint = Vec::with_capacity(roles);
    for _ in 0..MAX_PLIES {
        if m.is_terminal(&state) {
            return Some(state);
        }
        joint.clear();
        for (r, tree) in trees.iter_mut().enumerate() {
            m.legal_moves(&state, r, &mut legal);
            match legal.len() {
                0 => return Some(state),
                1 => joint.push(legal[0]),
                _ => {
                    let limit = Limit { deadline, cancel: None, iterations: Some(iterations) };
                    let c = tree.select(m, &state, r, limit)?;
                    joint.push(c.mv);
                }
            }
        }
        if Instant::now() >= deadline {
            return None;
        }
        m.next_state(&state, &joint, &mut next);
        std::mem::swap(&mut state, &mut next);
    }
    Some(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdl::Game;
    use crate::propnet::{self, Budget};
    use std::path::Path;

    fn propnet(file: &str) -> propnet::PropnetMachine {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
        let game = Game::load(&p).unwrap();
        propnet::build(&game, &Budget::default()).unwrap().0
    }

    #[test]
    fn self_play_scores_both_candidates_in_both_seats_and_chooses_the_better() {
        let m = propnet("connect4.kif");
        let t = choose_playout(&m, MctsConfig::default(), Instant::now() + Duration::from_millis(2000));
        // About ten games on a quiet machine; a loaded one plays fewer.
        assert!(t.games >= MIN_GAMES, "{t:?}");
        // Two roles: every game scores each candidate once.
        assert_eq!(t.score[0].1, t.games);
        assert_eq!(t.score[1].1, t.games);
        // Connect four is zero-sum with draws at 50: the means add up to 1.
        assert!((t.mean(0) + t.mean(1) - 1.0).abs() < 1e-9, "{t:?}");
        let better = if t.mean(1) > t.mean(0) { Playout::Mast } else { Playout::Random };
        assert_eq!(t.chosen, better, "{t:?}");
        assert!((ITERATIONS.0..=ITERATIONS.1).contains(&t.iterations));
    }

    #[test]
    fn no_time_keeps_the_default() {
        let m = propnet("tictactoe.kif");
        let t = choose_playout(&m, MctsConfig::default(), Instant::now());
        assert_eq!(t.games, 0);
        assert_eq!(t.chosen, Playout::Random);
    }
}
