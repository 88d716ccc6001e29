//! `factotum propnet --all DIR`: builds the propnet of every game of a folder, each in a
//! child process of its own (`factotum propnet GAME --json`), so that a game that runs past
//! its time or memory budget is killed without harming the others, and each game's peak
//! memory is its own.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One game's build.
#[derive(Clone, Debug)]
pub struct Row {
    pub game: String,
    pub ok: bool,
    pub components: Option<u64>,
    pub seconds: f64,
    pub peak_mib: f64,
    pub why: String,
}

/// Resident memory of a process, in KiB, from /proc (0 where /proc is missing).
fn rss_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// The peak resident memory of this process, in MiB.
pub fn own_peak_mib() -> f64 {
    rss_kib(std::process::id(), "VmHWM:") as f64 / 1024.0
}

/// A child process's JSON report, with its time and peak memory, or why there is none.
pub struct Child {
    pub json: Option<serde_json::Value>,
    pub seconds: f64,
    pub peak_mib: f64,
    pub why: String,
}

/// Runs `exe args...`, which prints one JSON line, killing it past `budget_s` (plus a grace
/// second) or `mem_mib` of resident memory.
pub fn run_child(exe: &Path, args: &[std::ffi::OsString], budget_s: f64, mem_mib: f64) -> Child {
    let start = Instant::now();
    let mut row = Child { json: None, seconds: 0.0, peak_mib: 0.0, why: String::new() };
    let child = Command::new(exe).args(args).stdout(Stdio::piped()).stderr(Stdio::null()).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            row.why = format!("cannot start: {e}");
            return row;
        }
    };
    // The child checks its own deadline; this is the backstop, with a grace second.
    let hard = Duration::from_secs_f64(budget_s + 1.0);
    let mut killed = None;
    // Read the output on its own thread, so a child that prints much cannot block.
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_string(&mut out);
        }
        out
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(e) => {
                row.why = format!("wait failed: {e}");
                break None;
            }
        }
        let rss = rss_kib(child.id(), "VmRSS:") as f64 / 1024.0;
        row.peak_mib = row.peak_mib.max(rss);
        if rss > mem_mib {
            killed = Some(format!("memory over {mem_mib:.0} MiB"));
        } else if start.elapsed() > hard {
            killed = Some(format!("time over {budget_s:.0} s"));
        }
        if killed.is_some() {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    row.seconds = start.elapsed().as_secs_f64();
    let out = reader.join().unwrap_or_default();
    if let Some(k) = killed {
        row.why = format!("killed: {k}");
        return row;
    }
    match serde_json::from_str::<serde_json::Value>(out.trim()) {
        Ok(v) => {
            if let Some(p) = v["peak_mib"].as_f64() {
                row.peak_mib = row.peak_mib.max(p);
            }
            row.json = Some(v);
        }
        Err(_) => {
            row.why = match status {
                Some(s) => format!("no report (exit status {s})"),
                None => "no report".into(),
            }
        }
    }
    row
}

fn run_one(exe: &Path, game: &Path, budget_s: f64, mem_mib: f64) -> Row {
    let name = game.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let args = [
        "propnet".into(),
        game.as_os_str().to_owned(),
        "--json".into(),
        "--budget-s".into(),
        budget_s.to_string().into(),
    ];
    let c = run_child(exe, &args, budget_s, mem_mib);
    let mut row = Row { game: name, ok: false, components: None, seconds: c.seconds, peak_mib: c.peak_mib, why: c.why };
    if let Some(v) = c.json {
        row.ok = v["ok"].as_bool().unwrap_or(false);
        row.components = v["report"]["optimized"]["components"].as_u64();
        if let Some(s) = v["report"]["total_s"].as_f64() {
            row.seconds = s;
        }
        row.why = v["error"].as_str().unwrap_or("").to_string();
    }
    row
}

/// Builds every `.kif` game in `dir` on `jobs` worker threads (one child process each).
pub fn run_all(dir: &Path, budget_s: f64, mem_mib: f64, jobs: usize) -> std::io::Result<Vec<Row>> {
    let exe = std::env::current_exe()?;
    let games = factotum::par::files_with_extension(dir, "kif")?;
    let mut v = factotum::par::map(
        &games,
        jobs,
        |g| run_one(&exe, g, budget_s, mem_mib),
        |r, k, n| {
            let status = if r.ok { "ok" } else { "FAILED" };
            eprintln!("[{k}/{n}] {} {status} ({:.2} s, {:.0} MiB) {}", r.game, r.seconds, r.peak_mib, r.why);
        },
    );
    v.sort_by(|a, b| a.game.cmp(&b.game));
    Ok(v)
}

pub fn print(rows: &[Row], budget_s: f64, mem_mib: f64) {
    println!("| game | grounded | components | build s | peak MiB | why not |");
    println!("|---|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {:.2} | {:.0} | {} |",
            r.game,
            if r.ok { "yes" } else { "no" },
            r.components.map_or("-".into(), |c| c.to_string()),
            r.seconds,
            r.peak_mib,
            r.why
        );
    }
    let ok = rows.iter().filter(|r| r.ok).count();
    println!(
        "\n{ok}/{} games built within {budget_s:.0} s and {mem_mib:.0} MiB ({:.1}%)",
        rows.len(),
        100.0 * ok as f64 / rows.len().max(1) as f64
    );
}
