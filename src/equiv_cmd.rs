//! `factotum equiv`: whether two games are agency equivalent, the correspondence of their roles,
//! outcomes and first moves, or where they first differ and how far apart they are.

use crate::traps_cmd::{load, Engine};
use anyhow::Result;
use factotum::equiv::{compare, first_difference, paths_to, Comparison, EquivError, EquivOptions, Form, GameGraph};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub struct EquivArgs {
    pub max_states: usize,
    pub seconds: f64,
    pub json: bool,
}

fn explore(path: &Path, opts: &EquivOptions) -> Result<Result<GameGraph, EquivError>> {
    Ok(match load(path)? {
        Engine::Propnet(mut m, ..) => GameGraph::explore(&mut m, opts),
        Engine::Interp(mut m) => GameGraph::explore(&mut m, opts),
    })
}

/// One class of the start's moves: A's move sequences and B's that lead to one reduced
/// subtree.
struct Class {
    a: Vec<String>,
    b: Vec<String>,
}

/// The start's classes when the start is one role's choice (each at most 6 sequences of at
/// most 4 joint moves).
fn start_classes(a: &GameGraph, b: &GameGraph, c: &Comparison) -> Vec<Class> {
    let Form::Choice { children, .. } = &c.forms.forms[c.canon_a[0] as usize] else { return Vec::new() };
    let texts = |g: &GameGraph, canon: &[u32], f: u32| -> Vec<String> {
        let mut t: Vec<String> = paths_to(g, canon, 0, f, 4, 6).into_iter().map(|(p, _)| p.join(" then ")).collect();
        t.sort();
        t
    };
    children.iter().map(|&f| Class { a: texts(a, &c.canon_a, f), b: texts(b, &c.canon_b, f) }).collect()
}

pub fn equiv_cmd(path_a: &Path, path_b: &Path, args: &EquivArgs) -> Result<ExitCode> {
    let t = Instant::now();
    let opts = EquivOptions {
        max_states: args.max_states,
        deadline: Some(Instant::now() + Duration::from_secs_f64(args.seconds)),
    };
    let (name_a, name_b) = (path_a.display().to_string(), path_b.display().to_string());
    let explored = [explore(path_a, &opts)?, explore(path_b, &opts)?];
    let [ga, gb] = match explored {
        [Ok(a), Ok(b)] => [a, b],
        [a, b] => {
            let why = |r: &Result<GameGraph, EquivError>, name: &str| r.as_ref().err().map(|e| format!("{name}: {e}"));
            let msg = [why(&a, &name_a), why(&b, &name_b)].into_iter().flatten().collect::<Vec<_>>().join("; ");
            if args.json {
                println!("{}", json!({"a": name_a, "b": name_b, "ok": false, "error": msg}));
            } else {
                eprintln!("cannot compare: {msg}");
            }
            return Ok(ExitCode::from(3));
        }
    };
    let cmp = compare(&ga, &gb);
    let diff = first_difference(&ga, &gb, &cmp);
    let classes = if cmp.equivalent.is_some() { start_classes(&ga, &gb, &cmp) } else { Vec::new() };
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    let roles: Vec<(String, String)> =
        cmp.nearest_roles.iter().enumerate().map(|(rb, &ra)| (ga.roles[ra].clone(), gb.roles[rb].clone())).collect();
    let outcome_text =
        |g: &[Option<u32>]| g.iter().map(|x| x.map_or("-".into(), |v| v.to_string())).collect::<Vec<_>>().join(" ");
    let outcomes: Vec<(String, String)> = match &cmp.equivalent {
        Some(e) => {
            let (oa, ob) = (ga.outcomes(), gb.outcomes());
            ob.iter().enumerate().map(|(i, g)| (outcome_text(&oa[e.outcomes[i]]), outcome_text(g))).collect()
        }
        None => Vec::new(),
    };
    let subtrees = cmp.forms.reachable(cmp.canon_a[0]).len();
    if args.json {
        println!(
            "{}",
            json!({
                "a": name_a, "b": name_b, "ok": true,
                "states": [ga.nodes.len(), gb.nodes.len()],
                "equivalent": cmp.equivalent.is_some(),
                "identical_outcomes": cmp.equivalent.as_ref().map(|e| e.identical_outcomes),
                "roles": roles.iter().map(|(a, b)| json!({"a": a, "b": b})).collect::<Vec<_>>(),
                "outcomes": outcomes.iter().map(|(a, b)| json!({"a": a, "b": b})).collect::<Vec<_>>(),
                "distance": cmp.distance,
                "reduced_subtrees_a": subtrees,
                "start_classes": classes.iter().map(|c| json!({"a": c.a, "b": c.b})).collect::<Vec<_>>(),
                "difference": diff.as_ref().map(|d| json!({"path_a": d.path_a, "path_b": d.path_b, "what": d.what})),
                "approximate": cmp.forms.approximate,
                "correspondences_tried": cmp.tried,
                "ms": ms,
            })
        );
    } else {
        println!("A: {name_a} ({} states, roles {})", ga.nodes.len(), ga.roles.join(" "));
        println!("B: {name_b} ({} states, roles {})", gb.nodes.len(), gb.roles.join(" "));
        let pairs = roles.iter().map(|(a, b)| format!("{a} = {b}")).collect::<Vec<_>>().join(", ");
        match &cmp.equivalent {
            Some(e) => {
                let how = if e.identical_outcomes { "with identical outcomes" } else { "up to relabeling of outcomes" };
                println!("agency equivalent (Definition 3), {how}; roles: {pairs}");
                if !e.identical_outcomes {
                    let o = outcomes.iter().map(|(a, b)| format!("({a}) = ({b})")).collect::<Vec<_>>().join(", ");
                    println!("outcomes (A = B): {o}");
                }
                println!("reduced tree: {subtrees} distinct subtrees");
                if !classes.is_empty() {
                    println!("the start's choices, by class (A ≡ B):");
                    for c in &classes {
                        println!("  {}  ≡  {}", c.a.join(", "), c.b.join(", "));
                    }
                }
            }
            None => {
                println!(
                    "not equivalent ({} role and outcome correspondences tried); distance {:.4} (Jaccard distance between the reduced trees' subtrees, roles {pairs})",
                    cmp.tried, cmp.distance
                );
                if let Some(d) = &diff {
                    let path = |p: &[String]| if p.is_empty() { "the start".to_string() } else { p.join(", ") };
                    if d.path_a.is_empty() && d.path_b.is_empty() {
                        println!("first difference, at the start:");
                    } else if d.path_a == d.path_b {
                        println!("first difference, after {} in both:", path(&d.path_a));
                    } else {
                        println!("first difference, after A: {} / B: {}:", path(&d.path_a), path(&d.path_b));
                    }
                    println!("  {}", d.what);
                }
            }
        }
        if cmp.forms.approximate {
            println!("note: a decision matrix too large to canonicalize exactly was compared by an invariant");
        }
        println!("{ms:.1} ms");
    }
    Ok(if cmp.equivalent.is_some() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
