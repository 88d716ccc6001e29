//! Differential tests of the batch machine against the propnet machine (itself checked
//! against the interpreter): every `gdl/` game and a game with recursion through the state.

use super::*;
use crate::gdl::Game;
use crate::machine::StateMachine;
use crate::propnet::tests::{GAMES, REACH};
use crate::propnet::{build_net, Budget, Compiled, PropnetMachine};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::path::Path;

fn games() -> Vec<Game> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl");
    let mut v: Vec<Game> = GAMES.iter().map(|f| Game::load(&dir.join(f)).unwrap_or_else(|e| panic!("{e}"))).collect();
    v.push(Game::parse("reach.kif", REACH).unwrap_or_else(|e| panic!("{e}")));
    v
}

fn machines<const W: usize>(g: &Game) -> (Batch<W>, PropnetMachine) {
    let b = build_net(g, &Budget::default()).unwrap_or_else(|e| panic!("{}: {e}", g.name));
    let batch = Batch::<W>::new(&b.net);
    (batch, PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms, b.symbols)))
}

/// `lanes` states reached by random playouts of random lengths (lane 0: the initial state).
fn start_states(pm: &mut PropnetMachine, lanes: usize, rng: &mut Pcg64Mcg) -> Vec<PnState> {
    let mut out = Vec::new();
    let mut legal = Vec::new();
    let roles = pm.roles().len();
    for lane in 0..lanes {
        let mut s = pm.initial_state();
        let len = if lane == 0 { 0 } else { rng.gen_range(0..12) };
        'play: for _ in 0..len {
            if pm.is_terminal(&s) {
                break;
            }
            let mut joint = Vec::new();
            for r in 0..roles {
                pm.legal_moves(&s, r, &mut legal);
                if legal.is_empty() {
                    break 'play;
                }
                joint.push(legal[rng.gen_range(0..legal.len())]);
            }
            let mut n = s.clone();
            pm.next_state(&s, &joint, &mut n);
            s = n;
        }
        out.push(s);
    }
    out
}

/// Lane `lane` of the batch machine agrees with the propnet machine on `s`.
fn check_lane<const W: usize>(g: &Game, batch: &Batch<W>, pm: &mut PropnetMachine, lane: usize, s: &PnState) {
    let mut got = PnState::default();
    batch.state(lane, &mut got);
    assert_eq!(&got, s, "{}: lane {lane} state", g.name);
    assert_eq!(batch.is_terminal(lane), pm.is_terminal(s), "{}: lane {lane} terminal", g.name);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for r in 0..pm.roles().len() {
        batch.legal_moves(lane, r, &mut a);
        pm.legal_moves(s, r, &mut b);
        assert_eq!(a, b, "{}: lane {lane} role {r} legal moves", g.name);
        assert_eq!(batch.goal(lane, r), pm.goal(s, r), "{}: lane {lane} role {r} goal", g.name);
    }
}

#[test]
fn given_joint_moves_agree_with_the_propnet_machine() {
    given_joint_moves_agree::<1>();
    given_joint_moves_agree::<BATCH_WORDS>();
}

fn given_joint_moves_agree<const W: usize>() {
    let lanes = Batch::<W>::LANES;
    for (i, g) in games().iter().enumerate() {
        let (mut batch, mut pm) = machines::<W>(g);
        if g.name.starts_with("reach") {
            assert!(batch.cycle_count() > 0, "reach makes a cycle");
        }
        let roles = pm.roles().len();
        let mut rng = Pcg64Mcg::seed_from_u64(i as u64);
        let mut states = start_states(&mut pm, lanes, &mut rng);
        batch.load(&states);
        let mut joint = vec![0u32; lanes * roles];
        let mut legal = Vec::new();
        let mut stepped = 0;
        for _round in 0..8 {
            let mut moving = vec![false; lanes];
            for (lane, s) in states.iter_mut().enumerate() {
                check_lane(g, &batch, &mut pm, lane, s);
                if pm.is_terminal(s) {
                    continue;
                }
                let mut ok = true;
                for r in 0..roles {
                    pm.legal_moves(s, r, &mut legal);
                    ok &= !legal.is_empty();
                    if ok {
                        joint[lane * roles + r] = legal[rng.gen_range(0..legal.len())];
                    }
                }
                // Some lanes sit out a round: they must keep their state.
                if ok && rng.gen_range(0..8) != 0 {
                    moving[lane] = true;
                    let mut n = s.clone();
                    pm.next_state(s, &joint[lane * roles..(lane + 1) * roles], &mut n);
                    *s = n;
                    stepped += 1;
                }
            }
            batch.step_with(&moving, &joint);
        }
        for (lane, s) in states.iter().enumerate() {
            check_lane(g, &batch, &mut pm, lane, s);
        }
        assert!(stepped > 50 * W, "{}: only {stepped} lane-steps compared", g.name);
    }
}

#[test]
fn random_playouts_end_where_the_propnet_machine_says() {
    random_playouts_end_right::<1>();
    random_playouts_end_right::<BATCH_WORDS>();
}

fn random_playouts_end_right<const W: usize>() {
    for (i, g) in games().iter().enumerate() {
        let (mut batch, mut pm) = machines::<W>(g);
        let mut rng = Pcg64Mcg::seed_from_u64(10 + i as u64);
        // Fewer starts than lanes: the rest stay idle.
        let starts = start_states(&mut pm, Batch::<W>::LANES - 3, &mut rng);
        let ends: Vec<LaneEnd> = batch.run(&starts, 1000, &mut rng).to_vec();
        let mut legal = Vec::new();
        let mut s = PnState::default();
        for (lane, e) in ends.iter().enumerate() {
            batch.state(lane, &mut s);
            assert_eq!(e.terminal, pm.is_terminal(&s), "{}: lane {lane}", g.name);
            if !e.terminal {
                let stuck = (0..pm.roles().len()).any(|r| {
                    pm.legal_moves(&s, r, &mut legal);
                    legal.is_empty()
                });
                assert!(stuck || e.depth == 1000, "{}: lane {lane} ended early", g.name);
            }
            let goals: Vec<Goal> = (0..pm.roles().len()).map(|r| pm.goal(&s, r)).collect();
            assert_eq!(batch.goals(lane), &goals[..], "{}: lane {lane} goals", g.name);
        }
        assert!(ends.iter().filter(|e| e.terminal).count() > ends.len() / 2, "{}: most playouts reach the end", g.name);
    }
}

#[test]
fn refilled_playouts_run_exactly_n_and_reach_terminal_states() {
    // Goals at once, and with ended lanes parked until 64 have ended.
    refilled_playouts(1);
    refilled_playouts(64);
}

fn refilled_playouts(park_max: u32) {
    let g = &games()[0];
    let (mut batch, mut pm) = machines::<BATCH_WORDS>(g);
    batch.set_park_max(park_max);
    let start = pm.initial_state();
    let mut rng = Pcg64Mcg::seed_from_u64(5);
    let (mut ended, mut wins, mut steps) = (0u64, [0u64; 2], 0u64);
    let lane_steps = batch.playouts(&start, 1000, 1000, &mut rng, |e, goals| {
        ended += 1;
        assert!(e.terminal && (5..=9).contains(&e.depth), "{e:?}");
        steps += e.depth as u64;
        assert!(matches!(goals, [Some(100), Some(0)] | [Some(0), Some(100)] | [Some(50), Some(50)]), "{goals:?}");
        for (r, g) in goals.iter().enumerate() {
            wins[r] += (*g == Some(100)) as u64;
        }
    });
    assert_eq!(ended, 1000);
    assert_eq!(lane_steps, steps);
    // Random tic-tac-toe: the first player wins about 58%, the second about 29%.
    assert!((500..660).contains(&wins[0]) && (220..360).contains(&wins[1]), "{wins:?}");
}

#[test]
fn first_moves_are_spread_over_the_legal_moves() {
    let g = &games()[0];
    let (mut batch, mut pm) = machines::<1>(g);
    let start = pm.initial_state();
    let starts = vec![start; WORD_LANES];
    let mut rng = Pcg64Mcg::seed_from_u64(9);
    batch.run(&starts, 1, &mut rng);
    let mut seen = std::collections::HashSet::new();
    let mut s = PnState::default();
    for lane in 0..WORD_LANES {
        batch.state(lane, &mut s);
        seen.insert(s.clone());
    }
    assert_eq!(seen.len(), 9, "64 lanes cover all nine first marks");
}
