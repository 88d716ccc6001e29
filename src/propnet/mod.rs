//! Propositional networks: grounding, construction and optimization, and the propnet state
//! machine.
//!
//! Start with [`build`]: [`ground::ground`] instantiates the rules, [`build::raw_net`]
//! translates the ground rules one for one into gates, [`build::optimize`] folds and merges
//! them, and [`machine::Compiled`] lays the result out in flat arrays for
//! [`machine::PropnetMachine`]. [`batch::BatchMachine`] runs many playouts at once, one per
//! bit of a word, by full sweeps of the same network.

pub mod batch;
pub mod build;
mod dot;
mod exclude;
pub mod ground;
mod guard;
pub mod machine;
pub(crate) mod select;

pub use batch::BatchMachine;
pub use build::{Net, Ref, Stats};
pub use dot::write_dot;
pub use ground::{Budget, GroundError};
pub use machine::{Compiled, PnState, PropnetMachine};

use crate::gdl::Game;
use std::time::Instant;

/// What a build did and what it cost.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BuildReport {
    /// Ground rule instances.
    pub instances: usize,
    /// The direct translation of the ground rules.
    pub raw: Stats,
    /// After optimization.
    pub optimized: Stats,
    pub ground_s: f64,
    pub optimize_s: f64,
    pub total_s: f64,
}

/// A built network with the terms and symbols that name its propositions.
pub struct Built {
    pub net: Net,
    pub grounding_terms: crate::interp::TermStore,
    pub symbols: crate::gdl::SymbolTable,
    pub report: BuildReport,
}

/// Grounds a game and builds its optimized network within `budget`.
pub fn build_net(game: &Game, budget: &Budget) -> Result<Built, GroundError> {
    build_net_with(game, budget, None)
}

/// Raw networks of at least this many nodes get the one-round constant analysis first (see
/// [`build::optimize_with`]); chess's has 6M, the seven benchmark games' at most 120,000.
const LARGE_RAW_NET: usize = 1 << 21;

/// [`build_net`], grounding with local variables eliminated (`Some(true)`), not
/// (`Some(false)`), or as [`ground::ground`] decides (`None`).
pub(crate) fn build_net_with(game: &Game, budget: &Budget, eliminate: Option<bool>) -> Result<Built, GroundError> {
    let t0 = Instant::now();
    let g = match eliminate {
        None => ground::ground(game, budget)?,
        Some(e) => ground::ground_with(game, budget, e)?,
    };
    let tg = Instant::now();
    let raw = build::raw_net(&g, budget)?;
    let t1 = Instant::now();
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1000.0;
    tracing::debug!(ground_ms = ms(t0, tg), raw_ms = ms(tg, t1), "grounded and translated");
    // Each stage's input is freed as soon as the next exists (a large game's raw network and
    // rule instances take gigabytes, which the later stages then reuse instead of fresh pages).
    let instances = g.rules.len();
    let ground::Grounding { terms: grounding_terms, symbols, rules, lits, .. } = g;
    drop((rules, lits));
    let raw_stats = raw.stats();
    // A very large raw network is first folded only where constant in every state: the
    // reachable-state analysis (many rounds, each revisiting most of the network) runs once,
    // on the restructured network, a fraction of the size.
    let net = build::optimize_with(&raw, budget, raw.nodes.len() < LARGE_RAW_NET)?;
    drop(raw);
    tracing::debug!(game = %game.name, stats = ?net.stats(), ms = ms(t1, Instant::now()), "optimized once");
    budget.check_time("optimizing the network")?;
    let tr = Instant::now();
    let restructured = build::restructure(net);
    tracing::debug!(ms = ms(tr, Instant::now()), "restructured");
    let net = build::optimize(&restructured, budget)?;
    drop(restructured);
    let t2 = Instant::now();
    let report = BuildReport {
        instances,
        raw: raw_stats,
        optimized: net.stats(),
        ground_s: (t1 - t0).as_secs_f64(),
        optimize_s: (t2 - t1).as_secs_f64(),
        total_s: (t2 - t0).as_secs_f64(),
    };
    tracing::debug!(game = %game.name, ?report, "propnet built");
    Ok(Built { net, grounding_terms, symbols, report })
}

/// Builds the propnet state machine of a game within `budget`.
pub fn build(game: &Game, budget: &Budget) -> Result<(PropnetMachine, BuildReport), GroundError> {
    build_with(game, budget, false)
}

/// [`build`], with the network's batch machine attached when `batch` (for search that runs
/// many playouts at once: [`crate::machine::StateMachine::batch_playouts`]).
pub fn build_with(game: &Game, budget: &Budget, batch: bool) -> Result<(PropnetMachine, BuildReport), GroundError> {
    build_keeping_net(game, budget, batch).map(|(m, report, _)| (m, report))
}

/// [`build_with`], with the network the machine was compiled from (for analyses of it).
pub fn build_keeping_net(
    game: &Game,
    budget: &Budget,
    batch: bool,
) -> Result<(PropnetMachine, BuildReport, Net), GroundError> {
    let b = build_net(game, budget)?;
    let c = Compiled::with_deadline(&b.net, b.grounding_terms, b.symbols, budget.deadline);
    let mut m = PropnetMachine::new(c);
    if batch {
        m.attach_batch(&b.net);
    }
    Ok((m, b.report, b.net))
}

#[cfg(test)]
mod tests;
