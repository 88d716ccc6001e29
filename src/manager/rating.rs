//! Statistics over match results: mean scores with 95% confidence intervals (normal
//! approximation), wins/draws/losses, and Bradley-Terry ratings fitted by MM iterations
//! (Hunter 2004), reported on the Elo scale with bootstrap error bars.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_964;
/// Elo points per natural-log unit of strength: 400 / ln 10.
pub const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// Mean and the half-width of its 95% confidence interval (normal approximation with the
/// sample standard deviation; `NaN` half-width below two samples).
pub fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::NAN);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    (mean, Z95 * (var / n as f64).sqrt())
}

/// One decided pairing: player `a` against player `b`; `score` is a's result (1 win,
/// 0.5 draw, 0 loss).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pairing {
    pub a: usize,
    pub b: usize,
    pub score: f64,
}

/// Bradley-Terry log-strengths (natural log, mean 0 over players that played) for `n`
/// players. Each pair that met gets one virtual draw (a weak prior that keeps an unbeaten
/// or winless player finite). Players without games get `NaN`.
pub fn bradley_terry(n: usize, games: &[Pairing]) -> Vec<f64> {
    // wins[i] and meetings n_ij, with the virtual draws.
    let mut wins = vec![0.0f64; n];
    let mut meet = vec![vec![0.0f64; n]; n];
    for g in games {
        if g.a == g.b || g.a >= n || g.b >= n {
            continue;
        }
        wins[g.a] += g.score;
        wins[g.b] += 1.0 - g.score;
        meet[g.a][g.b] += 1.0;
        meet[g.b][g.a] += 1.0;
    }
    for i in 0..n {
        for j in (i + 1)..n {
            if meet[i][j] > 0.0 {
                meet[i][j] += 1.0;
                meet[j][i] += 1.0;
                wins[i] += 0.5;
                wins[j] += 0.5;
            }
        }
    }
    let played: Vec<bool> = (0..n).map(|i| meet[i].iter().any(|&m| m > 0.0)).collect();
    let mut p = vec![1.0f64; n];
    for _ in 0..100_000 {
        let mut change = 0.0f64;
        let mut next = p.clone();
        for i in (0..n).filter(|&i| played[i]) {
            let denom: f64 = (0..n).filter(|&j| meet[i][j] > 0.0).map(|j| meet[i][j] / (p[i] + p[j])).sum();
            next[i] = wins[i] / denom;
        }
        // Normalize: geometric mean 1 over players that played.
        let k = played.iter().filter(|&&x| x).count().max(1) as f64;
        let gm = ((0..n).filter(|&i| played[i]).map(|i| next[i].ln()).sum::<f64>() / k).exp();
        for i in (0..n).filter(|&i| played[i]) {
            next[i] /= gm;
            change = change.max((next[i].ln() - p[i].ln()).abs());
        }
        p = next;
        if change < 1e-12 {
            break;
        }
    }
    (0..n).map(|i| if played[i] { p[i].ln() } else { f64::NAN }).collect()
}

/// Elo ratings with 95% error bars: the Bradley-Terry fit on the Elo scale, anchored so that
/// `anchor` is 0 (or the mean is 0), and ±1.96 standard deviations over `boots` bootstrap
/// resamples of the games (seeded). With an anchor, its own error bar is 0 and the others'
/// are relative to it.
pub fn elo(n: usize, games: &[Pairing], anchor: Option<usize>, boots: usize, seed: u64) -> Vec<(f64, f64)> {
    let fit = |g: &[Pairing]| -> Vec<f64> {
        let t = bradley_terry(n, g);
        let shift = match anchor {
            Some(a) if a < n && t[a].is_finite() => t[a],
            _ => 0.0,
        };
        t.iter().map(|x| (x - shift) * ELO_PER_NAT).collect()
    };
    let point = fit(games);
    if games.is_empty() || boots == 0 {
        return point.into_iter().map(|e| (e, f64::NAN)).collect();
    }
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut sum = vec![0.0f64; n];
    let mut sq = vec![0.0f64; n];
    let mut cnt = vec![0usize; n];
    let mut sample = Vec::with_capacity(games.len());
    for _ in 0..boots {
        sample.clear();
        for _ in 0..games.len() {
            sample.push(games[rng.gen_range(0..games.len())]);
        }
        for (i, e) in fit(&sample).into_iter().enumerate() {
            if e.is_finite() {
                sum[i] += e;
                sq[i] += e * e;
                cnt[i] += 1;
            }
        }
    }
    (0..n)
        .map(|i| {
            if cnt[i] < 2 {
                return (point[i], f64::NAN);
            }
            let m = sum[i] / cnt[i] as f64;
            let var = (sq[i] / cnt[i] as f64 - m * m).max(0.0) * cnt[i] as f64 / (cnt[i] - 1) as f64;
            (point[i], Z95 * var.sqrt())
        })
        .collect()
}

/// The Elo difference that gives an expected score `p` (0 < p < 1).
pub fn elo_of_score(p: f64) -> f64 {
    400.0 * (p / (1.0 - p)).log10()
}
