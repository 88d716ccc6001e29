//! Factored MCTS on our own games: it searches per factor where the game factors (and
//! wins there), switches to factors contingently, and stays plain MCTS where nothing
//! factors.

use super::*;
use crate::gdl::Game;
use crate::propnet::{build_net, Budget, Compiled};
use std::path::Path;
use std::time::Duration;

/// Options of [`setup`].
const SETUP: FactoredOptions = FactoredOptions { contingent: true, serial: true, threads: 1 };

fn setup(file: &str) -> (PropnetMachine, FactoredMcts) {
    setup_with(file, SETUP)
}

fn setup_with(file: &str, opts: FactoredOptions) -> (PropnetMachine, FactoredMcts) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let g = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    let b = build_net(&g, &Budget::default()).unwrap_or_else(|e| panic!("{e}"));
    let a = factor::analyse(&b.net);
    let m = PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms, b.symbols));
    let s = FactoredMcts::new(MctsConfig { seed: 3, ..MctsConfig::default() }, Arc::new(b.net), a, opts);
    (m, s)
}

/// parallel_tictactoe: x holds (1,1) and (1,2) on board 1 only (board 2's x marks are
/// scattered), x to move: x completes row 1 of board 1 with any `( mark 1 3 ... )`.
pub(crate) const X_HOLDS_TWO_ON_BOARD_1: &[&[&str]] = &[
    &["( mark 1 1 2 2 )", "noop"],
    &["noop", "( mark 3 3 1 1 )"],
    &["( mark 1 2 3 1 )", "noop"],
    &["noop", "( mark 2 1 1 3 )"],
];

/// parallel_connect4: yellow has three discs in column 5 of board 1 and in column 7 of
/// board 2, red to move without a win: only `( drop 5 7 )` blocks both.
pub(crate) const YELLOW_THREATENS_BOTH_BOARDS: &[&[&str]] = &[
    &["( drop 4 1 )", "noop"],
    &["noop", "( drop 5 7 )"],
    &["( drop 4 1 )", "noop"],
    &["noop", "( drop 5 7 )"],
    &["( drop 3 2 )", "noop"],
    &["noop", "( drop 5 7 )"],
];

pub(crate) fn play(m: &mut PropnetMachine, moves: &[&[&str]]) -> PnState {
    let mut s = m.initial_state();
    let mut legal = Vec::new();
    for joint in moves {
        let j: Vec<u32> = joint
            .iter()
            .enumerate()
            .map(|(r, text)| {
                m.legal_moves(&s, r, &mut legal);
                *legal.iter().find(|&&x| m.move_text(x) == *text).unwrap_or_else(|| panic!("{text} is not legal"))
            })
            .collect();
        let mut next = s.clone();
        m.next_state(&s, &j, &mut next);
        s = next;
    }
    s
}

fn choose(m: &mut PropnetMachine, f: &mut FactoredMcts, s: &PnState, role: usize, ms: u64) -> String {
    let c = f.select(m, s, role, Limit::until(Instant::now() + Duration::from_millis(ms))).expect("a move");
    m.move_text(c.mv)
}

#[test]
fn compound_moves_win_on_the_board_that_can_be_won() {
    wins_on_the_board_that_can_be_won(SETUP);
}

/// x holds (1,1) and (1,2) on board 1 only (board 2's x marks are scattered): x completes
/// row 1 of board 1.
fn wins_on_the_board_that_can_be_won(opts: FactoredOptions) {
    let (mut m, mut f) = setup_with("parallel_tictactoe.kif", opts);
    assert_eq!(f.factors(), Some(2));
    let s = play(&mut m, X_HOLDS_TWO_ON_BOARD_1);
    let mv = choose(&mut m, &mut f, &s, 0, 600);
    assert!(mv.starts_with("( mark 1 3 "), "x completes row 1 of board 1: {mv}");
}

#[test]
fn serial_moves_pick_the_board_where_the_gain_is() {
    let (mut m, mut f) = setup("serial_tictactoe.kif");
    assert_eq!(f.factors(), Some(2));
    // Board 1 is empty; on board 2 x can complete row 1 now, and o threatens row 2: x must
    // play board 2, (mark 2 1 3), not any move of board 1.
    let s = play(
        &mut m,
        &[
            &["( mark 2 1 1 )", "noop"],
            &["noop", "( mark 2 2 1 )"],
            &["( mark 2 1 2 )", "noop"],
            &["noop", "( mark 2 2 2 )"],
        ],
    );
    let mv = choose(&mut m, &mut f, &s, 0, 800);
    assert_eq!(mv, "( mark 2 1 3 )");
}

#[test]
fn contingent_factoring_switches_on_when_the_shared_cell_is_marked() {
    let (mut m, mut f) = setup("joined_tictactoe_blocked.kif");
    assert_eq!(f.factors(), None);
    let s0 = m.initial_state();
    choose(&mut m, &mut f, &s0, 0, 50);
    assert_eq!(f.factors(), None, "coupled at the start");
    let s = play(&mut m, &[&["( mark 3 3 3 3 )", "noop"]]);
    choose(&mut m, &mut f, &s, 1, 100);
    assert_eq!(f.factors(), Some(2), "once the shared corner is x, the boards are apart");
}

#[test]
fn games_that_do_not_factor_get_plain_mcts() {
    let (mut m, mut f) = setup("connect4.kif");
    assert_eq!(f.factors(), None);
    let s = m.initial_state();
    let c = f.select(&mut m, &s, 0, Limit::until(Instant::now() + Duration::from_millis(100))).expect("a move");
    assert!(c.iterations > 0);
    assert_eq!(f.factors(), None);
}

#[test]
fn serial_games_with_an_opponent_are_searched_whole_unless_asked() {
    // serial_tictactoe: the player on turn chooses the board (a sum of games): searched whole
    // by default, per board with `serial`.
    let whole = FactoredOptions { contingent: false, serial: false, threads: 1 };
    let (mut m, mut f) = setup_with("serial_tictactoe.kif", whole);
    assert_eq!(f.factors(), None);
    let s = m.initial_state();
    assert!(choose(&mut m, &mut f, &s, 0, 50).starts_with("( mark "));
    assert_eq!(f.factors(), None);
    let (_, f) = setup_with("serial_tictactoe.kif", FactoredOptions { serial: true, ..whole });
    assert_eq!(f.factors(), Some(2));
    // Compound moves: a role's choices multiply in one tree, so the boards are searched apart.
    for file in ["parallel_tictactoe.kif", "parallel_connect4.kif"] {
        let (_, f) = setup_with(file, whole);
        assert_eq!(f.factors(), Some(2), "{file}");
    }
}

#[test]
fn compound_moves_block_a_threat_on_each_board() {
    blocks_a_threat_on_each_board(SETUP);
}

/// yellow has three discs in column 5 of board 1 and in column 7 of board 2, and red has no
/// win: red must block both at once, with the one compound move (drop 5 7). Returns the
/// search and the position.
fn blocks_a_threat_on_each_board(opts: FactoredOptions) -> (PropnetMachine, FactoredMcts, PnState) {
    let (mut m, mut f) = setup_with("parallel_connect4.kif", opts);
    assert_eq!(f.factors(), Some(2));
    let s = play(&mut m, YELLOW_THREATENS_BOTH_BOARDS);
    assert_eq!(choose(&mut m, &mut f, &s, 0, 600), "( drop 5 7 )");
    (m, f, s)
}

/// With two threads, the factors are searched at once (each on its own thread) and the
/// player still finds the one compound move that blocks both boards, and the win on one.
#[test]
fn factors_searched_on_two_threads_at_once_play_as_well() {
    let opts = FactoredOptions { contingent: false, serial: false, threads: 2 };
    let (mut m, mut f, s) = blocks_a_threat_on_each_board(opts);
    // An iteration budget is each factor's: both trees ran it in both phases.
    let c = f.select(&mut m, &s, 0, Limit::iterations(300)).expect("a move");
    assert_eq!(c.iterations, 4 * 300, "two factors, two phases, 300 iterations each");
    wins_on_the_board_that_can_be_won(opts);
}

/// Factors in which no role has two moves (a switch per factor, one flip each) are a sound
/// factoring that is not searched apart: each tree would be one choice deep.
#[test]
fn factors_without_a_choice_of_their_own_are_searched_whole() {
    let (mut m, mut f) = setup_with("switches.kif", FactoredOptions { contingent: false, serial: false, threads: 2 });
    assert_eq!(f.factors(), None);
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/switches.kif");
    let b = build_net(&Game::load(&p).expect("game"), &Budget::default()).expect("net");
    let a = factor::analyse(&b.net);
    assert_eq!((&a.verdict, a.factors.len()), (&Verdict::Factorable, 4));
    assert!(a.factors.iter().all(|k| k.choices(0) == 1));
    let why = plan(&b.net, &a, FactoredOptions::default()).unwrap_err();
    assert!(why.contains("single moves"), "{why}");
    let s = m.initial_state();
    assert!(choose(&mut m, &mut f, &s, 0, 50).starts_with("( flip "));
    // Its latches (a switch once on stays on) can only refine factors that offer no choice,
    // so contingent factoring does not watch them.
    let (_, f) = setup_with("switches.kif", FactoredOptions { contingent: true, serial: false, threads: 2 });
    assert!(!f.latches.is_empty(), "a switch once on stays on");
    assert!(!f.watches_latches());
    let (_, f) = setup_with("joined_tictactoe.kif", FactoredOptions { contingent: true, serial: false, threads: 2 });
    assert!(f.watches_latches(), "one board until the centre is marked");
    // Boards with moves of their own are searched apart.
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/parallel_tictactoe.kif");
    let b = build_net(&Game::load(&p).expect("game"), &Budget::default()).expect("net");
    let a = factor::analyse(&b.net);
    assert!(a.factors.iter().all(|k| k.choices(0) >= 9), "a mark per cell of each board");
    assert_eq!(plan(&b.net, &a, FactoredOptions::default()), Ok(()));
}

/// A factor's rollouts play the whole game whatever meta-gaming chose: MAST's policy and
/// the batch machine's rollouts start from the factor's state with the other factors merged
/// in (as frozen at the root) and end where the game ends.
#[test]
fn policy_and_batched_rollouts_play_the_whole_game() {
    use crate::machine::{PlayoutBuffers, Uniform};
    use rand::SeedableRng;
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/parallel_connect4.kif");
    let b = build_net(&Game::load(&p).expect("game"), &Budget::default()).expect("net");
    let a = factor::analyse(&b.net);
    let mut m = PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms, b.symbols));
    m.attach_batch(&b.net);
    let root = play(&mut m, YELLOW_THREATENS_BOTH_BOARDS);
    let mut fm = FactorMachine::new(m.clone(), &a, 0);
    let own = fm.set_root(&root);
    let mut bufs = PlayoutBuffers::new(&mut fm);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
    for _ in 0..20 {
        let mut s = own.clone();
        let r = fm.playout_policy(&mut s, &mut rng, 1000, &mut bufs, &mut Uniform);
        assert!(r.terminal && r.depth > 0, "{r:?}");
        assert!(m.is_terminal(&fm.end_full), "the game itself ended");
        // The other board moved on too: the rollout played the whole game's moves.
        let other_moved =
            (0..a.place.len()).any(|b| a.place[b] == factor::Place::Factor(1) && root.get(b) != fm.end_full.get(b));
        assert!(other_moved, "board 2 changed in factor 1's rollout");
        assert_eq!(fm.goal(&s, 0), m.goal(&fm.end_full, 0), "the game's goal, asked of the factor's part");
    }
    // Batched: exactly the game's own batched rollouts from the merged start.
    let lanes = fm.batch_lanes();
    assert!(lanes > 0);
    let roles = m.roles().len();
    let (mut got, mut want) = (vec![0.0; 2 * roles], vec![0.0; 2 * roles]);
    let mut r1 = rand_pcg::Pcg64Mcg::seed_from_u64(9);
    let mut r2 = rand_pcg::Pcg64Mcg::seed_from_u64(9);
    let per = fm.batch_playouts(&[own.clone(), own.clone()], 1000, &mut r1, &mut got, None);
    let per_game = m.batch_playouts(&[root.clone(), root.clone()], 1000, &mut r2, &mut want, None);
    assert_eq!(per, Some(lanes / 2));
    assert_eq!((per, &got), (per_game, &want));
    // Without the other board merged in, the rollouts would differ.
    let mut r3 = rand_pcg::Pcg64Mcg::seed_from_u64(9);
    let mut bare = vec![0.0; 2 * roles];
    m.batch_playouts(&[own.clone(), own], 1000, &mut r3, &mut bare, None);
    assert_ne!(bare, want, "the frozen board matters");
}

/// With meta-gaming's MAST or batched rollouts, the factored search still blocks both
/// boards with the one compound move.
#[test]
fn compound_moves_block_both_threats_with_mast_or_batched_rollouts() {
    for playout in [crate::search::Playout::Mast, crate::search::Playout::Batch] {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/parallel_connect4.kif");
        let b = build_net(&Game::load(&p).expect("game"), &Budget::default()).expect("net");
        let a = factor::analyse(&b.net);
        let mut m = PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms, b.symbols));
        m.attach_batch(&b.net);
        let cfg = MctsConfig { seed: 3, ..MctsConfig::default() };
        let mut f = FactoredMcts::new(cfg, Arc::new(b.net), a, SETUP).with_playout(playout);
        let s = play(&mut m, YELLOW_THREATENS_BOTH_BOARDS);
        assert_eq!(choose(&mut m, &mut f, &s, 0, 600), "( drop 5 7 )", "{playout:?}");
    }
}

/// A factor machine's answers with its root anchored ([`StateMachine::anchor`], which it
/// passes on to the game's machine as the merged state) are the answers without: anchoring is
/// a hint. As MCTS uses it: the factor's root anchored, a random descent of the factor's
/// tree, a whole-game rollout from the leaf, and again, comparing legal classes, terminal,
/// goals and next states along every descent, on both boards of two games.
#[test]
fn anchored_factor_machines_answer_as_unanchored_ones() {
    use crate::machine::PlayoutBuffers;
    use rand::{Rng, SeedableRng};
    for (file, moves) in
        [("parallel_tictactoe.kif", X_HOLDS_TWO_ON_BOARD_1), ("parallel_connect4.kif", YELLOW_THREATENS_BOTH_BOARDS)]
    {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
        let b = build_net(&Game::load(&p).expect("game"), &Budget::default()).expect("net");
        let a = factor::analyse(&b.net);
        let mut m = PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms, b.symbols));
        let root = play(&mut m, moves);
        for k in 0..a.factors.len() {
            let mut anchored = FactorMachine::new(m.clone(), &a, k);
            let mut plain = FactorMachine::new(m.clone(), &a, k);
            let own = anchored.set_root(&root);
            assert_eq!(plain.set_root(&root), own);
            let (mut ba, mut bp) = (PlayoutBuffers::new(&mut anchored), PlayoutBuffers::new(&mut plain));
            let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11 + k as u64);
            let roles = m.roles().len();
            let mut buf = Vec::new();
            // Per role, the classes of the legal moves (sorted) and a representative of each.
            let mut classes = |fm: &mut FactorMachine, s: &PnState| -> Vec<Vec<(u32, u32)>> {
                (0..roles)
                    .map(|r| {
                        fm.legal_moves(s, r, &mut buf);
                        let mut v: Vec<(u32, u32)> = buf.iter().map(|&mv| (fm.class(mv), mv)).collect();
                        v.sort_unstable();
                        v
                    })
                    .collect()
            };
            anchored.anchor(&own);
            let mut merged = PnState::default();
            merge_into(&own, &anchored.frozen, &mut merged);
            assert_eq!(anchored.inner.snapshot_state(), Some(&merged.bits[..]), "the merged root is anchored");
            for it in 0..150 {
                anchored.anchor(&own);
                let mut s = own.clone();
                for depth in 0.. {
                    let (la, lp) = (classes(&mut anchored, &s), classes(&mut plain, &s));
                    let ca: Vec<Vec<u32>> = la.iter().map(|l| l.iter().map(|x| x.0).collect()).collect();
                    let cp: Vec<Vec<u32>> = lp.iter().map(|l| l.iter().map(|x| x.0).collect()).collect();
                    assert_eq!(ca, cp, "{file} factor {k}: legal classes, iteration {it} depth {depth}");
                    let t = anchored.is_terminal(&s);
                    assert_eq!(t, plain.is_terminal(&s), "{file} factor {k}: terminal, iteration {it} depth {depth}");
                    let goals = |fm: &mut FactorMachine| (0..roles).map(|r| fm.goal(&s, r)).collect::<Vec<_>>();
                    assert_eq!(goals(&mut anchored), goals(&mut plain), "{file} factor {k}: goals, iteration {it}");
                    if t || la.iter().any(Vec::is_empty) || depth == 3 {
                        break;
                    }
                    // A random class per role, played in both machines by the same move (the
                    // unanchored machine's representative).
                    let joint: Vec<u32> = lp.iter().map(|l| l[rng.gen_range(0..l.len())].1).collect();
                    let (mut na, mut np) = (s.clone(), s.clone());
                    anchored.next_state(&s, &joint, &mut na);
                    plain.next_state(&s, &joint, &mut np);
                    assert_eq!(na, np, "{file} factor {k}: next state, iteration {it} depth {depth}");
                    s = na;
                }
                let (mut ea, mut ep) = (s.clone(), s);
                anchored.playout_seen(&mut ea, &mut rng, 1000, &mut ba, |_| {});
                plain.playout_seen(&mut ep, &mut rng, 1000, &mut bp, |_| {});
            }
            assert!(anchored.inner.snapshot_restores() > 0, "{file} factor {k}: the anchored root was restored");
        }
    }
}

/// A factor tree stops once it proves its root, and its other classes are left a visit or
/// two whose mean can tie with the proof (one lucky rollout scores 1 as surely as the win in
/// one does): the proven class must win the tie. Before, on the position of
/// [`wins_on_the_board_that_can_be_won`], 10 of these 16 seeds played another cell of board 1
/// (ties went to the first legal move), whatever the iterations.
#[test]
fn a_proven_win_in_a_factor_outranks_estimates_as_high() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/parallel_tictactoe.kif");
    let b = build_net(&Game::load(&p).expect("game"), &Budget::default()).expect("net");
    let net = Arc::new(b.net);
    let a = factor::analyse(&net);
    let mut m = PropnetMachine::new(Compiled::new(&net, b.grounding_terms, b.symbols));
    let s = play(&mut m, X_HOLDS_TWO_ON_BOARD_1);
    for seed in 0..16 {
        let mut f = FactoredMcts::new(MctsConfig { seed, ..MctsConfig::default() }, net.clone(), a.clone(), SETUP);
        let c = f.select(&mut m, &s, 0, Limit::iterations(500)).expect("a move");
        assert_eq!(f.factors(), Some(2));
        let mv = m.move_text(c.mv);
        assert!(mv.starts_with("( mark 1 3 "), "seed {seed}: x completes row 1 of board 1: {mv}");
    }
}
