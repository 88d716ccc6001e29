//! Heuristics found in the start clock: a state's value per role, predicted from counts of
//! its true base propositions and from its goal values, so that playouts may end early
//! (issue 16, one of Sancho's lessons).
//!
//! Sancho looks for "pieces" in the start clock: base propositions that a role's count of
//! predicts its outcome, checked against simulations before it uses them; Clune's player
//! and CadiaPlayer's early cut-offs read the goal values of non-terminal states in the same
//! spirit. Here a candidate [`Feature`] is either
//! - a **count**: how many bases of one relation hold with one argument at one value
//!   (`(cellholds * * white)`: white's pieces; `(cell 3 * *)`: what stands in column 3),
//!   found from the bases' texts alone, or
//! - a role's **goal value** in the (non-terminal) state.
//!
//! [`learn`] plays random playouts from the initial state, takes one state at a random ply
//! of each (the *sample*) and the playout's final rewards, and, per role, keeps up to
//! [`MAX_PER_ROLE`] features whose correlation with the role's reward is at least
//! [`MIN_CORRELATION`] (strongest first, none nearly a copy of one kept), fits the reward as
//! a linear function of them by least squares on half the playouts, and measures the fit
//! on the other half: a [`Heuristic`] is returned only where, for every role, the
//! prediction's correlation with the held-out rewards is at least [`MIN_QUALITY`]. Its
//! [`Heuristic::evaluate`] costs a popcount per word of each count's mask and a goal
//! evaluation per goal feature: no allocation.
//!
//! Engines give their states' bits and their bases' texts through
//! [`StateMachine::state_bits`] and [`StateMachine::base_texts`]; on engines without them
//! only goal features are candidates.

use crate::machine::{PlayoutBuffers, StateMachine};
use rand::{Rng, SeedableRng};
use rustc_hash::FxHashMap;
use std::time::Instant;

/// Features a role's prediction uses at most.
pub const MAX_PER_ROLE: usize = 3;
/// Least absolute correlation of a feature with a role's reward for it to be used.
pub const MIN_CORRELATION: f64 = 0.2;
/// Least correlation of a role's prediction with the held-out rewards.
pub const MIN_QUALITY: f64 = 0.3;
/// A feature whose correlation with one already kept is beyond this is not kept.
const MAX_REDUNDANCY: f64 = 0.95;
/// Playouts needed for a verdict (half fit, half test).
pub const MIN_PLAYOUTS: usize = 200;
/// Playouts played at most.
const MAX_PLAYOUTS: usize = 4000;
/// Count features considered at most (the largest groups first).
const MAX_COUNT_FEATURES: usize = 4096;
/// Longest playout, in joint moves.
const MAX_PLIES: usize = 1000;
/// Features a heuristic may use in all (over its roles).
pub const MAX_FEATURES: usize = 8;

/// A number read off a state.
#[derive(Clone, Debug, PartialEq)]
pub enum Feature {
    /// How many of the bases in `mask` (one bit per base, as the engine's state bits) hold;
    /// `name` is the group's pattern, such as `(cellholds * * white)`.
    Count { name: String, mask: Vec<u64> },
    /// A role's goal value (0..=100, 0 where none) in the state.
    Goal { role: usize },
}

impl Feature {
    fn value<M: StateMachine>(&self, m: &mut M, state: &M::State) -> f64 {
        match self {
            Feature::Count { mask, .. } => match m.state_bits(state) {
                Some(bits) => bits.iter().zip(mask).map(|(b, k)| (b & k).count_ones()).sum::<u32>() as f64,
                None => 0.0,
            },
            Feature::Goal { role } => m.goal(state, *role).unwrap_or(0).min(100) as f64,
        }
    }

    /// For logs: the count's pattern, or `goal(ROLE)`.
    pub fn describe(&self, roles: &[String]) -> String {
        match self {
            Feature::Count { name, .. } => name.clone(),
            Feature::Goal { role } => format!("goal({})", roles.get(*role).map(String::as_str).unwrap_or("?")),
        }
    }
}

/// A learned evaluation: per role, a linear function of a few [`Feature`]s, clamped to 0..=1
/// (the search's reward scale).
#[derive(Clone, Debug)]
pub struct Heuristic {
    /// The features any role uses.
    pub features: Vec<Feature>,
    /// Per role: the intercept, then one weight per feature (0 for those the role does not use).
    pub weights: Vec<Vec<f64>>,
    /// Per role: the correlation of the prediction with the rewards of the held-out playouts.
    pub quality: Vec<f64>,
    /// Playouts played to learn it.
    pub playouts: usize,
}

impl Heuristic {
    /// Each role's predicted reward (0..=1) in `state`, into `out` (one per role).
    pub fn evaluate<M: StateMachine>(&self, m: &mut M, state: &M::State, out: &mut [f64]) {
        let mut x = [0.0; MAX_FEATURES];
        let n = self.features.len().min(x.len());
        for (xi, f) in x.iter_mut().zip(&self.features) {
            *xi = f.value(m, state);
        }
        for (o, w) in out.iter_mut().zip(&self.weights) {
            let v = w[0] + w[1..].iter().zip(&x[..n]).map(|(a, b)| a * b).sum::<f64>();
            *o = v.clamp(0.0, 1.0);
        }
    }

    /// For logs: `white: 0.50 + 0.06·(cellholds * * white) − 0.06·(cellholds * * black)
    /// (q 0.62); black: ...`.
    pub fn summary(&self, roles: &[String]) -> String {
        let mut parts = Vec::new();
        for (r, w) in self.weights.iter().enumerate() {
            let mut s = format!("{}: {:.3}", roles.get(r).map(String::as_str).unwrap_or("?"), w[0]);
            for (f, &b) in self.features.iter().zip(&w[1..]) {
                if b != 0.0 {
                    s.push_str(&format!(" {} {:.4}·{}", if b < 0.0 { '−' } else { '+' }, b.abs(), f.describe(roles)));
                }
            }
            s.push_str(&format!(" (q {:.2})", self.quality[r]));
            parts.push(s);
        }
        format!("{}; {} playouts", parts.join("; "), self.playouts)
    }
}

/// What [`learn`] found: the heuristic, if every role has one good enough, and each role's
/// best held-out quality either way (for logs and tests).
#[derive(Clone, Debug)]
pub struct Learned {
    pub heuristic: Option<Heuristic>,
    pub quality: Vec<f64>,
    /// Per role: the feature most correlated with its reward, and the correlation.
    pub best: Vec<(String, f64)>,
    pub playouts: usize,
    pub candidates: usize,
    pub millis: u64,
}

/// The count features of an engine's bases: one per (relation, argument position, value)
/// group of two or more bases that is not the whole relation, and one per relation of two or
/// more bases; the largest first, at most [`MAX_COUNT_FEATURES`].
pub fn count_features(texts: &[String]) -> Vec<Feature> {
    let words = texts.len().div_ceil(64);
    // (pattern) -> bases; patterns in first-seen order for determinism.
    let mut groups: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    let mut order: Vec<String> = Vec::new();
    let mut add = |key: String, b: usize| {
        let e = groups.entry(key.clone()).or_default();
        if e.is_empty() {
            order.push(key);
        }
        e.push(b);
    };
    for (b, t) in texts.iter().enumerate() {
        let args = top_level_args(t);
        let Some((rel, rest)) = args.split_first() else { continue };
        if rest.is_empty() {
            continue;
        }
        add(format!("({rel}{})", " *".repeat(rest.len())), b);
        for (j, v) in rest.iter().enumerate() {
            let pat: Vec<&str> = (0..rest.len()).map(|i| if i == j { v.as_str() } else { "*" }).collect();
            add(format!("({rel} {})", pat.join(" ")), b);
        }
    }
    let mut out: Vec<(usize, Feature)> = Vec::new();
    for key in order {
        let members = &groups[&key];
        if members.len() < 2 {
            continue;
        }
        let whole = key.split_whitespace().skip(1).all(|a| a == "*" || a == "*)");
        if !whole {
            // A group equal to its whole relation adds nothing to the relation's own count.
            let rel: String = key.split_whitespace().next().unwrap_or("").to_string();
            let arity = key.split_whitespace().count() - 1;
            let whole_key = format!("{rel}{})", " *".repeat(arity));
            if groups.get(&whole_key).is_some_and(|w| w.len() == members.len()) {
                continue;
            }
        }
        let mut mask = vec![0u64; words];
        for &b in members {
            mask[b / 64] |= 1 << (b % 64);
        }
        out.push((members.len(), Feature::Count { name: key, mask }));
    }
    out.sort_by(|a, b| b.0.cmp(&a.0));
    out.truncate(MAX_COUNT_FEATURES);
    out.into_iter().map(|(_, f)| f).collect()
}

/// The top-level parts of a term's text in ggp-base's form: `( cell 1 ( f a ) b )` gives
/// `cell`, `1`, `( f a )`, `b`; a constant gives itself.
fn top_level_args(text: &str) -> Vec<String> {
    let t = text.trim();
    let Some(inner) = t.strip_prefix('(').and_then(|s| s.strip_suffix(')')) else {
        return vec![t.to_string()];
    };
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for tok in inner.split_whitespace() {
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(tok);
        depth += tok.matches('(').count();
        depth = depth.saturating_sub(tok.matches(')').count());
        if depth == 0 {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// [`learn`] in an eighth of the time left until `deadline` (the share of a start clock the
/// agent gives it, and `factotum metagame` too).
pub fn learn_within<M: StateMachine>(m: &mut M, seed: u64, deadline: Instant) -> Learned {
    let now = Instant::now();
    learn(m, seed, now + deadline.saturating_duration_since(now) / 8)
}

/// Plays random playouts from the initial state until `until` (at most [`MAX_PLAYOUTS`]) and
/// fits a [`Heuristic`] to them (see the module's doc).
pub fn learn<M: StateMachine>(m: &mut M, seed: u64, until: Instant) -> Learned {
    let t0 = Instant::now();
    let roles = m.roles().len();
    let mut features = count_features(&m.base_texts());
    features.extend((0..roles).map(|role| Feature::Goal { role }));
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let start = m.initial_state();
    let mut bufs = PlayoutBuffers::new(m);
    // A playout's length, from a few probes, sets the range of the sampled plies.
    let mut lengths = Vec::new();
    let mut s = start.clone();
    while lengths.len() < 16 && Instant::now() < until {
        s.clone_from(&start);
        lengths.push(m.playout(&mut s, &mut rng, MAX_PLIES, &mut bufs).depth);
    }
    lengths.sort_unstable();
    let typical = lengths.get(lengths.len() / 2).copied().unwrap_or(0).max(2);
    // Per playout: the sample's feature values, then each role's final reward.
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    let nf = features.len();
    let mut playouts = 0;
    let mut tries = 0;
    // Playouts that end before their sample's ply give no sample: a few tries per sample.
    while playouts < MAX_PLAYOUTS && tries < 4 * MAX_PLAYOUTS && Instant::now() < until {
        tries += 1;
        s.clone_from(&start);
        let at = rng.gen_range(1..typical);
        let r = m.playout(&mut s, &mut rng, at, &mut bufs);
        if r.terminal {
            continue;
        }
        for f in &features {
            xs.push(f.value(m, &s));
        }
        m.playout(&mut s, &mut rng, MAX_PLIES, &mut bufs);
        for role in 0..roles {
            ys.push(m.goal(&s, role).unwrap_or(0).min(100) as f64 / 100.0);
        }
        playouts += 1;
    }
    let mut quality = vec![0.0; roles];
    let mut best = Vec::new();
    let mut heuristic = None;
    if playouts >= MIN_PLAYOUTS {
        let col = |f: usize| -> Vec<f64> { (0..playouts).map(|p| xs[p * nf + f]).collect() };
        let cols: Vec<Vec<f64>> = (0..nf).map(col).collect();
        let mut used: Vec<usize> = Vec::new();
        let mut per_role: Vec<(Vec<usize>, Vec<f64>)> = Vec::new();
        for role in 0..roles {
            let y: Vec<f64> = (0..playouts).map(|p| ys[p * roles + role]).collect();
            let corr: Vec<f64> = cols.iter().map(|x| correlation(x, &y)).collect();
            let top = (0..nf).map(|f| (corr[f], f)).max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()));
            best.push(top.map(|(c, f)| (features[f].describe(m.roles()), c)).unwrap_or_default());
            let (chosen, beta, q) = fit_role(&cols, &corr, &y);
            quality[role] = q;
            for &f in &chosen {
                if !used.contains(&f) {
                    used.push(f);
                }
            }
            per_role.push((chosen, beta));
        }
        if quality.iter().all(|&q| q >= MIN_QUALITY) && used.len() <= MAX_FEATURES {
            let weights = per_role
                .iter()
                .map(|(chosen, beta)| {
                    let mut w = vec![0.0; used.len() + 1];
                    w[0] = beta[0];
                    for (k, f) in chosen.iter().enumerate() {
                        let pos = used.iter().position(|u| u == f).unwrap_or(0);
                        w[pos + 1] = beta[k + 1];
                    }
                    w
                })
                .collect();
            let kept = used.iter().map(|&f| features[f].clone()).collect();
            heuristic = Some(Heuristic { features: kept, weights, quality: quality.clone(), playouts });
        }
    }
    Learned { heuristic, quality, best, playouts, candidates: nf, millis: t0.elapsed().as_millis() as u64 }
}

/// One role's fit: the features chosen (by their correlations `corr` with `y` over all
/// playouts), the least-squares weights (intercept first) fitted on the even playouts, and
/// the correlation of the prediction with `y` on the odd ones.
fn fit_role(cols: &[Vec<f64>], corr: &[f64], y: &[f64]) -> (Vec<usize>, Vec<f64>, f64) {
    let mut ranked: Vec<(f64, usize)> =
        corr.iter().enumerate().map(|(f, c)| (c.abs(), f)).filter(|(c, _)| *c >= MIN_CORRELATION).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut chosen: Vec<usize> = Vec::new();
    for (_, f) in ranked {
        if chosen.len() == MAX_PER_ROLE {
            break;
        }
        if chosen.iter().all(|&c| correlation(&cols[c], &cols[f]).abs() <= MAX_REDUNDANCY) {
            chosen.push(f);
        }
    }
    if chosen.is_empty() {
        return (chosen, vec![mean(y)], 0.0);
    }
    let rows = |parity: usize| (0..y.len()).filter(move |p| p % 2 == parity);
    let k = chosen.len() + 1;
    let row = |p: usize| -> Vec<f64> { std::iter::once(1.0).chain(chosen.iter().map(|&f| cols[f][p])).collect() };
    // Normal equations on the even playouts, with a little ridge for constant columns.
    let mut a = vec![vec![0.0; k + 1]; k];
    for p in rows(0) {
        let x = row(p);
        for i in 0..k {
            for j in 0..k {
                a[i][j] += x[i] * x[j];
            }
            a[i][k] += x[i] * y[p];
        }
    }
    for (i, r) in a.iter_mut().enumerate().skip(1) {
        r[i] += 1e-6;
    }
    let beta = solve(a).unwrap_or_else(|| {
        let mut b = vec![0.0; k];
        b[0] = mean(y);
        b
    });
    let (pred, truth): (Vec<f64>, Vec<f64>) = rows(1)
        .map(|p| {
            let x = row(p);
            let v: f64 = x.iter().zip(&beta).map(|(a, b)| a * b).sum();
            (v.clamp(0.0, 1.0), y[p])
        })
        .unzip();
    let q = correlation(&pred, &truth);
    (chosen, beta, q)
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Pearson's correlation (0 where either side is constant).
fn correlation(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x), mean(y));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx <= 1e-12 || syy <= 1e-12 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

/// Solves the augmented system `a` (k rows of k + 1) by Gaussian elimination with partial
/// pivoting; `None` if it is singular.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let k = a.len();
    for c in 0..k {
        let p = (c..k).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, p);
        for r in 0..k {
            if r != c {
                let f = a[r][c] / a[c][c];
                for j in c..=k {
                    a[r][j] -= f * a[c][j];
                }
            }
        }
    }
    Some((0..k).map(|i| a[i][k] / a[i][i]).collect())
}

#[cfg(test)]
mod tests;
