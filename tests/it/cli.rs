//! Runs the real `factotum` binary on the games of `gdl/` and on malformed inputs.

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn factotum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_factotum")).args(args).current_dir(root()).output().expect("run factotum")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty directory under the system temp dir, unique to this call.
fn temp_dir(tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "factotum-it-{tag}-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// Removes a temp dir when dropped (also when the test fails).
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn assert_no_panic(o: &Output) {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "factotum panicked:\n{err}");
    assert!(o.status.code().is_some(), "factotum was killed by a signal: {:?}\n{err}", o.status);
}

/// Runs factotum with `args` (ending in `--json`), asserts a clean success, and returns the
/// JSON it printed.
fn json_of(args: &[&str]) -> serde_json::Value {
    let o = factotum(args);
    assert_no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

// ---------------------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------------------

#[test]
fn check_tictactoe() {
    let o = factotum(&["check", "gdl/tictactoe.kif"]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().any(|l| l == "roles: x o"), "{out}");
    assert!(out.lines().any(|l| l == "game: tictactoe"), "{out}");
    assert!(out.lines().any(|l| l.trim() == "legal/2: 3 rule(s)"), "{out}");
    assert!(out.lines().any(|l| l == "ok"), "{out}");
    assert!(!stderr(&o).contains("error"), "{}", stderr(&o));
}

#[test]
fn check_every_test_game() {
    for (file, roles) in [
        ("gdl/connect4.kif", "roles: red yellow"),
        ("gdl/three_to_fifteen.kif", "roles: first second"),
        ("gdl/parallel_tictactoe.kif", "roles: x o"),
        ("gdl/joined_tictactoe.kif", "roles: x o"),
    ] {
        let o = factotum(&["check", file]);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", stderr(&o));
        assert!(stdout(&o).lines().any(|l| l == roles), "{file}: {}", stdout(&o));
    }
}

/// A valid game; malformed variants add lines after it.
const VALID: &str = "(role r)\n(init s)\n(q a)\n(<= (legal r go) (true s))\n(<= (next s) (does r go))\n(<= terminal (true s))\n(goal r 100)\n";

/// Writes `bytes` to a temp file, runs `factotum check` on it and expects exit code 2 with a
/// stderr line `FILE:LINE:COL: ...` whose message contains `needle`.
fn check_fails(tag: &str, bytes: &[u8], line: u32, col: u32, needle: &str) {
    let dir = temp_dir(tag);
    let _cleanup = Cleanup(dir.clone());
    let path = dir.join(format!("{tag}.kif"));
    std::fs::write(&path, bytes).unwrap();
    let o = factotum(&["check", path.to_str().unwrap()]);
    assert_no_panic(&o);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{tag}: stdout {}\nstderr {err}", stdout(&o));
    let prefix = format!("{}:{line}:{col}: ", path.display());
    let hit = err.lines().find(|l| l.starts_with(&prefix));
    let Some(hit) = hit else { panic!("{tag}: no stderr line starts with `{prefix}`:\n{err}") };
    let msg = &hit[prefix.len()..];
    assert!(msg.contains(needle), "{tag}: `{hit}` should mention `{needle}`");
    assert!(msg.len() > needle.len(), "{tag}: `{hit}` carries no message");
}

#[test]
fn check_truncated_file() {
    check_fails("truncated", b"(role r)\n(init (cell 1 1 b))\n  (<= (legal r (mark ?x", 3, 3, "not closed");
}

#[test]
fn check_unbalanced_parentheses() {
    check_fails("unbalanced", b"(role r)\n(init (cell 1 1 b)))\n", 2, 20, "unbalanced ')'");
}

#[test]
fn check_unsafe_rule() {
    let text = format!("{VALID}(<= (p ?x) (q a))\n");
    check_fails("unsafe", text.as_bytes(), 8, 1, "error: unsafe rule for `p`");
}

#[test]
fn check_unstratified_negation() {
    let text = format!("{VALID}(<= (p) (not (t)))\n(<= (t) (not (p)))\n");
    // The diagnostic points at one of the two rules (line 8 or 9).
    let dir = temp_dir("unstratified");
    let _cleanup = Cleanup(dir.clone());
    let path = dir.join("unstratified.kif");
    std::fs::write(&path, &text).unwrap();
    let o = factotum(&["check", path.to_str().unwrap()]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let ok = err.lines().any(|l| {
        (l.starts_with(&format!("{}:8:1: ", path.display())) || l.starts_with(&format!("{}:9:1: ", path.display())))
            && l.contains("error: negation is not stratified")
    });
    assert!(ok, "{err}");
}

#[test]
fn check_arity_clash() {
    let text = format!("{VALID}(q a b)\n");
    check_fails("arity", text.as_bytes(), 8, 1, "error: relation `q` used with 2 argument(s)");
}

#[test]
fn check_binary_garbage() {
    check_fails("binary", &[0xff, 0xfe, 0x00, 0x01, 0x80, 0x28, 0x29, 0x0a, 0xc3], 1, 1, "not UTF-8");
    check_fails("binary2", b"(role r)\n(init \xc3\x28)\n", 2, 7, "not UTF-8");
}

#[test]
fn check_deep_nesting_does_not_crash() {
    let text = "(".repeat(10_000);
    check_fails("deep", text.as_bytes(), 1, 201, "nested deeper");
}

#[test]
fn check_missing_file() {
    let path = std::env::temp_dir().join(format!("factotum-it-missing-{}.kif", std::process::id()));
    let o = factotum(&["check", path.to_str().unwrap()]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read file"), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------
// bench
// ---------------------------------------------------------------------------------------

/// Runs `bench` on tic-tac-toe (it must succeed) and returns its table row and cells.
fn bench_row(args: &[&str]) -> (String, Vec<String>) {
    let o = factotum(args);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let row = out.lines().find(|l| l.starts_with("| tictactoe |"));
    let Some(row) = row else { panic!("no table row for tictactoe:\n{out}") };
    let cells = row.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect();
    (row.to_string(), cells)
}

#[test]
fn bench_tictactoe() {
    let (row, cells) = bench_row(&["bench", "gdl/tictactoe.kif", "--seconds", "0.2", "--runs", "1"]);
    assert_eq!(cells.len(), 5, "{row}");
    assert_eq!(cells[1], "interp");
    assert_eq!(cells[2], "1");
    let playouts: f64 = cells[3].parse().unwrap_or_else(|_| panic!("not a number in {row}"));
    assert!(playouts > 0.0, "{row}");
}

#[test]
fn bench_batch_tictactoe() {
    let (row, cells) =
        bench_row(&["bench", "gdl/tictactoe.kif", "--batch", "--words", "1", "--seconds", "0.2", "--runs", "1"]);
    assert_eq!(cells.len(), 6, "{row}");
    assert_eq!(cells[1], "batch x64");
    let num = |i: usize| -> f64 { cells[i].parse().unwrap_or_else(|_| panic!("not a number in {row}")) };
    assert!(num(3) > 0.0 && num(4) > 0.0, "{row}");
    assert!((num(5) - num(4) / 64.0).abs() <= 1.0, "per lane is total / 64: {row}");
}

/// `factotum bench GAME --engine propnet` for one run of `seconds`, with `flag` when given;
/// it must succeed.
fn bench_propnet(game: &str, seconds: &str, flag: Option<&str>) -> std::process::Output {
    let mut args = vec!["bench", game, "--engine", "propnet", "--seconds", seconds, "--runs", "1"];
    args.extend(flag);
    let o = factotum(&args);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    o
}

/// The propnet bench says how many edges the machine selected; `--plain` selects none.
#[test]
fn bench_propnet_selects_edges_unless_plain() {
    let selected = |plain: bool| {
        let o = bench_propnet("gdl/hex4.kif", "0.2", plain.then_some("--plain"));
        assert!(stdout(&o).lines().any(|l| l.starts_with("| hex4 | propnet | 1 |")), "{}", stdout(&o));
        let err = stderr(&o);
        let line = err.lines().find(|l| l.starts_with("propnet machine:")).unwrap_or_else(|| panic!("{err}"));
        // "..., E selected edges in F families over K groups"
        let part = line.split(", ").find(|p| p.contains(" selected edges")).unwrap_or_else(|| panic!("{line}"));
        part.split(' ').next().and_then(|n| n.parse::<usize>().ok()).unwrap_or_else(|| panic!("{line}"))
    };
    assert!(selected(false) > 0);
    assert_eq!(selected(true), 0);
}

/// `--goal-latches`: planted_trap's mode latches decide both goals, so its playouts end
/// earlier (fewer states per playout) than without them.
#[test]
fn bench_goal_latches_shorten_playouts() {
    let depth = |latches: bool| {
        let o = bench_propnet("gdl/planted_trap.kif", "0.3", latches.then_some("--goal-latches"));
        assert_eq!(stderr(&o).contains("goal latches: 2 "), latches, "{}", stderr(&o));
        let out = stdout(&o);
        let row = out.lines().find(|l| l.starts_with("| planted_trap | propnet |")).unwrap_or_else(|| panic!("{out}"));
        let cells: Vec<f64> = row.trim_matches('|').split('|').filter_map(|c| c.trim().parse().ok()).collect();
        cells[2] / cells[1]
    };
    let (plain, cut) = (depth(false), depth(true));
    assert!(cut < plain * 0.97, "states per playout: {cut} with goal latches, {plain} without");
}

#[test]
fn bench_malformed_game_exits_2() {
    let dir = temp_dir("bench-bad");
    let _cleanup = Cleanup(dir.clone());
    let path = dir.join("bad.kif");
    std::fs::write(&path, format!("{VALID}(<= (p ?x) (q a))\n")).unwrap();
    let o = factotum(&["bench", path.to_str().unwrap(), "--seconds", "0.1", "--runs", "1"]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("unsafe"), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------
// conform
// ---------------------------------------------------------------------------------------

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn blank_board() -> Vec<String> {
    (1..=3).flat_map(|r| (1..=3).map(move |c| format!("( cell {r} {c} b )"))).collect()
}

/// A reference-format trace of tic-tac-toe: the header and two states of one playout
/// (x marks the centre), then the closing line. Written by hand from the rules.
fn tictactoe_trace() -> Vec<serde_json::Value> {
    let mut init = blank_board();
    init.push("( control x )".into());
    let all_marks: Vec<String> = (1..=3).flat_map(|r| (1..=3).map(move |c| format!("( mark {r} {c} )"))).collect();
    let mut s1: Vec<String> =
        blank_board().into_iter().map(|f| if f == "( cell 2 2 b )" { "( cell 2 2 x )".into() } else { f }).collect();
    s1.push("( control o )".into());
    let o_marks: Vec<String> = all_marks.iter().filter(|m| *m != "( mark 2 2 )").cloned().collect();
    vec![
        json!({"game": "tictactoe", "source": "gdl/tictactoe.kif", "version": 0, "sha256": "", "reasoner": "hand-written",
               "seed": 1, "playouts": 1, "max_steps": 1, "roles": ["x", "o"], "init": init}),
        json!({"playout": 0, "step": 0, "state": init, "terminal": false,
               "legal": {"x": all_marks, "o": ["noop"]}, "goals": {"x": 50, "o": 50},
               "joint": ["( mark 2 2 )", "noop"]}),
        json!({"playout": 0, "step": 1, "state": s1, "terminal": false,
               "legal": {"x": ["noop"], "o": o_marks}, "goals": {"x": 50, "o": 50}, "joint": null}),
        json!({"playout": 0, "final": true, "status": "max_steps", "depth": 1, "terminal": false, "ms": 1.0}),
    ]
}

/// Lays out `DIR/traces/tictactoe.jsonl` and `DIR/games/tictactoe.kif`.
fn write_trace(dir: &Path, lines: &[serde_json::Value]) -> (PathBuf, PathBuf) {
    let traces = dir.join("traces");
    let games = dir.join("games");
    std::fs::create_dir_all(&traces).unwrap();
    std::fs::create_dir_all(&games).unwrap();
    std::fs::copy(root().join("gdl/tictactoe.kif"), games.join("tictactoe.kif")).unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let trace = traces.join("tictactoe.jsonl");
    std::fs::write(&trace, text).unwrap();
    (trace, games)
}

fn result_row(out: &str) -> &str {
    out.lines().find(|l| l.starts_with("| tictactoe |")).unwrap_or_else(|| panic!("no result row:\n{out}"))
}

#[test]
fn conform_passes_on_a_correct_trace() {
    let dir = temp_dir("conform-ok");
    let _cleanup = Cleanup(dir.clone());
    let (trace, games) = write_trace(&dir, &tictactoe_trace());
    let o = factotum(&["conform", trace.to_str().unwrap(), "--games", games.to_str().unwrap()]);
    assert_no_panic(&o);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    let row = result_row(&out);
    assert!(row.contains("| 2 |"), "two states checked: {row}");
    assert!(row.contains("pass"), "{row}");
    assert!(out.contains("1/1 games agree"), "{out}");
    // Without --games the folder `../games` beside the trace is used.
    let o = factotum(&["conform", trace.to_str().unwrap()]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(result_row(&stdout(&o)).contains("pass"));
}

#[test]
fn conform_fails_on_a_wrong_legal_move() {
    let dir = temp_dir("conform-bad");
    let _cleanup = Cleanup(dir.clone());
    let mut lines = tictactoe_trace();
    // Step 1: o may not mark the centre x just took; claim it can.
    lines[2]["legal"]["o"] = json!(strings(&[
        "( mark 1 1 )",
        "( mark 1 2 )",
        "( mark 1 3 )",
        "( mark 2 1 )",
        "( mark 2 2 )",
        "( mark 2 3 )",
        "( mark 3 1 )",
        "( mark 3 2 )",
        "( mark 3 3 )",
    ]));
    let (trace, games) = write_trace(&dir, &lines);
    let o = factotum(&["conform", trace.to_str().unwrap(), "--games", games.to_str().unwrap()]);
    assert_no_panic(&o);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(result_row(&out).contains("FAIL"), "{out}");
    assert!(out.contains("legal moves of o"), "{out}");
    assert!(out.contains("( mark 2 2 )"), "the missing move is named: {out}");
}

#[test]
fn conform_fails_on_a_wrong_goal_or_state() {
    let dir = temp_dir("conform-goal");
    let _cleanup = Cleanup(dir.clone());
    let mut lines = tictactoe_trace();
    lines[1]["goals"]["x"] = json!(100);
    let (trace, games) = write_trace(&dir, &lines);
    let o = factotum(&["conform", trace.to_str().unwrap(), "--games", games.to_str().unwrap()]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("goal of x expected Some(100), got Some(50)"), "{}", stdout(&o));

    let dir2 = temp_dir("conform-state");
    let _cleanup2 = Cleanup(dir2.clone());
    let mut lines = tictactoe_trace();
    lines[2]["state"][4] = json!("( cell 2 2 o )");
    let (trace, games) = write_trace(&dir2, &lines);
    let o = factotum(&["conform", trace.to_str().unwrap(), "--games", games.to_str().unwrap()]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("state facts differ"), "{}", stdout(&o));
}

// ---------------------------------------------------------------------------------------
// propnet
// ---------------------------------------------------------------------------------------

/// The numbers of one row (`raw` or `optimized`) of `factotum propnet`'s table.
fn propnet_row(out: &str, label: &str) -> Vec<u64> {
    let row = out
        .lines()
        .find(|l| l.starts_with(&format!("| {label} |")))
        .unwrap_or_else(|| panic!("no {label} row:\n{out}"));
    row.trim_matches('|').split('|').skip(1).map(|c| c.trim().parse().expect("a count")).collect()
}

#[test]
fn propnet_reports_counts_before_and_after_optimization() {
    let dir = temp_dir("propnet-dot");
    let _cleanup = Cleanup(dir.clone());
    let dot = dir.join("ttt.dot");
    let o = factotum(&["propnet", "gdl/tictactoe.kif", "--dot", dot.to_str().unwrap()]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let (raw, opt) = (propnet_row(&out, "raw"), propnet_row(&out, "optimized"));
    // components, bases, inputs, and, or, not, transitions, edges
    assert_eq!(opt[1], 29, "{out}");
    assert_eq!(opt[2], 20, "{out}");
    assert!(opt[0] < raw[0] && opt[7] < raw[7], "optimization shrinks the network:\n{out}");
    assert!(out.contains("build: "), "{out}");
    let text = std::fs::read_to_string(&dot).unwrap();
    assert!(text.starts_with("digraph propnet {") && text.contains("terminal"), "{text}");
}

#[test]
fn propnet_json_and_budget() {
    let o = factotum(&["propnet", "gdl/connect4.kif", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    assert_eq!(v["ok"], true);
    assert!(v["report"]["optimized"]["components"].as_u64().unwrap() > 0);
    assert!(v["peak_mib"].as_f64().unwrap() > 0.0);
    // No time at all: a clean refusal with exit code 3, never a panic.
    let o = factotum(&["propnet", "gdl/connect4.kif", "--json", "--budget-s", "0"]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    assert_eq!(v["ok"], false);
    assert!(v["error"].as_str().unwrap().contains("time budget"), "{v}");
}

#[test]
fn propnet_all_builds_a_folder_in_child_processes() {
    let dir = temp_dir("propnet-all");
    let _cleanup = Cleanup(dir.clone());
    for g in ["tictactoe.kif", "connect4.kif"] {
        std::fs::copy(root().join("gdl").join(g), dir.join(g)).unwrap();
    }
    std::fs::write(dir.join("broken.kif"), "(role x) (<= (legal x a)").unwrap();
    let o = factotum(&["propnet", dir.to_str().unwrap(), "--all", "--budget-s", "20"]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("| tictactoe | yes | 155 |")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("| connect4 | yes |")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("| broken | no |")), "{out}");
    assert!(out.contains("2/3 games built"), "{out}");
}

#[test]
fn bench_and_conform_run_on_the_propnet() {
    let o = factotum(&["bench", "gdl/connect4.kif", "--engine", "propnet", "--seconds", "0.2", "--runs", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let row = out.lines().find(|l| l.starts_with("| connect4 | propnet |")).unwrap_or_else(|| panic!("{out}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    assert!(cells[4].parse::<f64>().unwrap() > 0.0, "{row}");

    let dir = temp_dir("conform-propnet");
    let _cleanup = Cleanup(dir.clone());
    let (trace, games) = write_trace(&dir, &tictactoe_trace());
    let o = factotum(&["conform", trace.to_str().unwrap(), "--games", games.to_str().unwrap(), "--engine", "propnet"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(result_row(&stdout(&o)).contains("pass"));
    let mut lines = tictactoe_trace();
    lines[1]["goals"]["x"] = json!(100);
    let (trace, games) = write_trace(&dir, &lines);
    let o = factotum(&["conform", trace.to_str().unwrap(), "--games", games.to_str().unwrap(), "--engine", "propnet"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("goal of x expected Some(100), got Some(50)"), "{}", stdout(&o));
}

/// Goal latches and goals decided before the end (flag_race: a resignation decides the
/// other player's goal; two flags owned settle the race moves before its end), each decision
/// checked against the goals at the end of random playouts, one game and a folder.
#[test]
fn factor_reports_goal_latches_and_goals_decided_early() {
    let o = factotum(&["factor", "gdl/flag_race.kif", "--json", "--check", "20"]);
    assert_no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    let out = &v["outcome"];
    assert_eq!(out["goal_latches"], 2, "{out}");
    assert_eq!(out["terminal_latches"], 0, "{out}");
    assert_eq!(out["sample"][0], "+( resigned white ) → black 100", "{out}");
    assert_eq!(out["failures"], 0, "{out}");
    assert!(out["decided_early"].as_u64().unwrap_or(0) > 0, "{out}");
    assert!(out["states"].as_u64().unwrap_or(0) > 20, "{out}");
    let o = factotum(&["factor", "gdl/flag_race.kif", "--check", "0"]);
    assert!(stdout(&o).contains("outcome: 2 goal or terminal latches"), "{}", stdout(&o));
    let dir = temp_dir("factor-outcome");
    for g in ["flag_race.kif", "tictactoe.kif"] {
        std::fs::copy(root().join("gdl").join(g), dir.join(g)).expect("copy");
    }
    let o = factotum(&["factor", dir.to_str().unwrap(), "--all", "--check", "5", "--contingent", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let all = stdout(&o);
    let row = |g: &str| all.lines().find(|l| l.starts_with(&format!("| {g} |"))).unwrap_or_default().to_string();
    assert!(row("flag_race").contains("| 8/4 | 2 | "), "{all}");
    assert!(row("tictactoe").contains("| 18/9 | 0 | 0/5 |"), "{all}");
    assert!(all.contains("1 with goal or terminal latches"), "{all}");
    assert!(all.contains("0 outcome checks failed"), "{all}");
}

#[test]
fn factor_reports_verdicts_and_checks_the_product() {
    let o = factotum(&["factor", "gdl/parallel_tictactoe.kif", "--json", "--check", "10"]);
    assert_no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    assert_eq!(v["report"]["kind"], "static");
    assert_eq!(v["report"]["factors"].as_array().map(|f| f.len()), Some(2));
    assert_eq!(v["check"]["ok"], true);
    assert!(v["check"]["states"].as_u64().unwrap_or(0) > 10);
    // Compound moves: the factoring player searches the boards apart.
    assert_eq!(v["player"], "apart");
    // A serial game between two players is a sum of games: factored, but searched whole.
    let o = factotum(&["factor", "gdl/serial_tictactoe.kif", "--check", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("verdict: factorable (static)"), "{out}");
    assert!(out.contains("choice of factor: x, o choose(s) the factor to play in: a sum of games"), "{out}");
    assert!(out.contains("searches whole: a sum of games"), "{out}");
    // Tic-tac-toe is one game; the report says why and names the latches it proved.
    let o = factotum(&["factor", "gdl/tictactoe.kif", "--contingent", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("verdict: not factorable"), "{out}");
    assert!(out.contains("why: one factor: goal"), "{out}");
    assert!(out.contains("latches: 18 positive, 9 negative"), "{out}");
    // A folder: one line per game, the product checked wherever a game factors.
    let dir = temp_dir("factor-all");
    for g in ["parallel_tictactoe.kif", "tictactoe.kif", "joined_tictactoe_blocked.kif", "serial_tictactoe.kif"] {
        std::fs::copy(root().join("gdl").join(g), dir.join(g)).expect("copy");
    }
    let o = factotum(&["factor", dir.to_str().unwrap(), "--all", "--check", "5", "--contingent", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("| parallel_tictactoe | static | 2 |"), "{out}");
    assert!(out.contains("| tictactoe |"), "{out}");
    assert!(out.contains("| joined_tictactoe_blocked | contingent |"), "{out}");
    let row = |g: &str| out.lines().find(|l| l.starts_with(&format!("| {g} |"))).unwrap_or_default().to_string();
    assert!(row("parallel_tictactoe").ends_with("| apart |"), "{out}");
    assert!(row("serial_tictactoe").ends_with("| whole |"), "{out}");
    assert!(out.contains("0 product checks failed"), "{out}");
    assert!(out.contains("0 searches ended at their work bound, 0 at the clock"), "{out}");
    // Not a game: a clear error, exit 2.
    let o = factotum(&["factor", "no-such-file.kif"]);
    assert_eq!(o.status.code(), Some(2));
    assert_no_panic(&o);
}

/// The contingent search is bounded by work, not by the clock: two runs give the same
/// search, and a bound too small for one analysis stops it before any, and says so.
#[test]
fn factor_bounds_the_contingent_search_by_work() {
    let contingent = |extra: &[&str]| {
        let mut args =
            vec!["factor", "gdl/joined_tictactoe_blocked.kif", "--json", "--check", "0", "--contingent", "5"];
        args.extend_from_slice(extra);
        let o = factotum(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
        let c = v["contingent"].take();
        assert!(c.is_object(), "{v}");
        c
    };
    let strip = |mut c: serde_json::Value| {
        c["ms_per_analysis"] = serde_json::Value::Null;
        c
    };
    let (a, b) = (contingent(&[]), contingent(&[]));
    assert!(a["factorable_in"].as_u64().unwrap_or(0) > 0, "{a}");
    assert!(a["cut_short_by"].is_null(), "{a}");
    assert_eq!(strip(a.clone()), strip(b), "the same search on every run");
    let cut = contingent(&["--contingent-work", "1"]);
    assert_eq!(cut["cut_short_by"], "work", "{cut}");
    assert_eq!(cut["analyses"], 0, "{cut}");
    assert_eq!(cut["factorable_in"], 0, "{cut}");
}

/// `factor --deadline-ms`: an analysis past its deadline merges every factor and says so;
/// within it, the verdict is the one without a deadline.
#[test]
fn factor_analysis_past_its_deadline_merges_every_factor() {
    let report = |extra: &[&str]| {
        let mut args = vec!["factor", "gdl/parallel_connect4.kif", "--json", "--check", "0", "--contingent", "0"];
        args.extend_from_slice(extra);
        let o = factotum(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
        v["report"].take()
    };
    let free = report(&[]);
    assert_eq!(free["factorable"], true, "{free}");
    assert_eq!(report(&["--deadline-ms", "60000"])["factors"], free["factors"]);
    let cut = report(&["--deadline-ms", "0"]);
    assert_eq!(cut["factorable"], false, "{cut}");
    assert_eq!(cut["factors"].as_array().map(Vec::len), Some(1), "{cut}");
    let couplings = cut["couplings"].to_string();
    assert!(couplings.contains("deadline"), "{couplings}");
}

#[test]
fn traps_lists_trap_moves_with_refutations() {
    // o to move on x . o / . x . / x . o: B1 and B3 let x complete column A.
    let moves = "(mark 1 1) (mark 1 3) (mark 2 2) (mark 3 3) (mark 3 1)";
    let v = json_of(&["traps", "gdl/tictactoe.kif", "--moves", moves, "--depth", "1", "--json"]);
    let r = &v["reports"][0];
    assert_eq!(r["role"], "o");
    let mut traps: Vec<&str> = r["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["trap"] == true)
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    traps.sort();
    assert_eq!(traps, ["( mark 1 2 )", "( mark 3 2 )"]);
    let trap = r["moves"].as_array().unwrap().iter().find(|m| m["trap"] == true).unwrap();
    assert_eq!(trap["refutation"], json!(["( mark 2 1 )"]));
    // The human form names the traps too; a bad move is a clear error.
    let o = factotum(&["traps", "gdl/tictactoe.kif", "--moves", moves, "--depth", "1"]);
    assert!(stdout(&o).contains("TRAP"), "{}", stdout(&o));
    let o = factotum(&["traps", "gdl/tictactoe.kif", "--moves", "(mark 1 1) (mark 1 1)"]);
    assert_no_panic(&o);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not a legal move"), "{}", stderr(&o));
}

#[test]
fn traps_reads_the_position_from_a_match_record() {
    let dir = temp_dir("traps-record");
    let _c = Cleanup(dir.clone());
    let record = json!({"moves": [["( mark 1 1 )", "noop"], ["noop", "( mark 1 3 )"], ["( mark 2 2 )", "noop"],
        ["noop", "( mark 3 3 )"], ["( mark 3 1 )", "noop"]]});
    let path = dir.join("m.json");
    std::fs::write(&path, record.to_string()).unwrap();
    let v = json_of(&[
        "traps",
        "gdl/tictactoe.kif",
        "--record",
        path.to_str().unwrap(),
        "--step",
        "5",
        "--depth",
        "1",
        "--json",
    ]);
    assert_eq!(v["reports"][0]["moves"].as_array().unwrap().iter().filter(|m| m["trap"] == true).count(), 2);
    let o = factotum(&["traps", "gdl/tictactoe.kif", "--record", path.to_str().unwrap(), "--step", "9"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("has 5 moves"), "{}", stderr(&o));
}

#[test]
fn trapbench_reports_rates_per_measure() {
    let v = json_of(&["trapbench", "gdl/tictactoe.kif", "--depth", "1", "--states", "2", "--json"]);
    let states = v["trap_states"].as_array().unwrap();
    assert_eq!(states.len(), 2);
    for s in states {
        assert!(s["positions"].as_u64().unwrap() > 0);
        let rates = s["rates"].as_array().unwrap();
        assert_eq!(rates.len(), 9, "eight measures and the control");
        assert!(rates.iter().any(|r| r["measure"] == "structural over continuations d=1"));
        for r in rates {
            let t = r["threshold"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&t));
        }
    }
}

#[test]
fn trapbench_reads_chess_trap_lines() {
    let dir = temp_dir("trapbench-chess");
    let _c = Cleanup(dir.clone());
    let file = dir.join("traps.txt");
    std::fs::write(&file, "# comment\nBudapest | 1 | 1.d4 Nf6 2.c4 e5 3.d5 Bc5 4.Bg5 Ne4\n").unwrap();
    let v = json_of(&["trapbench", "--chess", file.to_str().unwrap(), "--max-positions", "20", "--json"]);
    let s = &v["trap_states"][0];
    assert_eq!(s["role"], "white");
    assert!(s["trap_moves"].as_array().unwrap().iter().any(|m| m == "Bxd8"));
    assert_eq!(s["positions"], 20);
    assert!(s["all_positions"].as_u64().unwrap() > 1000, "{}", s["all_positions"]);
    // A malformed line is a clear error.
    std::fs::write(&file, "Budapest | one | 1.d4\n").unwrap();
    let o = factotum(&["trapbench", "--chess", file.to_str().unwrap()]);
    assert_no_panic(&o);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("depth one"), "{}", stderr(&o));
}

#[test]
fn similar_compares_positions_and_matches_moves() {
    // Opening in opposite corners: the same position turned, so structure matches exactly
    // while the moves (squares) differ.
    let v = json_of(&["similar", "gdl/tictactoe.kif", "--a", "(mark 1 1)", "--b", "(mark 3 3)", "--json"]);
    let sim = |name: &str| {
        v["similarities"].as_array().unwrap().iter().find(|s| s["measure"] == name).unwrap()["similarity"]
            .as_f64()
            .unwrap()
    };
    assert!((sim("structural over continuations d=1") - 1.0).abs() < 1e-9);
    assert!(sim("continuations d=1") < 1.0);
    // The paper's Table 3, first row: the Légal and Budapest traps' most frequent match is
    // the pair of mating bishop captures on f7 and f2.
    let legal = "1.e4 e5 2.Nf3 Nc6 3.Bc4 d6 4.Nc3 Bg4 5.Nxe5";
    let budapest = "1.d4 Nf6 2.c4 e5 3.d5 Bc5 4.Bg5 Ne4";
    let v = json_of(&["similar", "--chess", "--a", legal, "--b", budapest, "--json"]);
    let top = &v["match_counts"][0];
    assert_eq!((top["first"].as_str(), top["second"].as_str()), (Some("Bxf7"), Some("Bxf2")));
    assert_eq!((top["first_ends"].as_bool(), top["second_ends"].as_bool()), (Some(true), Some(true)));
}

// ---------------------------------------------------------------------------------------
// metagame
// ---------------------------------------------------------------------------------------

/// `factotum metagame`: self-play between random, MAST and batched playouts (the command
/// builds the batch machine), by pairs in turn; each game scores both of its candidates, and
/// the best mean is chosen.
#[test]
fn metagame_scores_every_playout_policy_and_chooses_the_best() {
    let v = json_of(&["metagame", "gdl/connect4.kif", "--agent", "agents/mcts_meta.toml", "--seconds", "3", "--json"]);
    let games = v["games"].as_u64().unwrap();
    assert!(games >= 3, "{v}");
    let c = v["candidates"].as_array().unwrap();
    let names: Vec<&str> = c.iter().map(|x| x["playout"].as_str().unwrap()).collect();
    assert_eq!(names, ["random", "mast", "batch"], "{v}");
    let played: u64 = c.iter().map(|x| x["played"].as_u64().unwrap()).sum();
    assert_eq!(played, 2 * games, "{v}");
    let means: Vec<f64> = c.iter().map(|x| x["mean"].as_f64().unwrap()).collect();
    let best = (0..3).max_by(|&a, &b| means[a].total_cmp(&means[b]).then(b.cmp(&a))).unwrap();
    assert_eq!(v["chosen"], names[best], "{v}");
    assert!(v["move_ms"].as_u64().unwrap() >= 2, "{v}");
}

/// With `heuristic = true`, meta-gaming first learns a heuristic (reported), and the
/// self-play's playouts are cut by it: at flag_race one is found from the flags owned, at
/// rock-paper-scissors none; `factotum heuristic` reports the same fit, and each role's best
/// single feature.
#[test]
fn metagame_learns_a_heuristic_where_the_agent_asks_for_one() {
    let v = json_of(&[
        "metagame",
        "gdl/flag_race.kif",
        "--agent",
        "agents/mcts_heuristic.toml",
        "--seconds",
        "4",
        "--json",
    ]);
    let h = &v["heuristic"];
    let found = h["found"].as_str().unwrap_or_else(|| panic!("no heuristic: {v}"));
    assert!(found.contains("(owner") && found.contains("white:") && found.contains("black:"), "{v}");
    assert!(h["playouts"].as_u64().unwrap() >= 200, "{v}");
    assert!(v["games"].as_u64().unwrap() >= 2, "{v}");
    let v = json_of(&[
        "metagame",
        "gdl/rock_paper_scissors.kif",
        "--agent",
        "agents/mcts_heuristic.toml",
        "--seconds",
        "1",
        "--json",
    ]);
    assert!(v["heuristic"]["found"].is_null(), "{v}");
    let v = json_of(&["metagame", "gdl/flag_race.kif", "--agent", "agents/mcts_meta.toml", "--seconds", "1", "--json"]);
    assert!(v["heuristic"].is_null(), "{v}");
    let v = json_of(&["heuristic", "gdl/flag_race.kif", "--seconds", "2", "--json"]);
    assert!(v["found"].as_str().is_some_and(|f| f.contains("(owner")), "{v}");
    assert_eq!(v["best"].as_array().map(Vec::len), Some(2), "{v}");
    let v = json_of(&["heuristic", "gdl/breakthrough5.kif", "--seconds", "2", "--json"]);
    assert!(v["found"].is_null() && v["playouts"].as_u64() == Some(4000), "{v}");
}

/// An agent with `metagame = true` chooses its playouts in the start clock of a real match
/// (logged at info) and plays the match through without errors.
#[test]
fn a_metagaming_agent_chooses_in_the_start_clock_and_plays() {
    let out = temp_dir("metagame-match");
    let _c = Cleanup(out.clone());
    let o = Command::new(env!("CARGO_BIN_EXE_factotum"))
        .args(["match", "gdl/connect4.kif", "--player", "agents/mcts_meta.toml", "--player", "agents/baseline.toml"])
        .args(["--startclock", "3", "--playclock", "1", "--margin-s", "0.3", "--id", "meta"])
        .args(["--out", out.to_str().unwrap()])
        .env("RUST_LOG", "info")
        .current_dir(root())
        .output()
        .expect("run factotum");
    assert_no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err.lines().find(|l| l.contains("meta-gaming")).unwrap_or_else(|| panic!("no meta-gaming line:\n{err}"));
    // The log's colours off: `\x1b[...m` sequences.
    let mut plain = String::new();
    let mut in_escape = false;
    for ch in line.chars() {
        match (in_escape, ch) {
            (false, '\x1b') => in_escape = true,
            (false, _) => plain.push(ch),
            (true, 'm') => in_escape = false,
            (true, _) => {}
        }
    }
    let names = ["random", "mast", "batch", "random+decisive", "mast+decisive"];
    let chosen = names.iter().find(|p| plain.contains(&format!("chosen={p} "))).unwrap_or_else(|| panic!("{plain}"));
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(rec["isCompleted"], true, "{rec}");
    // The record keeps the choice (and the baseline's playouts).
    assert_eq!(rec["factotum"]["playouts"], serde_json::json!([chosen, "random"]), "{}", rec["factotum"]);
    let errors = rec["errors"].as_array().unwrap();
    assert!(errors.iter().flat_map(|e| e.as_array().unwrap()).all(|e| e.as_str() == Some("")), "{rec}");
}

/// An agent with `heuristic = true` learns one in the start clock of a real match (logged at
/// info with its features) and plays the match through without errors.
#[test]
fn a_heuristic_agent_learns_in_the_start_clock_and_plays() {
    let out = temp_dir("heuristic-match");
    let _c = Cleanup(out.clone());
    let o = Command::new(env!("CARGO_BIN_EXE_factotum"))
        .args([
            "match",
            "gdl/flag_race.kif",
            "--player",
            "agents/mcts_heuristic.toml",
            "--player",
            "agents/random.toml",
        ])
        .args(["--startclock", "3", "--playclock", "1", "--margin-s", "0.3", "--id", "heur"])
        .args(["--out", out.to_str().unwrap()])
        .env("RUST_LOG", "info")
        .current_dir(root())
        .output()
        .expect("run factotum");
    assert_no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err.lines().find(|l| l.contains("heuristic:")).unwrap_or_else(|| panic!("no heuristic line:\n{err}"));
    assert!(line.contains("playouts cut after 10 joint moves") && line.contains("(owner"), "{line}");
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("heur.json")).unwrap()).unwrap();
    assert_eq!(rec["isCompleted"], true, "{rec}");
    // The record names the cut playouts (batched ones are not cut).
    let p = rec["factotum"]["playouts"][0].as_str().unwrap_or_default();
    assert!(p.ends_with("+cutoff") || p == "batch", "{}", rec["factotum"]);
    assert_eq!(rec["factotum"]["playouts"][1], "none", "{}", rec["factotum"]);
    let errors = rec["errors"].as_array().unwrap();
    assert!(errors.iter().flat_map(|e| e.as_array().unwrap()).all(|e| e.as_str() == Some("")), "{rec}");
}

/// `factotum metagame` with decisive moves' gate: open at connect four (few moves a ply, wins
/// often missed by random moves), where only candidates with decisive moves play; shut at
/// our breakthrough (eleven moves a ply), where the self-play is the plain one.
#[test]
fn the_decisive_gate_chooses_which_candidates_play() {
    let agent = "agents/mcts_meta_gate.toml";
    let v = json_of(&["metagame", "gdl/connect4.kif", "--agent", agent, "--seconds", "1", "--json"]);
    assert_eq!(v["gate"]["on"], true, "{v}");
    assert!(v["gate"]["cost"].as_f64().unwrap() <= 8.0, "{v}");
    let names: Vec<&str> = v["candidates"].as_array().unwrap().iter().map(|c| c["playout"].as_str().unwrap()).collect();
    assert_eq!(names, ["random+decisive", "mast+decisive"], "{v}");
    assert!(v["chosen"].as_str().unwrap().ends_with("+decisive"), "{v}");
    let v = json_of(&["metagame", "gdl/breakthrough5.kif", "--agent", agent, "--seconds", "1", "--json"]);
    assert_eq!(v["gate"]["on"], false, "{v}");
    let names: Vec<&str> = v["candidates"].as_array().unwrap().iter().map(|c| c["playout"].as_str().unwrap()).collect();
    assert_eq!(names, ["random", "mast", "batch"], "{v}");
    // Without the gate there is no gate to report.
    let v =
        json_of(&["metagame", "gdl/connect4.kif", "--agent", "agents/mcts_meta.toml", "--seconds", "0.2", "--json"]);
    assert!(v["gate"].is_null(), "{v}");
}

/// `factotum searchbench`: every agent searches every sampled position; MCTS runs
/// iterations, and the first agent's ratio to itself is 1.
#[test]
fn searchbench_compares_agents_on_the_same_positions() {
    let v = json_of(&[
        "searchbench",
        "gdl/connect4.kif",
        "--agent",
        "agents/baseline.toml",
        "--agent",
        "agents/mcts_mast.toml",
        "--positions",
        "3",
        "--seconds",
        "0.1",
        "--json",
    ]);
    assert_eq!(v["positions"], 3, "{v}");
    let agents = v["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    assert_eq!(agents[0]["median_ratio_to_first"].as_f64(), Some(1.0), "{v}");
    for a in agents {
        let per = a["per_position"].as_array().unwrap();
        assert_eq!(per.len(), 3);
        assert!(per.iter().all(|r| r.as_f64().unwrap() > 0.0), "{v}");
    }
    let o = factotum(&["searchbench", "gdl/connect4.kif", "--agent", "agents/nosuch.toml"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `factotum solve`: the hand-computed answer of a 2x2 game without a saddle point, from both
/// solvers, in JSON and in text; a position after moves; the bounds' exit code.
#[test]
fn solve_prints_the_value_and_equilibrium_of_a_small_game() {
    let o = factotum(&["solve", "gdl/mixed_2x2.kif", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    assert_eq!(v["equilibrium"], true);
    assert_eq!(v["solvers_agree"], true);
    assert_eq!(v["constant_sum"], 100);
    for solver in ["induction", "sequence_form"] {
        let row = &v[solver]["roles"][0];
        assert_eq!(row["role"], "row");
        assert!((row["value"].as_f64().unwrap() - 300.0 / 7.0).abs() < 1e-6, "{row}");
        let a = row["start"].as_array().unwrap().iter().find(|m| m["move"] == "( pick a )").unwrap();
        assert!((a["p"].as_f64().unwrap() - 2.0 / 7.0).abs() < 1e-6, "{row}");
    }
    let o = factotum(&["solve", "gdl/mixed_2x2.kif"]);
    let text = stdout(&o);
    assert!(text.contains("( pick a ) 2/7, ( pick b ) 5/7") && text.contains("the two solvers agree"), "{text}");
    // After x takes the centre and o a corner: still a draw; the sequence form fits the bound.
    let o = factotum(&["solve", "gdl/tictactoe.kif", "--moves", "(mark 2 2) (mark 1 1)", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["position"], "after 2 moves");
    assert_eq!(v["solvers_agree"], true);
    assert!((v["induction"]["roles"][0]["value"].as_f64().unwrap() - 50.0).abs() < 1e-9);
    let o = factotum(&["solve", "gdl/tictactoe.kif", "--max-states", "100"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("more than 100 states"), "{}", stderr(&o));
}

/// `factotum hsg`: the vault's weak graph is the hand-drawn one (its header), pictures are
/// written, and the strong graph has no reversible action; a bad role is a clear error.
#[test]
fn hsg_reports_the_hyperstate_graph() {
    let dir = temp_dir("hsg");
    let _c = Cleanup(dir.clone());
    let (svg, dot) = (dir.join("vault.svg"), dir.join("vault.dot"));
    let (svg_s, dot_s) = (svg.to_string_lossy().into_owned(), dot.to_string_lossy().into_owned());
    let v = json_of(&["hsg", "gdl/vault.kif", "--weak", "--svg", &svg_s, "--dot", &dot_s, "--json"]);
    let s = &v["summary"];
    assert_eq!((s["states"].as_u64(), s["hyperstates"].as_u64()), (Some(10), Some(6)));
    assert_eq!((s["critical_actions"].as_u64(), s["reversible_actions"].as_u64()), (Some(5), Some(10)));
    assert_eq!(s["start_tag"], "eventually_winnable");
    assert_eq!(v["ignored_bases"].as_array().map(|a| a.len()), Some(9));
    let path: Vec<&str> = s["ideal_path"].as_array().unwrap().iter().filter_map(|p| p["action"].as_str()).collect();
    assert_eq!(path, ["take", "open"]);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    assert!(std::fs::read_to_string(&dot).unwrap().contains("digraph"));
    let o = factotum(&["hsg", "gdl/vault.kif"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("0 reversible"), "{}", stdout(&o));
    let o = factotum(&["hsg", "gdl/vault.kif", "--role", "nobody"]);
    assert_no_panic(&o);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no role nobody"), "{}", stderr(&o));
}

/// `factotum equiv`: tic-tac-toe and number scrabble are one game (exit 0, the corners are the
/// even numbers); the variant without the anti-diagonal is not (exit 1), with the place where
/// it first matters; a missing file is a clear error.
#[test]
fn equiv_decides_agency_equivalence() {
    let v = json_of(&["equiv", "gdl/tictactoe.kif", "gdl/three_to_fifteen.kif", "--json"]);
    assert_eq!(v["equivalent"], true);
    assert_eq!(v["identical_outcomes"], true);
    assert_eq!(v["roles"][0], json!({"a": "x", "b": "first"}));
    let corners = v["start_classes"].as_array().unwrap().iter().find(|c| c["a"][0] == "(mark 1 1) | noop").unwrap();
    assert_eq!(corners["b"], json!(["(claim 2) | noop", "(claim 4) | noop", "(claim 6) | noop", "(claim 8) | noop"]));
    let o = factotum(&["equiv", "gdl/tictactoe.kif", "gdl/tictactoe_nodiag.kif", "--json"]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["equivalent"], false);
    assert!(v["distance"].as_f64().unwrap() > 0.0);
    assert!(v["difference"]["what"].as_str().unwrap().starts_with("A: the game is over"));
    let o = factotum(&["equiv", "gdl/tictactoe.kif", "gdl/no_such_game.kif"]);
    assert_no_panic(&o);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no_such_game"), "{}", stderr(&o));
}
