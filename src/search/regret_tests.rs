//! Regret matching at simultaneous-move nodes: its average strategy approaches the equilibrium
//! that `factotum solve` computes exactly, and the move played is sampled from it.

use super::*;
use crate::equilibrium::{solve, SolveOptions};
use crate::gdl::Game;
use crate::propnet::{self, Budget, PropnetMachine};
use crate::search::Limit;
use std::path::Path;

fn propnet(file: &str) -> PropnetMachine {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let game = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    propnet::build(&game, &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

fn regret(seed: u64) -> MctsConfig {
    MctsConfig { seed, simultaneous: Simultaneous::Regret, ..MctsConfig::default() }
}

#[test]
fn the_average_strategy_approaches_the_exact_equilibrium() {
    for file in ["rock_paper_scissors.kif", "mixed_2x2.kif"] {
        let mut m = propnet(file);
        let s = m.initial_state();
        let exact = solve(&mut m, &s, &SolveOptions::default()).unwrap();
        for role in 0..2 {
            let mut t = Mcts::<PropnetMachine>::new(regret(3));
            t.select(&mut m, &s, role, Limit::iterations(200_000)).expect("a move");
            let avg = t.root_average_strategy(role).expect("a simultaneous root");
            let eq: Vec<f64> = exact.induction.roles[role].start.iter().map(|&(_, p)| p).collect();
            assert_eq!(avg.len(), eq.len());
            for (a, e) in avg.iter().zip(&eq) {
                assert!((a - e).abs() < 0.03, "{file}, role {role}: average {avg:?}, equilibrium {eq:?}");
            }
        }
    }
}

#[test]
fn decoupled_ucb_keeps_no_regrets_and_turn_taking_nodes_none_either() {
    let mut m = propnet("rock_paper_scissors.kif");
    let s = m.initial_state();
    let mut t = Mcts::<PropnetMachine>::new(MctsConfig { seed: 3, ..MctsConfig::default() });
    t.select(&mut m, &s, 0, Limit::iterations(1000)).expect("a move");
    assert_eq!(t.root_average_strategy(0), None);
    // Tic-tac-toe has no simultaneous node: regret matching changes nothing there.
    let mut m = propnet("tictactoe.kif");
    let s = m.initial_state();
    let mut t = Mcts::<PropnetMachine>::new(regret(3));
    t.select(&mut m, &s, 0, Limit::iterations(1000)).expect("a move");
    assert_eq!(t.root_average_strategy(0), None);
}

/// The move played at a simultaneous root is sampled from the average strategy: at
/// rock-paper-scissors every shape is played by some seeds (the most visited move would be
/// one shape per seed, but not an equilibrium).
#[test]
fn the_move_played_is_sampled_from_the_average_strategy() {
    let mut m = propnet("rock_paper_scissors.kif");
    let s = m.initial_state();
    let mut counts = std::collections::HashMap::new();
    for seed in 0..60 {
        let mut t = Mcts::<PropnetMachine>::new(regret(seed));
        let c = t.select(&mut m, &s, 0, Limit::iterations(3000)).expect("a move");
        *counts.entry(m.move_text(c.mv)).or_insert(0) += 1;
    }
    assert_eq!(counts.len(), 3, "{counts:?}");
    assert!(counts.values().all(|&n| n >= 8), "{counts:?}");
}

/// Thresholding: with a threshold above every average probability but the largest, the move
/// played is always the average strategy's most likely one.
#[test]
fn thresholding_leaves_out_the_average_strategys_small_moves() {
    let mut m = propnet("mixed_2x2.kif");
    let s = m.initial_state();
    for seed in 0..20 {
        let mut t = Mcts::<PropnetMachine>::new(MctsConfig { regret_threshold: 0.9, ..regret(seed) });
        let c = t.select(&mut m, &s, 0, Limit::iterations(3000)).expect("a move");
        let avg = t.root_average_strategy(0).unwrap();
        let top = (0..avg.len()).max_by(|&a, &b| avg[a].total_cmp(&avg[b])).unwrap();
        let legal = {
            let mut l = Vec::new();
            m.legal_moves(&s, 0, &mut l);
            l
        };
        assert_eq!(c.mv, legal[top], "seed {seed}: average {avg:?}");
    }
}
