//! The web view's routes through [`Web::route`] (the HTTP server and a real browser are
//! exercised in `tests/it/web.rs`).

use super::*;
use crate::manager::record::MatchRecord;

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("factotum-web-unit-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn record(id: &str) -> MatchRecord {
    let text = format!(
        r#"{{"matchId":"{id}","randomToken":"t","startTime":1,"isCompleted":true,
        "states":["( ( cell 1 1 b ) ( cell 1 2 b ) ( control x ) )","( ( cell 1 1 x ) ( cell 1 2 b ) ( control o ) )"],
        "moves":[["( mark 1 1 )","noop"]],"stateTimes":[1,2],"goalValues":[100,0],
        "startClock":10,"playClock":5,"playerNamesFromHost":["Alice","Bob"]}}"#
    );
    serde_json::from_str(&text).unwrap()
}

#[test]
fn pages_and_files_of_a_records_folder() {
    let dir = temp("records");
    std::fs::create_dir_all(dir.join("t")).unwrap();
    record("t.one").save(&dir.join("t")).unwrap();
    std::fs::write(dir.join("t/report.md"), "# Tournament `t`\n\n| player | mean |\n|---|---|\n| a | 50 |\n").unwrap();
    std::fs::write(dir.join("t/report.svg"), "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>").unwrap();
    std::fs::write(dir.join("t/notes.bin"), "x").unwrap();
    let web = Web::new(WebConfig { records: Some(dir.clone()), ..WebConfig::default() });
    let index = web.route("GET", "/", "");
    assert_eq!((index.status, index.content_type), (200, HTML));
    assert!(
        index.body.contains("<a href=\"/records/t\">t</a>") && index.body.contains("tournament report"),
        "{}",
        index.body
    );
    assert!(!index.body.contains("/play"), "no kiosk without games");
    let folder = web.route("GET", "/records/t", "");
    assert!(folder.body.contains("src=\"/raw/t/report.svg\""), "{}", folder.body);
    assert!(folder.body.contains("<h2>Tournament <code>t</code></h2>"), "{}", folder.body);
    assert!(folder.body.contains("<a href=\"/record/t/t.one.json\">t.one</a>"), "{}", folder.body);
    assert!(folder.body.contains("Alice, Bob") && folder.body.contains("100 – 0"), "{}", folder.body);
    let replay = web.route("GET", "/record/t/t.one.json", "");
    assert_eq!(replay.status, 200);
    assert!(replay.body.contains("data-page=\"replay\" data-last=\"1\""), "{}", replay.body);
    assert!(replay.body.contains("Joint move 1: <code class=\"joint\">( mark 1 1 ) noop</code>"), "{}", replay.body);
    assert_eq!(replay.body.matches("<table class=\"board\"").count(), 2, "a board per state");
    let svg = web.route("GET", "/raw/t/report.svg", "");
    assert_eq!((svg.status, svg.content_type), (200, "image/svg+xml"));
    assert_eq!(web.route("GET", "/raw/t/t.one.json", "").content_type, JSON);
    // Only known kinds of files, and nothing out of the folder.
    for bad in
        ["/raw/t/notes.bin", "/raw/../Cargo.toml", "/raw/t/%2e%2e/%2e%2e/Cargo.toml", "/record/t/none.json", "/nothing"]
    {
        assert_eq!(web.route("GET", bad, "").status, 404, "{bad}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn live_matches_are_listed_and_served_as_fragments() {
    let web = Web::new(WebConfig::default());
    assert!(web.route("GET", "/", "").body.contains("No match is being played."));
    web.live.begin("m.1", "rules:ab", "x", &["x".into(), "o".into()], false);
    web.live.update("m.1", |m| m.state = vec!["( cell 1 1 x )".into()]);
    let list: serde_json::Value = serde_json::from_str(&web.route("GET", "/api/matches", "").body).unwrap();
    assert!(list["html"].as_str().unwrap().contains("<a href=\"/match/m.1\">m.1</a>"), "{list}");
    let page = web.route("GET", "/match/m.1", "");
    assert!(page.body.contains("data-page=\"match\" data-id=\"m.1\""), "{}", page.body);
    let api: serde_json::Value = serde_json::from_str(&web.route("GET", "/api/match/m.1", "").body).unwrap();
    assert_eq!(api["version"], 1);
    let board = api["parts"]["board"].as_str().unwrap();
    assert!(board.contains("data-relation=\"cell\"") && board.contains(">x</td>"), "{api}");
    assert_eq!(web.route("GET", "/match/nothing", "").status, 404);
    // No kiosk: moves and matches for people are refused.
    assert_eq!(web.route("POST", "/api/match/m.1/move", "( mark 1 1 )").status, 404);
    assert_eq!(web.route("POST", "/api/kiosk", "{}").status, 404);
    assert_eq!(web.route("GET", "/play", "").status, 404);
    assert_eq!(web.route("POST", "/api/other", "").status, 405);
}

#[test]
fn the_kiosk_refuses_what_it_cannot_play() {
    let gdl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl");
    let out = temp("kiosk");
    let web = Web::new(WebConfig {
        agent: Some(crate::agent::AgentConfig::default()),
        games: Some(gdl),
        kiosk_out: Some(out.clone()),
        ..WebConfig::default()
    });
    let play = web.route("GET", "/play", "");
    assert!(play.body.contains("<option value=\"tictactoe.kif\">tictactoe.kif</option>"), "{}", play.body);
    assert_eq!(web.route("GET", "/api/roles?game=tictactoe.kif", "").body, r#"["x","o"]"#);
    assert_eq!(web.route("GET", "/api/roles?game=..%2FCargo.toml", "").status, 404);
    let start = |body: &str| web.route("POST", "/api/kiosk", body);
    for (body, why) in [
        (r#"{"game":"nothing.kif","role":"x","startclock":5,"playclock":5}"#, "is not a game"),
        (r#"{"game":"tictactoe.kif","role":"z","startclock":5,"playclock":5}"#, "is not a role"),
        (r#"{"game":"tictactoe.kif","role":"x","startclock":0,"playclock":5}"#, "clocks must be"),
        (r#"{"game":"tictactoe.kif""#, "not a match request"),
    ] {
        let r = start(body);
        assert_eq!(r.status, 400, "{body}");
        assert!(r.body.contains(why), "{}", r.body);
    }
    assert_eq!(web.route("POST", "/api/match/nothing/move", "( mark 1 1 )").status, 409);
    assert!(std::fs::read_dir(&out).unwrap().next().is_none(), "no match was started");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn percent_escapes_are_decoded() {
    assert_eq!(percent_decode("a%20b%2Fc"), "a b/c");
    assert_eq!(percent_decode("%zz%4"), "%zz%4");
    assert_eq!(percent_decode("%C3%A9"), "é");
}
