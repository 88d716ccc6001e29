//! Agents: configurations read from TOML (`agents/*.toml`) and the per-match [`Player`],
//! which owns an engine (the propnet, or the interpreter when the propnet cannot be built in
//! time), the current state and a searcher, and speaks in move texts only. The protocol
//! layer and the match harness see matches through [`Player`]; nothing here does IO beyond
//! reading a config file.

pub mod duel;
pub mod search_bench;
pub mod trap_log;

use crate::gdl::Game;
use crate::heuristic::Heuristic;
use crate::hsg::prune::PrunedMachine;
use crate::hsg::HsgOptions;
use crate::interp::Interpreter;
use crate::machine::StateMachine;
use crate::propnet::{self, Budget};
use crate::search::mcts::{Amaf, Playout, Simultaneous};
use crate::search::metagame::Candidate;
use crate::search::split::{SplitMachine, SplitSearch};
use crate::search::{
    FactoredMcts, FactoredOptions, FirstLegal, FlatMc, Limit, Mcts, MctsConfig, ParallelMcts, RandomMove, Search,
    TreeParallelMcts,
};
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which searcher an agent uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Random,
    First,
    Flatmc,
    Mcts,
}

/// How MCTS uses more than one thread (agent key `parallel`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Parallel {
    /// A tree per thread, root statistics summed.
    #[default]
    Root,
    /// One tree; helper threads play its playouts.
    Tree,
}

/// An agent configuration, as written in `agents/NAME.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// The name given in reply to `(info)`.
    pub name: String,
    pub kind: Kind,
    /// UCB exploration constant (rewards in 0..=1).
    pub exploration: f64,
    /// The exploration constant where AMAF statistics are on (`amaf`, or a meta-gaming
    /// candidate such as `random+grave`); unset: `exploration`.
    pub amaf_exploration: Option<f64>,
    /// Seconds kept back from each clock for messaging and slack.
    pub margin_s: f64,
    /// Search threads: MCTS with more than one searches as `parallel` says.
    pub threads: usize,
    /// How MCTS uses more than one thread: `"root"`, one tree per thread, their root
    /// statistics summed ([`ParallelMcts`]); `"tree"`, one tree whose playouts are shared
    /// with `threads - 1` helper threads under virtual loss ([`TreeParallelMcts`]; RAVE,
    /// GRAVE and killer-RAVE statistics are gathered from their playouts too, similarity-guided
    /// AMAF is refused).
    pub parallel: Parallel,
    /// Most MCTS nodes kept.
    pub node_budget: usize,
    pub seed: u64,
    /// Longest random playout, in joint moves.
    pub playout_depth: usize,
    /// MCTS per factor where the game's factors are searched apart (statically, or
    /// contingently as play goes): see `search::factored`; `threads` factors are searched at
    /// once, each on one thread. Elsewhere the agent is the one its other keys describe. MCTS
    /// on the propnet only.
    pub factoring: bool,
    /// With `factoring`: switch to factors found contingently (latch modification) during
    /// play, where the factors found are searched apart (the same rule as for static factors:
    /// `search::factored::plan`). Off by default; on in `agents/mcts.toml`. Connect four splits
    /// after a few moves into parts that are not worth searching apart (it lost every match
    /// when they were), and the rule now searches it whole.
    pub contingent_factoring: bool,
    /// With `factoring`: in games with an opponent, search per factor also where no role's
    /// move is a compound of per-factor parts (each move plays in one factor: serial, as in
    /// dualConnect4, or set by the turn, as in chinook). Off by default: there factored trees
    /// gain no width and lose what couples the factors through time (free passes, races); the
    /// whole game is searched instead (`search::factored`; the notes of issue 12).
    pub factor_serial: bool,
    /// With `factoring`, where some role's moves are compounds of per-factor parts (a move
    /// that plays on two boards at once): search the whole game in one tree, each compound
    /// move chosen one factor's part per tree level (`search::split`), instead of a tree per
    /// factor with the other factors frozen (`search::factored`). The split tree is the
    /// game's own, so what couples the factors in time (a race to the first line on either
    /// board) is searched, and the agent's own searcher (threads, meta-gaming) runs it.
    pub split_compound: bool,
    /// `factotum serve`: keep searching after replying to START and PLAY, until the next
    /// message of the match arrives (MCTS kinds only: they keep their tree, and the next
    /// turn reuses it).
    pub ponder: bool,
    /// MCTS's all-moves-as-first statistics: `off` (plain UCT), `rave`, `grave`, `killer`
    /// (killer-RAVE) or `similar` (similarity-guided GRAVE); see `search::mcts::Amaf`.
    pub amaf: Amaf,
    /// b in the AMAF weight β = ñ / (ñ + n + b·ñ·n): the weight halves near 1/b visits.
    pub rave_bias: f64,
    /// GRAVE: visits a node needs for its AMAF statistics to be used below it.
    pub grave_ref: u32,
    /// Killer-RAVE: joint moves before the end of a decisive playout whose moves count.
    pub killer_window: u32,
    /// MCTS-Solver (proven values backed up; traps detected and logged). Off: plain UCT.
    pub solver: bool,
    /// Similarity-guided AMAF: least tactical similarity for statistics to be shared.
    pub sim_rho: f64,
    /// Similarity-guided AMAF: visits before a node's signature is computed.
    pub sim_visits: u32,
    /// Depth (plies) of the tactical signatures.
    pub sim_depth: u32,
    /// Share of the search time that similarity may take.
    pub sim_share: f64,
    /// Similarity hints: remember the traps proven in a match and check similar positions
    /// for them with the exact trap finder (see `search::trap_memory`).
    pub trap_hints: bool,
    /// Exact trap checks: a root move whose mean falls well below the best it showed, and
    /// the move about to be played, are checked by the exact trap finder, and kept out of
    /// the choice once proven lost (see `search::trap_check`).
    pub trap_check: bool,
    /// How MCTS playouts choose moves: `random`, `mast`, `nst` (MAST with 2-grams), or
    /// `batch` (random playouts many at once on the propnet's batch machine, from
    /// `batch_leaves` leaves per batch); see `search::mcts::Playout`.
    pub playout: Playout,
    /// With `playout = "batch"`: leaves selected (with virtual loss) per batch of 256
    /// playouts, 1 to 256; each leaf gets 256 / `batch_leaves` playouts.
    pub batch_leaves: usize,
    /// MAST: share of playout moves chosen at random (ε).
    pub mast_epsilon: f64,
    /// MAST: factor the move statistics are multiplied by from one turn to the next.
    pub mast_decay: f64,
    /// Meta-gaming: in the start clock, once the propnet is built, half of the time left is
    /// spent on self-play between the `metagame_candidates` playouts, and the best is played
    /// (`search::metagame`; logged). `playout` and `decisive` are then what a build after
    /// the start clock plays.
    pub metagame: bool,
    /// Meta-gaming's candidates, in order (the first is kept on a tie): `random`, `mast`,
    /// `batch`, `random+decisive`, `mast+decisive` (the first three by default).
    pub metagame_candidates: Vec<Candidate>,
    /// Decisive and anti-decisive moves in random and MAST playouts (a move that wins at
    /// once is played, one that lets the opponent win at once is avoided where another does
    /// not): `machine::decisive`. Not with `playout = "batch"`.
    pub decisive: bool,
    /// Decisive moves try only moves that have ended a playout before (a learned filter,
    /// Sancho's "terminating moves"), not every legal move (default true).
    pub decisive_filter: bool,
    /// Meta-gaming first measures decisive moves' cost and effect in the game
    /// (`search::metagame::Gate`); where they are cheap and active, only candidates with
    /// decisive moves play the self-play. Needs `metagame = true`.
    pub decisive_gate: bool,
    /// Transpositions: a state reached by another order of moves shares its node (a search
    /// graph; `search::mcts::MctsConfig::transpositions`).
    pub transpositions: bool,
    /// How MCTS chooses where two or more roles move at once: `ucb` (decoupled UCB, as
    /// everywhere) or `regret` (regret matching, the move played sampled from the average
    /// strategy); see `search::mcts::Simultaneous`.
    pub simultaneous: Simultaneous,
    /// Regret matching's share of uniform exploration γ, 0..=1.
    pub regret_exploration: f64,
    /// Regret matching: least average probability for a move to be played at the root
    /// (thresholding), 0..=1.
    pub regret_threshold: f64,
    /// One-player games, propnet: explore the state graph in the start clock (at most half of
    /// what the build left of it; meta-gaming gets half of the rest) and leave out the moves
    /// into hyperstates proven worse than a sibling's (implicitly failed ones;
    /// `crate::hsg::prune`).
    pub hyperstates: bool,
    /// States explored for `hyperstates` at most.
    pub hyperstate_states: usize,
    /// With `hyperstates`: search statistics pooled over the states equal but for their step
    /// counters (the weak equivalence's classes; `crate::hsg::prune`,
    /// `search::mcts::MctsConfig::position_classes`).
    pub hyperstate_sharing: bool,
    /// Propnet, MCTS: random and MAST playouts end at the first state whose goals the goal
    /// latches holding there all decide (`factor::outcome`; proved in the start clock): the
    /// same rewards, from shorter playouts.
    pub goal_latches: bool,
    /// MCTS, in the start clock (before meta-gaming, an eighth of the time left): learn a
    /// heuristic from random playouts (`crate::heuristic`: counts of base propositions and
    /// goal values that predict the outcome; logged); where one is found, random and MAST
    /// playouts end after `cutoff` joint moves and are scored by it, in the self-play too.
    pub heuristic: bool,
    /// Joint moves after which a playout is cut where `heuristic` found one (1 or more).
    pub cutoff: usize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            name: "factotum".into(),
            kind: Kind::Mcts,
            exploration: 0.7,
            margin_s: 2.5,
            threads: 1,
            parallel: Parallel::Root,
            node_budget: 200_000,
            seed: 1,
            playout_depth: 1000,
            factoring: false,
            contingent_factoring: false,
            factor_serial: false,
            split_compound: false,
            ponder: true,
            amaf: Amaf::Off,
            rave_bias: MctsConfig::default().rave_bias,
            grave_ref: MctsConfig::default().grave_ref,
            killer_window: MctsConfig::default().killer_window,
            amaf_exploration: None,
            solver: true,
            sim_rho: MctsConfig::default().sim_rho,
            sim_visits: MctsConfig::default().sim_visits,
            sim_depth: MctsConfig::default().sim_depth,
            sim_share: MctsConfig::default().sim_share,
            trap_hints: false,
            trap_check: false,
            playout: Playout::Random,
            batch_leaves: MctsConfig::default().batch_leaves,
            mast_epsilon: MctsConfig::default().mast_epsilon,
            mast_decay: MctsConfig::default().mast_decay,
            metagame: false,
            metagame_candidates: Candidate::DEFAULT.to_vec(),
            decisive: false,
            decisive_filter: true,
            decisive_gate: false,
            transpositions: false,
            simultaneous: Simultaneous::Ucb,
            regret_exploration: MctsConfig::default().regret_exploration,
            regret_threshold: MctsConfig::default().regret_threshold,
            hyperstates: false,
            hyperstate_states: 1_000_000,
            hyperstate_sharing: false,
            goal_latches: false,
            heuristic: false,
            cutoff: 10,
        }
    }
}

impl AgentConfig {
    pub fn parse(text: &str) -> Result<AgentConfig, String> {
        let cfg: AgentConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        if !(cfg.exploration.is_finite() && cfg.exploration >= 0.0) {
            return Err(format!("exploration must be a finite number >= 0, not {}", cfg.exploration));
        }
        if let Some(e) = cfg.amaf_exploration.filter(|e| !(e.is_finite() && *e >= 0.0)) {
            return Err(format!("amaf_exploration must be a finite number >= 0, not {e}"));
        }
        if !(cfg.margin_s.is_finite() && cfg.margin_s >= 0.0) {
            return Err(format!("margin_s must be a finite number >= 0, not {}", cfg.margin_s));
        }
        if !(cfg.rave_bias.is_finite() && cfg.rave_bias >= 0.0) {
            return Err(format!("rave_bias must be a finite number >= 0, not {}", cfg.rave_bias));
        }
        if !(cfg.sim_rho.is_finite() && (0.0..=1.0).contains(&cfg.sim_rho)) {
            return Err(format!("sim_rho must be a number in 0..=1, not {}", cfg.sim_rho));
        }
        if !(cfg.sim_share.is_finite() && (0.0..=1.0).contains(&cfg.sim_share)) {
            return Err(format!("sim_share must be a number in 0..=1, not {}", cfg.sim_share));
        }
        if !(1..=4).contains(&cfg.sim_depth) {
            return Err(format!("sim_depth must be 1 to 4, not {}", cfg.sim_depth));
        }
        if !(cfg.mast_epsilon.is_finite() && (0.0..=1.0).contains(&cfg.mast_epsilon)) {
            return Err(format!("mast_epsilon must be a number in 0..=1, not {}", cfg.mast_epsilon));
        }
        if !(cfg.mast_decay.is_finite() && (0.0..=1.0).contains(&cfg.mast_decay)) {
            return Err(format!("mast_decay must be a number in 0..=1, not {}", cfg.mast_decay));
        }
        if !(cfg.regret_exploration.is_finite() && (0.0..=1.0).contains(&cfg.regret_exploration)) {
            return Err(format!("regret_exploration must be a number in 0..=1, not {}", cfg.regret_exploration));
        }
        if !(cfg.regret_threshold.is_finite() && (0.0..=1.0).contains(&cfg.regret_threshold)) {
            return Err(format!("regret_threshold must be a number in 0..=1, not {}", cfg.regret_threshold));
        }
        if !(1..=256).contains(&cfg.batch_leaves) {
            return Err(format!("batch_leaves must be 1 to 256, not {}", cfg.batch_leaves));
        }
        if cfg.playout == Playout::Batch && cfg.amaf != Amaf::Off {
            return Err("playout = \"batch\" gathers no AMAF statistics: it needs amaf = \"off\"".into());
        }
        if cfg.playout == Playout::Batch && cfg.decisive {
            return Err(
                "playout = \"batch\" plays uniformly random moves on the batch machine: it cannot have decisive = true"
                    .into(),
            );
        }
        if cfg.hyperstates && cfg.hyperstate_states == 0 {
            return Err("hyperstate_states must be at least 1".into());
        }
        if cfg.hyperstate_sharing && !cfg.hyperstates {
            return Err("hyperstate_sharing pools statistics over hyperstates: it needs hyperstates = true".into());
        }
        if cfg.cutoff == 0 {
            return Err("cutoff must be at least 1 (heuristic = false plays playouts to the end)".into());
        }
        if cfg.heuristic && cfg.kind != Kind::Mcts {
            return Err("heuristic scores MCTS playouts: it needs kind = \"mcts\"".into());
        }
        if cfg.decisive_gate && !cfg.metagame {
            return Err("decisive_gate is part of meta-gaming: it needs metagame = true".into());
        }
        if cfg.parallel == Parallel::Tree && cfg.amaf == Amaf::Similar {
            return Err(
                "parallel = \"tree\": helper threads gather no similarity-guided AMAF statistics: it needs another amaf"
                    .into(),
            );
        }
        if cfg.metagame_candidates.is_empty() {
            return Err("metagame_candidates must name at least one candidate".into());
        }
        // (`Candidate`'s parser already refuses AMAF with batched playouts.)
        if let Some(c) = cfg.metagame_candidates.iter().find(|c| c.amaf == Some(Amaf::Similar)) {
            if cfg.parallel == Parallel::Tree {
                return Err(format!(
                    "metagame_candidates: {c}: parallel = \"tree\": helper threads gather no similarity-guided AMAF statistics"
                ));
            }
        }
        if let Some(c) = cfg
            .metagame_candidates
            .iter()
            .enumerate()
            .find_map(|(i, c)| cfg.metagame_candidates[..i].contains(c).then_some(c))
        {
            return Err(format!("metagame_candidates names {c} twice"));
        }
        if cfg.killer_window == 0 {
            return Err("killer_window must be at least 1".into());
        }
        if cfg.node_budget == 0 {
            return Err("node_budget must be at least 1".into());
        }
        Ok(cfg)
    }

    pub fn load(path: &Path) -> Result<AgentConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        AgentConfig::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn mcts(&self, seed: u64) -> MctsConfig {
        MctsConfig {
            exploration: self.exploration,
            amaf_exploration: self.amaf_exploration.unwrap_or(self.exploration),
            node_budget: self.node_budget,
            seed,
            max_playout_depth: self.playout_depth,
            amaf: self.amaf,
            rave_bias: self.rave_bias,
            grave_ref: self.grave_ref,
            killer_window: self.killer_window,
            solver: self.solver,
            sim_rho: self.sim_rho,
            sim_visits: self.sim_visits,
            sim_depth: self.sim_depth,
            sim_share: self.sim_share,
            trap_hints: self.trap_hints,
            trap_check: self.trap_check,
            playout: self.playout,
            mast_epsilon: self.mast_epsilon,
            mast_decay: self.mast_decay,
            batch_leaves: self.batch_leaves,
            decisive: self.decisive,
            decisive_filter: self.decisive_filter,
            transpositions: self.transpositions,
            position_classes: self.hyperstate_sharing,
            simultaneous: self.simultaneous,
            regret_exploration: self.regret_exploration,
            regret_threshold: self.regret_threshold,
            cutoff: if self.heuristic { self.cutoff } else { 0 },
            ..MctsConfig::default()
        }
    }

    /// The MCTS options of this configuration, seeded with `seed`.
    pub fn mcts_config(&self, seed: u64) -> MctsConfig {
        self.mcts(seed)
    }

    /// Its playouts as meta-gaming names them (`mast`, `random+decisive`, ...): flat Monte
    /// Carlo's are `random`; `none` for the agents that play none.
    pub fn playout_name(&self) -> String {
        match self.kind {
            Kind::Mcts => {
                let amaf = (self.amaf != Amaf::Off).then_some(self.amaf);
                Candidate { playout: self.playout, decisive: self.decisive, amaf }.to_string()
            }
            Kind::Flatmc => "random".into(),
            Kind::Random | Kind::First => "none".into(),
        }
    }

    /// Whether the server searches between messages: `ponder` set and a searcher that
    /// keeps its tree.
    pub fn pondering(&self) -> bool {
        self.ponder && self.kind == Kind::Mcts
    }

    pub fn margin(&self) -> Duration {
        Duration::from_secs_f64(self.margin_s)
    }

    /// A searcher for this configuration, seeded with `seed` (the config's seed mixed with a
    /// match's).
    pub fn searcher<M: StateMachine + Clone + Send + 'static>(&self, seed: u64) -> Box<dyn Search<M>> {
        self.searcher_with(seed, None)
    }

    /// [`AgentConfig::searcher`], MCTS playouts cut and scored by `heuristic` where one was
    /// learned (`heuristic`, `cutoff`).
    pub fn searcher_with<M: StateMachine + Clone + Send + 'static>(
        &self,
        seed: u64,
        heuristic: Option<Arc<Heuristic>>,
    ) -> Box<dyn Search<M>> {
        let mcts = self.mcts(seed);
        match self.kind {
            Kind::Mcts if self.threads > 1 && self.parallel == Parallel::Tree => {
                Box::new(TreeParallelMcts::<M>::new(mcts, self.threads).with_heuristic(heuristic))
            }
            Kind::Mcts if self.threads > 1 => {
                Box::new(ParallelMcts::<M>::new(mcts, self.threads).with_heuristic(heuristic))
            }
            Kind::Random => Box::new(RandomMove::new(seed)),
            Kind::First => Box::new(FirstLegal),
            Kind::Flatmc => Box::new(FlatMc::new(seed, self.playout_depth)),
            Kind::Mcts => {
                let mut t = Mcts::<M>::new(mcts);
                t.set_heuristic(heuristic);
                Box::new(t)
            }
        }
    }
}

/// The search deadline and the latest reply time for a clock of `clock` started at
/// `receipt`: `clock - margin` to search when the clock allows it (else 30% of the clock),
/// and the reply at the latest halfway between that and the clock's end.
pub fn deadlines(receipt: Instant, clock: Duration, margin: Duration) -> (Instant, Instant) {
    let search = if clock > margin { clock - margin } else { clock.mul_f64(0.3) };
    let reply = search + (clock - search) / 2;
    (receipt + search, receipt + reply)
}

/// What a player chose on a turn.
#[derive(Clone, Debug)]
pub struct Selected {
    pub text: String,
    pub value: Option<f64>,
    pub iterations: u64,
    pub proven: bool,
}

/// One match as one role sees it: an engine, the current state and a searcher, all in move
/// texts (ggp-base's printed form).
pub trait Player: Send {
    fn roles(&self) -> &[String];
    fn role(&self) -> usize;
    /// Joint moves played so far.
    fn step(&self) -> usize;
    /// `"propnet"`, `"propnet+batch"` (with the batch machine, for batched playouts) or
    /// `"interp"`.
    fn engine(&self) -> &'static str;
    /// Advances by one joint move given as texts in role order. On error the state is
    /// unchanged.
    fn advance(&mut self, moves: &[String]) -> Result<(), String>;
    fn is_terminal(&mut self) -> bool;
    /// The role's first legal move in the current state.
    fn first_legal(&mut self) -> Option<String>;
    /// The role's move when it has exactly one legal move in the current state.
    fn forced_move(&mut self) -> Option<String>;
    /// Searches until `limit` is over (its deadline, or its cancel flag); `Err` when the role
    /// has no move.
    fn search(&mut self, limit: Limit<'_>) -> Result<Selected, String>;
    /// Searches until `deadline`; `Err` when the role has no move.
    fn select(&mut self, deadline: Instant) -> Result<Selected, String> {
        self.search(Limit::until(deadline))
    }
    /// Every role's goal in the current state.
    fn goals(&mut self) -> Vec<Option<u32>>;
    /// The traps the searches since the last call detected in the current state, as log
    /// events of match `match_id` in `game` (each state and move once).
    fn take_traps(&mut self, match_id: &str, game: &str) -> Vec<trap_log::TrapEvent>;
    /// The playouts it searches with (`random`, `mast`, `batch`, `+decisive`): its
    /// configuration's, or meta-gaming's choice.
    fn playout(&self) -> String;
    /// What a person watching sees: the state, its legal moves, and the last search's
    /// statistics at its root.
    fn view(&mut self) -> PlayerView;
    /// The factors its search plays apart now (`None`: the game is searched whole; see
    /// [`Search::factors`]).
    fn factors(&self) -> Option<usize> {
        None
    }
}

/// The match as one player sees it (for the web view): the current state's facts, the
/// role's legal moves there, and the moves of the last search's root, most visited first.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PlayerView {
    pub step: usize,
    pub state: Vec<String>,
    pub terminal: bool,
    pub legal: Vec<String>,
    pub best: Vec<MoveStat>,
}

/// A root move of a search: its visits and mean reward (0..=1).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MoveStat {
    pub text: String,
    pub visits: u64,
    pub value: f64,
}

/// How many root moves a [`PlayerView`] keeps.
const VIEW_MOVES: usize = 8;

struct GamePlayer<M: StateMachine> {
    machine: M,
    state: M::State,
    next: M::State,
    role: usize,
    step: usize,
    search: Box<dyn Search<M>>,
    legal: Vec<M::Move>,
    joint: Vec<M::Move>,
    engine: &'static str,
    playout: String,
}

/// Compares a received move with a printed one: exactly, else ignoring ASCII case and
/// runs of white space (`(mark 1 1)` vs `( mark 1 1 )`).
pub fn same_move(received: &str, printed: &str) -> bool {
    if received == printed {
        return true;
    }
    let norm = |s: &str| -> String {
        let spaced = s.replace('(', " ( ").replace(')', " ) ");
        spaced.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase()
    };
    norm(received) == norm(printed)
}

impl<M: StateMachine + Send + 'static> Player for GamePlayer<M> {
    fn roles(&self) -> &[String] {
        self.machine.roles()
    }
    fn role(&self) -> usize {
        self.role
    }
    fn step(&self) -> usize {
        self.step
    }
    fn engine(&self) -> &'static str {
        self.engine
    }
    fn factors(&self) -> Option<usize> {
        self.search.factors()
    }
    fn playout(&self) -> String {
        self.playout.clone()
    }
    fn advance(&mut self, moves: &[String]) -> Result<(), String> {
        let roles = self.machine.roles().len();
        if moves.len() != roles {
            return Err(format!("{} moves for {roles} roles", moves.len()));
        }
        if self.machine.is_terminal(&self.state) {
            return Err("moves after the end of the game".into());
        }
        self.joint.clear();
        for (r, text) in moves.iter().enumerate() {
            self.machine.legal_moves(&self.state, r, &mut self.legal);
            let found = self
                .legal
                .iter()
                .copied()
                .find(|&m| self.machine.move_text(m) == *text)
                .or_else(|| self.legal.iter().copied().find(|&m| same_move(text, &self.machine.move_text(m))));
            match found {
                Some(m) => self.joint.push(m),
                None => return Err(format!("{text} is not a legal move of {}", self.machine.roles()[r])),
            }
        }
        self.machine.next_state(&self.state, &self.joint, &mut self.next);
        std::mem::swap(&mut self.state, &mut self.next);
        self.step += 1;
        Ok(())
    }
    fn is_terminal(&mut self) -> bool {
        self.machine.is_terminal(&self.state)
    }
    fn first_legal(&mut self) -> Option<String> {
        self.machine.legal_moves(&self.state, self.role, &mut self.legal);
        self.legal.first().map(|&m| self.machine.move_text(m))
    }
    fn forced_move(&mut self) -> Option<String> {
        self.machine.legal_moves(&self.state, self.role, &mut self.legal);
        match self.legal[..] {
            [m] => Some(self.machine.move_text(m)),
            _ => None,
        }
    }
    fn search(&mut self, limit: Limit<'_>) -> Result<Selected, String> {
        let c = self
            .search
            .select(&mut self.machine, &self.state, self.role, limit)
            .ok_or_else(|| "no legal move (terminal state?)".to_string())?;
        // Belt and braces: never hand out a move that is not legal.
        self.machine.legal_moves(&self.state, self.role, &mut self.legal);
        if !self.legal.contains(&c.mv) {
            return Err(format!("searcher {} chose an illegal move", self.search.name()));
        }
        Ok(Selected { text: self.machine.move_text(c.mv), value: c.value, iterations: c.iterations, proven: c.proven })
    }
    fn goals(&mut self) -> Vec<Option<u32>> {
        (0..self.machine.roles().len()).map(|r| self.machine.goal(&self.state, r)).collect()
    }
    fn view(&mut self) -> PlayerView {
        let terminal = self.machine.is_terminal(&self.state);
        let legal = if terminal {
            Vec::new()
        } else {
            self.machine.legal_moves(&self.state, self.role, &mut self.legal);
            self.legal.iter().map(|&m| self.machine.move_text(m)).collect()
        };
        let mut root = self.search.root_moves(self.role);
        root.sort_by_key(|m| std::cmp::Reverse(m.1));
        let best = root
            .into_iter()
            .take(VIEW_MOVES)
            .map(|(mv, n, w)| MoveStat {
                text: self.machine.move_text(mv),
                visits: n,
                value: if n == 0 { 0.0 } else { w / n as f64 },
            })
            .collect();
        PlayerView { step: self.step, state: self.machine.state_facts(&self.state), terminal, legal, best }
    }
    fn take_traps(&mut self, match_id: &str, game: &str) -> Vec<trap_log::TrapEvent> {
        let found = self.search.take_traps();
        if found.is_empty() {
            return Vec::new();
        }
        let state = self.machine.state_facts(&self.state);
        let state_hash = trap_log::state_hash(&state);
        let m = &self.machine;
        found
            .into_iter()
            .map(|t| trap_log::TrapEvent {
                match_id: match_id.to_string(),
                game: game.to_string(),
                step: self.step,
                role: m.roles()[t.role].clone(),
                player: String::new(),
                state: state.clone(),
                state_hash: state_hash.clone(),
                trap_move: m.move_text(t.mv),
                refutation: t.line.iter().map(|j| j.iter().map(|&mv| m.move_text(mv)).collect()).collect(),
                depth: t.line.len().saturating_sub(1),
                refutation_complete: t.complete,
                found_by: t.how.to_string(),
                hint: t.hint,
                value: t.value,
                chosen: m.move_text(t.chosen),
                avoided: t.chosen != t.mv,
                time_ms: trap_log::now_ms(),
            })
            .collect()
    }
}

fn player<M: StateMachine + Clone + Send + 'static>(
    machine: M,
    role: usize,
    cfg: &AgentConfig,
    seed: u64,
    engine: &'static str,
) -> Box<dyn Player> {
    let search = cfg.searcher::<M>(seed);
    player_with(machine, role, search, engine, cfg.playout_name())
}

fn player_with<M: StateMachine + Clone + Send + 'static>(
    mut machine: M,
    role: usize,
    search: Box<dyn Search<M>>,
    engine: &'static str,
    playout: String,
) -> Box<dyn Player> {
    let state = machine.initial_state();
    let next = state.clone();
    let (legal, joint) = (Vec::new(), Vec::new());
    Box::new(GamePlayer { machine, state, next, role, step: 0, search, legal, joint, engine, playout })
}

/// The engine's name for a propnet player: `propnet+batch` with the batch machine attached.
fn propnet_engine(m: &propnet::PropnetMachine) -> &'static str {
    if m.batch_lanes() > 0 {
        "propnet+batch"
    } else {
        "propnet"
    }
}

/// The index of `name` among `roles`: exact, else ignoring ASCII case.
pub fn role_index(roles: &[String], name: &str) -> Option<usize> {
    roles.iter().position(|r| r == name).or_else(|| roles.iter().position(|r| r.eq_ignore_ascii_case(name)))
}

/// [`role_index`], or an error naming the roles there are.
fn role_in(roles: &[String], role: &str) -> Result<usize, String> {
    role_index(roles, role).ok_or_else(|| format!("no role {role} in the game (roles: {})", roles.join(" ")))
}

/// How a propnet build went.
enum Outcome<T> {
    Built(T),
    /// The time (or the cancel flag) ran out: a build without the start clock may finish.
    TimedOut,
    /// Too large, invalid or panicked: the interpreter it is.
    Failed,
}

/// What `build` returns, or why not (logged); a panic is a failure.
fn propnet_or_log<T>(build: impl FnOnce() -> Result<T, propnet::GroundError>) -> Outcome<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(build)) {
        Ok(Ok(t)) => Outcome::Built(t),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "propnet not built; using the interpreter");
            match e {
                propnet::GroundError::Timeout(_) => Outcome::TimedOut,
                _ => Outcome::Failed,
            }
        }
        Err(_) => {
            tracing::error!("propnet build panicked; using the interpreter");
            Outcome::Failed
        }
    }
}

/// What the build of a player for one game reads, at every step of the start clock's work
/// (propnet, analysis, heuristic, meta-gaming): the game, the agent's options, the seed, the
/// build's budget, and whether the build is under the start clock (`in_start_clock`:
/// meta-gaming and the heuristic then take their shares of what is left of it; a build in the
/// background plays the configured options).
#[derive(Clone, Copy)]
struct Build<'a> {
    game: &'a Game,
    cfg: &'a AgentConfig,
    seed: u64,
    budget: &'a Budget,
    in_start_clock: bool,
}

/// A propnet player for `role` of the game, within the build's budget.
fn propnet_player(b: Build<'_>, role: &str) -> Result<Outcome<Box<dyn Player>>, String> {
    let Build { game, cfg, budget, in_start_clock, .. } = b;
    // The batch machine, for batched playouts or for meta-gaming to try them.
    let batch = cfg.kind == Kind::Mcts && (cfg.playout == Playout::Batch || (cfg.metagame && in_start_clock));
    let build = build_budget(budget, in_start_clock, Instant::now());
    Ok(match propnet_or_log(|| propnet::build_keeping_net(game, &build, batch)) {
        Outcome::Built((mut m, report, net)) => {
            let r = role_in(m.roles(), role)?;
            tracing::info!(game = %game.name, build_s = report.total_s, "propnet built");
            // The network's graph facts and latches, made once for the goal latches and the
            // factor analysis.
            let mcts = cfg.kind == Kind::Mcts;
            let facts = if mcts && (cfg.goal_latches || cfg.factoring) {
                net_facts(&net, budget, report.total_s, game)
            } else {
                None
            };
            if let (true, Some(facts)) = (cfg.goal_latches && mcts, &facts) {
                set_goal_latches(&net, facts, &mut m, game);
            }
            let (net, watch) = match factored_search(b, net, facts, report.total_s, m.roles().len()) {
                Factoring::Apart(f) => {
                    // Meta-gaming chooses the playouts on the whole game; the factor trees'
                    // rollouts play the whole game, so they use the same.
                    let chosen = chosen_config(b, &m, None);
                    let search = f.with_playout(chosen.playout).with_plain(chosen.searcher(b.seed));
                    return Ok(Outcome::Built(player_with(
                        m,
                        r,
                        Box::new(search),
                        "propnet+factors",
                        chosen.playout_name(),
                    )));
                }
                Factoring::Watch(f) => (None, Some(f)),
                Factoring::No(net) => (net, None),
                Factoring::Split(a) => match SplitMachine::new(m.clone(), &a) {
                    Some(split) => {
                        return Ok(Outcome::Built(split_player(b, m, split, r)));
                    }
                    None => {
                        tracing::info!(game = %game.name, "compound moves: fewer than two factors offer a choice; searched whole");
                        (None, None)
                    }
                },
            };
            // Contingent factoring wraps the searcher the player gets (after meta-gaming).
            let wrap = move |plain: Box<dyn Search<propnet::PropnetMachine>>| match watch {
                Some(f) => Box::new(f.with_plain(plain)) as Box<dyn Search<propnet::PropnetMachine>>,
                None => plain,
            };
            let engine = propnet_engine(&m);
            // The network is kept only for hyperstate sharing's key (else freed before search).
            let net = net.filter(|_| cfg.hyperstate_sharing);
            match budget.deadline {
                Some(deadline) if cfg.hyperstates && in_start_clock && m.roles().len() == 1 => {
                    let now = Instant::now();
                    let until = now + deadline.saturating_duration_since(now) / 2;
                    let opts = HsgOptions {
                        max_states: cfg.hyperstate_states,
                        deadline: Some(until),
                        ..HsgOptions::default()
                    };
                    match PrunedMachine::new(m.clone(), &opts) {
                        Ok((mut pruned, rep)) => {
                            if let Some(net) = net {
                                let (mask, ignored) = crate::hsg::BaseMask::weak(&net, m.initial_state().bits.len());
                                tracing::info!(game = %game.name, ignored = ignored.len(), "hyperstates: statistics pooled over states equal but for these bases");
                                pruned = pruned.with_position_key(std::sync::Arc::new(move |s| mask.key(s)));
                            }
                            tracing::info!(
                                game = %game.name,
                                states = rep.states,
                                hyperstates = rep.hyperstates,
                                complete = rep.complete,
                                start = rep.start_tag.name(),
                                start_best = ?rep.start_best,
                                pruned_states = rep.pruned_states,
                                pruned_moves = rep.pruned_moves,
                                ms = rep.ms,
                                "hyperstates: moves into hyperstates proven worse are pruned"
                            );
                            let engine = if cfg.hyperstate_sharing { "propnet+hsg+pool" } else { "propnet+hsg" };
                            Outcome::Built(start_player(b, pruned, r, engine, |s| s))
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "hyperstates: no graph; playing unpruned");
                            Outcome::Built(start_player(b, m, r, engine, wrap))
                        }
                    }
                }
                _ => Outcome::Built(start_player(b, m, r, engine, wrap)),
            }
        }
        Outcome::TimedOut => Outcome::TimedOut,
        Outcome::Failed => Outcome::Failed,
    })
}

/// The network's graph facts and latches ([`crate::factor::NetFacts`]), made in the start
/// clock while it has at least the build's time plus a second left; `None` past that, or
/// when the proof panics (logged).
fn net_facts(net: &propnet::Net, budget: &Budget, build_s: f64, game: &Game) -> Option<crate::factor::NetFacts> {
    if let Some(deadline) = budget.deadline {
        let left = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
        if left < build_s + 1.0 {
            tracing::info!(game = %game.name, left_s = left, build_s, "latches skipped: too little of the start clock left");
            return None;
        }
    }
    let t = Instant::now();
    let facts = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::factor::NetFacts::new(net)));
    match facts {
        Ok(f) => {
            tracing::info!(game = %game.name, latches = f.latches.len(), ms = t.elapsed().as_secs_f64() * 1000.0, "latches proved");
            Some(f)
        }
        Err(_) => {
            tracing::error!(game = %game.name, "latch proof panicked; no goal latches or factoring");
            None
        }
    }
}

/// Goal latches end the machine's playouts where every goal is decided
/// ([`propnet::PropnetMachine::set_goal_latches`], `factor::outcome`), from the latches
/// proved in the start clock; a panic in the proof is logged and changes nothing.
fn set_goal_latches(net: &propnet::Net, facts: &crate::factor::NetFacts, m: &mut propnet::PropnetMachine, game: &Game) {
    let t = Instant::now();
    let Ok(table) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::factor::outcome::playout_table_with(net, facts)
    })) else {
        tracing::error!(game = %game.name, "goal latch proof panicked; playouts run to the end");
        return;
    };
    m.set_goal_latches(&table);
    tracing::info!(game = %game.name, goal_latches = table.len(), ms = t.elapsed().as_secs_f64() * 1000.0, "goal latches: playouts end where every goal is decided");
}

/// What [`factored_search`] found for a game.
enum Factoring {
    /// The factors are searched apart from the start: the factored search, for the player's
    /// playouts and searcher (after meta-gaming) to complete.
    Apart(FactoredMcts),
    /// The game does not factor (or is searched whole), but its latches may make it factor
    /// during play: the factored search, to wrap the searcher the player gets.
    Watch(FactoredMcts),
    /// No factoring; the network back where nobody else holds it.
    No(Option<propnet::Net>),
    /// Compound moves chosen part by part in the whole game's tree (`split_compound`): the
    /// analysis, to split the player's machine by.
    Split(Box<crate::factor::Analysis>),
}

/// With `factoring`, the factored search ([`FactoredMcts`], its factors searched on up to
/// `threads` threads at once) where the game's factors are searched apart, with the agent's
/// own searcher for the turns where nothing is there to choose; with `contingent_factoring`
/// also where factors may be found during play (the search then wraps the searcher the
/// player gets, so while nothing factors it is that searcher plus a check of the latches per
/// turn; not in one-role games that the hyperstate pruning searches); else the network back,
/// for the player every other game gets (threads, meta-gaming, hyperstates as configured).
/// The analysis runs over `facts` (the network's graph and latches, made once in the start
/// clock; none when that was skipped: no factoring), only while the start clock has at least
/// the build's time plus a second left (it takes a fraction of the build's time on the
/// corpus), within a quarter of what is left of it ([`crate::factor::analyse_until`]), and a
/// panic in it is logged and plays unfactored.
fn factored_search(
    b: Build<'_>,
    net: propnet::Net,
    facts: Option<crate::factor::NetFacts>,
    build_s: f64,
    roles: usize,
) -> Factoring {
    let Build { game, cfg, seed, budget, .. } = b;
    let Some(facts) = facts.filter(|_| cfg.factoring && cfg.kind == Kind::Mcts) else {
        return Factoring::No(Some(net));
    };
    if let Some(deadline) = budget.deadline {
        let left = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
        if left < build_s + 1.0 {
            tracing::info!(game = %game.name, left_s = left, build_s, "factor analysis skipped: too little of the start clock left");
            return Factoring::No(Some(net));
        }
    }
    // Hyperstate pruning plays one-role games on a machine of its own, which the factored
    // search does not wrap.
    let contingent = cfg.contingent_factoring && !(cfg.hyperstates && roles == 1);
    let opts = FactoredOptions { contingent, serial: cfg.factor_serial, threads: cfg.threads.max(1) };
    let net = std::sync::Arc::new(net);
    // At most a quarter of what is left of the start clock: past it the analysis merges every
    // factor and ends (not factorable, never wrongly split), leaving the rest to meta-gaming.
    let deadline = budget.deadline.map(|d| {
        let now = Instant::now();
        now + d.saturating_duration_since(now) / 4
    });
    let analysed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let a = facts.analyse_until(&net, deadline);
        let (verdict, factors, millis) = (a.verdict.clone(), a.factors.len(), a.millis);
        let compound =
            a.shapes.iter().any(|s| matches!(s, crate::factor::MoveShape::Compound | crate::factor::MoveShape::Mixed));
        if cfg.split_compound && verdict == crate::factor::Verdict::Factorable && compound {
            return Err(Box::new(a));
        }
        Ok((FactoredMcts::with_facts(cfg.mcts(seed), net.clone(), a, facts, opts), verdict, factors, millis))
    }));
    let (f, verdict, factors, analysis_ms) = match analysed {
        Ok(Ok(x)) => x,
        Ok(Err(a)) => {
            tracing::info!(game = %game.name, factors = a.factors.len(), analysis_ms = a.millis, "factor analysis: compound moves, chosen part by part in the whole game's tree");
            return Factoring::Split(a);
        }
        Err(_) => {
            tracing::error!(game = %game.name, "factor analysis panicked; playing unfactored");
            return Factoring::No(std::sync::Arc::try_unwrap(net).ok());
        }
    };
    drop(net);
    tracing::info!(
        game = %game.name,
        ?verdict,
        factors,
        analysis_ms,
        apart = f.plan().is_ok(),
        why = f.plan().err().unwrap_or("searched apart"),
        watches_latches = f.watches_latches(),
        "factor analysis"
    );
    if f.plan().is_ok() {
        Factoring::Apart(f)
    } else if f.watches_latches() {
        Factoring::Watch(f)
    } else {
        Factoring::No(f.into_net())
    }
}

/// The player for a built machine: with `metagame` under the start clock, its playout policy
/// chosen by self-play in half of what is left of the clock.
fn start_player<M: StateMachine + Clone + Send + 'static>(
    b: Build<'_>,
    m: M,
    r: usize,
    engine: &'static str,
    wrap: impl FnOnce(Box<dyn Search<M>>) -> Box<dyn Search<M>>,
) -> Box<dyn Player> {
    let heuristic = learned_heuristic(b, &m);
    let chosen = chosen_config(b, &m, heuristic.as_ref());
    // The record names cut playouts: `mast+cutoff` (batched playouts are never cut).
    let mut playout = chosen.playout_name();
    if heuristic.is_some() && chosen.playout != Playout::Batch {
        playout.push_str("+cutoff");
    }
    player_with(m, r, wrap(chosen.searcher_with::<M>(b.seed, heuristic)), engine, playout)
}

/// With `heuristic` under the start clock: a heuristic learned from random playouts on `m`
/// in an eighth of what is left of the clock (logged, found or not).
fn learned_heuristic<M: StateMachine + Clone>(b: Build<'_>, m: &M) -> Option<Arc<Heuristic>> {
    let Build { game, cfg, seed, budget, in_start_clock } = b;
    let deadline = budget.deadline?;
    if !(cfg.heuristic && cfg.kind == Kind::Mcts && in_start_clock) {
        return None;
    }
    let l = crate::heuristic::learn_within(&mut m.clone(), seed, deadline);
    match &l.heuristic {
        Some(h) => tracing::info!(
            game = %game.name,
            heuristic = %h.summary(m.roles()),
            ms = l.millis,
            "heuristic: playouts cut after {} joint moves", cfg.cutoff
        ),
        None => tracing::info!(
            game = %game.name,
            quality = ?l.quality,
            playouts = l.playouts,
            ms = l.millis,
            "heuristic: none found, playouts run to the end"
        ),
    }
    l.heuristic.map(Arc::new)
}

/// `cfg`, or with `metagame` under the start clock, `cfg` with the playout policy chosen by
/// self-play on `m` in half of what is left of the clock (logged).
fn chosen_config<M: StateMachine + Clone + Send + 'static>(
    b: Build<'_>,
    m: &M,
    heuristic: Option<&Arc<Heuristic>>,
) -> AgentConfig {
    let Build { game, cfg, seed, budget, in_start_clock } = b;
    match budget.deadline {
        Some(deadline) if cfg.metagame && cfg.kind == Kind::Mcts && in_start_clock => {
            let now = Instant::now();
            let until = now + deadline.saturating_duration_since(now) / 2;
            let candidates = metagame_candidates(m, cfg, seed, until, &game.name);
            let trial =
                crate::search::metagame::choose_playout(m, cfg.mcts(seed), &candidates, cfg.threads, until, heuristic);
            tracing::info!(
                game = %game.name,
                chosen = %trial.chosen,
                games = trial.games,
                means = %trial.summary(),
                move_ms = trial.move_ms,
                ms = trial.millis,
                "meta-gaming: playout policy chosen by self-play"
            );
            AgentConfig {
                playout: trial.chosen.playout,
                decisive: trial.chosen.decisive,
                amaf: trial.chosen.amaf.unwrap_or(cfg.amaf),
                ..cfg.clone()
            }
        }
        _ => cfg.clone(),
    }
}

/// The player of a game whose compound moves are chosen part by part (`split_compound`): the
/// agent's searcher (after meta-gaming, on the split machine) over `split`, in a
/// [`SplitSearch`] on the game's machine `m`.
fn split_player(b: Build<'_>, m: propnet::PropnetMachine, split: SplitMachine, r: usize) -> Box<dyn Player> {
    tracing::info!(game = %b.game.name, steps = split.steps().len(), "compound moves: one factor's part per tree level");
    let chosen = chosen_config(b, &split, None);
    let search = SplitSearch::new(split, chosen.searcher::<SplitMachine>(b.seed));
    player_with(m, r, Box::new(search), "propnet+split", chosen.playout_name())
}

/// Meta-gaming's candidates for `cfg`: its list, or with `decisive_gate` and the gate on
/// (measured for at most an eighth of the time to `until`, logged), the list with decisive
/// moves.
pub fn metagame_candidates<M: StateMachine + Clone>(
    m: &M,
    cfg: &AgentConfig,
    seed: u64,
    until: Instant,
    game: &str,
) -> Vec<Candidate> {
    if !cfg.decisive_gate {
        return cfg.metagame_candidates.clone();
    }
    let now = Instant::now();
    let gate = crate::search::metagame::decisive_gate(m, seed, now + until.saturating_duration_since(now) / 8);
    tracing::info!(game = %game, gate = %gate.summary(), ms = gate.millis, "meta-gaming: decisive moves' gate");
    gate.candidates(&cfg.metagame_candidates)
}

/// The time of the start clock kept from the propnet build for the interpreter, should the
/// build miss its deadline: a quarter of the time left, at most [`START_KEEP_MAX`]. A build
/// overruns its deadline by up to a second or two, and the interpreter then takes its own
/// time: the corpus sweep's first plays at racer4, laikLee_hex and pancakes88 (5 s start
/// clocks) came before any engine and were answered nil. A build cut short goes on in the
/// background ([`BACKGROUND_BUILD`]).
pub const START_KEEP_SHARE: f64 = 0.25;
pub const START_KEEP_MAX: Duration = Duration::from_secs(3);

/// The budget of a propnet build: in the start clock, the time from `now` to the deadline
/// less what is kept for the interpreter ([`START_KEEP_SHARE`], [`START_KEEP_MAX`]).
fn build_budget(budget: &Budget, in_start_clock: bool, now: Instant) -> Budget {
    let mut b = budget.clone();
    if in_start_clock {
        b.deadline = budget.deadline.map(|d| {
            let left = d.saturating_duration_since(now);
            now + left - left.mul_f64(START_KEEP_SHARE).min(START_KEEP_MAX)
        });
    }
    b
}

/// How long a propnet that missed its start clock may go on building in the background.
pub const BACKGROUND_BUILD: Duration = Duration::from_secs(300);

/// Builds a player for `role` of `game`: the propnet if it builds by `deadline`, else the
/// interpreter. When only the time ran out, the propnet build goes on in the background
/// ([`BACKGROUND_BUILD`] at most) and the player switches to it at the first search after it
/// is ready.
pub fn new_player(
    game: &Game,
    role: &str,
    cfg: &AgentConfig,
    seed: u64,
    deadline: Instant,
) -> Result<Box<dyn Player>, String> {
    let budget = Budget { deadline: Some(deadline), ..Budget::default() };
    match propnet_player(Build { game, cfg, seed, budget: &budget, in_start_clock: true }, role)? {
        Outcome::Built(p) => Ok(p),
        Outcome::Failed => interp_player(game, role, cfg, seed, deadline),
        Outcome::TimedOut => {
            let now = interp_player(game, role, cfg, seed, deadline)?;
            Ok(Box::new(Upgrading::start(now, game.clone(), role.to_string(), cfg.clone(), seed)))
        }
    }
}

/// A player on the interpreter while its propnet goes on building on another thread (it
/// missed the start clock). At the start of the first search after the build is done, the
/// moves played so far are replayed on the propnet player, which then plays. Dropping it
/// (the match is over) cancels the build.
struct Upgrading {
    current: Box<dyn Player>,
    pending: Option<std::sync::mpsc::Receiver<Option<Box<dyn Player>>>>,
    /// Joint moves played, as received, while the build is pending.
    played: Vec<Vec<String>>,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Upgrading {
    fn start(now: Box<dyn Player>, game: Game, role: String, cfg: AgentConfig, seed: u64) -> Upgrading {
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = cancel.clone();
        let span = tracing::Span::current();
        let spawned = std::thread::Builder::new().name("propnet-build".into()).spawn(move || {
            let _e = span.enter();
            let t0 = Instant::now();
            let budget = Budget { deadline: Some(t0 + BACKGROUND_BUILD), cancel: Some(flag), ..Budget::default() };
            let b = Build { game: &game, cfg: &cfg, seed, budget: &budget, in_start_clock: false };
            let built = match propnet_player(b, &role) {
                Ok(Outcome::Built(p)) => {
                    tracing::info!(build_s = t0.elapsed().as_secs_f64(), "propnet built in the background");
                    Some(p)
                }
                Ok(_) => None,
                Err(e) => {
                    tracing::warn!(error = %e, "background propnet build");
                    None
                }
            };
            let _ = tx.send(built);
        });
        let pending = match spawned {
            Ok(_) => {
                tracing::info!("the interpreter plays while the propnet builds in the background");
                Some(rx)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the background propnet build");
                None
            }
        };
        Upgrading { current: now, pending, played: Vec::new(), cancel }
    }

    /// Switches to the propnet player if its build is done.
    fn upgrade(&mut self) {
        let Some(rx) = &self.pending else { return };
        let mut p = match rx.try_recv() {
            Ok(Some(p)) => p,
            Err(std::sync::mpsc::TryRecvError::Empty) => return,
            Ok(None) | Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.pending = None;
                return;
            }
        };
        self.pending = None;
        for (step, joint) in std::mem::take(&mut self.played).iter().enumerate() {
            if let Err(e) = p.advance(joint) {
                tracing::error!(step, error = %e, "the propnet does not accept the moves played; staying on the interpreter");
                return;
            }
        }
        tracing::info!(step = p.step(), "switched to the propnet built in the background");
        self.current = p;
    }
}

impl Drop for Upgrading {
    fn drop(&mut self) {
        self.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Player for Upgrading {
    fn roles(&self) -> &[String] {
        self.current.roles()
    }
    fn role(&self) -> usize {
        self.current.role()
    }
    fn step(&self) -> usize {
        self.current.step()
    }
    fn engine(&self) -> &'static str {
        self.current.engine()
    }
    fn advance(&mut self, moves: &[String]) -> Result<(), String> {
        self.current.advance(moves)?;
        if self.pending.is_some() {
            self.played.push(moves.to_vec());
        }
        Ok(())
    }
    fn is_terminal(&mut self) -> bool {
        self.current.is_terminal()
    }
    fn first_legal(&mut self) -> Option<String> {
        self.current.first_legal()
    }
    fn forced_move(&mut self) -> Option<String> {
        self.current.forced_move()
    }
    fn search(&mut self, limit: Limit<'_>) -> Result<Selected, String> {
        self.upgrade();
        self.current.search(limit)
    }
    fn goals(&mut self) -> Vec<Option<u32>> {
        self.current.goals()
    }
    fn take_traps(&mut self, match_id: &str, game: &str) -> Vec<trap_log::TrapEvent> {
        self.current.take_traps(match_id, game)
    }
    fn playout(&self) -> String {
        self.current.playout()
    }
    fn view(&mut self) -> PlayerView {
        self.current.view()
    }
    fn factors(&self) -> Option<usize> {
        self.current.factors()
    }
}

fn interp_player(
    game: &Game,
    role: &str,
    cfg: &AgentConfig,
    seed: u64,
    deadline: Instant,
) -> Result<Box<dyn Player>, String> {
    interp_player_within(game, role, cfg, seed, deadline.max(Instant::now() + Duration::from_secs(1)), LATE_INTERP)
}

/// How long the interpreter may go on building once it has missed the start clock: the
/// player is late, but then plays, where giving up left it without a move for the whole
/// match (gt_two_thirds_4p: about 4 s of static arithmetic, after the propnet's attempt
/// had used the start clock).
pub const LATE_INTERP: Duration = Duration::from_secs(60);

/// The interpreter by `deadline`, else (logged) by `late` more; the plays that come
/// meanwhile are answered without it (the server's fallback) and their moves applied once
/// it is built.
fn interp_player_within(
    game: &Game,
    role: &str,
    cfg: &AgentConfig,
    seed: u64,
    deadline: Instant,
    late: Duration,
) -> Result<Box<dyn Player>, String> {
    let mut m = Interpreter::with_deadline(game, Some(deadline)).map_err(|e| e.to_string())?;
    if m.timed_out() {
        tracing::warn!(late_s = late.as_secs_f64(), "the interpreter is not built within the start clock; building on");
        let t0 = Instant::now();
        m = Interpreter::with_deadline(game, Some(t0 + late)).map_err(|e| e.to_string())?;
        if m.timed_out() {
            return Err(format!(
                "the interpreter could not be built in time ({:.0} s past the start clock)",
                late.as_secs_f64()
            ));
        }
        tracing::info!(build_s = t0.elapsed().as_secs_f64(), "interpreter built after the start clock");
    }
    m.set_deadline(None);
    let r = role_in(m.roles(), role)?;
    Ok(player(m, r, cfg, seed, "interp"))
}

#[cfg(test)]
mod tests;
