//! Backward induction over the state graph: every state of a GDL game (without `sees`) is seen
//! by both roles, so every state starts a subgame, and a role's security value of a state is
//! the value of the matrix game of its successors' values (rows: the role's moves, columns: the
//! other role's). Transpositions are solved once.

use super::matrix::max_min;
use super::{expand, joint_index, SolveError, SolveOptions};
use crate::machine::explore::StateIndex;
use crate::machine::StateMachine;
use std::time::Instant;

/// One state of the graph.
#[derive(Clone, Debug)]
pub struct StateNode<Mv> {
    /// Both roles' goals, for a terminal state.
    pub goals: Option<[u32; 2]>,
    /// Each role's legal moves (empty for a terminal state).
    pub moves: [Vec<Mv>; 2],
    /// Successors by joint move: `children[i * moves[1].len() + j]` follows role 0's move `i`
    /// and role 1's move `j`.
    pub children: Vec<u32>,
}

impl<Mv> StateNode<Mv> {
    /// The successor after role `role`'s move `mine` and the other role's move `theirs`.
    pub fn child(&self, role: usize, mine: usize, theirs: usize) -> u32 {
        self.children[joint_index(role, mine, theirs, self.moves[1].len())]
    }
}

/// The reachable state graph of a two-player game, node 0 the start, with an order in which
/// every state comes after all its successors.
pub struct StateGraph<M: StateMachine> {
    pub states: Vec<M::State>,
    pub nodes: Vec<StateNode<M::Move>>,
    /// Successors first (a reverse topological order).
    pub order: Vec<u32>,
}

impl<M: StateMachine> StateGraph<M> {
    /// Explores every state reachable from `start` (breadth first), at most `opts.max_states`.
    pub fn explore(m: &mut M, start: &M::State, opts: &SolveOptions) -> Result<Self, SolveError> {
        let mut index = StateIndex::new(start);
        let mut nodes: Vec<StateNode<M::Move>> = Vec::new();
        let mut legal: [Vec<M::Move>; 2] = [Vec::new(), Vec::new()];
        let mut joint = Vec::with_capacity(2);
        let mut next = start.clone();
        let mut at = 0;
        while at < index.len() {
            if at % 1024 == 0 && opts.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(SolveError::Timeout);
            }
            let s = index.state(at as u32).clone();
            if let Some(goals) = expand(m, &s, &mut legal)? {
                nodes.push(StateNode { goals: Some(goals), moves: [Vec::new(), Vec::new()], children: Vec::new() });
            } else {
                let moves = legal.clone();
                let mut children = Vec::with_capacity(moves[0].len() * moves[1].len());
                for &a in &moves[0] {
                    for &b in &moves[1] {
                        joint.clear();
                        joint.extend([a, b]);
                        m.next_state(&s, &joint, &mut next);
                        let too_large = SolveError::TooLarge { what: "states", limit: opts.max_states };
                        let (id, _) = index.intern(&next, opts.max_states).ok_or(too_large)?;
                        children.push(id);
                    }
                }
                nodes.push(StateNode { goals: None, moves, children });
            }
            if m.overflowed() {
                return Err(SolveError::Overflow);
            }
            at += 1;
        }
        let order =
            crate::graph::post_order(nodes.len(), 0, |v| &nodes[v as usize].children).map_err(|_| SolveError::Cycle)?;
        Ok(StateGraph { states: index.into_states(), nodes, order })
    }

    /// Whether every terminal state's goals add up to one number, and that number.
    pub fn constant_sum(&self) -> Option<u32> {
        let mut sums = self.nodes.iter().filter_map(|n| n.goals.map(|g| g[0] + g[1]));
        let first = sums.next()?;
        sums.all(|s| s == first).then_some(first)
    }
}

/// One role's security values and strategies over a state graph.
#[derive(Clone, Debug)]
pub struct Induction {
    /// The role's security value of every state.
    pub values: Vec<f64>,
    /// The role's strategy in every state where it has two or more moves and the game is not
    /// over (empty elsewhere): one probability per legal move.
    pub strategies: Vec<Vec<f64>>,
    /// Matrix games that needed a linear program (no pure saddle point).
    pub programs: usize,
}

/// Backward induction for `role`: it maximises its goal, the other role minimises it.
pub fn solve_role<M: StateMachine>(
    g: &StateGraph<M>,
    role: usize,
    opts: &SolveOptions,
) -> Result<Induction, SolveError> {
    let n = g.nodes.len();
    let mut values = vec![0.0; n];
    let mut strategies = vec![Vec::new(); n];
    let mut programs = 0;
    let other = 1 - role;
    let mut a = Vec::new();
    for (k, &s) in g.order.iter().enumerate() {
        if k % 1024 == 0 && opts.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(SolveError::Timeout);
        }
        let node = &g.nodes[s as usize];
        if let Some(goals) = node.goals {
            values[s as usize] = goals[role] as f64;
            continue;
        }
        let (rows, cols) = (node.moves[role].len(), node.moves[other].len());
        a.clear();
        for i in 0..rows {
            for j in 0..cols {
                a.push(values[node.child(role, i, j) as usize]);
            }
        }
        let mm = max_min(&a, rows, cols)?;
        programs += mm.by_lp as usize;
        values[s as usize] = mm.value;
        if rows > 1 {
            strategies[s as usize] = mm.strategy;
        }
    }
    Ok(Induction { values, strategies, programs })
}

/// What `role`'s strategies (one per state, as [`Induction::strategies`]) guarantee from the
/// start against an opponent that knows them and minimises the role's goal: the best
/// response's value, computed apart from the programs that chose the strategies, so that a
/// wrong strategy shows as a guarantee below the claimed value.
pub fn guarantee<M: StateMachine>(g: &StateGraph<M>, role: usize, strategies: &[Vec<f64>]) -> f64 {
    let mut v = vec![0.0; g.nodes.len()];
    let other = 1 - role;
    for &s in &g.order {
        let node = &g.nodes[s as usize];
        v[s as usize] = match node.goals {
            Some(goals) => goals[role] as f64,
            None => {
                let rows = node.moves[role].len();
                let pure = [1.0];
                let x: &[f64] = if rows == 1 { &pure } else { &strategies[s as usize] };
                (0..node.moves[other].len())
                    .map(|j| (0..rows).map(|i| x[i] * v[node.child(role, i, j) as usize]).sum::<f64>())
                    .fold(f64::INFINITY, f64::min)
            }
        };
    }
    v[0]
}
