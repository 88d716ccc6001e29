//! `factotum solve`: the exact value and security (equilibrium, when constant-sum) strategies of
//! a small two-player game, by backward induction and by the sequence form's linear program.

use crate::traps_cmd::{load, Engine};
use anyhow::{anyhow, Result};
use factotum::equilibrium::{solve, Report, RoleSolution, SolveOptions};
use factotum::machine::{play_texts, split_moves, StateMachine};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub struct SolveArgs {
    pub moves: Option<String>,
    pub max_states: usize,
    pub max_nodes: usize,
    pub seconds: f64,
    pub json: bool,
}

pub fn solve_cmd(path: &Path, a: &SolveArgs) -> Result<ExitCode> {
    let engine = load(path)?;
    match engine {
        Engine::Propnet(mut m, ..) => run(&mut m, "propnet", path, a),
        Engine::Interp(mut m) => run(&mut m, "interpreter", path, a),
    }
}

fn run<M: StateMachine>(m: &mut M, engine: &str, path: &Path, a: &SolveArgs) -> Result<ExitCode> {
    let init = m.initial_state();
    let (start, position) = match &a.moves {
        Some(text) => {
            let moves = split_moves(text).map_err(|e| anyhow!(e))?;
            (play_texts(m, &init, &moves).map_err(|e| anyhow!(e))?, format!("after {} moves", moves.len()))
        }
        None => (init, "initial state".to_string()),
    };
    let opts = SolveOptions {
        max_states: a.max_states,
        max_nodes: a.max_nodes,
        deadline: Some(Instant::now() + Duration::from_secs_f64(a.seconds)),
    };
    let game = path.display().to_string();
    let rep = match solve(m, &start, &opts) {
        Ok(r) => r,
        Err(e) => {
            if a.json {
                println!("{}", json!({"game": game, "ok": false, "error": e.to_string()}));
            } else {
                eprintln!("{game}: cannot solve: {e}");
            }
            return Ok(ExitCode::from(3));
        }
    };
    if a.json {
        println!("{}", to_json(&rep, &game, engine, &position));
    } else {
        print_report(&rep, &game, engine, &position);
    }
    // Two exact solvers that disagree are a bug, not an answer.
    Ok(if rep.solvers_agree() == Some(false) { ExitCode::from(4) } else { ExitCode::SUCCESS })
}

fn role_json(r: &RoleSolution) -> serde_json::Value {
    json!({
        "role": r.role,
        "value": r.value,
        "guarantee": r.guarantee,
        "start": r.start.iter().map(|(m, p)| json!({"move": m, "p": p})).collect::<Vec<_>>(),
    })
}

fn to_json(rep: &Report, game: &str, engine: &str, position: &str) -> serde_json::Value {
    let i = &rep.induction;
    let sequence = match &rep.sequence {
        Ok(s) => json!({
            "nodes": s.nodes, "leaves": s.leaves, "sequences": s.sequences, "decision_points": s.points,
            "ms": s.ms, "roles": [role_json(&s.roles[0]), role_json(&s.roles[1])],
        }),
        Err(why) => json!({"skipped": why}),
    };
    json!({
        "game": game, "ok": true, "engine": engine, "position": position, "roles": rep.roles,
        "constant_sum": rep.constant_sum, "equilibrium": rep.is_equilibrium(), "solvers_agree": rep.solvers_agree(),
        "induction": {
            "states": i.states, "terminals": i.terminals, "choice_states": i.choice_states,
            "simultaneous_states": i.simultaneous_states, "programs": i.programs, "ms": i.ms,
            "roles": [role_json(&i.roles[0]), role_json(&i.roles[1])],
        },
        "sequence_form": sequence,
    })
}

fn role_line(r: &RoleSolution) -> String {
    format!("  {}: value {:.3} (guaranteed {:.3}); at the start: {}", r.role, r.value, r.guarantee, strategy_text(r))
}

fn strategy_text(r: &RoleSolution) -> String {
    let shown: Vec<String> =
        r.start.iter().filter(|(_, p)| *p > 5e-7).map(|(m, p)| format!("{m} {}", probability(*p))).collect();
    shown.join(", ")
}

/// A probability with three decimals, or a fraction with a small denominator when it is one
/// (2/7 reads better than 0.286).
fn probability(p: f64) -> String {
    for d in 1..=12u32 {
        let n = (p * d as f64).round();
        if (p - n / d as f64).abs() < 1e-7 {
            return if d == 1 { format!("{n}") } else { format!("{n}/{d}") };
        }
    }
    format!("{p:.3}")
}

fn print_report(rep: &Report, game: &str, engine: &str, position: &str) {
    println!("game: {game} ({engine}), from the {position}");
    match rep.constant_sum {
        Some(c) if rep.is_equilibrium() => {
            println!("goals add up to {c} in every terminal state: the values are the game's, the strategies an equilibrium")
        }
        Some(c) => println!("goals add up to {c}, but the values do not (solver round-off?)"),
        None => println!(
            "goals do not add up to a constant: each value is what the role can guarantee against an opponent minimising it (a security level), not an equilibrium"
        ),
    }
    let i = &rep.induction;
    println!(
        "backward induction: {} states ({} terminal, {} with a choice, {} simultaneous), {} linear programs, {:.1} ms",
        i.states, i.terminals, i.choice_states, i.simultaneous_states, i.programs, i.ms
    );
    for r in &i.roles {
        println!("{}", role_line(r));
    }
    match &rep.sequence {
        Ok(s) => {
            println!(
                "sequence form: {} histories ({} leaves), sequences {} / {}, decision points {} / {}, {:.1} ms",
                s.nodes, s.leaves, s.sequences[0], s.sequences[1], s.points[0], s.points[1], s.ms
            );
            for r in &s.roles {
                println!("{}", role_line(r));
            }
            match rep.solvers_agree() {
                Some(true) => println!("the two solvers agree"),
                _ => println!("THE TWO SOLVERS DISAGREE"),
            }
        }
        Err(why) => println!("sequence form: not computed: {why}"),
    }
}
