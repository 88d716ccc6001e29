//! Searchers on the `gdl/` games: every searcher returns a legal move; MCTS takes a win in
//! one, blocks a loss in one, proves a won position, reuses its tree and keeps to its node
//! budget.

use super::*;
use crate::gdl::Game;
use crate::interp::Interpreter;
use crate::propnet::{self, Budget, PropnetMachine};
use std::path::Path;
use std::time::Duration;

fn game(file: &str) -> Game {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    Game::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn propnet(file: &str) -> PropnetMachine {
    propnet::build(&game(file), &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

/// Plays joint moves given as texts, one list per step (role order).
fn play<M: StateMachine>(m: &mut M, steps: &[&[&str]]) -> M::State {
    let mut s = m.initial_state();
    let mut legal = Vec::new();
    for step in steps {
        let mut joint = Vec::new();
        for (r, text) in step.iter().enumerate() {
            m.legal_moves(&s, r, &mut legal);
            let mv = legal.iter().copied().find(|&mv| m.move_text(mv) == *text);
            joint.push(mv.unwrap_or_else(|| panic!("{text} is not legal for role {r}")));
        }
        let mut next = s.clone();
        m.next_state(&s, &joint, &mut next);
        s = next;
    }
    s
}

fn soon(ms: u64) -> Limit<'static> {
    Limit::until(Instant::now() + Duration::from_millis(ms))
}

fn mcts<M: StateMachine>() -> Mcts<M> {
    Mcts::new(MctsConfig { seed: 7, ..MctsConfig::default() })
}

/// x has (1 1) and (1 2), o has (2 1) and (2 2); x to move.
const X_WINS_IN_ONE: &[&[&str]] =
    &[&["( mark 1 1 )", "noop"], &["noop", "( mark 2 1 )"], &["( mark 1 2 )", "noop"], &["noop", "( mark 2 2 )"]];

#[test]
fn every_searcher_plays_legal_moves_on_every_game() {
    for file in
        ["tictactoe.kif", "connect4.kif", "parallel_tictactoe.kif", "joined_tictactoe.kif", "three_to_fifteen.kif"]
    {
        let mut m = propnet(file);
        let roles = m.roles().len();
        let mut searchers: Vec<Box<dyn Search<PropnetMachine>>> = vec![
            Box::new(FirstLegal),
            Box::new(RandomMove::new(1)),
            Box::new(FlatMc::new(1, 500)),
            Box::new(mcts::<PropnetMachine>()),
        ];
        for (k, s) in searchers.iter_mut().enumerate() {
            let mut state = m.initial_state();
            let mut legal = Vec::new();
            let mut steps = 0;
            while !m.is_terminal(&state) {
                let mut joint = Vec::new();
                for r in 0..roles {
                    // The searcher plays role 0; the others play their first move.
                    let mv = if r == 0 {
                        s.select(&mut m, &state, r, soon(5)).expect("a move").mv
                    } else {
                        m.legal_moves(&state, r, &mut legal);
                        legal[0]
                    };
                    m.legal_moves(&state, r, &mut legal);
                    assert!(legal.contains(&mv), "{file}: searcher {k} ({}) chose an illegal move", s.name());
                    joint.push(mv);
                }
                let mut next = state.clone();
                m.next_state(&state, &joint, &mut next);
                state = next;
                steps += 1;
                assert!(steps < 200, "{file}: no end");
            }
            assert!(s.select(&mut m, &state, 0, soon(5)).is_none(), "{file}: a move in a terminal state");
        }
    }
}

#[test]
fn mcts_takes_a_win_in_one_and_proves_it() {
    let mut m = propnet("tictactoe.kif");
    let s = play(&mut m, X_WINS_IN_ONE);
    let mut search = mcts::<PropnetMachine>();
    let c = search.select(&mut m, &s, 0, soon(200)).expect("a move");
    assert_eq!(m.move_text(c.mv), "( mark 1 3 )");
    assert!(c.proven, "the win is proven");
    assert_eq!(c.value, Some(1.0));
}

#[test]
fn mcts_blocks_a_loss_in_one_on_the_interpreter() {
    // o to move must block (mark 1 3); any other move loses.
    let mut m = Interpreter::new(&game("tictactoe.kif")).expect("interp");
    let s = play(&mut m, &[&["( mark 1 1 )", "noop"], &["noop", "( mark 2 2 )"], &["( mark 1 2 )", "noop"]]);
    let mut search = mcts::<Interpreter>();
    let c = search.select(&mut m, &s, 1, soon(500)).expect("a move");
    assert_eq!(m.move_text(c.mv), "( mark 1 3 )");
}

#[test]
fn flat_mc_takes_a_win_in_one() {
    let mut m = propnet("tictactoe.kif");
    let s = play(&mut m, X_WINS_IN_ONE);
    let mut search = FlatMc::new(3, 100);
    let c = search.select(&mut m, &s, 0, soon(200)).expect("a move");
    assert_eq!(m.move_text(c.mv), "( mark 1 3 )");
}

#[test]
fn mcts_proves_tictactoe_from_a_won_position_and_keeps_its_tree() {
    // x: centre and corner; o played an edge: x wins with best play.
    let mut m = propnet("tictactoe.kif");
    let s = play(&mut m, &[&["( mark 2 2 )", "noop"], &["noop", "( mark 1 2 )"]]);
    let mut search = mcts::<PropnetMachine>();
    let c = search.select(&mut m, &s, 0, soon(3000)).expect("a move");
    assert!(c.proven && c.value == Some(1.0), "expected a proven win, got {c:?}");
    let size = search.tree_size();
    assert!(size > 1);
    // The opponent's reply: the tree under it is kept.
    let mv = m.move_text(c.mv);
    let reply = if mv == "( mark 1 1 )" { "( mark 3 3 )" } else { "( mark 1 1 )" };
    let s2 =
        play(&mut m, &[&["( mark 2 2 )", "noop"], &["noop", "( mark 1 2 )"], &[mv.as_str(), "noop"], &["noop", reply]]);
    let c2 = search.select(&mut m, &s2, 0, soon(1)).expect("a move");
    assert!(search.tree_size() < size, "the tree was cut to a subtree");
    assert_eq!(c2.value, Some(1.0), "still a win: {c2:?}");
}

#[test]
fn mcts_keeps_to_its_node_budget() {
    let mut m = propnet("connect4.kif");
    let s = m.initial_state();
    let mut search = Mcts::<PropnetMachine>::new(MctsConfig { node_budget: 500, ..MctsConfig::default() });
    let c = search.select(&mut m, &s, 0, soon(300)).expect("a move");
    assert!(c.iterations > 500, "it searches on past the budget ({} iterations)", c.iterations);
    assert!(search.tree_size() <= 500);
    assert!(search.recycled() > 0, "the full tree was cut back");
    assert!(search.tree_size() > 250, "and grew again: {} nodes", search.tree_size());
    // The cut-back tree is still a tree of the game: play on and keep searching.
    let mut legal = Vec::new();
    m.legal_moves(&s, 0, &mut legal);
    assert!(legal.contains(&c.mv));
    let c2 = search.select(&mut m, &s, 0, soon(100)).expect("a move");
    assert!(legal.contains(&c2.mv));
}

#[test]
fn mcts_plays_simultaneous_moves() {
    // parallel tic-tac-toe: both roles have many moves at once in no state, but the
    // decoupled statistics must handle any joint; play a few turns on both roles.
    let mut m = propnet("parallel_tictactoe.kif");
    let mut s = m.initial_state();
    let mut a = mcts::<PropnetMachine>();
    let mut b = mcts::<PropnetMachine>();
    let mut legal = Vec::new();
    for _ in 0..4 {
        if m.is_terminal(&s) {
            break;
        }
        let ma = a.select(&mut m, &s, 0, soon(30)).expect("move").mv;
        let mb = b.select(&mut m, &s, 1, soon(30)).expect("move").mv;
        m.legal_moves(&s, 0, &mut legal);
        assert!(legal.contains(&ma));
        m.legal_moves(&s, 1, &mut legal);
        assert!(legal.contains(&mb));
        let mut next = s.clone();
        m.next_state(&s, &[ma, mb], &mut next);
        s = next;
    }
}

#[test]
fn parallel_mcts_blocks_a_loss_and_takes_a_win_with_several_trees() {
    let cfg = MctsConfig { seed: 3, ..MctsConfig::default() };
    // o to move must block (mark 1 3); the trees' visits are summed.
    let mut m = propnet("tictactoe.kif");
    let s = play(&mut m, &[&["( mark 1 1 )", "noop"], &["noop", "( mark 2 2 )"], &["( mark 1 2 )", "noop"]]);
    let mut search = ParallelMcts::<PropnetMachine>::new(cfg, 3);
    let c = search.select(&mut m, &s, 1, soon(300)).expect("a move");
    assert_eq!(m.move_text(c.mv), "( mark 1 3 )");
    assert!(c.iterations > 0);
    // x to move wins at once; a proven win from any tree is played.
    let s = play(&mut m, X_WINS_IN_ONE);
    let c = ParallelMcts::<PropnetMachine>::new(cfg, 2).select(&mut m, &s, 0, soon(200)).expect("a move");
    assert_eq!(m.move_text(c.mv), "( mark 1 3 )");
    assert!(c.proven);
}

/// Both roles choose at every step. a wins by `left` then `win` whatever b does; `right`
/// draws; `left` then `stay` loses.
const SIMULTANEOUS_FORCED_WIN: &str = "
(role a) (role b)
(init (at start))
(<= (legal a left) (true (at start)))
(<= (legal a right) (true (at start)))
(<= (legal a win) (true (at l)))
(<= (legal a stay) (true (at l)))
(legal b x) (legal b y)
(<= (next (at l)) (does a left))
(<= (next (at r)) (does a right))
(<= (next (at won)) (does a win))
(<= (next (at lost)) (does a stay))
(<= terminal (true (at r)))
(<= terminal (true (at won)))
(<= terminal (true (at lost)))
(<= (goal a 100) (true (at won)))
(<= (goal b 0) (true (at won)))
(<= (goal a 50) (true (at r)))
(<= (goal b 50) (true (at r)))
(<= (goal a 0) (true (at lost)))
(<= (goal b 100) (true (at lost)))
";

#[test]
fn mcts_proves_a_forced_win_at_simultaneous_move_nodes() {
    let g = Game::parse("simultaneous", SIMULTANEOUS_FORCED_WIN).expect("parse");
    let mut m = propnet::build(&g, &Budget::default()).expect("build").0;
    let s = m.initial_state();
    let mut search = mcts::<PropnetMachine>();
    let c = search.select(&mut m, &s, 0, soon(2000)).expect("a move");
    assert_eq!(m.move_text(c.mv), "left");
    assert!(c.proven, "the forced win is proven");
    assert_eq!(c.value, Some(1.0));
    assert!(c.iterations < 1000, "the proof ends the search early: {} iterations", c.iterations);
    // b's moves are all proven losses, whatever it plays.
    let c = mcts::<PropnetMachine>().select(&mut m, &s, 1, soon(2000)).expect("a move");
    assert!(c.proven && c.value == Some(0.0), "{c:?}");
}
