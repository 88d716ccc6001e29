//! Each reduction of Definition 3 has a variant of tic-tac-toe in `gdl/` that needs it
//! (endturn: bookkeeping, twostep: single-player subtrees, openings: symmetry, wait: matrix
//! redundancy), so a broken reduction fails its test; relabelings (three-to-fifteen, the
//! renamed rules, misère outcomes, permuted matrix rows) must be found, and a changed rule
//! must not be.

use super::*;
use crate::gdl::Game;
use crate::propnet::{self, Budget, Compiled, PropnetMachine};
use std::path::Path;

fn text(file: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file)).unwrap()
}

fn graph_of(name: &str, rules: &str) -> GameGraph {
    let g = Game::parse(name, rules).unwrap();
    let b = propnet::build_net(&g, &Budget::default()).unwrap();
    let mut m = PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms, b.symbols));
    GameGraph::explore(&mut m, &EquivOptions::default()).unwrap()
}

fn graph(file: &str) -> GameGraph {
    graph_of(file, &text(file))
}

fn compare_files(a: &str, b: &str) -> (GameGraph, GameGraph, Comparison) {
    let (ga, gb) = (graph(a), graph(b));
    let c = compare(&ga, &gb);
    (ga, gb, c)
}

/// Equivalent with identical outcomes, B's roles playing `roles` of A.
fn assert_equivalent(b: &str, roles: &[usize]) -> Comparison {
    let (_, _, c) = compare_files("tictactoe.kif", b);
    let e = c.equivalent.as_ref().unwrap_or_else(|| panic!("tictactoe.kif ≢ {b} (distance {})", c.distance));
    assert!(e.identical_outcomes, "{b}");
    assert_eq!(e.roles, roles, "{b}");
    assert_eq!(c.distance, 0.0);
    assert!(!c.forms.approximate);
    c
}

#[test]
fn tictactoe_is_three_to_fifteen_through_the_magic_square() {
    let (a, b, c) = compare_files("tictactoe.kif", "three_to_fifteen.kif");
    let e = c.equivalent.as_ref().expect("equivalent");
    assert_eq!(e.roles, vec![0, 1]);
    // The root's classes: the corners are the even numbers, the sides the odd ones but 5,
    // the centre 5.
    let root = &c.forms.forms[c.canon_a[0] as usize];
    let Form::Choice { role: 0, children } = root else { panic!("{root:?}") };
    assert_eq!(children.len(), 3, "corner, side, centre");
    let mut classes: Vec<(Vec<String>, Vec<String>)> = children
        .iter()
        .map(|&f| {
            let texts = |g: &GameGraph, canon: &[u32]| {
                let mut t: Vec<String> =
                    paths_to(g, canon, 0, f, 1, 9).into_iter().map(|(p, _)| p[0].clone()).collect();
                t.sort();
                t
            };
            (texts(&a, &c.canon_a), texts(&b, &c.canon_b))
        })
        .collect();
    classes.sort();
    let claims = |ns: &[u32]| ns.iter().map(|n| format!("(claim {n}) | noop")).collect::<Vec<_>>();
    assert_eq!(classes[0].0, ["(mark 1 1) | noop", "(mark 1 3) | noop", "(mark 3 1) | noop", "(mark 3 3) | noop"]);
    assert_eq!(classes[0].1, claims(&[2, 4, 6, 8]));
    assert_eq!(classes[1].0, ["(mark 1 2) | noop", "(mark 2 1) | noop", "(mark 2 3) | noop", "(mark 3 2) | noop"]);
    assert_eq!(classes[1].1, claims(&[1, 3, 7, 9]));
    assert_eq!(classes[2].1, claims(&[5]));
}

#[test]
fn renamed_and_reordered_rules_are_the_same_game() {
    // B declares nought (o) first: B's role 0 plays A's role 1.
    assert_equivalent("tictactoe_renamed.kif", &[1, 0]);
}

#[test]
fn bookkeeping_subtrees_reduce() {
    assert_equivalent("tictactoe_endturn.kif", &[0, 1]); // Def. 12
}

#[test]
fn single_player_subtrees_reduce() {
    assert_equivalent("tictactoe_twostep.kif", &[0, 1]); // Def. 13
}

#[test]
fn symmetry_redundant_subtrees_reduce() {
    assert_equivalent("tictactoe_openings.kif", &[0, 1]); // Def. 14
}

#[test]
fn decision_matrix_redundancies_reduce() {
    assert_equivalent("tictactoe_wait.kif", &[0, 1]); // Def. 15
}

#[test]
fn misere_is_equivalent_only_up_to_relabeled_outcomes() {
    let (a, b, c) = compare_files("tictactoe.kif", "tictactoe_misere.kif");
    let e = c.equivalent.expect("equivalent up to relabeling");
    assert!(!e.identical_outcomes);
    // x's line (100 0) in A is x's line (0 100) in B: the bijection swaps wins.
    let (oa, ob) = (a.outcomes(), b.outcomes());
    for (i, g) in ob.iter().enumerate() {
        let image = &oa[e.outcomes[i]];
        assert_eq!(image.iter().rev().collect::<Vec<_>>(), g.iter().collect::<Vec<_>>());
    }
}

#[test]
fn a_changed_rule_is_found_where_it_first_matters() {
    let (a, b, c) = compare_files("tictactoe.kif", "tictactoe_nodiag.kif");
    assert!(c.equivalent.is_none());
    assert!(c.distance > 0.0 && c.distance < 1.0, "{}", c.distance);
    let d = first_difference(&a, &b, &c).expect("a difference");
    // The paths are the same moves (a variant), and end where A is over and B is not: a
    // line on the anti-diagonal.
    assert_eq!(d.path_a, d.path_b);
    assert!(d.what.starts_with("A: the game is over"), "{}", d.what);
    let marks: Vec<&String> = d.path_a.iter().collect();
    let last = marks.last().unwrap();
    assert!(["(mark 1 3)", "(mark 2 2)", "(mark 3 1)"].iter().any(|m| last.contains(m)), "{marks:?}");
    // Unrelated games are farther apart.
    let (_, _, far) = compare_files("tictactoe.kif", "planted_trap.kif");
    assert!(far.equivalent.is_none());
    assert!(far.distance > c.distance);
}

#[test]
fn matrices_match_up_to_each_roles_relabeling() {
    let rules = text("mixed_2x2.kif");
    let permuted = rules
        .replace("(payoff a a 100 0)", "(payoff a b 100 0)")
        .replace("(payoff a b 0 100)", "(payoff a a 0 100)")
        .replace("(payoff b a 20 80)", "(payoff b b 20 80)")
        .replace("(payoff b b 60 40)", "(payoff b a 60 40)");
    assert_ne!(permuted, rules);
    let (a, b) = (graph("mixed_2x2.kif"), graph_of("columns-swapped", &permuted));
    let c = compare(&a, &b);
    let e = c.equivalent.expect("column's choices relabeled");
    assert!(e.identical_outcomes);
    // One payoff made equal to its neighbour's: row b's two cells merge, a different matrix.
    let changed = rules.replace("(payoff b b 60 40)", "(payoff b b 20 80)");
    assert!(compare(&a, &graph_of("one-payoff-changed", &changed)).equivalent.is_none());
    // Rock-paper-scissors is not this game.
    assert!(compare(&a, &graph("rock_paper_scissors.kif")).equivalent.is_none());
}
