//! Agent configurations and players.

use super::*;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_shipped_config_loads() {
    for (name, kind) in [
        ("mcts", Kind::Mcts),
        ("mcts_factored", Kind::Mcts),
        ("random", Kind::Random),
        ("flatmc", Kind::Flatmc),
        ("first", Kind::First),
    ] {
        let cfg =
            AgentConfig::load(&root().join("agents").join(format!("{name}.toml"))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cfg.kind, kind);
        assert_eq!(cfg.margin_s, 2.5);
    }
    // Every configuration in agents/ loads (tournaments name them by path).
    let mut n = 0;
    for e in std::fs::read_dir(root().join("agents")).expect("agents/") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "toml") {
            AgentConfig::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            n += 1;
        }
    }
    assert!(n >= 30, "{n} agents");
    let check = AgentConfig::load(&root().join("agents/mcts_trapcheck.toml")).unwrap_or_else(|e| panic!("{e}"));
    let plain = AgentConfig::load(&root().join("agents/mcts_plain.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(check.trap_check && !plain.trap_check);
    assert_eq!((check.threads, check.solver, check.amaf), (plain.threads, plain.solver, plain.amaf));
    // The pair that measures what watching for factors costs differs in factoring alone.
    let f = AgentConfig::load(&root().join("agents/mcts_nometa_factors.toml")).unwrap_or_else(|e| panic!("{e}"));
    let u = AgentConfig::load(&root().join("agents/mcts_nometa_unfactored.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(f.factoring && f.contingent_factoring && !u.factoring && !f.metagame && f.threads == 1);
    let same = AgentConfig { factoring: true, contingent_factoring: true, name: f.name.clone(), ..u };
    assert_eq!(format!("{same:?}"), format!("{f:?}"));
    // GRAVE gated per game is plain MCTS with meta-gaming between plain UCT and GRAVE.
    let g = AgentConfig::load(&root().join("agents/mcts_grave_gated.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g.metagame_candidates.iter().map(|c| c.to_string()).collect::<Vec<_>>(), ["random", "random+grave"]);
    assert!(g.metagame && g.amaf == Amaf::Off && g.amaf_exploration == Some(0.25));
    let same = AgentConfig {
        name: plain.name.clone(),
        metagame: false,
        metagame_candidates: plain.metagame_candidates.clone(),
        amaf_exploration: None,
        rave_bias: plain.rave_bias,
        grave_ref: plain.grave_ref,
        ..g
    };
    assert_eq!(format!("{same:?}"), format!("{plain:?}"));
    // Similarity-guided GRAVE with the small bonus is GRAVE with the small bonus but for the
    // sharing (amaf = "similar" and its parameters, as mcts_similar.toml's).
    let low = AgentConfig::load(&root().join("agents/mcts_grave_low.toml")).unwrap_or_else(|e| panic!("{e}"));
    let sim = AgentConfig::load(&root().join("agents/mcts_similar_low.toml")).unwrap_or_else(|e| panic!("{e}"));
    let similar = AgentConfig::load(&root().join("agents/mcts_similar.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(sim.amaf == Amaf::Similar && !sim.trap_hints && low.amaf == Amaf::Grave);
    assert_eq!(
        (sim.sim_rho, sim.sim_depth, sim.sim_visits, sim.sim_share),
        (similar.sim_rho, similar.sim_depth, similar.sim_visits, similar.sim_share)
    );
    let same = AgentConfig {
        name: low.name.clone(),
        amaf: Amaf::Grave,
        sim_rho: low.sim_rho,
        sim_depth: low.sim_depth,
        sim_visits: low.sim_visits,
        sim_share: low.sim_share,
        ..sim
    };
    assert_eq!(format!("{same:?}"), format!("{low:?}"));
    // The main agent with GRAVE among its candidates differs from it in those keys alone (and
    // in the exploration constant, 0.4 since session 37, in NST in place of MAST among the
    // candidates since session 38, and in NST's ε, 0.2 since session 39).
    let main = AgentConfig::load(&root().join("agents/mcts.toml")).unwrap_or_else(|e| panic!("{e}"));
    let mg = AgentConfig::load(&root().join("agents/mcts_meta_grave.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(mg.metagame_candidates.last().and_then(|c| c.amaf), Some(Amaf::Grave));
    assert_eq!(mg.metagame_candidates[..mg.metagame_candidates.len() - 1], Candidate::DEFAULT[..]);
    let nst: Vec<String> = main.metagame_candidates.iter().map(|c| c.to_string()).collect();
    assert_eq!(nst, ["random", "nst", "batch"]);
    // The NST agent of tournaments/nst.toml is the main agent under another name, with MAST's
    // ε of 0.4; the agent of tournaments/nst_eps.toml is the main agent (ε 0.2 since session 39).
    assert_eq!((main.mast_epsilon, MctsConfig::default().mast_epsilon), (0.2, 0.4));
    let n = AgentConfig::load(&root().join("agents/mcts_nst.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n.mast_epsilon, 0.4);
    let as_main = AgentConfig { name: main.name.clone(), mast_epsilon: main.mast_epsilon, ..n };
    assert_eq!(format!("{as_main:?}"), format!("{main:?}"));
    let e = AgentConfig::load(&root().join("agents/mcts_nst_e02.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(format!("{:?}", AgentConfig { name: main.name.clone(), ..e }), format!("{main:?}"));
    let same = AgentConfig {
        name: main.name.clone(),
        metagame_candidates: main.metagame_candidates.clone(),
        amaf_exploration: main.amaf_exploration,
        rave_bias: main.rave_bias,
        grave_ref: main.grave_ref,
        exploration: main.exploration,
        heuristic: main.heuristic,
        mast_epsilon: main.mast_epsilon,
        ..mg
    };
    assert_eq!(format!("{same:?}"), format!("{main:?}"));
}

#[test]
fn bad_configs_are_errors() {
    assert!(AgentConfig::parse("kind = \"alphazero\"").is_err());
    assert!(AgentConfig::parse("kind = \"mcts\"\nexploration = -1.0").is_err());
    assert!(AgentConfig::parse("kind = \"mcts\"\nunknown = 3").is_err());
    assert!(AgentConfig::parse("kind = ").is_err());
    assert!(AgentConfig::parse("playout = \"greedy\"").is_err());
    assert!(AgentConfig::parse("mast_epsilon = 1.5").is_err());
    assert!(AgentConfig::parse("mast_decay = -0.1").is_err());
    assert!(AgentConfig::parse("batch_leaves = 0").is_err());
    assert!(AgentConfig::parse("batch_leaves = 257").is_err());
    assert!(AgentConfig::parse("playout = \"batch\"\namaf = \"rave\"").is_err());
    assert_eq!(AgentConfig::parse("playout = \"batch\"").map(|c| c.batch_leaves), Ok(16));
    assert!(AgentConfig::parse("playout = \"batch\"\ndecisive = true").is_err());
    let dec = AgentConfig::parse("playout = \"mast\"\ndecisive = true").expect("decisive MAST");
    assert!(dec.decisive && dec.mcts_config(1).decisive);
    // The learned filter of ending moves is on unless turned off.
    assert!(dec.decisive_filter && dec.mcts_config(1).decisive_filter);
    let exact = AgentConfig::parse("decisive = true\ndecisive_filter = false").expect("exact decisive");
    assert!(!exact.mcts_config(1).decisive_filter);
    // The gate is meta-gaming's.
    assert!(AgentConfig::parse("metagame = true\ndecisive_gate = true").unwrap().decisive_gate);
    let e = AgentConfig::parse("decisive_gate = true").unwrap_err();
    assert!(e.contains("metagame = true"), "{e}");
    assert_eq!(AgentConfig::parse("").unwrap().metagame_candidates, Candidate::DEFAULT);
    let two = AgentConfig::parse("metagame_candidates = [\"mast+decisive\", \"batch\"]").expect("two candidates");
    assert_eq!(two.metagame_candidates, [Candidate::ALL[4], Candidate::ALL[2]]);
    assert!(AgentConfig::parse("metagame_candidates = []").is_err());
    assert!(AgentConfig::parse("metagame_candidates = [\"mast\", \"mast\"]").is_err());
    let gated = AgentConfig::parse(
        "metagame = true\nmetagame_candidates = [\"random\", \"random+grave\"]\namaf_exploration = 0.25",
    )
    .expect("an AMAF candidate");
    assert_eq!(gated.metagame_candidates[1].amaf, Some(Amaf::Grave));
    let m = gated.mcts_config(1);
    assert_eq!((m.exploration, m.amaf_exploration, m.amaf), (0.7, 0.25, Amaf::Off));
    assert_eq!(AgentConfig::parse("exploration = 0.4").unwrap().mcts_config(1).amaf_exploration, 0.4);
    assert!(AgentConfig::parse("amaf_exploration = -1").unwrap_err().contains("amaf_exploration"));
    // Tree-parallel helpers gather RAVE, GRAVE and killer-RAVE statistics, not similarity-guided ones.
    let tree = "threads = 2\nparallel = \"tree\"\nmetagame_candidates = ";
    let ok =
        AgentConfig::parse(&format!("{tree}[\"random\", \"mast+grave\", \"random+killer\"]")).expect("tree + grave");
    assert_eq!(ok.metagame_candidates[1].amaf, Some(Amaf::Grave));
    let e = AgentConfig::parse(&format!("{tree}[\"random\", \"mast+similar\"]")).unwrap_err();
    assert!(e.contains("mast+similar") && e.contains("tree"), "{e}");
    let e = AgentConfig::parse("metagame_candidates = [\"random\", \"batch+grave\"]").unwrap_err();
    assert!(e.contains("batch+grave") && e.contains("AMAF"), "{e}");
    let e = AgentConfig::parse("metagame_candidates = [\"batch+decisive\"]").unwrap_err();
    assert!(e.contains("one of"), "{e}");
    let d = AgentConfig::parse("").expect("all defaults");
    assert_eq!(d.kind, Kind::Mcts);
    assert_eq!(d.margin_s, 2.5);
    assert_eq!(d.playout, Playout::Random);
    assert!(!d.metagame);
    assert!(!d.decisive);
    assert!(!d.transpositions);
    assert!(AgentConfig::parse("transpositions = true").unwrap().mcts_config(1).transpositions);
    assert_eq!(d.parallel, Parallel::Root);
    assert_eq!(AgentConfig::parse("threads = 2\nparallel = \"tree\"").map(|c| c.parallel), Ok(Parallel::Tree));
    assert!(AgentConfig::parse("parallel = \"leaf\"").is_err());
    assert_eq!(
        AgentConfig::parse("threads = 2\nparallel = \"tree\"\namaf = \"grave\"").map(|c| c.amaf),
        Ok(Amaf::Grave)
    );
    let e = AgentConfig::parse("threads = 2\nparallel = \"tree\"\namaf = \"similar\"").unwrap_err();
    assert!(e.contains("amaf"), "{e}");
}

/// The baseline is frozen: every option it plays with is written in the file, with the values
/// the player had before issue 16 (the defaults of today must not leak into it).
#[test]
fn the_baseline_writes_out_the_options_it_plays_with() {
    let text = std::fs::read_to_string(root().join("agents/baseline.toml")).unwrap();
    let cfg = AgentConfig::parse(&text).unwrap();
    for key in ["exploration", "threads", "node_budget", "playout_depth", "solver", "amaf", "playout", "factoring"] {
        assert!(text.lines().any(|l| l.starts_with(&format!("{key} ="))), "{key} not written out");
    }
    assert_eq!((cfg.exploration, cfg.threads, cfg.node_budget), (0.7, 1, 200_000));
    assert_eq!((cfg.amaf, cfg.playout, cfg.solver, cfg.metagame), (Amaf::Off, Playout::Random, true, false));
    let meta = AgentConfig::load(&root().join("agents/mcts_meta.toml")).unwrap();
    assert!(meta.metagame);
    assert_eq!(AgentConfig::load(&root().join("agents/mcts_mast.toml")).unwrap().playout, Playout::Mast);
}

#[test]
fn deadlines_keep_the_margin() {
    let t = Instant::now();
    let (s, r) = deadlines(t, Duration::from_secs(10), Duration::from_millis(2500));
    assert_eq!(s - t, Duration::from_millis(7500));
    assert!(r > s && r < t + Duration::from_secs(10));
    let (s, r) = deadlines(t, Duration::from_secs(1), Duration::from_millis(2500));
    assert_eq!(s - t, Duration::from_millis(300));
    assert!(r > s && r < t + Duration::from_secs(1));
}

#[test]
fn moves_match_by_printed_text() {
    assert!(same_move("( mark 1 1 )", "( mark 1 1 )"));
    assert!(same_move("(mark 1 1)", "( mark 1 1 )"));
    assert!(same_move("(MARK 1 1)", "( mark 1 1 )"));
    assert!(!same_move("(mark 1 2)", "( mark 1 1 )"));
    assert!(same_move("NOOP", "noop"));
}

#[test]
fn a_player_follows_the_game_and_rejects_illegal_moves() {
    let game = Game::load(&root().join("gdl/tictactoe.kif")).expect("game");
    let cfg = AgentConfig { kind: Kind::First, ..AgentConfig::default() };
    let mut p = new_player(&game, "o", &cfg, 1, Instant::now() + Duration::from_secs(30)).expect("player");
    assert_eq!(p.engine(), "propnet");
    assert_eq!(p.role(), 1);
    assert_eq!(p.first_legal().as_deref(), Some("noop"));
    assert!(p.advance(&["(mark 1 1)".into(), "noop".into()]).is_ok());
    assert!(p.advance(&["(mark 2 2)".into(), "noop".into()]).is_err(), "x is not on turn");
    assert!(p.advance(&["noop".into()]).is_err(), "too few moves");
    assert_eq!(p.step(), 1);
    let s = p.select(Instant::now()).expect("a move");
    assert_eq!(Some(s.text), p.first_legal(), "the first agent plays the first legal move");
    assert!(p.advance(&["noop".into(), "( mark 1 1 )".into()]).is_err(), "an occupied cell");
    assert!(new_player(&game, "nobody", &cfg, 1, Instant::now() + Duration::from_secs(30)).is_err());
}

/// Connect four through the player API for agent `cfg` (`what` names it): yellow blocks red's
/// three in a row, then red completes another. Returns red's and yellow's engines.
fn blocks_and_wins(cfg: &AgentConfig, what: &str) -> (&'static str, &'static str) {
    let game = Game::load(&root().join("gdl/connect4.kif")).expect("game");
    let deadline = || Instant::now() + Duration::from_secs(30);
    let mut p = new_player(&game, "red", cfg, 1, deadline()).expect("player");
    let mut q = new_player(&game, "yellow", cfg, 1, deadline()).expect("player");
    for (red, yellow) in [("(drop 1)", "noop"), ("noop", "(drop 7)"), ("(drop 2)", "noop"), ("noop", "(drop 7)")] {
        p.advance(&[red.into(), yellow.into()]).unwrap();
        q.advance(&[red.into(), yellow.into()]).unwrap();
    }
    p.advance(&["(drop 3)".into(), "noop".into()]).unwrap();
    q.advance(&["(drop 3)".into(), "noop".into()]).unwrap();
    let block = q.search(Limit::iterations(5_000)).expect("a move");
    assert_eq!(block.text, "( drop 4 )", "{what}: yellow blocks");
    p.advance(&["noop".into(), "(drop 6)".into()]).unwrap();
    let win = p.search(Limit::iterations(2_000)).expect("a move");
    assert_eq!(win.text, "( drop 4 )", "{what}: red wins");
    (p.engine(), q.engine())
}

/// An agent with batched playouts gets the propnet's batch machine, and plays well with it:
/// at connect four it takes a win in one and blocks one.
#[test]
fn a_batched_player_searches_on_the_batch_machine() {
    let cfg = AgentConfig::load(&root().join("agents/mcts_batch.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((cfg.playout, cfg.batch_leaves), (Playout::Batch, 16));
    assert_eq!(blocks_and_wins(&cfg, "batched"), ("propnet+batch", "propnet+batch"));
    let game = Game::load(&root().join("gdl/connect4.kif")).expect("game");
    let deadline = Instant::now() + Duration::from_secs(30);
    let plain = new_player(&game, "red", &AgentConfig::default(), 1, deadline).expect("player");
    assert_eq!(plain.engine(), "propnet");
}

/// A tree-parallel agent (`threads = 2`, `parallel = "tree"`) plays through the player API:
/// at connect four it blocks and wins, with each playout kind its helper can play.
#[test]
fn a_tree_parallel_player_blocks_and_wins() {
    for playout in ["random", "mast", "batch", "nst"] {
        let text = format!("threads = 2\nparallel = \"tree\"\nplayout = \"{playout}\"");
        let cfg = AgentConfig::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        blocks_and_wins(&cfg, playout);
    }
}

#[test]
fn duel_reports_scores() {
    let game = Game::load(&root().join("gdl/tictactoe.kif")).expect("game");
    let a = AgentConfig { kind: Kind::Mcts, margin_s: 0.0, ..AgentConfig::default() };
    let b = AgentConfig { kind: Kind::First, margin_s: 0.0, ..AgentConfig::default() };
    let rep = duel::duel(&game, &a, &b, 2, Duration::from_millis(50), &|_, _, _| {}).expect("duel");
    assert_eq!(rep.matches, 2);
    assert_eq!(rep.errors, 0);
    assert_eq!(rep.a_wins + rep.b_wins + rep.draws, 2);
    assert_eq!(rep.b_wins, 0, "MCTS does not lose to first-legal: {rep:?}");
}

#[test]
fn a_factoring_player_plays_legal_moves_through_the_player_api() {
    let cfg = AgentConfig::load(&root().join("agents").join("mcts_factored.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(cfg.factoring);
    let game = Game::load(&root().join("gdl").join("parallel_tictactoe.kif")).unwrap_or_else(|e| panic!("{e}"));
    let mut p = new_player(&game, "x", &cfg, 1, Instant::now() + Duration::from_secs(10)).expect("player");
    let mut q = new_player(&game, "o", &cfg, 2, Instant::now() + Duration::from_secs(10)).expect("player");
    assert_eq!(p.engine(), "propnet+factors");
    // Two rounds: no line can be made before x's third move.
    for _ in 0..2 {
        let sel = p.select(Instant::now() + Duration::from_millis(200)).expect("a move");
        assert!(sel.text.starts_with("( mark "), "{}", sel.text);
        let joint = [sel.text.clone(), "noop".to_string()];
        p.advance(&joint).expect("legal");
        q.advance(&joint).expect("legal");
        let sel = q.select(Instant::now() + Duration::from_millis(200)).expect("a move");
        let joint = ["noop".to_string(), sel.text.clone()];
        p.advance(&joint).expect("legal");
        q.advance(&joint).expect("legal");
        if p.is_terminal() {
            break;
        }
    }
}

#[test]
fn a_propnet_that_misses_the_start_clock_takes_over_once_built() {
    let text = std::fs::read_to_string(root().join("gdl/tictactoe.kif")).unwrap();
    let game = Game::parse("tictactoe", &text).unwrap();
    let cfg = AgentConfig { kind: Kind::Mcts, ..AgentConfig::default() };
    // A start clock already over: the propnet build times out at once, the interpreter plays.
    let mut p = new_player(&game, "x", &cfg, 3, Instant::now()).unwrap();
    assert_eq!(p.engine(), "interp");
    p.advance(&["(mark 2 2)".into(), "noop".into()]).unwrap();
    p.advance(&["noop".into(), "(mark 1 1)".into()]).unwrap();
    // The build goes on without the start clock; the first search after it is done switches.
    let t0 = Instant::now();
    while p.engine() != "propnet" {
        assert!(t0.elapsed() < Duration::from_secs(20), "still on the interpreter");
        p.search(Limit::until(Instant::now() + Duration::from_millis(20))).unwrap();
    }
    // The moves played on the interpreter were replayed: same step, the marked cells taken.
    assert_eq!(p.step(), 2);
    let chosen = p.search(Limit::until(Instant::now() + Duration::from_millis(50))).unwrap().text;
    assert!(chosen.starts_with("( mark") && !chosen.contains("2 2") && !chosen.contains("1 1"), "{chosen}");
    p.advance(&[chosen, "noop".into()]).unwrap();
    assert_eq!(p.step(), 3);
}

#[test]
fn regret_matching_is_an_agent_option() {
    let cfg = AgentConfig::parse("simultaneous = \"regret\"\nregret_exploration = 0.2").unwrap();
    let m = cfg.mcts_config(1);
    assert_eq!((m.simultaneous, m.regret_exploration), (crate::search::Simultaneous::Regret, 0.2));
    assert_eq!(AgentConfig::parse("").unwrap().simultaneous, crate::search::Simultaneous::Ucb);
    assert_eq!(AgentConfig::parse("regret_threshold = 0.25").unwrap().mcts_config(1).regret_threshold, 0.25);
    assert!(AgentConfig::parse("regret_threshold = -1").unwrap_err().contains("regret_threshold"));
    let e = AgentConfig::parse("regret_exploration = 1.5").unwrap_err();
    assert!(e.contains("regret_exploration must be a number in 0..=1"), "{e}");
    assert!(AgentConfig::parse("simultaneous = \"exp3\"").is_err());
}

/// Hyperstate pruning through the player API (`gdl/vault.kif`, 8 moves at most): at the
/// start both moves can still win, so nothing is pruned; at cell 3 without the key, jumping
/// into the pit is proven lost while walking back can still win, so the pruned player has one
/// move left (forced) and the plain one two; at cell 2 with the key and two moves left, only
/// opening wins (walking on runs out the clock).
#[test]
fn hyperstate_pruning_leaves_out_lost_moves() {
    let game = Game::load(&root().join("gdl/vault.kif")).expect("game");
    let deadline = || Instant::now() + Duration::from_secs(30);
    let pruned = AgentConfig { hyperstates: true, ..AgentConfig::default() };
    let mut p = new_player(&game, "explorer", &pruned, 1, deadline()).expect("player");
    let mut q = new_player(&game, "explorer", &AgentConfig::default(), 1, deadline()).expect("player");
    assert_eq!((p.engine(), q.engine()), ("propnet+hsg", "propnet"));
    assert_eq!(p.forced_move(), None);
    for m in ["(go right)", "(go right)"] {
        p.advance(&[m.into()]).unwrap();
        q.advance(&[m.into()]).unwrap();
    }
    assert_eq!(p.forced_move().as_deref(), Some("( go left )"));
    assert_eq!(q.forced_move(), None);
    assert_ne!(p.search(Limit::iterations(200)).expect("a move").text, "jump");
    for m in ["(go left)", "(go left)", "take", "(go right)"] {
        p.advance(&[m.into()]).unwrap();
        q.advance(&[m.into()]).unwrap();
    }
    assert_eq!(p.forced_move().as_deref(), Some("open"));
    assert_eq!(q.forced_move(), None);
    let bad = AgentConfig::parse("hyperstates = true\nhyperstate_states = 0");
    assert!(bad.is_err());
}

/// Hyperstate sharing through the player API: the player pools its statistics over states
/// equal but for the step counter (`search::classes`), and still plays the vault's win.
#[test]
fn hyperstate_sharing_plays_through_the_player() {
    let game = Game::load(&root().join("gdl/vault.kif")).expect("game");
    let cfg = AgentConfig::parse("hyperstates = true\nhyperstate_sharing = true").unwrap();
    assert!(cfg.mcts_config(1).position_classes);
    let mut p = new_player(&game, "explorer", &cfg, 1, Instant::now() + Duration::from_secs(30)).expect("player");
    assert_eq!(p.engine(), "propnet+hsg+pool");
    while !p.is_terminal() {
        let mv = p.search(Limit::iterations(300)).expect("a move");
        p.advance(std::slice::from_ref(&mv.text)).unwrap();
    }
    assert_eq!(p.goals(), vec![Some(100)], "the vault is opened with the key");
    let e = AgentConfig::parse("hyperstate_sharing = true").unwrap_err();
    assert!(e.contains("needs hyperstates = true"), "{e}");
}

/// The main agent (`agents/mcts.toml`: factoring, two threads, tree-parallel, meta-gaming): where the
/// game's factors are searched apart it searches them (on two threads at once) and still
/// blocks on both boards; where the game does not factor, or its factors are searched whole,
/// it is the default agent exactly (engine `propnet` or `propnet+batch`, meta-gaming's).
#[test]
fn the_default_agent_factors_only_where_the_factors_are_searched_apart() {
    let base = AgentConfig::load(&root().join("agents/mcts.toml")).unwrap_or_else(|e| panic!("{e}"));
    let cfg = AgentConfig { margin_s: 0.0, ..base };
    assert!(cfg.factoring && cfg.threads >= 2 && cfg.metagame, "the main agent factors");
    let deadline = || Instant::now() + Duration::from_secs(20);
    let game = Game::load(&root().join("gdl/parallel_connect4.kif")).expect("game");
    let mut p = new_player(&game, "red", &cfg, 1, deadline()).expect("player");
    assert_eq!(p.engine(), "propnet+factors");
    for (red, yellow) in [("(drop 4 1)", "(drop 5 7)"), ("(drop 4 1)", "(drop 5 7)"), ("(drop 3 2)", "(drop 5 7)")] {
        p.advance(&[red.into(), "noop".into()]).unwrap();
        p.advance(&["noop".into(), yellow.into()]).unwrap();
    }
    let block = p.search(Limit::until(Instant::now() + Duration::from_millis(600))).expect("a move");
    assert_eq!(block.text, "( drop 5 7 )", "red blocks both boards");
    for (file, role) in [("gdl/connect4.kif", "red"), ("gdl/serial_tictactoe.kif", "x")] {
        let game = Game::load(&root().join(file)).expect("game");
        let p = new_player(&game, role, &cfg, 1, deadline()).expect("player");
        assert!(p.engine() == "propnet" || p.engine() == "propnet+batch", "{file}: {}", p.engine());
    }
    let off = AgentConfig { factoring: false, ..cfg };
    let p = new_player(&game, "red", &off, 1, deadline()).expect("player");
    assert_ne!(p.engine(), "propnet+factors");
}

/// `agents/mcts_split.toml` (the main agent with `split_compound`): on a game whose moves
/// are compounds of per-factor parts, the player searches the whole game with each move
/// chosen part by part (engine `propnet+split`, meta-gaming run on the split machine) and
/// blocks both boards; on a game without compound moves it is the main agent (serial
/// tic-tac-toe: engine `propnet`/`propnet+batch`).
#[test]
fn the_split_agent_chooses_compound_moves_part_by_part() {
    let base = AgentConfig::load(&root().join("agents/mcts_split.toml")).unwrap_or_else(|e| panic!("{e}"));
    let cfg = AgentConfig { margin_s: 0.0, ..base };
    assert!(cfg.factoring && cfg.split_compound && cfg.metagame);
    let deadline = || Instant::now() + Duration::from_secs(6);
    let game = Game::load(&root().join("gdl/parallel_connect4.kif")).expect("game");
    let mut p = new_player(&game, "red", &cfg, 1, deadline()).expect("player");
    assert_eq!(p.engine(), "propnet+split");
    assert_eq!(p.factors(), Some(2), "two boards, a part on each");
    for (red, yellow) in [("(drop 4 1)", "(drop 5 7)"), ("(drop 4 1)", "(drop 5 7)"), ("(drop 3 2)", "(drop 5 7)")] {
        p.advance(&[red.into(), "noop".into()]).unwrap();
        p.advance(&["noop".into(), yellow.into()]).unwrap();
    }
    let block = p.search(Limit::until(Instant::now() + Duration::from_millis(600))).expect("a move");
    assert_eq!(block.text, "( drop 5 7 )", "red blocks both boards");
    let game = Game::load(&root().join("gdl/serial_tictactoe.kif")).expect("game");
    let p = new_player(&game, "x", &cfg, 1, deadline()).expect("player");
    assert!(p.engine() == "propnet" || p.engine() == "propnet+batch", "{}", p.engine());
}

/// The main agent watches its latches: on a game that factors only once a latch holds (two
/// boards joined by a shared corner, compound moves), it is the agent's own searcher at
/// first (engine `propnet`/`propnet+batch`, searched whole) and searches the boards apart
/// from the turn the shared corner is marked; on connect four (latches, its contingent
/// factors serial) it stays whole however its latches change.
#[test]
fn the_default_agent_switches_to_factors_once_latches_split_the_game() {
    let base = AgentConfig::load(&root().join("agents/mcts.toml")).unwrap_or_else(|e| panic!("{e}"));
    let cfg = AgentConfig { margin_s: 0.0, ..base };
    assert!(cfg.factoring && cfg.contingent_factoring, "the main agent watches its latches");
    let deadline = || Instant::now() + Duration::from_secs(4);
    let limit = || Limit::until(Instant::now() + Duration::from_millis(200));
    let game = Game::load(&root().join("gdl/joined_tictactoe_blocked.kif")).expect("game");
    let moves = |p: &mut Box<dyn Player>, joints: &[[&str; 2]]| {
        for j in joints {
            p.advance(&[j[0].to_string(), j[1].to_string()]).unwrap();
        }
    };
    let mut p = new_player(&game, "o", &cfg, 1, deadline()).expect("player");
    assert!(p.engine() == "propnet" || p.engine() == "propnet+batch", "{}", p.engine());
    moves(&mut p, &[["( mark 1 1 2 2 )", "noop"]]);
    p.search(limit()).expect("a move");
    assert_eq!(p.factors(), None, "coupled while the shared corner is blank");
    moves(&mut p, &[["noop", "( mark 1 2 2 3 )"], ["( mark 3 3 3 1 )", "noop"]]);
    let c = p.search(limit()).expect("a move");
    assert_eq!(p.factors(), Some(2), "once the shared corner is x, the boards are apart");
    assert!(c.text.starts_with("( mark "), "{}", c.text);
    let off = AgentConfig { contingent_factoring: false, ..cfg.clone() };
    let mut q = new_player(&game, "o", &off, 1, deadline()).expect("player");
    moves(&mut q, &[["( mark 1 1 2 2 )", "noop"], ["noop", "( mark 1 2 2 3 )"], ["( mark 3 3 3 1 )", "noop"]]);
    q.search(limit()).expect("a move");
    assert_eq!(q.factors(), None, "without contingent factoring the game stays whole");
    // Connect four: every disc is a latch, and after a few moves the board splits into
    // factors that each move plays in one of (serial): searched whole all the same.
    let game = Game::load(&root().join("gdl/connect4.kif")).expect("game");
    let mut p = new_player(&game, "red", &cfg, 1, deadline()).expect("player");
    for (red, black) in [("( drop 4 )", "( drop 4 )"), ("( drop 3 )", "( drop 5 )"), ("( drop 1 )", "( drop 7 )")] {
        p.search(limit()).expect("a move");
        moves(&mut p, &[[red, "noop"], ["noop", black]]);
    }
    p.search(limit()).expect("a move");
    assert_eq!(p.factors(), None, "connect four is searched whole");
}

/// An interpreter that misses the start clock is built on (by `late` more), not given up:
/// giving up left the player with no move for the whole match (gt_two_thirds_4p, whose
/// static arithmetic takes about 4 s, after the propnet's attempt had used the start clock).
#[test]
fn an_interpreter_past_the_start_clock_is_built_on() {
    let mut rules = String::from("(role a) (init (s 0)) (<= (next (s 1)) (true (s 0))) (<= terminal (true (s 1)))\n");
    rules.push_str(
        "(goal a 100) (<= (pair ?x ?y) (n ?x) (n ?y)) (<= (legal a (pick ?x ?y)) (pair ?x ?y) (true (s 0)))\n",
    );
    for i in 0..150 {
        rules.push_str(&format!("(n {i})\n"));
    }
    let game = Game::parse("static_pairs", &rules).unwrap();
    let past = Instant::now();
    // The precondition: this game's static relation is not built by a deadline already past.
    assert!(Interpreter::with_deadline(&game, Some(past)).unwrap().timed_out());
    let cfg = AgentConfig { kind: Kind::Random, ..AgentConfig::default() };
    let mut p = interp_player_within(&game, "a", &cfg, 1, past, Duration::from_secs(60)).expect("built on");
    assert_eq!(p.engine(), "interp");
    assert!(p.first_legal().is_some_and(|m| m.contains("pick")));
    // A build that misses `late` too is an error, said as such.
    let e = interp_player_within(&game, "a", &cfg, 1, past, Duration::ZERO).err().expect("no time at all");
    assert!(e.contains("could not be built in time"), "{e}");
}

/// In the start clock the propnet build leaves a quarter of the time left, at most 3 s, to
/// the interpreter should it miss; in the background it gets the whole budget.
#[test]
fn the_start_clock_keeps_time_for_the_interpreter() {
    let now = Instant::now();
    let budget = Budget { deadline: Some(now + Duration::from_secs(8)), ..Budget::default() };
    assert_eq!(build_budget(&budget, true, now).deadline, Some(now + Duration::from_secs(6)));
    let long = Budget { deadline: Some(now + Duration::from_secs(40)), ..Budget::default() };
    assert_eq!(build_budget(&long, true, now).deadline, Some(now + Duration::from_secs(37)));
    assert_eq!(build_budget(&budget, false, now).deadline, budget.deadline);
    let none = Budget::default();
    assert_eq!(build_budget(&none, true, now).deadline, None);
}
