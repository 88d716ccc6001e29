//! Decisive and anti-decisive playouts, on the `gdl/` games through the propnet and the
//! interpreter: every ply of many playouts is checked against a brute-force search of the
//! mover's wins and the opponent's replies.

use super::*;
use crate::gdl::Game;
use crate::machine::{play_texts, split_moves, PlayoutBuffers, PlayoutPolicy, StateMachine};
use crate::propnet::{self, Budget, PropnetMachine};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::path::Path;

fn game(file: &str) -> Game {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    Game::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn propnet(file: &str) -> PropnetMachine {
    propnet::build(&game(file), &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}")).0
}

/// Uniform moves, the joint moves played recorded.
struct Recorded<Mv> {
    plies: Vec<Vec<Mv>>,
}

impl<Mv> Default for Recorded<Mv> {
    fn default() -> Self {
        Recorded { plies: Vec::new() }
    }
}

impl<Mv: Copy> PlayoutPolicy<Mv> for Recorded<Mv> {
    fn choose<R: Rng>(&mut self, _: usize, legal: &[Mv], rng: &mut R) -> usize {
        rng.gen_range(0..legal.len())
    }
    fn seen(&mut self, joint: &[Mv]) {
        self.plies.push(joint.to_vec());
    }
}

/// One decisive playout from `start`: the joint moves played, the end and the final state.
fn playout<M: StateMachine>(
    m: &mut M,
    start: &M::State,
    seed: u64,
    anti: bool,
) -> (Vec<Vec<M::Move>>, PlayoutResult, M::State) {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut bufs = PlayoutBuffers::new(m);
    let mut dec = DecisiveBuffers::new(m);
    let mut policy = Recorded::default();
    let mut s = start.clone();
    let r = decisive_playout(m, &mut s, &mut rng, 1000, &mut bufs, &mut dec, &mut policy, anti);
    (policy.plies, r, s)
}

/// The roles with two or more legal moves in `s`, and every role's legal moves.
fn choices<M: StateMachine>(m: &mut M, s: &M::State) -> (Vec<usize>, Vec<Vec<M::Move>>) {
    let roles = m.roles().len();
    let mut legal = vec![Vec::new(); roles];
    for (r, l) in legal.iter_mut().enumerate() {
        m.legal_moves(s, r, l);
    }
    ((0..roles).filter(|&r| legal[r].len() > 1).collect(), legal)
}

/// Whether `joint` with `role`'s move replaced by `mv` wins at once for `role`.
fn wins_with<M: StateMachine>(m: &mut M, s: &M::State, joint: &[M::Move], role: usize, mv: M::Move) -> bool {
    let mut j = joint.to_vec();
    j[role] = mv;
    let mut n = s.clone();
    m.next_state(s, &j, &mut n);
    m.is_terminal(&n) && m.goal(&n, role) == Some(WIN)
}

/// Whether some role other than `mover` with a choice in `s` (a turn-taking state) has a
/// move that wins at once.
fn threatened<M: StateMachine>(m: &mut M, s: &M::State, mover: usize) -> bool {
    if m.is_terminal(s) {
        return false;
    }
    let (choosers, legal) = choices(m, s);
    let [r] = choosers[..] else { return false };
    let joint: Vec<M::Move> = legal.iter().map(|l| l[0]).collect();
    r != mover && legal[r].clone().into_iter().any(|mv| wins_with(m, s, &joint, r, mv))
}

/// Checks each ply of a playout: a role with a winning move played one (the first role in
/// order that had one); otherwise, in a turn-taking ply with `anti`, the mover's move lets
/// the opponent win at once only when every move of the mover does.
fn check_playout<M: StateMachine>(m: &mut M, start: &M::State, plies: &[Vec<M::Move>], anti: bool) -> (u32, u32) {
    let (mut wins_taken, mut blocks) = (0, 0);
    let mut s = start.clone();
    for joint in plies {
        let (choosers, legal) = choices(m, &s);
        let winner = choosers.iter().copied().find(|&r| legal[r].iter().any(|&mv| wins_with(m, &s, joint, r, mv)));
        let mut next = s.clone();
        m.next_state(&s, joint, &mut next);
        match winner {
            Some(r) => {
                assert!(
                    m.is_terminal(&next) && m.goal(&next, r) == Some(WIN),
                    "role {r} had a winning move and did not play it"
                );
                wins_taken += 1;
            }
            None if anti && choosers.len() == 1 => {
                let mover = choosers[0];
                if threatened(m, &next, mover) {
                    for &mv in &legal[mover] {
                        let mut j = joint.clone();
                        j[mover] = mv;
                        let mut alt = s.clone();
                        m.next_state(&s, &j, &mut alt);
                        assert!(threatened(m, &alt, mover), "a move that does not let the opponent win was there");
                    }
                } else {
                    // Did the uniform choice need correcting? Count the plies where some
                    // move of the mover would have let the opponent win.
                    let some_lose = legal[mover].iter().any(|&mv| {
                        let mut j = joint.clone();
                        j[mover] = mv;
                        let mut alt = s.clone();
                        m.next_state(&s, &j, &mut alt);
                        threatened(m, &alt, mover)
                    });
                    blocks += some_lose as u32;
                }
            }
            None => {}
        }
        s = next;
    }
    (wins_taken, blocks)
}

#[test]
fn every_ply_takes_a_win_and_avoids_giving_one_on_the_propnet() {
    for (file, runs) in [("tictactoe.kif", 60), ("connect4.kif", 12), ("hex4.kif", 20)] {
        let mut m = propnet(file);
        let init = m.initial_state();
        let (mut wins, mut blocks) = (0, 0);
        for seed in 0..runs {
            let (plies, r, end) = playout(&mut m, &init, seed, true);
            assert!(r.terminal && m.is_terminal(&end), "{file}: the playout ends the game");
            assert_eq!(r.depth, plies.len());
            let (w, b) = check_playout(&mut m, &init, &plies, true);
            wins += w;
            blocks += b;
        }
        // The checks above are not vacuous: wins were there to take and losses to avoid.
        assert!(wins > 0, "{file}: no playout had a winning move");
        assert!(blocks > 0, "{file}: no playout had a losing move to avoid");
    }
}

#[test]
fn the_interpreter_plays_the_same_rules() {
    let g = game("tictactoe.kif");
    let mut m = crate::interp::Interpreter::new(&g).unwrap();
    let init = m.initial_state();
    for seed in 0..10 {
        let (plies, r, _) = playout(&mut m, &init, seed, true);
        assert!(r.terminal);
        check_playout(&mut m, &init, &plies, true);
    }
}

#[test]
fn decisive_alone_takes_wins_and_may_give_them() {
    // Without anti-decisive moves, wins are still taken at every ply.
    let mut m = propnet("connect4.kif");
    let init = m.initial_state();
    for seed in 0..8 {
        let (plies, _, _) = playout(&mut m, &init, seed, false);
        check_playout(&mut m, &init, &plies, false);
    }
}

/// Connect four after `moves`.
fn connect_four_after(m: &mut PropnetMachine, moves: &str) -> <PropnetMachine as StateMachine>::State {
    let init = m.initial_state();
    play_texts(m, &init, &split_moves(moves).unwrap()).unwrap()
}

#[test]
fn a_playout_wins_at_once_and_blocks_the_only_threat() {
    let mut m = propnet("connect4.kif");
    // White to move, three in a row on the bottom: every playout wins with column 4.
    let s = connect_four_after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3) (drop 6)");
    for seed in 0..20 {
        let (plies, r, end) = playout(&mut m, &s, seed, false);
        assert_eq!(r.depth, 1, "seed {seed}");
        assert_eq!(m.goal(&end, 0), Some(WIN));
        assert_eq!(m.move_text(plies[0][0]), "( drop 4 )");
    }
    // Black to move against the same three: every anti-decisive playout blocks column 4.
    let s = connect_four_after(&mut m, "(drop 1) (drop 7) (drop 2) (drop 7) (drop 3)");
    for seed in 0..20 {
        let (plies, _, _) = playout(&mut m, &s, seed, true);
        assert_eq!(m.move_text(plies[0][1]), "( drop 4 )", "seed {seed}");
    }
    // Uniformly random playouts mostly do not.
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut bufs = PlayoutBuffers::new(&mut m);
    let mut blocked = 0;
    for _ in 0..20 {
        let mut p = Recorded::default();
        let mut e = s.clone();
        crate::machine::policy_playout(&mut m, &mut e, &mut rng, 1000, &mut bufs, &mut p);
        blocked += (m.move_text(p.plies[0][1]) == "( drop 4 )") as u32;
    }
    assert!(blocked < 20);
}

#[test]
fn simultaneous_games_play_to_the_end() {
    for file in ["parallel_tictactoe.kif", "parallel_connect4.kif", "joined_tictactoe.kif"] {
        let mut m = propnet(file);
        let init = m.initial_state();
        for seed in 0..5 {
            let (plies, r, end) = playout(&mut m, &init, seed, true);
            assert_eq!(r.depth, plies.len(), "{file}");
            assert!(!r.terminal || m.is_terminal(&end), "{file}");
            // Where a role had a winning move, one was played.
            check_playout(&mut m, &init, &plies, false);
        }
    }
}

/// The learned filter of ending moves, on our 5x5 breakthrough (a race: only steps onto the
/// far row, or the capture of a last pawn, end it): a ply tries only moves that ended an
/// earlier playout, which costs a fraction of the exact search's tries, and a win by such a
/// move is still taken at every ply.
#[test]
fn the_learned_filter_tries_only_moves_that_ended_a_playout() {
    let mut m = propnet("breakthrough5.kif");
    let init = m.initial_state();
    let moves = m.move_number_bound() as u32;
    let mut bufs = PlayoutBuffers::new(&mut m);
    let mut exact = DecisiveBuffers::new(&mut m);
    let mut learned = DecisiveBuffers::learned(&mut m);
    assert!((0..moves).all(|mv| !learned.may_end(0, mv) && !learned.may_end(1, mv)), "the filter starts empty");
    let (mut wins, mut plies_exact, mut plies_learned) = (0, 0, 0);
    for seed in 0..60 {
        // Exact decisive playouts, for the cost of trying every move.
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut s = init.clone();
        let mut p = Recorded::default();
        plies_exact += decisive_playout(&mut m, &mut s, &mut rng, 1000, &mut bufs, &mut exact, &mut p, true).depth;
        // With the filter: what it lets through before this playout (it learns at the end).
        let before: Vec<[bool; 2]> = (0..moves).map(|mv| [learned.may_end(0, mv), learned.may_end(1, mv)]).collect();
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut s = init.clone();
        let mut p = Recorded::default();
        let r = decisive_playout(&mut m, &mut s, &mut rng, 1000, &mut bufs, &mut learned, &mut p, true);
        assert!(r.terminal, "seed {seed}");
        plies_learned += r.depth;
        let last = p.plies.last().expect("a move");
        assert!(learned.may_end(0, last[0]) && learned.may_end(1, last[1]), "the ending move is learned");
        let mut st = init.clone();
        for joint in &p.plies {
            let (choosers, legal) = choices(&mut m, &st);
            for &r in &choosers {
                let known_win =
                    legal[r].iter().any(|&mv| before[mv as usize][r] && wins_with(&mut m, &st, joint, r, mv));
                if known_win {
                    let mut next = st.clone();
                    m.next_state(&st, joint, &mut next);
                    assert!(m.goal(&next, r) == Some(WIN) && m.is_terminal(&next), "seed {seed}: a learned win missed");
                    wins += 1;
                }
            }
            let mut next = st.clone();
            m.next_state(&st, joint, &mut next);
            st = next;
        }
    }
    assert!(wins > 20, "the check is not vacuous: {wins} learned wins taken");
    // Per ply, the filter tries a fraction of what the exact search does.
    let per_ply = |tried: u64, plies: usize| tried as f64 / plies as f64;
    let (e, l) = (per_ply(exact.counts().tried, plies_exact), per_ply(learned.counts().tried, plies_learned));
    assert!(l * 3.0 < e, "tries per ply: learned {l:.2}, exact {e:.2}");
    // Few moves end this game: most are never learned.
    let known = (0..moves).filter(|&mv| learned.may_end(0, mv) || learned.may_end(1, mv)).count();
    assert!(known > 0 && known * 2 < moves as usize, "{known} of {moves} moves learned");
}

/// The generic playout loops (random, policy, decisive) stop at the buffers' deadline, or
/// once their stop flag is raised, not terminal, within [`crate::machine::DEADLINE_EVERY`]
/// joint moves: a slow engine's playout (the interpreter's on amazons takes about a second)
/// must not run past a reply deadline, nor keep a cancelled ponder going.
#[test]
fn generic_playouts_stop_at_the_deadline() {
    use crate::interp::Interpreter;
    use crate::machine::{policy_playout, random_playout, DEADLINE_EVERY};
    use std::time::{Duration, Instant};
    let mut m = Interpreter::new(&game("connect4.kif")).unwrap();
    let s0 = m.initial_state();
    let mut rng = Pcg64Mcg::seed_from_u64(5);
    let mut bufs = PlayoutBuffers::new(&mut m);
    let mut dec = DecisiveBuffers::learned(&mut m);
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    for (past, stop) in [(true, false), (false, true), (false, false)] {
        bufs.deadline = Some(if past { Instant::now() } else { Instant::now() + Duration::from_secs(3600) });
        bufs.stop = stop.then(|| flag.clone());
        for kind in 0..3 {
            let mut s = s0.clone();
            let mut policy = Recorded::default();
            let r = match kind {
                0 => random_playout(&mut m, &mut s, &mut rng, 1000, &mut bufs),
                1 => policy_playout(&mut m, &mut s, &mut rng, 1000, &mut bufs, &mut policy),
                _ => decisive_playout(&mut m, &mut s, &mut rng, 1000, &mut bufs, &mut dec, &mut policy, true),
            };
            if past || stop {
                assert_eq!((r.depth, r.terminal), (DEADLINE_EVERY - 1, false), "kind {kind}");
            } else {
                assert!(r.terminal, "kind {kind}: with time left the playout ends the game");
            }
        }
    }
}
