//! The sequence form (Farina, `sequence-form-strategies.txt`): the game tree as each role's
//! tree-form sequential decision process, and the zero-sum saddle point as one linear program.
//!
//! - A *decision point* j ∈ J of a role is a tree node where the role has two or more legal
//!   moves; its actions A_j are those moves. The other role's simultaneous move at that node is
//!   not seen when choosing (it is the other role's own decision point at the same node), and
//!   both see the joint move afterwards: perfect recall, one decision point per node.
//! - A *sequence* ja is a decision point with one of its actions; σ = ∅ is the empty sequence,
//!   numbered 0. p_j, the *parent sequence* of j, is the last sequence of the role on the path
//!   to j (∅ if none).
//! - A *sequence-form strategy* x ∈ Q (Definition 2.1) has x[∅] = 1 (Remark 2.1) and
//!   Σ_{a ∈ A_j} x[ja] = x[p_j] at every decision point j.
//!
//! With A the payoff matrix over pairs of sequences (a leaf's goal at the pair of sequences that
//! lead to it), role r's security value is max_{x ∈ Q_r} min_{y ∈ Q_o} xᵀAy. The inner
//! minimisation is a linear program over y (F y = f, y ≥ 0, F's rows: y[∅] = 1 and one
//! mass-conservation row per decision point of the other role); replacing it by its dual
//! (max fᵀv subject to Fᵀv ≤ Aᵀx) makes the whole a single linear program in (x, v)
//! (Koller, Megiddo, von Stengel 1996):
//!
//!   max v₀ subject to x ∈ Q_r and, for every sequence σ of the other role,
//!   v_{row(σ)} − Σ_{k: p_k = σ} v_k ≤ Σ_{leaves ℓ with σ_o(ℓ) = σ} goal_r(ℓ) x[σ_r(ℓ)],
//!
//! where row(∅) = 0 and row(ka) = k.

use super::matrix::normalised;
use super::{expand, joint_index, SolveError, SolveOptions};
use crate::machine::StateMachine;
use microlp::{ComparisonOp, OptimizationDirection, Problem};
use std::time::Instant;

/// A role's decision point: the tree node it is at, its parent sequence and its sequences
/// `first..first + count`.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub node: u32,
    pub parent: u32,
    pub first: u32,
    pub count: u32,
}

/// One role's side of the sequence form.
#[derive(Clone, Debug, Default)]
pub struct RoleSequences {
    /// Sequences, ∅ (number 0) included.
    pub sequences: usize,
    pub points: Vec<Point>,
}

#[derive(Clone, Copy, Debug)]
struct TreeNode {
    /// Each role's last sequence on the path to the node (its own sequences at the node, if it
    /// decides there, follow).
    seq: [u32; 2],
    /// Both roles' goals, for a leaf.
    goals: Option<[u32; 2]>,
    /// Each role's number of legal moves (0 at a leaf).
    moves: [u32; 2],
    /// Each role's decision point at the node, if it has one.
    point: [Option<u32>; 2],
    /// The children, by joint move (role 0's move i, role 1's move j at i * moves[1] + j), are
    /// `first_child..first_child + moves[0] * moves[1]`.
    first_child: u32,
}

/// A game tree in sequence form.
pub struct SequenceForm {
    tree: Vec<TreeNode>,
    pub roles: [RoleSequences; 2],
    /// Each role's moves at the root, printed (empty at a terminal root).
    pub root_moves: [Vec<String>; 2],
}

/// One role's solution of the sequence-form program.
#[derive(Clone, Debug)]
pub struct SequenceSolution {
    /// The program's optimum: the role's security value.
    pub value: f64,
    /// The role's sequence-form strategy x (x[0] = 1 for ∅).
    pub x: Vec<f64>,
    /// The role's behavioural strategy at the root (one probability per root move), or empty
    /// when it has one move there.
    pub root: Vec<f64>,
}

impl SequenceForm {
    /// Enumerates the game tree from `start` (every history: transpositions are separate
    /// nodes), at most `opts.max_nodes` nodes.
    pub fn build<M: StateMachine>(m: &mut M, start: &M::State, opts: &SolveOptions) -> Result<Self, SolveError> {
        let mut tree: Vec<TreeNode> =
            vec![TreeNode { seq: [0, 0], goals: None, moves: [0, 0], point: [None, None], first_child: 0 }];
        let mut roles =
            [RoleSequences { sequences: 1, points: Vec::new() }, RoleSequences { sequences: 1, points: Vec::new() }];
        let mut root_moves = [Vec::new(), Vec::new()];
        let mut stack: Vec<(u32, M::State)> = vec![(0, start.clone())];
        let mut legal: [Vec<M::Move>; 2] = [Vec::new(), Vec::new()];
        let mut joint = Vec::with_capacity(2);
        let mut next = start.clone();
        let mut expanded = 0usize;
        while let Some((n, s)) = stack.pop() {
            expanded += 1;
            if expanded % 1024 == 0 && opts.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(SolveError::Timeout);
            }
            let node = n as usize;
            if let Some(goals) = expand(m, &s, &mut legal)? {
                tree[node].goals = Some(goals);
                continue;
            }
            if n == 0 {
                root_moves = std::array::from_fn(|r| legal[r].iter().map(|&mv| m.move_text(mv)).collect());
            }
            let counts = [legal[0].len(), legal[1].len()];
            let mut first = [0u32; 2];
            for r in 0..2 {
                if counts[r] > 1 {
                    let rs = &mut roles[r];
                    tree[node].point[r] = Some(rs.points.len() as u32);
                    first[r] = rs.sequences as u32;
                    rs.points.push(Point {
                        node: n,
                        parent: tree[node].seq[r],
                        first: first[r],
                        count: counts[r] as u32,
                    });
                    rs.sequences += counts[r];
                }
            }
            let kids = counts[0] * counts[1];
            if tree.len() + kids > opts.max_nodes {
                return Err(SolveError::TooLarge { what: "tree nodes", limit: opts.max_nodes });
            }
            let first_child = tree.len() as u32;
            tree[node].moves = [counts[0] as u32, counts[1] as u32];
            tree[node].first_child = first_child;
            let parent_seq = tree[node].seq;
            for i in 0..counts[0] {
                for j in 0..counts[1] {
                    let pick = [i, j];
                    let seq: [u32; 2] =
                        std::array::from_fn(|r| if counts[r] > 1 { first[r] + pick[r] as u32 } else { parent_seq[r] });
                    joint.clear();
                    joint.extend([legal[0][i], legal[1][j]]);
                    m.next_state(&s, &joint, &mut next);
                    let id = tree.len() as u32;
                    tree.push(TreeNode { seq, goals: None, moves: [0, 0], point: [None, None], first_child: 0 });
                    stack.push((id, next.clone()));
                }
            }
            if m.overflowed() {
                return Err(SolveError::Overflow);
            }
        }
        Ok(SequenceForm { tree, roles, root_moves })
    }

    /// Tree nodes (histories).
    pub fn nodes(&self) -> usize {
        self.tree.len()
    }

    /// Leaves (terminal histories).
    pub fn leaves(&self) -> usize {
        self.tree.iter().filter(|t| t.goals.is_some()).count()
    }

    /// Role `role`'s security value and sequence-form strategy: the program above, solved.
    pub fn solve_role(&self, role: usize, opts: &SolveOptions) -> Result<SequenceSolution, SolveError> {
        let other = 1 - role;
        let (mine, theirs) = (&self.roles[role], &self.roles[other]);
        let mut p = Problem::new(OptimizationDirection::Maximize);
        if let Some(d) = opts.deadline {
            p.set_time_limit(d.saturating_duration_since(Instant::now()));
        }
        // x: the role's sequences, x[∅] fixed at 1.
        let x: Vec<_> = (0..mine.sequences)
            .map(|s| if s == 0 { p.add_var(0.0, (1.0, 1.0)) } else { p.add_var(0.0, (0.0, 1.0)) })
            .collect();
        // v: the dual of the other role's rows (row 0: y[∅] = 1; row k + 1: decision point k).
        let v: Vec<_> = (0..=theirs.points.len())
            .map(|k| p.add_var(if k == 0 { 1.0 } else { 0.0 }, (f64::NEG_INFINITY, f64::INFINITY)))
            .collect();
        for pt in &mine.points {
            let mut row: Vec<_> = (0..pt.count).map(|a| (x[(pt.first + a) as usize], 1.0)).collect();
            row.push((x[pt.parent as usize], -1.0));
            p.add_constraint(row.as_slice(), ComparisonOp::Eq, 0.0);
        }
        // One row per sequence of the other role: its dual variable, minus the dual variables of
        // the decision points it leads to, minus the payoffs of the leaves it ends at.
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); theirs.sequences];
        rows[0].push((0, 1.0));
        for (k, pt) in theirs.points.iter().enumerate() {
            for a in 0..pt.count {
                rows[(pt.first + a) as usize].push((k + 1, 1.0));
            }
            rows[pt.parent as usize].push((k + 1, -1.0));
        }
        let mut payoff: Vec<Vec<(u32, f64)>> = vec![Vec::new(); theirs.sequences];
        for t in &self.tree {
            if let Some(g) = t.goals {
                payoff[t.seq[other] as usize].push((t.seq[role], g[role] as f64));
            }
        }
        for (sigma, row) in rows.iter().enumerate() {
            let mut terms: Vec<(microlp::Variable, f64)> = row.iter().map(|&(k, c)| (v[k], c)).collect();
            let pay = &mut payoff[sigma];
            pay.sort_unstable_by_key(|&(s, _)| s);
            let mut k = 0;
            while k < pay.len() {
                let (s, mut c) = pay[k];
                k += 1;
                while k < pay.len() && pay[k].0 == s {
                    c += pay[k].1;
                    k += 1;
                }
                if c != 0.0 {
                    terms.push((x[s as usize], -c));
                }
            }
            p.add_constraint(terms.as_slice(), ComparisonOp::Le, 0.0);
        }
        let sol = super::lp_solution(&p)?;
        let xs: Vec<f64> = x.iter().map(|&xi| sol.var_value(xi).max(0.0)).collect();
        let root = match self.tree[0].point[role] {
            Some(k) => {
                let pt = mine.points[k as usize];
                normalised((0..pt.count).map(|a| xs[(pt.first + a) as usize]).collect())
            }
            None => Vec::new(),
        };
        Ok(SequenceSolution { value: sol.objective(), x: xs, root })
    }

    /// What the sequence-form strategy `x` of `role` guarantees against the other role's best
    /// response, by a walk of the tree apart from the program: at each node the other role
    /// takes the move whose subtree pays the least, each leaf paying its goal weighted by x at
    /// the role's sequence.
    pub fn guarantee(&self, role: usize, x: &[f64]) -> f64 {
        let other = 1 - role;
        let mut w = vec![0.0; self.tree.len()];
        // Children have larger numbers than their parent.
        for n in (0..self.tree.len()).rev() {
            let t = &self.tree[n];
            w[n] = match t.goals {
                Some(g) => g[role] as f64 * x[t.seq[role] as usize],
                None => {
                    let cols = t.moves[1] as usize;
                    let child =
                        |mine: usize, theirs: usize| t.first_child as usize + joint_index(role, mine, theirs, cols);
                    (0..t.moves[other] as usize)
                        .map(|b| (0..t.moves[role] as usize).map(|a| w[child(a, b)]).sum::<f64>())
                        .fold(f64::INFINITY, f64::min)
                }
            };
        }
        w[0]
    }
}
