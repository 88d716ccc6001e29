//! Traps (Evans and Turrini, section 1; Ramanujan, Sabharwal and Selman 2010): a move that
//! looks good but lets the other roles force a loss within a few plies.
//!
//! **Definition used here.** A move m of role r in state s is a *trap of depth k* when,
//! after m, the other roles can force r's loss within k plies, while some other move of r in
//! s cannot be so punished within k plies (the loss was avoidable; where every move loses,
//! none is called a trap, the position is lost). r *loses* when the game ends with r's goal
//! at most `loss` (by default r's lowest goal value, so in a win/loss game: r is beaten); a
//! terminal state that gives r no goal value counts as a loss.
//!
//! **Forcing.** The other roles act as one coalition. At each ply the coalition picks its
//! joint move and then every move of r must still lead to a forced loss (so in a
//! turn-taking game: the opponent picks a move on its turn, every reply of r is searched on
//! r's; in a simultaneous-move game the coalition is assumed to guess r's move, which makes
//! a trap a move against which *some* choice of the others wins by force). The ply of m
//! itself counts as ply 0: the others' moves played together with m are part of "after m".
//!
//! The search is exact and bounded: a depth-first AND/OR search over the state machine (no
//! playouts) with a transposition table that keeps, per state, the least depth at which a
//! loss is proven forced and the greatest at which it is proven not forced, and a node
//! budget beyond which the answer is "undecided".

pub mod bench;

use crate::machine::StateMachine;
use crate::similarity::machine::joint_moves;
use std::collections::HashMap;
use std::time::Instant;

/// What the table knows of a state: forced within `forced_at` plies (and so within any
/// more), not forced within `free_to` plies (and so within any fewer).
#[derive(Clone, Copy, Debug)]
struct Bounds {
    forced_at: u16,
    free_to: i32,
}

const NONE_FORCED: u16 = u16::MAX;

/// A bounded exact search for forced losses of one role.
pub struct TrapSearch<'m, M: StateMachine> {
    m: &'m mut M,
    role: usize,
    loss: u32,
    table: HashMap<M::State, Bounds>,
    /// States expanded since the last [`TrapSearch::reset_budget`].
    pub nodes: u64,
    budget: u64,
    /// A time after which the search stops as if out of budget.
    until: Option<Instant>,
    exhausted: bool,
    legal: Vec<Vec<M::Move>>,
}

/// The table is cleared when it passes this many states.
const MAX_TABLE: usize = 4_000_000;

/// What [`TrapSearch::move_loses`] proves of a move: `None` when it does not lose by force
/// within the depth, else the least depth and a refutation as joint moves (the move's own
/// first).
pub type MoveLoss<Mv> = Option<(u32, Vec<Vec<Mv>>)>;

/// A move's verdict.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MoveVerdict {
    /// The move as the state machine prints it (the joint move where several roles choose).
    pub text: String,
    /// Whether the others can force the loss within the depth after this move; `None` when
    /// the node budget ran out first.
    pub loses: Option<bool>,
    /// Whether it is a trap (it loses by force and some other move does not).
    pub trap: bool,
    /// Plies after the move within which the loss is forced (the least such), if it is.
    pub plies: Option<u32>,
    /// A refutation: the moves (of the roles that choose) from the state after the move to
    /// the loss, the others' best and r's longest defence.
    pub refutation: Vec<String>,
}

/// The traps of one role in one state.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TrapReport {
    pub role: String,
    pub depth: u32,
    pub loss: u32,
    pub moves: Vec<MoveVerdict>,
    /// Some move is a trap.
    pub trap_state: bool,
    /// Every move loses by force (nothing to avoid).
    pub lost: bool,
    /// Some verdict was cut by the node budget.
    pub undecided: bool,
    pub nodes: u64,
    pub ms: f64,
}

impl<'m, M: StateMachine> TrapSearch<'m, M> {
    /// A search for losses of `role` (goal at most `loss`), expanding at most `budget` states
    /// per question.
    pub fn new(m: &'m mut M, role: usize, loss: u32, budget: u64) -> Self {
        TrapSearch {
            m,
            role,
            loss,
            table: HashMap::new(),
            nodes: 0,
            budget,
            until: None,
            exhausted: false,
            legal: Vec::new(),
        }
    }

    /// The same search, which also runs out (as of its budget) at `until`.
    pub fn until(self, until: Instant) -> Self {
        TrapSearch { until: Some(until), ..self }
    }

    /// Starts a new question: the node count and the budget flag are reset (the table stays).
    pub fn reset_budget(&mut self) {
        self.nodes = 0;
        self.exhausted = false;
    }

    /// Whether the budget ran out since the last reset.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    fn lost_here(&mut self, s: &M::State) -> bool {
        self.m.goal(s, self.role).unwrap_or(0) <= self.loss
    }

    /// The joint moves of `s` grouped by the coalition's part: for each choice of the other
    /// roles, the successors under each move of `role`.
    fn options(&mut self, s: &M::State) -> Vec<(String, Vec<(String, M::State)>)> {
        let joints = joint_moves(self.m, s, &mut self.legal);
        let roles = self.m.roles().len();
        let role = self.role;
        let mut groups: Vec<(Vec<M::Move>, String, Vec<(String, M::State)>)> = Vec::new();
        for (_, joint) in joints {
            let others: Vec<M::Move> = (0..roles).filter(|&r| r != role).map(|r| joint[r]).collect();
            let mut next = s.clone();
            self.m.next_state(s, &joint, &mut next);
            let mine = self.m.move_text(joint[role]);
            let other_text =
                (0..roles).filter(|&r| r != role).map(|r| self.m.move_text(joint[r])).collect::<Vec<_>>().join(" | ");
            match groups.iter_mut().find(|g| g.0 == others) {
                Some(g) => g.2.push((mine, next)),
                None => groups.push((others, other_text, vec![(mine, next)])),
            }
        }
        groups.into_iter().map(|(_, t, v)| (t, v)).collect()
    }

    /// Whether the others can force `role`'s loss from `s` within `k` plies; `None` when the
    /// budget ran out.
    pub fn forced(&mut self, s: &M::State, k: u32) -> Option<bool> {
        if self.m.is_terminal(s) {
            return Some(self.lost_here(s));
        }
        if k == 0 {
            return Some(false);
        }
        if let Some(b) = self.table.get(s) {
            if u32::from(b.forced_at) <= k {
                return Some(true);
            }
            if b.free_to >= k as i32 {
                return Some(false);
            }
        }
        if self.nodes >= self.budget
            || (self.nodes.is_multiple_of(64) && self.until.is_some_and(|u| Instant::now() >= u))
        {
            self.exhausted = true;
            return None;
        }
        self.nodes += 1;
        let options = self.options(s);
        let mut undecided = false;
        let mut result = false;
        'coalition: for (_, replies) in &options {
            let mut all = true;
            for (_, next) in replies {
                match self.forced(next, k - 1) {
                    Some(true) => {}
                    Some(false) => {
                        all = false;
                        break;
                    }
                    None => {
                        undecided = true;
                        all = false;
                        break;
                    }
                }
            }
            if all && !replies.is_empty() {
                result = true;
                break 'coalition;
            }
        }
        if !result && undecided {
            return None;
        }
        if self.table.len() >= MAX_TABLE {
            self.table.clear();
        }
        let e = self.table.entry(s.clone()).or_insert(Bounds { forced_at: NONE_FORCED, free_to: -1 });
        if result {
            e.forced_at = e.forced_at.min(k.min(u32::from(NONE_FORCED) - 1) as u16);
        } else {
            e.free_to = e.free_to.max(k as i32);
        }
        Some(result)
    }

    /// The least depth ≤ `k` within which the loss is forced from `s`, if any.
    pub fn least_depth(&mut self, s: &M::State, k: u32) -> Option<Option<u32>> {
        for d in 0..=k {
            match self.forced(s, d)? {
                true => return Some(Some(d)),
                false => {}
            }
        }
        Some(None)
    }

    /// Whether `role`'s move `mv` in `s` loses by force within `k` plies after it (the move
    /// itself is ply 0, played with some choice of the others): the least such depth and a
    /// refutation as joint moves (the move's own first, then the others' forcing choices with
    /// the role's longest defence), or `Some(None)` where it does not; `None` when the budget
    /// ran out first.
    pub fn move_loses(&mut self, s: &M::State, mv: M::Move, k: u32) -> Option<MoveLoss<M::Move>> {
        let joints = joint_moves(self.m, s, &mut self.legal);
        let mut best: Option<(u32, Vec<M::Move>, M::State)> = None;
        let mut undecided = false;
        let role = self.role;
        for (_, joint) in joints.into_iter().filter(|(_, j)| j[role] == mv) {
            let mut next = s.clone();
            self.m.next_state(s, &joint, &mut next);
            match self.least_depth(&next, k) {
                Some(Some(d)) if best.as_ref().is_none_or(|b| d < b.0) => best = Some((d, joint, next)),
                Some(_) => {}
                None => undecided = true,
            }
        }
        match best {
            Some((d, joint, next)) => {
                let mut line = vec![joint];
                line.extend(self.joint_refutation(&next, d));
                Some(Some((d, line)))
            }
            None if undecided => None,
            None => Some(None),
        }
    }

    /// [`TrapSearch::refutation`] as joint moves: from `s`, whose loss is forced in `d`
    /// plies, the others' forcing choice and the role's longest defence, ply by ply.
    fn joint_refutation(&mut self, s: &M::State, d: u32) -> Vec<Vec<M::Move>> {
        let roles = self.m.roles().len();
        let role = self.role;
        let mut line = Vec::new();
        let mut s = s.clone();
        let mut d = d;
        while d > 0 && !self.m.is_terminal(&s) {
            let joints = joint_moves(self.m, &s, &mut self.legal);
            let others = |j: &[M::Move]| (0..roles).filter(|&r| r != role).map(|r| j[r]).collect::<Vec<_>>();
            let mut chosen: Option<(Vec<M::Move>, M::State, u32)> = None;
            let mut tried: Vec<Vec<M::Move>> = Vec::new();
            for (_, first) in &joints {
                let part = others(first);
                if tried.contains(&part) {
                    continue;
                }
                tried.push(part.clone());
                let mut replies = Vec::new();
                for (_, joint) in joints.iter().filter(|(_, j)| others(j) == part) {
                    let mut next = s.clone();
                    self.m.next_state(&s, joint, &mut next);
                    replies.push((joint.clone(), next));
                }
                if replies.iter().all(|(_, n)| self.forced(n, d - 1) == Some(true)) {
                    for (joint, n) in replies {
                        let nd = self.least_depth(&n, d - 1).flatten().unwrap_or(d - 1);
                        if chosen.as_ref().is_none_or(|c| nd > c.2) {
                            chosen = Some((joint, n, nd));
                        }
                    }
                    break;
                }
            }
            let Some((joint, n, nd)) = chosen else { break };
            line.push(joint);
            s = n;
            d = nd;
        }
        line
    }

    /// A refutation line from `s` in exactly `d` plies (the least forced depth): the
    /// coalition's forcing choice and r's longest defence, ply by ply.
    fn refutation(&mut self, s: &M::State, d: u32) -> Vec<String> {
        let mut line = Vec::new();
        let mut s = s.clone();
        let mut d = d;
        while d > 0 && !self.m.is_terminal(&s) {
            let options = self.options(&s);
            let mut chosen: Option<(String, String, M::State, u32)> = None;
            for (other, replies) in options {
                if replies.iter().all(|(_, n)| self.forced(n, d - 1) == Some(true)) {
                    // r's longest defence: the reply whose least forced depth is largest.
                    let mut best: Option<(String, M::State, u32)> = None;
                    for (mine, n) in replies {
                        let nd = self.least_depth(&n, d - 1).flatten().unwrap_or(d - 1);
                        if best.as_ref().is_none_or(|b| nd > b.2) {
                            best = Some((mine, n, nd));
                        }
                    }
                    if let Some((mine, n, nd)) = best {
                        chosen = Some((other, mine, n, nd));
                    }
                    break;
                }
            }
            let Some((other, mine, n, nd)) = chosen else { break };
            line.push(ply_text(&other, &mine));
            s = n;
            d = nd;
        }
        line
    }

    /// The verdict on every legal move of `role` in `s` at depth `k`.
    pub fn analyse(&mut self, s: &M::State, k: u32) -> TrapReport {
        let t0 = Instant::now();
        let role_name = self.m.roles()[self.role].clone();
        let mut moves = Vec::new();
        let mut undecided = false;
        let mut nodes = 0;
        if !self.m.is_terminal(s) {
            // Group the joint moves by r's move: a move loses when some choice of the others
            // played with it leads to a state from which the loss is forced within k.
            let options = self.options(s);
            let mut by_move: Vec<(String, Vec<(String, M::State)>)> = Vec::new();
            for (other, replies) in options {
                for (mine, next) in replies {
                    match by_move.iter_mut().find(|e| e.0 == mine) {
                        Some(e) => e.1.push((other.clone(), next)),
                        None => by_move.push((mine, vec![(other.clone(), next)])),
                    }
                }
            }
            for (text, outcomes) in by_move {
                self.reset_budget();
                let mut loses = Some(false);
                let mut best: Option<(String, M::State, u32)> = None;
                for (other, next) in outcomes {
                    match self.least_depth(&next, k) {
                        Some(Some(d)) => {
                            loses = Some(true);
                            if best.as_ref().is_none_or(|b| d < b.2) {
                                best = Some((other, next, d));
                            }
                        }
                        Some(None) => {}
                        None => {
                            if loses != Some(true) {
                                loses = None;
                            }
                        }
                    }
                }
                nodes += self.nodes;
                undecided |= loses.is_none();
                let (plies, refutation) = match best {
                    Some((other, next, d)) => {
                        let mut line = self.refutation(&next, d);
                        if !other.is_empty() && other.split(" | ").any(|t| t != "noop") {
                            line.insert(0, format!("({other} with the move)"));
                        }
                        (Some(d), line)
                    }
                    None => (None, Vec::new()),
                };
                moves.push(MoveVerdict { text, loses, trap: false, plies, refutation });
            }
        }
        let avoidable = moves.iter().any(|v| v.loses == Some(false));
        for v in &mut moves {
            v.trap = avoidable && v.loses == Some(true);
        }
        let lost = !moves.is_empty() && moves.iter().all(|v| v.loses == Some(true));
        TrapReport {
            role: role_name,
            depth: k,
            loss: self.loss,
            trap_state: moves.iter().any(|v| v.trap),
            lost,
            undecided,
            moves,
            nodes,
            ms: t0.elapsed().as_secs_f64() * 1000.0,
        }
    }

    /// Whether `s` is a trap state for `role` at depth `k` (some move is a trap); `None`
    /// when undecided.
    pub fn has_trap(&mut self, s: &M::State, k: u32) -> Option<bool> {
        let r = self.analyse(s, k);
        if r.trap_state {
            Some(true)
        } else if r.undecided {
            None
        } else {
            Some(false)
        }
    }
}

fn ply_text(other: &str, mine: &str) -> String {
    let others: Vec<&str> = other.split(" | ").filter(|t| *t != "noop" && !t.is_empty()).collect();
    match (others.is_empty(), mine == "noop") {
        (false, true) => others.join(" | "),
        (true, _) => mine.to_string(),
        (false, false) => format!("{} | {mine}", others.join(" | ")),
    }
}

/// The least goal value a role can get, from the goal values the game declares for it
/// (what "r loses" means by default).
pub fn lowest_goal(values: impl IntoIterator<Item = u32>) -> u32 {
    values.into_iter().min().unwrap_or(0)
}

#[cfg(test)]
mod tests;
