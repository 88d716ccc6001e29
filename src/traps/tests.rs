use super::*;
use crate::machine::{play_texts, split_moves, StateMachine};
use crate::similarity::chess::{play_san, ChessMachine};

fn tictactoe() -> crate::propnet::PropnetMachine {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/tictactoe.kif");
    let game = crate::gdl::Game::load(&path).unwrap();
    crate::propnet::build(&game, &crate::propnet::Budget::default()).unwrap().0
}

/// o to move on `x . o / . x . / x . o`: B1 and B3 let x complete column A at once (traps
/// of depth 1), A2 blocks, C2 wins.
#[test]
fn tictactoe_traps_of_depth_one() {
    let mut m = tictactoe();
    let init = m.initial_state();
    let s = play_texts(&mut m, &init, &split_moves("(mark 1 1) (mark 1 3) (mark 2 2) (mark 3 3) (mark 3 1)").unwrap())
        .unwrap();
    let mut t = TrapSearch::new(&mut m, 1, 0, 1_000_000);
    let r = t.analyse(&s, 1);
    assert!(r.trap_state && !r.lost && !r.undecided);
    let mut traps: Vec<&str> = r.moves.iter().filter(|v| v.trap).map(|v| v.text.as_str()).collect();
    traps.sort();
    assert_eq!(traps, vec!["( mark 1 2 )", "( mark 3 2 )"]);
    for v in r.moves.iter().filter(|v| v.trap) {
        assert_eq!(v.plies, Some(1));
        assert_eq!(v.refutation, vec!["( mark 2 1 )".to_string()]);
    }
    // At depth 0 nothing is forced: no trap.
    assert!(!t.analyse(&s, 0).trap_state);
}

/// x to move after x (1 1), o (2 2), x (3 3), o (1 3): o threatens (3 1) on the
/// anti-diagonal. Every x move but the block lets o win at once (four traps of depth 1).
/// After the block x has two threats, and o's position is lost: every move loses, so none
/// is a trap.
#[test]
fn tictactoe_blocks_and_lost_positions() {
    let mut m = tictactoe();
    let init = m.initial_state();
    let s = play_texts(&mut m, &init, &split_moves("(mark 1 1) (mark 2 2) (mark 3 3) (mark 1 3)").unwrap()).unwrap();
    let after_block = play_texts(&mut m, &s, &split_moves("(mark 3 1)").unwrap()).unwrap();
    let mut t = TrapSearch::new(&mut m, 0, 0, 1_000_000);
    let r = t.analyse(&s, 1);
    let safe: Vec<&str> = r.moves.iter().filter(|v| !v.trap).map(|v| v.text.as_str()).collect();
    assert_eq!(safe, vec!["( mark 3 1 )"]);
    assert_eq!(r.moves.iter().filter(|v| v.trap).count(), 4);
    let mut t = TrapSearch::new(&mut m, 1, 0, 1_000_000);
    let r = t.analyse(&after_block, 1);
    assert!(r.lost && !r.trap_state);
    assert_eq!(r.moves.len(), 4);
    // Seen from x one ply earlier, o's loss was forced within 2 plies of the block.
    assert_eq!(t.least_depth(&after_block, 3), Some(Some(2)));
}

/// The Budapest trap (paper, Figure 3): after 1.d4 Nf6 2.c4 e5 3.d5 Bc5 4.Bg5 Ne4, 5.Bxd8
/// loses to 5...Bxf2#.
#[test]
fn chess_budapest_trap() {
    let s = play_san("1.d4 Nf6 2.c4 e5 3.d5 Bc5 4.Bg5 Ne4").unwrap();
    let mut m = ChessMachine::new();
    let mut t = TrapSearch::new(&mut m, 0, 0, 5_000_000);
    let r = t.analyse(&s, 1);
    let v = r.moves.iter().find(|v| v.text == "Bxd8").unwrap();
    assert!(v.trap);
    assert_eq!(v.plies, Some(1));
    assert_eq!(v.refutation, vec!["Bxf2".to_string()]);
    assert!(r.moves.iter().any(|v| !v.trap));
}
