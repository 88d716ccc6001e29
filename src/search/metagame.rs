//! Meta-gaming: a few seconds of self-play in the start clock to choose, per game, among an
//! agent's search options, as strong GGP players do (CadiaPlayer and Sancho tune their
//! playouts to the game at hand). The choice is the playout ([`Candidate`]): the policy
//! ([`Playout`]: uniformly random; MAST, which wins clearly at some games, breakthrough and
//! reversi, and loses at others, connect four, where a column's worth depends on its
//! height; on an engine with a batch machine, leaf-batched random playouts, many times more
//! playouts and a slower-growing tree, worthless where the batch machine is no faster), and
//! for random and MAST whether decisive and anti-decisive moves override it
//! ([`crate::machine::decisive`]: ten to forty times slower playouts that take and block
//! immediate wins, which wins connect four and loses breakthrough); and, where the agent
//! lists such candidates, whether the search keeps AMAF statistics (`random+grave`: GRAVE
//! wins pentago, nineBoardTicTacToe and atariGo against plain UCT and loses connect four
//! and breakthrough, `matches/amaf`).
//!
//! The candidates (the agent's list, those the engine can play) play each other on the
//! engine the agent will use, in turn by pairs (a round robin), roles rotated from game to
//! game; in a one-role game each candidate plays alone in turn. Every search has the same
//! time per move, set from a probe of the game's length so that a game takes a small share
//! of the time: a candidate's speed counts, as it does in play. The candidate with the
//! higher mean score is chosen; on a tie, or when a candidate has played no game or fewer
//! than [`MIN_GAMES`] games fit in the time, the first candidate (the agent's default)
//! stays.

use super::mcts::{Amaf, Mcts, MctsConfig, Playout};
use super::{Limit, Search};
use crate::heuristic::Heuristic;
use crate::machine::decisive::{decisive_playout, DecisiveBuffers, DecisiveCounts};
use crate::machine::{PlayoutBuffers, StateMachine, Uniform};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Games the candidates must have played for the choice to leave the default.
pub const MIN_GAMES: u32 = 2;
/// Time per move in the self-play games: at least, at most.
const MOVE_TIME: (Duration, Duration) = (Duration::from_millis(2), Duration::from_millis(200));
/// Joint moves a self-play game may last before it is scored as it stands.
const MAX_PLIES: usize = 1000;

/// A playout meta-gaming may choose: a policy, with or without decisive moves, and with
/// or without AMAF statistics. Written `random`, `mast`, `batch`, `random+decisive`,
/// `mast+decisive`, `nst`, `nst+decisive`, each optionally followed by `+rave`, `+grave`,
/// `+killer` or `+similar` (agent key `metagame_candidates`): `random+grave` is random playouts under GRAVE, which
/// makes meta-gaming the per-game gate on AMAF that Sancho has (AMAF wins some games and
/// loses others: `matches/amaf`). Batched playouts have neither decisive moves nor AMAF.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(try_from = "String", into = "String")]
pub struct Candidate {
    pub playout: Playout,
    pub decisive: bool,
    /// The AMAF statistics the candidate searches with; `None`: the agent's own `amaf`.
    pub amaf: Option<Amaf>,
}

impl Candidate {
    /// Every playout, in the order of the default list, with the agent's own AMAF.
    pub const ALL: [Candidate; 7] = [
        Candidate { playout: Playout::Random, decisive: false, amaf: None },
        Candidate { playout: Playout::Mast, decisive: false, amaf: None },
        Candidate { playout: Playout::Batch, decisive: false, amaf: None },
        Candidate { playout: Playout::Random, decisive: true, amaf: None },
        Candidate { playout: Playout::Mast, decisive: true, amaf: None },
        Candidate { playout: Playout::Nst, decisive: false, amaf: None },
        Candidate { playout: Playout::Nst, decisive: true, amaf: None },
    ];

    /// The default list: the policies without decisive moves. Self-play at a few
    /// milliseconds per move judges a slow policy by a few dozen iterations a move, and it
    /// never chose decisive moves on the six test games (session 21), even at connect four,
    /// where they win nine matches in ten at 0.5 s a move: they are candidates only when an
    /// agent lists them.
    pub const DEFAULT: [Candidate; 3] = [Candidate::ALL[0], Candidate::ALL[1], Candidate::ALL[2]];

    /// The search options `base` with this candidate's playout (and AMAF, if it names one).
    pub fn apply(self, base: MctsConfig) -> MctsConfig {
        MctsConfig { playout: self.playout, decisive: self.decisive, amaf: self.amaf.unwrap_or(base.amaf), ..base }
    }
}

/// The AMAF modes a candidate may name (`Amaf::Off` is written by leaving the suffix out).
const AMAF_NAMES: [(&str, Amaf); 4] =
    [("rave", Amaf::Rave), ("grave", Amaf::Grave), ("killer", Amaf::Killer), ("similar", Amaf::Similar)];

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = match self.playout {
            Playout::Random => "random",
            Playout::Mast => "mast",
            Playout::Batch => "batch",
            Playout::Nst => "nst",
        };
        write!(f, "{p}{}", if self.decisive { "+decisive" } else { "" })?;
        match AMAF_NAMES.iter().find(|(_, a)| Some(*a) == self.amaf) {
            Some((name, _)) => write!(f, "+{name}"),
            None => Ok(()),
        }
    }
}

impl TryFrom<String> for Candidate {
    type Error = String;
    fn try_from(s: String) -> Result<Candidate, String> {
        let unknown = || {
            let all: Vec<String> = Candidate::ALL.iter().map(|c| c.to_string()).collect();
            format!(
                "unknown meta-gaming candidate {s:?}: one of {}, each optionally followed by +rave, +grave, +killer or +similar",
                all.join(", ")
            )
        };
        let text = s.trim();
        let (head, amaf) = match AMAF_NAMES.iter().find(|(name, _)| text.ends_with(&format!("+{name}"))) {
            Some((name, a)) => (&text[..text.len() - name.len() - 1], Some(*a)),
            None => (text, None),
        };
        let base = Candidate::ALL.into_iter().find(|c| c.to_string() == head).ok_or_else(unknown)?;
        if amaf.is_some() && base.playout == Playout::Batch {
            return Err(format!("meta-gaming candidate {s:?}: batched playouts gather no AMAF statistics"));
        }
        Ok(Candidate { amaf, ..base })
    }
}

impl From<Candidate> for String {
    fn from(c: Candidate) -> String {
        c.to_string()
    }
}

/// What the self-play found: the candidates, how each scored, and which was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    pub candidates: Vec<Candidate>,
    /// Per candidate: the sum of its goals (0..=1) over the games it played, and their count.
    pub score: Vec<(f64, u32)>,
    /// Games played to the end.
    pub games: u32,
    /// Search time per move in the self-play games, in milliseconds.
    pub move_ms: u64,
    pub chosen: Candidate,
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
        let each = self.candidates.iter().enumerate().map(|(i, c)| format!("{c} {:.2}", self.mean(i)));
        each.collect::<Vec<_>>().join(", ")
    }
}

/// The candidates of `allowed` that `machine` can play (batched playouts need a batch
/// machine), in their order; the first alone when none can.
pub fn candidates<M: StateMachine>(machine: &M, allowed: &[Candidate]) -> Vec<Candidate> {
    let c: Vec<Candidate> =
        allowed.iter().copied().filter(|c| c.playout != Playout::Batch || machine.batch_lanes() > 0).collect();
    if c.is_empty() {
        allowed.iter().copied().take(1).collect()
    } else {
        c
    }
}

/// Chooses the playout for `base` among the [`candidates`] of `allowed` by self-play on
/// clones of `machine` from its initial state until `deadline`, `threads` games at a time
/// (one thread each, games `w`, `w + threads`, ... on thread `w`), every search with
/// `heuristic` (its playouts cut as `base.cutoff` says). With fewer than two
/// candidates nothing is played: the one there is (or `base`'s own playout) is chosen.
pub fn choose_playout<M>(
    machine: &M,
    base: MctsConfig,
    allowed: &[Candidate],
    threads: usize,
    deadline: Instant,
    heuristic: Option<&Arc<Heuristic>>,
) -> Trial
where
    M: StateMachine + Clone + Send,
{
    let t0 = Instant::now();
    let mut candidates = candidates(machine, allowed);
    if candidates.is_empty() {
        candidates.push(Candidate { playout: base.playout, decisive: base.decisive, amaf: None });
    }
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
    if roles == 0 || candidates.len() < 2 {
        trial.millis = t0.elapsed().as_millis() as u64;
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
    let threads = threads.max(1) as u64;
    let (candidates, pairs, start) = (&candidates, &pairs, &start);
    // Each thread's games: per game, (candidate, mean goal of its roles) for both (one alone
    // in a one-role game).
    let per_thread: Vec<Vec<[Option<(usize, f64)>; 2]>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|w| {
                let mut m = machine.clone();
                s.spawn(move || {
                    let mut out = Vec::new();
                    let mut game = w;
                    while Instant::now() < deadline {
                        let Some(scored) =
                            one_game(&mut m, start, candidates, pairs, game, base, move_time, deadline, heuristic)
                        else {
                            break;
                        };
                        out.push(scored);
                        game += threads;
                    }
                    out
                })
            })
            .collect();
        // A worker that panicked played no game.
        workers.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    for scored in per_thread.iter().flatten() {
        for &(c, v) in scored.iter().flatten() {
            trial.score[c].0 += v;
            trial.score[c].1 += 1;
        }
        trial.games += 1;
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

/// Self-play game number `game`: pair `game % pairs`; of its two, the one in front
/// (`(game / pairs) % 2`) plays role `(game / pairs / 2) % roles` and the other every other
/// role (in a one-role game, the one in front plays alone). Each candidate's mean goal over
/// its roles (none for a candidate with no role); `None` if `deadline` came first.
#[allow(clippy::too_many_arguments)]
fn one_game<M: StateMachine>(
    m: &mut M,
    start: &M::State,
    candidates: &[Candidate],
    pairs: &[(usize, usize)],
    game: u64,
    base: MctsConfig,
    move_time: Duration,
    deadline: Instant,
    heuristic: Option<&Arc<Heuristic>>,
) -> Option<[Option<(usize, f64)>; 2]> {
    let roles = m.roles().len();
    let (a, b) = pairs[(game % pairs.len() as u64) as usize];
    let round = game / pairs.len() as u64;
    let (first, second) = if round % 2 == 0 { (a, b) } else { (b, a) };
    let seat = ((round / 2) % roles as u64) as usize;
    let who: Vec<usize> = (0..roles).map(|r| if roles == 1 || r == seat { first } else { second }).collect();
    let seed = base.seed.wrapping_add(game.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut trees: Vec<Mcts<M>> =
        (0..roles).map(|r| Mcts::new(MctsConfig { seed: seed ^ r as u64, ..candidates[who[r]].apply(base) })).collect();
    for t in &mut trees {
        t.set_heuristic(heuristic.cloned());
    }
    let end = self_play(m, start, &mut trees, move_time, deadline)?;
    let mut mean = |c: usize| {
        let mine: Vec<usize> = (0..roles).filter(|&r| who[r] == c).collect();
        let sum: f64 = mine.iter().map(|&r| super::reward(m, &end, r)).sum();
        (!mine.is_empty()).then(|| (c, sum / mine.len() as f64))
    };
    Some([mean(first), mean(second)])
}

/// The cost above which decisive moves are judged too slow: Sancho's bound on the cost of
/// its greedy rollouts (the branching factor times the share of plies where the greedy
/// check found nothing; they are turned off above 8).
pub const GATE_MAX_COST: f64 = 8.0;
/// The share of turn-taking plies (one role with a choice) a game needs for the gate.
pub const GATE_TURN_TAKING: f64 = 0.9;
/// The share of plies whose move decisive or anti-decisive moves must change for the gate:
/// one in twenty. Where they change fewer they only slow the playouts: at checkersTiny
/// (0.015 overrides a ply) the gated player scored 27.5 ± 10.9 against the same player
/// without the gate (matches/gate-1, session 23, played before this bound), while connect
/// four (0.15-0.17 overrides a ply: 67.5), its 9x6 board (55.0) and nineBoardTicTacToe
/// (0.21: 95.0) did not lose. The bound was set after that tournament.
pub const GATE_MIN_OVERRIDES: f64 = 0.05;
/// Decisive playouts the gate plays at most: the first half teaches the learned filter
/// which moves end games, the second half is measured.
const GATE_PLAYOUTS: usize = 200;
/// Measured playouts the gate needs for a verdict (else it stays shut).
const GATE_MIN_MEASURED: usize = 10;

/// The decisive-move gate's measure (agent key `decisive_gate`): whether decisive and
/// anti-decisive moves are cheap and active enough in this game to be played whatever the
/// self-play says. Self-play at a few milliseconds a move cannot judge them: at connect
/// four they lose it at 11 ms a move (30.8 against random playouts' 69.2), draw at 41 ms,
/// and win nine duels in ten at 0.5 s (session 21); at nineBoardTicTacToe they win eight in
/// ten at 0.5 s. So the gate measures their cost and effect instead, as Sancho decides its
/// greedy rollouts: decisive playouts with the learned filter, uniformly random moves, from
/// the initial state; on when the game has at most two roles and takes turns
/// ([`GATE_TURN_TAKING`] of the plies), the overrides are frequent ([`GATE_MIN_OVERRIDES`]
/// of the plies) and the cost, the mover's legal moves per ply times the share of plies
/// without an override, is at most [`GATE_MAX_COST`]. The cost counts legal moves, not the
/// candidates the learned filter lets through: with the filter, breakthrough tries a few moves a ply,
/// yet its decisive MAST playouts lost all four duels against MAST at 0.5 s a move
/// (session 23; 3-0-7 in session 21 without the filter), while its 25-odd moves a ply keep
/// it shut by the cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    /// Playouts measured (after those that taught the filter).
    pub measured: usize,
    /// Legal moves of the roles with a choice, per ply.
    pub branching: f64,
    /// Candidates the learned filter let through, per ply.
    pub tries_per_ply: f64,
    /// Plies whose move a decisive or anti-decisive move replaced, per ply.
    pub overrides_per_ply: f64,
    /// The share of plies where one role had a choice.
    pub turn_taking: f64,
    /// `branching × (1 − overrides_per_ply)`.
    pub cost: f64,
    pub on: bool,
    pub millis: u64,
}

impl Gate {
    /// For logs: `on: cost 5.9, 6.5 moves/ply, 6.4 tries/ply, 0.094 overrides/ply,
    /// turn-taking 1.00 (100 playouts)`.
    pub fn summary(&self) -> String {
        format!(
            "{}: cost {:.1}, {:.1} moves/ply, {:.1} tries/ply, {:.3} overrides/ply, turn-taking {:.2} ({} playouts)",
            if self.on { "on" } else { "off" },
            self.cost,
            self.branching,
            self.tries_per_ply,
            self.overrides_per_ply,
            self.turn_taking,
            self.measured
        )
    }

    /// The candidates to try when the gate is on: each with decisive moves (batched
    /// playouts, which cannot have them, become random ones), in order, once each.
    pub fn candidates(&self, allowed: &[Candidate]) -> Vec<Candidate> {
        if !self.on {
            return allowed.to_vec();
        }
        let mut out: Vec<Candidate> = Vec::new();
        for c in allowed {
            let playout = if c.playout == Playout::Batch { Playout::Random } else { c.playout };
            let d = Candidate { playout, decisive: true, amaf: c.amaf };
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out
    }
}

/// Measures the [`Gate`] on clones of `machine` until `until` (or [`GATE_PLAYOUTS`] playouts).
pub fn decisive_gate<M: StateMachine + Clone>(machine: &M, seed: u64, until: Instant) -> Gate {
    use rand::SeedableRng;
    let t0 = Instant::now();
    let mut m = machine.clone();
    let roles = m.roles().len();
    let start = m.initial_state();
    let mut bufs = PlayoutBuffers::new(&mut m);
    let mut dec = DecisiveBuffers::learned(&mut m);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let mut s = start.clone();
    // The counts before each playout, so that the measured half can be chosen at the end.
    let mut before: Vec<DecisiveCounts> = Vec::with_capacity(GATE_PLAYOUTS + 1);
    while before.len() < GATE_PLAYOUTS && Instant::now() < until {
        before.push(dec.counts());
        s.clone_from(&start);
        decisive_playout(&mut m, &mut s, &mut rng, MAX_PLIES, &mut bufs, &mut dec, &mut Uniform, true);
    }
    let played = before.len();
    let measured = played - played / 2;
    let c = dec.counts().since(before.get(played / 2).copied().unwrap_or_default());
    let per_ply = |x: u64| if c.plies == 0 { 0.0 } else { x as f64 / c.plies as f64 };
    let (branching, tries_per_ply) = (per_ply(c.choices), per_ply(c.tried));
    let (overrides_per_ply, turn_taking) = (per_ply(c.overrides), per_ply(c.single));
    let cost = branching * (1.0 - overrides_per_ply);
    let on = roles <= 2
        && measured >= GATE_MIN_MEASURED
        && turn_taking >= GATE_TURN_TAKING
        && overrides_per_ply >= GATE_MIN_OVERRIDES
        && cost <= GATE_MAX_COST;
    let millis = t0.elapsed().as_millis() as u64;
    Gate { measured, branching, tries_per_ply, overrides_per_ply, turn_taking, cost, on, millis }
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
    fn the_decisive_gate_opens_where_moves_are_few_and_wins_are_missed() {
        let far = Instant::now() + Duration::from_secs(30);
        let c4 = propnet("connect4.kif", false);
        let g = decisive_gate(&c4, 1, far);
        assert!(g.on && g.measured == GATE_PLAYOUTS / 2, "{g:?}");
        assert!(g.cost < 7.0 && g.branching > g.cost && g.overrides_per_ply > 0.1 && g.turn_taking > 0.95, "{g:?}");
        // Our breakthrough: the learned filter tries about one move a ply, but eleven legal
        // moves a ply keep the gate shut.
        let g = decisive_gate(&propnet("breakthrough5.kif", false), 1, far);
        assert!(!g.on && g.cost > GATE_MAX_COST && g.tries_per_ply < 2.0 && g.overrides_per_ply > 0.0, "{g:?}");
        // The planted trap's moves are few, but decisive moves change almost none of them.
        let g = decisive_gate(&propnet("planted_trap.kif", false), 1, far);
        assert!(!g.on && g.cost <= GATE_MAX_COST && g.overrides_per_ply < GATE_MIN_OVERRIDES, "{g:?}");
        // No time, no verdict: shut.
        let none = decisive_gate(&c4, 1, Instant::now());
        assert!(!none.on && none.measured == 0, "{none:?}");
        // Open, the candidates all have decisive moves (batched ones become random), once each.
        let open = Gate { on: true, ..none.clone() };
        assert_eq!(open.candidates(&Candidate::DEFAULT), [Candidate::ALL[3], Candidate::ALL[4]]);
        assert_eq!(open.candidates(&[Candidate::ALL[2], Candidate::ALL[0]]), [Candidate::ALL[3]]);
        assert_eq!(none.candidates(&Candidate::DEFAULT), Candidate::DEFAULT);
    }

    #[test]
    fn self_play_scores_both_candidates_in_both_seats_and_chooses_the_better() {
        let m = propnet("connect4.kif", false);
        let two = &Candidate::ALL[..3];
        assert_eq!(candidates(&m, two), Candidate::ALL[..2]);
        let t = choose_playout(&m, MctsConfig::default(), two, 1, Instant::now() + Duration::from_millis(2000), None);
        // About ten games on a quiet machine; a loaded one plays fewer.
        assert!(t.games >= MIN_GAMES, "{t:?}");
        // Two roles: every game scores each candidate once.
        assert_eq!(t.score[0].1, t.games);
        assert_eq!(t.score[1].1, t.games);
        // Connect four is zero-sum with draws at 50: the means add up to 1.
        assert!((t.mean(0) + t.mean(1) - 1.0).abs() < 1e-9, "{t:?}");
        let better = if t.mean(1) > t.mean(0) { Candidate::ALL[1] } else { Candidate::ALL[0] };
        assert_eq!(t.chosen, better, "{t:?}");
        assert!((MOVE_TIME.0.as_millis()..=MOVE_TIME.1.as_millis()).contains(&(t.move_ms as u128)));
    }

    /// With a batch machine, batched playouts are a third candidate: the pairs play in turn,
    /// so every candidate plays two games in three, and each game's two goals add up to one.
    #[test]
    fn a_batch_machine_adds_batched_playouts_to_a_round_robin() {
        let m = propnet("connect4.kif", true);
        let three = &Candidate::ALL[..3];
        assert_eq!(candidates(&m, three), three);
        let t = choose_playout(&m, MctsConfig::default(), three, 1, Instant::now() + Duration::from_millis(3000), None);
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
        let t = choose_playout(&m, MctsConfig::default(), &Candidate::ALL, 1, Instant::now(), None);
        assert_eq!(t.games, 0);
        assert_eq!(t.chosen, Candidate::ALL[0]);
    }

    /// One candidate (or none the engine can play) is chosen without a game; an empty list
    /// falls back to the search's own playout.
    #[test]
    fn a_single_candidate_is_chosen_without_self_play() {
        let m = propnet("tictactoe.kif", false);
        let soon = Instant::now() + Duration::from_millis(500);
        let batch = [Candidate::ALL[2]];
        let t = choose_playout(&m, MctsConfig::default(), &batch, 1, soon, None);
        assert_eq!((t.games, t.chosen), (0, batch[0]));
        let dec = [Candidate::ALL[4]];
        assert_eq!(choose_playout(&m, MctsConfig::default(), &dec, 1, soon, None).chosen, dec[0]);
        let mast = MctsConfig { playout: Playout::Mast, ..MctsConfig::default() };
        assert_eq!(choose_playout(&m, mast, &[], 1, soon, None).chosen, Candidate::ALL[1]);
    }

    /// The candidates' written names read back, and unknown ones are errors that list them.
    #[test]
    fn candidates_are_written_by_name() {
        for c in Candidate::ALL {
            assert_eq!(Candidate::try_from(c.to_string()), Ok(c));
        }
        assert_eq!(Candidate::ALL[4].to_string(), "mast+decisive");
        let e = Candidate::try_from("batch+decisive".to_string()).unwrap_err();
        assert!(e.contains("random+decisive"), "{e}");
        // An AMAF suffix names the candidate's AMAF statistics; without one, the agent's own.
        let grave = Candidate::try_from("random+grave".to_string()).expect("random+grave");
        assert_eq!(grave, Candidate { amaf: Some(Amaf::Grave), ..Candidate::ALL[0] });
        assert_eq!(grave.to_string(), "random+grave");
        let md = Candidate::try_from(" mast+decisive+rave".to_string()).expect("mast+decisive+rave");
        assert_eq!(md, Candidate { amaf: Some(Amaf::Rave), ..Candidate::ALL[4] });
        assert_eq!(Candidate::try_from(md.to_string()), Ok(md));
        let nd = Candidate::try_from("nst+decisive".to_string()).expect("nst+decisive");
        assert_eq!((nd.playout, nd.decisive, nd.amaf), (Playout::Nst, true, None));
        assert_eq!(Candidate::try_from("nst".to_string()).map(|c| c.playout), Ok(Playout::Nst));
        for bad in ["batch+grave", "random+off", "grave", "random+grave+decisive", "random+grave+grave"] {
            assert!(Candidate::try_from(bad.to_string()).is_err(), "{bad}");
        }
        assert!(Candidate::try_from("random+ grave".to_string()).unwrap_err().contains("+grave"));
        // Applied: the suffix sets the search's AMAF, no suffix keeps the base's.
        let base = MctsConfig { amaf: Amaf::Killer, ..MctsConfig::default() };
        assert_eq!(grave.apply(base).amaf, Amaf::Grave);
        assert_eq!(Candidate::ALL[0].apply(base).amaf, Amaf::Killer);
    }

    /// An AMAF candidate plays the round robin against plain UCT: each side plays every game,
    /// the gate keeps a candidate's AMAF when it adds decisive moves, and the choice is the
    /// better mean.
    #[test]
    fn amaf_candidates_play_against_plain_uct() {
        let m = propnet("connect4.kif", false);
        let grave = Candidate { amaf: Some(Amaf::Grave), ..Candidate::ALL[0] };
        let two = [Candidate::ALL[0], grave];
        let t = choose_playout(&m, MctsConfig::default(), &two, 1, Instant::now() + Duration::from_millis(2000), None);
        assert!(t.games >= MIN_GAMES, "{t:?}");
        assert_eq!((t.score[0].1, t.score[1].1), (t.games, t.games), "{t:?}");
        assert!((t.mean(0) + t.mean(1) - 1.0).abs() < 1e-9, "{t:?}");
        let better = if t.mean(1) > t.mean(0) { grave } else { Candidate::ALL[0] };
        assert_eq!(t.chosen, better, "{t:?}");
        assert!(t.summary().contains("random+grave"), "{}", t.summary());
        let open = Gate { on: true, ..decisive_gate(&m, 1, Instant::now()) };
        assert_eq!(
            open.candidates(&two),
            [Candidate::ALL[3], Candidate { amaf: Some(Amaf::Grave), ..Candidate::ALL[3] }]
        );
    }

    /// With decisive candidates, the round robin covers all five (the batch machine is
    /// attached), and a decisive candidate's searches do play decisive moves.
    #[test]
    fn decisive_candidates_play_in_the_round_robin() {
        let m = propnet("connect4.kif", true);
        let t = choose_playout(
            &m,
            MctsConfig::default(),
            &Candidate::ALL,
            1,
            Instant::now() + Duration::from_millis(4000),
            None,
        );
        assert_eq!(t.candidates, Candidate::ALL);
        assert!(t.games >= 5, "{t:?}");
        assert!(t.score.iter().all(|s| s.1 > 0), "{t:?}");
        assert!(t.summary().contains("random+decisive"), "{}", t.summary());
        let c = Candidate::ALL[3].apply(MctsConfig::default());
        assert!(c.decisive && c.playout == Playout::Random);
    }

    /// Two threads play the round robin's games between them: every game is scored as with
    /// one (each scores its two candidates once, the goals of a zero-sum game adding up).
    #[test]
    fn two_threads_share_the_round_robin() {
        let m = propnet("connect4.kif", true);
        let three = &Candidate::ALL[..3];
        let t = choose_playout(&m, MctsConfig::default(), three, 2, Instant::now() + Duration::from_millis(3000), None);
        assert!(t.games >= 3, "{t:?}");
        let played: u32 = t.score.iter().map(|s| s.1).sum();
        assert_eq!(played, 2 * t.games, "{t:?}");
        let goals: f64 = t.score.iter().map(|s| s.0).sum();
        assert!((goals - t.games as f64).abs() < 1e-9, "{t:?}");
        assert!(t.score.iter().all(|s| s.1 > 0), "{t:?}");
    }

    /// In a one-role game each candidate plays alone: one score per game.
    #[test]
    fn one_role_games_score_one_candidate_each() {
        // Three steps of pressing a or b; 100 for three a's, 50 otherwise.
        let text = "(role p) (init (step 0)) (succ 0 1) (succ 1 2) (succ 2 3)
            (legal p a) (legal p b)
            (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
            (<= (next (as ?y)) (does p a) (true (as ?x)) (succ ?x ?y))
            (<= (next (as 1)) (does p a) (not (hasa)))
            (<= (next (as ?x)) (does p b) (true (as ?x)))
            (<= hasa (true (as ?x)))
            (<= terminal (true (step 3)))
            (<= (goal p 100) (true (as 3)))
            (<= (goal p 50) (not (true (as 3))))";
        let game = Game::parse("solo.kif", text).unwrap();
        let m = propnet::build_with(&game, &Budget::default(), false).unwrap().0;
        assert_eq!(m.roles().len(), 1);
        let t = choose_playout(
            &m,
            MctsConfig::default(),
            &Candidate::ALL[..2],
            2,
            Instant::now() + Duration::from_millis(1500),
            None,
        );
        let played: u32 = t.score.iter().map(|s| s.1).sum();
        assert!(t.games >= 2, "{t:?}");
        assert_eq!(played, t.games, "{t:?}");
    }
}
