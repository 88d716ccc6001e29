//! MAST playouts: the policy, the update and the decay, on the `gdl/` games through the
//! propnet.

use super::*;
use crate::gdl::Game;
use crate::machine::{policy_playout, PlayoutPolicy};
use crate::propnet::{self, Budget, PropnetMachine};
use crate::search::Limit;
use std::path::Path;

fn propnet(file: &str) -> PropnetMachine {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let game = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    propnet::build(&game, &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

/// Connect four after `moves` (one per ply, as `play_texts` takes them).
fn connect_four_after(m: &mut PropnetMachine, moves: &str) -> <PropnetMachine as StateMachine>::State {
    let moves = crate::machine::split_moves(moves).unwrap();
    let init = m.initial_state();
    crate::machine::play_texts(m, &init, &moves).unwrap()
}

fn mast() -> MctsConfig {
    MctsConfig { seed: 5, playout: Playout::Mast, ..MctsConfig::default() }
}

/// Per role: the sum of counts and of rewards over the role's keys.
fn sums(t: &Mcts<PropnetMachine>, roles: usize) -> Vec<(f64, f64)> {
    let mut out = vec![(0.0, 0.0); roles];
    for (k, &(w, n)) in t.mast.table.iter().enumerate() {
        out[k % roles].0 += w;
        out[k % roles].1 += n;
    }
    out
}

#[test]
fn mast_counts_every_move_of_an_iteration_with_its_roles_reward() {
    let mut m = propnet("tictactoe.kif");
    let s = m.initial_state();
    let mut t = Mcts::new(mast());
    for i in 1..=50u32 {
        let before = sums(&t, 2);
        t.select(&mut m, &s, 0, Limit::iterations(1)).unwrap();
        let after = sums(&t, 2);
        let (dw0, dn0) = (after[0].0 - before[0].0, after[0].1 - before[0].1);
        let (dw1, dn1) = (after[1].0 - before[1].0, after[1].1 - before[1].1);
        // One joint move per ply, one move per role: both roles count the same plies, at
        // least the five of the shortest game.
        assert_eq!(dn0, dn1, "iteration {i}");
        assert!(dn0 >= 5.0 && dn0 <= 9.0, "iteration {i}: {dn0} plies");
        // Each play counts its role's reward, the same for every ply of the iteration.
        let (r0, r1) = (dw0 / dn0, dw1 / dn1);
        for r in [r0, r1] {
            assert!([0.0, 0.5, 1.0].iter().any(|v| (v - r).abs() < 1e-9), "iteration {i}: reward {r}");
        }
        assert!((r0 + r1 - 1.0).abs() < 1e-9, "tic-tac-toe is zero-sum: {r0} + {r1}");
    }
}

#[test]
fn mast_statistics_decay_when_the_root_changes_and_not_before() {
    let mut m = propnet("tictactoe.kif");
    let s = m.initial_state();
    let mut t = Mcts::new(MctsConfig { mast_decay: 0.25, ..mast() });
    t.select(&mut m, &s, 0, Limit::iterations(300)).unwrap();
    let table = t.mast.table.clone();
    // The same root again (pondering): nothing decays.
    t.select(&mut m, &s, 0, Limit::iterations(0)).unwrap();
    assert_eq!(t.mast.table, table);
    let mut legal = Vec::new();
    m.legal_moves(&s, 0, &mut legal);
    let mut noop = Vec::new();
    m.legal_moves(&s, 1, &mut noop);
    let mut next = s.clone();
    m.next_state(&s, &[legal[0], noop[0]], &mut next);
    t.select(&mut m, &next, 1, Limit::iterations(0)).unwrap();
    for (a, b) in table.iter().zip(&t.mast.table) {
        assert!((a.0 * 0.25 - b.0).abs() < 1e-9 && (a.1 * 0.25 - b.1).abs() < 1e-9, "{a:?} -> {b:?}");
    }
    assert!(table.iter().any(|e| e.1 > 0.0));
}

#[test]
fn the_policy_plays_the_best_mean_but_for_epsilon() {
    let m = propnet("connect4.kif");
    let roles = m.roles().len();
    let bound = m.move_number_bound();
    let moves: Vec<u32> = (0..bound as u32).collect();
    // Role 0's move 3 has the best mean; every other move has been played and is worse.
    let mut table = vec![(1.0, 10.0); bound * roles];
    let best = 3u32;
    table[mast_key::<PropnetMachine>(best, 0, roles) as usize] = (9.0, 10.0);
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    let mut seq = Vec::new();
    // Chosen 1000 times: always; half the time plus a share of the random half; 1 in k.
    let k = moves.len();
    let random = 1000 / k;
    for (eps, least, most) in [(0.0, 1000, 1000), (0.5, 440, 560 + random), (1.0, random / 2, random * 2)] {
        let mut policy = MastPolicy::<PropnetMachine> {
            table: &table,
            pairs: None,
            before: &[],
            roles,
            epsilon: eps,
            seq: &mut seq,
            start: 0,
            amaf: None,
        };
        let hits = (0..1000).filter(|_| moves[policy.choose(0, &moves, &mut rng)] == best).count();
        assert!((least..=most).contains(&hits), "epsilon {eps}: best chosen {hits} times in 1000");
    }
    // A move never played counts as the best there is.
    table[mast_key::<PropnetMachine>(7, 0, roles) as usize] = (0.0, 0.0);
    let mut policy = MastPolicy::<PropnetMachine> {
        table: &table,
        pairs: None,
        before: &[],
        roles,
        epsilon: 0.0,
        seq: &mut seq,
        start: 0,
        amaf: None,
    };
    assert_eq!(moves[policy.choose(0, &moves, &mut rng)], 7);
}

/// The propnet's own loop plays what the generic loop plays under the same policy.
#[test]
fn the_propnets_policy_loop_agrees_with_the_generic_one() {
    /// Plays the highest-numbered legal move (independent of the order legal moves come in),
    /// and records the joint moves.
    struct Highest(Vec<u32>);
    impl PlayoutPolicy<u32> for Highest {
        fn choose<R: Rng>(&mut self, _: usize, legal: &[u32], _: &mut R) -> usize {
            (0..legal.len()).max_by_key(|&i| legal[i]).unwrap()
        }
        fn seen(&mut self, joint: &[u32]) {
            self.0.extend_from_slice(joint);
        }
    }
    for file in ["tictactoe.kif", "connect4.kif", "hex4.kif"] {
        let mut m = propnet(file);
        let init = m.initial_state();
        let mut bufs = PlayoutBuffers::new(&mut m);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let (mut a, mut b) = (init.clone(), init.clone());
        let (mut pa, mut pb) = (Highest(Vec::new()), Highest(Vec::new()));
        let ra = m.playout_policy(&mut a, &mut rng, 1000, &mut bufs, &mut pa);
        let rb = policy_playout(&mut m, &mut b, &mut rng, 1000, &mut bufs, &mut pb);
        assert_eq!(ra, rb, "{file}");
        assert_eq!(a, b, "{file}");
        assert_eq!(pa.0, pb.0, "{file}");
        assert!(ra.terminal && ra.depth > 3, "{file}: {ra:?}");
    }
}

#[test]
fn mast_takes_a_win_and_blocks_a_loss_in_connect_four() {
    let mut m = propnet("connect4.kif");
    let s = connect_four_after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3)");
    for (playout, amaf) in [(Playout::Mast, Amaf::Off), (Playout::Mast, Amaf::Grave), (Playout::Nst, Amaf::Off)] {
        let mut t = Mcts::new(MctsConfig { amaf, playout, ..mast() });
        let c = t.select(&mut m, &s, 1, Limit::iterations(20_000)).unwrap();
        assert_eq!(m.move_text(c.mv), "( drop 4 )", "{playout:?} {amaf:?} blocks");
    }
}

/// Root-parallel MCTS never plays a move some tree proved lost, however many visits the
/// trees gave it before the proof, and plays a proven win at once.
#[test]
fn root_parallel_choice_keeps_proven_moves_out() {
    // Move 0: most visits, proven lost; move 1: fewer visits, unproven; move 2: proven draw.
    let stats = [(900, 600.0), (500, 200.0), (100, 50.0)];
    assert_eq!(combine_roots(&stats, &[Some(0.0), None, Some(0.5)]), Some((2, 0.5, true)));
    assert_eq!(combine_roots(&stats, &[Some(0.0), None, Some(0.3)]), Some((1, 0.4, false)));
    assert_eq!(combine_roots(&stats, &[None, None, None]), Some((0, 600.0 / 900.0, false)));
    assert_eq!(combine_roots(&stats, &[None, Some(1.0), None]), Some((1, 1.0, true)));
    assert_eq!(combine_roots(&stats, &[Some(0.0), Some(0.0), Some(0.5)]), Some((2, 0.5, true)));
    assert_eq!(combine_roots(&[(0, 0.0)], &[None]), None);
}

/// Two trees on a position where one move wins at once: it is found and played.
#[test]
fn root_parallel_takes_the_win() {
    let mut m = propnet("connect4.kif");
    let s = connect_four_after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3) (drop 6)");
    let mut t = ParallelMcts::<PropnetMachine>::new(MctsConfig::default(), 2);
    let c = t.select(&mut m, &s, 0, Limit::iterations(5_000)).unwrap();
    assert_eq!(m.move_text(c.mv), "( drop 4 )");
}

/// Decisive and anti-decisive playouts inside MCTS (random and MAST, with and without
/// GRAVE): the win is played, the only threat blocked.
#[test]
fn decisive_playouts_take_the_win_and_block_the_loss_in_connect_four() {
    let mut m = propnet("connect4.kif");
    let win = connect_four_after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3) (drop 6)");
    let block = connect_four_after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3)");
    for playout in [Playout::Random, Playout::Mast, Playout::Nst] {
        for amaf in [Amaf::Off, Amaf::Grave] {
            let cfg = MctsConfig { seed: 9, playout, amaf, decisive: true, ..MctsConfig::default() };
            let mut t = Mcts::new(cfg);
            let c = t.select(&mut m, &win, 0, Limit::iterations(2_000)).unwrap();
            assert_eq!(m.move_text(c.mv), "( drop 4 )", "{playout:?} {amaf:?} wins");
            let mut t = Mcts::new(cfg);
            let c = t.select(&mut m, &block, 1, Limit::iterations(5_000)).unwrap();
            assert_eq!(m.move_text(c.mv), "( drop 4 )", "{playout:?} {amaf:?} blocks");
        }
    }
}

/// The plays counted in NST's 2-grams.
fn pair_plays(t: &Mcts<PropnetMachine>) -> f64 {
    t.mast.pairs.plays()
}

#[test]
fn nst_counts_each_roles_2grams_from_the_root_through_the_playout() {
    let mut m = propnet("tictactoe.kif");
    let s = m.initial_state();
    let mut t = Mcts::new(MctsConfig { playout: Playout::Nst, ..mast() });
    for i in 1..=50u32 {
        let (before, pairs_before) = (sums(&t, 2), pair_plays(&t));
        t.select(&mut m, &s, 0, Limit::iterations(1)).unwrap();
        let plies = sums(&t, 2)[0].1 - before[0].1;
        // Every joint move after the first, the tree's and the playout's alike, counts one
        // 2-gram per role (a solved node's iteration plays nothing: its path has no pairs
        // beyond those of the path).
        let pairs = pair_plays(&t) - pairs_before;
        assert_eq!(pairs, 2.0 * (plies - 1.0).max(0.0), "iteration {i}: {plies} plies");
    }
    assert!(pair_plays(&t) > 0.0);
    // MAST keeps no 2-grams.
    let mut t = Mcts::new(mast());
    t.select(&mut m, &s, 0, Limit::iterations(50)).unwrap();
    assert!(!t.mast.pairs.is_on());
}

#[test]
fn the_nst_policy_plays_the_best_reply_once_it_is_known() {
    let m = propnet("connect4.kif");
    let roles = m.roles().len();
    let bound = m.move_number_bound();
    let moves: Vec<u32> = (0..bound as u32).collect();
    // Every move alike for MAST; role 0's move 5 is the best reply to role 1's move 2.
    let table = vec![(5.0, 10.0); bound * roles];
    let key = |mv: u32, r: usize| mast_key::<PropnetMachine>(mv, r, roles);
    let mut pairs = PairTable::new();
    pairs.ensure();
    let reply = |pairs: &mut PairTable, plays: usize| {
        for _ in 0..plays {
            pairs.add(key(2, 1), key(5, 0), 1.0);
        }
    };
    reply(&mut pairs, 6);
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    // Chosen 200 times after the joint move `last`, recorded in the playout's keys from
    // `start` on (`start` 2: the keys are an earlier playout's) or given as the tree's last
    // joint move (`tree`).
    let mut count = |pairs: &PairTable, last: [u32; 2], start: usize, tree: bool| {
        let mut seq = if tree { Vec::new() } else { vec![last[0], last[1]] };
        let start = if tree { 0 } else { start };
        let mut policy = MastPolicy::<PropnetMachine> {
            table: &table,
            pairs: Some(pairs),
            before: if tree { &last[..] } else { &[] },
            roles,
            epsilon: 0.0,
            seq: &mut seq,
            start,
            amaf: None,
        };
        (0..200).filter(|_| moves[policy.choose(0, &moves, &mut rng)] == 5).count()
    };
    let after_2 = [key(1, 0), key(2, 1)];
    assert!(count(&pairs, after_2, 0, false) < 200, "six plays are fewer than k: MAST's tie");
    reply(&mut pairs, 1);
    assert_eq!(count(&pairs, after_2, 0, false), 200, "the reply, once played k times");
    assert_eq!(count(&pairs, after_2, 0, true), 200, "the reply to the tree's last move");
    assert!(count(&pairs, [key(1, 0), key(3, 1)], 0, false) < 200, "not after another move");
    assert!(count(&pairs, [key(1, 0), key(3, 1)], 0, true) < 200, "not after another tree move");
    assert!(count(&pairs, after_2, 2, false) < 200, "not across playouts: the keys are an earlier playout's");
}

/// NST on two threads: the helpers play by a copy of the 2-grams and their playouts' pairs
/// are counted; the search blocks the threat.
#[test]
fn tree_parallel_nst_counts_the_helpers_pairs_and_blocks() {
    let mut m = propnet("connect4.kif");
    let s = connect_four_after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3)");
    let mut t = TreeParallelMcts::<PropnetMachine>::new(MctsConfig { playout: Playout::Nst, ..mast() }, 2);
    let c = t.select(&mut m, &s, 1, Limit::iterations(20_000)).unwrap();
    assert_eq!(m.move_text(c.mv), "( drop 4 )");
    let tree = t.tree();
    assert!(tree.helper_playouts() > 0, "the helper played");
    // Each update (an iteration of the main thread or a helper's playout) adds two 2-grams
    // per joint move after its first, counted for MAST once per role: the helpers' pairs are
    // counted as their moves are.
    let plays = sums(tree, 2)[0].1;
    let pairs = pair_plays(tree);
    assert!(
        pairs >= 2.0 * (plays - c.iterations as f64) - 1.0,
        "{pairs} pairs for {plays} plays, {} updates",
        c.iterations
    );
}
