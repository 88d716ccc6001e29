//! Conformance: replays the reference traces (random playouts recorded by ggp-base's prover)
//! against one of our engines and reports the first disagreement of each game.

use crate::gdl::Game;
use crate::machine::StateMachine;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Deserialize)]
struct Header {
    game: String,
    roles: Option<Vec<String>>,
    init: Option<Vec<String>>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct Line {
    playout: usize,
    step: Option<usize>,
    state: Option<Vec<String>>,
    terminal: Option<bool>,
    legal: Option<BTreeMap<String, Vec<String>>>,
    goals: Option<BTreeMap<String, Option<i64>>>,
    joint: Option<Vec<String>>,
    #[serde(rename = "final")]
    fin: Option<bool>,
}

/// How one game's trace went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every recorded state agreed.
    Pass,
    /// The first disagreement.
    Fail(String),
    /// Our engine could not load the game.
    LoadError(String),
    /// The engine declined the game (a propnet too large to build within its budget); the
    /// rules themselves loaded.
    NotBuilt(String),
    /// The reference could not load the game either; nothing to compare.
    NoReference(String),
    /// The time limit ran out; the states checked so far agreed.
    Timeout,
}

impl Outcome {
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "FAIL",
            Outcome::LoadError(_) => "LOAD-ERROR",
            Outcome::NotBuilt(_) => "NOT-BUILT",
            Outcome::NoReference(_) => "no-reference",
            Outcome::Timeout => "TIMEOUT",
        }
    }
    pub fn is_pass(&self) -> bool {
        matches!(self, Outcome::Pass | Outcome::NoReference(_))
    }
}

/// The result of replaying one trace.
#[derive(Clone, Debug)]
pub struct TraceResult {
    pub game: String,
    pub states: usize,
    pub outcome: Outcome,
    pub ms: f64,
}

/// Builds an engine for a game; conformance is generic over engines.
pub trait EngineBuilder: Sync {
    type Machine: StateMachine;
    /// Builds the engine; evaluation done at construction should stop at `deadline`, and the
    /// engine's queries too (then [`EngineBuilder::timed_out`] says so).
    fn build(&self, game: &Game, deadline: Option<Instant>) -> Result<Self::Machine, String>;
    /// Whether the engine stopped at the deadline (its answers are then incomplete).
    fn timed_out(&self, _machine: &Self::Machine) -> bool {
        false
    }
}

/// The interpreter as a conformance engine.
pub struct InterpBuilder;

impl EngineBuilder for InterpBuilder {
    type Machine = crate::interp::Interpreter;
    fn build(&self, game: &Game, deadline: Option<Instant>) -> Result<Self::Machine, String> {
        crate::interp::Interpreter::with_deadline(game, deadline).map_err(|e| e.to_string())
    }
    fn timed_out(&self, machine: &Self::Machine) -> bool {
        machine.timed_out()
    }
}

/// The propnet as a conformance engine (no time budget on the build).
pub struct PropnetBuilder;

impl EngineBuilder for PropnetBuilder {
    type Machine = crate::propnet::PropnetMachine;
    fn build(&self, game: &Game, deadline: Option<Instant>) -> Result<Self::Machine, String> {
        let budget = crate::propnet::Budget { deadline, ..Default::default() };
        crate::propnet::build(game, &budget).map(|(m, _)| m).map_err(|e| e.to_string())
    }
}

fn diff(what: &str, expected: &[String], got: &[String]) -> String {
    let missing: Vec<&String> = expected.iter().filter(|e| !got.contains(e)).collect();
    let extra: Vec<&String> = got.iter().filter(|g| !expected.contains(g)).collect();
    format!("{what} differ: missing {missing:?}, extra {extra:?}")
}

/// Replays one trace file; `games` is the folder of `.kif` files named by the trace header.
pub fn conform_trace<B: EngineBuilder>(builder: &B, trace: &Path, games: &Path, limit: Duration) -> TraceResult {
    let start = Instant::now();
    let mut result = TraceResult {
        game: trace.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
        states: 0,
        outcome: Outcome::Pass,
        ms: 0.0,
    };
    result.outcome = match replay(builder, trace, games, limit, start, &mut result) {
        Ok(()) => Outcome::Pass,
        Err(o) => o,
    };
    result.ms = start.elapsed().as_secs_f64() * 1000.0;
    result
}

fn replay<B: EngineBuilder>(
    builder: &B,
    trace: &Path,
    games: &Path,
    limit: Duration,
    start: Instant,
    result: &mut TraceResult,
) -> Result<(), Outcome> {
    let file = std::fs::File::open(trace).map_err(|e| Outcome::LoadError(format!("cannot open trace: {e}")))?;
    let mut lines = BufReader::new(file).lines();
    let first = lines.next().and_then(|l| l.ok()).ok_or_else(|| Outcome::LoadError("empty trace".into()))?;
    let header: Header =
        serde_json::from_str(&first).map_err(|e| Outcome::LoadError(format!("bad trace header: {e}")))?;
    result.game = header.game.clone();
    let (Some(roles), Some(init)) = (header.roles, header.init) else {
        return Err(Outcome::NoReference(header.error.unwrap_or_default()));
    };
    let game_path: PathBuf = games.join(format!("{}.kif", header.game));
    let game = Game::load(&game_path).map_err(|e| Outcome::LoadError(e.to_string()))?;
    let mut m = builder.build(&game, start.checked_add(limit)).map_err(Outcome::NotBuilt)?;
    // Answers cut short by the deadline or the memory guard are incomplete: report that, not
    // a difference.
    let incomplete = |m: &B::Machine, at: &str| {
        if builder.timed_out(m) {
            Err(Outcome::Timeout)
        } else if m.overflowed() {
            Err(Outcome::Fail(format!("{at}: evaluation exceeded the interpreter's memory limits")))
        } else {
            Ok(())
        }
    };
    if m.roles() != roles.as_slice() {
        return Err(Outcome::Fail(format!("roles differ: expected {roles:?}, got {:?}", m.roles())));
    }
    let initial = m.initial_state();
    incomplete(&m, "initial state")?;
    let facts = m.state_facts(&initial);
    if facts != init {
        return Err(Outcome::Fail(diff("initial state facts", &init, &facts)));
    }
    let mut state = initial.clone();
    let mut next = initial.clone();
    let mut legal = Vec::new();
    let mut joint = Vec::new();
    for line in lines {
        let line = line.map_err(|e| Outcome::LoadError(format!("cannot read trace: {e}")))?;
        let l: Line = serde_json::from_str(&line).map_err(|e| Outcome::LoadError(format!("bad trace line: {e}")))?;
        if l.fin == Some(true) {
            continue;
        }
        if start.elapsed() > limit {
            return Err(Outcome::Timeout);
        }
        let step = l.step.unwrap_or(0);
        let at = format!("playout {} step {step}", l.playout);
        if step == 0 {
            state = initial.clone();
        }
        if let Some(expected) = &l.state {
            let got = m.state_facts(&state);
            if &got != expected {
                return Err(Outcome::Fail(format!("{at}: {}", diff("state facts", expected, &got))));
            }
        }
        if let Some(t) = l.terminal {
            let got = m.is_terminal(&state);
            incomplete(&m, &at)?;
            if got != t {
                return Err(Outcome::Fail(format!("{at}: terminal expected {t}, got {got}")));
            }
        }
        let legal_expected = l.legal.unwrap_or_default();
        let mut legal_texts: Vec<Vec<String>> = Vec::with_capacity(roles.len());
        for (r, name) in roles.iter().enumerate() {
            m.legal_moves(&state, r, &mut legal);
            incomplete(&m, &at)?;
            let mut got: Vec<String> = legal.iter().map(|&mv| m.move_text(mv)).collect();
            got.sort();
            if let Some(exp) = legal_expected.get(name) {
                if &got != exp {
                    return Err(Outcome::Fail(format!("{at}: {}", diff(&format!("legal moves of {name}"), exp, &got))));
                }
            }
            legal_texts.push(got);
        }
        if let Some(goals) = &l.goals {
            for (r, name) in roles.iter().enumerate() {
                let got = m.goal(&state, r).map(i64::from);
                incomplete(&m, &at)?;
                let exp = goals.get(name).copied().flatten();
                if got != exp {
                    return Err(Outcome::Fail(format!("{at}: goal of {name} expected {exp:?}, got {got:?}")));
                }
            }
        }
        result.states += 1;
        if let Some(j) = &l.joint {
            joint.clear();
            for (r, text) in j.iter().enumerate() {
                m.legal_moves(&state, r, &mut legal);
                match legal.iter().find(|&&mv| m.move_text(mv) == *text) {
                    Some(&mv) => joint.push(mv),
                    None => {
                        return Err(Outcome::Fail(format!(
                            "{at}: recorded move {text} of {} is not legal for us",
                            roles[r]
                        )))
                    }
                }
            }
            m.next_state(&state, &joint, &mut next);
            incomplete(&m, &at)?;
            std::mem::swap(&mut state, &mut next);
        }
    }
    Ok(())
}

/// Replays every `*.jsonl` trace in `dir` on `jobs` threads; `on_done` sees each result as it
/// finishes. Results come back sorted by game name.
pub fn conform_dir<B: EngineBuilder>(
    builder: &B,
    dir: &Path,
    games: &Path,
    limit: Duration,
    jobs: usize,
    on_done: &(dyn Fn(&TraceResult, usize, usize) + Sync),
) -> std::io::Result<Vec<TraceResult>> {
    let traces = crate::par::files_with_extension(dir, "jsonl")?;
    let mut v = crate::par::map(&traces, jobs, |t| conform_trace(builder, t, games, limit), on_done);
    v.sort_by(|a, b| a.game.cmp(&b.game));
    Ok(v)
}
