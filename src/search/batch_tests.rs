//! Leaf-batched playouts ([`Playout::Batch`]): the engine's batch playouts, and MCTS on
//! them, on the `gdl/` games through the propnet.

use super::*;
use crate::gdl::Game;
use crate::propnet::{self, Budget, PropnetMachine};
use crate::search::Limit;
use std::path::Path;

fn propnet(file: &str, batch: bool) -> PropnetMachine {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let game = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    propnet::build_with(&game, &Budget::default(), batch).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

fn after(m: &mut PropnetMachine, moves: &str) -> PnState {
    let moves = crate::machine::split_moves(moves).unwrap();
    let init = m.initial_state();
    crate::machine::play_texts(m, &init, &moves).unwrap()
}

type PnState = <PropnetMachine as StateMachine>::State;

fn batch(leaves: usize) -> MctsConfig {
    MctsConfig { seed: 7, playout: Playout::Batch, batch_leaves: leaves, ..MctsConfig::default() }
}

/// Each start gets its share of the lanes; a terminal start scores its goals in every lane,
/// and the playouts of a zero-sum start add up to one reward each.
#[test]
fn batch_playouts_share_the_lanes_and_score_as_search_does() {
    let mut m = propnet("tictactoe.kif", true);
    let lanes = m.batch_lanes();
    assert_eq!(lanes, propnet::BatchMachine::LANES);
    // xplayer has three in a row on the first row: terminal, 100 to 0.
    let won = after(&mut m, "(mark 1 1) (mark 2 2) (mark 1 2) (mark 3 3) (mark 1 3)");
    assert!(m.is_terminal(&won));
    let open = m.initial_state();
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut sums = vec![f64::NAN; 6];
    let per = m.batch_playouts(&[won.clone(), open.clone(), won], 1000, &mut rng, &mut sums, None).unwrap();
    assert_eq!(per, lanes / 3);
    let per_f = per as f64;
    assert_eq!((sums[0], sums[1]), (per_f, 0.0));
    assert_eq!((sums[4], sums[5]), (per_f, 0.0));
    assert!((sums[2] + sums[3] - per_f).abs() < 1e-9, "{sums:?}");
    // Random play from the empty board: both roles win some of the playouts.
    assert!(sums[2] > 0.0 && sums[3] > 0.0, "{sums:?}");
    // Too many starts, no batch machine, or no time: nothing written.
    let mut untouched = vec![-1.0; 2 * (lanes + 1)];
    assert_eq!(m.batch_playouts(&vec![open.clone(); lanes + 1], 1000, &mut rng, &mut untouched, None), None);
    let past = Some(std::time::Instant::now());
    assert_eq!(m.batch_playouts(&[open.clone()], 1000, &mut rng, &mut untouched, past), Some(0));
    assert!(untouched.iter().all(|&v| v == -1.0));
    let mut plain = propnet("tictactoe.kif", false);
    assert_eq!(plain.batch_lanes(), 0);
    assert_eq!(plain.batch_playouts(&[open], 1000, &mut rng, &mut untouched[..2], None), None);
}

#[test]
fn batched_search_takes_a_win_and_blocks_a_loss_in_connect_four() {
    let mut m = propnet("connect4.kif", true);
    let win = after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3) (drop 6)");
    let block = after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3)");
    for leaves in [1, 16, 256] {
        let mut t = Mcts::new(batch(leaves));
        let c = t.select(&mut m, &win, 0, Limit::iterations(2_000)).unwrap();
        assert_eq!(m.move_text(c.mv), "( drop 4 )", "{leaves} leaves: takes the win");
        let mut t = Mcts::new(batch(leaves));
        let c = t.select(&mut m, &block, 1, Limit::iterations(5_000)).unwrap();
        assert_eq!(m.move_text(c.mv), "( drop 4 )", "{leaves} leaves: blocks");
    }
}

/// Checks that no virtual loss is left: at every node, each role's visits add up to the
/// node's descents, and (connect four is zero-sum, its goals add up to 100) the rewards of
/// all roles add up to one per playout. A virtual loss left behind is a visit without its
/// reward. Returns the nodes checked.
fn no_virtual_loss_left(t: &Mcts<PropnetMachine>, what: &str) -> usize {
    let mut checked = 0;
    for node in &t.nodes {
        let roles = node.offs.len() - 1;
        let n: Vec<u64> =
            (0..roles).map(|r| (node.offs[r]..node.offs[r + 1]).map(|i| node.n[i as usize] as u64).sum()).collect();
        let w: f64 = node.w.iter().sum();
        if n[0] == 0 {
            continue;
        }
        assert!(n.iter().all(|&x| x == n[0]), "{what}: {n:?}");
        assert!((w - n[0] as f64).abs() < 1e-6, "{what}: rewards {w} for {} visits", n[0]);
        checked += 1;
    }
    checked
}

/// Every virtual loss is taken back after each batch.
#[test]
fn batched_search_takes_back_every_virtual_loss() {
    let mut m = propnet("connect4.kif", true);
    let s = m.initial_state();
    for leaves in [3, 16, 256] {
        let mut t = Mcts::new(batch(leaves));
        let c = t.select(&mut m, &s, 0, Limit::iterations(3_000)).unwrap();
        assert!(c.iterations >= 3_000 && t.tree_size() > 100, "{leaves}: {} descents", c.iterations);
        let checked = no_virtual_loss_left(&t, &format!("{leaves} leaves"));
        assert!(checked > 50, "{leaves}: {checked} nodes");
        // Playouts, not descents, are counted: the root saw lanes / leaves playouts per
        // descent (one for a descent that ends in a solved node).
        let root = &t.nodes[t.root as usize];
        let per = (propnet::BatchMachine::LANES / leaves) as u64;
        assert!(root.visits as u64 * 2 >= per * c.iterations, "{leaves}: {} visits", root.visits);
    }
}

/// Without a batch machine the option plays random playouts one at a time.
#[test]
fn batched_playouts_fall_back_to_single_playouts() {
    let mut m = propnet("connect4.kif", false);
    let win = after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3) (drop 6)");
    let mut t = Mcts::new(batch(16));
    let c = t.select(&mut m, &win, 0, Limit::iterations(2_000)).unwrap();
    assert_eq!(m.move_text(c.mv), "( drop 4 )");
    assert_eq!(t.nodes[t.root as usize].visits as u64, c.iterations);
}

/// A batch still running at the deadline is given up: its descents are unmarked, nothing is
/// backed up, and the search answers in time.
#[test]
fn a_batch_at_the_deadline_is_given_up_without_a_trace() {
    let mut m = propnet("connect4.kif", true);
    let s = m.initial_state();
    let mut t = Mcts::new(batch(16));
    t.select(&mut m, &s, 0, Limit::iterations(320)).unwrap();
    let visits = t.nodes[t.root as usize].visits;
    let descents = t.iterate_batch(&mut m, std::time::Instant::now());
    assert_eq!(descents, 16);
    assert_eq!(t.nodes[t.root as usize].visits, visits);
    assert!(no_virtual_loss_left(&t, "given up") > 10);
}
