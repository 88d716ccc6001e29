//! One match, run as ggp-base's `GameServer` runs it: START to every player (start clock),
//! then PLAY with the previous joint move (`NIL` first) until the game ends (play clock + 1 s
//! per request), then STOP. Before START, an INFO asks each player its name for the record
//! (as ggp-base's tools name players). The referee is our own engine (the propnet, else the
//! interpreter). A late, illegal or unparseable reply, or a connection error, is replaced by a
//! seeded random legal move and recorded (`TO`, `IL reply`, `CE`). The record is written
//! atomically after every step.

use super::client::{info_name, Failure, InProcess, PlayerClient, Request, Seat};
use super::record::{self, Extras, MatchRecord};
use super::remote::HttpPlayer;
use super::PlayerSpec;
use crate::agent::same_move;
use crate::gdl::Game;
use crate::interp::Interpreter;
use crate::machine::StateMachine;
use crate::message;
use crate::propnet::{self, Budget};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest match, in joint moves (a game that never ends is aborted).
pub const MAX_STEPS: usize = 10_000;
/// The referee's propnet must build within this; else the interpreter referees.
const REFEREE_BUILD: Duration = Duration::from_secs(60);
/// ggp-base gives PLAY (and here STOP) the play clock plus one second.
pub const PLAY_SLACK: Duration = Duration::from_secs(1);
/// How long the referee waits for the players' INFO replies before START.
const INFO_WAIT: Duration = Duration::from_secs(2);

/// Everything a match needs.
#[derive(Clone)]
pub struct MatchSpec {
    pub id: String,
    pub game_path: String,
    pub game: Arc<Game>,
    /// The rules as sent to players (see [`rules_text`]).
    pub rules: Arc<String>,
    /// One player per role, in role order.
    pub players: Vec<PlayerSpec>,
    pub start_clock: u32,
    pub play_clock: u32,
    pub seed: u64,
    pub tournament: Option<String>,
    /// The folder the record is written to (`<dir>/<id>.json`, and the in-process agents'
    /// trap log `<dir>/<id>.traps.jsonl`); `None`: not written.
    pub out: Option<PathBuf>,
}

/// The rules of `text` printed as ggp-base prints them, one expression after another, with
/// comments gone (players parse this, not our file).
pub fn rules_text(text: &str) -> Result<String, String> {
    let exprs = message::read(text)?;
    Ok(exprs.iter().map(message::Sx::printed).collect::<Vec<_>>().join(" "))
}

/// A seed for everything random in a match, from a base seed and the match id.
pub fn match_seed(seed: u64, id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for &b in id.as_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A client for `spec`; in-process agents log their traps to `traps`.
fn client(spec: &PlayerSpec, seed: u64, traps: Option<PathBuf>, game: &str) -> Result<Box<dyn PlayerClient>, String> {
    Ok(match spec {
        PlayerSpec::Agent { cfg, label, .. } => {
            let mut c = InProcess::new(cfg.clone(), seed);
            if let Some(path) = traps {
                c.log_traps(path, game, label);
            }
            Box::new(c)
        }
        PlayerSpec::Remote { url, .. } => Box::new(HttpPlayer::new(url)?),
        PlayerSpec::Human { label } => return Err(format!("{label}: a person's seat needs its client")),
    })
}

/// Plays a match to the end and returns its record (also written to `spec.out` after every
/// step). `Err` only when the match cannot be set up (wrong number of players, rules the
/// referee cannot build); a game that breaks down midway gives an aborted record.
pub fn run_match(spec: &MatchSpec) -> Result<MatchRecord, String> {
    run_match_with(spec, Vec::new())
}

/// [`run_match`], with the clients of some seats given: `given[r]`, when there and `Some`,
/// plays role `r` (a person's seat, [`PlayerSpec::Human`], needs one).
pub fn run_match_with(spec: &MatchSpec, given: Vec<Option<Box<dyn PlayerClient>>>) -> Result<MatchRecord, String> {
    let budget = Budget { deadline: Some(Instant::now() + REFEREE_BUILD), ..Budget::default() };
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| propnet::build(&spec.game, &budget)));
    match built {
        Ok(Ok((m, _))) => run_on(m, "propnet", spec, given),
        other => {
            if let Ok(Err(e)) = other {
                tracing::warn!(error = %e, "referee: propnet not built; using the interpreter");
            }
            let m = Interpreter::new(&spec.game).map_err(|e| format!("referee: {e}"))?;
            run_on(m, "interp", spec, given)
        }
    }
}

fn save(rec: &MatchRecord, out: Option<&Path>) {
    if let Some(dir) = out {
        if let Err(e) = rec.save(dir) {
            tracing::error!(error = %e, dir = %dir.display(), "cannot write the match record");
        }
    }
}

fn error_code(f: &Failure) -> String {
    match f {
        Failure::Timeout => record::TIMEOUT.into(),
        Failure::Connection(_) => record::CONNECTION.into(),
    }
}

/// The legal move a reply names, if any: the reply must be exactly one S-expression.
fn parse_reply<M: StateMachine>(m: &M, legal: &[M::Move], reply: &str) -> Option<M::Move> {
    let exprs = message::read(reply).ok()?;
    let [one] = exprs.as_slice() else { return None };
    let printed = one.printed();
    legal
        .iter()
        .copied()
        .find(|&mv| m.move_text(mv) == printed)
        .or_else(|| legal.iter().copied().find(|&mv| same_move(&printed, &m.move_text(mv))))
}

fn run_on<M: StateMachine>(
    mut m: M,
    engine: &str,
    spec: &MatchSpec,
    mut given: Vec<Option<Box<dyn PlayerClient>>>,
) -> Result<MatchRecord, String> {
    let roles = m.roles().to_vec();
    if spec.players.len() != roles.len() {
        return Err(format!("{} player(s) for {} role(s) ({})", spec.players.len(), roles.len(), roles.join(" ")));
    }
    let span = tracing::info_span!("match", id = %spec.id);
    let _e = span.enter();
    let mut rng = Pcg64::seed_from_u64(spec.seed);
    let token: String = (0..32)
        .map(|_| {
            let v = rng.gen_range(0..62u8);
            (match v {
                0..=25 => b'a' + v,
                26..=51 => b'A' + v - 26,
                _ => b'0' + v - 52,
            }) as char
        })
        .collect();
    let mut rec = MatchRecord {
        match_id: spec.id.clone(),
        random_token: token,
        start_time: record::now_ms(),
        game_meta_url: spec.game_path.clone(),
        is_completed: false,
        is_aborted: false,
        states: Vec::new(),
        moves: Vec::new(),
        state_times: Vec::new(),
        errors: Vec::new(),
        goal_values: Vec::new(),
        preview_clock: -1,
        start_clock: spec.start_clock,
        play_clock: spec.play_clock,
        player_names_from_host: spec.players.iter().map(|p| p.label().to_string()).collect(),
        is_player_human: spec.players.iter().map(|p| matches!(p, PlayerSpec::Human { .. })).collect(),
        tournament_name_from_host: spec.tournament.clone(),
        scrambled: false,
        factotum: Extras {
            game_path: spec.game_path.clone(),
            rules_hash: record::fnv1a(spec.rules.as_bytes()),
            roles: roles.clone(),
            players: spec.players.iter().map(|p| p.source().to_string()).collect(),
            engine: engine.into(),
            seed: spec.seed,
            abort_reason: None,
            interrupted: false,
            traps: 0,
            playouts: Vec::new(),
            iterations: Vec::new(),
        },
    };
    let out = spec.out.as_deref();
    let mut state = m.initial_state();
    rec.states.push(record::state_string(&m.state_facts(&state)));
    rec.state_times.push(record::now_ms());

    // A match played again under its id (a resumed tournament) starts a fresh trap log.
    if let Some(dir) = out {
        let _ = std::fs::remove_file(record::traps_path(dir, &spec.id));
    }
    let mut seats = Vec::with_capacity(roles.len());
    for (r, p) in spec.players.iter().enumerate() {
        let traps = out.map(|dir| record::traps_path(dir, &spec.id));
        let c = match given.get_mut(r).and_then(Option::take) {
            Some(c) => c,
            None => client(p, spec.seed ^ (r as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d), traps, &spec.game_path)?,
        };
        seats.push(Seat::new(c, tracing::info_span!("player", role = %roles[r], name = %p.label())));
    }

    // INFO first, as ggp-base's tools learn a player's name: the record names each player
    // as it names itself (our own section keeps the URL or agent file). Not on the start
    // clock; a player that does not say its name keeps its label.
    let deadline = Instant::now() + INFO_WAIT;
    for seat in seats.iter_mut() {
        seat.send(Request::Info, deadline);
    }
    for (r, seat) in seats.iter_mut().enumerate() {
        match seat.wait(deadline) {
            Ok(reply) => match info_name(&reply) {
                Some(name) => rec.player_names_from_host[r] = name,
                None => {
                    tracing::debug!(role = %roles[r], reply = %reply.chars().take(200).collect::<String>(), "info: no name")
                }
            },
            Err(f) => tracing::debug!(role = %roles[r], failure = %f, "info"),
        }
    }
    if super::interrupted() {
        return Ok(interrupted(rec, &mut seats, out));
    }

    // START: the start clock, as ggp-base (no slack).
    let deadline = Instant::now() + Duration::from_secs(spec.start_clock as u64);
    for (r, seat) in seats.iter_mut().enumerate() {
        seat.send(
            Request::Start {
                id: spec.id.clone(),
                role: roles[r].clone(),
                rules: spec.rules.clone(),
                game: spec.game.clone(),
                start_clock: spec.start_clock,
                play_clock: spec.play_clock,
            },
            deadline,
        );
    }
    let mut errs = Vec::with_capacity(roles.len());
    for (r, seat) in seats.iter_mut().enumerate() {
        match seat.wait(deadline) {
            Ok(reply) if reply.trim().eq_ignore_ascii_case("ready") => errs.push(String::new()),
            // A reply that is not `ready` (`busy`, an error page's text): the player is not
            // playing this match, though it answered.
            Ok(reply) => {
                let shown: String = reply.chars().take(200).collect();
                tracing::warn!(role = %roles[r], reply = %shown, "start: the reply is not `ready`");
                errs.push(format!("{} {shown}", record::ILLEGAL));
            }
            Err(f) => {
                tracing::warn!(role = %roles[r], failure = %f, "start");
                errs.push(error_code(&f));
            }
        }
    }
    if super::interrupted() {
        return Ok(interrupted(rec, &mut seats, out));
    }
    rec.errors.push(errs);
    let playouts: Vec<String> = seats.iter().map(|s| s.notes.playout.clone().unwrap_or_default()).collect();
    let in_process = playouts.iter().any(|p| !p.is_empty());
    if in_process {
        rec.factotum.playouts = playouts;
    }
    save(&rec, out);

    let play_time = Duration::from_secs(spec.play_clock as u64) + PLAY_SLACK;
    let mut legal: Vec<Vec<M::Move>> = vec![Vec::new(); roles.len()];
    let mut joint: Vec<M::Move> = Vec::with_capacity(roles.len());
    let mut next = state.clone();
    let mut previous: Option<Vec<String>> = None;
    while !m.is_terminal(&state) {
        if rec.moves.len() >= MAX_STEPS {
            return Ok(abort(rec, &mut seats, out, format!("no end after {MAX_STEPS} joint moves")));
        }
        for (r, l) in legal.iter_mut().enumerate() {
            m.legal_moves(&state, r, l);
            if l.is_empty() {
                let why = format!("role {} has no legal move in a non-terminal state", roles[r]);
                return Ok(abort(rec, &mut seats, out, why));
            }
        }
        let deadline = Instant::now() + play_time;
        for seat in seats.iter_mut() {
            seat.send(Request::Play { id: spec.id.clone(), moves: previous.clone() }, deadline);
        }
        joint.clear();
        let mut errs = Vec::with_capacity(roles.len());
        let mut iterations = Vec::with_capacity(roles.len());
        for (r, seat) in seats.iter_mut().enumerate() {
            let (mv, err) = match seat.wait(deadline) {
                Ok(reply) => match parse_reply(&m, &legal[r], &reply) {
                    Some(mv) => (mv, String::new()),
                    None => {
                        let shown: String = reply.chars().take(200).collect();
                        tracing::warn!(role = %roles[r], reply = %shown, "illegal or unparseable move");
                        (legal[r][rng.gen_range(0..legal[r].len())], format!("{} {shown}", record::ILLEGAL))
                    }
                },
                Err(f) => {
                    tracing::warn!(role = %roles[r], failure = %f, "no move");
                    (legal[r][rng.gen_range(0..legal[r].len())], error_code(&f))
                }
            };
            iterations.push(if err.is_empty() { seat.notes.iterations.unwrap_or(0) } else { 0 });
            joint.push(mv);
            errs.push(err);
        }
        if super::interrupted() {
            return Ok(interrupted(rec, &mut seats, out));
        }
        m.next_state(&state, &joint, &mut next);
        std::mem::swap(&mut state, &mut next);
        let texts: Vec<String> = joint.iter().map(|&mv| m.move_text(mv)).collect();
        tracing::debug!(step = rec.moves.len(), moves = ?texts, "joint move");
        rec.moves.push(texts.clone());
        rec.states.push(record::state_string(&m.state_facts(&state)));
        rec.state_times.push(record::now_ms());
        rec.errors.push(errs);
        if in_process {
            rec.factotum.iterations.push(iterations);
        }
        previous = Some(texts);
        save(&rec, out);
    }
    rec.goal_values = (0..roles.len()).map(|r| m.goal(&state, r).unwrap_or(0)).collect();
    rec.is_completed = true;
    count_traps(&mut rec, out);
    save(&rec, out);
    tracing::info!(goals = ?rec.goal_values, "match over");
    // STOP: replies are not needed; wait at most the play clock + 1 s for courtesy.
    let deadline = Instant::now() + play_time;
    for seat in seats.iter_mut() {
        seat.send(Request::Stop { id: spec.id.clone(), moves: previous.clone() }, deadline);
    }
    for seat in seats.iter_mut() {
        let _ = seat.wait(deadline);
    }
    Ok(rec)
}

/// Counts the in-process agents' trap log into the record.
fn count_traps(rec: &mut MatchRecord, out: Option<&Path>) {
    if let Some(out) = out {
        rec.factotum.traps = crate::agent::trap_log::count(&record::traps_path(out, &rec.match_id));
    }
}

/// The manager was interrupted: the step under way is not recorded; the match is aborted.
fn interrupted(mut rec: MatchRecord, seats: &mut [Seat], out: Option<&Path>) -> MatchRecord {
    rec.factotum.interrupted = true;
    abort(rec, seats, out, "the game manager was interrupted".into())
}

fn abort(mut rec: MatchRecord, seats: &mut [Seat], out: Option<&Path>, why: String) -> MatchRecord {
    tracing::error!(reason = %why, "match aborted");
    rec.is_aborted = true;
    rec.factotum.abort_reason = Some(why);
    count_traps(&mut rec, out);
    save(&rec, out);
    // A player still busy with its last request gets the ABORT once that one is over.
    let busy = seats.iter().map(|s| s.due).max().unwrap_or_else(Instant::now).max(Instant::now());
    let deadline = busy + Duration::from_secs(2);
    for seat in seats.iter_mut() {
        seat.send(Request::Abort { id: rec.match_id.clone() }, deadline);
    }
    for seat in seats.iter_mut() {
        let _ = seat.wait_out(deadline);
    }
    rec
}
