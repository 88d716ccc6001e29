//! Meta-gaming: a few seconds of self-play in the start clock to choose, per game, among an
//! agent's search options, as strong GGP players do (CadiaPlayer and Sancho tune their
//! playouts to the game at hand). Today the choice is the playout policy ([`Playout`]):
//! uniformly random, MAST (which wins clearly at some games, breakthrough and reversi, and
//! loses at others, connect four, where a column's worth depends on its height), and, on an
//! engine with a batch machine, leaf-batched random playouts (many times more playouts, a
//! slower-growing tree; worthless where the batch machine is no faster).
//!
//! The candidates play each other on the engine the agent will use, in turn by pairs (a
//! round robin), roles rotated from game to game; in a one-role game each candidate plays
//! alone in turn. Every search has the same time per move, set from a probe of the game's
//! length so that a game takes a small share of the time: a candidate's speed counts, as it
//! does in play. The candidate with the higher mean score is chosen; on a tie, or when a
//! candidate has played no game or fewer than [`MIN_GAMES`] games fit in the time, the first
//! candidate (the agent's default) stays.

use super::mcts::{Mcts, MctsConfig, Playout};
use super::{Limit, Search};
use crate::machine::StateMachine;
use std::time::{Duration, Instant};

/// Games the candidates must have played for the choice to leave the default.
pub const MIN_GAMES: u32 = 2;
/// Time per move in the self-play games: at least, at most.
const MOVE_TIME: (Duration, Duration) = (Duration::from_millis(2), Duration::from_millis(200));
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
    /// Search time per move in the self-play games, in milliseconds.
    pub move_ms: u64,
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

    /// The candidates and their means, for logs: `random 0.42, mast 0.58`.
    pub fn summary(&self) -> String {
        let each = self.candidates.iter().enumerate().map(|(i, c)| format!("{c:?} {:.2}", self.mean(i)).to_lowercase());
        each.collect::<Vec<_>>().join(", ")
    }
}

/// The playout policies meta-gaming chooses among on `machine`: random (the default) and
/// MAST, and batched playouts where the engine has a batch machine.
pub fn candidates<M: StateMachine>(machine: &M) -> Vec<Playout> {
    let mut c = vec![Playout::Random, Playout::Mast];
    if machine.batch_lanes() > 0 {
        c.push(Playout::Batch);
    }
    c
}

/// Chooses the playout policy for `base` among [`candidates`] by self-play on a clone of
/// `machine` from its initial state until `deadline`.
pub fn choose_playout<M>(machine: &M, base: MctsConfig, deadline: Instant) -> Trial
where
    M: StateMachine + Clone,
{
    let t0 = Instant::now();
    let candidates = candidates(machine);
    let mut m = machine.clone();
    let roles = m.roles().len();
    let mut trial = Trial {
        candidates: candidates.clone(),
        score: vec![(0.0, 0); candidates.len()],
        games: 0,
        move_ms: 0,
        chosen: candidates[0],
        millis: 0,
    };
    if roles == 0 {
        return trial;
    }
    let start = m.initial_state();
    // The game's length, from a random playout: a move's time is set so that one game, every
    // role searching at every ply (the most there can be), takes about a tenth of the time.
    let plies = playout_depth(&mut m, &start, base.seed).max(1) as u32;
    let left = deadline.saturating_duration_since(Instant::now());
    let move_time = (left / 10 / plies / roles as u32).clamp(MOVE_TIME.0, MOVE_TIME.1);
    trial.move_ms = move_time.as_millis() as u64;

    // The pairs of candidates, in turn.
    let pairs: Vec<(usize, usize)> =
        (0..candidates.len()).flat_map(|a| (a + 1..candidates.len()).map(move |b| (a, b))).collect();
    let mut game = 0u64;
    while Instant::now() < deadline {
        // Game g: pair g % pairs; of its two, the one in front ((g / pairs) % 2) plays role
        // (g / pairs / 2) % roles and the other every other role (one role: alone).
        let (a, b) = pairs[(game % pairs.len() as u64) as usize];
        let round = game / pairs.len() as u64;
        let (first, second) = if round % 2 == 0 { (a, b) } else { (b, a) };
        let seat = ((round / 2) % roles as u64) as usize;
        let who: Vec<usize> = (0..roles).map(|r| if roles == 1 || r == seat { first } else { second }).collect();
        let seed = base.seed.wrapping_add(game.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut trees: Vec<Mcts<M>> = (0..roles)
            .map(|r| Mcts::new(MctsConfig { playout: candidates[who[r]], seed: seed ^ r as u64, ..base }))
            .collect();
        let Some(end) = self_play(&mut m, &start, &mut trees, move_time, deadline) else { break };
        for c in [first, second] {
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
    let played_all = trial.score.iter().all(|s| s.1 > 0);
    if trial.games >= MIN_GAMES && played_all {
        let best =
            (0..candidates.len()).max_by(|&a, &b| trial.mean(a).total_cmp(&trial.mean(b)).then(b.cmp(&a))).unwrap_or(0);
        trial.chosen = candidates[best];
    }
    trial.millis = t0.elapsed().as_millis() as u64;
    trial
}

/// The depth of one random playout from `state`.
fn playout_depth<M: StateMachine>(m: &mut M, state: &M::State, seed: u64) -> usize {
    use rand::SeedableRng;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let mut s = state.clone();
    let mut bufs = crate::machine::PlayoutBuffers::new(m);
    m.playout(&mut s, &mut rng, MAX_PLIES, &mut bufs).depth
}

/// One game from `start`, each role searching with its own tree for `move_time` per move
/// (roles with one legal move play it); the final state, or `None` if `deadline` came first.
fn self_play<M: StateMachine>(
    m: &mut M,
    start: &M::State,
    trees: &mut [Mcts<M>],
    move_time: Duration,
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
                    let until = (Instant::now() + move_time).min(deadline);
                    let c = tree.select(m, &state, r, Limit::until(until))?;
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

    fn propnet(file: &str, batch: bool) -> propnet::PropnetMachine {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
        let game = Game::load(&p).unwrap();
        propnet::build_with(&game, &Budget::default(), batch).unwrap().0
    }

    #[test]
    fn self_play_scores_both_candidates_in_both_seats_and_chooses_the_better() {
        let m = propnet("connect4.kif", false);
        assert_eq!(candidates(&m), [Playout::Random, Playout::Mast]);
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
        assert!((MOVE_TIME.0.as_millis()..=MOVE_TIME.1.as_millis()).contains(&(t.move_ms as u128)));
    }

    /// With a batch machine, batched playouts are a third candidate: the pairs play in turn,
    /// so every candidate plays two games in three, and each game's two goals add up to one.
    #[test]
    fn a_batch_machine_adds_batched_playouts_to_a_round_robin() {
        let m = propnet("connect4.kif", true);
        assert_eq!(candidates(&m), [Playout::Random, Playout::Mast, Playout::Batch]);
        let t = choose_playout(&m, MctsConfig::default(), Instant::now() + Duration::from_millis(3000));
        assert!(t.games >= 3, "{t:?}");
        let played: u32 = t.score.iter().map(|s| s.1).sum();
        assert_eq!(played, 2 * t.games, "{t:?}");
        for s in &t.score {
            assert!(s.1 >= 2 * (t.games / 3), "{t:?}");
        }
        let goals: f64 = t.score.iter().map(|s| s.0).sum();
        assert!((goals - t.games as f64).abs() < 1e-9, "{t:?}");
        let best = (0..3).max_by(|&a, &b| t.mean(a).total_cmp(&t.mean(b)).then(b.cmp(&a))).unwrap();
        assert_eq!(t.chosen, t.candidates[best], "{t:?}");
    }

    #[test]
    fn no_time_keeps_the_default() {
        let m = propnet("tictactoe.kif", true);
        let t = choose_playout(&m, MctsConfig::default(), Instant::now());
        assert_eq!(t.games, 0);
        assert_eq!(t.chosen, Playout::Random);
    }
}
