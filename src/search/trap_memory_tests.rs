//! Similarity hints through the searcher's interface, on connect four (`gdl/connect4.kif`).

use super::super::mcts::{Mcts, MctsConfig};
use super::super::{Limit, Search};
use crate::machine::{play_texts, split_moves, StateMachine};
use crate::propnet::{self, Budget, PropnetMachine};

fn connect_four() -> PropnetMachine {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/connect4.kif");
    let game = crate::gdl::Game::load(&p).unwrap();
    propnet::build(&game, &Budget::default()).unwrap().0
}

fn after(m: &mut PropnetMachine, moves: &str) -> <PropnetMachine as StateMachine>::State {
    let init = m.initial_state();
    play_texts(m, &init, &split_moves(moves).unwrap()).unwrap()
}

/// Red to move while yellow threatens four on the bottom row at column 4: every red move
/// but (drop 4) loses at once. A: yellow holds columns 5-7; B: yellow holds 1-3, red's
/// discs stand elsewhere. The solver proves A's traps; at B, the hint finds one before any
/// search, through move matching, with the killer (drop 4) matched.
#[test]
fn a_trap_proven_once_is_found_again_in_a_similar_position_by_its_hint() {
    let mut m = connect_four();
    let a = after(&mut m, "(drop 1) (drop 5) (drop 1) (drop 6) (drop 2) (drop 7)");
    let b = after(&mut m, "(drop 7) (drop 1) (drop 7) (drop 2) (drop 6) (drop 3)");
    for hints in [true, false] {
        let mut t: Mcts<PropnetMachine> = Mcts::new(MctsConfig { seed: 3, trap_hints: hints, ..MctsConfig::default() });
        let c = t.select(&mut m, &a, 0, Limit::iterations(5000)).unwrap();
        assert_eq!(m.move_text(c.mv), "( drop 4 )");
        let solved = t.take_traps();
        assert_eq!(solved.len(), 6, "the solver proves A's six traps");
        assert!(solved.iter().all(|t| t.how == "solver" && t.complete));
        // One iteration at B: too little for the solver to prove anything.
        t.select(&mut m, &b, 0, Limit::iterations(1)).unwrap();
        let found = t.take_traps();
        if !hints {
            assert!(found.is_empty(), "without hints nothing is found at B");
            continue;
        }
        assert!(!found.is_empty(), "the hint finds a trap at B");
        for f in &found {
            assert_eq!(f.how, "similarity");
            let h = f.hint.as_ref().unwrap();
            assert_eq!(h.measure, "tactics d=2");
            assert!(h.similarity >= 0.5, "{h:?}");
            assert_ne!(h.source_move, "( drop 4 )");
            assert_eq!(h.killer.as_deref(), Some("( drop 4 )"));
            assert_eq!(h.matched_killer.as_deref(), Some("( drop 4 )"), "{h:?}");
            assert_ne!(m.move_text(f.mv), "( drop 4 )", "the block is no trap");
            // The line is the trap and the matched killer, and it really ends in yellow's win.
            assert_eq!(f.line.len(), 2);
            assert!(f.complete);
            let mut s = b.clone();
            for joint in &f.line {
                let mut next = s.clone();
                m.next_state(&s, joint, &mut next);
                s = next;
            }
            assert!(m.is_terminal(&s));
            assert_eq!(m.goal(&s, 0), Some(0));
            assert_ne!(f.chosen, f.mv, "the searcher does not play a move its hint proved lost");
        }
    }
}

/// A remembered trap keeps the least depth within which its loss is forced, found by the
/// exact finder, not the length of the line it came with (the solver's line may follow a
/// quick loss where the role has a longer defence): on `gdl/planted_trap.kif`, white's grab
/// given with the grab alone as its line is remembered at depth 3.
#[test]
fn a_remembered_trap_keeps_its_least_forced_depth_not_its_lines_length() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/planted_trap.kif");
    let game = crate::gdl::Game::load(&p).unwrap();
    let mut m = propnet::build(&game, &Budget::default()).unwrap().0;
    let s = m.initial_state();
    let mut legal = Vec::new();
    m.legal_moves(&s, 0, &mut legal);
    let mv = legal.iter().copied().find(|&x| m.move_text(x) == "grab").unwrap();
    let mut noop = Vec::new();
    m.legal_moves(&s, 1, &mut noop);
    let joint = vec![mv, noop[0]];
    let sig = crate::similarity::SigScratch::new(4096).compute(&mut m, &s, 2).unwrap();
    let mut memory = super::TrapMemory::new();
    memory.remember(&mut m, &sig, &s, 0, &[std::slice::from_ref(&joint)]);
    assert_eq!(memory.len(), 1);
    assert_eq!(memory.memos[0].depth, 3);
    assert_eq!(memory.memos[0].mv_text, "grab");
    // A safe move given as a "trap" is not remembered: nothing is forced within the depth.
    let quiet = legal.iter().copied().find(|&x| m.move_text(x) == "( quiet 1 )").unwrap();
    memory.remember(&mut m, &sig, &s, 0, &[&[vec![quiet, noop[0]]]]);
    assert_eq!(memory.len(), 1);
}
