//! Search speed on fixed positions: each agent's searcher (as the player builds it, threads
//! included) searches the same sampled positions for the same time, agents alternating in
//! order from position to position, each on a machine cloned fresh from the build (the
//! propnet's incremental legal sets keep their history's order, so a used machine would
//! play other playouts). Iterations per second, per position and their median, side by side.

use super::AgentConfig;
use crate::machine::{PlayoutBuffers, StateMachine};
use crate::search::Limit;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::time::{Duration, Instant};

/// One position searched: the joint moves played from the initial state to reach it, the
/// role that searched, and each agent's iterations per second there.
#[derive(Clone, Debug)]
pub struct Position {
    pub plies: usize,
    pub role: usize,
    pub rates: Vec<f64>,
}

/// Positions taken along random playouts from the initial state (at depths spread over the
/// first part of the game), each non-terminal with a role that has two or more moves.
pub fn sample_positions<M: StateMachine>(machine: &mut M, count: usize, seed: u64) -> Vec<(M::State, usize, usize)> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let init = machine.initial_state();
    let mut bufs = PlayoutBuffers::new(machine);
    let mut out = Vec::new();
    let mut legal = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 20 {
        tries += 1;
        // A playout's length, then a depth within its first two thirds.
        let mut s = init.clone();
        let len = machine.playout(&mut s, &mut rng, 1000, &mut bufs).depth;
        let depth = rng.gen_range(0..=(len * 2 / 3));
        let mut s = init.clone();
        let reached = machine.playout(&mut s, &mut rng, depth, &mut bufs).depth;
        if machine.is_terminal(&s) {
            continue;
        }
        let role = (0..machine.roles().len()).find(|&r| {
            machine.legal_moves(&s, r, &mut legal);
            legal.len() > 1
        });
        if let Some(role) = role {
            out.push((s, role, reached));
        }
    }
    out
}

/// Each agent searches each of `count` sampled positions for `time`.
pub fn search_speed<M>(machine: &M, agents: &[AgentConfig], count: usize, time: Duration, seed: u64) -> Vec<Position>
where
    M: StateMachine + Clone + Send + 'static,
{
    let mut sampler = machine.clone();
    let positions = sample_positions(&mut sampler, count, seed);
    let mut out = Vec::new();
    for (i, (state, role, plies)) in positions.into_iter().enumerate() {
        let mut rates = vec![0.0; agents.len()];
        // Agents alternate in order, so that neither always searches first.
        let order: Vec<usize> =
            if i % 2 == 0 { (0..agents.len()).collect() } else { (0..agents.len()).rev().collect() };
        for a in order {
            let mut m = machine.clone();
            let mut search = agents[a].searcher::<M>(seed.wrapping_add(i as u64));
            let t0 = Instant::now();
            let c = search.select(&mut m, &state, role, Limit::until(t0 + time));
            let secs = t0.elapsed().as_secs_f64().max(1e-9);
            rates[a] = c.map_or(0.0, |c| c.iterations as f64 / secs);
        }
        out.push(Position { plies, role, rates });
    }
    out
}

/// The median of `v` (0 when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
