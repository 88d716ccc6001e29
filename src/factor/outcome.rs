//! Goal and terminal latches: what the latches decide of a game's outcome before it ends.
//!
//! Cox et al. (section 4) call a latch whose value fixes a goal a *goal latch* (a goal value
//! that can no longer change) and one that fixes termination a *terminal latch*. Two forms
//! are found here, both proved, never sampled:
//!
//! - [`outcome_latches`]: static. For each latch ([`super::latch::latches`]) at its latched
//!   value, with every other base and every input unknown, each goal proposition and the
//!   terminal are evaluated in three-valued logic (the same evaluators as the latch proofs). A
//!   goal `(goal r v)` true there holds in every state where the latch holds, and the latch
//!   holds in every state after it: from then on `r`'s goal is `v`, whatever is played. A
//!   goal false there is *excluded*: `r` can no longer score `v`.
//! - [`Decider::decided`]: in a given state. Latch modification (Definition 4.4) fixes the largest
//!   set of bases that provably keep their values from that state on
//!   ([`super::latch::fixed_from`]); the goals evaluated over that set (everything else
//!   unknown, moves the fixed bases forbid never played) say which roles' goals are already
//!   decided there. This finds what no single latch decides (a board finished under a goal
//!   that reads it, the rest of the game still to play).
//!
//! A player may stop a playout, or prove a node, once every role's goal is decided.

use super::latch::{fixed_from, Latch, LatchKind};
use super::net_info::{ref_value, ConeEval, Forward, NetInfo, V};
use crate::propnet::{Net, Ref};
use serde::Serialize;

/// What a latch decides, once it holds, of the game's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OutcomeLatch {
    pub latch: Latch,
    /// `(role, value)`: the role's goal is `value` in every state where the latch holds.
    pub goals: Vec<(usize, u32)>,
    /// `(role, value)`: the role's goal is never `value` where the latch holds.
    pub excluded: Vec<(usize, u32)>,
    /// Every state where the latch holds is terminal.
    pub terminal: bool,
}

/// Nodes a forward evaluation may visit before the cone is walked instead.
const FORWARD_BUDGET: usize = 256;

/// The latches among `latches` that decide a goal or the ending (see the module docs).
pub fn outcome_latches(net: &Net, latches: &[Latch]) -> Vec<OutcomeLatch> {
    outcome_latches_with(net, &NetInfo::new(net), latches)
}

/// [`outcome_latches`] with the network's [`NetInfo`] made once by the caller.
pub(crate) fn outcome_latches_with(net: &Net, info: &NetInfo, latches: &[Latch]) -> Vec<OutcomeLatch> {
    let mut targets: Vec<Ref> = net.goals.iter().flatten().map(|&(g, _)| g).collect();
    targets.push(net.terminal);
    let mut fw = Forward::new(net, info, &targets);
    let mut ev = ConeEval::new(net.nodes.len());
    // The goal propositions with a value, then the terminal: evaluated together per latch.
    let goal_refs: Vec<(usize, Ref, u32)> = net
        .goals
        .iter()
        .enumerate()
        .flat_map(|(role, gs)| gs.iter().filter_map(move |&(g, gv)| gv.map(|gv| (role, g, gv))))
        .collect();
    let mut asked: Vec<Ref> = goal_refs.iter().map(|&(_, g, _)| g).collect();
    asked.push(net.terminal);
    let mut vals = Vec::with_capacity(asked.len());
    let mut out = Vec::new();
    for &latch in latches {
        let (b, v) = (latch.base, latch.kind == LatchKind::Positive);
        // One propagation for every question (as much work at most as one per question);
        // past that budget, each question on its own, forward or over its cone.
        if !fw.eval_all(net, info, &[(b, v)], &asked, FORWARD_BUDGET.saturating_mul(asked.len()), &mut vals) {
            vals.clear();
            vals.extend(asked.iter().map(|&r| {
                fw.eval(net, info, &[(b, v)], r, FORWARD_BUDGET)
                    .unwrap_or_else(|| ev.eval(net, info, r, &|x| (x == b).then_some(v)))
            }));
        }
        let mut o = OutcomeLatch { latch, goals: Vec::new(), excluded: Vec::new(), terminal: false };
        for (&(role, _, gv), &val) in goal_refs.iter().zip(&vals) {
            match val {
                V::T => o.goals.push((role, gv)),
                V::F => o.excluded.push((role, gv)),
                V::U => {}
            }
        }
        o.terminal = vals.last() == Some(&V::T);
        if !o.goals.is_empty() || o.terminal {
            out.push(o);
        }
    }
    out
}

/// The goal latches of `net` as [`crate::propnet::PropnetMachine::set_goal_latches`] takes
/// them: per latch that decides some goal, its base, the value it keeps, and the roles whose
/// goals it decides.
pub fn playout_table(net: &Net) -> Vec<(u32, bool, Vec<usize>)> {
    playout_table_with(net, &super::NetFacts::new(net))
}

/// [`playout_table`] from the network's facts made once by the caller.
pub fn playout_table_with(net: &Net, facts: &super::NetFacts) -> Vec<(u32, bool, Vec<usize>)> {
    outcome_latches_with(net, &facts.info, &facts.latches)
        .iter()
        .filter(|o| !o.goals.is_empty())
        .map(|o| (o.latch.base, o.latch.kind == LatchKind::Positive, o.goals.iter().map(|&(r, _)| r).collect()))
        .collect()
}

/// What a state decides of the outcome (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decided {
    /// Per role: its goal from this state on, where it is decided.
    pub goals: Vec<Option<u32>>,
    /// Per role: goal values it can no longer score.
    pub excluded: Vec<Vec<u32>>,
    /// The bases fixed from this state on (latch modification).
    pub fixed: usize,
}

impl Decided {
    /// Whether every role's goal is decided.
    pub fn all(&self) -> bool {
        self.goals.iter().all(Option::is_some)
    }
}

/// [`Decider::decided`]: the goals decided in a state and every state after it, for many
/// states of one game (the network's analysis made once).
pub struct Decider {
    info: NetInfo,
    iid: Vec<u32>,
}

impl Decider {
    pub fn new(net: &Net) -> Decider {
        let info = NetInfo::new(net);
        let iid = super::analyse_with(net, &info, &[]).iid;
        Decider { info, iid }
    }

    /// The goals decided in `state` (its bases' values) and every state after it.
    pub fn decided(&self, net: &Net, state: &dyn Fn(u32) -> bool) -> Decided {
        let fixed = fixed_from(net, &self.info, state, Some(&self.iid));
        let mut claim = vec![None; net.bases.len()];
        for &(b, v) in &fixed {
            claim[b as usize] = Some(v);
        }
        let val = self.info.values_legal(net, &claim);
        let mut goals = vec![None; net.roles.len()];
        let mut excluded = vec![Vec::new(); net.roles.len()];
        for (role, gs) in net.goals.iter().enumerate() {
            for &(g, gv) in gs {
                let Some(gv) = gv else { continue };
                match ref_value(&val, g) {
                    V::T => goals[role] = Some(gv),
                    V::F => excluded[role].push(gv),
                    V::U => {}
                }
            }
        }
        Decided { goals, excluded, fixed: fixed.len() }
    }
}

#[cfg(test)]
#[path = "outcome_tests.rs"]
mod tests;
