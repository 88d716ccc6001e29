//! Positional similarity (Evans and Turrini, "Improving Strategic Decisions in Sequential
//! Games by Exploiting Positional Similarity", Games 14(3), 2023; `../shared/papers/
//! positional-similarity-traps.txt`): how alike two positions are, judged from their local
//! game trees alone, with no knowledge of the game.
//!
//! A game is seen through [`Positions`]: positions with labelled moves and children. Any
//! [`crate::machine::StateMachine`] is one through [`machine::MachineView`]; chess, for the
//! paper's benchmark, through [`chess`]. A position is expanded into a [`LocalTree`] to a
//! fixed depth, and the measures compare two subtrees ([`Sub`]):
//!
//! - [`continuations`]: the paper's *similarity of continuations* P_cont (section 2.1): the
//!   Jaccard index of the sets M^d of moves met within d plies.
//! - [`sequences`]: the *similarity of sequences* P_seq (section 2.2): root-to-leaf move
//!   sequences simplified modulo permutation (multisets of moves) with their multiplicities
//!   k, shared sequences counted with k₁ + k₂ over all Σk₁ + Σk₂.
//! - [`tree_edit`]: the *tree-edit similarity* P_tree (section 2.3): one minus Li and
//!   Zhang's normalised distance 2e / (|T₁| + |T₂| + e), with e the ordered edit distance on
//!   canonically ordered trees ([`ted`]).
//! - [`terminal`]: the similarity of two terminal positions (section 2.4): 1 − |R₂ − R₁| over
//!   the range of rewards.
//! - [`structural`]: the *structural similarity* S (section 3, Algorithm 1): each child's
//!   similarity to its own parent under a base measure, children of the two positions paired
//!   by an optimal assignment (Kuhn–Munkres, from the `pathfinding` crate), S = 1 − (|c₁ − c₂|
//!   + Σ|P₁ᵢ − P₂ⱼ|) / max(c₁, c₂).
//! - [`outcomes`] (ours): P_seq over the sequences that end the game within the depth, with
//!   their rewards: how alike the tactics of two positions are.
//! - [`outcome_shapes`] (ours): the same without the moves: how many sequences end the game
//!   at each depth with each reward; [`tactics`] (ours): the larger of the two.
//! - [`TacticsSig`]: tactical similarity from a signature computed once per position, for
//!   comparing positions inside a search ([`signature`]).
//! - [`move_matching`]: the moves of two positions paired by that assignment (the paper's
//!   *move matching*), and [`match_counts`], the pairs over the first two plies by frequency.
//!
//! Where a measure has nothing to compare (both positions terminal, so no moves), the
//! terminal similarity answers, as section 2.4 proposes.
//!
//! |T| counts the moves of a tree (its nodes but the root, which stands for the position):
//! that is how the paper's Figure 1 trees have 11 and 10 nodes.

pub mod chess;
pub mod machine;
pub mod signature;
pub mod ted;
pub mod tree;

pub use machine::MachineView;
pub use signature::{SigScratch, TacticsSig};
pub use tree::{n, Labels, LocalTree, Nested, Sub};

use pathfinding::kuhn_munkres::kuhn_munkres_min;
use pathfinding::matrix::Matrix;
use std::collections::HashMap;

/// A game as positions with labelled moves: what the measures need to know of it.
pub trait Positions {
    type Pos: Clone;
    /// The moves of `p` with the positions they lead to; empty when `p` is terminal. In a
    /// simultaneous-move game a label is the joint move.
    fn children(&mut self, p: &Self::Pos) -> Vec<(String, Self::Pos)>;
    /// The reward of a terminal position in [0, 1] for the role whose view is taken; `None`
    /// when the position is not terminal.
    fn reward(&mut self, p: &Self::Pos) -> Option<f64>;
}

/// A similarity measure and its depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    Continuations(u32),
    Sequences(u32),
    TreeEdit(u32),
    /// Structural similarity over a base measure.
    Structural(Base),
    /// Similarity of outcomes ([`outcomes`]): ours, not the paper's.
    Outcomes(u32),
    /// Similarity of outcome shapes ([`outcome_shapes`]): ours.
    OutcomeShapes(u32),
    /// Tactical similarity ([`tactics`]): ours.
    Tactics(u32),
}

/// The base measure of structural similarity: one of the three tree measures at a depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    Continuations(u32),
    Sequences(u32),
    TreeEdit(u32),
}

impl Base {
    fn measure(self) -> Measure {
        match self {
            Base::Continuations(d) => Measure::Continuations(d),
            Base::Sequences(d) => Measure::Sequences(d),
            Base::TreeEdit(d) => Measure::TreeEdit(d),
        }
    }
}

impl Measure {
    /// Plies of tree the measure reads below a position.
    pub fn depth(self) -> u32 {
        match self {
            Measure::Continuations(d)
            | Measure::Sequences(d)
            | Measure::TreeEdit(d)
            | Measure::Outcomes(d)
            | Measure::OutcomeShapes(d)
            | Measure::Tactics(d) => d,
            Measure::Structural(b) => b.measure().depth() + 1,
        }
    }

    pub fn name(self) -> String {
        match self {
            Measure::Continuations(d) => format!("continuations d={d}"),
            Measure::Sequences(d) => format!("sequences d={d}"),
            Measure::TreeEdit(d) => format!("tree-edit d={d}"),
            Measure::Structural(b) => format!("structural over {}", b.measure().name()),
            Measure::Outcomes(d) => format!("outcomes d={d}"),
            Measure::OutcomeShapes(d) => format!("outcome shapes d={d}"),
            Measure::Tactics(d) => format!("tactics d={d}"),
        }
    }

    /// The similarity of two positions (each a subtree deep enough for the measure), in
    /// [0, 1]; `None` only where the tree-edit table would be too large.
    pub fn similarity(self, a: Sub, b: Sub, labels: &Labels) -> Option<f64> {
        let (a, b) = (a.to_depth(self.depth().min(a.depth)), b.to_depth(self.depth().min(b.depth)));
        match self {
            Measure::Continuations(_) => Some(continuations(a, b)),
            Measure::Sequences(_) => Some(sequences(a, b)),
            Measure::TreeEdit(_) => tree_edit(a, b, labels),
            Measure::Structural(base) => structural(a, b, base, labels).map(|s| s.similarity),
            Measure::Outcomes(_) => Some(outcomes(a, b)),
            Measure::OutcomeShapes(_) => Some(outcome_shapes(a, b)),
            Measure::Tactics(_) => Some(tactics(a, b)),
        }
    }
}

/// Section 2.4: 1 − |R₂ − R₁| / |S₁ − S₀|, rewards in [0, 1]. Non-terminal positions (no
/// reward) against terminal ones score 0; two non-terminal positions with no moves 1.
pub fn terminal(a: Option<f64>, b: Option<f64>) -> f64 {
    match (a, b) {
        (Some(x), Some(y)) => 1.0 - (x - y).abs(),
        (None, None) => 1.0,
        _ => 0.0,
    }
}

/// P_cont: |M₁ᵈ ∩ M₂ᵈ| / |M₁ᵈ ∪ M₂ᵈ| over the moves met within the subtrees' depth.
pub fn continuations(a: Sub, b: Sub) -> f64 {
    let set = |s: Sub| {
        let mut v = Vec::new();
        s.for_each_below(|n, _| v.push(s.tree.label(n)));
        v.sort_unstable();
        v.dedup();
        v
    };
    let (x, y) = (set(a), set(b));
    if x.is_empty() && y.is_empty() {
        return terminal(a.reward(), b.reward());
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common as f64 / (x.len() + y.len() - common) as f64
}

/// The simplified tree T′ of a subtree: each root-to-leaf move sequence (a leaf is a node at
/// the subtree's depth or a terminal one) as a sorted multiset of moves, with the number of
/// sequences that simplify to it (its multiplicity k).
pub fn simplified(s: Sub) -> HashMap<Vec<u32>, u32> {
    simplify(s, false)
}

/// The sequences of a subtree that end in a terminal position, simplified as in
/// [`simplified`], each with the view role's reward at its end as one more element.
pub fn outcome_sequences(s: Sub) -> HashMap<Vec<u32>, u32> {
    simplify(s, true)
}

/// Rewards are keyed above every label and below the tree-edit tokens: 0..=1000 per mille.
const REWARD_KEY: u32 = u32::MAX - 2000;

fn simplify(s: Sub, outcomes: bool) -> HashMap<Vec<u32>, u32> {
    let mut out: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut path = Vec::new();
    fn walk(s: Sub, node: u32, left: u32, path: &mut Vec<u32>, outcomes: bool, out: &mut HashMap<Vec<u32>, u32>) {
        let kids = s.tree.children(node);
        if left == 0 || kids.is_empty() {
            if !path.is_empty() {
                let mut seq = path.clone();
                seq.sort_unstable();
                if outcomes {
                    match s.tree.reward(node) {
                        Some(r) => seq.push(REWARD_KEY + (r.clamp(0.0, 1.0) * 1000.0).round() as u32),
                        None => return,
                    }
                }
                *out.entry(seq).or_insert(0) += 1;
            }
            return;
        }
        for c in kids {
            path.push(s.tree.label(c));
            walk(s, c, left - 1, path, outcomes, out);
            path.pop();
        }
    }
    walk(s, s.node, s.depth, &mut path, outcomes, &mut out);
    out
}

/// The shape of a subtree's outcomes: how many sequences end the game at each depth with
/// each reward (per mille), moves not looked at.
pub fn outcome_shape(s: Sub) -> HashMap<(u32, u32), u32> {
    let mut out = HashMap::new();
    s.for_each_below(|node, depth| {
        if let Some(r) = s.tree.reward(node) {
            *out.entry((depth, (r.clamp(0.0, 1.0) * 1000.0).round() as u32)).or_insert(0) += 1;
        }
    });
    out
}

/// Similarity of outcome shapes (ours): the weighted Jaccard index Σ min / Σ max of two
/// [`outcome_shape`]s; 1 where neither tree ends within the depth. Unlike [`outcomes`] it
/// does not ask that the same moves end the game, only that as many sequences end it as
/// soon and as well: a label-free measure, in the spirit of structural similarity.
pub fn outcome_shapes(a: Sub, b: Sub) -> f64 {
    if a.reward().is_some() || b.reward().is_some() {
        return terminal(a.reward(), b.reward());
    }
    let (x, y) = (outcome_shape(a), outcome_shape(b));
    let (mut lo, mut hi) = (0u64, 0u64);
    for (k, &v) in &x {
        let w = y.get(k).copied().unwrap_or(0);
        lo += v.min(w) as u64;
        hi += v.max(w) as u64;
    }
    for (k, &w) in &y {
        if !x.contains_key(k) {
            hi += w as u64;
        }
    }
    if hi == 0 {
        1.0
    } else {
        lo as f64 / hi as f64
    }
}

/// Tactical similarity (ours): the larger of [`outcomes`] and [`outcome_shapes`]. Two
/// positions are tactically alike if the same move sequences end the game the same way, or
/// if as many sequences end it as soon and as well though the moves differ (a threat that
/// moved one square). With the depth one more than a trap's, it is the measure that told
/// kept traps best in our benchmark (see `trapbench`).
pub fn tactics(a: Sub, b: Sub) -> f64 {
    outcomes(a, b).max(outcome_shapes(a, b))
}

/// Shared weight of two simplified trees: Σ over keys in both of (k₁ + k₂), and Σk₁ + Σk₂.
fn shared_weight(x: &HashMap<Vec<u32>, u32>, y: &HashMap<Vec<u32>, u32>) -> (u64, u64) {
    let total: u64 = x.values().chain(y.values()).map(|&k| k as u64).sum();
    let shared: u64 = x.iter().filter_map(|(s, &k1)| y.get(s).map(|&k2| (k1 + k2) as u64)).sum();
    (shared, total)
}

/// Similarity of outcomes (ours, extending section 2.4 from terminal positions to the
/// local tree): P_seq over the sequences that end the game within the depth, each with the
/// reward it ends in. Two positions whose trees end nowhere within the depth score 1; a
/// terminal position against another compares by [`terminal`]. It looks at what the
/// tactics of a position are (which move sequences win or lose, for whom) and at nothing
/// else.
pub fn outcomes(a: Sub, b: Sub) -> f64 {
    if a.reward().is_some() || b.reward().is_some() {
        return terminal(a.reward(), b.reward());
    }
    let (shared, total) = shared_weight(&outcome_sequences(a), &outcome_sequences(b));
    if total == 0 {
        1.0
    } else {
        shared as f64 / total as f64
    }
}

/// P_seq: Σ over sequences in both simplified trees of (k₁ + k₂), over Σk₁ + Σk₂.
pub fn sequences(a: Sub, b: Sub) -> f64 {
    let (shared, total) = shared_weight(&simplified(a), &simplified(b));
    if total == 0 {
        return terminal(a.reward(), b.reward());
    }
    shared as f64 / total as f64
}

/// P_tree: 1 − 2e / (|T₁| + |T₂| + e), |T| the moves of a tree; `None` where the edit table
/// would pass [`ted::MAX_CELLS`].
pub fn tree_edit(a: Sub, b: Sub, labels: &Labels) -> Option<f64> {
    let (na, nb) = (a.moves(), b.moves());
    if na + nb == 0 {
        return Some(terminal(a.reward(), b.reward()));
    }
    let e = ted::edit_distance(a, b, labels)? as f64;
    Some(1.0 - 2.0 * e / (na as f64 + nb as f64 + e))
}

/// The outcome of Algorithm 1.
#[derive(Debug, Clone)]
pub struct Structural {
    pub similarity: f64,
    /// Each child's base similarity to its parent, for the first and the second position.
    pub first: Vec<f64>,
    pub second: Vec<f64>,
    /// The optimal pairs (child of the first, child of the second, |difference|), by child
    /// index; unpaired children are left out.
    pub pairs: Vec<(usize, usize, f64)>,
}

/// Scale of similarities to integer weights for the assignment (exact to 1e-9).
const SCALE: f64 = 1e9;

/// The structural similarity S of two positions over a base measure (Algorithm 1, with the
/// paper's formula: each unpaired child adds one to the distance). Two positions with no
/// children compare by [`terminal`]. `None` where a base tree-edit table is too large.
pub fn structural(a: Sub, b: Sub, base: Base, labels: &Labels) -> Option<Structural> {
    let m = base.measure();
    let d = m.depth();
    let sims = |s: Sub| -> Option<Vec<f64>> {
        let parent = s.to_depth(d);
        s.children().map(|c| m.similarity(c.to_depth(d), parent, labels)).collect()
    };
    let (first, second) = (sims(a)?, sims(b)?);
    let (c1, c2) = (first.len(), second.len());
    if c1 == 0 && c2 == 0 {
        return Some(Structural { similarity: terminal(a.reward(), b.reward()), first, second, pairs: vec![] });
    }
    if c1 == 0 || c2 == 0 {
        return Some(Structural { similarity: 0.0, first, second, pairs: vec![] });
    }
    // Kuhn–Munkres wants rows ≤ columns: the shorter list goes in the rows.
    let swap = c1 > c2;
    let (rows, cols) = if swap { (&second, &first) } else { (&first, &second) };
    let weights: Vec<Vec<i64>> =
        rows.iter().map(|&x| cols.iter().map(|&y| ((x - y).abs() * SCALE).round() as i64).collect()).collect();
    let matrix = Matrix::from_rows(weights).expect("rectangular");
    let (_, assignment) = kuhn_munkres_min(&matrix);
    let mut pairs = Vec::with_capacity(rows.len());
    let mut total = 0.0;
    for (r, &c) in assignment.iter().enumerate() {
        let dist = (rows[r] - cols[c]).abs();
        total += dist;
        pairs.push(if swap { (c, r, dist) } else { (r, c, dist) });
    }
    pairs.sort_by_key(|p| p.0);
    let similarity = 1.0 - ((c1 as f64 - c2 as f64).abs() + total) / c1.max(c2) as f64;
    Some(Structural { similarity, first, second, pairs })
}

/// A pair of moves of two positions matched by structural similarity.
#[derive(Debug, Clone, PartialEq)]
pub struct MovePair {
    pub first: String,
    pub second: String,
    /// |P₁ᵢ − P₂ⱼ|: how differently the two moves relate to their positions.
    pub distance: f64,
}

/// Move matching (section 3): the moves of two positions paired by the assignment of
/// [`structural`], closest pairs first.
pub fn move_matching(a: Sub, b: Sub, base: Base, labels: &Labels) -> Option<Vec<MovePair>> {
    let s = structural(a, b, base, labels)?;
    let (ka, kb): (Vec<Sub>, Vec<Sub>) = (a.children().collect(), b.children().collect());
    let mut out: Vec<MovePair> = s
        .pairs
        .iter()
        .map(|&(i, j, distance)| MovePair {
            first: labels.text(ka[i].label()).to_string(),
            second: labels.text(kb[j].label()).to_string(),
            distance,
        })
        .collect();
    out.sort_by(|x, y| x.distance.total_cmp(&y.distance));
    Some(out)
}

/// A pair of moves matched over the first two plies, with how often it was matched.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MatchCount {
    pub first: String,
    pub second: String,
    pub count: usize,
    /// Whether the move ended the game where it was matched (a decisive move: a mate).
    pub first_ends: bool,
    pub second_ends: bool,
}

/// The move pairs matched over the first two plies, by frequency: the root's children are
/// matched, then the children of every matched pair. The paper reads the most frequent
/// pairs as moves of like strategic value (a killer move in one position and its match in
/// the other). The subtrees must reach two plies below the base measure's depth.
pub fn match_counts(a: Sub, b: Sub, base: Base, labels: &Labels) -> Option<Vec<MatchCount>> {
    let mut counts: HashMap<(u32, u32), (usize, bool, bool)> = HashMap::new();
    let mut add = |x: Sub, y: Sub| {
        let e = counts.entry((x.label(), y.label())).or_insert((0, false, false));
        e.0 += 1;
        e.1 |= x.reward().is_some();
        e.2 |= y.reward().is_some();
    };
    let top = structural(a, b, base, labels)?;
    let (ka, kb): (Vec<Sub>, Vec<Sub>) = (a.children().collect(), b.children().collect());
    for &(i, j, _) in &top.pairs {
        add(ka[i], kb[j]);
        let (x, y) = (ka[i], kb[j]);
        if let Some(inner) = structural(x, y, base, labels) {
            let (xa, yb): (Vec<Sub>, Vec<Sub>) = (x.children().collect(), y.children().collect());
            for &(p, q, _) in &inner.pairs {
                add(xa[p], yb[q]);
            }
        }
    }
    let mut out: Vec<MatchCount> = counts
        .into_iter()
        .map(|((x, y), (count, first_ends, second_ends))| MatchCount {
            first: labels.text(x).to_string(),
            second: labels.text(y).to_string(),
            count,
            first_ends,
            second_ends,
        })
        .collect();
    out.sort_by(|p, q| q.count.cmp(&p.count).then_with(|| p.first.cmp(&q.first)).then_with(|| p.second.cmp(&q.second)));
    Some(out)
}

#[cfg(test)]
mod tests;
