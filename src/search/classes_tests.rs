//! Position classes ([`MctsConfig::position_classes`]) on `gdl/vault.kif`, whose corridor
//! moves are reversible but for the step counter: the hyperstate player's key (states equal
//! but for the step counter, `hsg::prune`) puts a cell reached at different steps in one
//! class.

use super::*;
use crate::gdl::Game;
use crate::hsg::prune::PrunedMachine;
use crate::hsg::{BaseMask, HsgOptions};
use crate::propnet::{self, Budget, PropnetMachine};
use crate::search::Limit;
use std::path::Path;
use std::sync::Arc;

type Pooled = PrunedMachine<PropnetMachine>;

fn vault() -> Pooled {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/vault.kif");
    let game = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    let (mut m, _, net) = propnet::build_keeping_net(&game, &Budget::default(), false).unwrap();
    let (mask, ignored) = BaseMask::weak(&net, m.initial_state().bits.len());
    assert!(!ignored.is_empty(), "the step counter is a timer base");
    let (pruned, _) = PrunedMachine::new(m, &HsgOptions::default()).unwrap();
    pruned.with_position_key(Arc::new(move |s| mask.key(s)))
}

fn after(m: &mut Pooled, moves: &str) -> <Pooled as StateMachine>::State {
    let moves = crate::machine::split_moves(moves).unwrap();
    let init = m.initial_state();
    crate::machine::play_texts(m, &init, &moves).unwrap()
}

fn pooled() -> MctsConfig {
    MctsConfig { seed: 5, position_classes: true, ..MctsConfig::default() }
}

#[test]
fn the_key_ignores_only_the_step_counter() {
    let mut m = vault();
    let start = m.initial_state();
    let back = after(&mut m, "(go right) (go left)");
    assert_ne!(start, back);
    assert_eq!(m.position_key(&start), m.position_key(&back));
    for other in ["(go right)", "take"] {
        let s = after(&mut m, other);
        assert_ne!(m.position_key(&start), m.position_key(&s), "{other}");
    }
}

/// Every descent through a node below the root counts once in the node's class, so a class
/// holds the visits of all its nodes; nodes share a class exactly when their keys are equal.
#[test]
fn a_class_counts_the_descents_through_all_its_states() {
    let mut m = vault();
    let s = m.initial_state();
    // Without the solver, which proves the start won in a few nodes, the tree grows.
    let mut t = Mcts::new(MctsConfig { solver: false, ..pooled() });
    t.select(&mut m, &s, 0, Limit::iterations(3_000)).unwrap();
    assert_eq!(t.recycled(), 0);
    let mut by_class: FxHashMap<u32, (u32, Vec<u64>)> = FxHashMap::default();
    let mut states_per_class: FxHashMap<u32, rustc_hash::FxHashSet<&PnState>> = FxHashMap::default();
    for (i, n) in t.nodes.iter().enumerate() {
        assert_ne!(n.class, NO_CLASS, "every state has a key");
        let e = by_class.entry(n.class).or_default();
        if i != t.root as usize {
            e.0 += n.visits;
        }
        e.1.push(m.position_key(&n.state).unwrap());
        states_per_class.entry(n.class).or_default().insert(&n.state);
    }
    for (&c, (visits, keys)) in &by_class {
        assert_eq!(t.classes.stats(c, 0).0, *visits, "class {c}");
        assert!(keys.iter().all(|&k| k == keys[0]), "one key per class");
    }
    let keys: rustc_hash::FxHashSet<u64> = by_class.values().map(|v| v.1[0]).collect();
    assert_eq!(keys.len(), by_class.len(), "one class per key");
    assert!(states_per_class.values().any(|s| s.len() >= 2), "some class pools states reached at different steps");
}

type PnState = <Pooled as StateMachine>::State;

/// At a node where one role chooses, a move is ranked by its child's class mean once the
/// class has seen more than the move: weighting one child's class with many won (or lost)
/// descents decides the choice.
#[test]
fn selection_ranks_a_move_by_its_class() {
    for favoured in 0..2 {
        let mut m = vault();
        let s = m.initial_state();
        let mut t = Mcts::new(pooled());
        t.select(&mut m, &s, 0, Limit::iterations(40)).unwrap();
        let root = t.root as usize;
        assert_eq!(t.nodes[root].moves.len(), 2, "go right, take");
        assert!(t.nodes[root].n.iter().all(|&n| n > 0));
        for &(code, child) in &t.nodes[root].children.clone() {
            let class = t.nodes[child as usize].class;
            let won = if code as usize == favoured { 1e6 } else { 0.0 };
            t.classes.add(class, 1_000_000, &[won]);
        }
        for _ in 0..5 {
            t.path_moves.clear();
            t.path_probs.clear();
            t.select_joint(root);
            assert_eq!(t.path_moves[0] as usize, favoured);
        }
    }
}

#[test]
fn without_the_option_no_class_is_kept() {
    let mut m = vault();
    let s = m.initial_state();
    let mut t = Mcts::new(MctsConfig { position_classes: false, ..pooled() });
    t.select(&mut m, &s, 0, Limit::iterations(500)).unwrap();
    assert_eq!(t.classes.len(), 0);
    assert!(t.nodes.iter().all(|n| n.class == NO_CLASS));
}
