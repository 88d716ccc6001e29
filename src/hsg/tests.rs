//! Hand-checked hyperstate graphs: `gdl/vault.kif` (its header draws the graph) with and
//! without its step counter, tic-tac-toe's terminal counts, and the bounds' open tags.

use super::*;
use crate::factor;
use crate::gdl::Game;
use crate::interp::Interpreter;
use crate::propnet::{self, Budget, Compiled, PnState, PropnetMachine};
use std::path::Path;

fn text(file: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file)).unwrap()
}

/// The vault without its step counter (every line naming `step` dropped): no move limit.
fn vault_without_counter() -> Game {
    let t: String = text("vault.kif").lines().filter(|l| !l.contains("step")).map(|l| format!("{l}\n")).collect();
    Game::parse("vault-no-counter", &t).unwrap()
}

fn propnet(g: &Game) -> (PropnetMachine, propnet::Net) {
    let b = propnet::build_net(g, &Budget::default()).unwrap();
    let m = PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms, b.symbols));
    (m, b.net)
}

fn strong<M: StateMachine>(m: &mut M, opts: &HsgOptions) -> (Ssg<M::State, M::Move>, Hsg) {
    let s = m.initial_state();
    let ssg = Ssg::explore(m, &s, opts).unwrap();
    let hsg = Hsg::build(&ssg, opts);
    (ssg, hsg)
}

/// The hyperstate holding the state whose facts include all of `facts` and none of `not`.
fn find(ssg: &Ssg<PnState, u32>, hsg: &Hsg, m: &PropnetMachine, facts: &[&str], not: &[&str]) -> u32 {
    let hits: Vec<u32> = (0..ssg.states.len())
        .filter(|&i| {
            let f: Vec<String> = m.state_facts(&ssg.states[i]).iter().map(|x| canonical_move_text(x)).collect();
            facts.iter().all(|x| f.iter().any(|y| y == x)) && not.iter().all(|x| !f.iter().any(|y| y == x))
        })
        .map(|i| hsg.of_state[i])
        .collect();
    assert!(!hits.is_empty(), "no state with {facts:?}");
    assert!(hits.iter().all(|&h| h == hits[0]), "{facts:?} spans hyperstates {hits:?}");
    hits[0]
}

/// The vault graph of the header: 10 states, 6 hyperstates, 10 reversible and 5 critical
/// actions, and every tag, distance and headroom worked out by hand. `terminals`: states
/// that are terminal (classes holding a terminal state, under weak equivalence: the move
/// limit ends the game in some of them).
fn check_vault(ssg: &Ssg<PnState, u32>, hsg: &Hsg, m: &PropnetMachine, terminals: usize) {
    let s = Summary::new(ssg, hsg);
    assert_eq!((s.states, s.terminal_states, s.hyperstates), (10, terminals, 6));
    assert_eq!((s.reversible_actions, s.critical_actions), (10, 5));
    assert_eq!((s.win, s.fail, s.eventually_winnable, s.implicitly_failed, s.open), (1, 3, 2, 0, 0));
    let corridor = find(ssg, hsg, m, &["(at 1)"], &["(key held)"]);
    let keyed = find(ssg, hsg, m, &["(at 3)", "(key held)"], &[]);
    assert_eq!(find(ssg, hsg, m, &["(at 2)", "(key held)"], &["opened"]), keyed);
    let won = find(ssg, hsg, m, &["opened", "(key held)"], &[]);
    let opened_empty = find(ssg, hsg, m, &["opened"], &["(key held)"]);
    let pit = find(ssg, hsg, m, &["(at pit)"], &["(key held)"]);
    assert_eq!(corridor, 0, "the start's hyperstate is 0");
    let h = |x: u32| &hsg.hyper[x as usize];
    assert_eq!((hsg.states(corridor).len(), h(corridor).tag), (3, Tag::EventuallyWinnable));
    assert_eq!((hsg.states(keyed).len(), h(keyed).tag), (3, Tag::EventuallyWinnable));
    assert_eq!(h(won).tag, Tag::Win);
    assert_eq!(h(opened_empty).tag, Tag::Fail);
    // The pit is a leaf though not terminal: only wait, a self-loop, is left.
    assert_eq!((h(pit).tag, hsg.states(pit).len()), (Tag::Fail, 1));
    assert_eq!(hsg.edges(corridor).len(), 3);
    assert_eq!(hsg.edges(keyed).len(), 2);
    assert_eq!((h(corridor).loss_distance, h(keyed).loss_distance, h(won).loss_distance), (Some(1), Some(1), None));
    assert_eq!((h(corridor).win_distance, h(keyed).win_distance), (Some(2), Some(1)));
    assert_eq!(h(corridor).step_headroom, Some(1.0 / 3.0));
    assert_eq!(h(keyed).step_headroom, Some(0.5));
    assert_eq!(s.start_closure_headroom, 0.7);
    assert_eq!((h(keyed).layer, h(won).layer, s.layers), (1, 2, 3));
    let path: Vec<Option<&str>> = s.ideal_path.iter().map(|p| p.action.as_deref()).collect();
    assert_eq!(path, vec![Some("take"), Some("open"), None]);
    assert_eq!(s.ideal_path.iter().map(|p| p.loss_distance).collect::<Vec<_>>(), vec![Some(1), Some(1), None]);
}

#[test]
fn vault_without_its_counter_has_the_hand_drawn_graph() {
    let (mut m, _) = propnet(&vault_without_counter());
    let (ssg, hsg) = strong(&mut m, &HsgOptions::default());
    check_vault(&ssg, &hsg, &m, 2);
}

#[test]
fn weak_equivalence_ignores_the_counter_and_finds_the_same_graph() {
    let (mut m, net) = propnet(&Game::parse("vault", &text("vault.kif")).unwrap());
    let a = factor::analyse(&net);
    let opts = HsgOptions::default();
    // Strong: the counter makes every action critical.
    let (ssg, hsg) = strong(&mut m, &opts);
    let s = Summary::new(&ssg, &hsg);
    assert_eq!(s.reversible_actions, 0);
    assert_eq!(s.hyperstates, s.states);
    assert!(s.states > 10);
    assert_eq!(s.start_tag, Tag::EventuallyWinnable);
    // Weak: the action-independent part is the counter, which no legality reads, and
    // without it the graph is the counter-free one.
    let ignored = timer_bases(&net, &a);
    assert_eq!(ignored, a.iid);
    let start = m.initial_state();
    let mut only = PnState { bits: vec![0; start.bits.len()] };
    for &b in &ignored {
        only.bits[b as usize / 64] |= 1 << (b % 64);
    }
    let names: Vec<String> = m.state_facts(&only).iter().map(|x| canonical_move_text(x)).collect();
    assert!(names.len() == 9 && names.iter().all(|f| f.starts_with("(step ")), "{names:?}");
    let mask = BaseMask::new(start.bits.len(), &ignored);
    let ssg = ssg.quotient(|x: &PnState| mask.project(x));
    let hsg = Hsg::build(&ssg, &opts);
    // The limit (step 9, after 8 moves) ends the game in the two opened classes and in five
    // more. By parity: without the key, cells 1 and 3 are reached after even numbers of moves
    // (so at the limit), cell 2 after odd ones; taking the key costs a move in place, so with
    // it only cell 2 is reached after an even number; the pits can wait until the limit.
    check_vault(&ssg, &hsg, &m, 7);
}

#[test]
fn tictactoe_leaves_are_the_known_terminal_positions() {
    let g = Game::parse("tictactoe", &text("tictactoe.kif")).unwrap();
    let (mut m, _) = propnet(&g);
    for (role, wins) in [(0, 626), (1, 316)] {
        let opts = HsgOptions { role, ..HsgOptions::default() };
        let (ssg, hsg) = strong(&mut m, &opts);
        let s = Summary::new(&ssg, &hsg);
        assert_eq!((s.states, s.terminal_states, s.hyperstates, s.reversible_actions), (5478, 958, 5478, 0));
        assert_eq!((s.win, s.fail), (wins, 958 - wins));
        assert_eq!(s.implicitly_failed + s.eventually_winnable + s.win + s.fail, 5478);
        assert_eq!(s.start_tag, Tag::EventuallyWinnable);
        assert_eq!(s.layers, 10, "nine marks after the start");
        // x can be stopped from winning only by its own blunders: a win is always one of the
        // ideal path's ends, and the interpreter agrees with the propnet.
        assert_eq!(s.ideal_path.last().map(|p| p.action.is_none()), Some(true));
    }
    let mut interp = Interpreter::new(&g).unwrap();
    let (ssg, hsg) = strong(&mut interp, &HsgOptions::default());
    assert_eq!((ssg.nodes.len(), Summary::new(&ssg, &hsg).win), (5478, 626));
}

#[test]
fn bounds_tag_open_never_implicitly_failed() {
    let (mut m, _) = propnet(&vault_without_counter());
    for opts in
        [HsgOptions { depth: Some(1), ..HsgOptions::default() }, HsgOptions { max_states: 3, ..HsgOptions::default() }]
    {
        let (ssg, hsg) = strong(&mut m, &opts);
        let s = Summary::new(&ssg, &hsg);
        assert!(!s.complete);
        assert_eq!(s.implicitly_failed, 0, "{opts:?}");
        assert_eq!(s.start_tag, Tag::Open, "{opts:?}");
        assert!(s.ideal_path.is_empty());
    }
    // Deep enough to see the win: the start is winnable even though the graph is cut off.
    let opts = HsgOptions { depth: Some(3), ..HsgOptions::default() };
    let (ssg, hsg) = strong(&mut m, &opts);
    assert!(!ssg.complete());
    assert_eq!(hsg.start().tag, Tag::EventuallyWinnable);
}

#[test]
fn implicitly_failed_is_proven_only_where_no_win_is_reachable() {
    // With the win threshold above every goal, nothing is winnable: the corridors are
    // implicitly failed and every leaf fails.
    let (mut m, _) = propnet(&vault_without_counter());
    let opts = HsgOptions { win: 101, ..HsgOptions::default() };
    let (ssg, hsg) = strong(&mut m, &opts);
    let s = Summary::new(&ssg, &hsg);
    assert_eq!((s.win, s.fail, s.eventually_winnable, s.implicitly_failed), (0, 4, 0, 2));
    assert_eq!(s.start_loss_distance, Some(0));
    assert!(s.ideal_path.is_empty());
    assert_eq!(s.start_closure_headroom, 0.0);
}

#[test]
fn pictures_draw_every_hyperstate_and_critical_action() {
    let (mut m, _) = propnet(&vault_without_counter());
    let (ssg, hsg) = strong(&mut m, &HsgOptions::default());
    let keep = picture::shown(&hsg, 100);
    let dot = picture::dot(&hsg, &ssg.labels, &keep, "vault");
    assert_eq!(dot.matches("shape=").count(), 6);
    assert_eq!(dot.matches(" -> ").count(), 5);
    assert!(dot.contains("label=\"take\""));
    let svg = picture::svg(&hsg, &ssg.labels, &keep, "vault");
    assert_eq!(svg.matches("<line").count(), 5);
    assert_eq!(svg.matches("ld ").count(), 6);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    // A cap keeps the start's neighbourhood.
    let keep = picture::shown(&hsg, 2);
    assert!(keep[0] && keep.iter().filter(|&&k| k).count() == 2);
}

/// The exact best goal from `s` by exhaustive search (one role).
fn exact_best(
    m: &mut PropnetMachine,
    s: &PnState,
    memo: &mut rustc_hash::FxHashMap<PnState, Option<u32>>,
) -> Option<u32> {
    if let Some(&b) = memo.get(s) {
        return b;
    }
    let b = if m.is_terminal(s) {
        m.goal(s, 0)
    } else {
        let mut moves = Vec::new();
        m.legal_moves(s, 0, &mut moves);
        let mut next = s.clone();
        let mut b = None;
        for mv in moves {
            m.next_state(s, &[mv], &mut next);
            let n = next.clone();
            b = b.max(exact_best(m, &n, memo));
        }
        b
    };
    memo.insert(s.clone(), b);
    b
}

/// Under every bound, a closed hyperstate's best goal is the exact best (so pruning on it is
/// sound), an open one's is at most the exact best, and the pruned machine keeps a move to
/// the exact best in every state it prunes.
#[test]
fn closed_hyperstates_know_their_exact_value_under_bounds() {
    let g = Game::parse("vault", &text("vault.kif")).unwrap();
    let (m, _) = propnet(&g);
    for max_states in [10, 15, 20, 30, 1000] {
        let mut m = m.clone();
        let opts = HsgOptions { max_states, ..HsgOptions::default() };
        let (ssg, hsg) = strong(&mut m, &opts);
        let mut memo = rustc_hash::FxHashMap::default();
        let mut closed = 0;
        for (i, s) in ssg.states.iter().enumerate() {
            let h = &hsg.hyper[hsg.of_state[i] as usize];
            let exact = exact_best(&mut m, s, &mut memo);
            if h.closed {
                closed += 1;
                assert_eq!(h.best, exact, "max_states {max_states}, state {i}");
            } else {
                assert!(h.best <= exact, "max_states {max_states}, state {i}");
            }
        }
        assert!(closed > 0, "max_states {max_states}");
        let (mut pm, rep) = prune::PrunedMachine::new(m.clone(), &opts).unwrap();
        assert_eq!(rep.complete, max_states == 1000);
        for s in &ssg.states {
            if pm.kept(s).is_none() {
                continue;
            }
            let mut moves = Vec::new();
            pm.legal_moves(s, 0, &mut moves);
            let mut next = s.clone();
            let best_kept = moves
                .iter()
                .map(|&mv| {
                    pm.next_state(s, &[mv], &mut next);
                    exact_best(&mut m, &next.clone(), &mut memo)
                })
                .max()
                .flatten();
            assert_eq!(best_kept, exact_best(&mut m, s, &mut memo), "max_states {max_states}");
        }
    }
}

/// The pruned machine passes the search's anchor on to the engine it wraps, which keeps the
/// anchored state ready (its snapshot).
#[test]
fn the_pruned_machine_passes_the_anchor_on() {
    let g = Game::parse("vault", &text("vault.kif")).unwrap();
    let (m, _) = propnet(&g);
    let (mut pm, _) = prune::PrunedMachine::new(m, &HsgOptions::default()).unwrap();
    let s0 = pm.initial_state();
    let mut moves = Vec::new();
    pm.legal_moves(&s0, 0, &mut moves);
    let mut s1 = s0.clone();
    pm.next_state(&s0, &[moves[0]], &mut s1);
    assert_eq!(pm.inner.snapshot_state(), None);
    pm.anchor(&s1);
    assert_eq!(pm.inner.snapshot_state(), Some(&s1.bits[..]));
}
