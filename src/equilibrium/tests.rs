//! Solves of games whose answers are known by hand (`gdl/` headers give them), agreement of the
//! two solvers, the independent guarantee check, and the errors.

use super::matrix::max_min;
use super::*;
use crate::gdl::Game;
use crate::interp::Interpreter;
use crate::propnet::{self, Budget, PropnetMachine};
use std::path::Path;

fn game(file: &str) -> Game {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    Game::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn propnet(file: &str) -> PropnetMachine {
    propnet::build(&game(file), &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

fn solve_file(file: &str) -> Report {
    let mut m = propnet(file);
    let s = m.initial_state();
    solve(&mut m, &s, &SolveOptions::default()).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

fn prob(r: &RoleSolution, text: &str) -> f64 {
    r.start.iter().find(|(t, _)| t == text).unwrap_or_else(|| panic!("no move {text} in {:?}", r.start)).1
}

/// Both solvers' answers for one role, with their guarantees.
fn both(rep: &Report, role: usize) -> [RoleSolution; 2] {
    let seq = rep.sequence.as_ref().unwrap_or_else(|e| panic!("no sequence form: {e}"));
    [rep.induction.roles[role].clone(), seq.roles[role].clone()]
}

#[test]
fn matrix_games_by_saddle_point_and_by_program() {
    // A pure saddle point: row 1's minimum (3) is column 0's maximum.
    let m = max_min(&[1.0, 5.0, 3.0, 4.0], 2, 2).unwrap();
    assert_eq!((m.value, m.strategy.clone(), m.by_lp), (3.0, vec![0.0, 1.0], false));
    // Matching pennies: 50, uniform, by a program.
    let m = max_min(&[100.0, 0.0, 0.0, 100.0], 2, 2).unwrap();
    assert!(m.by_lp && close(m.value, 50.0) && close(m.strategy[0], 0.5), "{m:?}");
    // A dominated row gets nothing: row 2 is worse than row 0 everywhere.
    let m = max_min(&[100.0, 0.0, 0.0, 100.0, 10.0, -5.0], 3, 2).unwrap();
    assert!(close(m.value, 50.0) && close(m.strategy[2], 0.0), "{m:?}");
    // One column: the best row.
    assert_eq!(max_min(&[1.0, 7.0, 3.0], 3, 1).unwrap().strategy, vec![0.0, 1.0, 0.0]);
}

#[test]
fn rock_paper_scissors_is_worth_50_with_the_uniform_strategy() {
    let rep = solve_file("rock_paper_scissors.kif");
    assert_eq!(rep.constant_sum, Some(100));
    assert!(rep.is_equilibrium());
    assert_eq!(rep.solvers_agree(), Some(true));
    for role in 0..2 {
        for r in both(&rep, role) {
            assert!(close(r.value, 50.0) && close(r.guarantee, 50.0), "{r:?}");
            for shape in ["( throw rock )", "( throw paper )", "( throw scissors )"] {
                assert!(close(prob(&r, shape), 1.0 / 3.0), "{r:?}");
            }
        }
    }
    assert_eq!((rep.induction.states, rep.induction.terminals, rep.induction.simultaneous_states), (10, 9, 1));
    let seq = rep.sequence.as_ref().unwrap();
    assert_eq!((seq.nodes, seq.leaves, seq.sequences, seq.points), (10, 9, [4, 4], [1, 1]));
}

#[test]
fn a_two_by_two_game_without_saddle_point_has_the_hand_computed_answer() {
    let rep = solve_file("mixed_2x2.kif");
    assert!(rep.is_equilibrium());
    for r in both(&rep, 0) {
        assert!(close(r.value, 300.0 / 7.0) && close(r.guarantee, 300.0 / 7.0), "{r:?}");
        assert!(close(prob(&r, "( pick a )"), 2.0 / 7.0), "{r:?}");
    }
    for r in both(&rep, 1) {
        assert!(close(r.value, 400.0 / 7.0) && close(r.guarantee, 400.0 / 7.0), "{r:?}");
        assert!(close(prob(&r, "( pick a )"), 3.0 / 7.0), "{r:?}");
    }
}

#[test]
fn a_turn_before_a_simultaneous_round_is_solved_through_both_forms() {
    let rep = solve_file("safe_or_mixed.kif");
    assert!(rep.is_equilibrium());
    assert_eq!(rep.solvers_agree(), Some(true));
    for r in both(&rep, 0) {
        assert!(close(r.value, 300.0 / 7.0) && close(r.guarantee, 300.0 / 7.0), "{r:?}");
        assert!(close(prob(&r, "( take game )"), 1.0), "{r:?}");
    }
    for r in both(&rep, 1) {
        assert!(close(r.value, 400.0 / 7.0), "{r:?}");
        assert_eq!(r.start, vec![("noop".to_string(), 1.0)]);
    }
    // Row decides at the root and in the round, column only in the round.
    let seq = rep.sequence.as_ref().unwrap();
    assert_eq!((seq.sequences, seq.points), ([5, 3], [2, 1]));
}

#[test]
fn a_game_that_is_not_constant_sum_gets_security_values_not_an_equilibrium() {
    let rep = solve_file("prisoners_dilemma.kif");
    assert_eq!(rep.constant_sum, None);
    assert!(!rep.is_equilibrium());
    for role in 0..2 {
        for r in both(&rep, role) {
            assert!(close(r.value, 20.0) && close(prob(&r, "defect"), 1.0), "{r:?}");
        }
    }
}

#[test]
fn tic_tac_toe_is_a_draw_and_its_tree_is_too_large_for_the_default_bound() {
    let rep = solve_file("tictactoe.kif");
    assert_eq!(rep.induction.states, 5478);
    assert_eq!(rep.induction.terminals, 958);
    assert_eq!(rep.induction.simultaneous_states, 0);
    assert!(rep.is_equilibrium());
    assert!(close(rep.induction.roles[0].value, 50.0) && close(rep.induction.roles[0].guarantee, 50.0));
    let why = rep.sequence.as_ref().err().expect("549,946 histories exceed 20,000");
    assert!(why.contains("20000 tree nodes"), "{why}");
}

/// Tic-tac-toe after four marks, where x can force a win, both through the interpreter and the
/// propnet: the two solvers, and the two reasoners, agree.
#[test]
fn the_two_solvers_agree_on_a_tic_tac_toe_position_with_a_forced_win() {
    let moves: Vec<String> = ["( mark 1 1 )", "( mark 1 2 )", "( mark 2 2 )", "( mark 3 3 )"].map(String::from).into();
    fn position<M: StateMachine>(m: &mut M, moves: &[String]) -> M::State {
        let init = m.initial_state();
        crate::machine::play_texts(m, &init, moves).expect("legal moves")
    }
    let mut pm = propnet("tictactoe.kif");
    let s = position(&mut pm, &moves);
    let a = solve(&mut pm, &s, &SolveOptions::default()).unwrap();
    let mut im = Interpreter::new(&game("tictactoe.kif")).unwrap();
    let s = position(&mut im, &moves);
    let b = solve(&mut im, &s, &SolveOptions::default()).unwrap();
    for rep in [&a, &b] {
        assert_eq!(rep.solvers_agree(), Some(true));
        let x = both(rep, 0);
        // x, on turn, wins: (mark 2 1) or (mark 3 1) makes two threats at once.
        assert!(close(x[0].value, 100.0) && close(x[1].value, 100.0), "{x:?}");
        assert!(close(x[0].guarantee, 100.0) && close(x[1].guarantee, 100.0), "{x:?}");
    }
    assert_eq!(a.induction.states, b.induction.states);
    assert_eq!(a.sequence.as_ref().unwrap().nodes, b.sequence.as_ref().unwrap().nodes);
}

/// The guarantee check is independent of the programs: a wrong strategy shows.
#[test]
fn a_wrong_strategy_guarantees_less_than_the_value() {
    let mut m = propnet("rock_paper_scissors.kif");
    let s = m.initial_state();
    let opts = SolveOptions::default();
    let g = induction::StateGraph::explore(&mut m, &s, &opts).unwrap();
    let mut solved = induction::solve_role(&g, 0, &opts).unwrap();
    assert!(close(induction::guarantee(&g, 0, &solved.strategies), 50.0));
    solved.strategies[0] = vec![1.0, 0.0, 0.0];
    assert!(close(induction::guarantee(&g, 0, &solved.strategies), 0.0));
    let sf = sequence::SequenceForm::build(&mut m, &s, &opts).unwrap();
    let mut x = sf.solve_role(0, &opts).unwrap().x;
    assert!(close(sf.guarantee(0, &x), 50.0));
    x[1] = 0.5;
    x[2] = 0.5;
    x[3] = 0.0;
    assert!(sf.guarantee(0, &x) < 50.0 - 1.0);
}

#[test]
fn games_outside_the_solvers_reach_get_clear_errors() {
    let three = Game::parse(
        "three.kif",
        "(role a) (role b) (role c) (init p) (<= (legal ?r go) (role ?r)) (<= (next q) (true p))
         (<= terminal (true q)) (<= (goal ?r 50) (role ?r))",
    )
    .unwrap();
    let mut m = Interpreter::new(&three).unwrap();
    let s = m.initial_state();
    assert!(matches!(solve(&mut m, &s, &SolveOptions::default()), Err(SolveError::Roles(3))));
    let forever = Game::parse(
        "forever.kif",
        "(role a) (role b) (init on) (<= (legal ?r flip) (role ?r)) (<= (next off) (true on))
         (<= (next on) (not (true on))) (<= terminal (true never)) (<= (goal ?r 50) (role ?r))",
    )
    .unwrap();
    let mut m = Interpreter::new(&forever).unwrap();
    let s = m.initial_state();
    assert!(matches!(solve(&mut m, &s, &SolveOptions::default()), Err(SolveError::Cycle)));
    let mut m = propnet("tictactoe.kif");
    let s = m.initial_state();
    let small = SolveOptions { max_states: 100, ..SolveOptions::default() };
    assert!(matches!(solve(&mut m, &s, &small), Err(SolveError::TooLarge { what: "states", limit: 100 })));
}
