//! Tree-parallel MCTS ([`TreeParallelMcts`]): helper threads play the tree's playouts, and
//! every descent handed to them is backed up or taken back.

use super::*;
use crate::gdl::Game;
use crate::propnet::{self, Budget, PropnetMachine};
use crate::search::Limit;
use std::path::Path;

fn propnet(file: &str) -> PropnetMachine {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let game = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    propnet::build_with(&game, &Budget::default(), true).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

fn after(m: &mut PropnetMachine, moves: &str) -> <PropnetMachine as StateMachine>::State {
    let moves = crate::machine::split_moves(moves).unwrap();
    let init = m.initial_state();
    crate::machine::play_texts(m, &init, &moves).unwrap()
}

/// The playouts helpers play: random, MAST, batched, random with decisive moves, and NST.
const KINDS: [(Playout, bool); 5] = [
    (Playout::Random, false),
    (Playout::Mast, false),
    (Playout::Batch, false),
    (Playout::Random, true),
    (Playout::Nst, false),
];

fn cfg(playout: Playout, decisive: bool) -> MctsConfig {
    MctsConfig { seed: 11, playout, decisive, ..MctsConfig::default() }
}

/// Every descent was backed up whole or taken back whole: at each node the visits of each
/// role's moves add up to the visits of its children (a virtual loss left behind is a move
/// visit that never reached a child), and, connect four being zero-sum, the rewards of all
/// roles add up to one per visit. Returns the nodes checked.
fn every_descent_accounted(t: &Mcts<PropnetMachine>, what: &str) -> usize {
    let mut checked = 0;
    for node in &t.nodes {
        if node.children.is_empty() {
            continue;
        }
        let roles = node.offs.len() - 1;
        let below: u64 = node.children.iter().map(|&(_, c)| t.nodes[c as usize].visits as u64).sum();
        for r in 0..roles {
            let n: u64 = (node.offs[r]..node.offs[r + 1]).map(|i| node.n[i as usize] as u64).sum();
            assert_eq!(n, below, "{what}: role {r}'s move visits against the children's visits");
        }
        let w: f64 = node.w.iter().sum();
        assert!((w - below as f64).abs() < 1e-6, "{what}: rewards {w} for {below} visits");
        checked += 1;
    }
    checked
}

#[test]
fn helpers_play_and_every_descent_is_backed_up() {
    let mut m = propnet("connect4.kif");
    let s = m.initial_state();
    for (playout, decisive) in KINDS {
        let what = format!("{playout:?} decisive {decisive}");
        let mut t = TreeParallelMcts::new(cfg(playout, decisive), 2);
        let budget = if decisive { 1_500 } else { 6_000 };
        let c = t.select(&mut m, &s, 0, Limit::iterations(budget)).unwrap();
        let tree = t.tree();
        assert_eq!(tree.helper_count(), 1, "{what}");
        let root = &tree.nodes[tree.root as usize];
        // The helper played (how large its share is depends on what else the machine runs).
        let helped = tree.helper_playouts();
        assert!(helped > 0 && helped < root.visits as u64, "{what}: the helper played {helped} of {}", root.visits);
        assert!(every_descent_accounted(tree, &what) > 100, "{what}");
        if playout != Playout::Batch {
            // One playout per descent, all of them backed up.
            assert_eq!(root.visits as u64, c.iterations, "{what}");
        }
        // The next turn reuses the tree with the helper still there.
        let text = m.move_text(c.mv);
        let next = after(&mut m, &text);
        t.select(&mut m, &next, 1, Limit::iterations(budget)).unwrap();
        assert_eq!(t.tree().helper_count(), 1, "{what}");
        assert!(every_descent_accounted(t.tree(), &what) > 100, "{what} after a move");
    }
}

#[test]
fn tree_parallel_search_takes_a_win_and_blocks_a_loss_in_connect_four() {
    let mut m = propnet("connect4.kif");
    let win = after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3) (drop 6)");
    let block = after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3)");
    for (playout, decisive) in KINDS {
        let mut t = TreeParallelMcts::new(cfg(playout, decisive), 2);
        let c = t.select(&mut m, &win, 0, Limit::iterations(2_000)).unwrap();
        assert_eq!(m.move_text(c.mv), "( drop 4 )", "{playout:?} {decisive}: wins");
        let mut t = TreeParallelMcts::new(cfg(playout, decisive), 2);
        let c = t.select(&mut m, &block, 1, Limit::iterations(5_000)).unwrap();
        assert_eq!(m.move_text(c.mv), "( drop 4 )", "{playout:?} {decisive}: blocks");
    }
}

/// A search to a deadline answers in time: the helper's jobs stop at the deadline, and the
/// descents they had not played are taken back.
#[test]
fn tree_parallel_search_answers_by_the_deadline() {
    let mut m = propnet("connect4.kif");
    let s = m.initial_state();
    for (playout, decisive) in KINDS {
        let mut t = TreeParallelMcts::new(cfg(playout, decisive), 3);
        let start = std::time::Instant::now();
        let deadline = start + Duration::from_millis(150);
        let c = t.select(&mut m, &s, 0, Limit::until(deadline)).unwrap();
        let late = std::time::Instant::now().saturating_duration_since(deadline);
        // (Loose: other tests share the cores.)
        assert!(late < Duration::from_millis(500), "{playout:?} {decisive}: {late:?} late");
        assert_eq!(t.tree().helper_count(), 2);
        assert!(c.iterations > 100);
        every_descent_accounted(t.tree(), &format!("{playout:?} {decisive} to a deadline"));
    }
}

/// With GRAVE the helper plays too, and the search finds the win in one.
#[test]
fn with_grave_the_helper_plays_and_the_win_is_found() {
    let mut m = propnet("connect4.kif");
    let win = after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3) (drop 6)");
    let mut t = TreeParallelMcts::new(MctsConfig { amaf: Amaf::Grave, ..MctsConfig::default() }, 2);
    let c = t.select(&mut m, &win, 0, Limit::iterations(2_000)).unwrap();
    assert_eq!(m.move_text(c.mv), "( drop 4 )");
    assert_eq!(t.tree().helper_count(), 1);
}

/// A full tree is cut back while helpers search: their descents are backed up first (the
/// cut renumbers nodes), and the search goes on.
#[test]
fn recycling_waits_for_the_helpers() {
    let mut m = propnet("connect4.kif");
    let s = m.initial_state();
    let mut t = TreeParallelMcts::new(MctsConfig { node_budget: 300, ..cfg(Playout::Random, false) }, 2);
    let c = t.select(&mut m, &s, 0, Limit::iterations(20_000)).unwrap();
    assert!(t.tree().recycled() > 0);
    assert!(t.tree().tree_size() <= 300);
    assert!(c.iterations >= 20_000);
    assert!(t.tree().helper_playouts() > 1_000);
}

/// With RAVE, GRAVE and killer-RAVE the helper plays too, and its playouts count in the AMAF
/// statistics: with RAVE and GRAVE every visit of a move counts in the move's AMAF visits
/// (the move was played at or below its node), so a node where some move has fewer AMAF
/// visits than visits has missed the AMAF update of a helper's playout.
#[test]
fn helpers_gather_amaf_statistics() {
    let mut m = propnet("connect4.kif");
    let s = m.initial_state();
    for amaf in [Amaf::Rave, Amaf::Grave, Amaf::Killer] {
        let what = format!("{amaf:?}");
        let mut t = TreeParallelMcts::new(MctsConfig { amaf, ..cfg(Playout::Random, false) }, 2);
        let c = t.select(&mut m, &s, 0, Limit::iterations(6_000)).unwrap();
        let tree = t.tree();
        assert_eq!(tree.helper_count(), 1, "{what}");
        let root = &tree.nodes[tree.root as usize];
        let helped = tree.helper_playouts();
        assert!(helped > 0 && helped < root.visits as u64, "{what}: the helper played {helped} of {}", root.visits);
        assert_eq!(root.visits as u64, c.iterations, "{what}");
        assert!(every_descent_accounted(tree, &what) > 100, "{what}");
        let amaf_visits: u64 = root.an.iter().map(|&n| n as u64).sum();
        assert!(amaf_visits > 0, "{what}: no AMAF statistics at the root");
        if amaf != Amaf::Killer {
            for (k, node) in tree.nodes.iter().enumerate() {
                for i in 0..node.n.len() {
                    assert!(
                        node.an[i] >= node.n[i],
                        "{what}: node {k} move {i}: {} AMAF visits, {} visits",
                        node.an[i],
                        node.n[i]
                    );
                }
            }
        }
    }
    // Similarity-guided AMAF is not shared: it searches on the main thread alone.
    let mut t = TreeParallelMcts::new(MctsConfig { amaf: Amaf::Similar, ..cfg(Playout::Random, false) }, 2);
    t.select(&mut m, &s, 0, Limit::iterations(500)).unwrap();
    assert_eq!((t.tree().helper_count(), t.tree().helper_playouts()), (0, 0));
}

/// With the interpreter no helper starts: its states and moves are ids into its own term
/// store, which a helper's clone extends on its own, so a helper read the tree's leaves
/// wrongly (and panicked on ids past its store: `factotum serve` at amazonsTorus, on the
/// interpreter while the propnet built). The search runs on one thread, and root-parallel
/// trees fall back to their first.
#[test]
fn with_the_interpreter_the_search_stays_on_one_thread() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join("connect4.kif");
    let game = Game::load(&p).unwrap();
    let mut m = crate::interp::Interpreter::new(&game).unwrap();
    assert!(!m.clones_share_states());
    assert!(propnet("connect4.kif").clones_share_states());
    let s = m.initial_state();
    let mut t = TreeParallelMcts::new(cfg(Playout::Random, false), 2);
    let c = t.select(&mut m, &s, 0, Limit::iterations(200)).unwrap();
    assert_eq!((t.tree().helper_count(), t.tree().helper_playouts()), (0, 0));
    assert_eq!(c.iterations, 200);
    let mut r = ParallelMcts::new(cfg(Playout::Random, false), 2);
    let c = r.select(&mut m, &s, 0, Limit::iterations(100)).unwrap();
    assert_eq!(c.iterations, 100, "the first tree's iterations only");
}
