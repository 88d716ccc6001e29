//! Transpositions ([`MctsConfig::transpositions`]): the search graph, on the `gdl/` games
//! through the propnet.

use super::*;
use crate::gdl::Game;
use crate::propnet::{self, Budget, PropnetMachine};
use crate::search::Limit;
use std::path::Path;

fn propnet(file: &str) -> PropnetMachine {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let game = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    propnet::build(&game, &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

type PnState = <PropnetMachine as StateMachine>::State;

fn after(m: &mut PropnetMachine, moves: &str) -> PnState {
    let moves = crate::machine::split_moves(moves).unwrap();
    let init = m.initial_state();
    crate::machine::play_texts(m, &init, &moves).unwrap()
}

fn graph() -> MctsConfig {
    MctsConfig { seed: 3, transpositions: true, ..MctsConfig::default() }
}

/// Distinct states among the nodes, and the most parents any node has.
fn shape(t: &Mcts<PropnetMachine>) -> (usize, usize) {
    let states: rustc_hash::FxHashSet<&PnState> = t.nodes.iter().map(|n| &n.state).collect();
    let mut parents = vec![0usize; t.nodes.len()];
    for n in &t.nodes {
        for &(_, c) in &n.children {
            parents[c as usize] += 1;
        }
    }
    (states.len(), parents.into_iter().max().unwrap_or(0))
}

/// The table holds every node's state, each entry pointing at a node with that state.
fn check_table(t: &Mcts<PropnetMachine>) {
    let (distinct, _) = shape(t);
    assert_eq!(t.trans.len(), distinct);
    for n in &t.nodes {
        let &i = t.trans.get(&state_hash(&n.state)).expect("every node's state is in the table");
        assert_eq!(t.nodes[i as usize].state, n.state);
    }
}

#[test]
fn a_state_reached_by_two_orders_of_moves_is_one_node() {
    let mut m = propnet("tictactoe.kif");
    let s = m.initial_state();
    let mut t = Mcts::new(graph());
    t.select(&mut m, &s, 0, Limit::iterations(20_000)).unwrap();
    let (distinct, parents) = shape(&t);
    // Tic-tac-toe has no repeated position on a line of play: every node is a state of
    // its own, and some have several parents.
    assert_eq!(distinct, t.nodes.len());
    assert!(parents >= 2, "no node was reached twice");
    check_table(&t);
    // The tree without transpositions holds states twice over.
    let mut tree = Mcts::new(MctsConfig { transpositions: false, ..graph() });
    tree.select(&mut m, &s, 0, Limit::iterations(20_000)).unwrap();
    let (distinct, parents) = shape(&tree);
    assert!(distinct < tree.nodes.len(), "{distinct} states in {} nodes", tree.nodes.len());
    assert_eq!(parents, 1);
    assert!(tree.trans.is_empty());
}

/// The graph is kept from move to move: the table is rebuilt for the kept nodes.
#[test]
fn the_table_follows_tree_reuse_and_recycling() {
    let mut m = propnet("connect4.kif");
    let s = m.initial_state();
    let mut t = Mcts::new(MctsConfig { node_budget: 3_000, ..graph() });
    t.select(&mut m, &s, 0, Limit::iterations(5_000)).unwrap();
    assert!(t.recycled() > 0, "the budget was reached and the graph cut back");
    check_table(&t);
    let s2 = after(&mut m, "(drop 4) (drop 4)");
    t.select(&mut m, &s2, 0, Limit::iterations(2_000)).unwrap();
    assert_eq!(t.nodes[t.root as usize].state, s2);
    check_table(&t);
}

/// MCTS-Solver on the graph: a won tic-tac-toe position (x in the centre, o on an edge) is
/// proven won, and after the next two moves the kept graph still knows it.
#[test]
fn the_solver_proves_a_won_position_on_the_graph_and_keeps_it() {
    let mut m = propnet("tictactoe.kif");
    let s = after(&mut m, "(mark 2 2) (mark 1 2)");
    let mut t = Mcts::new(graph());
    let c = t.select(&mut m, &s, 0, Limit::iterations(50_000)).unwrap();
    assert!(c.proven && c.value == Some(1.0), "{c:?}");
    check_table(&t);
    let mv = m.move_text(c.mv);
    let reply = if mv == "( mark 1 1 )" { "(mark 3 3)" } else { "(mark 1 1)" };
    let s2 = after(&mut m, &format!("(mark 2 2) (mark 1 2) {mv} {reply}"));
    let c2 = t.select(&mut m, &s2, 0, Limit::iterations(1)).unwrap();
    assert_eq!(c2.value, Some(1.0), "still a win: {c2:?}");
    check_table(&t);
}

#[test]
fn the_graph_takes_the_win_and_blocks_the_loss_in_connect_four() {
    let mut m = propnet("connect4.kif");
    let win = after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3) (drop 6)");
    let block = after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3)");
    for playout in [Playout::Random, Playout::Mast] {
        for amaf in [Amaf::Off, Amaf::Grave] {
            let cfg = MctsConfig { playout, amaf, ..graph() };
            let c = Mcts::new(cfg).select(&mut m, &win, 0, Limit::iterations(2_000)).unwrap();
            assert_eq!(m.move_text(c.mv), "( drop 4 )", "{playout:?} {amaf:?} wins");
            let c = Mcts::new(cfg).select(&mut m, &block, 1, Limit::iterations(5_000)).unwrap();
            assert_eq!(m.move_text(c.mv), "( drop 4 )", "{playout:?} {amaf:?} blocks");
        }
    }
}

/// A game whose positions repeat (whose turn it is, and nothing else, until a player ends
/// it): descents never loop, and the immediate win is played.
#[test]
fn repeated_positions_do_not_make_the_search_loop() {
    let text = "(role a) (role b) (init (control a))
        (<= (legal ?r stay) (true (control ?r)))
        (<= (legal ?r finish) (true (control ?r)))
        (<= (legal a noop) (true (control b)))
        (<= (legal b noop) (true (control a)))
        (<= (next (control b)) (true (control a)) (does a stay))
        (<= (next (control a)) (true (control b)) (does b stay))
        (<= (next (won ?r)) (does ?r finish))
        (<= terminal (true (won ?r)))
        (<= (goal a 100) (true (won a)))
        (<= (goal a 0) (true (won b)))
        (<= (goal b 100) (true (won b)))
        (<= (goal b 0) (true (won a)))
        (<= (goal ?r 50) (role ?r) (not (true (won a))) (not (true (won b))))";
    let game = Game::parse("cycle.kif", text).unwrap();
    let mut m = propnet::build(&game, &Budget::default()).unwrap().0;
    let s = m.initial_state();
    for playout in [Playout::Random, Playout::Mast] {
        // Plain UCT (no solver, which would prove the win at once and stop): every
        // iteration descends through the repeating positions.
        let mut t = Mcts::new(MctsConfig { playout, max_playout_depth: 50, solver: false, ..graph() });
        let c = t.select(&mut m, &s, 0, Limit::iterations(20_000)).unwrap();
        assert_eq!(c.iterations, 20_000);
        assert_eq!(m.move_text(c.mv), "finish");
        // Four states, however many times they repeat on a line of play.
        let (distinct, _) = shape(&t);
        assert_eq!(distinct, 4);
        check_table(&t);
    }
}
