//! `factotum traps` (the trap moves of one position) and `factotum trapbench` (the paper's
//! similarity experiment around trap states).

use anyhow::{anyhow, bail, Context, Result};
use factotum::gdl::Game;
use factotum::interp::Interpreter;
use factotum::machine::{find_move, play_texts, split_moves, StateMachine};
use factotum::propnet::{self, Budget, Compiled, Net, PropnetMachine};
use factotum::similarity::chess::{board_similarity, play_san, ChessMachine};
use factotum::similarity::{Base, Measure};
use factotum::traps::bench::{facts_similarity, find_trap_states, learned_threshold, run_one, TrapStateResult};
use factotum::traps::{TrapReport, TrapSearch};
use rand::SeedableRng;
use serde_json::json;
use shakmaty::Position as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Where the position comes from.
pub struct Position {
    /// Moves from the initial state (GDL move texts; SAN for chess).
    pub moves: Option<String>,
    /// A ggp-base match record and the number of joint moves of it to play.
    pub record: Option<PathBuf>,
    pub step: Option<usize>,
}

pub struct TrapsOpts {
    pub depth: u32,
    pub role: Option<String>,
    pub loss: Option<u32>,
    pub budget: u64,
    pub json: bool,
}

/// A game's propnet with each role's lowest goal value and its network (for analyses of the
/// graph), or the interpreter (lowest goal 0).
pub(crate) enum Engine {
    Propnet(PropnetMachine, Vec<u32>, Box<Net>),
    Interp(Interpreter),
}

pub(crate) fn load(path: &Path) -> Result<Engine> {
    let game = Game::load(path).map_err(|e| anyhow!("{e}"))?;
    let budget = Budget { deadline: Some(Instant::now() + Duration::from_secs(60)), ..Budget::default() };
    match propnet::build_net(&game, &budget) {
        Ok(b) => {
            let lows: Vec<u32> =
                b.net.goals.iter().map(|g| g.iter().filter_map(|&(_, v)| v).min().unwrap_or(0)).collect();
            let m = PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms, b.symbols));
            Ok(Engine::Propnet(m, lows, Box::new(b.net)))
        }
        Err(e) => {
            eprintln!("{}: no propnet ({e}); using the interpreter, losses at goal 0", path.display());
            Ok(Engine::Interp(Interpreter::new(&game).map_err(|e| anyhow!("{e}"))?))
        }
    }
}

/// Plays the first `step` joint moves of a ggp-base match record (any record with `moves`).
fn play_record<M: StateMachine>(m: &mut M, record: &Path, step: usize) -> Result<M::State> {
    let text = std::fs::read_to_string(record).with_context(|| format!("reading {}", record.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", record.display()))?;
    let moves = v.get("moves").and_then(|x| x.as_array()).ok_or_else(|| anyhow!("{}: no moves", record.display()))?;
    if step > moves.len() {
        bail!("{}: --step {step} but the record has {} moves", record.display(), moves.len());
    }
    let mut s = m.initial_state();
    let mut next = s.clone();
    for (i, joint) in moves.iter().take(step).enumerate() {
        let texts = joint.as_array().ok_or_else(|| anyhow!("move {}: not a list", i + 1))?;
        let mut js = Vec::new();
        for (r, t) in texts.iter().enumerate() {
            let t = t.as_str().ok_or_else(|| anyhow!("move {}: not a string", i + 1))?;
            js.push(find_move(m, &s, r, t).ok_or_else(|| anyhow!("move {}: {t} is not legal for role {r}", i + 1))?);
        }
        if js.len() != m.roles().len() {
            bail!("move {}: {} moves for {} roles", i + 1, js.len(), m.roles().len());
        }
        m.next_state(&s, &js, &mut next);
        std::mem::swap(&mut s, &mut next);
    }
    Ok(s)
}

fn position<M: StateMachine>(m: &mut M, p: &Position) -> Result<(M::State, String)> {
    match (&p.moves, &p.record) {
        (Some(_), Some(_)) => bail!("give --moves or --record, not both"),
        (None, Some(r)) => {
            let step = p.step.ok_or_else(|| anyhow!("--record needs --step N"))?;
            Ok((play_record(m, r, step)?, format!("{} after {step} moves", r.display())))
        }
        (Some(text), None) => {
            let moves = split_moves(text).map_err(|e| anyhow!(e))?;
            let init = m.initial_state();
            let s = play_texts(m, &init, &moves).map_err(|e| anyhow!(e))?;
            Ok((s, format!("after {} moves", moves.len())))
        }
        (None, None) => Ok((m.initial_state(), "initial state".into())),
    }
}

fn choosers<M: StateMachine>(m: &mut M, s: &M::State) -> Vec<usize> {
    let mut l = Vec::new();
    (0..m.roles().len())
        .filter(|&r| {
            m.legal_moves(s, r, &mut l);
            l.len() > 1
        })
        .collect()
}

fn role_index(roles: &[String], name: &str) -> Result<usize> {
    roles
        .iter()
        .position(|r| r.eq_ignore_ascii_case(name))
        .ok_or_else(|| anyhow!("no role {name}; roles: {}", roles.join(", ")))
}

fn traps_in<M: StateMachine>(m: &mut M, lows: &[u32], s: M::State, what: &str, o: &TrapsOpts) -> Result<ExitCode> {
    let roles: Vec<usize> = match &o.role {
        Some(name) => vec![role_index(m.roles(), name)?],
        None => choosers(m, &s),
    };
    let mut reports: Vec<TrapReport> = Vec::new();
    for r in roles {
        let loss = o.loss.unwrap_or(lows[r]);
        reports.push(TrapSearch::new(m, r, loss, o.budget).analyse(&s, o.depth));
    }
    if o.json {
        println!("{}", json!({"position": what, "reports": reports}));
    } else {
        if m.is_terminal(&s) {
            println!("{what}: terminal, no moves");
        }
        if reports.is_empty() && !m.is_terminal(&s) {
            println!("{what}: no role has a choice");
        }
        for r in &reports {
            println!("{what}: {} to move, depth {} plies, loss = goal <= {}", r.role, r.depth, r.loss);
            let width = r.moves.iter().map(|v| v.text.len()).max().unwrap_or(0);
            for v in &r.moves {
                let verdict = match (v.trap, v.loses) {
                    (true, _) => format!("TRAP  lost in {}: {}", v.plies.unwrap_or(0), v.refutation.join(", ")),
                    (false, Some(true)) => format!("loses in {}: {}", v.plies.unwrap_or(0), v.refutation.join(", ")),
                    (false, Some(false)) => "safe".into(),
                    (false, None) => "undecided (node budget)".into(),
                };
                println!("  {:width$}  {verdict}", v.text);
            }
            let traps = r.moves.iter().filter(|v| v.trap).count();
            let state = if r.lost { " (the position is lost: every move loses)" } else { "" };
            println!(
                "{traps} trap(s) among {} moves{state}; {} states searched in {:.1} ms",
                r.moves.len(),
                r.nodes,
                r.ms
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `factotum traps`.
pub fn traps(game: Option<&Path>, chess: bool, p: &Position, o: &TrapsOpts) -> Result<ExitCode> {
    if chess {
        if p.record.is_some() {
            bail!("--chess takes --moves in SAN, not --record");
        }
        let s = play_san(p.moves.as_deref().unwrap_or("")).map_err(|e| anyhow!(e))?;
        let mut m = ChessMachine::new();
        let what = format!("chess after {}", p.moves.as_deref().unwrap_or("no moves"));
        return traps_in(&mut m, &[0, 0], s, &what, o);
    }
    let path = game.ok_or_else(|| anyhow!("give a GAME.kif or --chess"))?;
    match load(path)? {
        Engine::Propnet(mut m, lows, _) => {
            let (s, what) = position(&mut m, p)?;
            traps_in(&mut m, &lows, s, &what, o)
        }
        Engine::Interp(mut m) => {
            let lows = vec![0; m.roles().len()];
            let (s, what) = position(&mut m, p)?;
            traps_in(&mut m, &lows, s, &what, o)
        }
    }
}

#[derive(clap::Args)]
pub struct BenchOpts {
    /// Trap depth (plies after the trap move).
    #[arg(long, default_value_t = 3)]
    pub depth: u32,
    /// Trap states to find (one per playout).
    #[arg(long, default_value_t = 5)]
    pub states: usize,
    /// Skip this many plies of each playout before looking for a trap state.
    #[arg(long, default_value_t = 0)]
    pub min_ply: usize,
    /// Random playouts to look in.
    #[arg(long, default_value_t = 200)]
    pub playouts: usize,
    /// States searched per trap question before it is called undecided.
    #[arg(long, default_value_t = 200_000)]
    pub budget: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub json: bool,
    /// Positions two plies away compared per trap state (a uniform sample beyond).
    #[arg(long, default_value_t = 1500)]
    pub max_positions: usize,
    /// Also compare outcomes, outcome shapes and tactics at this depth (trees are expanded
    /// that deep; 0: no).
    #[arg(long, default_value_t = 0)]
    pub deep: u32,
    /// Append every sample (label and similarities) as JSON lines to this file.
    #[arg(long)]
    pub samples: Option<PathBuf>,
}

fn write_samples(path: &Path, bench: &str, results: &[TrapStateResult]) -> Result<()> {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("{}", path.display()))?,
    );
    for r in results {
        for s in &r.samples {
            let sims: serde_json::Map<String, serde_json::Value> =
                r.measures.iter().zip(&s.sims).map(|(m, v)| (m.clone(), json!(v))).collect();
            writeln!(f, "{}", json!({"bench": bench, "state": r.name, "line": s.line, "trap": s.trap, "sims": sims}))?;
        }
    }
    Ok(())
}

/// The measures of the paper's experiment (continuations at depth 1, sequences and tree edit
/// at depth 2, structural over depth-1 continuations), continuations at depth 2, and ours
/// (outcomes, outcome shapes, tactics) at depth 2.
/// With `deep > 2`, outcomes at that depth too (the trees are then expanded that deep).
pub fn bench_measures(deep: u32) -> Vec<Measure> {
    let mut v = vec![
        Measure::Continuations(1),
        Measure::Continuations(2),
        Measure::Sequences(2),
        Measure::TreeEdit(2),
        Measure::Structural(Base::Continuations(1)),
        Measure::Outcomes(2),
        Measure::OutcomeShapes(2),
        Measure::Tactics(2),
    ];
    if deep > 2 {
        v.push(Measure::Outcomes(deep));
        v.push(Measure::OutcomeShapes(deep));
        v.push(Measure::Tactics(deep));
    }
    v
}

/// The false-negative rate a learned threshold aims at (the goal: below 15%).
const TARGET_FN: f64 = 0.15;

fn print_results(title: &str, results: &[TrapStateResult], json_out: bool) {
    let learned: Vec<serde_json::Value> = results
        .first()
        .map(|r| {
            r.measures
                .iter()
                .enumerate()
                .map(|(k, name)| match learned_threshold(results, k, TARGET_FN) {
                    Some((f, p, c)) => json!({"measure": name, "false_negatives": f, "false_positives": p, "c": c}),
                    None => json!({"measure": name}),
                })
                .collect()
        })
        .unwrap_or_default();
    if json_out {
        println!("{}", json!({"bench": title, "trap_states": results, "learned": learned, "target_fn": TARGET_FN}));
        return;
    }
    println!("## {title}");
    println!();
    println!("| trap state | role | trap moves | positions (sampled of) | kept | undecided | label s | µs to expand a tree |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in results {
        println!(
            "| {} | {} | {} | {} of {} | {} | {} | {:.1} | {:.0} |",
            r.name,
            r.role,
            r.trap_moves.join(" "),
            r.positions,
            r.all_positions,
            r.kept,
            r.undecided,
            r.label_s,
            r.expand_micros
        );
    }
    println!();
    println!("| trap state | measure | ρ (mean) | false negatives | false positives | µs per comparison |");
    println!("|---|---|---|---|---|---|");
    for r in results {
        for x in &r.rates {
            println!(
                "| {} | {} | {:.3} | {:.3} | {:.3} | {:.1} |",
                r.name, x.measure, x.threshold, x.false_negatives, x.false_positives, x.micros
            );
        }
    }
    if let Some(first) = results.first() {
        println!();
        println!("| measure | mean false negatives | mean false positives |");
        println!("|---|---|---|");
        for (k, x) in first.rates.iter().enumerate() {
            let vals: Vec<(f64, f64)> = results
                .iter()
                .map(|r| (r.rates[k].false_negatives, r.rates[k].false_positives))
                .filter(|v| !v.0.is_nan() && !v.1.is_nan())
                .collect();
            let n = vals.len().max(1) as f64;
            println!(
                "| {} | {:.3} | {:.3} |",
                x.measure,
                vals.iter().map(|v| v.0).sum::<f64>() / n,
                vals.iter().map(|v| v.1).sum::<f64>() / n
            );
        }
        println!();
        println!(
            "Learned threshold ρ = mean + c·sd, c chosen on the other trap states for false negatives ≤ {TARGET_FN} \
             (leave one trap state out):"
        );
        println!();
        println!("| measure | c (all states) | held-out false negatives | held-out false positives |");
        println!("|---|---|---|---|");
        for l in &learned {
            match (l["c"].as_f64(), l["false_negatives"].as_f64(), l["false_positives"].as_f64()) {
                (Some(c), Some(f), Some(p)) => {
                    println!("| {} | {c:.3} | {f:.3} | {p:.3} |", l["measure"].as_str().unwrap_or(""))
                }
                _ => println!("| {} | - | - | - |", l["measure"].as_str().unwrap_or("")),
            }
        }
    }
}

/// `factotum trapbench --chess FILE`: trap positions given as `name | depth | SAN moves`
/// lines.
pub fn trapbench_chess(file: &Path, o: &BenchOpts) -> Result<ExitCode> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let mut results = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let parts: Vec<&str> = line.split('|').map(str::trim).collect();
        let [name, depth, moves] = parts[..] else {
            bail!("{}: expected `name | depth | moves`, got {line}", file.display());
        };
        let depth: u32 = depth.parse().with_context(|| format!("{name}: depth {depth}"))?;
        let s = play_san(moves).map_err(|e| anyhow!("{name}: {e}"))?;
        let mut m = ChessMachine::new();
        let role = if s.turn() == shakmaty::Color::White { 0 } else { 1 };
        eprintln!("{name}: labelling positions two plies away (depth {depth})...");
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(o.seed);
        let r = run_one(
            &mut m,
            name,
            &s,
            role,
            depth,
            0,
            o.budget,
            o.max_positions,
            &mut rng,
            &bench_measures(o.deep),
            |_, a, b| board_similarity(a, b),
        );
        results.push(r);
    }
    let title = format!("chess traps of {}", file.display());
    if let Some(p) = &o.samples {
        write_samples(p, &title, &results)?;
    }
    print_results(&title, &results, o.json);
    Ok(ExitCode::SUCCESS)
}

/// `factotum trapbench GAME.kif`: trap states found by random playouts.
pub fn trapbench_game(path: &Path, o: &BenchOpts) -> Result<ExitCode> {
    match load(path)? {
        Engine::Propnet(mut m, lows, _) => bench_machine(&mut m, &lows, path, o),
        Engine::Interp(mut m) => {
            let lows = vec![0; m.roles().len()];
            bench_machine(&mut m, &lows, path, o)
        }
    }
}

fn bench_machine<M: StateMachine>(m: &mut M, lows: &[u32], path: &Path, o: &BenchOpts) -> Result<ExitCode> {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(o.seed);
    let found = find_trap_states(m, o.states, o.min_ply, o.depth, lows, o.budget, o.playouts, &mut rng);
    if found.is_empty() {
        eprintln!("{}: no trap state of depth {} found in {} playouts", path.display(), o.depth, o.playouts);
        return Ok(ExitCode::from(1));
    }
    let mut results = Vec::new();
    for (i, (role, line, s)) in found.iter().enumerate() {
        let name = format!("#{} (ply {})", i + 1, line.len());
        eprintln!("{}: trap state {name}: labelling positions two plies away...", path.display());
        let r = run_one(
            m,
            &name,
            s,
            *role,
            o.depth,
            lows[*role],
            o.budget,
            o.max_positions,
            &mut rng,
            &bench_measures(o.deep),
            facts_similarity,
        );
        results.push(r);
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let title = format!("{stem}: trap depth {}, seed {}", o.depth, o.seed);
    if let Some(p) = &o.samples {
        write_samples(p, &title, &results)?;
    }
    print_results(&title, &results, o.json);
    Ok(ExitCode::SUCCESS)
}

pub struct SimilarOpts {
    pub role: Option<String>,
    pub top: usize,
    pub json: bool,
}

/// `factotum similar`: two positions compared by every measure, and their moves matched.
pub fn similar(game: Option<&Path>, chess: bool, a: &str, b: &str, o: &SimilarOpts) -> Result<ExitCode> {
    if chess {
        let sa = play_san(a).map_err(|e| anyhow!("--a: {e}"))?;
        let sb = play_san(b).map_err(|e| anyhow!("--b: {e}"))?;
        return similar_in(&mut ChessMachine::new(), sa, sb, o);
    }
    let path = game.ok_or_else(|| anyhow!("give a GAME.kif or --chess"))?;
    let pos = |text: &str| Position { moves: Some(text.to_string()), record: None, step: None };
    match load(path)? {
        Engine::Propnet(mut m, ..) => {
            let (sa, _) = position(&mut m, &pos(a))?;
            let (sb, _) = position(&mut m, &pos(b))?;
            similar_in(&mut m, sa, sb, o)
        }
        Engine::Interp(mut m) => {
            let (sa, _) = position(&mut m, &pos(a))?;
            let (sb, _) = position(&mut m, &pos(b))?;
            similar_in(&mut m, sa, sb, o)
        }
    }
}

fn similar_in<M: StateMachine>(m: &mut M, sa: M::State, sb: M::State, o: &SimilarOpts) -> Result<ExitCode> {
    use factotum::similarity::{match_counts, move_matching, Labels, LocalTree, MachineView};
    // Each position is seen by its own side to move (a trap's victim), unless --role
    // names one role for both.
    let (role_a, role_b) = match &o.role {
        Some(name) => {
            let r = role_index(m.roles(), name)?;
            (r, r)
        }
        None => (choosers(m, &sa).first().copied().unwrap_or(0), choosers(m, &sb).first().copied().unwrap_or(0)),
    };
    let (name_a, name_b) = (m.roles()[role_a].clone(), m.roles()[role_b].clone());
    let measures = bench_measures(0);
    let base = Base::Continuations(1);
    // Deep enough for every measure and for matches over two plies below the base.
    let depth = measures.iter().map(|x| x.depth()).max().unwrap_or(1).max(3);
    let mut labels = Labels::new();
    let t0 = Instant::now();
    let ta = LocalTree::expand(&mut MachineView::new(&mut *m, role_a), &sa, depth, &mut labels);
    let tb = LocalTree::expand(&mut MachineView::new(&mut *m, role_b), &sb, depth, &mut labels);
    let expand_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let sims: Vec<(String, Option<f64>, f64)> = measures
        .iter()
        .map(|x| {
            let t = Instant::now();
            let v = x.similarity(ta.root(), tb.root(), &labels);
            (x.name(), v, t.elapsed().as_secs_f64() * 1000.0)
        })
        .collect();
    let pairs = move_matching(ta.root(), tb.root(), base, &labels).unwrap_or_default();
    let counts = match_counts(ta.root(), tb.root(), base, &labels).unwrap_or_default();
    let top: Vec<_> = counts.iter().take(o.top).collect();
    let equally_decisive = top.iter().filter(|c| c.first_ends == c.second_ends).count();
    if o.json {
        let sims_json: Vec<_> =
            sims.iter().map(|(n, v, ms)| json!({"measure": n, "similarity": v, "ms": ms})).collect();
        println!(
            "{}",
            json!({"roles": [name_a, name_b], "nodes": [ta.len(), tb.len()], "expand_ms": expand_ms, "similarities": sims_json,
                "matching": pairs.iter().map(|p| json!({"first": p.first, "second": p.second, "distance": p.distance})).collect::<Vec<_>>(),
                "match_counts": counts, "top": o.top, "equally_decisive_in_top": equally_decisive})
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "positions seen by {name_a} and {name_b}: {} and {} nodes to depth {depth}, expanded in {expand_ms:.1} ms",
        ta.len(),
        tb.len()
    );
    println!();
    println!("| measure | similarity | ms |");
    println!("|---|---|---|");
    for (n, v, ms) in &sims {
        let v = v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "too large".into());
        println!("| {n} | {v} | {ms:.2} |");
    }
    println!();
    println!("Moves matched by structural similarity over continuations d=1, closest first:");
    for p in &pairs {
        println!("  {} ~ {} ({:.3})", p.first, p.second, p.distance);
    }
    println!();
    println!("Most frequent matches over two plies (* ends the game):");
    for c in &top {
        let mark = |ends: bool| if ends { "*" } else { "" };
        println!("  {}{} ~ {}{} ×{}", c.first, mark(c.first_ends), c.second, mark(c.second_ends), c.count);
    }
    println!("{equally_decisive} of the top {} pairs are equally decisive (both end the game or neither)", top.len());
    Ok(ExitCode::SUCCESS)
}

/// `factotum traps --log FILE`: a trap log summed up per game.
pub fn summarise_log(path: &Path, json: bool) -> Result<ExitCode> {
    let s = factotum::agent::trap_log::summarise(path).map_err(|e| anyhow!(e))?;
    if json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        println!(
            "| game | matches | traps found | avoided | depth (joint moves after the trap) | found by | avoided, by how found | found, by player | avoided, by player |"
        );
        println!("|---|---|---|---|---|---|---|---|---|");
        for (game, g) in &s.games {
            let list = |m: &std::collections::BTreeMap<String, u64>| {
                m.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
            };
            println!(
                "| {game} | {} | {} | {} | {}-{} | {} | {} | {} | {} |",
                g.matches,
                g.found,
                g.avoided,
                g.depth_min,
                g.depth_max,
                list(&g.by),
                list(&g.avoided_by),
                list(&g.by_player),
                list(&g.avoided_by_player)
            );
        }
        let (found, avoided): (u64, u64) = s.games.values().fold((0, 0), |a, g| (a.0 + g.found, a.1 + g.avoided));
        println!("total: {found} traps found, {avoided} avoided, in {} games", s.games.len());
    }
    if !s.bad_lines.is_empty() {
        eprintln!("{}: {} lines are not trap events: {:?}", path.display(), s.bad_lines.len(), s.bad_lines);
    }
    Ok(ExitCode::SUCCESS)
}

/// Options of `factotum trapsuite`.
pub struct SuiteOpts {
    pub agents: Vec<PathBuf>,
    pub per_game: usize,
    pub min_ply: usize,
    pub iterations: Vec<u64>,
    pub depth: u32,
    pub budget: u64,
    /// Earlier positions of the role searched first (see `factotum trapsuite --history`).
    pub history: usize,
    pub json: bool,
}

/// Whether `text` is one of `traps` (compared canonically).
fn is_trap_text(traps: &[String], text: &str) -> bool {
    let want = factotum::machine::canonical_move_text(text);
    traps.iter().any(|t| factotum::machine::canonical_move_text(t) == want)
}

/// A position of the suite: a state reached in a recorded match where one role chooses and
/// has a trap, with its moves' verdicts.
struct SuitePosition {
    record: String,
    step: usize,
    role: usize,
    traps: Vec<String>,
    moves: usize,
}

/// `factotum trapsuite DIR`: trap positions taken from the match records in DIR (real play),
/// at most `per_game` per game and one per match (the first state from `min_ply` on where the
/// one role with a choice has a trap of `depth`, by the exact trap finder); then each agent
/// searches each position for each iteration budget, and the share of positions where its
/// move is not a trap is reported, with its iterations per second at the last budget (agents
/// are measured one after another: a quiet machine is needed for the speeds to compare).
pub fn trapsuite(dir: &Path, o: &SuiteOpts) -> Result<ExitCode> {
    use factotum::agent::AgentConfig;
    use factotum::search::Limit;
    let agents: Vec<(String, AgentConfig)> = o
        .agents
        .iter()
        .map(|p| {
            let cfg = AgentConfig::load(p).map_err(|e| anyhow!(e))?;
            let name = p.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            Ok((name, cfg))
        })
        .collect::<Result<_>>()?;
    // Records grouped by game file.
    let mut records: std::collections::BTreeMap<String, Vec<(PathBuf, Vec<Vec<String>>)>> = Default::default();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    for p in paths {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&p)?) else { continue };
        let Some(game) = v.pointer("/factotum/gamePath").and_then(|g| g.as_str()) else { continue };
        let Some(moves) = v.get("moves").and_then(|m| m.as_array()) else { continue };
        let moves: Vec<Vec<String>> = moves
            .iter()
            .map(|j| {
                j.as_array()
                    .map(|a| a.iter().filter_map(|m| m.as_str().map(String::from)).collect())
                    .unwrap_or_default()
            })
            .collect();
        records.entry(game.to_string()).or_default().push((p, moves));
    }
    if records.is_empty() {
        bail!("{}: no match records with factotum.gamePath", dir.display());
    }
    let mut rows = Vec::new();
    // (agent, budget) -> (avoided, positions) over all games.
    let mut total = vec![vec![(0usize, 0usize); o.iterations.len()]; agents.len()];
    for (game, recs) in &records {
        let Engine::Propnet(mut m, lows, _) = load(Path::new(game))? else {
            eprintln!("{game}: no propnet; skipped");
            continue;
        };
        let pristine = m.clone();
        type State = <PropnetMachine as StateMachine>::State;
        // Each position with the role's last `history` positions before it.
        let mut positions: Vec<(SuitePosition, State, Vec<State>)> = Vec::new();
        for (path, moves) in recs {
            if positions.len() >= o.per_game {
                break;
            }
            let mut s = m.initial_state();
            let mut legal = Vec::new();
            let mut seen: Vec<(usize, State)> = Vec::new();
            for (step, joint) in moves.iter().enumerate() {
                if !m.is_terminal(&s) {
                    let choosers: Vec<usize> = (0..m.roles().len())
                        .filter(|&r| {
                            m.legal_moves(&s, r, &mut legal);
                            legal.len() > 1
                        })
                        .collect();
                    if let ([r], true) = (&choosers[..], step >= o.min_ply) {
                        let r = *r;
                        let report = TrapSearch::new(&mut m, r, lows[r], o.budget).analyse(&s, o.depth);
                        if report.trap_state {
                            let traps = report.moves.iter().filter(|v| v.trap).map(|v| v.text.clone()).collect();
                            let pos = SuitePosition {
                                record: path.display().to_string(),
                                step,
                                role: r,
                                traps,
                                moves: report.moves.len(),
                            };
                            let mut hist: Vec<State> = seen
                                .iter()
                                .rev()
                                .filter(|(q, _)| *q == r)
                                .take(o.history)
                                .map(|(_, x)| x.clone())
                                .collect();
                            hist.reverse();
                            positions.push((pos, s.clone(), hist));
                            break;
                        }
                    }
                    if let [r] = choosers[..] {
                        seen.push((r, s.clone()));
                    }
                }
                let mut js = Vec::new();
                for (r, text) in joint.iter().enumerate() {
                    match find_move(&mut m, &s, r, text) {
                        Some(mv) => js.push(mv),
                        None => break,
                    }
                }
                if js.len() != joint.len() || m.is_terminal(&s) {
                    break;
                }
                let mut next = s.clone();
                m.next_state(&s, &js, &mut next);
                s = next;
            }
        }
        let share: f64 = positions.iter().map(|(p, _, _)| p.traps.len() as f64 / p.moves.max(1) as f64).sum::<f64>()
            / positions.len().max(1) as f64;
        eprintln!(
            "{game}: {} trap positions from {} records; a uniformly random move avoids the traps {:.0}% of the time",
            positions.len(),
            recs.len(),
            100.0 * (1.0 - share)
        );
        for (a, (name, cfg)) in agents.iter().enumerate() {
            for (b, &n) in o.iterations.iter().enumerate() {
                let (mut avoided, mut by_hint, mut by_check) = (0, 0, 0);
                let (mut done, mut secs) = (0u64, 0.0f64);
                let (mut sim_time, mut search_time) = (0.0f64, 0.0f64);
                for (i, (pos, s, hist)) in positions.iter().enumerate() {
                    let mut search = cfg.searcher::<PropnetMachine>(cfg.seed.wrapping_add(i as u64));
                    // A machine fresh from the build for each search: the propnet's
                    // incremental legal sets keep the order their history gave them, and
                    // random playouts pick by position in them, so a machine that has
                    // played before would make the result depend on what ran first.
                    let mut m = pristine.clone();
                    for h in hist {
                        search.select(&mut m, h, pos.role, Limit::iterations(n));
                    }
                    search.take_traps();
                    let before = search.similarity_stats().unwrap_or_default();
                    let t0 = Instant::now();
                    let Some(c) = search.select(&mut m, s, pos.role, Limit::iterations(n)) else { continue };
                    secs += t0.elapsed().as_secs_f64();
                    done += c.iterations;
                    if let Some(after) = search.similarity_stats() {
                        sim_time += after.spent().saturating_sub(before.spent()).as_secs_f64();
                        search_time += (after.search_time - before.search_time).as_secs_f64();
                    }
                    let text = m.move_text(c.mv);
                    let avoid = !is_trap_text(&pos.traps, &text);
                    avoided += avoid as usize;
                    // Avoided because a similarity hint, or an exact trap check (on a collapse or
                    // of the choice), proved a trap here.
                    let found = search.take_traps();
                    let by = |how: &[&str]| {
                        found.iter().any(|t| how.contains(&t.how) && is_trap_text(&pos.traps, &m.move_text(t.mv)))
                    };
                    by_hint += (avoid && by(&["similarity"])) as usize;
                    by_check += (avoid && by(&["collapse", "choice"])) as usize;
                }
                total[a][b].0 += avoided;
                total[a][b].1 += positions.len();
                let speed = if secs > 0.0 { done as f64 / secs } else { 0.0 };
                let sim_share = if search_time > 0.0 { sim_time / search_time } else { 0.0 };
                rows.push(json!({
                    "game": game, "agent": name, "iterations": n, "positions": positions.len(), "avoided": avoided,
                    "avoided_by_hint": by_hint, "avoided_by_check": by_check, "iterations_per_s": speed, "similarity_share": sim_share,
                }));
            }
        }
        if o.json {
            for (pos, _, _) in &positions {
                println!(
                    "{}",
                    json!({"position": {"game": game, "record": pos.record, "step": pos.step,
                        "role": m.roles()[pos.role], "traps": pos.traps, "moves": pos.moves}})
                );
            }
        }
    }
    if o.json {
        for r in &rows {
            println!("{r}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let head: Vec<String> = o.iterations.iter().map(|n| format!("avoided at {n}")).collect();
    let last = o.iterations.last().copied().unwrap_or(0);
    println!(
        "| game | agent | positions | {} | iterations/s at {last} | similarity's share of time at {last} | avoided by a hint (per budget) | avoided by a trap check (per budget) |",
        head.join(" | ")
    );
    println!("|---|---|---|{}---|---|---|---|", "---|".repeat(o.iterations.len()));
    let pct = |a: usize, n: usize| {
        if n == 0 {
            "-".to_string()
        } else {
            format!("{:.0}% ({a}/{n})", 100.0 * a as f64 / n as f64)
        }
    };
    for chunk in rows.chunks(o.iterations.len().max(1)) {
        let cells: Vec<String> = chunk
            .iter()
            .map(|r| pct(r["avoided"].as_u64().unwrap_or(0) as usize, r["positions"].as_u64().unwrap_or(0) as usize))
            .collect();
        let game = chunk[0]["game"].as_str().unwrap_or("");
        let stem = Path::new(game).file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        let speed = chunk[chunk.len() - 1]["iterations_per_s"].as_f64().unwrap_or(0.0);
        let share = chunk[chunk.len() - 1]["similarity_share"].as_f64().unwrap_or(0.0);
        let per_budget = |key: &str| chunk.iter().map(|r| r[key].to_string()).collect::<Vec<_>>().join(", ");
        println!(
            "| {stem} | {} | {} | {} | {speed:.0} | {:.1}% | {} | {} |",
            chunk[0]["agent"].as_str().unwrap_or(""),
            chunk[0]["positions"],
            cells.join(" | "),
            100.0 * share,
            per_budget("avoided_by_hint"),
            per_budget("avoided_by_check")
        );
    }
    for (a, (name, _)) in agents.iter().enumerate() {
        let cells: Vec<String> = total[a].iter().map(|&(x, n)| pct(x, n)).collect();
        println!("| **all** | {name} | {} | {} | | | | |", total[a].first().map_or(0, |t| t.1), cells.join(" | "));
    }
    Ok(ExitCode::SUCCESS)
}
