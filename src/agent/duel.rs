//! A match harness without HTTP: two agent configurations play a game against each other
//! for a number of matches, alternating roles, on the same clock as the server
//! ([`super::deadlines`]); reports scores, late replies and illegal choices.

use super::{deadlines, new_player, AgentConfig, Player};
use crate::gdl::Game;
use std::time::{Duration, Instant};

/// The outcome of a series of matches between agent A and agent B.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct DuelReport {
    pub matches: usize,
    /// Sum of A's goals (A plays one role per match, B all the others).
    pub a_score: u64,
    pub b_score: u64,
    pub a_wins: usize,
    pub b_wins: usize,
    pub draws: usize,
    /// Replies that took longer than the play clock.
    pub late: usize,
    /// Turns where a searcher returned no move or an illegal one (the first legal was played).
    pub errors: usize,
    /// Mean MCTS/Monte Carlo iterations per searched move of A and of B.
    pub a_iterations_per_move: f64,
    pub b_iterations_per_move: f64,
}

/// Plays `matches` matches of `game`; in match `i` agent A plays role `i % roles`.
pub fn duel(
    game: &Game,
    a: &AgentConfig,
    b: &AgentConfig,
    matches: usize,
    play_clock: Duration,
    progress: &dyn Fn(usize, &[Option<u32>], usize),
) -> Result<DuelReport, String> {
    let mut rep = DuelReport { matches, ..DuelReport::default() };
    let (mut a_it, mut a_n, mut b_it, mut b_n) = (0u64, 0u64, 0u64, 0u64);
    for i in 0..matches {
        let far = Instant::now() + Duration::from_secs(60);
        let roles: Vec<String> = game.roles().iter().map(|&r| game.symbols.name(r).to_string()).collect();
        if roles.is_empty() {
            return Err("the game has no roles".into());
        }
        let a_role = i % roles.len();
        let mut players: Vec<Box<dyn Player>> = Vec::new();
        for (r, name) in roles.iter().enumerate() {
            let cfg = if r == a_role { a } else { b };
            let seed = cfg.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add((i * 16 + r) as u64);
            players.push(new_player(game, name, cfg, seed, far)?);
        }
        let mut steps = 0;
        while !players[0].is_terminal() && steps < 10_000 {
            let mut joint = Vec::with_capacity(roles.len());
            for (r, p) in players.iter_mut().enumerate() {
                let cfg = if r == a_role { a } else { b };
                let receipt = Instant::now();
                let (search, _) = deadlines(receipt, play_clock, cfg.margin());
                let text = match p.select(search) {
                    Ok(s) => {
                        if r == a_role {
                            a_it += s.iterations;
                            a_n += 1;
                        } else {
                            b_it += s.iterations;
                            b_n += 1;
                        }
                        s.text
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "no move chosen");
                        rep.errors += 1;
                        p.first_legal().ok_or("no legal move")?
                    }
                };
                if receipt.elapsed() > play_clock {
                    rep.late += 1;
                }
                joint.push(text);
            }
            for p in players.iter_mut() {
                p.advance(&joint)?;
            }
            steps += 1;
        }
        let goals = players[0].goals();
        let ga = goals[a_role].unwrap_or(0);
        let gb = (0..roles.len()).filter(|&r| r != a_role).map(|r| goals[r].unwrap_or(0)).max().unwrap_or(0);
        rep.a_score += ga as u64;
        rep.b_score +=
            goals.iter().enumerate().filter(|&(r, _)| r != a_role).map(|(_, g)| g.unwrap_or(0) as u64).sum::<u64>();
        match ga.cmp(&gb) {
            std::cmp::Ordering::Greater => rep.a_wins += 1,
            std::cmp::Ordering::Less => rep.b_wins += 1,
            std::cmp::Ordering::Equal => rep.draws += 1,
        }
        progress(i, &goals, a_role);
    }
    rep.a_iterations_per_move = a_it as f64 / a_n.max(1) as f64;
    rep.b_iterations_per_move = b_it as f64 / b_n.max(1) as f64;
    Ok(rep)
}
