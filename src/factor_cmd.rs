//! `factotum factor`: the factor analysis of one game, or of every game of a folder (each in
//! a child process, as `propnet --all`).

use crate::coverage;
use anyhow::Result;
use factotum::factor::{self, latch::LatchKind, report, Verdict};
use factotum::gdl::Game;
use factotum::machine::StateMachine;
use factotum::propnet::{self, Budget, Compiled, PropnetMachine};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Options of one analysis.
pub struct Opts {
    pub budget_s: f64,
    pub json: bool,
    /// Product checks: random playouts per factorable verdict (0: none).
    pub check: usize,
    /// Random playouts searched for contingent factoring when the game does not factor
    /// statically (0: none).
    pub contingent: usize,
    /// The contingent search's work bound: network nodes analysed, summed over its
    /// analyses.
    pub contingent_work: usize,
    pub seed: u64,
    /// The static analysis' deadline, in milliseconds from its start ([`factor::analyse_within`]).
    pub deadline_ms: Option<f64>,
}

pub fn factor_one(path: &Path, dot: Option<&Path>, o: &Opts) -> Result<ExitCode> {
    let fail = |code: u8, e: String| -> Result<ExitCode> {
        if o.json {
            println!("{}", json!({"game": path.display().to_string(), "ok": false, "error": e}));
        } else {
            eprintln!("{}: {e}", path.display());
        }
        Ok(ExitCode::from(code))
    };
    let game = match Game::load(path) {
        Ok(g) => g,
        Err(e) => return fail(2, e.to_string()),
    };
    let budget = Budget { deadline: Some(Instant::now() + Duration::from_secs_f64(o.budget_s)), ..Budget::default() };
    let built = match propnet::build_net(&game, &budget) {
        Ok(b) => b,
        Err(e) => return fail(3, format!("cannot build a propnet: {e}")),
    };
    let net = &built.net;
    let a = match o.deadline_ms {
        Some(ms) => factor::analyse_within(net, Instant::now() + Duration::from_secs_f64(ms.max(0.0) / 1000.0)),
        None => factor::analyse(net),
    };
    let tl = Instant::now();
    let latches = factor::latch::latches(net);
    let latch_ms = tl.elapsed().as_secs_f64() * 1000.0;
    let tl = Instant::now();
    let outcomes = factor::outcome::outcome_latches(net, &latches);
    let outcome_ms = tl.elapsed().as_secs_f64() * 1000.0;
    let base_names: Vec<String> =
        net.bases.iter().map(|&t| built.grounding_terms.to_string(t, &built.symbols)).collect();
    let input_names: Vec<String> =
        net.inputs.iter().map(|&(_, t)| built.grounding_terms.to_string(t, &built.symbols)).collect();
    let base = |b: u32| base_names[b as usize].clone();
    let input = |i: u32| input_names[i as usize].clone();
    let rep = report::report(net, &a, &base, &input);
    // What the factoring player (default options) makes of it.
    let player = match factotum::search::factored::plan(net, &a, factotum::search::FactoredOptions::default()) {
        Ok(()) => "apart".to_string(),
        Err(why) => format!("whole: {why}"),
    };
    let mut machine = PropnetMachine::new(Compiled::new(net, built.grounding_terms.clone(), built.symbols.clone()));
    let init = machine.initial_state();
    let mut check = serde_json::Value::Null;
    let mut failed = false;
    if a.verdict == Verdict::Factorable && o.check > 0 {
        let r =
            factor::product::check(net, &a, &mut machine, &init, o.check, 200, o.seed, factor::product::MAX_SCRAMBLED);
        failed |= r.is_err();
        check = match r {
            Ok(r) => {
                json!({"ok": true, "states": r.states, "playouts": r.playouts, "factors_per_state": r.factors_per_state})
            }
            Err(e) => json!({"ok": false, "error": e}),
        };
    }
    // Contingent factoring: random playouts, re-analysed whenever the latches held change.
    let mut contingent = serde_json::Value::Null;
    if a.verdict != Verdict::Factorable && o.contingent > 0 && !latches.is_empty() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(o.seed);
        let (mut found, mut depths, mut factors, mut ms, mut analyses) = (0, Vec::new(), Vec::new(), 0.0, 0usize);
        let mut example = String::new();
        let mut cchecks = (0usize, 0usize);
        // The search is bounded by its work, not by the clock, so that its verdict is the
        // same on every run: at most `o.contingent_work` network nodes analysed in all. The
        // clock (the budget, 20 s at most) only stops a search far slower than that, and says so.
        let deadline = Instant::now() + Duration::from_secs_f64(o.budget_s.min(20.0));
        let (mut work, mut cut) = (0usize, None);
        let (mut legal, mut joint, mut next) = (Vec::new(), Vec::new(), init.clone());
        'playouts: for _ in 0..o.contingent {
            let mut s = init.clone();
            let mut held = held_latches(&latches, &s);
            for depth in 0..200 {
                let now = held_latches(&latches, &s);
                if depth > 0 && now != held {
                    if work + net.nodes.len() > o.contingent_work {
                        cut = Some("work");
                        break 'playouts;
                    }
                    if Instant::now() > deadline {
                        cut = Some("time");
                        break 'playouts;
                    }
                    work += net.nodes.len();
                    held = now;
                    let t = Instant::now();
                    let c = factor::analyse_from(net, &|b| s.get(b as usize));
                    ms += t.elapsed().as_secs_f64() * 1000.0;
                    analyses += 1;
                    if c.verdict == Verdict::Factorable {
                        found += 1;
                        depths.push(depth);
                        factors.push(c.factors.len());
                        if example.is_empty() {
                            let fixed: Vec<String> =
                                c.fixed.iter().filter(|(_, v)| *v).take(6).map(|&(b, _)| base(b)).collect();
                            example = format!(
                                "after {depth} moves, {} factors, holding {}",
                                c.factors.len(),
                                fixed.join(" ")
                            );
                        }
                        if o.check > 0 {
                            match factor::product::check(
                                net,
                                &c,
                                &mut machine,
                                &s,
                                o.check.div_ceil(4),
                                200,
                                o.seed,
                                factor::product::MAX_SCRAMBLED,
                            ) {
                                Ok(r) => cchecks.0 += r.states,
                                Err(e) => {
                                    failed = true;
                                    cchecks.1 += 1;
                                    example = format!("CHECK FAILED: {e}");
                                }
                            }
                        }
                        continue 'playouts;
                    }
                }
                if machine.is_terminal(&s)
                    || !random_step(&mut machine, &mut s, &mut next, &mut legal, &mut joint, &mut rng)
                {
                    continue 'playouts;
                }
            }
        }
        depths.sort_unstable();
        contingent = json!({
            "playouts": o.contingent,
            "factorable_in": found,
            "median_depth": depths.get(depths.len() / 2),
            "max_factors": factors.iter().max(),
            "example": example,
            "analyses": analyses,
            "cut_short_by": cut,
            "ms_per_analysis": if analyses > 0 { ms / analyses as f64 } else { 0.0 },
            "checked_states": cchecks.0,
            "check_failures": cchecks.1,
        });
    }
    let outcome = outcome_check(net, &latches, &outcomes, &mut machine, &init, o, &base, outcome_ms);
    failed |= outcome["failures"].as_u64().unwrap_or(0) > 0;
    let npos = latches.iter().filter(|l| l.kind == LatchKind::Positive).count();
    let latch_json = json!({
        "positive": npos,
        "negative": latches.len() - npos,
        "self_loop": latches.iter().filter(|l| l.proof == factor::latch::LatchProof::SelfLoop).count(),
        "sample": latches.iter().take(8).map(|l| format!("{}{}", if l.kind == LatchKind::Positive { "+" } else { "-" }, base(l.base))).collect::<Vec<_>>(),
        "ms": latch_ms,
    });
    if o.json {
        println!(
            "{}",
            json!({"game": game.name, "ok": true, "build_s": built.report.total_s, "report": rep, "latches": latch_json, "player": player,
                   "outcome": outcome, "contingent": contingent, "check": check, "peak_mib": coverage::own_peak_mib()})
        );
    } else {
        println!("game: {} (propnet built in {:.2} s)", game.name, built.report.total_s);
        rep.print(&mut std::io::stdout())?;
        println!("factoring player (`factoring = true`, other keys at their defaults): searches {player}");
        println!(
            "latches: {} positive, {} negative ({} by Lemma 4.3's self-loop), proved in {:.2} ms: {}",
            npos,
            latches.len() - npos,
            latch_json["self_loop"],
            latch_ms,
            latch_json["sample"]
                .as_array()
                .map(|v| v.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(" "))
                .unwrap_or_default()
        );
        println!(
            "outcome: {} goal or terminal latches ({:.2} ms){}{}",
            outcome["latches"],
            outcome_ms,
            outcome["sample"]
                .as_array()
                .map(|v| v.iter().filter_map(|x| x.as_str()).map(|x| format!(" {x};")).collect::<String>())
                .unwrap_or_default(),
            if outcome["playouts"].as_u64().unwrap_or(0) > 0 {
                format!(
                    " every goal decided before the end in {} of {} random playouts{}, {} states checked, {} disagreements{}",
                    outcome["decided_early"],
                    outcome["playouts"],
                    outcome["median_moves_early"]
                        .as_u64()
                        .map(|m| format!(" (median {m} moves before it)"))
                        .unwrap_or_default(),
                    outcome["states"],
                    outcome["failures"],
                    outcome["error"].as_str().map(|e| format!(": {e}")).unwrap_or_default()
                )
            } else {
                String::new()
            }
        );
        if !contingent.is_null() {
            println!(
                "contingent: factorable in {} of {} random playouts (median after {} moves); {}; {} analyses, {:.2} ms each",
                contingent["factorable_in"], contingent["playouts"], contingent["median_depth"], contingent["example"], contingent["analyses"], contingent["ms_per_analysis"].as_f64().unwrap_or(0.0)
            );
        }
        if !check.is_null() {
            println!("product check: {check}");
        }
    }
    if let Some(dot) = dot {
        std::fs::write(dot, factor_dot(&game.name, &rep))?;
        if !o.json {
            println!("wrote {}", dot.display());
        }
    }
    Ok(if failed { ExitCode::from(4) } else { ExitCode::SUCCESS })
}

/// The outcome latches (listed) and, on `o.check` random playouts (at most 5 s), the goals
/// decided before the end ([`factor::outcome::Decider`], re-run whenever the latches held
/// change), each checked against the game: a goal decided in a state must be the goal at the
/// end, a value excluded must not be, and an outcome latch's goals must hold wherever it does.
#[allow(clippy::too_many_arguments)]
fn outcome_check(
    net: &propnet::Net,
    latches: &[factor::Latch],
    outcomes: &[factor::outcome::OutcomeLatch],
    machine: &mut PropnetMachine,
    init: &propnet::PnState,
    o: &Opts,
    base: &dyn Fn(u32) -> String,
    ms: f64,
) -> serde_json::Value {
    let roles = net.roles.len();
    let sample: Vec<String> = outcomes
        .iter()
        .take(4)
        .map(|x| {
            let goals: Vec<String> = x.goals.iter().map(|&(r, v)| format!("{} {v}", net.roles[r])).collect();
            format!(
                "{}{} → {}{}",
                if x.latch.kind == LatchKind::Positive { "+" } else { "-" },
                base(x.latch.base),
                goals.join(", "),
                if x.terminal { " (terminal)" } else { "" }
            )
        })
        .collect();
    let (mut states, mut failures, mut early, mut moves_early) = (0usize, 0usize, 0usize, Vec::new());
    let mut error = None;
    let mut playouts = 0;
    if o.check > 0 && !latches.is_empty() {
        let decider = factor::outcome::Decider::new(net);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(o.seed);
        let deadline = Instant::now() + Duration::from_secs_f64(o.budget_s.min(5.0));
        let (mut legal, mut joint, mut next) = (Vec::new(), Vec::new(), init.clone());
        'playouts: for _ in 0..o.check {
            if Instant::now() > deadline {
                break;
            }
            playouts += 1;
            let mut s = init.clone();
            let (mut promised, mut excluded) = (vec![None; roles], vec![Vec::new(); roles]);
            let mut held = None;
            let mut all_at = None;
            for depth in 0..1000 {
                let now = held_latches(latches, &s);
                if held.as_ref() != Some(&now) && Instant::now() < deadline {
                    held = Some(now);
                    let d = decider.decided(net, &|b| s.get(b as usize));
                    states += 1;
                    for r in 0..roles {
                        if let Some(v) = d.goals[r] {
                            if promised[r].is_some_and(|p| p != v) {
                                failures += 1;
                                error.get_or_insert(format!("{}'s decided goal changed at move {depth}", net.roles[r]));
                            }
                            promised[r] = Some(v);
                        }
                        excluded[r].extend(d.excluded[r].iter().copied());
                    }
                    if all_at.is_none() && d.all() {
                        all_at = Some(depth);
                    }
                }
                for x in
                    outcomes.iter().filter(|x| s.get(x.latch.base as usize) == (x.latch.kind == LatchKind::Positive))
                {
                    for &(r, v) in &x.goals {
                        if machine.goal(&s, r) != Some(v) {
                            failures += 1;
                            error.get_or_insert(format!(
                                "{} holds at move {depth} and {}'s goal is not {v}",
                                base(x.latch.base),
                                net.roles[r]
                            ));
                        }
                    }
                    if x.terminal && !machine.is_terminal(&s) {
                        failures += 1;
                        error.get_or_insert(format!(
                            "{} holds at move {depth} and the state is not terminal",
                            base(x.latch.base)
                        ));
                    }
                }
                if machine.is_terminal(&s) {
                    for r in 0..roles {
                        let end = machine.goal(&s, r);
                        if promised[r].is_some_and(|p| Some(p) != end) || end.is_some_and(|e| excluded[r].contains(&e))
                        {
                            failures += 1;
                            error.get_or_insert(format!(
                                "{}'s goal at the end ({end:?}) is not what was decided",
                                net.roles[r]
                            ));
                        }
                    }
                    if let Some(at) = all_at.filter(|&at| at < depth) {
                        early += 1;
                        moves_early.push(depth - at);
                    }
                    continue 'playouts;
                }
                if !random_step(machine, &mut s, &mut next, &mut legal, &mut joint, &mut rng) {
                    continue 'playouts;
                }
            }
        }
    }
    moves_early.sort_unstable();
    json!({
        "latches": outcomes.len(),
        "goal_latches": outcomes.iter().filter(|x| !x.goals.is_empty()).count(),
        "terminal_latches": outcomes.iter().filter(|x| x.terminal).count(),
        "sample": sample,
        "ms": ms,
        "playouts": playouts,
        "states": states,
        "decided_early": early,
        "median_moves_early": moves_early.get(moves_early.len() / 2),
        "failures": failures,
        "error": error,
    })
}

/// Plays one uniformly random joint move from `s` (its successor replaces it); false, with
/// `s` unchanged, when a role has no legal move.
fn random_step(
    machine: &mut PropnetMachine,
    s: &mut propnet::PnState,
    next: &mut propnet::PnState,
    legal: &mut Vec<u32>,
    joint: &mut Vec<u32>,
    rng: &mut rand_pcg::Pcg64Mcg,
) -> bool {
    joint.clear();
    for r in 0..machine.roles().len() {
        machine.legal_moves(s, r, legal);
        if legal.is_empty() {
            return false;
        }
        joint.push(legal[rng.gen_range(0..legal.len())]);
    }
    machine.next_state(s, joint, next);
    std::mem::swap(s, next);
    true
}

/// One bit per latch: whether it holds its latched value in `s`.
fn held_latches(latches: &[factor::Latch], s: &propnet::PnState) -> Vec<bool> {
    latches.iter().map(|l| s.get(l.base as usize) == (l.kind == LatchKind::Positive)).collect()
}

/// Graphviz: a box per factor (a few of its bases), the IID part and the couplings.
fn factor_dot(name: &str, r: &report::Report) -> String {
    let esc = |s: &str| s.replace('"', "\\\"");
    let mut s = format!("digraph \"{}\" {{\n  rankdir=LR; node [shape=box, fontname=monospace];\n", esc(name));
    for (k, f) in r.factors.iter().enumerate() {
        s += &format!(
            "  f{k} [label=\"factor {k}: {} bases\\n{}\"];\n",
            f.bases.count,
            esc(&f.bases.sample.iter().take(6).cloned().collect::<Vec<_>>().join("\\n"))
        );
    }
    s += &format!(
        "  iid [shape=ellipse, label=\"IID: {} bases\\n{}\"];\n",
        r.iid.count,
        esc(&r.iid.sample.iter().take(4).cloned().collect::<Vec<_>>().join("\\n"))
    );
    for k in 0..r.factors.len() {
        s += &format!("  iid -> f{k} [style=dashed];\n");
    }
    s += &format!("  verdict [shape=note, label=\"{}\"];\n}}\n", esc(&r.why));
    s
}

/// Every game of a folder, each in a child process; a table.
pub fn factor_all(dir: &Path, o: &Opts, mem_gib: f64, jobs: usize) -> Result<ExitCode> {
    let exe = std::env::current_exe()?;
    let games = factotum::par::files_with_extension(dir, "kif")?;
    let rows = factotum::par::map(
        &games,
        jobs,
        |g| {
            let mut args: Vec<std::ffi::OsString> = vec![
                "factor".into(),
                g.as_os_str().to_owned(),
                "--json".into(),
                "--budget-s".into(),
                o.budget_s.to_string().into(),
                "--check".into(),
                o.check.to_string().into(),
                "--contingent".into(),
                o.contingent.to_string().into(),
                "--contingent-work".into(),
                o.contingent_work.to_string().into(),
                "--seed".into(),
                o.seed.to_string().into(),
            ];
            if let Some(ms) = o.deadline_ms {
                args.extend(["--deadline-ms".into(), ms.to_string().into()]);
            }
            let name = g.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            (name, coverage::run_child(&exe, &args, 2.0 * o.budget_s + 5.0, mem_gib * 1024.0))
        },
        |(name, c), k, n| {
            let v = c.json.as_ref();
            let what = v.map_or(c.why.clone(), |v| v["report"]["kind"].as_str().unwrap_or("not built").to_string());
            eprintln!("[{k}/{n}] {name} {what} ({:.2} s)", c.seconds);
        },
    );
    let mut rows = rows;
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    println!("| game | verdict | factors | moves | goals | terminal | IID | junk | latches +/- | goal latches | decided early | analysis ms | product check | contingent | why | player |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let (mut stat, mut cont, mut built, mut bad) = (0, 0, 0, 0);
    let (mut with_latches, mut with_early, mut outcome_bad) = (0, 0, 0);
    // Contingent searches that ended at their work bound, and the games whose search the
    // clock ended (their verdict may depend on the machine's speed: named).
    let (mut cut_work, mut cut_clock) = (0, Vec::new());
    for (name, c) in &rows {
        let Some(v) = c.json.as_ref().filter(|v| v["ok"].as_bool() == Some(true)) else {
            let why = c.json.as_ref().and_then(|v| v["error"].as_str().map(String::from)).unwrap_or(c.why.clone());
            println!("| {name} | not built | | | | | | | | | | | | | {} | |", why.replace('|', "/"));
            continue;
        };
        built += 1;
        let r = &v["report"];
        let kind = r["kind"].as_str().unwrap_or("?");
        let cf = v["contingent"]["factorable_in"].as_u64().unwrap_or(0);
        match v["contingent"]["cut_short_by"].as_str() {
            Some("work") => cut_work += 1,
            Some(_) => cut_clock.push(name.as_str()),
            None => {}
        }
        let verdict = match kind {
            "static" => {
                stat += 1;
                "static"
            }
            _ if cf > 0 => {
                cont += 1;
                "contingent"
            }
            _ => "no",
        };
        let check = if v["check"].is_null() && v["contingent"]["checked_states"].as_u64().unwrap_or(0) == 0 {
            String::new()
        } else if v["check"]["ok"].as_bool() == Some(false)
            || v["contingent"]["check_failures"].as_u64().unwrap_or(0) > 0
        {
            bad += 1;
            "FAILED".into()
        } else {
            format!(
                "ok ({} states)",
                v["check"]["states"].as_u64().unwrap_or(0) + v["contingent"]["checked_states"].as_u64().unwrap_or(0)
            )
        };
        let shapes: Vec<String> = r["move_shapes"]
            .as_array()
            .map(|a| a.iter().map(|x| format!("{}", x[1].as_str().unwrap_or("?"))).collect())
            .unwrap_or_default();
        let goals: Vec<String> = r["goal_combination"]
            .as_array()
            .map(|a| a.iter().map(|x| x[1].as_str().unwrap_or("?").to_string()).collect())
            .unwrap_or_default();
        let mut goals = goals;
        goals.dedup();
        let contingent = if v["contingent"].is_null() {
            String::new()
        } else {
            format!(
                "{}/{} (depth {}, {} factors)",
                cf, v["contingent"]["playouts"], v["contingent"]["median_depth"], v["contingent"]["max_factors"]
            )
        };
        let ms = r["millis"].as_f64().unwrap_or(0.0)
            + v["latches"]["ms"].as_f64().unwrap_or(0.0)
            + v["outcome"]["ms"].as_f64().unwrap_or(0.0);
        let out = &v["outcome"];
        with_latches += usize::from(out["latches"].as_u64().unwrap_or(0) > 0);
        with_early += usize::from(out["decided_early"].as_u64().unwrap_or(0) > 0);
        let early = if out["failures"].as_u64().unwrap_or(0) > 0 {
            outcome_bad += 1;
            "FAILED".to_string()
        } else if out["playouts"].as_u64().unwrap_or(0) > 0 {
            match out["median_moves_early"].as_u64() {
                Some(m) => format!("{}/{} ({m} moves)", out["decided_early"], out["playouts"]),
                None => format!("{}/{}", out["decided_early"], out["playouts"]),
            }
        } else {
            String::new()
        };
        println!(
            "| {name} | {verdict} | {} | {} | {} | {} | {} | {} | {}/{} | {} | {early} | {:.1} | {check} | {contingent} | {} | {} |",
            r["factors"].as_array().map_or(0, |f| f.len()),
            shapes.join(" "),
            goals.join(", "),
            r["terminal_combination"].as_str().unwrap_or("?"),
            r["iid"]["count"],
            r["junk"]["count"],
            v["latches"]["positive"],
            v["latches"]["negative"],
            out["latches"].as_u64().unwrap_or(0),
            ms,
            r["why"].as_str().unwrap_or("").replace('|', "/"),
            match (verdict, v["player"].as_str()) {
                ("static", Some("apart")) => "apart",
                ("static", Some(_)) => "whole",
                _ => "",
            },
        );
    }
    println!("\n{} games: {built} built, {stat} factor statically, {cont} contingently (in sampled playouts; {cut_work} searches ended at their work bound, {} at the clock{}), {bad} product checks failed; {with_latches} with goal or terminal latches, {with_early} with every goal decided before the end in some sampled playout, {outcome_bad} outcome checks failed", rows.len(), cut_clock.len(), if cut_clock.is_empty() { String::new() } else { format!(": {}", cut_clock.join(", ")) });
    Ok(if bad + outcome_bad > 0 { ExitCode::from(4) } else { ExitCode::SUCCESS })
}
