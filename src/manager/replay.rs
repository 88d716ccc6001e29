//! Replaying a match record (ours, or any ggp-base-format record: its GameServer's,
//! Tiltyard's) on our engine: whether every recorded move was legal, whether every recorded
//! state is the state our rules reach, and whether the ending and the goals agree.
//!
//! States are compared as sets of facts (ggp-base prints a state's facts in hash order), each
//! fact and move in canonical spacing ([`crate::machine::canonical_move_text`]). The replay
//! stops at the first move our rules do not allow (the state after it is unknown to us).

use super::record::MatchRecord;
use crate::machine::{canonical_move_text, find_move, split_moves, StateMachine};
use serde::Serialize;
use std::collections::BTreeSet;

/// One role's recorded move at one step.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MoveCheck {
    pub role: String,
    pub text: String,
    /// Legal by our rules in the state reached.
    pub legal: bool,
    /// The record's error code for the role at this step (`TO`, `CE`, `IL ...`; empty: none).
    pub error: String,
}

/// One joint move of the record and the state after it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StepCheck {
    /// 1 for the first joint move.
    pub step: usize,
    pub moves: Vec<MoveCheck>,
    /// Whether the recorded state after the moves is ours (`None`: the record has none).
    pub state_agrees: Option<bool>,
    /// Facts the record has and our state lacks, and facts ours has and the record lacks.
    pub missing: Vec<String>,
    pub extra: Vec<String>,
}

/// What a replay found.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReplayReport {
    pub match_id: String,
    pub roles: Vec<String>,
    /// Whether the record's first state is our initial state (`None`: no states recorded).
    pub initial_agrees: Option<bool>,
    pub steps: Vec<StepCheck>,
    /// Why the replay stopped before the record's end, if it did.
    pub stopped: Option<String>,
    /// Whether our rules end the game in the last state reached.
    pub terminal: bool,
    pub record_completed: bool,
    pub record_aborted: bool,
    /// Our goals in the last state (when terminal) and the record's.
    pub goals: Vec<Option<u32>>,
    pub record_goals: Vec<u32>,
    /// Everything agrees: the initial state, every move legal, every state, and (for a
    /// completed record) the ending and the goals; an aborted record must not go past an end.
    pub agrees: bool,
}

/// The facts of a state printed as ggp-base does (`( ( cell 1 1 b ) ( control x ) )`), in
/// canonical spacing.
pub fn parse_state(text: &str) -> Result<BTreeSet<String>, String> {
    let t = text.trim();
    let inner = t
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("a state is a parenthesised list of facts, not `{t}`"))?;
    Ok(split_moves(inner)?.iter().map(|f| canonical_move_text(f)).collect())
}

fn facts<M: StateMachine>(m: &M, s: &M::State) -> BTreeSet<String> {
    m.state_facts(s).iter().map(|f| canonical_move_text(f)).collect()
}

/// Replays `rec` on `m` (module docs). `Err` when the record cannot be read as a match of
/// this game: a step with another number of moves than roles, or an unreadable state.
pub fn replay<M: StateMachine>(m: &mut M, rec: &MatchRecord) -> Result<ReplayReport, String> {
    let roles: Vec<String> = m.roles().to_vec();
    let mut state = m.initial_state();
    let mut report = ReplayReport {
        match_id: rec.match_id.clone(),
        roles: roles.clone(),
        initial_agrees: None,
        steps: Vec::new(),
        stopped: None,
        terminal: false,
        record_completed: rec.is_completed,
        record_aborted: rec.is_aborted,
        goals: Vec::new(),
        record_goals: rec.goal_values.clone(),
        agrees: false,
    };
    if let Some(first) = rec.states.first() {
        report.initial_agrees = Some(parse_state(first)? == facts(m, &state));
    }
    let mut next = state.clone();
    let mut joint = Vec::with_capacity(roles.len());
    for (i, step_moves) in rec.moves.iter().enumerate() {
        if step_moves.len() != roles.len() {
            return Err(format!("step {}: {} moves for {} roles", i + 1, step_moves.len(), roles.len()));
        }
        if m.is_terminal(&state) {
            report.stopped = Some(format!("step {}: the game is over by our rules, yet the record goes on", i + 1));
            break;
        }
        let errors = rec.errors.get(i + 1);
        let mut check =
            StepCheck { step: i + 1, moves: Vec::new(), state_agrees: None, missing: vec![], extra: vec![] };
        joint.clear();
        for (r, text) in step_moves.iter().enumerate() {
            let mv = find_move(m, &state, r, text);
            let error = errors.and_then(|e| e.get(r)).cloned().unwrap_or_default();
            check.moves.push(MoveCheck {
                role: roles[r].clone(),
                text: canonical_move_text(text),
                legal: mv.is_some(),
                error,
            });
            if let Some(mv) = mv {
                joint.push(mv);
            }
        }
        if joint.len() < roles.len() {
            let bad: Vec<String> =
                check.moves.iter().filter(|c| !c.legal).map(|c| format!("{} {}", c.role, c.text)).collect();
            report.stopped = Some(format!("step {}: not legal by our rules: {}", i + 1, bad.join(", ")));
            report.steps.push(check);
            break;
        }
        m.next_state(&state, &joint, &mut next);
        std::mem::swap(&mut state, &mut next);
        if let Some(text) = rec.states.get(i + 1) {
            let theirs = parse_state(text)?;
            let ours = facts(m, &state);
            check.missing = theirs.difference(&ours).cloned().collect();
            check.extra = ours.difference(&theirs).cloned().collect();
            check.state_agrees = Some(check.missing.is_empty() && check.extra.is_empty());
        }
        report.steps.push(check);
    }
    if m.overflowed() {
        return Err("the reasoner hit a resource limit during the replay".into());
    }
    report.terminal = report.stopped.is_none() && m.is_terminal(&state);
    if report.terminal {
        report.goals = (0..roles.len()).map(|r| m.goal(&state, r)).collect();
    }
    let steps_agree = report.steps.iter().all(|s| s.moves.iter().all(|c| c.legal) && s.state_agrees != Some(false));
    let ending_agrees = if rec.is_completed {
        // Goals are compared when the record has them (ggp-base writes them on completion).
        report.terminal
            && (rec.goal_values.is_empty()
                || report.goals.iter().map(|g| g.unwrap_or(u32::MAX)).eq(rec.goal_values.iter().copied()))
    } else {
        // An aborted or unfinished match may stop anywhere before the end.
        true
    };
    report.agrees = report.stopped.is_none() && report.initial_agrees != Some(false) && steps_agree && ending_agrees;
    Ok(report)
}
