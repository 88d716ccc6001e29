//! The paper's experiment (section 4): how well does similarity to a trap state pick out the
//! positions two plies later that still hold the trap?
//!
//! For each trap state T (its role r has a trap of depth k), every distinct position P two
//! plies away is labelled by the trap finder (the trap is *kept* when P is again a trap state
//! for r) and compared with T by each measure. With ρ the average similarity over the Ps of
//! T, a kept trap below ρ is a *false negative* and a position without the trap above ρ a
//! *false positive* (at ρ exactly: flagged, see [`rates_at`]); the rates are per trap state,
//! as the paper's Table 2 gives them.

use super::TrapSearch;
use crate::machine::StateMachine;
use crate::similarity::machine::joint_moves;
use crate::similarity::{Labels, LocalTree, Measure};
use std::collections::HashSet;
use std::hash::Hash;
use std::time::Instant;

/// One position two plies from a trap state.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sample {
    /// The two plies that lead to it, as labels.
    pub line: Vec<String>,
    /// Whether r again has a trap of depth k; `None` when the search ran out of budget.
    pub trap: Option<bool>,
    /// The similarity to the trap state per measure (`None` where a table was too large),
    /// then the control (last).
    pub sims: Vec<Option<f64>>,
}

/// Rates of one measure on one trap state.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rates {
    pub measure: String,
    /// ρ: the average similarity.
    pub threshold: f64,
    pub false_negatives: f64,
    pub false_positives: f64,
    /// Mean time of one similarity computation (the trees are expanded beforehand), µs.
    pub micros: f64,
}

/// The experiment on one trap state.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TrapStateResult {
    pub name: String,
    pub role: String,
    pub trap_moves: Vec<String>,
    /// Distinct positions two plies away, and how many of them were sampled.
    pub all_positions: usize,
    pub positions: usize,
    pub kept: usize,
    pub undecided: usize,
    pub rates: Vec<Rates>,
    /// Mean time to expand one position's local tree, µs.
    pub expand_micros: f64,
    /// Time spent labelling positions with the trap finder, s.
    pub label_s: f64,
    /// The measures' names, in the order of each sample's `sims`.
    pub measures: Vec<String>,
    #[serde(skip)]
    pub samples: Vec<Sample>,
}

/// The distinct positions two plies (joint moves) from `s`, with the labels of their plies.
pub fn two_plies<M: StateMachine>(m: &mut M, s: &M::State) -> Vec<(Vec<String>, M::State)> {
    let mut legal = Vec::new();
    let mut seen: HashSet<M::State> = HashSet::new();
    let mut out = Vec::new();
    if m.is_terminal(s) {
        return out;
    }
    for (l1, j1) in joint_moves(m, s, &mut legal) {
        let mut s1 = s.clone();
        m.next_state(s, &j1, &mut s1);
        if m.is_terminal(&s1) {
            if seen.insert(s1.clone()) {
                out.push((vec![l1.clone()], s1));
            }
            continue;
        }
        for (l2, j2) in joint_moves(m, &s1, &mut legal) {
            let mut s2 = s1.clone();
            m.next_state(&s1, &j2, &mut s2);
            if seen.insert(s2.clone()) {
                out.push((vec![l1.clone(), l2], s2));
            }
        }
    }
    out
}

/// Runs the experiment on one trap state `t` of role `role`.
#[allow(clippy::too_many_arguments)]
pub fn run_one<M, F>(
    m: &mut M,
    name: &str,
    t: &M::State,
    role: usize,
    depth: u32,
    loss: u32,
    budget: u64,
    max_positions: usize,
    rng: &mut impl rand::Rng,
    measures: &[Measure],
    control: F,
) -> TrapStateResult
where
    M: StateMachine,
    M::State: Hash + Eq,
    F: Fn(&mut M, &M::State, &M::State) -> f64,
{
    let role_name = m.roles()[role].clone();
    let t_report = TrapSearch::new(m, role, loss, budget).analyse(t, depth);
    let trap_moves: Vec<String> = t_report.moves.iter().filter(|v| v.trap).map(|v| v.text.clone()).collect();
    let mut positions = two_plies(m, t);
    let all_positions = positions.len();
    if positions.len() > max_positions {
        // A uniform sample without replacement, in the original order.
        let mut keep = rand::seq::index::sample(rng, positions.len(), max_positions).into_vec();
        keep.sort_unstable();
        positions = keep.into_iter().map(|i| positions[i].clone()).collect();
    }
    // Label every position with the trap finder (one table for all of them).
    let t0 = Instant::now();
    let mut labels_trap = Vec::with_capacity(positions.len());
    {
        let mut search = TrapSearch::new(m, role, loss, budget);
        for (_, p) in &positions {
            labels_trap.push(search.has_trap(p, depth));
        }
    }
    let label_s = t0.elapsed().as_secs_f64();
    // Local trees, deep enough for every measure, expanded one position at a time (deep
    // trees of a thousand positions would not fit in memory together).
    let tree_depth = measures.iter().map(|x| x.depth()).max().unwrap_or(1);
    let mut labels = Labels::new();
    let mut samples: Vec<Sample> = positions
        .iter()
        .zip(&labels_trap)
        .map(|((line, _), &trap)| Sample { line: line.clone(), trap, sims: Vec::new() })
        .collect();
    let mut spent = vec![0.0f64; measures.len()];
    let mut expand_s = 0.0;
    {
        let mut view = crate::similarity::machine::MachineView::new(m, role);
        let t1 = Instant::now();
        let t_tree = LocalTree::expand(&mut view, t, tree_depth, &mut labels);
        expand_s += t1.elapsed().as_secs_f64();
        for (i, (_, p)) in positions.iter().enumerate() {
            let t1 = Instant::now();
            let tree = LocalTree::expand(&mut view, p, tree_depth, &mut labels);
            expand_s += t1.elapsed().as_secs_f64();
            for (k, measure) in measures.iter().enumerate() {
                let t2 = Instant::now();
                samples[i].sims.push(measure.similarity(t_tree.root(), tree.root(), &labels));
                spent[k] += t2.elapsed().as_secs_f64();
            }
        }
    }
    let expand_micros = expand_s * 1e6 / (positions.len() + 1) as f64;
    let mut micros: Vec<f64> = spent.iter().map(|s| s * 1e6 / positions.len().max(1) as f64).collect();
    let t3 = Instant::now();
    for (i, (_, p)) in positions.iter().enumerate() {
        samples[i].sims.push(Some(control(m, t, p)));
    }
    micros.push(t3.elapsed().as_secs_f64() * 1e6 / positions.len().max(1) as f64);
    let mut names: Vec<String> = measures.iter().map(|x| x.name()).collect();
    names.push("control: board".into());
    let rates = names.iter().enumerate().map(|(k, name)| rates_at_mean(&samples, k, name.clone(), micros[k])).collect();
    TrapStateResult {
        name: name.to_string(),
        role: role_name,
        trap_moves,
        all_positions,
        positions: positions.len(),
        kept: labels_trap.iter().filter(|&&x| x == Some(true)).count(),
        undecided: labels_trap.iter().filter(|x| x.is_none()).count(),
        rates,
        expand_micros,
        label_s,
        measures: names,
        samples,
    }
}

/// The rates of measure `k` with ρ at the mean similarity (decided samples with a value).
pub fn rates_at_mean(samples: &[Sample], k: usize, measure: String, micros: f64) -> Rates {
    let vals: Vec<(bool, f64)> = samples.iter().filter_map(|s| Some((s.trap?, s.sims[k]?))).collect();
    let threshold = if vals.is_empty() { 0.0 } else { vals.iter().map(|v| v.1).sum::<f64>() / vals.len() as f64 };
    let (fnr, fpr) = rates_at(&vals, threshold);
    Rates { measure, threshold, false_negatives: fnr, false_positives: fpr, micros }
}

/// False-negative rate (kept traps below ρ) and false-positive rate (positions without the
/// trap at or above ρ); NaN where a class is empty. A position exactly at ρ counts as flagged
/// (the classifier is "similarity ≥ ρ means trap"), so that a measure that gives every
/// position the same value is not scored as perfect but as flagging everything.
pub fn rates_at(vals: &[(bool, f64)], rho: f64) -> (f64, f64) {
    let traps: Vec<f64> = vals.iter().filter(|v| v.0).map(|v| v.1).collect();
    let others: Vec<f64> = vals.iter().filter(|v| !v.0).map(|v| v.1).collect();
    // Means are computed in floating point: a value within 1e-12 of ρ is at ρ.
    let fnr = traps.iter().filter(|&&x| x < rho - 1e-12).count() as f64 / traps.len() as f64;
    let fpr = others.iter().filter(|&&x| x >= rho - 1e-12).count() as f64 / others.len() as f64;
    (fnr, fpr)
}

/// The control for any state machine: one minus the share of facts true in exactly one of
/// the two states among those true in either (the paper's "squares that differ", for games
/// whose states are not boards of 64 squares).
pub fn facts_similarity<M: StateMachine>(m: &mut M, a: &M::State, b: &M::State) -> f64 {
    let (x, y) = (m.state_facts(a), m.state_facts(b));
    let xs: HashSet<&String> = x.iter().collect();
    let ys: HashSet<&String> = y.iter().collect();
    let union = xs.union(&ys).count();
    if union == 0 {
        return 1.0;
    }
    1.0 - xs.symmetric_difference(&ys).count() as f64 / union as f64
}

/// Finds trap states by random playouts: states after at least `min_ply` plies where the
/// role with a choice (the only one) has a trap of depth `depth`. At most one per playout,
/// the first found, so that the states come from different games.
#[allow(clippy::too_many_arguments)]
pub fn find_trap_states<M: StateMachine, R: rand::Rng>(
    m: &mut M,
    count: usize,
    min_ply: usize,
    depth: u32,
    losses: &[u32],
    budget: u64,
    playouts: usize,
    rng: &mut R,
) -> Vec<(usize, Vec<String>, M::State)> {
    let mut out = Vec::new();
    let mut legal = Vec::new();
    for _ in 0..playouts {
        if out.len() >= count {
            break;
        }
        let mut s = m.initial_state();
        let mut line: Vec<String> = Vec::new();
        for ply in 0..10_000 {
            if m.is_terminal(&s) {
                break;
            }
            let moves = joint_moves(m, &s, &mut legal);
            if moves.is_empty() {
                break;
            }
            if ply >= min_ply {
                let choosers: Vec<usize> = (0..m.roles().len())
                    .filter(|&r| {
                        let mut l = Vec::new();
                        m.legal_moves(&s, r, &mut l);
                        l.len() > 1
                    })
                    .collect();
                if let [r] = choosers[..] {
                    let mut search = TrapSearch::new(m, r, losses[r], budget);
                    if search.has_trap(&s, depth) == Some(true) {
                        out.push((r, line.clone(), s.clone()));
                        break;
                    }
                }
            }
            let (label, joint) = &moves[rng.gen_range(0..moves.len())];
            let mut next = s.clone();
            m.next_state(&s, joint, &mut next);
            line.push(label.clone());
            s = next;
        }
    }
    out
}

/// A threshold learned instead of the mean: ρ = mean + c·(standard deviation) of a trap
/// state's similarities, with c chosen on the *other* trap states (leave one out) as the
/// largest c whose mean false-negative rate there is at most `target_fn`. Returns the mean
/// false-negative and false-positive rates on the held-out states and the c chosen on all
/// states; `None` with fewer than two trap states that have both classes.
pub fn learned_threshold(results: &[TrapStateResult], k: usize, target_fn: f64) -> Option<(f64, f64, f64)> {
    // Per trap state: its decided samples with a value, mean and deviation.
    let states: Vec<(Vec<(bool, f64)>, f64, f64)> = results
        .iter()
        .filter_map(|r| {
            let vals: Vec<(bool, f64)> = r.samples.iter().filter_map(|s| Some((s.trap?, s.sims[k]?))).collect();
            if !vals.iter().any(|v| v.0) || !vals.iter().any(|v| !v.0) {
                return None;
            }
            let mean = vals.iter().map(|v| v.1).sum::<f64>() / vals.len() as f64;
            let var = vals.iter().map(|v| (v.1 - mean).powi(2)).sum::<f64>() / vals.len() as f64;
            Some((vals, mean, var.sqrt()))
        })
        .collect();
    if states.len() < 2 {
        return None;
    }
    let grid: Vec<f64> = (0..=320).map(|i| -4.0 + i as f64 * 0.025).collect();
    let choose = |train: &[&(Vec<(bool, f64)>, f64, f64)]| -> f64 {
        let mut best = grid[0];
        for &c in &grid {
            let fnr = train.iter().map(|s| rates_at(&s.0, s.1 + c * s.2).0).sum::<f64>() / train.len() as f64;
            if fnr <= target_fn {
                best = c;
            }
        }
        best
    };
    let (mut fn_sum, mut fp_sum) = (0.0, 0.0);
    for h in 0..states.len() {
        let train: Vec<&(Vec<(bool, f64)>, f64, f64)> =
            states.iter().enumerate().filter(|(i, _)| *i != h).map(|(_, s)| s).collect();
        let c = choose(&train);
        let s = &states[h];
        let (f, p) = rates_at(&s.0, s.1 + c * s.2);
        fn_sum += f;
        fp_sum += p;
    }
    let all: Vec<&(Vec<(bool, f64)>, f64, f64)> = states.iter().collect();
    let n = states.len() as f64;
    Some((fn_sum / n, fp_sum / n, choose(&all)))
}
