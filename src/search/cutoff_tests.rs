//! Heuristic cut-offs ([`MctsConfig::cutoff`], [`Mcts::set_heuristic`]): playouts that do
//! not end within the cut-off are scored by the heuristic, on one thread and by helpers.

use super::*;
use crate::gdl::Game;
use crate::heuristic::Heuristic;
use crate::propnet::{self, Budget, PropnetMachine};
use crate::search::Limit;
use std::path::Path;

fn breakthrough() -> PropnetMachine {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/breakthrough5.kif");
    let game = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    propnet::build(&game, &Budget::default()).unwrap_or_else(|e| panic!("{e}")).0
}

/// A heuristic that says 0.37 for white and 0.63 for black whatever the state.
fn constant() -> Arc<Heuristic> {
    Arc::new(Heuristic {
        features: Vec::new(),
        weights: vec![vec![0.37], vec![0.63]],
        quality: vec![1.0, 1.0],
        playouts: 0,
    })
}

/// Each root move's mean for white.
fn means(stats: &[(u32, u32, f64)]) -> Vec<f64> {
    stats.iter().filter(|s| s.1 > 0).map(|s| s.2 / s.1 as f64).collect()
}

/// No breakthrough5 game ends within four plies of the start (a pawn needs three moves of
/// its own to reach the far row): with the tree a couple of plies deep and playouts cut
/// after one joint move, every iteration is scored by the heuristic, so every root move's
/// mean is its 0.37 exactly; without the heuristic, or without the cut-off, playouts run to
/// the end and the means are wins and losses.
#[test]
fn cut_playouts_are_scored_by_the_heuristic() {
    let mut m = breakthrough();
    let s = m.initial_state();
    let cfg = MctsConfig { seed: 3, cutoff: 1, ..MctsConfig::default() };
    for playout in [Playout::Random, Playout::Mast] {
        let mut t = Mcts::<PropnetMachine>::new(MctsConfig { playout, ..cfg });
        t.set_heuristic(Some(constant()));
        t.select(&mut m, &s, 0, Limit::iterations(60)).unwrap();
        let v = means(&t.root_stats(0));
        assert!(v.len() > 3 && v.iter().all(|x| (x - 0.37).abs() < 1e-9), "{playout:?}: {v:?}");
    }
    for (cutoff, heuristic) in [(1, None), (0, Some(constant()))] {
        let mut t = Mcts::<PropnetMachine>::new(MctsConfig { cutoff, ..cfg });
        t.set_heuristic(heuristic);
        t.select(&mut m, &s, 0, Limit::iterations(60)).unwrap();
        let v = means(&t.root_stats(0));
        assert!(v.iter().any(|x| (x - 0.37).abs() > 1e-6), "cutoff {cutoff}: {v:?}");
    }
}

/// Tree-parallel helpers cut and score their playouts the same way.
#[test]
fn helpers_cut_and_score_their_playouts_too() {
    let mut m = breakthrough();
    let s = m.initial_state();
    let cfg = MctsConfig { seed: 4, cutoff: 1, ..MctsConfig::default() };
    let mut t = TreeParallelMcts::<PropnetMachine>::new(cfg, 2).with_heuristic(Some(constant()));
    t.select(&mut m, &s, 0, Limit::iterations(60)).unwrap();
    let tree = t.tree();
    assert!(tree.helpers.as_ref().is_some(), "helpers started");
    let v = means(&tree.root_stats(0));
    assert!(v.len() > 3 && v.iter().all(|x| (x - 0.37).abs() < 1e-9), "{v:?}");
}
