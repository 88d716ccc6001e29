//! Agents: configurations read from TOML (`agents/*.toml`) and the per-match [`Player`],
//! which owns an engine (the propnet, or the interpreter when the propnet cannot be built in
//! time), the current state and a searcher, and speaks in move texts only. The protocol
//! layer and the match harness see matches through [`Player`]; nothing here does IO beyond
//! reading a config file.

pub mod duel;

use crate::gdl::Game;
use crate::interp::Interpreter;
use crate::machine::StateMachine;
use crate::propnet::{self, Budget};
use crate::search::{FactoredMcts, FirstLegal, FlatMc, Limit, Mcts, MctsConfig, ParallelMcts, RandomMove, Search};
use serde::Deserialize;
use std::path::Path;
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

/// An agent configuration, as written in `agents/NAME.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// The name given in reply to `(info)`.
    pub name: String,
    pub kind: Kind,
    /// UCB exploration constant (rewards in 0..=1).
    pub exploration: f64,
    /// Seconds kept back from each clock for messaging and slack.
    pub margin_s: f64,
    /// Search threads: MCTS with more than one runs one tree per thread (root parallel).
    pub threads: usize,
    /// Most MCTS nodes kept.
    pub node_budget: usize,
    pub seed: u64,
    /// Longest random playout, in joint moves.
    pub playout_depth: usize,
    /// MCTS per factor where the game factors (statically, or contingently as play goes):
    /// see `search::factored`. Single-threaded MCTS on the propnet only.
    pub factoring: bool,
    /// With `factoring`: switch to factors found contingently (latch modification) during
    /// play. Off by default: it splits connect four after a few moves into parts that are not
    /// worth searching apart (sound, but it lost every such match).
    pub contingent_factoring: bool,
    /// `factotum serve`: keep searching after replying to START and PLAY, until the next
    /// message of the match arrives (MCTS kinds only: they keep their tree, and the next
    /// turn reuses it).
    pub ponder: bool,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            name: "factotum".into(),
            kind: Kind::Mcts,
            exploration: 0.7,
            margin_s: 2.5,
            threads: 1,
            node_budget: 200_000,
            seed: 1,
            playout_depth: 1000,
            factoring: false,
            contingent_factoring: false,
            ponder: true,
        }
    }
}

impl AgentConfig {
    pub fn parse(text: &str) -> Result<AgentConfig, String> {
        let cfg: AgentConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        if !(cfg.exploration.is_finite() && cfg.exploration >= 0.0) {
            return Err(format!("exploration must be a finite number >= 0, not {}", cfg.exploration));
        }
        if !(cfg.margin_s.is_finite() && cfg.margin_s >= 0.0) {
            return Err(format!("margin_s must be a finite number >= 0, not {}", cfg.margin_s));
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
            node_budget: self.node_budget,
            seed,
            max_playout_depth: self.playout_depth,
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
        let mcts = self.mcts(seed);
        match self.kind {
            Kind::Mcts if self.threads > 1 => Box::new(ParallelMcts::<M>::new(mcts, self.threads)),
            Kind::Random => Box::new(RandomMove::new(seed)),
            Kind::First => Box::new(FirstLegal),
            Kind::Flatmc => Box::new(FlatMc::new(seed, self.playout_depth)),
            Kind::Mcts => Box::new(Mcts::<M>::new(mcts)),
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
    /// `"propnet"` or `"interp"`.
    fn engine(&self) -> &'static str;
    /// Advances by one joint move given as texts in role order. On error the state is
    /// unchanged.
    fn advance(&mut self, moves: &[String]) -> Result<(), String>;
    fn is_terminal(&mut self) -> bool;
    /// The role's first legal move in the current state.
    fn first_legal(&mut self) -> Option<String>;
    /// Searches until `limit` is over (its deadline, or its cancel flag); `Err` when the role
    /// has no move.
    fn search(&mut self, limit: Limit<'_>) -> Result<Selected, String>;
    /// Searches until `deadline`; `Err` when the role has no move.
    fn select(&mut self, deadline: Instant) -> Result<Selected, String> {
        self.search(Limit::until(deadline))
    }
    /// Every role's goal in the current state.
    fn goals(&mut self) -> Vec<Option<u32>>;
}

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
}

fn player<M: StateMachine + Clone + Send + 'static>(
    machine: M,
    role: usize,
    cfg: &AgentConfig,
    seed: u64,
    engine: &'static str,
) -> Box<dyn Player> {
    let search = cfg.searcher::<M>(seed);
    player_with(machine, role, search, engine)
}

fn player_with<M: StateMachine + Clone + Send + 'static>(
    mut machine: M,
    role: usize,
    search: Box<dyn Search<M>>,
    engine: &'static str,
) -> Box<dyn Player> {
    let state = machine.initial_state();
    let next = state.clone();
    Box::new(GamePlayer { machine, state, next, role, step: 0, search, legal: Vec::new(), joint: Vec::new(), engine })
}

/// The index of `name` among `roles`: exact, else ignoring ASCII case.
pub fn role_index(roles: &[String], name: &str) -> Option<usize> {
    roles.iter().position(|r| r == name).or_else(|| roles.iter().position(|r| r.eq_ignore_ascii_case(name)))
}

/// [`role_index`], or an error naming the roles there are.
fn role_in(roles: &[String], role: &str) -> Result<usize, String> {
    role_index(roles, role).ok_or_else(|| format!("no role {role} in the game (roles: {})", roles.join(" ")))
}

/// What `build` returns, or `None` (logged) if it fails or panics: the player then falls
/// back to the interpreter.
fn propnet_or_log<T, E: std::fmt::Display>(build: impl FnOnce() -> Result<T, E>) -> Option<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(build)) {
        Ok(Ok(t)) => Some(t),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "propnet not built; using the interpreter");
            None
        }
        Err(_) => {
            tracing::error!("propnet build panicked; using the interpreter");
            None
        }
    }
}

/// Builds a player for `role` of `game`: the propnet if it builds by `deadline`, else the
/// interpreter.
pub fn new_player(
    game: &Game,
    role: &str,
    cfg: &AgentConfig,
    seed: u64,
    deadline: Instant,
) -> Result<Box<dyn Player>, String> {
    let budget = Budget { deadline: Some(deadline), ..Budget::default() };
    if cfg.factoring && cfg.kind == Kind::Mcts && cfg.threads <= 1 {
        let built = propnet_or_log(|| {
            propnet::build_net(game, &budget).map(|b| {
                let a = crate::factor::analyse(&b.net);
                tracing::info!(game = %game.name, build_s = b.report.total_s, verdict = ?a.verdict, factors = a.factors.len(), analysis_ms = a.millis, "propnet built and analysed");
                let c = propnet::Compiled::with_deadline(&b.net, b.grounding_terms, b.symbols, budget.deadline);
                (propnet::PropnetMachine::new(c), std::sync::Arc::new(b.net), a)
            })
        });
        if let Some((m, net, a)) = built {
            let r = role_in(m.roles(), role)?;
            let search = Box::new(FactoredMcts::new(cfg.mcts(seed), net, a, cfg.contingent_factoring));
            return Ok(player_with(m, r, search, "propnet"));
        }
    } else if let Some((m, report)) = propnet_or_log(|| propnet::build(game, &budget)) {
        let r = role_in(m.roles(), role)?;
        tracing::info!(game = %game.name, build_s = report.total_s, "propnet built");
        return Ok(player(m, r, cfg, seed, "propnet"));
    }
    interp_player(game, role, cfg, seed, deadline)
}

fn interp_player(
    game: &Game,
    role: &str,
    cfg: &AgentConfig,
    seed: u64,
    deadline: Instant,
) -> Result<Box<dyn Player>, String> {
    let mut m = Interpreter::with_deadline(game, Some(deadline.max(Instant::now() + Duration::from_secs(1))))
        .map_err(|e| e.to_string())?;
    if m.timed_out() {
        return Err("the interpreter could not be built in time".into());
    }
    m.set_deadline(None);
    let r = role_in(m.roles(), role)?;
    Ok(player(m, r, cfg, seed, "interp"))
}

#[cfg(test)]
mod tests;
