//! The AMAF family's updates and blend, on the `gdl/` games through the propnet.

use super::*;
use crate::gdl::Game;
use crate::propnet::{self, Budget, PropnetMachine};
use crate::search::Limit;
use std::collections::HashSet;
use std::path::Path;

fn propnet(file: &str) -> PropnetMachine {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let game = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    propnet::build(&game, &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

fn config(amaf: Amaf) -> MctsConfig {
    MctsConfig { seed: 11, amaf, ..MctsConfig::default() }
}

#[test]
fn beta_follows_the_schedule() {
    assert_eq!(rave_beta(10, 0, 1e-3), 0.0);
    assert_eq!(rave_beta(0, 5, 1e-3), 1.0);
    // Without bias, beta = ñ / (ñ + n).
    assert!((rave_beta(100, 300, 0.0) - 0.75).abs() < 1e-12);
    // With many AMAF visits it halves near n = 1/b.
    let half = rave_beta(1000, 1_000_000_000, 1e-3);
    assert!((half - 0.5).abs() < 1e-3, "{half}");
    // It falls as visits grow.
    assert!(rave_beta(10, 100, 1e-3) > rave_beta(100, 100, 1e-3));
    // The blend: all AMAF at beta 1, the mean alone without AMAF visits.
    let c = 0.0;
    assert!((rave_value(4, 1.0, 0.0, 0.0, 1e-3, c, 1.0) - 0.25).abs() < 1e-12);
    let b = rave_beta(4, 12, 0.0);
    let v = rave_value(4, 1.0, 12.0, 9.0, 0.0, c, 1.0);
    assert!((v - ((1.0 - b) * 0.25 + b * 0.75)).abs() < 1e-12, "{v}");
    // Unvisited: infinite without AMAF, else ranked by its AMAF mean.
    assert_eq!(rave_value(0, 0.0, 0.0, 0.0, 1e-3, 0.7, 2.0), f64::INFINITY);
    assert!(rave_value(0, 0.0, 4.0, 3.0, 1e-3, 0.7, 2.0) > rave_value(0, 0.0, 4.0, 1.0, 1e-3, 0.7, 2.0));
}

/// The moves each role played in the last iteration: at the root (the tree's first joint
/// move) and in the playout, as ids.
fn played(t: &Mcts<PropnetMachine>) -> Vec<HashSet<u32>> {
    let roles = t.roles;
    let root = &t.nodes[t.root as usize];
    let mut out = vec![HashSet::new(); roles];
    for (r, set) in out.iter_mut().enumerate() {
        set.insert(root.gid[root.offs[r] as usize + t.path_moves[r] as usize]);
        for ply in t.amaf.seq.chunks(roles) {
            if ply[r] != NONE {
                set.insert(ply[r]);
            }
        }
    }
    out
}

#[test]
fn rave_counts_every_move_played_later_once_per_role() {
    let mut m = propnet("tictactoe.kif");
    let s = m.initial_state();
    let mut t = Mcts::new(config(Amaf::Rave));
    // One iteration: the root's counts are what it played.
    t.select(&mut m, &s, 0, Limit::iterations(1));
    let sets = played(&t);
    let root = &t.nodes[t.root as usize];
    let mut counted = 0;
    for (r, set) in sets.iter().enumerate() {
        for i in root.offs[r] as usize..root.offs[r + 1] as usize {
            let seen = set.contains(&root.gid[i]);
            assert_eq!(root.an[i], seen as u32, "role {r} move {i}");
            if seen {
                assert_eq!(root.aw[i], t.rewards[r], "role {r} move {i}: the role's own reward");
                counted += 1;
            }
        }
    }
    // x's first mark, and in a playout at least two more marks each.
    assert!(counted >= 5, "{counted}");
    // The plain counts saw one visit of one move per role.
    assert_eq!(root.n.iter().sum::<u32>(), 2);
}

#[test]
fn killer_rave_counts_only_the_decisive_moves() {
    let mut m = propnet("tictactoe.kif");
    let s = m.initial_state();
    let mut decisive = 0;
    for seed in 0..40 {
        let mut t = Mcts::new(MctsConfig { seed, killer_window: 1, ..config(Amaf::Killer) });
        t.select(&mut m, &s, 0, Limit::iterations(1));
        let root = &t.nodes[t.root as usize];
        let total: u32 = root.an.iter().sum();
        if t.rewards[0] == t.rewards[1] {
            assert_eq!(total, 0, "a draw counts no move (seed {seed})");
            continue;
        }
        decisive += 1;
        // One joint move counts: the winner's mark and the other role's noop, where the root
        // holds them (a noop of x is not a root move).
        let roles = t.roles;
        let last = &t.amaf.seq[t.amaf.seq.len() - roles..];
        for r in 0..roles {
            for i in root.offs[r] as usize..root.offs[r + 1] as usize {
                assert_eq!(root.an[i], (root.gid[i] == last[r]) as u32, "seed {seed} role {r}");
            }
        }
        assert!(total <= 2);
    }
    assert!(decisive > 5, "{decisive} decisive playouts of 40");
}

#[test]
fn grave_reads_the_reference_node_statistics_by_move() {
    let mut m = propnet("connect4.kif");
    let s = m.initial_state();
    let mut t = Mcts::new(MctsConfig { grave_ref: 1000, ..config(Amaf::Grave) });
    t.select(&mut m, &s, 0, Limit::iterations(3000));
    // A grandchild of the root (red to move again) with fewer than 1000 visits: red's
    // reference is the root (the child holds only red's noop), and the grandchild's drops are
    // found among the root's by id.
    let root = t.root as usize;
    let (_, child) = t.nodes[root].children[0];
    let (_, grand) = t.nodes[child as usize].children[0];
    assert!(t.nodes[grand as usize].visits < 1000);
    t.amaf.pos_of = vec![(NONE, 0); 2];
    t.index_reference(root, 0);
    let (c, r) = (&t.nodes[grand as usize], &t.nodes[root]);
    let mut found = 0;
    for i in c.offs[0] as usize..c.offs[1] as usize {
        let g = c.gid[i] as usize;
        if t.amaf.pos_stamp[g] == t.amaf.pos_of[0].1 {
            let j = t.amaf.pos[g] as usize;
            assert_eq!(r.gid[j] as usize, g);
            assert_eq!(r.moves[j], c.moves[i]);
            assert!(r.an[j] > 0, "the root has AMAF statistics for it");
            found += 1;
        }
    }
    assert_eq!(found, 7, "the seven drops");
}

#[test]
fn every_variant_takes_a_win_and_blocks_a_loss_in_connect_four() {
    let mut m = propnet("connect4.kif");
    let roles = m.roles().len();
    // Red (role 0) has three in the bottom row at columns 1-3; it is red's turn after black's
    // reply elsewhere: red wins by dropping in column 4, and yellow to move must block there.
    let mut s = m.initial_state();
    let mut legal = Vec::new();
    for (col, role) in [(1, 0), (7, 1), (2, 0), (7, 1), (3, 0)] {
        let mut joint = Vec::new();
        for r in 0..roles {
            m.legal_moves(&s, r, &mut legal);
            let want = format!("( drop {col} )");
            let mv = if r == role {
                legal.iter().copied().find(|&mv| m.move_text(mv) == want)
            } else {
                legal.first().copied()
            };
            joint.push(mv.unwrap_or_else(|| panic!("{want} for role {r}")));
        }
        let mut next = s.clone();
        m.next_state(&s, &joint, &mut next);
        s = next;
    }
    for amaf in [Amaf::Off, Amaf::Rave, Amaf::Grave, Amaf::Killer, Amaf::Similar] {
        let mut t = Mcts::new(config(amaf));
        let c = t.select(&mut m, &s, 1, Limit::iterations(20_000)).unwrap();
        assert_eq!(m.move_text(c.mv), "( drop 4 )", "{amaf:?} blocks");
    }
}

/// Connect four after red 1, yellow 7, red 1, yellow 7, red 2: yellow to move, with tactics
/// two plies ahead.
fn connect_four_midgame(m: &mut PropnetMachine) -> <PropnetMachine as StateMachine>::State {
    let moves = crate::machine::split_moves("(drop 1) (drop 7) (drop 1) (drop 7) (drop 2)").unwrap();
    let init = m.initial_state();
    crate::machine::play_texts(m, &init, &moves).unwrap()
}

/// Similarity-guided GRAVE reads a reference only when the closest signed node on the path
/// (the proxy) is tactically similar to it by at least ρ, weighted by that similarity; and
/// it does pass over dissimilar candidates (else the test would check nothing).
#[test]
fn similar_reads_only_references_similar_to_the_node() {
    let mut m = propnet("connect4.kif");
    let s = connect_four_midgame(&mut m);
    let rho = 0.6;
    let cfg = MctsConfig { sim_rho: rho, sim_visits: 4, grave_ref: 20, sim_share: 1.0, ..config(Amaf::Similar) };
    let mut t = Mcts::new(cfg);
    t.select(&mut m, &s, 1, Limit::iterations(1));
    let (mut read, mut passed_over) = (0, 0);
    for _ in 0..4000 {
        t.iterate(&mut m);
        for r in 0..t.roles {
            let cands = &t.sim.cands[r];
            let g = t.amaf.refs[r];
            if g == NONE {
                passed_over += usize::from(!cands.is_empty());
                continue;
            }
            let p = t.sim.proxy as usize;
            let (a, b) = (t.nodes[p].sig.as_ref().unwrap(), t.nodes[g as usize].sig.as_ref().unwrap());
            let sim = a.similarity(b);
            assert!(sim >= rho, "reference read at similarity {sim}");
            assert!((t.sim.weight[r] - sim).abs() < 1e-6, "weight {} for similarity {sim}", t.sim.weight[r]);
            read += 1;
            passed_over += usize::from(*cands.last().unwrap() != g);
        }
    }
    let stats = t.sim_stats();
    assert!(stats.signatures > 0 && stats.comparisons > 0, "{stats:?}");
    assert!(read > 0, "no reference was ever read");
    assert!(passed_over > 0, "no dissimilar candidate was ever passed over");
}

/// With ρ above 1 no other node is similar enough, so similarity-guided AMAF reads each
/// node's own statistics: RAVE, move for move (signatures draw no random numbers).
#[test]
fn similar_with_rho_above_one_is_rave() {
    let mut m = propnet("connect4.kif");
    let s = connect_four_midgame(&mut m);
    let mut a = Mcts::new(MctsConfig { sim_rho: 1.01, sim_share: 1.0, ..config(Amaf::Similar) });
    let mut b = Mcts::new(config(Amaf::Rave));
    a.select(&mut m, &s, 1, Limit::iterations(3000));
    b.select(&mut m, &s, 1, Limit::iterations(3000));
    assert!(a.sim_stats().signatures > 0);
    assert_eq!(a.root_stats(1), b.root_stats(1));
    assert_eq!(a.tree_size(), b.tree_size());
}

/// With AMAF on, UCB's bonus is `amaf_exploration`, not `exploration`: a huge bonus spreads
/// the root's visits over its moves, none concentrates them on the best.
#[test]
fn amaf_searches_use_their_own_exploration_constant() {
    let spread = |exploration: f64, amaf_exploration: f64| {
        let mut m = propnet("tictactoe.kif");
        let s = m.initial_state();
        let mut t = Mcts::new(MctsConfig { exploration, amaf_exploration, ..config(Amaf::Grave) });
        t.select(&mut m, &s, 0, Limit::iterations(3000));
        let root = &t.nodes[t.root as usize];
        let n: Vec<u32> = (root.offs[0] as usize..root.offs[1] as usize).map(|i| root.n[i]).collect();
        (*n.iter().max().unwrap() as f64) / (*n.iter().min().unwrap()).max(1) as f64
    };
    let wide = spread(0.0, 100.0);
    let narrow = spread(100.0, 0.0);
    assert!(wide < 1.5, "a bonus of 100 visits every move alike: max/min {wide}");
    assert!(narrow > 5.0, "no bonus: the visits go to the best moves: max/min {narrow}");
}
