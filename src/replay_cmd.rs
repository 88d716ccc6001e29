//! `factotum replay`: a match record (ours or any ggp-base-format record) replayed on our
//! engine, step by step, with what agrees and what does not.

use crate::traps_cmd::{load, Engine};
use anyhow::{anyhow, Result};
use factotum::manager::record::MatchRecord;
use factotum::manager::replay::{replay, ReplayReport};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The game to replay `rec` (read from `record`) on: `game`, or the game file the record
/// names (as written, then beside the record).
fn game_path(record: &Path, rec: &MatchRecord, game: Option<&Path>) -> Result<PathBuf> {
    if let Some(g) = game {
        return Ok(g.to_path_buf());
    }
    let named = &rec.factotum.game_path;
    if named.is_empty() {
        return Err(anyhow!(
            "{}: the record names no game file{}; pass --game GAME.kif",
            record.display(),
            if rec.game_meta_url.is_empty() {
                String::new()
            } else {
                format!(" (only a repository URL, {}, which is not fetched)", rec.game_meta_url)
            }
        ));
    }
    let as_written = PathBuf::from(named);
    if as_written.exists() {
        return Ok(as_written);
    }
    let beside = record.parent().unwrap_or(Path::new(".")).join(as_written.file_name().unwrap_or_default());
    if beside.exists() {
        return Ok(beside);
    }
    Err(anyhow!("{}: the record's game {named} is not there; pass --game GAME.kif", record.display()))
}

fn print(r: &ReplayReport, engine: &str, game: &Path) {
    println!("match {}: {} on {} (roles {})", r.match_id, game.display(), engine, r.roles.join(", "));
    match r.initial_agrees {
        Some(true) => println!("initial state: agrees"),
        Some(false) => println!("initial state: DIFFERS"),
        None => println!("initial state: not recorded"),
    }
    for s in &r.steps {
        let moves: Vec<String> = s
            .moves
            .iter()
            .map(|c| {
                let mut t = format!("{} {}", c.role, c.text);
                if !c.legal {
                    t.push_str(" ILLEGAL");
                }
                if !c.error.is_empty() {
                    t.push_str(&format!(" [{}]", c.error));
                }
                t
            })
            .collect();
        let state = match s.state_agrees {
            Some(true) => "state agrees".to_string(),
            Some(false) => format!("state DIFFERS (record only: {:?}; ours only: {:?})", s.missing, s.extra),
            None if s.moves.iter().all(|c| c.legal) => "no state recorded".to_string(),
            None => String::new(),
        };
        println!("step {}: {} | {state}", s.step, moves.join(" | "));
    }
    if let Some(why) = &r.stopped {
        println!("stopped: {why}");
    }
    let status = if r.record_completed {
        "completed"
    } else if r.record_aborted {
        "aborted"
    } else {
        "not finished"
    };
    let ours = if r.terminal {
        format!("terminal, goals {:?}", r.goals.iter().map(|g| g.map_or(-1, i64::from)).collect::<Vec<_>>())
    } else {
        "not terminal".to_string()
    };
    println!("end: the record is {status} with goals {:?}; by our rules the last state is {ours}", r.record_goals);
    println!("{}", if r.agrees { "the record replays cleanly" } else { "the record does NOT agree with our rules" });
}

/// Exit 0 when the record replays cleanly, 1 when it does not, 3 when it or its game cannot
/// be read.
pub fn replay_cmd(record: &Path, game: Option<&Path>, json: bool) -> Result<ExitCode> {
    let run = || -> Result<(ReplayReport, &'static str, PathBuf)> {
        let rec = MatchRecord::read(record).map_err(anyhow::Error::msg)?;
        let path = game_path(record, &rec, game)?;
        let (report, engine) = match load(&path)? {
            Engine::Propnet(mut m, ..) => (replay(&mut m, &rec), "propnet"),
            Engine::Interp(mut m) => (replay(&mut m, &rec), "interpreter"),
        };
        Ok((report.map_err(|e| anyhow!("{}: {e}", record.display()))?, engine, path))
    };
    match run() {
        Ok((r, engine, path)) => {
            if json {
                let mut v = serde_json::to_value(&r)?;
                v["engine"] = engine.into();
                v["game"] = path.display().to_string().into();
                println!("{v}");
            } else {
                print(&r, engine, &path);
            }
            Ok(if r.agrees { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            Ok(ExitCode::from(3))
        }
    }
}
