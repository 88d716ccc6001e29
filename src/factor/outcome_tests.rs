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

/// One role, twenty steps; `claim` sets a flag that stays, and the goal is 100 with the flag.
const CLAIM: &str = "
(role p)
(init (step 0))
(<= (succ ?m ?n) (num ?m) (num ?n) (plus1 ?m ?n))
(plus1 0 1) (plus1 1 2) (plus1 2 3) (plus1 3 4) (plus1 4 5) (plus1 5 6) (plus1 6 7) (plus1 7 8)
(plus1 8 9) (plus1 9 10) (plus1 10 11) (plus1 11 12) (plus1 12 13) (plus1 13 14) (plus1 14 15)
(plus1 15 16) (plus1 16 17) (plus1 17 18) (plus1 18 19) (plus1 19 20)
(num 0) (num 1) (num 2) (num 3) (num 4) (num 5) (num 6) (num 7) (num 8) (num 9) (num 10) (num 11)
(num 12) (num 13) (num 14) (num 15) (num 16) (num 17) (num 18) (num 19) (num 20)
(legal p wait)
(<= (legal p claim) (not (true claimed)))
(<= (next claimed) (does p claim))
(<= (next claimed) (true claimed))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(<= terminal (true (step 20)))
(<= (goal p 100) (true claimed))
(<= (goal p 0) (not (true claimed)))
";

/// The machine's playouts end where the goal latches decide every goal: from a state with the
/// flag, at once and with the same goal; from the start, at the claim.
#[test]
fn goal_latches_end_playouts_where_every_goal_is_decided() {
    let g = Game::parse("claim.kif", CLAIM).unwrap_or_else(|e| panic!("{e}"));
    let b = build_net(&g, &Budget::default()).unwrap_or_else(|e| panic!("{e}"));
    let outs = outcome_latches(&b.net, &latches(&b.net));
    assert_eq!(outs.len(), 1, "{outs:?}");
    assert_eq!(outs[0].goals, vec![(0, 100)]);
    let table = playout_table(&b.net);
    assert_eq!(table, vec![(outs[0].latch.base, true, vec![0])]);
    let mut plain = PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms.clone(), b.symbols.clone()));
    let mut cut = plain.clone();
    cut.set_goal_latches(&table);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
    let mut bufs = crate::machine::PlayoutBuffers::new(&mut plain);
    let mut legal = Vec::new();
    // After claiming at the first step.
    let s0 = plain.initial_state();
    plain.legal_moves(&s0, 0, &mut legal);
    let claim = *legal.iter().find(|&&m| plain.move_text(m) == "claim").expect("claim");
    let mut won = s0.clone();
    plain.next_state(&s0, &[claim], &mut won);
    let mut a = won.clone();
    let ra = plain.playout(&mut a, &mut rng, 1000, &mut bufs);
    let mut c = won.clone();
    let rc = cut.playout(&mut c, &mut rng, 1000, &mut bufs);
    assert_eq!((ra.depth, ra.terminal), (19, true), "to the end without the table");
    assert_eq!((rc.depth, rc.terminal), (0, true), "at once with it");
    assert_eq!(plain.goal(&a, 0), Some(100));
    assert_eq!(cut.goal(&c, 0), Some(100), "the same goal where it stopped");
    // From the start: every playout ends at the claim (or at the end, never claiming), with the
    // goal the full playout gives.
    let mut shorter = 0;
    for _ in 0..50 {
        let mut s = s0.clone();
        let r = cut.playout(&mut s, &mut rng, 1000, &mut bufs);
        assert!(r.terminal);
        let g = cut.goal(&s, 0);
        if r.depth < 20 {
            shorter += 1;
            assert_eq!(g, Some(100));
        } else {
            assert_eq!(g, Some(0));
        }
    }
    assert!(shorter > 40, "{shorter} of 50 playouts ended at the claim");
    // A table that leaves a role undecided is dropped.
    let mut none = plain.clone();
    none.set_goal_latches(&[]);
    let mut d = won.clone();
    assert_eq!(none.playout(&mut d, &mut rng, 1000, &mut bufs).depth, 19);
}
