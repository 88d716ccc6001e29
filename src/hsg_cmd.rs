//! `factotum hsg`: the hyperstate space graph of a game from one role's view, its figures,
//! the ideal path with its failure spectrum, and a picture (DOT or SVG).

use crate::traps_cmd::{load, Engine};
use anyhow::{anyhow, bail, Context, Result};
use factotum::hsg::{picture, BaseMask, Hsg, HsgError, HsgOptions, Ssg, Summary, Tag};
use factotum::machine::{canonical_move_text, StateMachine};
use factotum::propnet::PnState;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub struct HsgArgs {
    pub role: Option<String>,
    pub win: u32,
    pub max_states: usize,
    pub depth: Option<u32>,
    pub seconds: f64,
    pub weak: bool,
    pub dot: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    pub draw: usize,
    pub json: bool,
}

/// How states were compared.
struct View {
    engine: &'static str,
    /// Bases left out of state equivalence, by name (weak equivalence), or `None` (strong).
    ignored: Option<Vec<String>>,
}

pub fn hsg_cmd(path: &Path, a: &HsgArgs) -> Result<ExitCode> {
    match load(path)? {
        Engine::Propnet(mut m, _, net) => {
            if a.weak {
                let init = m.initial_state();
                let (mask, ignored) = BaseMask::weak(&net, init.bits.len());
                let mut all = PnState { bits: vec![0; init.bits.len()] };
                for &b in &ignored {
                    all.bits[b as usize / 64] |= 1 << (b % 64);
                }
                let names = m.state_facts(&all).iter().map(|f| canonical_move_text(f)).collect();
                let view = View { engine: "propnet", ignored: Some(names) };
                run(&mut m, Some(&|s: &PnState| mask.project(s)), &view, path, a)
            } else {
                run(&mut m, None::<&Key<'_, PnState, PnState>>, &View { engine: "propnet", ignored: None }, path, a)
            }
        }
        Engine::Interp(mut m) => {
            if a.weak {
                bail!(
                    "--weak finds the action-independent bases in the propnet's graph, and {} has no propnet",
                    path.display()
                );
            }
            run(&mut m, None::<&Key<'_, _, ()>>, &View { engine: "interpreter", ignored: None }, path, a)
        }
    }
}

/// A state's key for weak equivalence.
type Key<'a, S, K> = dyn Fn(&S) -> K + 'a;

/// Explores the game, quotients its graph by `weak` (a key of a state) when given, and reports.
fn run<M, K>(m: &mut M, weak: Option<&Key<M::State, K>>, view: &View, path: &Path, a: &HsgArgs) -> Result<ExitCode>
where
    M: StateMachine,
    K: std::hash::Hash + Eq,
{
    let roles = m.roles().to_vec();
    let role = match &a.role {
        None => 0,
        Some(r) => roles
            .iter()
            .position(|x| x.eq_ignore_ascii_case(r))
            .ok_or_else(|| anyhow!("no role {r}; the roles are {}", roles.join(", ")))?,
    };
    let opts = HsgOptions {
        role,
        win: a.win,
        max_states: a.max_states,
        depth: a.depth,
        deadline: Some(Instant::now() + Duration::from_secs_f64(a.seconds)),
    };
    let game = path.display().to_string();
    let t = Instant::now();
    let start = m.initial_state();
    let ssg = match Ssg::explore(m, &start, &opts) {
        Ok(s) => s,
        Err(e) => return Ok(fail(&game, a.json, &e)),
    };
    let strong_states = ssg.nodes.len();
    let ssg = match weak {
        Some(key) => ssg.quotient(key),
        None => ssg,
    };
    let hsg = Hsg::build(&ssg, &opts);
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    let sum = Summary::new(&ssg, &hsg);
    let title = format!(
        "{}: hyperstate space graph for {}{}",
        path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
        roles[role],
        match &view.ignored {
            Some(names) if !names.is_empty() => format!(", ignoring {}", short_list(names, 3)),
            _ => String::new(),
        }
    );
    let keep = picture::shown(&hsg, a.draw);
    let drawn = keep.iter().filter(|&&k| k).count();
    if let Some(f) = &a.dot {
        std::fs::write(f, picture::dot(&hsg, &ssg.labels, &keep, &title))
            .with_context(|| format!("writing {}", f.display()))?;
    }
    if let Some(f) = &a.svg {
        std::fs::write(f, picture::svg(&hsg, &ssg.labels, &keep, &title))
            .with_context(|| format!("writing {}", f.display()))?;
    }
    if a.json {
        // Hyperstates are listed in id order, at most 10,000 (the summary counts them all),
        // with their closure headroom up to 5,000 (a search of the graph each).
        let with_closure = hsg.hyper.len() <= 5_000;
        let hyper: Vec<serde_json::Value> = hsg
            .hyper
            .iter()
            .enumerate()
            .take(10_000)
            .map(|(h, hs)| {
                let closure = with_closure.then(|| {
                    let (all, winnable) = hsg.closure(h as u32);
                    winnable as f64 / all as f64
                });
                json!({
                    "id": h, "states": hsg.states(h as u32).len(), "tag": hs.tag, "layer": hs.layer,
                    "loss_distance": hs.loss_distance, "win_distance": hs.win_distance,
                    "step_headroom": hs.step_headroom, "closure_headroom": closure,
                    "best_goal": hs.best, "closed": hs.closed,
                    "critical": hsg.edges(h as u32).iter().map(|&(l, t)| json!([ssg.labels[l as usize], t])).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!(
            "{}",
            json!({
                "game": game, "ok": true, "engine": view.engine, "role": roles[role], "win": a.win,
                "equivalence": if a.weak { "weak" } else { "strong" }, "ignored_bases": view.ignored,
                "explored_states": strong_states,
                "summary": sum, "ms": ms,
                "hyperstates": hyper,
            })
        );
    } else {
        print_report(&sum, &hsg, view, &roles[role], a, &game, ms, strong_states);
        if a.dot.is_some() || a.svg.is_some() {
            println!("picture: {drawn} of {} hyperstates drawn (--draw)", hsg.hyper.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn fail(game: &str, as_json: bool, e: &HsgError) -> ExitCode {
    if as_json {
        println!("{}", json!({"game": game, "ok": false, "error": e.to_string()}));
    } else {
        eprintln!("{game}: cannot build the state space graph: {e}");
    }
    ExitCode::from(3)
}

fn short_list(items: &[String], n: usize) -> String {
    let mut s = items.iter().take(n).cloned().collect::<Vec<_>>().join(" ");
    if items.len() > n {
        s.push_str(&format!(" and {} more", items.len() - n));
    }
    s
}

fn share(x: f64) -> String {
    format!("{x:.3}")
}

fn ld(d: Option<u32>) -> String {
    d.map_or("∞".to_string(), |d| d.to_string())
}

#[allow(clippy::too_many_arguments)]
fn print_report(s: &Summary, hsg: &Hsg, view: &View, role: &str, a: &HsgArgs, game: &str, ms: f64, explored: usize) {
    println!("game: {game} ({}), role {role}, a win is a terminal goal ≥ {}", view.engine, a.win);
    match &view.ignored {
        Some(names) => println!(
            "weak equivalence: {explored} states explored, compared without {} base{} that are action-independent and read by no legality, or read by nothing: {}",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            if names.is_empty() { "none found".to_string() } else { short_list(names, 8) }
        ),
        None => println!("strong equivalence: states compared on every base"),
    }
    let bound = if s.complete {
        "complete".to_string()
    } else {
        format!("bounded: {} states left unexpanded (--depth, --max-states or --seconds)", s.open_states)
    };
    let (noun, terminal) =
        if view.ignored.is_some() { ("classes of states", "holding a terminal state") } else { ("states", "terminal") };
    println!("state space graph: {} {noun} ({} {terminal}), {bound}; {ms:.1} ms", s.states, s.terminal_states);
    println!(
        "hyperstates: {} (compression {:.2} states per hyperstate), {} layers",
        s.hyperstates, s.compression, s.layers
    );
    let total = (s.critical_actions + s.reversible_actions).max(1);
    println!(
        "actions: {} critical, {} reversible ({:.1}% reversible)",
        s.critical_actions,
        s.reversible_actions,
        100.0 * s.reversible_actions as f64 / total as f64
    );
    println!(
        "tags: {} win, {} fail, {} eventually winnable, {} implicitly failed, {} open",
        s.win, s.fail, s.eventually_winnable, s.implicitly_failed, s.open
    );
    let start = hsg.edges(0);
    let winnable_edges = start.iter().filter(|e| hsg.hyper[e.1 as usize].tag.winnable()).count();
    println!(
        "start: {}, {} state{}, closure headroom {}, step headroom {}, loss distance {}",
        s.start_tag.name(),
        s.start_states,
        if s.start_states == 1 { "" } else { "s" },
        share(s.start_closure_headroom),
        s.start_step_headroom.map_or("-".to_string(), |h| format!(
            "{} ({winnable_edges} of {} critical actions)",
            share(h),
            start.len()
        )),
        ld(s.start_loss_distance)
    );
    if s.ideal_path.is_empty() {
        let why = if s.start_tag == Tag::Open { "no win found within the bounds" } else { "no win is reachable" };
        println!("ideal path: none ({why})");
    } else {
        let mut line = String::new();
        for step in &s.ideal_path {
            line.push_str(&format!(
                "h{} ({} st, ld {}, headroom {:.2})",
                step.hyperstate,
                step.states,
                ld(step.loss_distance),
                step.closure_headroom
            ));
            if let Some(a) = &step.action {
                line.push_str(&format!(" --{a}--> "));
            }
        }
        let n = s.ideal_path.len() - 1;
        println!("ideal path ({n} critical action{}): {line}", if n == 1 { "" } else { "s" });
        let spectrum: Vec<String> = s.ideal_path.iter().map(|p| ld(p.loss_distance)).collect();
        println!("failure spectrum (loss distance along the ideal path): {}", spectrum.join(" "));
    }
}
