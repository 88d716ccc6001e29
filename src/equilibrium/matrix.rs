//! Matrix games: the row player's max-min value and strategy, by a saddle point when there is
//! one and by a linear program ([`microlp`]) otherwise.

use super::SolveError;
use microlp::{ComparisonOp, OptimizationDirection, Problem};

/// A matrix game's solution for its row player: the value the row player can guarantee and a
/// mixed strategy (one probability per row) that guarantees it.
#[derive(Clone, Debug, PartialEq)]
pub struct MaxMin {
    pub value: f64,
    pub strategy: Vec<f64>,
    /// Whether a linear program was solved (no pure saddle point).
    pub by_lp: bool,
}

/// The row player's max-min over the matrix `a` (`rows` × `cols`, row-major): max over mixed
/// rows x of min over columns j of Σᵢ xᵢ a[i][j]. A pure saddle point (max of row minima equal
/// to min of column maxima) answers without a program; otherwise the program is
/// max v subject to Σᵢ xᵢ a[i][j] ≥ v for every column j, Σᵢ xᵢ = 1, x ≥ 0.
pub fn max_min(a: &[f64], rows: usize, cols: usize) -> Result<MaxMin, SolveError> {
    assert!(rows > 0 && cols > 0 && a.len() == rows * cols, "a {rows}x{cols} matrix");
    let row = |i: usize| &a[i * cols..(i + 1) * cols];
    let row_min = |i: usize| row(i).iter().copied().fold(f64::INFINITY, f64::min);
    let col_max = |j: usize| (0..rows).map(|i| a[i * cols + j]).fold(f64::NEG_INFINITY, f64::max);
    let (best_row, lower) =
        (0..rows).map(|i| (i, row_min(i))).fold((0, f64::NEG_INFINITY), |b, c| if c.1 > b.1 { c } else { b });
    let upper = (0..cols).map(col_max).fold(f64::INFINITY, f64::min);
    if lower >= upper {
        let mut strategy = vec![0.0; rows];
        strategy[best_row] = 1.0;
        return Ok(MaxMin { value: lower, strategy, by_lp: false });
    }
    let (lo, hi) = a.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    let mut p = Problem::new(OptimizationDirection::Maximize);
    let x: Vec<_> = (0..rows).map(|_| p.add_var(0.0, (0.0, 1.0))).collect();
    let v = p.add_var(1.0, (lo, hi));
    for j in 0..cols {
        let mut terms: Vec<_> = (0..rows).map(|i| (x[i], a[i * cols + j])).collect();
        terms.push((v, -1.0));
        p.add_constraint(terms.as_slice(), ComparisonOp::Ge, 0.0);
    }
    let ones: Vec<_> = x.iter().map(|&xi| (xi, 1.0)).collect();
    p.add_constraint(ones.as_slice(), ComparisonOp::Eq, 1.0);
    let sol = super::lp_solution(&p)?;
    let strategy = normalised(x.iter().map(|&xi| sol.var_value(xi)).collect());
    // The value the strategy guarantees, read from the strategy itself (within the solver's
    // tolerance of the program's optimum).
    let value =
        (0..cols).map(|j| (0..rows).map(|i| strategy[i] * a[i * cols + j]).sum::<f64>()).fold(f64::INFINITY, f64::min);
    Ok(MaxMin { value, strategy, by_lp: true })
}

/// Clips the solver's round-off below zero and rescales to a distribution.
pub(crate) fn normalised(mut p: Vec<f64>) -> Vec<f64> {
    for q in p.iter_mut() {
        if *q < 1e-12 {
            *q = 0.0;
        }
    }
    let sum: f64 = p.iter().sum();
    if sum > 0.0 {
        for q in p.iter_mut() {
            *q /= sum;
        }
    }
    p
}
