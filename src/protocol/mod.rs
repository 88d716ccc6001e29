//! The GGP protocol over HTTP: the only HTTP code. A hyper 1 server on tokio answers a game
//! manager's `info`, `ping`, `preview`, `start`, `play`, `stop` and `abort` as ggp-base's
//! player does (POST bodies, or `GET /<url-encoded message>`; empty replies to OPTIONS;
//! `Content-type: text/acl` and ggp-base's CORS headers).
//!
//! Each match is an [`crate::agent::Player`] behind an async mutex; engine construction and
//! search run on blocking threads (`spawn_blocking`), so `info` answers while matches think.
//! A play reply is due within `playclock - margin` of receipt: the search gets that long,
//! and if the blocking work has not answered by the reply deadline the first legal move of
//! the state is sent instead (tagged with its step, so a move of an earlier state is only
//! sent, with an error logged, when the engine has not even applied the moves in time).
//! A new `play`, a `stop` or an `abort` raises the match's cancel flag, so a search still
//! running stops at once. Errors are logged; the reply is always a legal move when one is
//! known.
//!
//! **Pondering** (agent key `ponder`, MCTS kinds): the blocking task hands its reply to the
//! request through a oneshot channel and then goes on searching the same root, holding the
//! match's slot, until the next message raises the cancel flag (or [`PONDER_SLACK`] past
//! the latest time that message could come). The next turn's search reuses that tree. A
//! turn with one legal move is answered at once, and its time goes to pondering.

use crate::agent::trap_log::{self, TrapLog};
use crate::agent::{deadlines, new_player, AgentConfig, Player, Selected};
use crate::gdl::Game;
use crate::message::{self, Message};
use crate::search::Limit;
use crate::web::live::{Live, LiveMatch};
use crate::web::{Web, WebConfig};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tracing::Instrument;

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub agent: AgentConfig,
    /// Matches played at once; `start` beyond this is answered `busy`.
    pub max_matches: usize,
    /// Largest request body accepted, in bytes.
    pub max_body: usize,
    /// Longest wait for a request's headers, from the connection's opening: a silent or
    /// slow client (half-sent headers, a byte a second) is disconnected.
    pub header_timeout: Duration,
    /// Longest wait for a request's body once its headers are in (408 after it).
    pub body_timeout: Duration,
    /// Connections open at once; one more is closed as soon as it is accepted, so held
    /// connections cannot use up the process's file descriptors.
    pub max_connections: usize,
    /// A match that gets no message for its start clock + play clock + this is dropped
    /// (its game manager is gone without STOP or ABORT), freeing its slot.
    pub match_expiry: Duration,
    /// Where the traps the searches detect are logged (JSON Lines), if anywhere.
    pub trap_log: Option<TrapLog>,
    /// Answers the GGP protocol (`factotum view` serves only the web view).
    pub plays: bool,
    /// The web view served on the same port (its agent is this server's when it plays).
    pub web: WebConfig,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            agent: AgentConfig::default(),
            max_matches: 4,
            max_body: 16 << 20,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 256,
            match_expiry: Duration::from_secs(60),
            trap_log: None,
            plays: true,
            web: WebConfig::default(),
        }
    }
}

/// What a play needs of its match's [`Entry`].
struct PlayCtx {
    slot: Arc<tokio::sync::Mutex<Slot>>,
    fallback: Fallback,
    play_clock: Duration,
    cancel: Arc<AtomicBool>,
    pending: Pending,
    /// The step the reply is for.
    want: usize,
}

struct Slot {
    player: Option<Box<dyn Player>>,
    span: tracing::Span,
    /// The game as the trap log names it: `rules:` and a hash of the rules as received.
    game: String,
}

/// Who hears of a match's progress: the trap log and the web view's live matches.
#[derive(Clone)]
struct Watchers {
    log: Option<TrapLog>,
    live: Option<Arc<Live>>,
    /// The serving agent's name (its INFO reply), the finder named in each trap event.
    player: String,
}

impl Watchers {
    /// Writes the traps `p`'s searches detected to the trap log, or only their one-line
    /// summaries to the `info` log when there is none, and lists them on the match's page.
    fn traps(&self, p: &mut dyn Player, id: &str, game: &str) {
        let mut events = p.take_traps(id, game);
        for e in &mut events {
            e.player.clone_from(&self.player);
        }
        for e in &events {
            match &self.log {
                Some(log) => log.write(e),
                None => trap_log::info_line(e),
            }
        }
        if let Some(live) = &self.live {
            live.traps(id, &events);
        }
    }

    /// Shows the match on the web view.
    fn show(&self, id: &str, f: impl FnOnce(&mut LiveMatch)) {
        if let Some(live) = &self.live {
            live.update(id, f);
        }
    }

    fn watched(&self, id: &str) -> bool {
        self.live.as_ref().is_some_and(|l| l.watched(id))
    }

    /// Searches until `limit` is over; while a page watches the match, in slices of
    /// [`WATCH_SLICE`] with the root's statistics shown after each (the searcher keeps its
    /// tree across the slices, so the search is the same one). Unwatched, one search.
    fn search(&self, p: &mut dyn Player, limit: Limit<'_>, id: &str) -> Result<Selected, String> {
        let mut iterations = 0;
        while self.watched(id) {
            let end = (Instant::now() + WATCH_SLICE).min(limit.deadline);
            let mut s = p.search(Limit { deadline: end, ..limit })?;
            iterations += s.iterations;
            // Over: the deadline, the cancel flag, or a search that stopped early (proved).
            let early = Instant::now() + Duration::from_millis(5) < end;
            if end >= limit.deadline || early || limit.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                s.iterations = iterations;
                return Ok(s);
            }
            let v = p.view();
            self.show(id, |m| m.see(v));
        }
        let mut s = p.search(limit)?;
        s.iterations += iterations;
        Ok(s)
    }
}

/// How often a watched match's page sees its search's root statistics.
pub const WATCH_SLICE: Duration = Duration::from_millis(500);

struct Entry {
    slot: Arc<tokio::sync::Mutex<Slot>>,
    /// A legal move and the step it belongs to (kept up to date by the blocking work), sent
    /// when the reply deadline comes before the search's answer.
    fallback: Fallback,
    play_clock: Duration,
    /// Raised to stop the running search: on `stop`, `abort`, and when the next `play`
    /// arrives (each play gets a fresh flag).
    cancel: Arc<AtomicBool>,
    /// The step the next reply is for: plays received with moves so far.
    step: usize,
    /// Joint moves received and not yet applied to the player, oldest first. A play puts
    /// its moves here as it arrives, and whichever play gets the player next applies them
    /// all: a play that gave up waiting for the player (its reply deadline came while the
    /// engine was still building, or a search overran) loses no moves, so the player's
    /// state never falls behind the manager's for good.
    pending: Pending,
    /// When the match's last message came, and how long it may wait for the next one.
    last: Instant,
    expiry: Duration,
}

type Fallback = Arc<Mutex<Option<(usize, String)>>>;

type Pending = Arc<Mutex<Vec<Vec<String>>>>;

/// How long pondering may go on past the latest time the next message of a match is due
/// (the clock of the reply just sent, then the next play clock): a manager that vanished
/// without STOP or ABORT does not keep a core busy for good.
pub const PONDER_SLACK: Duration = Duration::from_secs(5);

/// Searches on from the current state until `cancel` is raised or `until` passes, after a
/// reply was sent; logs what it did.
fn ponder(p: &mut dyn Player, until: Instant, cancel: &Arc<AtomicBool>, stats: &PonderStats) {
    if p.is_terminal() || Instant::now() >= until {
        return;
    }
    let t0 = Instant::now();
    match p.search(Limit::cancellable_shared(until, cancel)) {
        Ok(s) => {
            let interrupted = cancel.load(Ordering::Relaxed);
            stats.runs.fetch_add(1, Ordering::Relaxed);
            stats.iterations.fetch_add(s.iterations, Ordering::Relaxed);
            stats.interrupted.fetch_add(interrupted as u64, Ordering::Relaxed);
            tracing::info!(iterations = s.iterations, seconds = t0.elapsed().as_secs_f64(), interrupted, "pondered")
        }
        Err(e) => tracing::warn!(error = %e, "ponder"),
    }
}

/// What pondering did, summed over the server's matches.
#[derive(Debug, Default)]
pub struct PonderStats {
    /// Searches run between messages.
    pub runs: AtomicU64,
    /// Their iterations.
    pub iterations: AtomicU64,
    /// Those ended by the next message (not by their time bound).
    pub interrupted: AtomicU64,
}

/// The player's shared state.
pub struct Server {
    cfg: ServerConfig,
    web: Arc<Web>,
    matches: Mutex<HashMap<String, Entry>>,
    seq: AtomicU64,
    ponder: Arc<PonderStats>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Server {
    pub fn new(cfg: ServerConfig) -> Arc<Server> {
        let mut web = cfg.web.clone();
        if cfg.plays {
            web.agent = Some(cfg.agent.clone());
        }
        Arc::new(Server {
            web: Arc::new(Web::new(web)),
            cfg,
            matches: Mutex::new(HashMap::new()),
            seq: AtomicU64::new(0),
            ponder: Arc::new(PonderStats::default()),
        })
    }

    /// What pondering did so far (runs, iterations, interrupted by a message).
    pub fn ponder_stats(&self) -> (u64, u64, u64) {
        let p = &self.ponder;
        (p.runs.load(Ordering::Relaxed), p.iterations.load(Ordering::Relaxed), p.interrupted.load(Ordering::Relaxed))
    }

    /// The web view's state (its live matches).
    pub fn web(&self) -> &Arc<Web> {
        &self.web
    }

    fn watchers(&self) -> Watchers {
        Watchers {
            log: self.cfg.trap_log.clone(),
            live: self.cfg.plays.then(|| self.web.live.clone()),
            player: self.cfg.agent.name.clone(),
        }
    }

    fn full(&self) -> bool {
        lock(&self.matches).len() >= self.cfg.max_matches
    }

    /// A play for match `id` arrived: cancels the search still running for it (if any),
    /// queues its moves (see [`Entry::pending`]) and returns the slot, the fallback, the
    /// clock, a fresh cancel flag, the queue and the step to answer.
    fn begin_play(&self, id: &str, moves: Option<Vec<String>>) -> Option<PlayCtx> {
        let mut matches = lock(&self.matches);
        let e = matches.get_mut(id)?;
        e.last = Instant::now();
        e.cancel.store(true, Ordering::Relaxed);
        e.cancel = Arc::new(AtomicBool::new(false));
        if let Some(m) = moves {
            e.step += 1;
            lock(&e.pending).push(m);
        }
        Some(PlayCtx {
            slot: e.slot.clone(),
            fallback: e.fallback.clone(),
            play_clock: e.play_clock,
            cancel: e.cancel.clone(),
            pending: e.pending.clone(),
            want: e.step,
        })
    }

    /// Answers one message (its text), received at `receipt`.
    pub async fn respond(self: &Arc<Self>, text: &str, receipt: Instant) -> Result<String, String> {
        let msg = message::parse(text)?;
        Ok(match msg {
            Message::Info => message::info_reply(&self.cfg.agent.name, !self.full()),
            Message::Ping => if self.full() { "busy" } else { "available" }.to_string(),
            Message::Preview { rules, .. } => {
                if self.full() {
                    "busy".into()
                } else {
                    // Parsed on a blocking thread: long rules must not hold an async worker.
                    let parsed = tokio::task::spawn_blocking(move || Game::parse("<preview>", &rules).map(|_| ()));
                    match parsed.await {
                        Ok(Ok(())) => "ready".into(),
                        Ok(Err(e)) => {
                            tracing::warn!(error = %e, "preview: rules do not parse");
                            "busy".into()
                        }
                        Err(e) => {
                            tracing::error!(error = %e, "preview: the parse task failed");
                            "busy".into()
                        }
                    }
                }
            }
            Message::Start { id, role, rules, start_clock, play_clock } => {
                self.start(id, role, rules, start_clock, play_clock, receipt).await
            }
            Message::Play { id, moves } => self.play(id, moves, receipt).await,
            Message::Stop { id, moves } => self.finish(&id, moves, "done"),
            Message::Abort { id } => self.finish(&id, None, "aborted"),
        })
    }

    async fn start(
        self: &Arc<Self>,
        id: String,
        role: String,
        rules: String,
        start_clock: f64,
        play_clock: f64,
        receipt: Instant,
    ) -> String {
        let span = tracing::info_span!("match", id = %id, role = %role);
        let game_label = format!("rules:{}", &trap_log::fnv1a(rules.as_bytes())[..8]);
        let slot =
            Arc::new(tokio::sync::Mutex::new(Slot { player: None, span: span.clone(), game: game_label.clone() }));
        let fallback = Arc::new(Mutex::new(None));
        let cancel = Arc::new(AtomicBool::new(false));
        // Hold the slot until the engine is built, so plays wait for it.
        let guard = match slot.clone().try_lock_owned() {
            Ok(g) => g,
            Err(_) => return "busy".into(),
        };
        {
            let mut matches = lock(&self.matches);
            if matches.len() >= self.cfg.max_matches || matches.contains_key(&id) {
                tracing::warn!(parent: &span, "start: busy (match limit reached or id in use)");
                return "busy".into();
            }
            let expiry = Duration::from_secs_f64(start_clock + play_clock) + self.cfg.match_expiry;
            let play_clock = Duration::from_secs_f64(play_clock);
            matches.insert(
                id.clone(),
                Entry {
                    slot: slot.clone(),
                    fallback: fallback.clone(),
                    play_clock,
                    cancel: cancel.clone(),
                    step: 0,
                    pending: Arc::new(Mutex::new(Vec::new())),
                    last: receipt,
                    expiry,
                },
            );
        }
        let (build_deadline, reply_at) =
            deadlines(receipt, Duration::from_secs_f64(start_clock), self.cfg.agent.margin());
        let cfg = self.cfg.agent.clone();
        let seed = cfg.seed ^ self.seq.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let fb = fallback.clone();
        let sp = span.clone();
        // The first play is due by the end of the start clock (once every player is ready),
        // and comes with its play clock.
        let ponder_until =
            receipt + Duration::from_secs_f64(start_clock) + Duration::from_secs_f64(play_clock) + PONDER_SLACK;
        let (tx, rx) = tokio::sync::oneshot::channel::<Result<(), String>>();
        let stats = self.ponder.clone();
        let sp_id = id.clone();
        let watch = self.watchers();
        tokio::task::spawn_blocking(move || {
            let _e = sp.enter();
            let mut guard = guard;
            let t0 = Instant::now();
            // Parsed here, off the async workers and under the start clock's reply timer.
            let game = match Game::parse(&format!("<match {}>", sp_id), &rules) {
                Ok(g) => g,
                Err(e) => {
                    tracing::error!(error = %e, "start: rules do not parse");
                    let _ = tx.send(Err(e.to_string()));
                    return;
                }
            };
            match new_player(&game, &role, &cfg, seed, build_deadline) {
                Ok(mut p) => {
                    *lock(&fb) = p.first_legal().map(|m| (0, m));
                    if let Some(live) = &watch.live {
                        live.begin(&sp_id, &game_label, &role, p.roles(), false);
                        let v = p.view();
                        live.update(&sp_id, |m| m.see(v));
                    }
                    tracing::info!(engine = p.engine(), build_s = t0.elapsed().as_secs_f64(), "engine built");
                    // Early search: the rest of the start clock grows the tree that the
                    // first play reuses.
                    if Instant::now() < build_deadline && !p.is_terminal() {
                        match p.search(Limit::cancellable_shared(build_deadline, &cancel)) {
                            Ok(s) => tracing::info!(iterations = s.iterations, value = s.value, "early search"),
                            Err(e) => tracing::warn!(error = %e, "early search"),
                        }
                    }
                    let _ = tx.send(Ok(()));
                    watch.traps(p.as_mut(), &sp_id, &game_label);
                    if cfg.pondering() {
                        ponder(p.as_mut(), ponder_until, &cancel, &stats);
                        watch.traps(p.as_mut(), &sp_id, &game_label);
                    }
                    guard.player = Some(p);
                }
                Err(e) => {
                    tracing::error!(error = %e, "start: cannot build the game");
                    let _ = tx.send(Err(e));
                }
            }
        });
        match tokio::time::timeout_at(reply_at.into(), rx).await {
            Ok(Ok(Ok(()))) => "ready".into(),
            Ok(Ok(Err(_))) | Ok(Err(_)) => {
                lock(&self.matches).remove(&id);
                "busy".into()
            }
            Err(_) => {
                tracing::warn!(parent: &span, "start: still building at the reply deadline; replying ready");
                "ready".into()
            }
        }
    }

    async fn play(self: &Arc<Self>, id: String, moves: Option<Vec<String>>, receipt: Instant) -> String {
        let Some(PlayCtx { slot, fallback, play_clock, cancel, pending, want }) = self.begin_play(&id, moves) else {
            tracing::warn!(id = %id, "play: unknown match");
            return "busy".into();
        };
        let (search_at, reply_at) = deadlines(receipt, play_clock, self.cfg.agent.margin());
        // The next message is due within this play clock (plus the manager's slack) and
        // brings the next one.
        let ponder_until = receipt + 2 * play_clock + PONDER_SLACK;
        let pondering = self.cfg.agent.pondering();
        let stats = self.ponder.clone();
        let fb = fallback.clone();
        let watch = self.watchers();
        let match_id = id.clone();
        let work = async move {
            let mut guard = slot.lock_owned().await;
            let span = guard.span.clone();
            let game = guard.game.clone();
            let (tx, rx) = tokio::sync::oneshot::channel::<Result<String, String>>();
            tokio::task::spawn_blocking(move || {
                let _e = span.enter();
                let Some(p) = guard.player.as_mut() else {
                    let _ = tx.send(Err("no engine for this match (start failed or still building)".to_string()));
                    return;
                };
                // Every joint move received so far, this play's last (see `Entry::pending`).
                let todo = std::mem::take(&mut *lock(&pending));
                if todo.len() > 1 {
                    tracing::warn!(joint_moves = todo.len(), "play: applying the moves of plays that gave up waiting");
                }
                for m in &todo {
                    if let Err(e) = p.advance(m) {
                        // Clipped: a manager's garbage is not copied whole into the log.
                        let shown: Vec<String> = m.iter().map(|x| clip(x)).collect();
                        tracing::error!(error = %clip(&e), moves = ?shown, "play: cannot apply the moves");
                    }
                }
                let moves = todo.last().cloned();
                let step = p.step();
                *lock(&fb) = p.first_legal().map(|m| (step, m));
                if watch.live.is_some() {
                    let v = p.view();
                    watch.show(&match_id, |m| {
                        m.last_moves = moves.clone();
                        m.step = v.step;
                        m.state = v.state;
                        m.best.clear();
                    });
                }
                let turn = tracing::info_span!("turn", step);
                let _t = turn.enter();
                // A forced move is answered at once; the time goes to pondering instead.
                if pondering {
                    if let Some(only) = p.forced_move() {
                        tracing::info!(chosen = %only, "move (forced: answered at once)");
                        watch.show(&match_id, |m| m.chosen = Some(only.clone()));
                        let _ = tx.send(Ok(only));
                        ponder(p.as_mut(), ponder_until, &cancel, &stats);
                        watch.traps(p.as_mut(), &match_id, &game);
                        return;
                    }
                }
                let chosen = watch.search(p.as_mut(), Limit::cancellable_shared(search_at, &cancel), &match_id);
                if let Ok(s) = &chosen {
                    tracing::info!(iterations = s.iterations, chosen = %s.text, value = s.value, proven = s.proven, "move");
                }
                let shown = chosen.as_ref().ok().map(|s| s.text.clone());
                let ok = chosen.is_ok();
                let _ = tx.send(chosen.map(|s| s.text));
                // The web view hears of the move once it is on its way.
                if let (Some(text), true) = (shown, watch.live.is_some()) {
                    let v = p.view();
                    watch.show(&match_id, |m| {
                        m.chosen = Some(text);
                        m.see(v);
                    });
                }
                watch.traps(p.as_mut(), &match_id, &game);
                if ok && pondering {
                    ponder(p.as_mut(), ponder_until, &cancel, &stats);
                    watch.traps(p.as_mut(), &match_id, &game);
                }
            });
            rx.await.map_err(|_| "search task failed (no reply)".to_string())?
        };
        let why = match tokio::time::timeout_at(reply_at.into(), work).await {
            Ok(Ok(text)) => return text,
            Ok(Err(e)) => e,
            Err(_) => "no answer by the reply deadline".to_string(),
        };
        let known = lock(&fallback).clone();
        match known {
            Some((step, text)) if step == want => {
                tracing::error!(id = %id, error = %why, "play: replying the first legal move");
                text
            }
            Some((step, text)) => {
                // The engine has not even applied the moves yet: no move of this state is
                // known. The last state's first legal move is the best guess left.
                tracing::error!(id = %id, error = %why, step, want, "play: no legal move known for this step; replying the last one known");
                text
            }
            None => {
                tracing::error!(id = %id, error = %why, "play: no legal move known; replying nil");
                "nil".into()
            }
        }
    }

    /// Drops the matches that got no message for longer than their expiry (start clock +
    /// play clock + [`ServerConfig::match_expiry`]) as of `now`: their manager is gone. Their
    /// searches are stopped and their slots freed. Returns their ids.
    pub fn expire(&self, now: Instant) -> Vec<String> {
        let mut matches = lock(&self.matches);
        let old: Vec<String> = matches
            .iter()
            .filter(|(_, e)| now.saturating_duration_since(e.last) > e.expiry)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &old {
            if let Some(e) = matches.remove(id) {
                e.cancel.store(true, Ordering::Relaxed);
                if let Some(live) = self.watchers().live {
                    live.finish(id, Some("expired: no message from its game manager".into()));
                }
                tracing::warn!(
                    id = %id,
                    idle_s = now.saturating_duration_since(e.last).as_secs_f64(),
                    "match expired: no message from its manager; slot freed"
                );
            }
        }
        old
    }

    fn finish(&self, id: &str, moves: Option<Vec<String>>, reply: &str) -> String {
        match lock(&self.matches).remove(id) {
            Some(e) => {
                // Stop the search if one is running; the engine is dropped when it ends.
                e.cancel.store(true, Ordering::Relaxed);
                tracing::info!(id = %id, moves = ?moves, reply, "match over");
                if let Some(live) = self.watchers().live {
                    // The page shows the final state once the engine is free to apply the
                    // last moves.
                    let (slot, id, pending) = (e.slot.clone(), id.to_string(), e.pending.clone());
                    let note = (reply == "aborted").then(|| "aborted by the game manager".to_string());
                    tokio::spawn(async move {
                        let mut guard = slot.lock_owned().await;
                        let _ = tokio::task::spawn_blocking(move || {
                            if let (Some(p), Some(m)) = (guard.player.as_mut(), &moves) {
                                // Moves of plays that gave up waiting first (`Entry::pending`).
                                let todo = std::mem::take(&mut *lock(&pending));
                                if todo.iter().all(|j| p.advance(j).is_ok()) && p.advance(m).is_ok() {
                                    let (v, goals) = (p.view(), p.goals());
                                    live.update(&id, |lm| {
                                        lm.last_moves = Some(m.clone());
                                        lm.see(v);
                                        lm.goals = goals;
                                    });
                                }
                            }
                            live.finish(&id, note);
                        })
                        .await;
                    });
                }
                reply.into()
            }
            None => {
                tracing::warn!(id = %id, "{reply}: unknown match");
                "busy".into()
            }
        }
    }
}

/// At most [`CLIP`] bytes of `s` for a log line, with the length left out said.
fn clip(s: &str) -> String {
    if s.len() <= CLIP {
        return s.to_string();
    }
    let mut end = CLIP;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

const CLIP: usize = 200;

fn reply(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert("Content-type", hyper::header::HeaderValue::from_static("text/acl"));
    h.insert("Access-Control-Allow-Origin", hyper::header::HeaderValue::from_static("*"));
    h.insert("Access-Control-Allow-Methods", hyper::header::HeaderValue::from_static("POST, GET, OPTIONS"));
    h.insert("Access-Control-Allow-Headers", hyper::header::HeaderValue::from_static("Content-Type"));
    h.insert("Access-Control-Allow-Age", hyper::header::HeaderValue::from_static("86400"));
    r
}

/// A POST's body, within the size and time limits (else the error reply).
async fn read_body(server: &Server, req: Request<Incoming>) -> Result<String, Response<Full<Bytes>>> {
    use hyper::body::Body as _;
    if req.body().size_hint().lower() > server.cfg.max_body as u64 {
        tracing::warn!(length = req.body().size_hint().lower(), "request body refused: too large");
        return Err(reply(StatusCode::PAYLOAD_TOO_LARGE, "error: body too large".into()));
    }
    let body = Limited::new(req.into_body(), server.cfg.max_body).collect();
    match tokio::time::timeout(server.cfg.body_timeout, body).await {
        Ok(Ok(b)) => Ok(String::from_utf8_lossy(&b.to_bytes()).trim().to_string()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            tracing::warn!(error = %e, "request body refused: too large");
            Err(reply(StatusCode::PAYLOAD_TOO_LARGE, "error: body too large".into()))
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "request body unreadable");
            Err(reply(StatusCode::BAD_REQUEST, format!("error: body unreadable: {e}")))
        }
        Err(_) => {
            tracing::warn!(timeout_s = server.cfg.body_timeout.as_secs_f64(), "request body not received in time");
            Err(reply(StatusCode::REQUEST_TIMEOUT, "error: body not received in time".into()))
        }
    }
}

/// A request of the web view: GET a page, or POST to its API.
async fn handle_web(server: Arc<Server>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let method = req.method().as_str().to_string();
    let path = req.uri().path_and_query().map_or("/".to_string(), |p| p.as_str().to_string());
    let body = if req.method() == Method::POST {
        match read_body(&server, req).await {
            Ok(b) => b,
            Err(r) => return r,
        }
    } else {
        String::new()
    };
    // Pages read folders and parse games: off the async workers.
    let web = server.web.clone();
    let p = path.clone();
    let r = match tokio::task::spawn_blocking(move || web.route(&method, &p, &body)).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(path = %clip(&path), error = %e, "web view: the page failed");
            return reply(StatusCode::INTERNAL_SERVER_ERROR, "error: the page failed".into());
        }
    };
    let mut resp = Response::new(Full::new(Bytes::from(r.body)));
    *resp.status_mut() = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = resp.headers_mut();
    if let Ok(v) = hyper::header::HeaderValue::from_str(r.content_type) {
        h.insert("Content-type", v);
    }
    h.insert("Cache-Control", hyper::header::HeaderValue::from_static("no-store"));
    resp
}

/// One HTTP request: the web view's (GET of its pages, POST to `/api/`), or a GGP message
/// from the body (POST) or the path (GET).
async fn handle(server: Arc<Server>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let receipt = Instant::now();
    let path = req.uri().path();
    let web = match *req.method() {
        Method::GET => Web::handles(path),
        Method::POST => path.starts_with("/api/"),
        _ => false,
    };
    if web {
        return handle_web(server, req).await;
    }
    if !server.cfg.plays && matches!(*req.method(), Method::GET | Method::POST) {
        return reply(StatusCode::NOT_FOUND, "error: this server shows recorded matches and plays no GGP".into());
    }
    let text = match *req.method() {
        Method::POST => match read_body(&server, req).await {
            Ok(b) => b,
            Err(r) => return r,
        },
        Method::GET => {
            let path = req.uri().path();
            message::url_decode(path.strip_prefix('/').unwrap_or(path)).trim().to_string()
        }
        _ => return reply(StatusCode::OK, String::new()),
    };
    let seq = server.seq.fetch_add(1, Ordering::Relaxed);
    match server.respond(&text, receipt).instrument(tracing::debug_span!("request", seq)).await {
        Ok(body) => {
            tracing::debug!(request = %clip(&text), reply = %body, "answered");
            reply(StatusCode::OK, body)
        }
        Err(e) => {
            tracing::warn!(error = %clip(&e), request = %clip(&text), "bad request");
            reply(StatusCode::BAD_REQUEST, format!("error: {e}"))
        }
    }
}

/// Serves connections from `listener` forever, and expires abandoned matches.
///
/// Each connection carries one request (no keep-alive: ggp-base's managers open one per
/// message), must send its headers within `header_timeout` of opening (hyper's header read
/// timer) and its body within `body_timeout`; at most `max_connections` are open at once.
pub async fn run(listener: TcpListener, server: Arc<Server>) {
    let permits = Arc::new(tokio::sync::Semaphore::new(server.cfg.max_connections.max(1)));
    let mut refused = 0u64;
    let accept = async {
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            };
            let Ok(permit) = permits.clone().try_acquire_owned() else {
                // Closed at once: the descriptor is freed, and the client sees the refusal.
                refused += 1;
                if refused.is_power_of_two() {
                    tracing::warn!(%peer, refused, max = server.cfg.max_connections, "too many connections: closed");
                }
                drop(stream);
                continue;
            };
            let server = server.clone();
            tokio::spawn(async move {
                let _permit = permit;
                let mut http = http1::Builder::new();
                http.timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(server.cfg.header_timeout)
                    .keep_alive(false)
                    .title_case_headers(true);
                let svc = service_fn(move |req| {
                    let server = server.clone();
                    async move { Ok::<_, Infallible>(handle(server, req).await) }
                });
                if let Err(e) = http.serve_connection(TokioIo::new(stream), svc).await {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
            });
        }
    };
    let sweep = async {
        let mut every = tokio::time::interval(Duration::from_millis(250));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            every.tick().await;
            server.expire(Instant::now());
        }
    };
    tokio::select! {
        _ = accept => {}
        _ = sweep => {}
    }
}

/// A server running on its own thread and runtime; stops when dropped.
pub struct ServerHandle {
    pub addr: SocketAddr,
    pub server: Arc<Server>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
}

/// Binds `addr` (e.g. `127.0.0.1:0`) and serves on a background thread; returns once bound,
/// with the address bound.
pub fn spawn(addr: &str, cfg: ServerConfig) -> std::io::Result<ServerHandle> {
    let rt = runtime()?;
    let listener = rt.block_on(TcpListener::bind(addr))?;
    let local = listener.local_addr()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = Server::new(cfg);
    let served = server.clone();
    let thread = std::thread::Builder::new().name("ggp-server".into()).spawn(move || {
        rt.block_on(async move {
            tokio::select! {
                _ = run(listener, served) => {}
                _ = rx => {}
            }
        });
        rt.shutdown_timeout(Duration::from_secs(1));
    })?;
    Ok(ServerHandle { addr: local, server, stop: Some(tx), thread: Some(thread) })
}

/// Binds `addr`, calls `bound` with the address, and serves until the process ends.
pub fn serve(addr: &str, cfg: ServerConfig, bound: impl FnOnce(SocketAddr)) -> std::io::Result<()> {
    let rt = runtime()?;
    rt.block_on(async move {
        let listener = TcpListener::bind(addr).await?;
        bound(listener.local_addr()?);
        run(listener, Server::new(cfg)).await;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Kind;

    /// A play whose reply deadline comes while the player is busy (its engine still
    /// building, or a search that overran: here the test holds the player) answers with the
    /// fallback, and its moves are not lost: the next play applies them before its own, so
    /// the player's state is the manager's again. Without the queue the player stayed a
    /// step behind for the rest of the match and every later play's moves were illegal to it.
    #[test]
    fn the_moves_of_a_play_that_gave_up_waiting_are_applied_by_the_next() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let agent = AgentConfig { kind: Kind::Random, margin_s: 0.6, ..AgentConfig::default() };
            let srv = Server::new(ServerConfig { agent, ..ServerConfig::default() });
            let rules = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/gdl/tictactoe.kif")).unwrap();
            let start = format!("(start m1 x ({rules}) 10 1)");
            assert_eq!(srv.respond(&start, Instant::now()).await.unwrap(), "ready");
            let first = srv.respond("(play m1 nil)", Instant::now()).await.unwrap();
            assert!(first.contains("mark"), "{first}");
            let step = |srv: Arc<Server>| async move {
                let slot = lock(&srv.matches)["m1"].slot.clone();
                let g = slot.lock().await;
                g.player.as_ref().map(|p| p.step())
            };
            let held = lock(&srv.matches)["m1"].slot.clone().lock_owned().await;
            let t0 = Instant::now();
            let late = srv.respond("(play m1 ((mark 1 1) noop))", Instant::now()).await.unwrap();
            assert!(t0.elapsed() < Duration::from_secs(1), "the fallback came by the reply deadline");
            assert!(!late.is_empty(), "some move is sent: {late}");
            drop(held);
            assert_eq!(step(srv.clone()).await, Some(0), "the player has not applied the moves yet");
            let next = srv.respond("(play m1 (noop (mark 2 2)))", Instant::now()).await.unwrap();
            assert_eq!(step(srv.clone()).await, Some(2), "both plays' moves are applied, in order");
            assert!(next.contains("mark") && !next.contains("1 1") && !next.contains("2 2"), "{next}");
            assert_eq!(srv.respond("(abort m1)", Instant::now()).await.unwrap(), "aborted");
        });
    }

    #[test]
    fn log_lines_are_clipped() {
        assert_eq!(super::clip("(mark 1 1)"), "(mark 1 1)");
        let long = "é".repeat(10_000);
        let c = super::clip(&long);
        assert!(c.len() < super::CLIP + 30 && c.ends_with("… (20000 bytes)"), "{c}");
    }
}
