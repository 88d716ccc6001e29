//! Exact solutions of small two-player games (issue 18, item 3; Farina's lecture notes,
//! `../shared/papers/sequence-form-strategies.txt`).
//!
//! Two solvers that must agree:
//! - [`sequence`]: the *game tree* (every history) in sequence form, each role's strategies the
//!   polytope Q of sequence-form strategies (Definition 2.1), and a role's security value the
//!   bilinear saddle point max_x min_y xᵀAy, solved as one linear program by dualising the
//!   inner minimisation. This is the general method, and the one the issue names; its size is
//!   the number of histories, so it is bounded by [`SolveOptions::max_nodes`].
//! - [`induction`]: backward induction over the *state graph*. A GDL game without `sees`
//!   shows both roles the whole state, so every state starts a subgame and the saddle point
//!   decomposes into one matrix game per state (a linear program only where neither role has a
//!   pure saddle point). It reaches games whose histories are far too many for the sequence
//!   form: an iterated matrix game of 20 rounds has 4^20 histories and a few thousand states.
//!
//! Goals need not add up to a constant. For each role the solvers compute its *security*
//! (max-min) value and strategy: the role maximises its own goal while the other role
//! minimises it. When every terminal state's goals add up to one number c (a constant-sum, so
//! zero-sum, game), the two security strategies form a Nash equilibrium and the two values add
//! up to c: the game's value. Otherwise they are only what each role can guarantee, and the
//! report says so.
//!
//! Every strategy is checked apart from the programs that found it: a best response to it is
//! computed by a walk of the graph (or tree), and its guarantee must equal the value.

pub mod induction;
pub mod matrix;
pub mod sequence;
#[cfg(test)]
mod tests;

use crate::machine::StateMachine;
use microlp::Problem;
use std::time::{Duration, Instant};

/// How far two values may differ and still be the same: goals are integers up to 100, and the
/// solver meets each row to 1e-7, which over thousands of rows leaves errors of order 1e-6
/// (tic-tac-toe after one mark, 55,505 histories: 2.2e-6).
pub const TOLERANCE: f64 = 1e-4;

/// Bounds of one solve.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// States explored for backward induction.
    pub max_states: usize,
    /// Tree nodes (histories) enumerated for the sequence form; 0 skips it.
    pub max_nodes: usize,
    pub deadline: Option<Instant>,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions { max_states: 1_000_000, max_nodes: 20_000, deadline: None }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    #[error("the game has {0} roles; only two-player games are solved")]
    Roles(usize),
    #[error("more than {limit} {what}: too large to solve within the bound")]
    TooLarge { what: &'static str, limit: usize },
    #[error("the state graph has a cycle: the game can go on forever, so it has no finite game tree")]
    Cycle,
    #[error("a terminal state has no goal for role {role}")]
    NoGoal { role: String },
    #[error("role {role} has no legal move in a state that is not terminal")]
    NoMoves { role: String },
    #[error("the reasoner hit a resource limit, so its answers may be incomplete")]
    Overflow,
    #[error("the linear program failed: {0}")]
    Lp(String),
    #[error("out of time")]
    Timeout,
}

/// Both roles' goals if `s` is terminal; otherwise `None`, with each role's legal moves in
/// `legal` (the explorations of the state graph and of the tree share it).
fn expand<M: StateMachine>(
    m: &mut M,
    s: &M::State,
    legal: &mut [Vec<M::Move>; 2],
) -> Result<Option<[u32; 2]>, SolveError> {
    if m.is_terminal(s) {
        let mut goals = [0u32; 2];
        for (r, g) in goals.iter_mut().enumerate() {
            *g = m.goal(s, r).ok_or_else(|| SolveError::NoGoal { role: m.roles()[r].clone() })?;
        }
        return Ok(Some(goals));
    }
    for (r, l) in legal.iter_mut().enumerate() {
        m.legal_moves(s, r, l);
        if l.is_empty() {
            return Err(SolveError::NoMoves { role: m.roles()[r].clone() });
        }
    }
    Ok(None)
}

/// The index of the joint move of `role`'s move `mine` and the other role's move `theirs`
/// among a node's joint moves (role 0's move i and role 1's move j at i * `cols` + j, `cols`
/// role 1's number of moves).
fn joint_index(role: usize, mine: usize, theirs: usize, cols: usize) -> usize {
    let (i, j) = if role == 0 { (mine, theirs) } else { (theirs, mine) };
    i * cols + j
}

/// Solves `p`, mapping the solver's failures and interruptions to [`SolveError`].
fn lp_solution(p: &Problem) -> Result<microlp::Solution, SolveError> {
    match p.solve() {
        Ok(outcome) => outcome.into_solution().map_err(|_| SolveError::Timeout),
        Err(e) => Err(SolveError::Lp(e.to_string())),
    }
}

/// One role's security value and strategy at the start.
#[derive(Clone, Debug)]
pub struct RoleSolution {
    pub role: String,
    /// The role's security value (its equilibrium value in a constant-sum game).
    pub value: f64,
    /// What the strategy found guarantees against a best response, computed apart from the
    /// programs (equal to `value` up to round-off).
    pub guarantee: f64,
    /// The role's moves at the start with their probabilities (one move: probability 1).
    pub start: Vec<(String, f64)>,
}

/// Backward induction's figures and answer.
#[derive(Clone, Debug)]
pub struct InductionReport {
    pub states: usize,
    pub terminals: usize,
    /// States where at least one role has two or more moves.
    pub choice_states: usize,
    /// States where both roles have two or more moves.
    pub simultaneous_states: usize,
    /// Matrix games that needed a linear program (both roles, no pure saddle point).
    pub programs: usize,
    pub roles: [RoleSolution; 2],
    pub ms: f64,
}

/// The sequence form's figures and answer.
#[derive(Clone, Debug)]
pub struct SequenceReport {
    pub nodes: usize,
    pub leaves: usize,
    /// Each role's sequences (∅ included) and decision points.
    pub sequences: [usize; 2],
    pub points: [usize; 2],
    pub roles: [RoleSolution; 2],
    pub ms: f64,
}

/// A solve's report.
#[derive(Clone, Debug)]
pub struct Report {
    pub roles: Vec<String>,
    /// Some(c) when every terminal state's goals add up to c.
    pub constant_sum: Option<u32>,
    pub induction: InductionReport,
    /// The sequence form's answer, or why it was not computed (too many histories, skipped).
    pub sequence: Result<SequenceReport, String>,
}

impl Report {
    /// Whether the two security strategies are an equilibrium: a constant-sum game whose two
    /// values add up to the constant.
    pub fn is_equilibrium(&self) -> bool {
        let r = &self.induction.roles;
        self.constant_sum.is_some_and(|c| (r[0].value + r[1].value - c as f64).abs() < TOLERANCE)
    }

    /// Whether the sequence form, where computed, found the same values as backward induction.
    pub fn solvers_agree(&self) -> Option<bool> {
        let s = self.sequence.as_ref().ok()?;
        Some((0..2).all(|r| (s.roles[r].value - self.induction.roles[r].value).abs() < TOLERANCE))
    }
}

/// Solves the two-player game of `m` from `start` by backward induction and, when its tree has
/// at most `opts.max_nodes` nodes, by the sequence form too.
pub fn solve<M: StateMachine>(m: &mut M, start: &M::State, opts: &SolveOptions) -> Result<Report, SolveError> {
    let roles = m.roles().to_vec();
    if roles.len() != 2 {
        return Err(SolveError::Roles(roles.len()));
    }
    let t = Instant::now();
    let graph = induction::StateGraph::explore(m, start, opts)?;
    let solved = [induction::solve_role(&graph, 0, opts)?, induction::solve_role(&graph, 1, opts)?];
    let root = &graph.nodes[0];
    let texts: [Vec<String>; 2] = std::array::from_fn(|r| root.moves[r].iter().map(|&mv| m.move_text(mv)).collect());
    let role_solution = |r: usize| {
        let s = &solved[r];
        RoleSolution {
            role: roles[r].clone(),
            value: s.values[0],
            guarantee: induction::guarantee(&graph, r, &s.strategies),
            start: start_moves(&texts[r], &s.strategies[0]),
        }
    };
    let induction = InductionReport {
        states: graph.nodes.len(),
        terminals: graph.nodes.iter().filter(|n| n.goals.is_some()).count(),
        choice_states: graph.nodes.iter().filter(|n| n.moves.iter().any(|mv| mv.len() > 1)).count(),
        simultaneous_states: graph.nodes.iter().filter(|n| n.moves.iter().all(|mv| mv.len() > 1)).count(),
        programs: solved[0].programs + solved[1].programs,
        roles: [role_solution(0), role_solution(1)],
        ms: ms(t.elapsed()),
    };
    let constant_sum = graph.constant_sum();
    let sequence = if opts.max_nodes == 0 {
        Err("skipped (--max-nodes 0)".to_string())
    } else {
        sequence_report(m, start, &roles, opts).map_err(|e| e.to_string())
    };
    Ok(Report { roles, constant_sum, induction, sequence })
}

fn sequence_report<M: StateMachine>(
    m: &mut M,
    start: &M::State,
    roles: &[String],
    opts: &SolveOptions,
) -> Result<SequenceReport, SolveError> {
    let t = Instant::now();
    let sf = sequence::SequenceForm::build(m, start, opts)?;
    let mut solved = Vec::with_capacity(2);
    for r in 0..2 {
        let s = sf.solve_role(r, opts)?;
        solved.push(RoleSolution {
            role: roles[r].clone(),
            value: s.value,
            guarantee: sf.guarantee(r, &s.x),
            start: start_moves(&sf.root_moves[r], &s.root),
        });
    }
    let [a, b]: [RoleSolution; 2] = solved.try_into().expect("two roles");
    Ok(SequenceReport {
        nodes: sf.nodes(),
        leaves: sf.leaves(),
        sequences: [sf.roles[0].sequences, sf.roles[1].sequences],
        points: [sf.roles[0].points.len(), sf.roles[1].points.len()],
        roles: [a, b],
        ms: ms(t.elapsed()),
    })
}

/// The start's moves with their probabilities: `strategy` over them, or probability 1 for a
/// lone move (no strategy is kept where a role has one move).
fn start_moves(texts: &[String], strategy: &[f64]) -> Vec<(String, f64)> {
    if strategy.is_empty() {
        return texts.iter().map(|t| (t.clone(), 1.0)).collect();
    }
    texts.iter().cloned().zip(strategy.iter().copied()).collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
