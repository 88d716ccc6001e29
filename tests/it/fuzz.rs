//! Generated hostile input for the readers that take text from outside: the GDL parser and
//! validator (and the engines built from what passes them), the protocol's message reader,
//! and the match-record reader as a resumed tournament uses it. Nothing may panic. Each
//! target runs proptest's default 256 cases in `cargo test`; for a long run set
//! `PROPTEST_CASES` (e.g. `PROPTEST_CASES=200000 cargo test --release --test it fuzz`).

use factotum::gdl::{validate, Game};
use factotum::interp::Interpreter;
use factotum::machine::StateMachine;
use factotum::manager::tournament::{summarize, Tournament, TournamentConfig};
use factotum::message;
use factotum::propnet::{self, Budget};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How far generated games got (parsed, valid, built on each engine), printed by a long
/// run (`FUZZ_REPORT=1`).
static REACHED: [AtomicUsize; 5] = [const { AtomicUsize::new(0) }; 5];

fn reached(k: usize) {
    REACHED[k].fetch_add(1, Ordering::Relaxed);
    if k == 0 && std::env::var_os("FUZZ_REPORT").is_some() && REACHED[0].load(Ordering::Relaxed) % 10_000 == 0 {
        let r: Vec<usize> = REACHED.iter().map(|a| a.load(Ordering::Relaxed)).collect();
        eprintln!("gdl fuzz: generated {} parsed {} valid {} interpreter {} propnet {}", r[0], r[1], r[2], r[3], r[4]);
    }
}

/// Words GDL is made of, so that generated text gets past the tokenizer into the parser,
/// the validator and the engines.
const GDL_WORDS: &[&str] = &[
    "(", "(", "(", ")", ")", ")", "<=", "role", "init", "true", "next", "legal", "does", "goal", "terminal", "not",
    "distinct", "or", "base", "input", "?x", "?y", "?z", "r", "a", "b", "p", "q", "0", "100", "noop", ";c\n", "\n",
    "#", "é",
];

fn gdl_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(GDL_WORDS), 0..120).prop_map(|w| w.join(" "))
}

fn term() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(&["a", "b", "0", "1", "?x", "?y", "r", "noop"][..]).prop_map(str::to_string);
    leaf.prop_recursive(2, 6, 2, |inner| {
        (prop::sample::select(&["f", "cell", "s"][..]), prop::collection::vec(inner, 1..3))
            .prop_map(|(f, args)| format!("({f} {})", args.join(" ")))
    })
}

fn literal() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        term().prop_map(|t| format!("(true {t})")),
        term().prop_map(|t| format!("(does r {t})")),
        (prop::sample::select(&["p", "q"][..]), term()).prop_map(|(p, t)| format!("({p} {t})")),
        (term(), term()).prop_map(|(a, b)| format!("(distinct {a} {b})")),
        Just("terminal".to_string()),
    ];
    atom.prop_recursive(2, 4, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|l| format!("(not {l})")),
            prop::collection::vec(inner, 1..3).prop_map(|ls| format!("(or {})", ls.join(" "))),
        ]
    })
}

/// Rules of GDL's shapes (every keyword head, negation, disjunction, recursion through
/// `p`/`q`), some broken by a stray word.
fn gdl_rules() -> impl Strategy<Value = String> {
    let head = prop_oneof![
        term().prop_map(|t| format!("(legal r {t})")),
        term().prop_map(|t| format!("(next {t})")),
        term().prop_map(|t| format!("(init {t})")),
        term().prop_map(|t| format!("(base {t})")),
        term().prop_map(|t| format!("(input r {t})")),
        prop::sample::select(&["(goal r 100)", "(goal r 0)", "terminal", "(role r2)"][..]).prop_map(str::to_string),
        (prop::sample::select(&["p", "q"][..]), term()).prop_map(|(p, t)| format!("({p} {t})")),
    ];
    let rule = (head, prop::collection::vec(literal(), 0..4)).prop_map(|(h, body)| {
        if body.is_empty() {
            h
        } else {
            format!("(<= {h} {})", body.join(" "))
        }
    });
    (prop::collection::vec(rule, 0..8), gdl_text(), 0..10u8).prop_map(|(rules, noise, k)| {
        if k == 0 {
            format!("{} {noise}", rules.join(" "))
        } else {
            rules.join(" ")
        }
    })
}

/// A game that plays: a role, a move, a step counter, a goal; generated rules are added.
const SEED_GAME: &str = "(role r) (init (s 0)) (<= (legal r noop) (true (s ?x))) (<= (next (s 1)) (true (s 0))) \
                         (<= terminal (true (s 1))) (goal r 100)";

proptest! {
    #[test]
    fn gdl_readers_and_engines_never_panic(extra in prop_oneof![1 => gdl_text(), 4 => gdl_rules()], alone in any::<bool>()) {
        let text = if alone { extra.clone() } else { format!("{SEED_GAME} {extra}") };
        reached(0);
        let Ok(game) = Game::parse("fuzz.kif", &text) else { return Ok(()) };
        reached(1);
        let report = validate(&game);
        if report.errors().next().is_some() {
            return Ok(());
        }
        reached(2);
        let deadline = Instant::now() + Duration::from_millis(300);
        if let Ok(mut m) = Interpreter::with_deadline(&game, Some(deadline)) {
            reached(3);
            let s = m.initial_state();
            let mut legal = Vec::new();
            for r in 0..m.roles().len() {
                m.legal_moves(&s, r, &mut legal);
                let _ = m.goal(&s, r);
            }
            let _ = m.is_terminal(&s);
        }
        let budget = Budget { deadline: Some(deadline), max_instances: 20_000, ..Budget::default() };
        if let Ok((mut m, _)) = propnet::build(&game, &budget) {
            reached(4);
            let s = m.initial_state();
            let _ = m.is_terminal(&s);
        }
    }

    #[test]
    fn messages_never_panic(
        words in prop::collection::vec(
            prop::sample::select(&["(", ")", "(play", "(start", "(stop", "(abort", "(info", "(preview", "nil", "NIL",
                "m", "x", "1", "2.5", "-1", "1e400", ";", "\n", "\0", "é", "((", "))", "(role x)"][..]),
            0..60,
        ),
        noise in ".{0,40}",
    ) {
        let text = format!("{}{noise}", words.join(" "));
        let _ = message::parse(&text);
        let _ = message::read(&text);
        let _ = message::url_decode(&text);
    }
}

/// A record as `factotum match` writes it, to mutate.
fn record(id: &str) -> Value {
    json!({
        "matchId": id, "randomToken": "t", "startTime": 1, "gameMetaURL": "gdl/tictactoe.kif",
        "isCompleted": true, "isAborted": false, "states": ["( )", "( )"], "moves": [["noop", "noop"]],
        "stateTimes": [1, 2], "errors": [["", ""], ["", "TO"]], "goalValues": [50, 50], "previewClock": -1,
        "startClock": 1, "playClock": 1, "playerNamesFromHost": ["random", "first"], "isPlayerHuman": [false, false],
        "scrambled": false,
        "factotum": {"gamePath": "gdl/tictactoe.kif", "rulesHash": "0", "roles": ["x", "o"],
                     "players": ["agents/random.toml", "agents/first.toml"], "engine": "propnet", "seed": 1}
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u32>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| prop::collection::vec(inner, 0..4).prop_map(Value::Array))
}

const KEYS: &[&str] = &[
    "matchId",
    "isCompleted",
    "isAborted",
    "states",
    "moves",
    "stateTimes",
    "errors",
    "goalValues",
    "startClock",
    "playClock",
    "playerNamesFromHost",
    "factotum",
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]
    /// Records in a tournament's folder, mutated (fields replaced or removed): resuming and
    /// summarizing the tournament reads them; it may ignore them, never panic.
    #[test]
    fn mutated_records_never_panic_a_resumed_tournament(
        edits in prop::collection::vec((prop::sample::select(KEYS), prop::option::of(json_value())), 0..5),
        raw in prop::option::of(".{0,30}"),
    ) {
        let dir = std::env::temp_dir().join(format!("factotum-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let cfg_path = dir.join("fuzz.toml");
        std::fs::write(
            &cfg_path,
            format!(
                "games = [\"{}\"]\nplayers = [\"{}\", \"{}\"]\nstartclock = 1\nplayclock = 1\nout = \"{}\"\n",
                root.join("gdl/tictactoe.kif").display(),
                root.join("agents/random.toml").display(),
                root.join("agents/first.toml").display(),
                dir.join("out").display()
            ),
        )
        .unwrap();
        let t = Tournament::new(TournamentConfig::load(&cfg_path).unwrap()).unwrap();
        std::fs::create_dir_all(dir.join("out")).unwrap();
        for s in &t.schedule {
            let mut rec = record(&s.spec.id);
            for (k, v) in &edits {
                match v {
                    Some(v) => rec[*k] = v.clone(),
                    None => {
                        rec.as_object_mut().unwrap().remove(*k);
                    }
                }
            }
            let text = raw.clone().unwrap_or_else(|| rec.to_string());
            std::fs::write(dir.join("out").join(format!("{}.json", s.spec.id)), text).unwrap();
            let _ = t.finished(s);
        }
        let _ = summarize(&t);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
