//! Perft: counts every joint-move sequence to a fixed depth on our own games, with the
//! interpreter and the propnet, asserting the counts as it measures (like a chess perft).
//! A wrong count fails the benchmark; the table gives leaf nodes per second.
//!
//! Run with `cargo bench --bench perft`.

use factotum::gdl::Game;
use factotum::interp::Interpreter;
use factotum::machine::StateMachine;
use factotum::propnet::{self, Budget};
use std::path::Path;
use std::time::Instant;

/// Counts the states reached after `depth` joint moves (terminal states stop a line early
/// and count as leaves at their depth), and every state visited.
fn perft<M: StateMachine>(m: &mut M, s: &M::State, depth: usize, leaves: &mut [u64], bufs: &mut Vec<Vec<M::Move>>) {
    let level = leaves.len() - depth - 1;
    leaves[level] += 1;
    if depth == 0 || m.is_terminal(s) {
        return;
    }
    let roles = m.roles().len();
    let mut legal: Vec<Vec<M::Move>> = std::mem::take(bufs);
    legal.resize_with(roles, Vec::new);
    for (r, l) in legal.iter_mut().enumerate() {
        m.legal_moves(s, r, l);
    }
    let mut idx = vec![0usize; roles];
    let mut joint = Vec::with_capacity(roles);
    let mut next = s.clone();
    loop {
        joint.clear();
        joint.extend(idx.iter().enumerate().map(|(r, &i)| legal[r][i]));
        m.next_state(s, &joint, &mut next);
        perft(m, &next, depth - 1, leaves, &mut Vec::new());
        // Next combination.
        let mut r = 0;
        while r < roles {
            idx[r] += 1;
            if idx[r] < legal[r].len() {
                break;
            }
            idx[r] = 0;
            r += 1;
        }
        if r == roles {
            break;
        }
    }
    *bufs = legal;
}

fn run<M: StateMachine>(name: &str, engine: &str, m: &mut M, depth: usize, expected: &[u64]) -> Vec<u64> {
    let s = m.initial_state();
    let mut leaves = vec![0u64; depth + 1];
    let t = Instant::now();
    perft(m, &s, depth, &mut leaves, &mut Vec::new());
    let secs = t.elapsed().as_secs_f64();
    let total: u64 = leaves.iter().sum();
    if !expected.is_empty() {
        assert_eq!(leaves, expected, "{name} perft({depth}) on the {engine}");
    }
    println!(
        "| {name} | {engine} | {depth} | {} | {total} | {:.3} | {:.0} |",
        leaves[depth],
        secs,
        total as f64 / secs
    );
    leaves
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Tic-tac-toe: the classic counts of positions after 0..9 plies (games end at a line).
    let ttt = [1, 9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872];
    // Connect four: no line before the 7th ply and no full column before the 6th, so every
    // ply up to 6 multiplies the count by 7.
    let c4 = [1, 7, 49, 343, 2401, 16807, 117649];
    println!("| game | engine | depth | leaves at depth | states visited | seconds | states/s |");
    println!("|---|---|---|---|---|---|---|");
    for (file, depth, expected) in [("tictactoe.kif", 9, &ttt[..]), ("connect4.kif", 6, &c4[..])] {
        let game = Game::load(&root.join("gdl").join(file)).expect("game loads");
        let mut interp = Interpreter::new(&game).expect("interpreter builds");
        let a = run(&game.name, "interp", &mut interp, depth, expected);
        let (mut pn, _) = propnet::build(&game, &Budget::default()).expect("propnet builds");
        let b = run(&game.name, "propnet", &mut pn, depth, expected);
        assert_eq!(a, b, "{}: engines disagree", game.name);
    }
    // Three-to-fifteen is tic-tac-toe in disguise: the same counts.
    let game = Game::load(&root.join("gdl/three_to_fifteen.kif")).expect("game loads");
    let (mut pn, _) = propnet::build(&game, &Budget::default()).expect("propnet builds");
    run(&game.name, "propnet", &mut pn, 9, &ttt);
}
