//! The game manager through the real CLI: `factotum match` with in-process agents, against
//! our own `factotum serve` over HTTP, and against a stub GGP player that misbehaves; and
//! `factotum tournament` interrupted (a match limit, a record left unfinished) and resumed.
//! Every record is checked against ggp-base's format and replayed on our propnet.

use factotum::agent::{AgentConfig, Kind};
use factotum::gdl::Game;
use factotum::machine::StateMachine;
use factotum::manager::record::state_string;
use factotum::propnet::{self, Budget};
use factotum::protocol::{spawn, ServerConfig};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn factotum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_factotum")).args(args).current_dir(root()).output().expect("run factotum")
}

fn text(o: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Runs `factotum match GAME --player A --player B` on clocks (start, play) as match `id`
/// (seed 7) into `out`; asserts a clean exit and returns the record.
fn run_match(game: &str, players: [&str; 2], clocks: (u32, u32), out: &Path, id: &str) -> Value {
    let (start, play) = (clocks.0.to_string(), clocks.1.to_string());
    let o = factotum(&[
        "match",
        game,
        "--player",
        players[0],
        "--player",
        players[1],
        "--startclock",
        &start,
        "--playclock",
        &play,
        "--out",
        out.to_str().unwrap(),
        "--id",
        id,
        "--seed",
        "7",
        // The tests read the errors from the record; the exit code for them is tested below.
        "--allow-player-errors",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    load(&out.join(format!("{id}.json")))
}

/// A fresh temp dir, removed when dropped.
struct Temp(PathBuf);

impl Temp {
    fn new(tag: &str) -> Temp {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "factotum-mgr-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        Temp(d)
    }
    fn agent(&self, file: &str, kind: &str, margin: f64) -> String {
        let p = self.0.join(file);
        std::fs::write(&p, format!("name = \"{file}\"\nkind = \"{kind}\"\nmargin_s = {margin}\n")).expect("agent");
        p.display().to_string()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("record")).expect("record is JSON")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().expect("array").iter().map(|s| s.as_str().expect("string").to_string()).collect()
}

/// Checks the record has ggp-base's fields with their types, and replays its moves on our
/// propnet: every move legal, every state as recorded, the goals as recorded.
fn check_record(rec: &Value, game_file: &str) {
    for key in ["matchId", "randomToken", "gameMetaURL"] {
        assert!(rec[key].is_string(), "{key}: {rec}");
    }
    for key in ["startTime", "startClock", "playClock", "previewClock"] {
        assert!(rec[key].is_i64(), "{key}");
    }
    assert_eq!(rec["isCompleted"], Value::Bool(true));
    assert_eq!(rec["isAborted"], Value::Bool(false));
    let game = Game::load(&root().join(game_file)).expect("game");
    let (mut m, _) = propnet::build(&game, &Budget::default()).expect("propnet");
    let roles = m.roles().len();
    let states = strings(&rec["states"]);
    let moves: Vec<Vec<String>> = rec["moves"].as_array().expect("moves").iter().map(strings).collect();
    let times: Vec<u64> =
        rec["stateTimes"].as_array().expect("times").iter().map(|t| t.as_u64().expect("ms")).collect();
    let errors: Vec<Vec<String>> = rec["errors"].as_array().expect("errors").iter().map(strings).collect();
    assert_eq!(states.len(), moves.len() + 1);
    assert_eq!(times.len(), states.len());
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "state times go back");
    assert_eq!(errors.len(), states.len());
    assert!(errors.iter().all(|e| e.len() == roles));
    assert_eq!(strings(&rec["playerNamesFromHost"]).len(), roles);
    let mut state = m.initial_state();
    let mut legal = Vec::new();
    for (i, joint) in moves.iter().enumerate() {
        assert_eq!(state_string(&m.state_facts(&state)), states[i], "state {i}");
        assert!(!m.is_terminal(&state));
        assert_eq!(joint.len(), roles);
        let mut js = Vec::new();
        for (r, text) in joint.iter().enumerate() {
            m.legal_moves(&state, r, &mut legal);
            let mv = legal.iter().copied().find(|&mv| m.move_text(mv) == *text);
            js.push(mv.unwrap_or_else(|| panic!("step {i}: {text} is not legal for role {r}")));
        }
        let mut next = state.clone();
        m.next_state(&state, &js, &mut next);
        state = next;
    }
    assert_eq!(state_string(&m.state_facts(&state)), states[moves.len()]);
    assert!(m.is_terminal(&state));
    let goals: Vec<u64> =
        rec["goalValues"].as_array().expect("goals").iter().map(|g| g.as_u64().expect("int")).collect();
    let want: Vec<u64> = (0..roles).map(|r| m.goal(&state, r).unwrap_or(0) as u64).collect();
    assert_eq!(goals, want);
}

#[test]
fn match_between_in_process_agents_writes_a_replayable_record() {
    let t = Temp::new("match");
    let a = t.agent("mcts.toml", "mcts", 0.6);
    let b = t.agent("random.toml", "random", 0.6);
    let out = t.0.join("out");
    let rec = run_match("gdl/tictactoe.kif", [&a, &b], (3, 1), &out, "it.match");
    check_record(&rec, "gdl/tictactoe.kif");
    assert_eq!(rec["matchId"], "it.match");
    assert_eq!((rec["startClock"].as_i64(), rec["playClock"].as_i64()), (Some(3), Some(1)));
    // Players as they name themselves (the INFO reply), their files in our own section.
    assert_eq!(strings(&rec["playerNamesFromHost"]), vec!["mcts.toml", "random.toml"]);
    assert_eq!(strings(&rec["factotum"]["players"]), vec![a.clone(), b.clone()]);
    // In-process agents on 1 s clocks answer in time: no errors.
    assert!(rec["errors"].as_array().unwrap().iter().all(|e| strings(e).iter().all(String::is_empty)), "{rec}");
    // MCTS does not lose tic-tac-toe to random.
    assert!(rec["goalValues"][0].as_u64().unwrap() >= 50, "{rec}");
    // What the agents searched with, and each move's iterations (the random agent none).
    assert_eq!(strings(&rec["factotum"]["playouts"]), ["random", "none"]);
    let iterations = rec["factotum"]["iterations"].as_array().expect("iterations per move");
    assert_eq!(iterations.len(), rec["moves"].as_array().unwrap().len());
    let searched: Vec<u64> = iterations.iter().map(|m| m[0].as_u64().unwrap()).collect();
    assert!(searched.iter().any(|&n| n > 100), "{searched:?}");
    assert!(iterations.iter().all(|m| m[1].as_u64().unwrap() <= 1), "{iterations:?}");
    // No temporary files left beside the record.
    let names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, vec!["it.match.json"]);
}

#[test]
fn match_against_factotum_serve_over_http() {
    let agent = AgentConfig { kind: Kind::Mcts, margin_s: 0.6, ..AgentConfig::default() };
    let srv =
        spawn("127.0.0.1:0", ServerConfig { agent, max_matches: 2, max_body: 1 << 20, ..ServerConfig::default() })
            .expect("bind");
    let t = Temp::new("serve");
    let b = t.agent("random.toml", "random", 0.6);
    let url = format!("http://{}", srv.addr);
    let out = t.0.join("out");
    for (game, players) in
        [("gdl/tictactoe.kif", [url.as_str(), b.as_str()]), ("gdl/three_to_fifteen.kif", [b.as_str(), url.as_str()])]
    {
        let rec = run_match(game, players, (3, 1), &out, "it.serve");
        check_record(&rec, game);
        // The server named itself in its INFO reply (its agent's name); the URL is kept.
        let sources = strings(&rec["factotum"]["players"]);
        let remote = sources.iter().position(|p| *p == url).expect("the URL is recorded");
        assert_eq!(strings(&rec["playerNamesFromHost"])[remote], "factotum", "{rec}");
        // Our server answers every request in time with a legal move.
        assert!(rec["errors"].as_array().unwrap().iter().all(|e| strings(e).iter().all(String::is_empty)), "{rec}");
        // The remote player says nothing of its playouts or iterations; the in-process one does.
        assert_eq!(rec["factotum"]["playouts"][remote], "", "{}", rec["factotum"]);
        assert_eq!(rec["factotum"]["playouts"][1 - remote], "none", "{}", rec["factotum"]);
        assert!(rec["factotum"]["iterations"].as_array().unwrap().iter().all(|m| m[remote] == 0));
    }
}

/// Reads one HTTP request (headers and Content-Length body); returns the body.
fn read_request(s: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..i]).to_ascii_lowercase();
            let n = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0)))
                .unwrap_or(0);
            if buf.len() >= i + 4 + n {
                return String::from_utf8_lossy(&buf[i + 4..i + 4 + n]).into_owned();
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&buf).into_owned(),
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
        }
    }
}

fn reply(s: &mut TcpStream, body: &str) {
    let _ = write!(s, "HTTP/1.0 200 OK\r\nContent-type: text/acl\r\nContent-length: {}\r\n\r\n{body}", body.len());
}

/// A GGP player that misbehaves on its first plays: too slow, an illegal move, garbage, a
/// dropped connection, an HTTP error, a reply that is not HTTP; then it sends `noop`.
fn stub_player() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().unwrap();
    let plays = Arc::new(AtomicUsize::new(0));
    let counter = plays.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut s) = conn else { continue };
            let counter = counter.clone();
            std::thread::spawn(move || {
                let msg = read_request(&mut s).to_ascii_uppercase();
                if !msg.contains("PLAY") {
                    return reply(&mut s, if msg.contains("START") { "ready" } else { "done" });
                }
                match counter.fetch_add(1, Ordering::SeqCst) {
                    0 => {
                        std::thread::sleep(Duration::from_millis(3500));
                        reply(&mut s, "noop")
                    }
                    1 => reply(&mut s, "( mark 9 9 )"),
                    2 => reply(&mut s, "((( garbage"),
                    3 => drop(s),
                    4 => {
                        let _ = s.write_all(b"HTTP/1.0 500 Internal Server Error\r\nContent-length: 0\r\n\r\n");
                    }
                    5 => {
                        let _ = s.write_all(b"\x00\x01 not http at all");
                    }
                    _ => reply(&mut s, "noop"),
                }
            });
        }
    });
    (addr, plays)
}

#[test]
fn misbehaving_player_gets_errors_recorded_and_the_match_completes() {
    let (addr, plays) = stub_player();
    let t = Temp::new("stub");
    let a = t.agent("first.toml", "first", 0.5);
    let out = t.0.join("out");
    let url = format!("http://{addr}");
    let t0 = Instant::now();
    // The stub plays o; x (first legal) needs 5 joint moves to win at the earliest.
    let rec = run_match("gdl/tictactoe.kif", [&a, &url], (2, 1), &out, "it.stub");
    assert!(t0.elapsed() < Duration::from_secs(30));
    check_record(&rec, "gdl/tictactoe.kif");
    let errors: Vec<Vec<String>> = rec["errors"].as_array().unwrap().iter().map(strings).collect();
    assert!(errors.len() >= 7, "{errors:?}");
    assert_eq!(errors[0], vec!["", ""], "start");
    let o_errs: Vec<&str> = errors[1..7].iter().map(|e| e[1].as_str()).collect();
    assert_eq!(o_errs[0], "TO", "{o_errs:?}");
    assert_eq!(o_errs[1], "IL ( mark 9 9 )", "{o_errs:?}");
    assert!(o_errs[2].starts_with("IL ((( garbage"), "{o_errs:?}");
    assert_eq!(&o_errs[3..6], ["CE", "CE", "CE"], "{o_errs:?}");
    assert!(errors.iter().all(|e| e[0].is_empty()), "x had errors: {errors:?}");
    assert!(plays.load(Ordering::SeqCst) >= 6);
    // A player whose INFO reply names nobody keeps its label.
    assert_eq!(strings(&rec["playerNamesFromHost"])[1], format!("127.0.0.1_{}", addr.port()));
    // Nobody listening: every request is a connection error.
    let refused = |dir: &Path| run_match("gdl/tictactoe.kif", [&a, "http://127.0.0.1:9"], (1, 1), dir, "it.refused");
    let rec = refused(&out);
    check_record(&rec, "gdl/tictactoe.kif");
    let errors: Vec<Vec<String>> = rec["errors"].as_array().unwrap().iter().map(strings).collect();
    assert!(errors.iter().all(|e| e[1] == "CE"), "refused connections are CE: {errors:?}");
    // Replacement moves are seeded: the same match id and seed replay the same moves.
    let out2 = t.0.join("out2");
    assert_eq!(refused(&out2)["moves"], rec["moves"]);
}

fn records(dir: &Path) -> Vec<(String, String, std::time::SystemTime)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap(), mtime)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn tournament_resumes_without_replaying_finished_matches() {
    let t = Temp::new("tour");
    let a = t.agent("rand.toml", "random", 0.5);
    let b = t.agent("first.toml", "first", 0.5);
    let out = t.0.join("out");
    let cfg = t.0.join("t.toml");
    std::fs::write(
        &cfg,
        format!(
            "name = \"it\"\ngames = [\"gdl/tictactoe.kif\", \"gdl/three_to_fifteen.kif\"]\nplayers = [{a:?}, {b:?}]\n\
             rounds = 2\nstartclock = 2\nplayclock = 1\nparallel = 2\nout = {:?}\nanchor = \"rand\"\nbootstrap = 50\n",
            out.display()
        ),
    )
    .unwrap();
    let cfg = cfg.to_str().unwrap();
    // 2 games × 1 pair × 2 role assignments × 2 rounds = 8 matches; play 3 now.
    let o = factotum(&["tournament", cfg, "--max-matches", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("this run: 3 played, 0 skipped"), "{}", text(&o));
    let first = records(&out);
    assert_eq!(first.len(), 3);
    std::thread::sleep(Duration::from_millis(20));
    let o = factotum(&["tournament", cfg]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(stdout.contains("this run: 5 played, 3 skipped"), "{}", text(&o));
    assert!(stdout.contains("8 of 8 scheduled matches finished"), "{stdout}");
    let second = records(&out);
    assert_eq!(second.len(), 8);
    for r in &first {
        assert!(second.contains(r), "{} was replayed or changed", r.0);
    }
    for (name, body, _) in &second {
        let rec: Value = serde_json::from_str(body).unwrap();
        let game = if name.contains("tictactoe") { "gdl/tictactoe.kif" } else { "gdl/three_to_fifteen.kif" };
        check_record(&rec, game);
        assert_eq!(rec["tournamentNameFromHost"], "it");
    }
    // An interrupted match leaves an unfinished record: only it is replayed.
    let (victim, body, _) = &second[5];
    let mut rec: Value = serde_json::from_str(body).unwrap();
    rec["isCompleted"] = Value::Bool(false);
    std::fs::write(out.join(victim), serde_json::to_string(&rec).unwrap()).unwrap();
    let before = records(&out);
    let o = factotum(&["tournament", cfg]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("this run: 1 played, 7 skipped"), "{}", text(&o));
    let after = records(&out);
    for (i, r) in before.iter().enumerate() {
        if &r.0 == victim {
            assert_ne!(after[i].1, r.1, "the unfinished match was not replayed");
        } else {
            assert_eq!(&after[i], r, "{} was replayed", r.0);
        }
    }
    // The report: tables and a chart.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for want in ["## Overall", "### tictactoe", "### three_to_fifteen", "| rand |", "| first |", "Elo"] {
        assert!(md.contains(want), "{want} missing from\n{md}");
    }
    let svg = std::fs::read_to_string(out.join("report.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
}

#[test]
fn bad_invocations_fail_cleanly() {
    let t = Temp::new("bad");
    let a = t.agent("first.toml", "first", 0.5);
    let out = t.0.join("out");
    // Wrong number of players for the roles.
    let o = factotum(&["match", "gdl/tictactoe.kif", "--player", &a, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("1 player(s) for 2 role(s)"), "{}", text(&o));
    // A missing agent file, a bad URL, a config with unknown keys.
    let o = factotum(&["match", "gdl/tictactoe.kif", "--player", "nosuch.toml", "--player", &a]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = factotum(&["match", "gdl/tictactoe.kif", "--player", "ftp://x", "--player", &a]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let cfg = t.0.join("bad.toml");
    std::fs::write(&cfg, "games = [\"gdl/tictactoe.kif\"]\nplayers = []\nfrobnicate = 1\n").unwrap();
    let o = factotum(&["tournament", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!text(&o).contains("panicked"));
}

/// A tournament of four tic-tac-toe matches (MCTS against flat Monte Carlo, 1 s a move, one
/// at a time) started in `t`, and stopped by `stop` while its second match is being played.
/// Returns the config's path, the records' folder and the stopped process.
fn tournament_stopped_midway(
    t: &Temp,
    stop: impl FnOnce(&mut std::process::Child),
) -> (PathBuf, PathBuf, std::process::Child) {
    let a = t.agent("mcts.toml", "mcts", 0.5);
    let b = t.agent("flat.toml", "flatmc", 0.5);
    let out = t.0.join("out");
    let cfg = t.0.join("k.toml");
    std::fs::write(
        &cfg,
        format!(
            "name = \"k\"\ngames = [\"gdl/tictactoe.kif\"]\nplayers = [{a:?}, {b:?}]\nrounds = 2\n\
             startclock = 2\nplayclock = 1\nparallel = 1\nout = {:?}\nbootstrap = 20\n",
            out.display()
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_factotum"))
        .args(["tournament", cfg.to_str().unwrap()])
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let t0 = Instant::now();
    loop {
        let done = records(&out).iter().filter(|(_, body, _)| body.contains("\"isCompleted\": true")).count();
        if done >= 1 || t0.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1200));
    stop(&mut child);
    (cfg, out, child)
}

#[test]
fn tournament_killed_midway_leaves_valid_records_and_resumes() {
    let t = Temp::new("kill");
    // SIGKILL, harsher than Ctrl-C.
    let (cfg, out, mut child) = tournament_stopped_midway(&t, |c| c.kill().expect("kill"));
    let _ = child.wait();
    let killed = records(&out);
    assert!(!killed.is_empty());
    for (name, body, _) in &killed {
        let rec: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{name} is corrupt: {e}"));
        assert!(rec["states"].as_array().is_some_and(|s| !s.is_empty()), "{name}");
    }
    let completed: Vec<_> =
        killed.iter().filter(|(_, body, _)| body.contains("\"isCompleted\": true")).cloned().collect();
    assert!(completed.len() < 4, "the kill came after the end");
    let o = factotum(&["tournament", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(stdout.contains(&format!("{} skipped", completed.len())), "{stdout}");
    assert!(stdout.contains("4 of 4 scheduled matches finished"), "{stdout}");
    let after = records(&out);
    for r in &completed {
        assert!(after.contains(r), "{} was replayed", r.0);
    }
    for (_, body, _) in &after {
        check_record(&serde_json::from_str(body).unwrap(), "gdl/tictactoe.kif");
    }
}

/// Ctrl-C in a tournament: the match in progress is aborted and kept as interrupted, no new
/// match starts, and the summary counts only the finished matches as played (the aborted and
/// unstarted ones are left for a later run, which plays them and nothing else).
#[test]
fn tournament_interrupted_counts_only_finished_matches_and_resumes() {
    let t = Temp::new("tint");
    let (cfg, out, child) = tournament_stopped_midway(&t, |c| {
        assert!(Command::new("kill").args(["-INT", &c.id().to_string()]).status().unwrap().success());
    });
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let completed: Vec<_> =
        records(&out).into_iter().filter(|(_, body, _)| body.contains("\"isCompleted\": true")).collect();
    assert!((1..4).contains(&completed.len()), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let want = format!(
        "this run: {} played, 0 skipped (already finished), 0 not played (errors), {} left for a later run",
        completed.len(),
        4 - completed.len()
    );
    assert!(stdout.contains(&want), "{want}\n{}", text(&o));
    if completed.len() < 3 {
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("not started: the tournament was interrupted"), "{}", text(&o));
    }
    let o = factotum(&["tournament", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let want = format!("this run: {} played, {} skipped", 4 - completed.len(), completed.len());
    assert!(String::from_utf8_lossy(&o.stdout).contains(&want), "{want}\n{}", text(&o));
    let after = records(&out);
    for r in &completed {
        assert!(after.contains(r), "{} was replayed", r.0);
    }
}

/// A well-behaved GGP player (`ready`, `noop`, `done`) whose replies are framed by `write`,
/// one connection per message.
fn framed_player(write: fn(&mut TcpStream, &str), start_reply: &'static str) -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut s) = conn else { continue };
            std::thread::spawn(move || {
                let msg = read_request(&mut s).to_ascii_uppercase();
                let body = if msg.contains("START") {
                    start_reply
                } else if msg.contains("PLAY") {
                    "noop"
                } else {
                    "done"
                };
                write(&mut s, body);
            });
        }
    });
    addr
}

/// ggp-base's `HttpWriter` on Linux: `println` ends every line in a bare LF, and the body
/// gets one more LF than its Content-Length says.
fn bare_lf(s: &mut TcpStream, body: &str) {
    let _ = write!(
        s,
        "HTTP/1.0 200 OK\nContent-type: text/acl\nContent-length: {}\nAccess-Control-Allow-Origin: *\n\
         Access-Control-Allow-Methods: POST, GET, OPTIONS\nAccess-Control-Allow-Headers: Content-Type\n\
         Access-Control-Allow-Age: 86400\n\n{body}\n",
        body.len()
    );
}

/// HTTP/1.0 with no Content-Length: the body ends when the player closes the connection.
fn close_delimited(s: &mut TcpStream, body: &str) {
    let _ = write!(s, "HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\n\r\n{body}");
}

/// HTTP/1.1 with the body in two chunks.
fn chunked(s: &mut TcpStream, body: &str) {
    let (a, b) = body.split_at(body.len() / 2);
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\nContent-Type: text/acl\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
        a.len(),
        b.len()
    );
}

/// The stub plays o in tic-tac-toe and always answers `noop`: legal while x is to move,
/// `IL noop` while o is. Any `CE` or `TO` means a reply that came was not read.
fn assert_replies_read(rec: &Value) {
    let errors: Vec<Vec<String>> = rec["errors"].as_array().unwrap().iter().map(strings).collect();
    assert_eq!(errors[0], vec!["", ""], "start: {errors:?}");
    assert!(errors.iter().all(|e| e[1].is_empty() || e[1] == "IL noop"), "{errors:?}");
    assert!(errors[1..].iter().any(|e| e[1].is_empty()), "no legal noop was read: {errors:?}");
}

#[test]
fn replies_with_bare_lf_headers_are_read() {
    let url = format!("http://{}", framed_player(bare_lf, "ready"));
    let t = Temp::new("barelf");
    let a = t.agent("first.toml", "first", 0.5);
    assert_replies_read(&run_match("gdl/tictactoe.kif", [&a, &url], (2, 1), &t.0, "it.barelf"));
}

#[test]
fn replies_without_length_and_chunked_replies_are_read() {
    let t = Temp::new("framing");
    let a = t.agent("first.toml", "first", 0.5);
    let url = format!("http://{}", framed_player(close_delimited, "ready"));
    assert_replies_read(&run_match("gdl/tictactoe.kif", [&a, &url], (2, 1), &t.0, "it.close"));
    let url = format!("http://{}", framed_player(chunked, "ready"));
    assert_replies_read(&run_match("gdl/tictactoe.kif", [&a, &url], (2, 1), &t.0, "it.chunked"));
}

#[test]
fn a_start_reply_other_than_ready_is_recorded() {
    let url = format!("http://{}", framed_player(close_delimited, "busy"));
    let t = Temp::new("busy");
    let a = t.agent("first.toml", "first", 0.5);
    let rec = run_match("gdl/tictactoe.kif", [&a, &url], (2, 1), &t.0, "it.busy");
    let errors: Vec<Vec<String>> = rec["errors"].as_array().unwrap().iter().map(strings).collect();
    assert_eq!(errors[0], vec!["", "IL busy"], "{errors:?}");
}

#[test]
fn a_dead_player_fails_the_match_unless_allowed() {
    let t = Temp::new("dead");
    let a = t.agent("first.toml", "first", 0.5);
    let out = t.0.join("out");
    let args = |id: &'static str| {
        vec![
            "match",
            "gdl/tictactoe.kif",
            "--player",
            a.as_str(),
            "--player",
            "http://127.0.0.1:9",
            "--startclock",
            "1",
        ]
        .into_iter()
        .chain(["--playclock", "1", "--out", out.to_str().unwrap(), "--id", id])
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let run =
        |v: Vec<String>| Command::new(env!("CARGO_BIN_EXE_factotum")).args(v).current_dir(root()).output().unwrap();
    let o = run(args("it.dead"));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("127.0.0.1:9 (o)") && err.contains("failed to connect"), "{err}");
    // The record is still written whole.
    check_record(&load(&out.join("it.dead.json")), "gdl/tictactoe.kif");
    let mut allowed = args("it.dead2");
    allowed.push("--allow-player-errors".into());
    assert_eq!(run(allowed).status.code(), Some(0));
    // A tournament of one player cannot pair anyone on a two-role game: an error, not 0 matches.
    let cfg = t.0.join("one.toml");
    std::fs::write(
        &cfg,
        format!("games = [\"gdl/tictactoe.kif\"]\nplayers = [\"{a}\"]\nout = \"{}\"\n", out.display()),
    )
    .unwrap();
    let o = factotum(&["tournament", cfg.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("at least two players"), "{}", text(&o));
}

/// A well-behaved GGP player that keeps every message it gets.
fn recording_player() -> (std::net::SocketAddr, Arc<std::sync::Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut s) = conn else { continue };
            let msg = read_request(&mut s).to_ascii_uppercase();
            let body = match msg.split_whitespace().nth(1).unwrap_or("") {
                "START" => "ready",
                "PLAY" => "noop",
                "ABORT" => "aborted",
                _ => "done",
            };
            log.lock().unwrap().push(msg);
            reply(&mut s, body);
        }
    });
    (addr, seen)
}

#[test]
fn an_interrupted_match_aborts_its_players_and_keeps_its_record() {
    let t = Temp::new("sigint");
    let a = t.agent("slow.toml", "mcts", 0.5);
    let (addr, seen) = recording_player();
    let out = t.0.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_factotum"))
        .args(["match", "gdl/tictactoe.kif", "--player", &a, "--player", &format!("http://{addr}")])
        .args(["--startclock", "1", "--playclock", "3", "--id", "it.int", "--out", out.to_str().unwrap()])
        .current_dir(root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Mid-way through the first play (x searches 2.5 s of it).
    std::thread::sleep(Duration::from_millis(2000));
    let t0 = Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(15), "still running after SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let got = seen.lock().unwrap().clone();
    assert!(got.first().is_some_and(|m| m.contains("INFO")), "{got:?}");
    assert!(got.get(1).is_some_and(|m| m.contains("START")), "{got:?}");
    assert!(got.last().is_some_and(|m| m.contains("ABORT IT.INT")), "the remote player is told: {got:?}");
    let rec = load(&out.join("it.int.json"));
    assert_eq!(rec["isAborted"], true);
    assert_eq!(rec["factotum"]["interrupted"], true);
    // The play under way when the signal came is not recorded.
    assert_eq!(rec["moves"].as_array().unwrap().len(), 0, "{rec}");
}

/// The trap log of real matches: `factotum match` with an in-process agent writes
/// `ID.traps.jsonl` beside the record and counts it in the record; `factotum serve` with a
/// trap log (what `--trap-log FILE` sets) writes the same events over HTTP; `factotum traps
/// --log` sums a log up.
#[test]
fn trap_logs_are_written_in_matches_and_summarised() {
    use factotum::agent::trap_log::{TrapEvent, TrapLog};
    let t = Temp::new("traps");
    let white = t.agent("mcts.toml", "mcts", 0.6);
    let black = t.agent("random.toml", "random", 0.6);
    let out = t.0.join("out");
    let game = "gdl/planted_trap.kif";
    let rec = run_match(game, [white.as_str(), black.as_str()], (3, 1), &out, "it.traps");
    check_record(&rec, game);
    assert_ne!(rec["moves"][0][0], "grab", "{rec}");
    let log = out.join("it.traps.traps.jsonl");
    let logged = std::fs::read_to_string(&log).expect("the trap log beside the record");
    let events: Vec<TrapEvent> = logged.lines().map(|l| serde_json::from_str(l).expect("an event")).collect();
    assert_eq!(events.len(), 1, "{logged}");
    let e = &events[0];
    assert_eq!((e.match_id.as_str(), e.game.as_str(), e.role.as_str()), ("it.traps", game, "white"));
    // The finder is named by its label in the match (the agent file's stem), as the
    // tournament reports name players: a match's log holds every in-process player's traps.
    assert_eq!(e.player, "mcts");
    assert_eq!((e.trap_move.as_str(), e.depth, e.avoided), ("grab", 3, true));
    assert_eq!(rec["factotum"]["traps"], 1, "{}", rec["factotum"]);
    // The same match played again under its id (as a resumed tournament does) starts a
    // fresh log.
    let rec = run_match(game, [white.as_str(), black.as_str()], (3, 1), &out, "it.traps");
    assert_eq!(rec["factotum"]["traps"], 1, "{}", rec["factotum"]);
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);

    let o = factotum(&["traps", "--log", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        summary.contains("| gdl/planted_trap.kif | 1 | 1 | 1 | 3-3 | solver 1 | solver 1 | mcts 1 | mcts 1 |"),
        "{summary}"
    );
    let o = factotum(&["traps", "--log", log.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["games"][game]["avoided"], 1, "{v}");

    // Over HTTP.
    let served = t.0.join("served.jsonl");
    let agent = AgentConfig { kind: Kind::Mcts, margin_s: 0.6, name: "served".into(), ..AgentConfig::default() };
    let cfg = ServerConfig { agent, trap_log: Some(TrapLog::open(&served).unwrap()), ..ServerConfig::default() };
    let srv = spawn("127.0.0.1:0", cfg).expect("bind");
    let url = format!("http://{}", srv.addr);
    let rec = run_match(game, [url.as_str(), black.as_str()], (3, 1), &out, "it.traps.http");
    assert_ne!(rec["moves"][0][0], "grab", "{rec}");
    let logged = std::fs::read_to_string(&served).expect("the server's trap log");
    let e: TrapEvent = serde_json::from_str(logged.lines().next().expect("an event")).expect("an event");
    assert_eq!((e.match_id.as_str(), e.trap_move.as_str(), e.step), ("it.traps.http", "grab", 0));
    assert_eq!(e.player, "served", "the serving agent's name, as its INFO reply gives it");
    assert!(e.game.starts_with("rules:"), "{}", e.game);
    // The web view lists the detection on the match's page, and the match as over.
    let live = srv.server.web().live.get("it.traps.http").expect("the match is on the web view");
    assert_eq!(live.traps.len(), 1, "{live:?}");
    assert_eq!((live.traps[0].trap_move.as_str(), live.traps[0].avoided), ("grab", true));
    let t0 = Instant::now();
    while !srv.server.web().live.get("it.traps.http").is_some_and(|m| m.over) {
        assert!(t0.elapsed() < Duration::from_secs(10), "the match is not shown over");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `factotum trapsuite`: the trap position of a recorded match of the planted-trap game is
/// found by the trap finder; plain UCT (no solver) falls into the trap at 800 iterations,
/// the default agent (MCTS-Solver) avoids it.
#[test]
fn the_trap_suite_takes_positions_from_records_and_scores_each_agent() {
    let t = Temp::new("suite");
    let random = t.agent("random.toml", "random", 0.6);
    let out = t.0.join("records");
    run_match("gdl/planted_trap.kif", [random.as_str(), random.as_str()], (3, 1), &out, "it.suite");
    let uct = t.0.join("uct.toml");
    std::fs::write(&uct, "name = \"uct\"\nsolver = false\n").unwrap();
    let mcts = t.0.join("mcts.toml");
    std::fs::write(&mcts, "name = \"mcts\"\n").unwrap();
    let o = factotum(&[
        "trapsuite",
        out.to_str().unwrap(),
        "--agent",
        uct.to_str().unwrap(),
        "--agent",
        mcts.to_str().unwrap(),
        "--min-ply",
        "0",
        "--iterations",
        "800",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("| planted_trap | uct | 1 | 0% (0/1) |"), "{table}");
    assert!(table.contains("| planted_trap | mcts | 1 | 100% (1/1) |"), "{table}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 trap positions from 1 records"), "{}", text(&o));
}

/// `factotum traps --log DIR` sums every `*.traps.jsonl` of a match folder, and counts the
/// traps found and avoided by how they were found; a hint's fields survive the round trip.
#[test]
fn trap_logs_of_a_folder_are_summarised_by_how_found() {
    use factotum::agent::trap_log::{TrapEvent, TrapLog};
    use factotum::search::Hint;
    let t = Temp::new("trapdir");
    let event = |id: &str, how: &str, avoided: bool| TrapEvent {
        match_id: id.into(),
        game: "g.kif".into(),
        step: 3,
        role: "red".into(),
        // A log written before the finder was kept has none.
        player: if id == "m1" { "a".into() } else { String::new() },
        state: vec!["( control red )".into()],
        state_hash: "0".into(),
        trap_move: "( drop 1 )".into(),
        refutation: vec![vec!["( drop 1 )".into(), "noop".into()], vec!["noop".into(), "( drop 4 )".into()]],
        depth: 1,
        refutation_complete: true,
        found_by: how.into(),
        hint: (how == "similarity").then(|| Hint {
            measure: "tactics d=2".into(),
            similarity: 0.75,
            source: vec!["( control red )".into(), "( cell 5 1 yellow )".into()],
            source_move: "( drop 2 )".into(),
            killer: Some("( drop 4 )".into()),
            matched_killer: Some("( drop 4 )".into()),
        }),
        value: 0.0,
        chosen: "( drop 4 )".into(),
        avoided,
        time_ms: 1,
    };
    let a = TrapLog::open(&t.0.join("m1.traps.jsonl")).unwrap();
    a.write(&event("m1", "solver", true));
    a.write(&event("m1", "similarity", true));
    let b = TrapLog::open(&t.0.join("m2.traps.jsonl")).unwrap();
    b.write(&event("m2", "similarity", false));
    std::fs::write(t.0.join("m2.json"), "{}").unwrap();
    let o = factotum(&["traps", "--log", t.0.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table
            .contains("| g.kif | 2 | 3 | 2 | 1-1 | similarity 2, solver 1 | similarity 1, solver 1 | ? 1, a 2 | a 2 |"),
        "{table}"
    );
    let o = factotum(&["traps", "--log", t.0.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["games"]["g.kif"]["avoided_by"]["similarity"], 1, "{v}");
    let line = std::fs::read_to_string(t.0.join("m1.traps.jsonl")).unwrap();
    let back: TrapEvent = serde_json::from_str(line.lines().nth(1).unwrap()).unwrap();
    assert_eq!(back, event("m1", "similarity", true));
    let plain: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert!(plain.get("hint").is_none(), "no hint field on a solver's detection: {plain}");
    assert_eq!(plain["player"], "a", "{plain}");
    let old = std::fs::read_to_string(t.0.join("m2.traps.jsonl")).unwrap();
    assert!(!old.contains("\"player\""), "no player field where none is known: {old}");
}

/// The moves, states and goals of every record in `dir`, by file name.
fn plays(dir: &Path) -> Vec<(String, Value)> {
    records(dir)
        .into_iter()
        .map(|(name, body, _)| {
            let r: Value = serde_json::from_str(&body).unwrap();
            (name, serde_json::json!([r["moves"], r["states"], r["goalValues"], r["playerNamesFromHost"]]))
        })
        .collect()
}

/// A tournament split into three shards (`--shard K/3`, each into a folder of its own, two
/// of them through `tournaments/cluster/shard.sh`) plays each match once, the same matches as one unsharded run (deterministic players), and
/// `factotum report` over the three folders writes the unsharded run's report, byte for byte.
#[test]
fn a_sharded_tournament_is_one_tournament() {
    let t = Temp::new("shard");
    let a = t.agent("rand.toml", "random", 0.5);
    let b = t.agent("first.toml", "first", 0.5);
    let whole = t.0.join("whole");
    // No `name`: the match ids take the config's stem, which the copies must keep.
    let cfg = t.0.join("sh.toml");
    std::fs::write(
        &cfg,
        format!(
            "games = [\"gdl/tictactoe.kif\", \"gdl/three_to_fifteen.kif\"]\nplayers = [{a:?}, {b:?}]\n\
             rounds = 2\nstartclock = 2\nplayclock = 1\nparallel = 2\nout = {:?}\nanchor = \"rand\"\nbootstrap = 50\n",
            whole.display()
        ),
    )
    .unwrap();
    let cfg = cfg.to_str().unwrap();
    let o = factotum(&["tournament", cfg]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let all = plays(&whole);
    assert_eq!(all.len(), 8);
    let mut merged = Vec::new();
    let mut dirs = Vec::new();
    for k in 1..=3 {
        let dir = t.0.join(format!("s{k}"));
        // Shard 1 directly; 2 and 3 through the cluster script, as a Slurm array task and as
        // a Kubernetes Indexed Job's pod would run them (0-based indices).
        let o = match k {
            1 => factotum(&["tournament", cfg, "--shard", "1/3", "--out", dir.to_str().unwrap()]),
            _ => {
                let mut c = Command::new("sh");
                c.args(["tournaments/cluster/shard.sh", cfg, dir.to_str().unwrap()])
                    .current_dir(root())
                    .env("FACTOTUM", env!("CARGO_BIN_EXE_factotum"));
                if k == 2 {
                    c.env("SLURM_ARRAY_TASK_ID", "1").env("SLURM_ARRAY_TASK_COUNT", "3");
                } else {
                    c.env("JOB_COMPLETION_INDEX", "2").env("SHARDS", "3");
                }
                c.output().expect("sh")
            }
        };
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("(shard {k} of 3)")), "{}", text(&o));
        let mine = plays(&dir);
        assert_eq!(mine.len(), if k < 3 { 3 } else { 2 }, "shard {k}");
        merged.extend(mine);
        dirs.push(dir.to_str().unwrap().to_string());
    }
    merged.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(merged, all, "the shards play every match once, as the whole run does");
    let out = t.0.join("merged");
    let mut args = vec!["report"];
    args.extend(dirs.iter().map(String::as_str));
    args.extend(["--out", out.to_str().unwrap()]);
    let o = factotum(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let want = std::fs::read_to_string(whole.join("report.md")).unwrap();
    assert!(want.contains("8 of 8 scheduled matches finished"), "{want}");
    assert_eq!(std::fs::read_to_string(out.join("report.md")).unwrap(), want);
    // A shard resumed plays nothing again; bad shards and mixed folders are errors.
    let o = factotum(&["tournament", cfg, "--shard", "2/3", "--out", &dirs[1]]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("this run: 0 played, 3 skipped"), "{}", text(&o));
    for bad in ["0/3", "4/3", "x", "1/0"] {
        let o = factotum(&["tournament", cfg, "--shard", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("--shard takes K/N"), "{}", text(&o));
    }
    std::fs::write(Path::new(&dirs[2]).join("tournament.toml"), "name = \"other\"\n").unwrap();
    let o = factotum(&["report", &dirs[0], &dirs[2]]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not one tournament's"), "{}", text(&o));
}

/// A record as ggp-base's GameServer writes it for a game from no repository, by hand: no
/// `gameMetaURL`, no section of ours, a state's facts in hash order, and an extra field of
/// Tiltyard's. It replays cleanly on the game given; changed, it does not, with the step.
#[test]
fn a_ggp_base_record_replays() {
    let t = Temp::new("replay");
    let rec = serde_json::json!({
        "matchId": "Base.rps.1",
        "randomToken": "abc",
        "startTime": 1_700_000_000_000u64,
        "isCompleted": true,
        "isAborted": false,
        "states": ["( ( step 0 ) )", "( ( step 1 ) ( played right paper ) ( played left rock ) )"],
        "moves": [["( throw rock )", "( throw paper )"]],
        "stateTimes": [1_700_000_000_000u64, 1_700_000_001_000u64],
        "errors": [["", ""], ["", ""]],
        "goalValues": [0, 100],
        "previewClock": -1,
        "startClock": 10,
        "playClock": 5,
        "playerNamesFromHost": ["Alice", "Bob"],
        "scrambled": false,
        "matchHostPK": "ignored",
    });
    let write = |name: &str, v: &Value| -> String {
        let p = t.0.join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p.to_str().unwrap().to_string()
    };
    let good = write("good.json", &rec);
    let o = factotum(&["replay", &good, "--game", "gdl/rock_paper_scissors.kif"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("step 1: left (throw rock) | right (throw paper) | state agrees"), "{out}");
    assert!(out.contains("the record replays cleanly"), "{out}");
    // Without the game: the record names none.
    let o = factotum(&["replay", &good]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("pass --game"), "{}", text(&o));
    // Each change is caught: an illegal move, a wrong state, wrong goals.
    let mut illegal = rec.clone();
    illegal["moves"][0][1] = "( throw lizard )".into();
    let mut state = rec.clone();
    state["states"][1] = "( ( step 1 ) ( played right rock ) ( played left rock ) )".into();
    let mut goals = rec.clone();
    goals["goalValues"] = serde_json::json!([50, 50]);
    for (name, v, want) in [
        ("illegal.json", illegal, "right (throw lizard) ILLEGAL"),
        ("state.json", state, "state DIFFERS"),
        ("goals.json", goals, "with goals [50, 50]"),
    ] {
        let p = write(name, &v);
        let o = factotum(&["replay", &p, "--game", "gdl/rock_paper_scissors.kif"]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(want) && out.contains("does NOT agree"), "{name}: {out}");
    }
    // JSON for tools; an unreadable record is an error.
    let o = factotum(&["replay", &good, "--game", "gdl/rock_paper_scissors.kif", "--json"]);
    let v: Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).expect("json");
    assert_eq!((v["agrees"].clone(), v["steps"][0]["state_agrees"].clone()), (Value::Bool(true), Value::Bool(true)));
    let junk = t.0.join("junk.json");
    std::fs::write(&junk, "{\"moves\": 3}").unwrap();
    let o = factotum(&["replay", junk.to_str().unwrap(), "--game", "gdl/rock_paper_scissors.kif"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("not a match record"), "{}", text(&o));
}

/// Every record a tournament writes replays cleanly, naming its own game.
#[test]
fn our_records_replay_cleanly() {
    let t = Temp::new("ours");
    let a = t.agent("rand.toml", "random", 0.5);
    let out = t.0.join("out");
    let rec = run_match("gdl/tictactoe.kif", [&a, &a], (2, 1), &out, "ours.1");
    assert_eq!(rec["isCompleted"], Value::Bool(true));
    let o = factotum(&["replay", out.join("ours.1.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("the record replays cleanly"), "{}", text(&o));
}
