use super::client::Request;
use super::rating::{bradley_terry, elo, elo_of_score, mean_ci, Pairing, Z95};
use super::record::{self, MatchRecord};
use std::sync::Arc;

fn games(a: usize, b: usize, wins: usize, draws: usize, losses: usize) -> Vec<Pairing> {
    let mut v = vec![Pairing { a, b, score: 1.0 }; wins];
    v.extend(std::iter::repeat(Pairing { a, b, score: 0.5 }).take(draws));
    v.extend(std::iter::repeat(Pairing { a, b, score: 0.0 }).take(losses));
    v
}

#[test]
fn mean_and_interval() {
    let (m, h) = mean_ci(&[0.0, 100.0]);
    assert_eq!(m, 50.0);
    // s = 70.71, n = 2: 1.96 * 70.71 / 1.414 = 98.0
    assert!((h - Z95 * 50.0).abs() < 1e-9, "{h}");
    let (m, h) = mean_ci(&[40.0; 10]);
    assert_eq!((m, h), (40.0, 0.0));
    assert!(mean_ci(&[1.0]).1.is_nan());
    assert!(mean_ci(&[]).0.is_nan());
}

#[test]
fn three_to_one_is_191_elo() {
    assert!((elo_of_score(0.75) - 190.85).abs() < 0.01);
    // 750 wins in 1000: the virtual draw barely moves it.
    let g = games(0, 1, 750, 0, 250);
    let e = elo(2, &g, Some(1), 0, 1);
    assert!((e[0].0 - 190.85).abs() < 0.5, "{:?}", e);
    assert_eq!(e[1].0, 0.0);
    // Draws count half: 500 wins, 500 draws = 75%.
    let g = games(0, 1, 500, 500, 0);
    let e = elo(2, &g, Some(1), 0, 1);
    assert!((e[0].0 - 190.85).abs() < 0.5, "{:?}", e);
    // Mean anchor: ±95.
    let e = elo(2, &games(0, 1, 750, 0, 250), None, 0, 1);
    assert!((e[0].0 + e[1].0).abs() < 1e-6 && (e[0].0 - 95.4).abs() < 0.5, "{e:?}");
}

#[test]
fn bootstrap_error_bars_shrink_with_games() {
    let small = elo(2, &games(0, 1, 30, 0, 10), Some(1), 300, 7);
    let large = elo(2, &games(0, 1, 300, 0, 100), Some(1), 300, 7);
    assert!(small[0].1 > large[0].1 * 2.0, "{small:?} {large:?}");
    // Roughly the delta method: sd(p) = sqrt(.75*.25/400) = 0.0217, dElo/dp = 400/ln10/(p(1-p)) = 926.
    assert!((large[0].1 - Z95 * 0.0217 * 926.0).abs() < 12.0, "{large:?}");
    assert_eq!(large[1].1, 0.0);
    // Deterministic for a seed.
    assert_eq!(elo(2, &games(0, 1, 30, 0, 10), Some(1), 300, 7), small);
}

#[test]
fn transitive_ratings_and_unbeaten_players_stay_finite() {
    // A beats B 80%, B beats C 80%, A beats C always.
    let mut g = games(0, 1, 80, 0, 20);
    g.extend(games(1, 2, 80, 0, 20));
    g.extend(games(0, 2, 100, 0, 0));
    let t = bradley_terry(3, &g);
    assert!(t.iter().all(|x| x.is_finite()));
    assert!(t[0] > t[1] && t[1] > t[2], "{t:?}");
    // A player with no games has no rating.
    let t = bradley_terry(3, &games(0, 1, 5, 0, 0));
    assert!(t[2].is_nan() && t[0] > t[1]);
}

#[test]
fn record_round_trips_and_writes_atomically() {
    let dir = std::env::temp_dir().join(format!("factotum-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = MatchRecord {
        match_id: "m1".into(),
        random_token: "abc".into(),
        start_time: 1,
        game_meta_url: "gdl/tictactoe.kif".into(),
        is_completed: true,
        is_aborted: false,
        states: vec![record::state_string(&["( cell 1 1 b )".into(), "( control x )".into()])],
        moves: vec![],
        state_times: vec![1],
        errors: vec![vec!["".into(), "TO".into()]],
        goal_values: vec![50, 50],
        preview_clock: -1,
        start_clock: 10,
        play_clock: 5,
        player_names_from_host: vec!["a".into(), "b".into()],
        is_player_human: vec![false, false],
        tournament_name_from_host: None,
        scrambled: false,
        factotum: Default::default(),
    };
    assert_eq!(rec.states[0], "( ( cell 1 1 b ) ( control x ) )");
    let path = rec.save(&dir).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    for key in [
        "\"matchId\"",
        "\"stateTimes\"",
        "\"goalValues\"",
        "\"isCompleted\"",
        "\"playerNamesFromHost\"",
        "\"startClock\"",
        "\"gameMetaURL\"",
    ] {
        assert!(text.contains(key), "{key} missing");
    }
    assert_eq!(MatchRecord::load(&path), Some(rec.clone()));
    assert_eq!(rec.error_counts(), vec![0, 1]);
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 1, "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn records_with_only_ggp_base_required_fields_are_read() {
    // What ggp-base's Match.toJSON writes for a local game that is not finished: no
    // gameMetaURL (null is left out), no errors, goalValues, player names or humans.
    let text = r#"{"matchId":"local.1","randomToken":"t","startTime":5,"isCompleted":false,"isAborted":false,
        "states":["( ( cell 1 1 b ) )"],"moves":[],"stateTimes":[5],"previewClock":-1,"startClock":10,
        "playClock":5,"scrambled":false}"#;
    let rec: MatchRecord = serde_json::from_str(text).expect("a ggp-base record");
    assert_eq!((rec.match_id.as_str(), rec.game_meta_url.as_str(), rec.states.len()), ("local.1", "", 1));
    // Its required fields stay required.
    assert!(serde_json::from_str::<MatchRecord>(&text.replace(r#""matchId":"local.1","#, "")).is_err());
}

#[test]
fn requests_print_as_ggp_base_does() {
    let game = Arc::new(crate::gdl::Game::parse("t", "(role a)").unwrap());
    let start = Request::Start {
        id: "m".into(),
        role: "a".into(),
        rules: Arc::new("( role a )".into()),
        game,
        start_clock: 10,
        play_clock: 5,
    };
    assert_eq!(start.text(), "( START m a (( role a )) 10 5)");
    assert_eq!(Request::Play { id: "m".into(), moves: None }.text(), "( PLAY m NIL )");
    let moves = Some(vec!["( mark 1 1 )".to_string(), "noop".to_string()]);
    assert_eq!(Request::Play { id: "m".into(), moves: moves.clone() }.text(), "( PLAY m (( mark 1 1 ) noop ) )");
    assert_eq!(Request::Stop { id: "m".into(), moves }.text(), "( STOP m (( mark 1 1 ) noop ) )");
    assert_eq!(Request::Info.text(), "( INFO )");
    for text in [start.text(), Request::Play { id: "m".into(), moves: None }.text(), Request::Info.text()] {
        assert!(crate::message::parse(&text).is_ok(), "{text}");
    }
}

#[test]
fn info_replies_name_players_as_ggp_base_writes_them() {
    use super::client::info_name;
    assert_eq!(info_name("((name Sancho) (status available))").as_deref(), Some("Sancho"));
    assert_eq!(info_name("( ( STATUS busy ) ( NAME \"TurboTurtle\" ) )").as_deref(), Some("TurboTurtle"));
    assert_eq!(info_name("((status available) (species alien) (name x-1))").as_deref(), Some("x-1"));
    // Older replies, and what is not a name.
    for reply in [
        "available",
        "busy",
        "",
        "((status available))",
        "((name (a b)))",
        "((name))",
        "(name x)",
        "((name x) y",
        "done",
    ] {
        assert_eq!(info_name(reply), None, "{reply}");
    }
    assert_eq!(info_name(&format!("((name {}))", "n".repeat(101))), None);
}

#[test]
fn rules_are_sent_without_comments() {
    let r = super::referee::rules_text("; comment (\n(role x) ; more )\n(<= (legal x a) (true (p)))").unwrap();
    assert_eq!(r, "( role x ) ( <= ( legal x a ) ( true ( p ) ) )");
}

/// Architecture invariant: sockets and HTTP live only in `protocol/` (the server) and
/// `manager/remote.rs` (the client).
#[test]
fn tidy_only_protocol_and_remote_open_sockets() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    assert!(files.len() > 10);
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        if rel.starts_with("protocol/") || rel == "manager/remote.rs" || rel == "manager/tests.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for word in ["TcpStream", "TcpListener", "hyper::"] {
            assert!(!text.contains(word), "{rel} uses {word}: HTTP belongs in protocol/ or manager/remote.rs");
        }
    }
}

/// The copy a tournament run writes beside its records is the text it parsed, read once:
/// verbatim when the config names itself, with its file's stem put first as its name when
/// not, and the copy parses to the same config.
#[test]
fn a_tournament_config_is_read_once_and_copied_as_parsed() {
    use super::tournament::TournamentConfig;
    let dir = std::env::temp_dir().join(format!("factotum-tcopy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body = "games = [\"gdl/tictactoe.kif\"]\nplayers = [\"agents/random.toml\", \"agents/first.toml\"]\n";
    let nameless = dir.join("night_run.toml");
    std::fs::write(&nameless, body).unwrap();
    let (cfg, copy) = TournamentConfig::load_with_copy(&nameless).unwrap();
    assert_eq!(cfg.name.as_deref(), Some("night_run"));
    assert_eq!(copy, format!("name = \"night_run\"\n{body}"));
    let again: TournamentConfig = toml::from_str(&copy).unwrap();
    assert_eq!((again.name, again.games, again.players), (cfg.name.clone(), cfg.games.clone(), cfg.players.clone()));
    assert_eq!(TournamentConfig::load(&nameless).unwrap().name, cfg.name);
    let named = dir.join("other_stem.toml");
    let text = format!("name = \"given\"\n{body}");
    std::fs::write(&named, &text).unwrap();
    let (cfg, copy) = TournamentConfig::load_with_copy(&named).unwrap();
    assert_eq!((cfg.name.as_deref(), copy.as_str()), (Some("given"), text.as_str()));
    std::fs::write(&named, "games = [").unwrap();
    let e = TournamentConfig::load_with_copy(&named).unwrap_err();
    assert!(e.contains("other_stem.toml"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
