//! A readable account of an [`Analysis`]: the verdict and why, the factors with their
//! bases, moves and goal/terminal parts, the action-independent part, latches and
//! couplings. Serializable for `factotum factor --json`.

use super::{Analysis, CoupledBy, LegalForm, Place, Verdict};
use crate::propnet::Net;
use serde::Serialize;

/// At most this many names are listed per set (the count is always given).
const SAMPLE: usize = 12;

#[derive(Clone, Debug, Serialize)]
pub struct Names {
    pub count: usize,
    pub sample: Vec<String>,
}

impl Names {
    fn of(it: impl Iterator<Item = String>) -> Names {
        let all: Vec<String> = it.collect();
        Names { count: all.len(), sample: all.into_iter().take(SAMPLE).collect() }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RoleMoves {
    pub role: String,
    /// Classes of the role's inputs in this factor (moves with the same effect on it).
    pub classes: usize,
    /// Inputs active in this factor (not in its passive class).
    pub active: Names,
}

#[derive(Clone, Debug, Serialize)]
pub struct FactorReport {
    pub bases: Names,
    pub roles: Vec<RoleMoves>,
    pub in_goals: bool,
    pub in_terminal: bool,
    /// Whether it stays as it is while play goes on elsewhere ([`super::idle_static`]).
    pub idle_static: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub factorable: bool,
    /// `static`, `contingent` (after latch modification) or `none`.
    pub kind: String,
    pub why: String,
    pub factors: Vec<FactorReport>,
    pub iid: Names,
    pub junk: Names,
    pub fixed: Names,
    pub move_shapes: Vec<(String, super::MoveShape)>,
    /// The roles that choose the factor they play in ([`super::chooses_factor`]).
    pub chooses_factor: Vec<String>,
    pub goal_combination: Vec<(String, &'static str)>,
    pub terminal_combination: &'static str,
    /// Inputs whose legality is a conjunction, a conjunction per step, coupled, never legal.
    pub legal_forms: [usize; 4],
    pub couplings: Vec<String>,
    pub iid_states: usize,
    pub millis: f64,
}

/// The report of `a`, naming bases and inputs with `base(b)` and `input(i)`.
pub fn report(net: &Net, a: &Analysis, base: &dyn Fn(u32) -> String, input: &dyn Fn(u32) -> String) -> Report {
    let factorable = a.verdict == Verdict::Factorable;
    let kind = match (factorable, a.fixed.is_empty()) {
        (false, _) => "none",
        (true, true) => "static",
        (true, false) => "contingent",
    };
    let why = match &a.verdict {
        Verdict::Factorable => format!(
            "{} factors; goals: {}; terminal: {}",
            a.factors.len(),
            a.goal_combination.iter().map(|c| c.name()).collect::<Vec<_>>().join(", "),
            a.terminal_combination.name()
        ),
        Verdict::NotFactorable(w) => match a.couplings.last() {
            Some(c) => format!("one factor: {} couples the rest", coupled_by(net, &c.by, input)),
            None => w.clone(),
        },
    };
    let idle = super::idle_static(net, &super::net_info::NetInfo::new(net), a);
    let factors = a
        .factors
        .iter()
        .zip(idle)
        .map(|(f, idle_static)| FactorReport {
            bases: Names::of(f.bases.iter().map(|&b| base(b))),
            roles: (0..net.roles.len())
                .map(|r| RoleMoves {
                    role: net.roles[r].clone(),
                    classes: f.classes[r].len(),
                    active: Names::of(
                        f.active_inputs.iter().filter(|&&i| net.inputs[i as usize].0 == r).map(|&i| input(i)),
                    ),
                })
                .collect(),
            in_goals: f.in_goals,
            in_terminal: f.in_terminal,
            idle_static,
        })
        .collect();
    let mut legal_forms = [0; 4];
    for f in &a.legal_form {
        legal_forms[match f {
            LegalForm::Conjunction(_) => 0,
            LegalForm::ConjunctionPerStep => 1,
            LegalForm::Coupled => 2,
            LegalForm::Never => 3,
        }] += 1;
    }
    let couplings = a
        .couplings
        .iter()
        .map(|c| {
            let sets: Vec<String> = c
                .factors
                .iter()
                .map(|f| format!("{{{}}}", f.iter().map(|&b| base(b)).collect::<Vec<_>>().join(", ")))
                .collect();
            format!("{} joins {}", coupled_by(net, &c.by, input), sets.join(" + "))
        })
        .collect();
    Report {
        factorable,
        kind: kind.into(),
        why,
        factors,
        iid: Names::of(a.iid.iter().map(|&b| base(b))),
        junk: Names::of(a.junk.iter().map(|&b| base(b))),
        fixed: Names::of(
            a.fixed
                .iter()
                .filter(|(b, _)| a.place[*b as usize] == Place::Constant)
                .map(|&(b, v)| format!("{}={}", base(b), v)),
        ),
        move_shapes: net.roles.iter().cloned().zip(a.shapes.iter().copied()).collect(),
        chooses_factor: net
            .roles
            .iter()
            .zip(super::chooses_factor(net, a))
            .filter(|x| x.1)
            .map(|x| x.0.clone())
            .collect(),
        goal_combination: net.roles.iter().cloned().zip(a.goal_combination.iter().map(|c| c.name())).collect(),
        terminal_combination: a.terminal_combination.name(),
        legal_forms,
        couplings,
        iid_states: a.iid_trajectory.len(),
        millis: a.millis,
    }
}

fn coupled_by(net: &Net, by: &CoupledBy, input: &dyn Fn(u32) -> String) -> String {
    match by {
        CoupledBy::Legal(i) => format!("the legality of {} {}", net.roles[net.inputs[*i as usize].0], input(*i)),
        CoupledBy::Goal(r, v) => format!("goal {} {}", net.roles[*r], v.map_or("?".into(), |v| v.to_string())),
        CoupledBy::Terminal => "terminal".into(),
        CoupledBy::Recursion => "a recursive relation".into(),
        CoupledBy::Moves(i) => format!(
            "the move {} {} (it changes several factors, and the moves are no product of per-factor parts)",
            net.roles[net.inputs[*i as usize].0],
            input(*i)
        ),
        CoupledBy::Deadline => {
            "the analysis' deadline (every factor merged: a factoring missed, never a wrong one)".into()
        }
    }
}

impl Report {
    /// Prints the report for a person.
    pub fn print(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        writeln!(out, "verdict: {} ({})", if self.factorable { "factorable" } else { "not factorable" }, self.kind)?;
        writeln!(out, "why: {}", self.why)?;
        for (k, f) in self.factors.iter().enumerate() {
            writeln!(
                out,
                "factor {k}: {} bases{}{}{}: {}",
                f.bases.count,
                if f.in_goals { ", in goals" } else { "" },
                if f.in_terminal { ", in terminal" } else { "" },
                if f.idle_static { "" } else { ", changes while play is elsewhere" },
                names(&f.bases)
            )?;
            for r in &f.roles {
                writeln!(
                    out,
                    "  {}: {} move classes, {} moves played here: {}",
                    r.role,
                    r.classes,
                    r.active.count,
                    names(&r.active)
                )?;
            }
        }
        writeln!(
            out,
            "action-independent (IID): {} bases: {} ({} states before a repeat)",
            self.iid.count,
            names(&self.iid),
            self.iid_states
        )?;
        if self.junk.count > 0 {
            writeln!(
                out,
                "junk (read by no legal, goal or terminal): {} bases: {}",
                self.junk.count,
                names(&self.junk)
            )?;
        }
        if self.fixed.count > 0 {
            writeln!(out, "fixed by latch modification: {} bases: {}", self.fixed.count, names(&self.fixed))?;
        }
        let shapes: Vec<String> = self.move_shapes.iter().map(|(r, s)| format!("{r} {s:?}")).collect();
        writeln!(out, "moves: {}", shapes.join(", "))?;
        if !self.chooses_factor.is_empty() {
            writeln!(
                out,
                "choice of factor: {} choose(s) the factor to play in{}",
                self.chooses_factor.join(", "),
                if self.move_shapes.len() > 1 { ": a sum of games" } else { "" }
            )?;
        }
        let goals: Vec<String> = self.goal_combination.iter().map(|(r, c)| format!("{r} {c}")).collect();
        writeln!(out, "goals: {}; terminal: {}", goals.join(", "), self.terminal_combination)?;
        let [c, p, x, n] = self.legal_forms;
        writeln!(out, "legality: {c} conjunctions, {p} conjunctions per step, {x} coupled, {n} never legal")?;
        for c in &self.couplings {
            writeln!(out, "coupling: {c}")?;
        }
        writeln!(out, "analysis: {:.2} ms", self.millis)
    }
}

fn names(n: &Names) -> String {
    let mut s = n.sample.join(" ");
    if n.count > n.sample.len() {
        s += &format!(" ... ({} more)", n.count - n.sample.len());
    }
    s
}
