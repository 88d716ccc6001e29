//! Learned heuristics on the `gdl/` games through the propnet.

use super::*;
use crate::gdl::Game;
use crate::propnet::{self, Budget, PropnetMachine};
use std::path::Path;
use std::time::Duration;

fn propnet(file: &str) -> PropnetMachine {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let game = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    propnet::build(&game, &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

fn texts(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn terms_split_at_the_top_level() {
    assert_eq!(top_level_args("( cell 1 ( f a ) b )"), texts(&["cell", "1", "( f a )", "b"]));
    assert_eq!(top_level_args("step"), texts(&["step"]));
}

#[test]
fn count_features_group_bases_by_one_argument() {
    let t = texts(&["( cell 1 1 x )", "( cell 1 2 o )", "( cell 2 1 x )", "( control x )", "( control o )"]);
    let f = count_features(&t);
    let names: Vec<&str> = f
        .iter()
        .map(|f| match f {
            Feature::Count { name, .. } => name.as_str(),
            Feature::Goal { .. } => "",
        })
        .collect();
    // Groups of two or more bases, the largest first; (cell 2 * *) and (cell * 2 *) have one
    // base, (control x) one: left out. (control *) is its whole relation.
    assert_eq!(names[0], "(cell * * *)");
    for want in ["(cell 1 * *)", "(cell * 1 *)", "(cell * * x)", "(control *)"] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    for absent in ["(cell 2 * *)", "(cell * * o)", "(control x)"] {
        assert!(!names.contains(&absent), "{absent} in {names:?}");
    }
    let Some(Feature::Count { mask, .. }) =
        f.iter().find(|f| matches!(f, Feature::Count { name, .. } if name == "(cell * * x)"))
    else {
        unreachable!()
    };
    assert_eq!(mask, &vec![0b101u64]);
}

#[test]
fn least_squares_recovers_a_line() {
    // y = 0.2 + 0.1 x exactly: the fit finds it, and the held-out correlation is 1.
    let x: Vec<f64> = (0..40).map(|i| (i % 7) as f64).collect();
    let y: Vec<f64> = x.iter().map(|v| 0.2 + 0.1 * v).collect();
    let cols = [vec![3.0; 40], x];
    let corr: Vec<f64> = cols.iter().map(|c| correlation(c, &y)).collect();
    let (chosen, beta, q) = fit_role(&cols, &corr, &y);
    assert_eq!(chosen, vec![1], "the constant column has no correlation");
    assert!((beta[0] - 0.2).abs() < 1e-6 && (beta[1] - 0.1).abs() < 1e-6, "{beta:?}");
    assert!((q - 1.0).abs() < 1e-9, "{q}");
    assert_eq!(solve(vec![vec![0.0, 0.0, 1.0], vec![0.0, 0.0, 1.0]]), None);
}

/// Flag race: the flags a player owns predict its outcome (two of three win), and the
/// heuristic found says so, for each role with the opposite sign: after white claims a
/// flag and black passes, white's value is higher and black's lower than at the start.
#[test]
fn flag_race_gets_a_heuristic_of_the_flags_owned() {
    let mut m = propnet("flag_race.kif");
    let l = learn(&mut m, 3, Instant::now() + Duration::from_secs(20));
    let h = l.heuristic.clone().unwrap_or_else(|| panic!("no heuristic: {l:?}"));
    assert!(l.playouts >= MIN_PLAYOUTS);
    assert!(h.quality.iter().all(|&q| q >= MIN_QUALITY), "{:?}", h.quality);
    let roles = m.roles().to_vec();
    let summary = h.summary(&roles);
    assert!(summary.contains("(owner * white)") || summary.contains("(owner * black)"), "{summary}");
    let init = m.initial_state();
    let mut v0 = [0.0; 2];
    h.evaluate(&mut m, &init, &mut v0);
    let s =
        crate::machine::play_texts(&mut m, &init, &crate::machine::split_moves("(claim f1) pass").unwrap()).unwrap();
    let mut v1 = [0.0; 2];
    h.evaluate(&mut m, &s, &mut v1);
    assert!(v1[0] > v0[0] && v1[1] < v0[1], "{summary}: after white's flag {v1:?} against {v0:?}");
}

/// Random playouts of a race say little about who wins from a state half-way: at
/// breakthrough5 no count of pawns (by colour, row or column) reaches the least correlation,
/// so no heuristic is kept (its best feature is reported).
#[test]
fn breakthrough5_has_none_from_random_playouts() {
    let mut m = propnet("breakthrough5.kif");
    let l = learn(&mut m, 3, Instant::now() + Duration::from_secs(20));
    assert!(l.heuristic.is_none(), "{l:?}");
    assert_eq!(l.playouts, MAX_PLAYOUTS);
    assert!(l.best.iter().all(|(f, c)| f.starts_with("(cell") && c.abs() < MIN_CORRELATION), "{l:?}");
}

/// Where the outcome is decided by one simultaneous move, no state before the end says
/// anything: no heuristic.
#[test]
fn no_heuristic_where_nothing_predicts_the_outcome() {
    let mut m = propnet("rock_paper_scissors.kif");
    let l = learn(&mut m, 3, Instant::now() + Duration::from_secs(5));
    assert!(l.heuristic.is_none(), "{l:?}");
}
