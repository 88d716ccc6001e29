//! A signature must give the number `tactics` gives on the same local trees.

use super::*;
use crate::machine::StateMachine;
use crate::similarity::{tactics, LocalTree, Positions};
use rand::{Rng, SeedableRng};

/// A machine seen as positions whose labels carry the role, as signatures label moves.
struct RoleLabelled<'m, M: StateMachine>(&'m mut M);

impl<M: StateMachine> Positions for RoleLabelled<'_, M> {
    type Pos = M::State;
    fn children(&mut self, p: &M::State) -> Vec<(String, M::State)> {
        if self.0.is_terminal(p) {
            return Vec::new();
        }
        let mut legal = Vec::new();
        let joints = crate::similarity::machine::joint_moves(self.0, p, &mut legal);
        let choosers: Vec<usize> = (0..legal.len()).filter(|&r| legal[r].len() > 1).collect();
        joints
            .into_iter()
            .map(|(_, joint)| {
                let shown: Vec<usize> = if choosers.is_empty() { (0..joint.len()).collect() } else { choosers.clone() };
                let label = shown.iter().map(|&r| format!("{r}:{}", self.0.move_text(joint[r]))).collect::<Vec<_>>();
                let mut next = p.clone();
                self.0.next_state(p, &joint, &mut next);
                (label.join("|"), next)
            })
            .collect()
    }
    fn reward(&mut self, p: &M::State) -> Option<f64> {
        self.0.is_terminal(p).then(|| self.0.goal(p, 0).unwrap_or(0) as f64 / 100.0)
    }
}

fn machine(name: &str) -> crate::propnet::PropnetMachine {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(name);
    let game = crate::gdl::Game::load(&path).unwrap();
    crate::propnet::build(&game, &crate::propnet::Budget::default()).unwrap().0
}

/// Random positions of a game, some near the end (where the tactics are).
fn positions<M: StateMachine>(m: &mut M, seed: u64, count: usize) -> Vec<M::State> {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let roles = m.roles().len();
    let mut out = Vec::new();
    let mut legal = Vec::new();
    while out.len() < count {
        let mut s = m.initial_state();
        let stop = rng.gen_range(0..40);
        for _ in 0..stop {
            if m.is_terminal(&s) {
                break;
            }
            let joint: Vec<M::Move> = (0..roles)
                .map(|r| {
                    m.legal_moves(&s, r, &mut legal);
                    legal[rng.gen_range(0..legal.len())]
                })
                .collect();
            let mut next = s.clone();
            m.next_state(&s, &joint, &mut next);
            s = next;
        }
        out.push(s);
    }
    out
}

fn agree(game: &str, depth: u32, seed: u64) {
    let mut m = machine(game);
    let states = positions(&mut m, seed, 24);
    let mut scratch = SigScratch::new(1 << 20);
    let sigs: Vec<TacticsSig> = states.iter().map(|s| scratch.compute(&mut m, s, depth).unwrap()).collect();
    let mut labels = crate::similarity::Labels::new();
    let trees: Vec<LocalTree> =
        states.iter().map(|s| LocalTree::expand(&mut RoleLabelled(&mut m), s, depth, &mut labels)).collect();
    let mut differing = 0;
    for i in 0..states.len() {
        for j in 0..states.len() {
            let want = tactics(trees[i].root(), trees[j].root());
            let got = sigs[i].similarity(&sigs[j]);
            assert!((want - got).abs() < 1e-12, "{game} d={depth} positions {i},{j}: tactics {want}, signature {got}");
            differing += usize::from(got < 1.0);
        }
    }
    assert!(differing > 0, "{game}: every pair scored 1; the test compares nothing");
}

#[test]
fn signatures_agree_with_tactics_on_tictactoe() {
    agree("tictactoe.kif", 1, 1);
    agree("tictactoe.kif", 2, 2);
    agree("tictactoe.kif", 3, 3);
}

#[test]
fn signatures_agree_with_tactics_on_connect_four() {
    agree("connect4.kif", 2, 4);
}

#[test]
fn signatures_give_up_past_their_budget() {
    let mut m = machine("connect4.kif");
    let s = m.initial_state();
    let mut scratch = SigScratch::new(20);
    assert!(scratch.compute(&mut m, &s, 2).is_none());
    let mut scratch = SigScratch::new(1000);
    let sig = scratch.compute(&mut m, &s, 2).unwrap();
    assert_eq!(sig.sequences(), 0, "nothing ends within two plies of the start");
    assert!(scratch.expanded() > 20);
}
