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

#[test]
fn two_plies_lists_distinct_positions() {
    let mut m = tictactoe();
    let init = m.initial_state();
    // 9 × 8 first two moves, all distinct.
    assert_eq!(bench::two_plies(&mut m, &init).len(), 72);
    // Transpositions are counted once: x (1 1) o (2 2) and the same position by another
    // order cannot happen in two plies, but two plies from a position two plies further on
    // can reach terminal positions after one ply, which end the line.
    let s = play_texts(&mut m, &init, &split_moves("(mark 1 1) (mark 2 1) (mark 1 2) (mark 2 2)").unwrap()).unwrap();
    let p = bench::two_plies(&mut m, &s);
    assert!(p.iter().any(|(line, _)| line.len() == 1), "x wins at (1 3) at once");
    assert!(p.iter().all(|(line, _)| line.len() == 2 || line[0] == "( mark 1 3 )"));
}

#[test]
fn rates_flag_at_or_above_the_threshold() {
    let vals = [(true, 0.9), (true, 0.4), (false, 0.5), (false, 0.2), (false, 0.6)];
    let (f, p) = bench::rates_at(&vals, 0.5);
    assert!((f - 0.5).abs() < 1e-12, "the trap at 0.4 is missed");
    assert!((p - 2.0 / 3.0).abs() < 1e-12, "0.5 and 0.6 are flagged");
    // A measure that says nothing flags everything.
    let flat = [(true, 0.7), (false, 0.7)];
    assert_eq!(bench::rates_at(&flat, 0.7), (0.0, 1.0));
}

#[test]
fn learned_threshold_is_chosen_on_the_other_states() {
    let state = |vals: &[(bool, f64)]| bench::TrapStateResult {
        name: String::new(),
        role: String::new(),
        trap_moves: vec![],
        all_positions: vals.len(),
        positions: vals.len(),
        kept: 0,
        undecided: 0,
        rates: vec![],
        expand_micros: 0.0,
        label_s: 0.0,
        measures: vec!["m".into()],
        samples: vals
            .iter()
            .map(|&(t, v)| bench::Sample { line: vec![], trap: Some(t), sims: vec![Some(v)] })
            .collect(),
    };
    // Traps sit high in every state: a threshold a little below the top separates them.
    let results: Vec<_> = (0..3)
        .map(|i| {
            let shift = i as f64 * 0.01;
            state(&[(true, 0.9 + shift), (true, 0.85 + shift), (false, 0.5), (false, 0.4), (false, 0.3), (false, 0.35)])
        })
        .collect();
    let (f, p, c) = bench::learned_threshold(&results, 0, 0.15).unwrap();
    assert_eq!(f, 0.0);
    assert_eq!(p, 0.0);
    assert!(c > 0.0, "{c}");
    assert!(bench::learned_threshold(&results[..1], 0, 0.15).is_none());
}

/// `move_loses` on `gdl/planted_trap.kif`: white's grab loses by force in three plies after
/// it, with the refutation as joint moves (black strikes, white's every pick loses, black
/// finishes) ending in white's loss; a quiet move does not lose; a budget too small says
/// nothing.
#[test]
fn move_loses_gives_the_least_depth_and_the_refutation_as_joint_moves() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/planted_trap.kif");
    let game = crate::gdl::Game::load(&path).unwrap();
    let mut m = crate::propnet::build(&game, &crate::propnet::Budget::default()).unwrap().0;
    let s = m.initial_state();
    let mut legal = Vec::new();
    m.legal_moves(&s, 0, &mut legal);
    let by_text = |m: &mut crate::propnet::PropnetMachine, t: &str| {
        legal.iter().copied().find(|&mv| m.move_text(mv) == t).unwrap()
    };
    let (grab, quiet) = (by_text(&mut m, "grab"), by_text(&mut m, "( quiet 1 )"));
    let mut t = TrapSearch::new(&mut m, 0, 0, 1_000_000);
    let (d, line) = t.move_loses(&s, grab, 5).unwrap().unwrap();
    assert_eq!(d, 3);
    assert!(t.move_loses(&s, grab, 2).unwrap().is_none(), "not within two plies");
    assert_eq!(t.move_loses(&s, quiet, 5), Some(None));
    let mut tiny = TrapSearch::new(&mut m, 0, 0, 1);
    assert!(tiny.move_loses(&s, grab, 5).is_none(), "out of budget: undecided");
    let mut late = TrapSearch::new(&mut m, 0, 0, 1_000_000).until(Instant::now());
    assert!(late.move_loses(&s, grab, 5).is_none(), "out of time: undecided");
    let texts: Vec<Vec<String>> = line.iter().map(|j| j.iter().map(|&mv| m.move_text(mv)).collect()).collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert_eq!(texts[0], ["grab", "noop"]);
    assert_eq!(texts[1], ["noop", "strike"]);
    assert_eq!(texts[3], ["noop", "finish"]);
    let end = line.iter().fold(s.clone(), |s, j| {
        let mut n = s.clone();
        m.next_state(&s, j, &mut n);
        n
    });
    assert!(m.is_terminal(&end));
    assert_eq!(m.goal(&end, 0), Some(0));
}
