//! Goal latches and decided outcomes on `gdl/flag_race.kif` (white is role 0, black 1): a
//! resignation decides the other player's goal by itself; two flags owned settle the race
//! moves before its end; and on random playouts every decision is what the game scores.

use super::*;
use crate::factor::latch::latches;
use crate::gdl::Game;
use crate::machine::StateMachine;
use crate::propnet::{build_net, Budget, Built, Compiled, PnState, PropnetMachine};
use rand::{Rng, SeedableRng};
use std::path::Path;

fn flag_race() -> (Built, PropnetMachine) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/flag_race.kif");
    let g = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    let b = build_net(&g, &Budget::default()).unwrap_or_else(|e| panic!("{e}"));
    let m = PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms.clone(), b.symbols.clone()));
    (b, m)
}

fn name(b: &Built, base: u32) -> String {
    b.grounding_terms.to_string(b.net.bases[base as usize], &b.symbols)
}

/// Plays the moves (one text per role) from the initial state.
fn play(m: &mut PropnetMachine, moves: &[[&str; 2]]) -> PnState {
    let mut s = m.initial_state();
    let mut legal = Vec::new();
    for joint in moves {
        let j: Vec<u32> = (0..2)
            .map(|r| {
                m.legal_moves(&s, r, &mut legal);
                *legal
                    .iter()
                    .find(|&&x| m.move_text(x) == joint[r])
                    .unwrap_or_else(|| panic!("{} is not legal", joint[r]))
            })
            .collect();
        let mut next = s.clone();
        m.next_state(&s, &j, &mut next);
        s = next;
    }
    s
}

fn decided_in(b: &Built, s: &PnState) -> Decided {
    Decider::new(&b.net).decided(&b.net, &|x| s.get(x as usize))
}

#[test]
fn a_resignation_is_a_goal_latch_and_no_single_flag_is() {
    let (b, _) = flag_race();
    let outs = outcome_latches(&b.net, &latches(&b.net));
    let found: Vec<(String, Vec<(usize, u32)>)> =
        outs.iter().map(|o| (name(&b, o.latch.base), o.goals.clone())).collect();
    assert_eq!(
        found,
        vec![("( resigned white )".to_string(), vec![(1, 100)]), ("( resigned black )".to_string(), vec![(0, 100)])],
        "{found:?}"
    );
    for o in &outs {
        assert_eq!(o.latch.kind, LatchKind::Positive);
        assert!(!o.terminal, "a resignation does not end the game");
        assert_eq!(o.excluded.len(), 1, "the winner's 0 is excluded: {:?}", o.excluded);
    }
}

#[test]
fn two_flags_settle_the_race_before_its_end() {
    let (b, mut m) = flag_race();
    let s0 = m.initial_state();
    assert_eq!(decided_in(&b, &s0).goals, vec![None, None], "nothing is decided at the start");
    let s = play(&mut m, &[["( claim f1 )", "noop"], ["noop", "( claim f2 )"]]);
    assert_eq!(decided_in(&b, &s).goals, vec![None, None], "f3 is still free");
    let s = play(&mut m, &[["( claim f1 )", "noop"], ["noop", "( claim f2 )"], ["( claim f3 )", "noop"]]);
    let d = decided_in(&b, &s);
    assert!(!m.is_terminal(&s), "three moves are left");
    assert_eq!(d.goals, vec![Some(100), Some(0)], "white owns two flags for good: {d:?}");
    assert!(d.all());
    assert_eq!(d.excluded, vec![vec![0], vec![100]]);
    // Resigning is no longer legal (a flag is claimed): the fixed bases include both
    // resignations, false for good, and every flag's owner.
    assert!(d.fixed >= 2 + 3, "{d:?}");
    let end = play(
        &mut m,
        &[
            ["( claim f1 )", "noop"],
            ["noop", "( claim f2 )"],
            ["( claim f3 )", "noop"],
            ["noop", "pass"],
            ["pass", "noop"],
            ["noop", "pass"],
        ],
    );
    assert!(m.is_terminal(&end));
    assert_eq!((m.goal(&end, 0), m.goal(&end, 1)), (Some(100), Some(0)));
}

/// Soundness on random playouts: a goal decided in a state (by [`Decider::decided`]) is the goal the
/// game gives at its end, a value excluded there is not, and an outcome latch's goal holds in
/// every state where the latch does. Both kinds must decide something, so the test
/// cannot pass by deciding nothing.
#[test]
fn decided_goals_are_the_goals_at_the_end_of_random_playouts() {
    let (b, mut m) = flag_race();
    let outs = outcome_latches(&b.net, &latches(&b.net));
    let decider = Decider::new(&b.net);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
    let (mut by_state, mut by_latch, mut early) = (0, 0, 0);
    let mut legal = Vec::new();
    for _ in 0..200 {
        let mut s = m.initial_state();
        let mut promised: Vec<Option<u32>> = vec![None; 2];
        let mut excluded: Vec<Vec<u32>> = vec![Vec::new(); 2];
        while !m.is_terminal(&s) {
            let d = decider.decided(&b.net, &|x| s.get(x as usize));
            for r in 0..2 {
                if let Some(v) = d.goals[r] {
                    assert!(promised[r].is_none_or(|p| p == v), "a decided goal changed");
                    promised[r] = Some(v);
                    by_state += 1;
                }
                excluded[r].extend(d.excluded[r].iter().copied());
            }
            for o in outs.iter().filter(|o| s.get(o.latch.base as usize) == (o.latch.kind == LatchKind::Positive)) {
                for &(r, v) in &o.goals {
                    assert_eq!(m.goal(&s, r), Some(v), "an outcome latch holds and {r}'s goal is not {v}");
                    by_latch += 1;
                }
            }
            let joint: Vec<u32> = (0..2)
                .map(|r| {
                    m.legal_moves(&s, r, &mut legal);
                    legal[rng.gen_range(0..legal.len())]
                })
                .collect();
            let mut next = s.clone();
            m.next_state(&s, &joint, &mut next);
            s = next;
        }
        if promised.iter().all(Option::is_some) {
            early += 1;
        }
        for r in 0..2 {
            if let Some(v) = promised[r] {
                assert_eq!(m.goal(&s, r), Some(v), "decided {v} for role {r} before the end");
            }
            let end = m.goal(&s, r).expect("a goal at the end");
            assert!(!excluded[r].contains(&end), "role {r} scored {end}, excluded before the end");
        }
    }
    assert!(by_state > 0 && by_latch > 0 && early > 0, "decisions: {by_state} by state, {by_latch} by latch");
}
