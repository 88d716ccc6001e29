//! Compound moves chosen part by part, on our own two-board games: the split machine plays
//! the game exactly, and the split search finds the compound moves that matter.

use super::*;
use crate::factor;
use crate::gdl::Game;
use crate::propnet::{build_net, Budget, Compiled};
use crate::search::factored::tests::{play, X_HOLDS_TWO_ON_BOARD_1, YELLOW_THREATENS_BOTH_BOARDS};
use crate::search::{Mcts, MctsConfig, TreeParallelMcts};
use rand::SeedableRng;
use std::path::Path;
use std::time::Duration;

fn load(file: &str) -> (PropnetMachine, Analysis) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let g = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    let b = build_net(&g, &Budget::default()).unwrap_or_else(|e| panic!("{e}"));
    let a = factor::analyse(&b.net);
    (PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms, b.symbols)), a)
}

/// Random play through the split machine, part by part, reaches exactly the states of the
/// game under the moves it makes (the last part's representative is the input played), ends
/// when the game ends and scores what it scores; every sub-step offers each part once, and
/// the parts offered are those of the legal inputs that agree with the parts chosen.
#[test]
fn the_split_machine_plays_the_game_exactly() {
    for file in ["parallel_connect4.kif", "parallel_tictactoe.kif"] {
        let (mut m, a) = load(file);
        let mut sm = SplitMachine::new(m.clone(), &a).expect("compound moves split");
        assert_eq!(sm.steps().len(), 2, "{file}: one sub-step per board");
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let roles = m.roles().len();
        for _ in 0..20 {
            let mut pn = m.initial_state();
            let mut s = sm.initial_state();
            let (mut legal, mut parts) = (Vec::new(), Vec::new());
            while !m.is_terminal(&pn) {
                assert!(!sm.is_terminal(&s));
                let mut joint = vec![0; roles];
                for k in 0..2 {
                    assert!(k == 0 || !sm.is_terminal(&s), "{file}: never terminal part way through a move");
                    let mut sub = Vec::new();
                    for (r, slot) in joint.iter_mut().enumerate() {
                        sm.legal_moves(&s, r, &mut parts);
                        m.legal_moves(&pn, r, &mut legal);
                        // Each class of the sub-step's factor once, among the agreeing inputs.
                        let f = &a.factors[sm.steps()[k]];
                        let mut classes: Vec<u32> = parts.iter().map(|&p| f.class_of[p as usize]).collect();
                        classes.sort_unstable();
                        let n = classes.len();
                        classes.dedup();
                        assert_eq!(n, classes.len(), "{file}: a part offered twice");
                        assert!(parts.iter().all(|p| legal.contains(p)), "{file}: a part's representative is legal");
                        let pick = parts[rand::Rng::gen_range(&mut rng, 0..parts.len())];
                        sub.push(pick);
                        *slot = pick;
                    }
                    let mut next = s.clone();
                    sm.next_state(&s, &sub, &mut next);
                    s = next;
                }
                let mut next = pn.clone();
                m.next_state(&pn, &joint, &mut next);
                pn = next;
                assert_eq!(s.pn, pn, "{file}: the split machine reaches the game's state");
                assert_eq!(s, sm.root(&pn), "{file}: a real state has no part chosen");
            }
            assert!(sm.is_terminal(&s));
            for r in 0..roles {
                assert_eq!(sm.goal(&s, r), m.goal(&pn, r));
            }
        }
    }
}

/// A rollout from part way through a move keeps the parts chosen: every rollout from a state
/// where red chose column 4 of board 1 drops red's first disc there.
#[test]
fn rollouts_complete_a_move_with_its_parts_kept() {
    let (m, a) = load("parallel_connect4.kif");
    let mut sm = SplitMachine::new(m, &a).expect("split");
    let s0 = sm.initial_state();
    let mut parts = Vec::new();
    sm.legal_moves(&s0, 0, &mut parts);
    let four = *parts.iter().find(|&&p| sm.move_text(p).starts_with("( drop 4 ")).expect("column 4 of board 1");
    let mut noop = Vec::new();
    sm.legal_moves(&s0, 1, &mut noop);
    let mut s1 = s0.clone();
    sm.next_state(&s0, &[four, noop[0]], &mut s1);
    // The search's hint reaches the game's machine as the game's state (part way through the
    // move: the state the move started from).
    assert_eq!(sm.inner.snapshot_state(), None);
    sm.anchor(&s1);
    assert_eq!(sm.inner.snapshot_state(), Some(&s1.pn.bits[..]));
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
    let mut bufs = PlayoutBuffers::new(&mut sm);
    for _ in 0..10 {
        let mut st = s1.clone();
        let mut first = None;
        let r = sm.playout_seen(&mut st, &mut rng, 1000, &mut bufs, |j: &[u32]| {
            first.get_or_insert(j[0]);
        });
        assert!(r.terminal && r.depth >= 1, "the rollout plays to the end");
        assert!(sm.is_terminal(&st));
        let text = sm.move_text(first.expect("a joint move"));
        assert!(text.starts_with("( drop 4 "), "red's first disc goes to column 4 of board 1: {text}");
    }
}

fn split_search(file: &str, threads: usize) -> (PropnetMachine, SplitSearch) {
    let (m, a) = load(file);
    let sm = SplitMachine::new(m.clone(), &a).expect("split");
    let cfg = MctsConfig { seed: 3, ..MctsConfig::default() };
    let inner: Box<dyn Search<SplitMachine>> =
        if threads > 1 { Box::new(TreeParallelMcts::new(cfg, threads)) } else { Box::new(Mcts::new(cfg)) };
    (m, SplitSearch::new(sm, inner))
}

fn choose(m: &mut PropnetMachine, f: &mut SplitSearch, s: &PnState, role: usize, ms: u64) -> String {
    let c = f.select(m, s, role, Limit::until(Instant::now() + Duration::from_millis(ms))).expect("a move");
    let mut legal = Vec::new();
    m.legal_moves(s, role, &mut legal);
    assert!(legal.contains(&c.mv), "the move chosen is legal");
    m.move_text(c.mv)
}

/// yellow has three discs in column 5 of board 1 and in column 7 of board 2, and red has no
/// win: red must block both at once, with the one compound move (drop 5 7); and x completes
/// row 1 of board 1 in parallel tic-tac-toe. On one thread and on two.
#[test]
fn the_split_search_blocks_both_boards_and_wins_on_one() {
    for threads in [1, 2] {
        let (mut m, mut f) = split_search("parallel_connect4.kif", threads);
        assert_eq!(f.factors(), Some(2));
        let s = play(&mut m, YELLOW_THREATENS_BOTH_BOARDS);
        assert_eq!(choose(&mut m, &mut f, &s, 0, 600), "( drop 5 7 )", "{threads} thread(s)");
        // The waiting role's one move, and the tree kept growing.
        let s2 = play(&mut m, &[&["( drop 4 1 )", "noop"], &["noop", "( drop 5 7 )"], &["( drop 4 1 )", "noop"]]);
        assert_eq!(choose(&mut m, &mut f, &s2, 0, 100), "noop");

        let (mut m, mut f) = split_search("parallel_tictactoe.kif", threads);
        let s = play(&mut m, X_HOLDS_TWO_ON_BOARD_1);
        let mv = choose(&mut m, &mut f, &s, 0, 600);
        assert!(mv.starts_with("( mark 1 3 "), "x completes row 1 of board 1: {mv} ({threads} thread(s))");
    }
}

/// Games whose moves are not compounds are not split: serial moves (each plays on one board),
/// a game that does not factor.
#[test]
fn only_compound_moves_are_split() {
    let (m, a) = load("serial_tictactoe.kif");
    assert!(SplitMachine::new(m, &a).is_none(), "serial moves");
    let (m, a) = load("tictactoe.kif");
    assert!(SplitMachine::new(m, &a).is_none(), "one game");
}
