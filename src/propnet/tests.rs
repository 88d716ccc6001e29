//! Tests of the propnet: differential tests against the interpreter (random playouts on every
//! `gdl/` game, every reachable state of tic-tac-toe), inline games for recursion through
//! the state (cycles in the network), negation and constants, and the build's budgets and
//! optimizations.

use super::*;
use crate::gdl::Game;
use crate::interp::Interpreter;
use crate::machine::StateMachine;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, VecDeque};
use std::path::Path;

fn game(file: &str) -> Game {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    Game::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn inline(text: &str) -> Game {
    Game::parse("inline.kif", text).unwrap_or_else(|e| panic!("{e}"))
}

fn propnet(g: &Game) -> PropnetMachine {
    build(g, &Budget::default()).unwrap_or_else(|e| panic!("{}: {e}", g.name)).0
}

pub(super) const GAMES: [&str; 7] = [
    "tictactoe.kif",
    "connect4.kif",
    "parallel_tictactoe.kif",
    "joined_tictactoe.kif",
    "three_to_fifteen.kif",
    "hex4.kif",
    "breakthrough5.kif",
];

/// Everything observable about a state: facts, terminal, goals, sorted legal move texts.
fn observe<M: StateMachine>(m: &mut M, s: &M::State) -> (Vec<String>, bool, Vec<Option<u32>>, Vec<Vec<String>>) {
    let mut buf = Vec::new();
    let roles = m.roles().len();
    let legal = (0..roles)
        .map(|r| {
            m.legal_moves(s, r, &mut buf);
            let mut v: Vec<String> = buf.iter().map(|&mv| m.move_text(mv)).collect();
            v.sort();
            v
        })
        .collect();
    (m.state_facts(s), m.is_terminal(s), (0..roles).map(|r| m.goal(s, r)).collect(), legal)
}

/// The move of role `r` whose text is `text`.
fn find<M: StateMachine>(m: &mut M, s: &M::State, r: usize, text: &str) -> M::Move {
    let mut buf = Vec::new();
    m.legal_moves(s, r, &mut buf);
    buf.into_iter().find(|&mv| m.move_text(mv) == text).unwrap_or_else(|| panic!("{text} not legal"))
}

/// The states after a random joint move (drawn from `legal`, the sorted legal move texts
/// per role, as [`observe`] gives them) from `sa` on the interpreter and `sb` on the propnet.
fn random_step<R: Rng>(
    a: &mut Interpreter,
    b: &mut PropnetMachine,
    (sa, sb): (&<Interpreter as StateMachine>::State, &PnState),
    legal: &[Vec<String>],
    rng: &mut R,
) -> (<Interpreter as StateMachine>::State, PnState) {
    let texts: Vec<&String> = legal.iter().map(|l| &l[rng.gen_range(0..l.len())]).collect();
    let ja: Vec<_> = texts.iter().enumerate().map(|(r, t)| find(a, sa, r, t)).collect();
    let jb: Vec<_> = texts.iter().enumerate().map(|(r, t)| find(b, sb, r, t)).collect();
    let (mut na, mut nb) = (sa.clone(), sb.clone());
    a.next_state(sa, &ja, &mut na);
    b.next_state(sb, &jb, &mut nb);
    (na, nb)
}

/// Plays random playouts on both engines and compares every state.
fn differential(g: &Game, playouts: usize, seed: u64) -> usize {
    differential_with(g, propnet(g), playouts, seed)
}

/// [`differential`] with a given propnet of the game.
fn differential_with(g: &Game, mut b: PropnetMachine, playouts: usize, seed: u64) -> usize {
    let mut a = Interpreter::new(g).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.roles(), b.roles());
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let mut states = 0;
    for p in 0..playouts {
        let (mut sa, mut sb) = (a.initial_state(), b.initial_state());
        for depth in 0..300 {
            let oa = observe(&mut a, &sa);
            let ob = observe(&mut b, &sb);
            assert_eq!(oa, ob, "{}: playout {p} depth {depth} differs", g.name);
            states += 1;
            if oa.1 || oa.3.iter().any(|l| l.is_empty()) {
                break;
            }
            (sa, sb) = random_step(&mut a, &mut b, (&sa, &sb), &oa.3, &mut rng);
        }
    }
    states
}

#[test]
fn every_gdl_game_agrees_with_the_interpreter_on_random_playouts() {
    for (i, file) in GAMES.iter().enumerate() {
        let states = differential(&game(file), 60, i as u64);
        assert!(states > 300, "{file}: only {states} states compared");
    }
}

#[test]
fn legal_sets_kept_by_hooks_and_guards_agree_with_the_interpreter() {
    for file in GAMES {
        let g = game(file);
        let b = build_net(&g, &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}"));
        // Every role on hooks (by default only roles with many moves are).
        let c = Compiled::with_scan_max(&b.net, b.grounding_terms, b.symbols, 0);
        if file == "tictactoe.kif" {
            // Each role's nine marks are legal only under `(true (control ?p))`: the guard.
            assert_eq!(c.guarded_count(), 18, "tic-tac-toe's mark moves are guarded");
            // What is left of each AND, `(true (cell ?m ?n b))`, is read directly (as are
            // the two noops' `(true (control ?q))`).
            let bases = (0..b.net.inputs.len())
                .filter(|&id| matches!(b.net.nodes[c.legal_ref(id).node()].kind, build::Kind::Base(_)))
                .count();
            assert_eq!(bases, 18 + 2, "guarded legal ANDs of one literal read that literal");
        }
        assert!(differential_with(&g, PropnetMachine::new(c), 20, 3) > 0, "{file}");
    }
}

/// Runs `b`'s own depth charges and replays the joint moves it reports on the interpreter:
/// every move must be legal there, and the playout must end in the interpreter's state, with
/// its terminal flag and depth. Afterwards `b` must still answer rightly for other states.
fn playouts_replay(g: &Game, mut b: PropnetMachine, playouts: usize, seed: u64) -> usize {
    let mut a = Interpreter::new(g).unwrap_or_else(|e| panic!("{e}"));
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let mut bufs = crate::machine::PlayoutBuffers::new(&mut b);
    let mut buf = Vec::new();
    let mut steps = 0;
    for p in 0..playouts {
        // Some playouts are cut short by a depth limit, some start one move in.
        let max_depth = if p % 3 == 1 { 2 } else { 1000 };
        let (mut sa, mut sb) = (a.initial_state(), b.initial_state());
        if p % 3 == 2 {
            let joint: Vec<u32> = (0..b.roles().len())
                .map(|r| {
                    b.legal_moves(&sb, r, &mut buf);
                    buf[rng.gen_range(0..buf.len())]
                })
                .collect();
            let ja: Vec<_> = joint.iter().enumerate().map(|(r, &m)| find(&mut a, &sa, r, &b.move_text(m))).collect();
            let (mut na, mut nb) = (sa.clone(), sb.clone());
            a.next_state(&sa, &ja, &mut na);
            b.next_state(&sb, &joint, &mut nb);
            (sa, sb) = (na, nb);
        }
        let (start_a, start) = (sa.clone(), sb.clone());
        let mut joints: Vec<Vec<u32>> = Vec::new();
        let r = b.depth_charge(&mut sb, &mut rng, max_depth, &mut bufs, |j| joints.push(j.to_vec()));
        assert_eq!(r.depth, joints.len());
        for joint in &joints {
            // `find` panics unless the move is legal in the interpreter's state.
            let ja: Vec<_> = joint.iter().enumerate().map(|(r, &m)| find(&mut a, &sa, r, &b.move_text(m))).collect();
            let mut na = sa.clone();
            a.next_state(&sa, &ja, &mut na);
            sa = na;
        }
        let (oa, ob) = (observe(&mut a, &sa), observe(&mut b, &sb));
        assert_eq!(oa, ob, "{}: playout {p} ends elsewhere", g.name);
        assert_eq!(r.terminal, oa.1, "{}: playout {p}", g.name);
        if !r.terminal {
            assert!(r.depth == max_depth || oa.3.iter().any(|l| l.is_empty()), "{}: playout {p} stopped early", g.name);
        }
        // The machine stepped in place; it must still answer for the state it started from.
        assert_eq!(observe(&mut a, &start_a), observe(&mut b, &start), "{}: playout {p}", g.name);
        steps += r.depth;
    }
    steps
}

#[test]
fn depth_charges_replay_on_the_interpreter() {
    for (i, file) in GAMES.iter().enumerate() {
        let g = game(file);
        let steps = playouts_replay(&g, propnet(&g), 30, 10 + i as u64);
        assert!(steps > 100, "{file}: only {steps} steps");
        // Every role's legal set on hooks.
        let b = build_net(&g, &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}"));
        let c = Compiled::with_scan_max(&b.net, b.grounding_terms, b.symbols, 0);
        assert!(playouts_replay(&g, PropnetMachine::new(c), 15, 20 + i as u64) > 50, "{file}");
    }
}

/// Far jumps to a state the search keeps coming back to restore a snapshot of the settled
/// network instead of propagating (see `machine::Snapshot`): as MCTS does, depth charges start
/// again and again from a root, which moves on every few rounds. The restored network must
/// answer as the interpreter does at the root, along the playouts from it and at the root's
/// children reached from a playout's end with the root anchored (restored, then the small
/// difference propagated), on every `gdl/` game and on a game with cycles.
#[test]
fn snapshot_restores_agree_with_the_interpreter() {
    let games: Vec<Game> = GAMES.iter().map(|f| game(f)).chain([inline(REACH)]).collect();
    for (i, g) in games.iter().enumerate() {
        let mut a = Interpreter::new(g).unwrap_or_else(|e| panic!("{e}"));
        let mut b = propnet(g);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(70 + i as u64);
        let mut bufs = crate::machine::PlayoutBuffers::new(&mut b);
        let (mut ra, mut rb) = (a.initial_state(), b.initial_state());
        for round in 0..60 {
            let root = observe(&mut a, &ra);
            assert_eq!(root, observe(&mut b, &rb), "{}: root of round {round}", g.name);
            if round % 8 == 7 {
                // The root moves on (back to the start where the game ends).
                if root.1 || root.3.iter().any(|l| l.is_empty()) {
                    (ra, rb) = (a.initial_state(), b.initial_state());
                } else {
                    (ra, rb) = random_step(&mut a, &mut b, (&ra, &rb), &root.3, &mut rng);
                }
                continue;
            }
            let (mut sa, mut sb) = (ra.clone(), rb.clone());
            let mut joints: Vec<Vec<u32>> = Vec::new();
            b.depth_charge(&mut sb, &mut rng, 1000, &mut bufs, |j| joints.push(j.to_vec()));
            for joint in &joints {
                let ja: Vec<_> =
                    joint.iter().enumerate().map(|(r, &m)| find(&mut a, &sa, r, &b.move_text(m))).collect();
                let mut na = sa.clone();
                a.next_state(&sa, &ja, &mut na);
                sa = na;
            }
            assert_eq!(observe(&mut a, &sa), observe(&mut b, &sb), "{}: playout of round {round}", g.name);
            if round % 2 == 1 && !root.1 && root.3.iter().all(|l| !l.is_empty()) {
                // As MCTS: the root anchored, then a child of it reached from a playout's end.
                b.anchor(&rb);
                b.depth_charge(&mut rb.clone(), &mut rng, 1000, &mut bufs, |_| {});
                let (ca, cb) = random_step(&mut a, &mut b, (&ra, &rb), &root.3, &mut rng);
                b.depth_charge(&mut rb.clone(), &mut rng, 1000, &mut bufs, |_| {});
                assert_eq!(
                    observe(&mut a, &ca),
                    observe(&mut b, &cb),
                    "{}: child of the root in round {round}",
                    g.name
                );
            }
        }
        assert!(b.snapshot_restores() >= 20, "{}: {} restores", g.name, b.snapshot_restores());
    }
}

#[test]
fn every_reachable_tictactoe_state_agrees_with_the_interpreter() {
    let g = game("tictactoe.kif");
    let mut a = Interpreter::new(&g).unwrap();
    let mut b = propnet(&g);
    let mut seen: HashMap<Vec<String>, ()> = HashMap::new();
    let mut queue = VecDeque::from([(a.initial_state(), b.initial_state())]);
    let mut terminal = 0;
    while let Some((sa, sb)) = queue.pop_front() {
        let oa = observe(&mut a, &sa);
        if seen.insert(oa.0.clone(), ()).is_some() {
            continue;
        }
        assert_eq!(oa, observe(&mut b, &sb));
        if oa.1 {
            terminal += 1;
            continue;
        }
        // Every joint move (x's moves × o's moves).
        for mx in &oa.3[0] {
            for mo in &oa.3[1] {
                let ja = [find(&mut a, &sa, 0, mx), find(&mut a, &sa, 1, mo)];
                let jb = [find(&mut b, &sb, 0, mx), find(&mut b, &sb, 1, mo)];
                let (mut na, mut nb) = (sa.clone(), sb.clone());
                a.next_state(&sa, &ja, &mut na);
                b.next_state(&sb, &jb, &mut nb);
                queue.push_back((na, nb));
            }
        }
    }
    assert_eq!((seen.len(), terminal), (5478, 958));
}

/// Reachability over edges the player toggles: a recursive relation over the state, so the
/// network has cycles (b→c→b) whose support comes and goes, and a legal move (`stop`) and
/// the goals read nodes inside the cycle.
pub(super) const REACH: &str = "
(role p)
(node a) (node b) (node c) (node d)
(init (edge a b)) (init (edge b c)) (init (edge c b)) (init (step 0))
(<= (legal p (toggle ?x ?y)) (node ?x) (node ?y) (distinct ?x ?y))
(<= (legal p stop) (reach d))
(<= (reach ?y) (true (edge a ?y)))
(<= (reach ?y) (reach ?x) (true (edge ?x ?y)))
(<= (next (edge ?x ?y)) (true (edge ?x ?y)) (not (does p (toggle ?x ?y))))
(<= (next (edge ?x ?y)) (does p (toggle ?x ?y)) (not (true (edge ?x ?y))))
(<= (next done) (does p stop))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8)
(succ 8 9) (succ 9 10) (succ 10 11) (succ 11 12)
(<= terminal (true done))
(<= terminal (true (step 12)))
(<= (goal p 100) (reach c) (not (reach d)))
(<= (goal p 50) (reach d))
(<= (goal p 0) (not (reach c)) (not (reach d)))
";

#[test]
fn recursion_through_the_state_keeps_the_least_fixpoint() {
    let g = inline(REACH);
    let b = propnet(&g);
    assert!(b.compiled().cycle_count() > 0, "the reach relation should make a cycle");
    differential(&g, 300, 7);
    // A line by hand: cut a→b, and the b↔c cycle loses its support.
    let mut b = b;
    let s0 = b.initial_state();
    assert_eq!(b.goal(&s0, 0), Some(100));
    let cut = find(&mut b, &s0, 0, "( toggle a b )");
    let mut s1 = s0.clone();
    b.next_state(&s0, &[cut], &mut s1);
    assert_eq!(b.goal(&s1, 0), Some(0), "b and c are no longer reachable");
    let add = find(&mut b, &s1, 0, "( toggle c d )");
    let mut s2 = s1.clone();
    b.next_state(&s1, &[add], &mut s2);
    assert_eq!(b.goal(&s2, 0), Some(0));
    let back = find(&mut b, &s2, 0, "( toggle a c )");
    let mut s3 = s2.clone();
    b.next_state(&s2, &[back], &mut s3);
    assert_eq!(b.goal(&s3, 0), Some(50), "a→c→d");
    let mut buf = Vec::new();
    b.legal_moves(&s3, 0, &mut buf);
    assert!(buf.iter().any(|&m| b.move_text(m) == "stop"));
    b.legal_moves(&s1, 0, &mut buf);
    assert!(!buf.iter().any(|&m| b.move_text(m) == "stop"));
}

#[test]
fn optimization_shrinks_the_network_and_folds_static_relations() {
    let g = game("tictactoe.kif");
    let built = build_net(&g, &Budget::default()).unwrap();
    let (raw, opt) = (&built.report.raw, &built.report.optimized);
    assert!(opt.components < raw.components, "{raw:?} -> {opt:?}");
    assert!(opt.edges < raw.edges);
    assert_eq!(opt.bases, 29, "9 cells × 3 marks + 2 control facts");
    assert_eq!(opt.inputs, 20, "9 marks and a noop per role");
    // Static relations (`succ` and the like in REACH) leave no gates behind.
    let built = build_net(&inline(REACH), &Budget::default()).unwrap();
    let step_bases = built.net.bases.iter().filter(|&&b| built.grounding_terms.args(b).len() == 1).count();
    assert_eq!(step_bases, 13, "step 0..12");
}

/// A base (`fixed`) that keeps its initial value in every reachable state, though states
/// without it exist.
const FIXED_BASE: &str = "(role p) (init (fixed)) (init (count 0))
    (<= (next (fixed)) (true (fixed)))
    (<= (next (count 1)) (true (count 0)))
    (<= (legal p go) (true (fixed)))
    (<= terminal (true (count 1)))
    (<= (goal p 100) (true (fixed)))";

#[test]
fn a_base_that_never_changes_becomes_a_constant() {
    let g = inline(FIXED_BASE);
    let built = build_net(&g, &Budget::default()).unwrap();
    let fixed = built.net.bases.iter().position(|&b| built.grounding_terms.to_string(b, &built.symbols) == "fixed");
    assert!(built.net.base_ref[fixed.unwrap()].is_const());
    assert_eq!(built.net.legal[0], Ref::TRUE, "go is always legal");
    let mut m = propnet(&g);
    let s0 = m.initial_state();
    assert!(!m.is_terminal(&s0));
    assert_eq!(m.goal(&s0, 0), Some(100));
    let go = find(&mut m, &s0, 0, "go");
    let mut s1 = s0.clone();
    m.next_state(&s0, &[go], &mut s1);
    assert_eq!(m.state_facts(&s1), ["( count 1 )", "fixed"]);
    assert!(m.is_terminal(&s1));
}

#[test]
fn the_one_round_analysis_folds_only_what_is_constant_in_every_state() {
    // Only the reachable-state analysis may fold `fixed`, and a later full optimize still does.
    let g = inline(FIXED_BASE);
    let budget = Budget::default();
    let raw = build::raw_net(&ground::ground(&g, &budget).unwrap(), &budget).unwrap();
    let one_round = build::optimize_with(&raw, &budget, false).unwrap();
    assert_ne!(one_round.legal[0], Ref::TRUE, "the legal of go still reads fixed");
    assert!(one_round.base_ref.iter().all(|r| !r.is_const()));
    let full = build::optimize(&one_round, &budget).unwrap();
    assert_eq!(full.legal[0], Ref::TRUE);
    assert_eq!(full.stats(), build::optimize(&raw, &budget).unwrap().stats());
}

#[test]
fn a_move_that_is_never_legal_is_dropped() {
    let g = inline(
        "(role p) (init (s 0)) (ok)
         (<= (legal p (go ?x)) (true (s ?x)))
         (<= (legal p never) (true (s 0)) (not (ok)))
         (<= (next (s 1)) (does p (go 0)))
         (<= (next (s 0)) (does p never))
         (<= terminal (true (s 1)))
         (<= (goal p 100) (true (s 1)))",
    );
    let built = build_net(&g, &Budget::default()).unwrap();
    let names: Vec<String> =
        built.net.inputs.iter().map(|&(_, m)| built.grounding_terms.to_string(m, &built.symbols)).collect();
    let k = names.iter().position(|n| n == "never").expect("never is in the domain");
    assert_eq!(built.net.input_ref[k], Ref::FALSE);
    assert_eq!(built.net.legal[k], Ref::FALSE);
}

#[test]
fn many_fact_relations_build_within_a_start_clock() {
    // Tic-tac-toe with 50k unread fact relations, as a hostile START sends: each relation is
    // a component of its own, and planning each one's joins cost a map of all relations
    // (quadratic: about 30 s here before). Now linear: well under the 10 s allowed.
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/tictactoe.kif")).unwrap();
    let facts: String = (0..50_000).map(|i| format!("(f{i} a{i}) ")).collect();
    let g = Game::parse("many", &format!("{text}\n{facts}")).unwrap();
    let budget =
        Budget { deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(10)), ..Budget::default() };
    let (mut m, _) = build(&g, &budget).expect("built within the budget");
    let s = m.initial_state();
    assert!(!m.is_terminal(&s));
}

#[test]
fn the_budget_stops_a_build_cleanly() {
    let g = game("connect4.kif");
    let past = Budget { deadline: Some(std::time::Instant::now()), ..Budget::default() };
    assert!(matches!(build(&g, &past), Err(GroundError::Timeout(_))));
    let tiny = Budget { max_instances: 10, ..Budget::default() };
    match build(&g, &tiny) {
        Err(GroundError::TooLarge(msg)) => assert!(msg.contains("rule instances"), "{msg}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("built with 10 instances"),
    }
}

#[test]
fn dot_output_names_propositions() {
    let g = game("tictactoe.kif");
    let built = build_net(&g, &Budget::default()).unwrap();
    let mut out = Vec::new();
    write_dot(&built.net, &built.grounding_terms, &built.symbols, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("digraph propnet {"));
    assert!(text.contains("label=\"( cell 1 1 b )\", shape=box"));
    assert!(text.contains("label=\"legal x ( mark 2 2 )\""));
    assert!(text.trim_end().ends_with('}'));
}

#[test]
fn clones_run_independently() {
    let g = game("connect4.kif");
    let mut a = propnet(&g);
    let mut b = a.clone();
    let s0 = a.initial_state();
    let mut buf = Vec::new();
    a.legal_moves(&s0, 0, &mut buf);
    let mut s1 = s0.clone();
    let noop = find(&mut a, &s0, 1, "noop");
    a.next_state(&s0, &[buf[0], noop], &mut s1);
    // b has not seen s1; asking it about s0 and s1 gives the same answers as a.
    assert_eq!(observe(&mut b, &s1), observe(&mut a, &s1));
    assert_eq!(observe(&mut b, &s0), observe(&mut a, &s0));
}

/// A walk along a line of ten squares. `(blocked ?a ?b ?c ?d)` is read only under
/// negation, with every argument bound; listed in full it has 10 × 10 × 10 instances (every
/// `at` square, every `?c ?d`), of which the legal rule names ten.
const DEMAND: &str = "
(role p)
(num 0) (num 1) (num 2) (num 3) (num 4) (num 5) (num 6) (num 7) (num 8) (num 9)
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8) (succ 8 9)
(closed 6)
(init (at 0))
(init (key 0))
(<= (legal p (step ?y)) (true (at ?x)) (succ ?x ?y) (not (blocked ?x ?y ?x ?x)))
(<= (legal p wait) (true (at ?x)))
(<= (next (at ?y)) (does p (step ?y)))
(<= (next (at ?x)) (does p wait) (true (at ?x)))
(<= (next (key ?y)) (true (key ?x)) (succ ?x ?y))
(<= (next (key 9)) (true (key 9)))
(<= (blocked ?a ?b ?c ?d) (true (at ?a)) (closed ?b) (num ?c) (num ?d) (not (true (key 9))))
(<= terminal (true (at 9)))
(<= terminal (true (key 9)) (true (at 0)))
(<= (goal p 100) (true (at 9)))
(<= (goal p 0) (not (true (at 9))))
";

#[test]
fn a_relation_read_only_under_negation_is_instantiated_on_demand() {
    let g = inline(DEMAND);
    // Listed in full, `blocked` alone would have a thousand instances.
    let small = Budget { max_instances: 300, ..Budget::default() };
    let built = build_net(&g, &small).unwrap_or_else(|e| panic!("{e}"));
    assert!(built.report.instances < 300, "{}", built.report.instances);
    differential(&g, 200, 11);
    // The door at 6 opens once the key has counted to 9.
    let mut m = propnet(&g);
    let mut s = m.initial_state();
    for y in 1..=5 {
        let mv = find(&mut m, &s, 0, &format!("( step {y} )"));
        let mut t = s.clone();
        m.next_state(&s, &[mv], &mut t);
        s = t;
    }
    let mut buf = Vec::new();
    m.legal_moves(&s, 0, &mut buf);
    assert!(!buf.iter().any(|&mv| m.move_text(mv) == "( step 6 )"), "blocked while the key counts");
}

/// Four players pick numbers; `total` sums them through an addition table. The rule has
/// 6⁴ instances as written, a few dozen per step once its local variables are eliminated.
const SUMS: &str = "
(role p) (role q) (role r) (role s)
(small 0) (small 1) (small 2) (small 3) (small 4) (small 5)
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8)
(succ 8 9) (succ 9 10) (succ 10 11) (succ 11 12) (succ 12 13) (succ 13 14) (succ 14 15)
(succ 15 16) (succ 16 17) (succ 17 18) (succ 18 19) (succ 19 20)
(<= (plus ?x 0 ?x) (succ ?x ?y))
(<= (plus ?x 0 ?x) (succ ?y ?x))
(<= (plus ?x ?y ?z) (succ ?y0 ?y) (plus ?x ?y0 ?z0) (succ ?z0 ?z))
(<= (legal ?w (pick ?n)) (role ?w) (small ?n) (not (true done)))
(<= (legal ?w noop) (role ?w) (true done))
(<= (next (picked ?w ?n)) (does ?w (pick ?n)))
(<= (next done) (does p (pick ?n)))
(<= (total ?t) (true (picked p ?a)) (true (picked q ?b)) (plus ?a ?b ?s) (true (picked r ?c)) (plus ?s ?c ?u)
    (true (picked s ?d)) (plus ?u ?d ?t))
(<= (goal ?w 100) (role ?w) (total ?t) (plus ?x ?x ?t))
(<= (goal ?w 0) (role ?w) (not (even)))
(<= even (total ?t) (plus ?x ?x ?t))
(<= terminal (true done))
";

#[test]
fn eliminating_local_variables_keeps_the_meaning_and_shrinks_the_grounding() {
    let g = inline(SUMS);
    let plain = build_net_with(&g, &Budget::default(), Some(false)).unwrap();
    let elim = build_net_with(&g, &Budget::default(), Some(true)).unwrap();
    assert!(elim.report.instances < plain.report.instances, "{} vs {}", elim.report.instances, plain.report.instances);
    // Grounded by default with a budget only the eliminated rules fit in.
    let budget = Budget { max_instances: elim.report.instances, ..Budget::default() };
    assert!(matches!(build_net_with(&g, &budget, Some(false)), Err(GroundError::TooLarge(_))));
    let (mut m, _) = build(&g, &budget).unwrap_or_else(|e| panic!("{e}"));
    differential_with(&g, m.clone(), 300, 5);
    let mut a = Interpreter::new(&g).unwrap();
    let (s0, t0) = (m.initial_state(), a.initial_state());
    for (x, y, z, w) in [(1, 2, 3, 0), (0, 0, 5, 5), (5, 5, 5, 4), (4, 1, 0, 3)] {
        let mv = |m: &mut PropnetMachine, r: usize, n: u32| find(m, &s0, r, &format!("( pick {n} )"));
        let joint = [mv(&mut m, 0, x), mv(&mut m, 1, y), mv(&mut m, 2, z), mv(&mut m, 3, w)];
        let mut s1 = s0.clone();
        m.next_state(&s0, &joint, &mut s1);
        let mva = |a: &mut Interpreter, r: usize, n: u32| find(a, &t0, r, &format!("( pick {n} )"));
        let joint = [mva(&mut a, 0, x), mva(&mut a, 1, y), mva(&mut a, 2, z), mva(&mut a, 3, w)];
        let mut t1 = t0.clone();
        a.next_state(&t0, &joint, &mut t1);
        let want = if (x + y + z + w) % 2 == 0 { 100 } else { 0 };
        assert_eq!(m.goal(&s1, 0), Some(want), "{x}+{y}+{z}+{w}");
        assert_eq!(observe(&mut m, &s1), observe(&mut a, &t1));
    }
}

/// Goals read through gates nothing else reads (here, which lamps are lit when the clock
/// runs out): those gates are left out of propagation and evaluated when a goal is asked.
const LAMPS: &str = "
(role p) (role q)
(init (step 0))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(lamp a) (lamp b) (lamp c) (lamp d)
(<= (legal ?r (press ?l)) (role ?r) (lamp ?l))
(<= (legal ?r wait) (role ?r))
(<= (next (lit ?l)) (does ?r (press ?l)) (not (true (lit ?l))))
(<= (next (lit ?l)) (true (lit ?l)) (not (pressed ?l)))
(<= (pressed ?l) (does ?r (press ?l)))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(<= terminal (true (step 4)))
(<= pair (true (lit a)) (true (lit b)))
(<= dark (not (true (lit c))) (not (true (lit d))))
(<= good pair (not (true (lit d))))
(<= good dark (true (lit a)))
(<= (goal p 100) good)
(<= (goal p 0) (not good))
(<= (goal q 100) (not good) (true (lit b)))
(<= (goal q 50) (not good) (not (true (lit b))))
(<= (goal q 0) good)
";

#[test]
fn goals_read_through_lazy_gates_agree_with_the_interpreter() {
    let g = inline(LAMPS);
    let b = build_net(&g, &Budget::default()).unwrap();
    let c = Compiled::new(&b.net, b.grounding_terms, b.symbols);
    assert!(c.lazy_count() >= 3, "pair, dark and good only reach goals: {} lazy gates", c.lazy_count());
    assert!(differential_with(&g, PropnetMachine::new(c), 200, 5) > 800);
    assert!(playouts_replay(&g, propnet(&g), 60, 6) > 100);
}

/// A strip of four cells where each side walks one piece in turn; the side not moving plays
/// `noop`. The frame axiom reads "some move that touches neither this cell", an OR over
/// most of each role's moves.
const STRIP: &str = "
(role white) (role black)
(init (control white)) (init (cell 1 white)) (init (cell 4 black)) (init (step 0))
(adj 1 2) (adj 2 3) (adj 3 4) (adj 2 1) (adj 3 2) (adj 4 3)
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)
(<= (legal ?p (move ?x ?y)) (true (control ?p)) (true (cell ?x ?p)) (adj ?x ?y) (not (true (cell ?y ?p))))
(<= (legal white noop) (true (control black)))
(<= (legal black noop) (true (control white)))
(<= (next (cell ?y ?p)) (does ?p (move ?x ?y)))
(<= (next (cell ?c ?p)) (true (cell ?c ?p)) (role ?r) (does ?r (move ?x ?y)) (distinct ?c ?x) (distinct ?c ?y))
(<= (next (control white)) (true (control black)))
(<= (next (control black)) (true (control white)))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(<= terminal (true (step 6)))
(<= terminal (true (cell 4 white)))
(<= terminal (true (cell 1 black)))
(<= (goal white 100) (true (cell 4 white)))
(<= (goal white 0) (not (true (cell 4 white))))
(<= (goal black 100) (true (cell 1 black)))
(<= (goal black 0) (not (true (cell 1 black))))
";

#[test]
fn move_complements_leave_out_off_turn_moves() {
    let g = inline(STRIP);
    let b = build_net(&g, &Budget::default()).unwrap();
    let net = &b.net;
    let mut readers = vec![0usize; net.nodes.len()];
    for n in &net.nodes {
        for r in &n.inputs {
            readers[r.node()] += 1;
        }
    }
    // A complement of "moves not touching cell c" would read noop (played every other turn)
    // in every cell's frame condition; the positive form never reads it.
    for (k, &(_, m)) in net.inputs.iter().enumerate() {
        if b.grounding_terms.to_string(m, &b.symbols) == "noop" {
            let r = net.input_ref[k];
            assert!(r.is_const() || readers[r.node()] == 0, "noop has {} readers", readers[r.node()]);
        }
    }
    assert!(differential(&g, 100, 8) > 300);
    assert!(playouts_replay(&g, propnet(&g), 30, 9) > 50);
}

/// A shift register of 70 cells: each cell's next value is the cell before it, so a base
/// node gives the next value of another base whose bit may lie in the next state word.
fn register() -> Game {
    let mut text = String::from(
        "(role p) (init (cell 0)) (init (step 0))
         (<= (legal p (push 1)) (true (cell 0)))
         (legal p (push 0))
         (<= (next (cell 0)) (does p (push 1)))
         (<= (next (cell ?j)) (true (cell ?i)) (next_index ?i ?j))
         (<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
         (<= terminal (true (step 90)))
         (<= (goal p 100) (true (cell 69)))
         (<= (goal p 0) (not (true (cell 69))))\n",
    );
    for i in 0..69 {
        text.push_str(&format!("(next_index {i} {})\n", i + 1));
    }
    for i in 0..90 {
        text.push_str(&format!("(succ {i} {})\n", i + 1));
    }
    inline(&text)
}

#[test]
fn depth_charges_carry_next_values_across_state_words() {
    let g = register();
    let b = build_net(&g, &Budget::default()).unwrap();
    assert!(b.net.bases.len() > 128, "{} bases", b.net.bases.len());
    assert!(playouts_replay(&g, propnet(&g), 30, 11) > 1000);
}

/// The benchmark games of the public corpus (when `../shared` is there, as in CI): the
/// depth charges `bench` times must play real games.
#[test]
fn corpus_depth_charges_replay_on_the_interpreter() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/games");
    if !dir.is_dir() {
        eprintln!("../shared/games not found: skipped");
        return;
    }
    for name in ["ticTacToe", "connectFour", "breakthrough", "nineBoardTicTacToe", "pentago", "reversi", "hex"] {
        let g = Game::load(&dir.join(format!("{name}.kif"))).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(playouts_replay(&g, propnet(&g), 6, 1) > 20, "{name}");
    }
}

#[test]
fn turn_taking_is_recognised_only_where_the_turn_provably_alternates() {
    let moves = |g: &Game| {
        let net = build_net(g, &Budget::default()).unwrap().net;
        let (guard, guarded) = machine::legal_guards(&net);
        build::turn_moves(&net, &guard, &guarded).map(|m| m.len())
    };
    assert_eq!(moves(&inline(STRIP)), Some(12), "each side's six walks");
    assert_eq!(moves(&game("tictactoe.kif")), Some(18));
    assert_eq!(moves(&inline(LAMPS)), None, "no guard: both press at once");
    // White may keep the turn: the guards' next values are no longer a permutation.
    let again = STRIP.replace(
        "(<= (next (control black)) (true (control white)))",
        "(<= (next (control black)) (true (control white)) (not (does white (move 1 2))))
         (<= (next (control white)) (does white (move 1 2)))",
    );
    assert_eq!(moves(&inline(&again)), None);
    assert!(differential(&inline(&again), 100, 12) > 300);
    // The frame conditions of the strip read only the moves that touch their cell.
    let b = build_net(&inline(STRIP), &Budget::default()).unwrap();
    let widest = b.net.nodes.iter().map(|n| n.inputs.len()).max().unwrap();
    assert!(widest <= 4, "an OR of {widest} inputs is left");
}

/// Pieces on a 3 by 3 board, one cell flipped per step. `company` (a piece on some other
/// cell, through the two-rule disequality `diff2`), `other` (through `distinct`) and
/// `row_seen` (an `or` of two candidates) are exclusion rules; `seen` is not (its candidates
/// depend on the excluded value), nor is `leaning`: `skew` looks like `diff2` but its rules
/// filter differently, so it must not be taken for a disequality.
const EXCLUDE: &str = "
(role p)
(coord 1) (coord 2) (coord 3) (small 1)
(init (on 1 1)) (init (on 2 3)) (init (mark 3 2)) (init (step 0))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8)
(<= (diff2 ?x1 ?y1 ?x2 ?y2) (distinct ?x1 ?x2) (coord ?x1) (coord ?y1) (coord ?x2) (coord ?y2))
(<= (diff2 ?x1 ?y1 ?x2 ?y2) (distinct ?y1 ?y2) (coord ?x1) (coord ?y1) (coord ?x2) (coord ?y2))
(<= (skew ?x1 ?y1 ?x2 ?y2) (distinct ?x1 ?x2) (coord ?x1) (coord ?y1) (coord ?x2) (coord ?y2))
(<= (skew ?x1 ?y1 ?x2 ?y2) (distinct ?y1 ?y2) (small ?x1) (coord ?y1) (coord ?x2) (coord ?y2))
(<= (legal p (flip ?x ?y)) (coord ?x) (coord ?y))
(<= (next (on ?x ?y)) (does p (flip ?x ?y)) (not (true (on ?x ?y))))
(<= (next (on ?x ?y)) (true (on ?x ?y)) (not (does p (flip ?x ?y))))
(<= (next (mark ?x ?y)) (true (mark ?x ?y)))
(<= (next (mark ?x ?y)) (does p (flip ?x ?y)) (true (on ?x ?y)))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(<= (company ?x ?y) (true (on ?u ?v)) (diff2 ?x ?y ?u ?v))
(<= (lonely ?x ?y) (coord ?x) (coord ?y) (not (company ?x ?y)))
(<= (next (lit ?x ?y)) (lonely ?x ?y))
(<= (other ?c) (coord ?c) (true (on ?d ?e)) (distinct ?c ?d))
(<= (next (oth ?c)) (other ?c))
(<= (seen ?x) (coord ?x) (or (true (on ?u ?x)) (true (mark ?u ?x))) (distinct ?x ?u))
(<= (next (saw ?x)) (seen ?x))
(<= (row_seen ?x) (coord ?x) (or (true (on ?u ?v)) (true (mark ?u ?v))) (distinct ?x ?u))
(<= (next (rsaw ?x)) (row_seen ?x))
(<= (leaning ?x ?y) (true (mark ?u ?v)) (skew ?x ?y ?u ?v))
(<= (next (lean ?x ?y)) (leaning ?x ?y))
(<= terminal (true (step 8)))
(<= (goal p 100) (true (on 2 2)))
(<= (goal p 0) (not (true (on 2 2))))
";

#[test]
fn exclusion_rules_keep_the_meaning() {
    let g = inline(EXCLUDE);
    let flats = crate::gdl::flatten(&g.rules).unwrap();
    let mut symbols = g.symbols.clone();
    let (_, excls) = super::exclude::exclude_chains(flats, &mut symbols);
    // company, other, row_seen (its two disjuncts share one).
    assert_eq!(excls.len(), 3, "{excls:?}");
    assert!(differential(&g, 80, 21) > 300);
}

/// Nine cells in a row; `clear ?x ?y ?ig` ("the way from ?x to ?y is clear, ignoring a wall
/// at ?ig") is read only with `?ig` = 5, so its free `?ig` should not range over every cell.
const GUARD: &str = "
(role p)
(cell 1) (cell 2) (cell 3) (cell 4) (cell 5) (cell 6) (cell 7) (cell 8) (cell 9)
(succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8) (succ 8 9)
(init (at 1)) (init (wall 5)) (init (wall 7))
(<= (clear ?x ?x ?ig) (cell ?x) (cell ?ig))
(<= (clear ?x ?y ?ig) (succ ?x ?z) (not (true (wall ?z))) (clear ?z ?y ?ig))
(<= (clear ?x ?y ?ig) (succ ?x ?ig) (clear ?ig ?y ?ig))
(<= (legal p (go ?x ?y)) (true (at ?x)) (clear ?x ?y 5) (distinct ?x ?y))
(<= (legal p (knock ?z)) (true (wall ?z)))
(<= (legal p stay) (true (at ?x)))
(<= (next (at ?y)) (does p (go ?x ?y)))
(<= (next (at ?x)) (true (at ?x)) (not (moved)))
(<= moved (does p (go ?x ?y)))
(<= (next (wall ?z)) (true (wall ?z)) (not (does p (knock ?z))))
(<= terminal (true (at 9)))
(<= (goal p 100) (true (at 9)))
(<= (goal p 0) (not (true (at 9))))
";

#[test]
fn guards_restrict_relations_to_the_atoms_read_and_static_literals_are_left_out() {
    let g = inline(GUARD);
    let gr = ground::ground(&g, &Budget::default()).unwrap();
    let clear = g.symbols.get("clear").unwrap();
    let five = gr.terms.lookup(g.symbols.get("5").unwrap(), &[]).unwrap();
    let mut heads = 0;
    for r in &gr.rules {
        if gr.terms.functor(r.head) == clear {
            heads += 1;
            assert_eq!(gr.terms.args(r.head)[2], five, "clear is read only with ?ig = 5");
        }
    }
    assert!(heads > 0);
    // `succ` and `cell` hold wherever an instance reads them: left out of ground bodies, and
    // nothing else reads them, so their facts are not instantiated either.
    let (succ, cell) = (g.symbols.get("succ").unwrap(), g.symbols.get("cell").unwrap());
    let static_atom = |t| [succ, cell].contains(&gr.terms.functor(t));
    assert!(!gr.lits.iter().any(|l| static_atom(l.atom)), "static literals left out");
    assert!(!gr.rules.iter().any(|r| static_atom(r.head)), "unread static relations not instantiated");
    assert!(differential(&g, 60, 8) > 100);
}

/// Two players mark cells in turn, any cell any number of times; each mark is recorded with
/// the step it was made at, and each step with whose turn it was: `(at ?k ?c)` and
/// `(owner ?k ?r)` are ANDs with the one-hot `(step ?k)`, as in hex.
fn steps_game() -> String {
    let mut text = String::from(
        "(role p) (role q) (init (control p)) (init (step 1))
         (cell c1) (cell c2) (cell c3)
         (<= (legal ?r (mark ?c)) (true (control ?r)) (cell ?c))
         (<= (legal p noop) (true (control q)))
         (<= (legal q noop) (true (control p)))
         (<= (next (at ?k ?c)) (does ?r (mark ?c)) (true (step ?k)))
         (<= (next (at ?k ?c)) (true (at ?k ?c)))
         (<= (next (owner ?k ?r)) (true (step ?k)) (true (control ?r)))
         (<= (next (owner ?k ?r)) (true (owner ?k ?r)))
         (<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
         (<= (next (control p)) (true (control q)))
         (<= (next (control q)) (true (control p)))
         (<= early (true (at 1 ?c)) (true (at 2 ?c)))
         (<= terminal (true (step 30)))
         (<= (goal p 100) early) (<= (goal p 0) (not early))
         (<= (goal q 0) early) (<= (goal q 100) (not early))\n",
    );
    for k in 1..30 {
        text.push_str(&format!("(succ {k} {})\n", k + 1));
    }
    text
}

#[test]
fn step_counters_and_turns_are_found_as_one_hot_groups() {
    let b = build_net(&inline(&steps_game()), &Budget::default()).unwrap();
    let net = &b.net;
    let m = PropnetMachine::new(Compiled::new(net, b.grounding_terms.clone(), b.symbols.clone()));
    // The fact a base node stands for.
    let text = |n: u32| {
        let b = net.base_ref.iter().position(|r| !r.is_const() && r.node() == n as usize).expect("a base node");
        let mut bits = vec![0u64; net.bases.len().div_ceil(64)];
        bits[b / 64] |= 1 << (b % 64);
        m.state_facts(&PnState { bits }).remove(0)
    };
    let mut groups: Vec<Vec<String>> = select::one_hot_groups(net)
        .iter()
        .map(|g| {
            let mut v: Vec<String> = g.iter().map(|&n| text(n)).collect();
            v.sort();
            v
        })
        .collect();
    groups.sort();
    let mut steps: Vec<String> = (1..=30).map(|k| format!("( step {k} )")).collect();
    steps.sort();
    assert_eq!(groups, vec![vec!["( control p )".to_string(), "( control q )".to_string()], steps]);
    // A counter two of whose members hold initially is no group, nor one whose members are
    // copied twice (`(echo k)` holds with `(step k + 1)`).
    for bad in [
        steps_game().replace("(init (step 1))", "(init (step 1)) (init (step 3))"),
        format!("{} (<= (next (echo ?k)) (true (step ?k)))", steps_game()),
    ] {
        let net = build_net(&inline(&bad), &Budget::default()).unwrap().net;
        let groups = select::one_hot_groups(&net);
        assert!(groups.iter().all(|g| g.len() == 2), "only the turn is left: {groups:?}");
    }
}

/// `g`'s machine agrees with the interpreter on playouts and depth charges, and with a
/// machine without selected edges in arbitrary states (where several members of a group
/// may hold: the bookkeeping must not rest on the groups' being one-hot or sparse).
fn selection_keeps_the_meaning(g: &Game, seed: u64) {
    let b = build_net(g, &Budget::default()).unwrap();
    let c = Compiled::new(&b.net, b.grounding_terms.clone(), b.symbols.clone());
    assert!(differential_with(g, PropnetMachine::new(c), 40, seed) > 100);
    assert!(playouts_replay(g, propnet(g), 30, seed) > 100);
    let mut sel = propnet(g);
    let mut plain =
        PropnetMachine::new(Compiled::without_selection(&b.net, b.grounding_terms.clone(), b.symbols.clone()));
    assert_eq!(plain.compiled().selected_counts().0, 0);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let (words, nb) = (b.net.bases.len().div_ceil(64), b.net.bases.len());
    let roles = b.net.roles.len();
    let mut buf = Vec::new();
    for _ in 0..500 {
        let mut s = PnState { bits: (0..words).map(|_| rng.gen::<u64>() & rng.gen::<u64>()).collect() };
        if nb % 64 != 0 {
            s.bits[words - 1] &= (1 << (nb % 64)) - 1;
        }
        assert_eq!(observe(&mut sel, &s), observe(&mut plain, &s));
        let mut joint = Vec::new();
        for r in 0..roles {
            plain.legal_moves(&s, r, &mut buf);
            if buf.is_empty() {
                break;
            }
            joint.push(buf[rng.gen_range(0..buf.len())]);
        }
        if joint.len() == roles {
            let (mut na, mut nb) = (s.clone(), s.clone());
            sel.next_state(&s, &joint, &mut na);
            plain.next_state(&s, &joint, &mut nb);
            assert_eq!(na, nb);
        }
    }
}

#[test]
fn edges_selected_by_one_hot_groups_keep_the_meaning() {
    let g = inline(&steps_game());
    let c = propnet(&g);
    let (edges, families, _) = c.compiled().selected_counts();
    // Each cell's mark and each role's turn, selected by the step.
    assert_eq!(families, 3 + 2, "{edges} edges");
    assert_eq!(edges, 5 * 30, "{edges} edges in {families} families");
    selection_keeps_the_meaning(&g, 5);
}

#[test]
fn edges_selected_by_sparse_groups_keep_the_meaning() {
    let g = game("hex4.kif");
    let b = build_net(&g, &Budget::default()).unwrap();
    let one_hot = select::one_hot_groups(&b.net).len();
    let c = propnet(&g);
    let (edges, families, groups) = c.compiled().selected_counts();
    assert!(groups > one_hot, "sparse groups of `(in ?k ?r ?c)`: {groups} groups, {one_hot} one-hot");
    assert!(edges > 0 && families > 0);
    selection_keeps_the_meaning(&g, 6);
}

#[test]
fn selection_follows_the_profile() {
    let b = build_net(&inline(&steps_game()), &Budget::default()).unwrap();
    let n = b.net.nodes.len();
    let compile = |p: &select::Profile| {
        Compiled::with_profile(&b.net, b.grounding_terms.clone(), b.symbols.clone(), p).selected_counts().0
    };
    // Moves change every phase and steps seldom: every family pays.
    let mut p = select::Profile { on: vec![0.01; n], flips: vec![0.0; n] };
    for (i, node) in b.net.nodes.iter().enumerate() {
        p.flips[i] = if matches!(node.kind, build::Kind::Base(_)) { 0.001 } else { 1.0 };
    }
    p.flips.iter_mut().zip(&b.net.nodes).for_each(|(f, n)| {
        if matches!(n.kind, build::Kind::Input(_)) {
            *f = 1.0;
        }
    });
    let all = compile(&p);
    assert!(all >= 3 * 30, "{all} edges");
    // Steps change every phase and nothing else does: nothing pays.
    for (i, node) in b.net.nodes.iter().enumerate() {
        p.flips[i] = if matches!(node.kind, build::Kind::Base(_)) { 1.0 } else { 0.001 };
    }
    assert_eq!(compile(&p), 0);
}

#[test]
fn no_profile_when_the_deadline_is_near() {
    let b = build_net(&game("hex4.kif"), &Budget::default()).unwrap();
    let compile = |d| Compiled::with_deadline(&b.net, b.grounding_terms.clone(), b.symbols.clone(), d);
    assert!(compile(None).selected_counts().0 > 0);
    let soon = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    assert!(compile(Some(soon)).selected_counts().0 > 0);
    assert_eq!(compile(Some(std::time::Instant::now())).selected_counts().0, 0, "past the deadline");
}

#[test]
fn network_components_come_dependencies_first_and_only_from_the_roots() {
    use super::build::node_sccs;
    let r = |n: u32| Ref::new(n, false);
    // 0 reads 1; 1 and 2 read each other; 2 reads 3; 4 reads 0 but is no root's dependency.
    let succ: Vec<Vec<Ref>> = vec![vec![r(1)], vec![r(2)], vec![r(1), r(3).not()], vec![], vec![r(0)]];
    let comps = node_sccs(succ.len(), [0], |v| &succ[v]);
    let got: Vec<Vec<u32>> = comps
        .iter()
        .map(|c| {
            let mut c = c.to_vec();
            c.sort_unstable();
            c
        })
        .collect();
    assert_eq!(got, vec![vec![3], vec![1, 2], vec![0]]);
    let cyclic: Vec<bool> = (0..comps.len()).map(|c| comps.is_cyclic(c)).collect();
    assert_eq!(cyclic, vec![false, true, false]);
    let all = node_sccs(succ.len(), 0..succ.len(), |v| &succ[v]);
    assert_eq!(all.len(), 4);
    assert_eq!(all.get(3), &[4]);
    // A single node that reads itself (negated or not) is a cycle; one reading another is not.
    let looped: Vec<Vec<Ref>> = vec![vec![r(1), r(0).not()], vec![r(2)], vec![]];
    let comps = node_sccs(looped.len(), [0], |v| &looped[v]);
    let flags: Vec<(Vec<u32>, bool)> = (0..comps.len()).map(|c| (comps.get(c).to_vec(), comps.is_cyclic(c))).collect();
    assert_eq!(flags, vec![(vec![2], false), (vec![1], false), (vec![0], true)]);
}

/// A rule with many instances per head whose locals occur under negation (`?z` in
/// `blocked_by`): eliminating local variables cannot shrink it.
const NEGATED_LOCALS: &str = "
(role p)
(cell 1) (cell 2) (cell 3) (cell 4) (cell 5) (cell 6)
(init (at 1)) (init (wall 2 3)) (init (wall 4 5))
(<= (legal p (go ?x)) (cell ?x) (true (at ?y)) (cell ?z) (not (true (wall ?y ?z))) (not (true (wall ?z ?x))))
(<= (legal p stay) (true (at ?y)))
(<= (next (at ?x)) (does p (go ?x)))
(<= (next (at ?y)) (does p stay) (true (at ?y)))
(<= (next (wall ?a ?b)) (true (wall ?a ?b)))
(<= terminal (true (at 6)))
(<= (goal p 100) (true (at 6)))
(<= (goal p 0) (not (true (at 6))))
";

#[test]
fn rules_too_large_as_written_are_eliminated_only_where_that_shrinks_them() {
    // SUMS's `total` shrinks to a few instances per sum: put aside for its eliminated form.
    let sums = inline(SUMS);
    let (_, eliminated) = ground::ground_first(&sums, &Budget::default(), 100).unwrap();
    assert!(eliminated, "sums are grounded with their locals eliminated");
    // Here it cannot shrink: the analysis as written goes on, and the grounding is that of
    // the rules as written.
    let g = inline(NEGATED_LOCALS);
    let plain = ground::ground_with(&g, &Budget::default(), false).unwrap();
    let (gr, eliminated) = ground::ground_first(&g, &Budget::default(), 20).unwrap();
    assert!(!eliminated, "grounded as written");
    assert!(plain.rules.len() > 20);
    assert_eq!(gr.rules.len(), plain.rules.len());
    assert!(differential(&g, 60, 3) > 100);
}

/// `blocked` is read only under negation, for the cells `legal` asks about (demand), and
/// `near` has several instances per head (`?k`, which a negative literal ties to `?a`: the
/// rule cannot be split): the relaxed game's head and demand rules lose their locals
/// (`near`'s becomes `(edge ?x ?k) (true (wall ?k))`, a part over `?x`), and the instances
/// must still be all of them.
const RELAXED_LOCALS: &str = "
(role p)
(cell 1) (cell 2) (cell 3) (cell 4) (cell 5)
(edge 1 2) (edge 2 3) (edge 3 4) (edge 4 5) (edge 2 4) (edge 1 3)
(init (at 1)) (init (wall 3)) (init (mark 5 5))
(<= (near ?x ?a) (true (at ?a)) (edge ?x ?k) (true (wall ?k)) (not (true (mark ?k ?a))))
(<= (next (mark ?k ?a)) (true (mark ?k ?a)))
(<= (blocked ?y) (edge ?y ?k) (true (wall ?k)) (edge ?k ?m) (true (wall ?m)))
(<= (blocked ?y) (near ?y ?a) (true (at ?a)))
(<= (legal p (go ?y)) (true (at ?x)) (edge ?x ?y) (not (blocked ?y)))
(<= (legal p (build ?k)) (cell ?k) (not (true (wall ?k))) (not (true (at ?k))))
(<= (legal p stay) (true (at ?x)))
(<= (next (at ?y)) (does p (go ?y)))
(<= (next (at ?x)) (true (at ?x)) (not (moved)))
(<= moved (does p (go ?y)))
(<= (next (wall ?k)) (does p (build ?k)))
(<= (next (wall ?k)) (true (wall ?k)))
(<= terminal (true (at 5)))
(<= (goal p 100) (true (at 5)))
(<= (goal p 0) (not (true (at 5))))
";

#[test]
fn relaxed_rules_without_their_locals_keep_every_instance() {
    let g = inline(RELAXED_LOCALS);
    let gr = ground::ground_with(&g, &Budget::default(), false).unwrap();
    let sym = |s: &str| g.symbols.get(s).unwrap();
    let count = |rel: &str| gr.rules.iter().filter(|r| gr.terms.functor(r.head) == sym(rel)).count();
    // `legal` asks about the cells with an edge into them, 2 to 5; a wall may be built on
    // any cell, and `at` may hold for any. `blocked`'s first rule: the paths y -> k -> m from
    // those (2-3-4, 2-4-5 and 3-4-5); its second, the cells with an edge out (2, 3, 4) for
    // each of the five `?a` (`near` must hold for them in the relaxed game).
    assert_eq!(count("blocked"), 3 + 3 * 5);
    // `near`, only where `blocked` asks (2 to 5): each edge out of those (2-3, 2-4, 3-4, 4-5)
    // for each `?a`.
    assert_eq!(count("near"), 4 * 5);
    assert!(differential(&g, 80, 9) > 200);
}

/// A random playout's first move is uniform among the legal moves and never illegal, in
/// states where few, half or all of a scanning role's possible moves are legal (the draws
/// among possible moves, and the scan they fall back on).
#[test]
fn random_moves_are_uniform_among_the_legal() {
    let g = game("tictactoe.kif");
    let mut m = propnet(&g);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    let mut bufs = crate::machine::PlayoutBuffers::new(&mut m);
    let mut state = m.initial_state();
    let (mut checked, mut buf) = (0, Vec::new());
    while !m.is_terminal(&state) {
        let roles = m.roles().len();
        let legal: Vec<Vec<u32>> = (0..roles)
            .map(|r| {
                m.legal_moves(&state, r, &mut buf);
                buf.clone()
            })
            .collect();
        let draws = 2000 * legal.iter().map(Vec::len).max().unwrap_or(1);
        let mut counts: Vec<HashMap<u32, usize>> = vec![HashMap::new(); roles];
        for _ in 0..draws {
            let mut s = state.clone();
            m.playout_seen(&mut s, &mut rng, 1, &mut bufs, |joint| {
                for (r, &mv) in joint.iter().enumerate() {
                    *counts[r].entry(mv).or_default() += 1;
                }
            });
        }
        for r in 0..roles {
            assert!(counts[r].keys().all(|mv| legal[r].contains(mv)), "an illegal move was drawn");
            let expect = draws as f64 / legal[r].len() as f64;
            for mv in &legal[r] {
                let n = counts[r].get(mv).copied().unwrap_or(0) as f64;
                // Binomial spread: within 5 standard deviations of the mean.
                let sd = (expect * (1.0 - 1.0 / legal[r].len() as f64)).sqrt();
                assert!((n - expect).abs() <= 5.0 * sd + 1.0, "move drawn {n} times, {expect} expected");
            }
            checked += 1;
        }
        let joint: Vec<u32> = legal.iter().map(|l| l[rng.gen_range(0..l.len())]).collect();
        let mut next = state.clone();
        m.next_state(&state, &joint, &mut next);
        state = next;
    }
    assert!(checked >= 10, "too few states checked: {checked}");
}
