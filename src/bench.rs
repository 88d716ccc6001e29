//! Playout benchmarks: random playouts from the initial state, timed in repeated runs.

use crate::machine::{PlayoutBuffers, StateMachine};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::time::{Duration, Instant};

/// One timed run.
#[derive(Clone, Debug)]
pub struct Run {
    pub playouts: u64,
    /// Joint moves applied (next-state computations).
    pub states: u64,
    pub secs: f64,
}

impl Run {
    pub fn states_per_s(&self) -> f64 {
        self.states as f64 / self.secs
    }
    pub fn playouts_per_s(&self) -> f64 {
        self.playouts as f64 / self.secs
    }
}

/// The runs of a benchmark and their medians.
#[derive(Clone, Debug)]
pub struct BenchResult {
    pub runs: Vec<Run>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return 0.0;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl BenchResult {
    pub fn median_states_per_s(&self) -> f64 {
        median(self.runs.iter().map(Run::states_per_s).collect())
    }
    pub fn median_playouts_per_s(&self) -> f64 {
        median(self.runs.iter().map(Run::playouts_per_s).collect())
    }
}

/// Runs `runs` timed runs of random playouts (depth charges) of at most `max_depth` joint
/// moves, each reading every role's goal at its end, each run lasting about `per_run`.
pub fn bench_playouts<M: StateMachine>(
    machine: &mut M,
    per_run: Duration,
    runs: usize,
    seed: u64,
    max_depth: usize,
) -> BenchResult {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let initial = machine.initial_state();
    let roles = machine.roles().len();
    let mut bufs = PlayoutBuffers::new(machine);
    let mut state = initial.clone();
    // Warm-up: one playout, so first-time term creation is not timed.
    machine.playout(&mut state, &mut rng, max_depth, &mut bufs);
    timed_runs(runs, per_run, || {
        state.clone_from(&initial);
        let r = machine.playout(&mut state, &mut rng, max_depth, &mut bufs);
        // A playout's result is its goal values (MCTS reads them all).
        for role in 0..roles {
            std::hint::black_box(machine.goal(&state, role));
        }
        (1, r.depth as u64)
    })
}

/// `runs` runs of about `per_run` each, calling `unit` (which returns the playouts and
/// states it did) until the run's time is up.
fn timed_runs(runs: usize, per_run: Duration, mut unit: impl FnMut() -> (u64, u64)) -> BenchResult {
    let mut out = Vec::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        let (mut playouts, mut states) = (0u64, 0u64);
        while t0.elapsed() < per_run {
            let (p, s) = unit();
            playouts += p;
            states += s;
        }
        out.push(Run { playouts, states, secs: t0.elapsed().as_secs_f64() });
    }
    BenchResult { runs: out }
}

/// As [`bench_playouts`] on the batch machine: playouts from the initial state, all lanes at
/// once (a lane that ends starts again). A run's `states` are lane-steps, all lanes together.
pub fn bench_batch<const W: usize>(
    machine: &mut crate::propnet::batch::Batch<W>,
    initial: &crate::propnet::PnState,
    per_run: Duration,
    runs: usize,
    seed: u64,
    max_depth: usize,
) -> BenchResult {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let max_depth = max_depth.min(u32::MAX as usize) as u32;
    let lanes = crate::propnet::batch::Batch::<W>::LANES as u64;
    // Warm-up: one batch.
    machine.playouts(initial, lanes, max_depth, &mut rng, |_, _| {});
    timed_runs(runs, per_run, || {
        // Batches of 16 × lanes playouts: lanes are refilled until the last ones drain.
        let mut playouts = 0;
        let states = machine.playouts(initial, 16 * lanes, max_depth, &mut rng, |_, _| playouts += 1);
        (playouts, states)
    })
}
