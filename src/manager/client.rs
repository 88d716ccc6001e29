//! Players as the manager sees them: a [`PlayerClient`] answers ggp-base's requests (START,
//! PLAY, STOP) in text, either in-process (an agent config) or over HTTP. Each client runs
//! on its own thread behind a [`Seat`], so that all roles are asked at once and a late reply
//! is simply not waited for: the manager's clock is the only clock.

use crate::agent::trap_log::{self, TrapLog};
use crate::agent::{deadlines, new_player, AgentConfig, Player};
use crate::gdl::Game;
use crate::message::Sx;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A request from the manager.
#[derive(Clone, Debug)]
pub enum Request {
    Start {
        id: String,
        role: String,
        /// The rules as sent (printed KIF, no comments).
        rules: Arc<String>,
        /// The parsed rules, for in-process players (same text).
        game: Arc<Game>,
        start_clock: u32,
        play_clock: u32,
    },
    /// `moves` is `None` on the first turn (`NIL`).
    Play {
        id: String,
        moves: Option<Vec<String>>,
    },
    Stop {
        id: String,
        moves: Option<Vec<String>>,
    },
    Abort {
        id: String,
    },
    /// ggp-base's `( INFO )`: the reply names the player (see [`info_name`]).
    Info,
}

impl Request {
    /// The message as ggp-base's `RequestBuilder` writes it.
    pub fn text(&self) -> String {
        let moves = |m: &Option<Vec<String>>| match m {
            None => "NIL".to_string(),
            Some(v) => {
                let mut s = String::from("(");
                for m in v {
                    s.push_str(m);
                    s.push(' ');
                }
                s.push(')');
                s
            }
        };
        match self {
            Request::Start { id, role, rules, start_clock, play_clock, .. } => {
                format!("( START {id} {role} ({rules}) {start_clock} {play_clock})")
            }
            Request::Play { id, moves: m } => format!("( PLAY {id} {} )", moves(m)),
            Request::Stop { id, moves: m } => format!("( STOP {id} {} )", moves(m)),
            Request::Abort { id } => format!("( ABORT {id} )"),
            Request::Info => "( INFO )".to_string(),
        }
    }
}

/// Why a request got no reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No reply by the deadline (ggp-base's `TO`).
    Timeout,
    /// Connection refused or reset, HTTP error, player crashed (ggp-base's `CE`).
    Connection(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Timeout => write!(f, "timeout"),
            Failure::Connection(e) => write!(f, "connection error: {e}"),
        }
    }
}

/// A player the manager can talk to. `handle` may take longer than `deadline`; the
/// [`Seat`] stops waiting at the deadline either way.
pub trait PlayerClient: Send {
    fn name(&self) -> String;
    fn handle(&mut self, req: &Request, deadline: Instant) -> Result<String, Failure>;
    /// What the player can say of its last reply beyond the protocol (for the record):
    /// nothing, unless it is played in-process.
    fn notes(&self) -> Notes {
        Notes::default()
    }
}

/// What an in-process player says of its last reply, kept in the match record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Notes {
    /// The search's iterations for the move just sent (a PLAY's reply).
    pub iterations: Option<u64>,
    /// The playouts it searches with (a START's reply; meta-gaming's choice where it chose).
    pub playout: Option<String>,
}

/// An agent configuration played in this process, on the clocks a remote player gets: the
/// start clock to build its engine, and each play clock (less its margin) to search.
pub struct InProcess {
    cfg: AgentConfig,
    seed: u64,
    player: Option<Box<dyn Player>>,
    play_clock: Duration,
    /// Where its traps go (opened at the first), the game named in the events and the
    /// player (its label in the match).
    traps: Option<(PathBuf, String, String)>,
    trap_log: Option<TrapLog>,
    match_id: String,
    notes: Notes,
}

impl InProcess {
    pub fn new(cfg: AgentConfig, seed: u64) -> InProcess {
        InProcess {
            cfg,
            seed,
            player: None,
            play_clock: Duration::from_secs(1),
            traps: None,
            trap_log: None,
            match_id: String::new(),
            notes: Notes::default(),
        }
    }

    /// Appends the traps its searches detect to `path` (created at the first one), naming
    /// `game` and the finder, `player` (its label in the match), in each.
    pub fn log_traps(&mut self, path: PathBuf, game: &str, player: &str) {
        self.traps = Some((path, game.to_string(), player.to_string()));
    }

    fn write_traps(&mut self) {
        let Some(p) = self.player.as_mut() else { return };
        let game = self.traps.as_ref().map(|t| t.1.as_str()).unwrap_or("");
        let mut events = p.take_traps(&self.match_id, game);
        if events.is_empty() {
            return;
        }
        let player = self.traps.as_ref().map_or_else(|| self.cfg.name.clone(), |t| t.2.clone());
        for e in &mut events {
            e.player.clone_from(&player);
        }
        if self.trap_log.is_none() {
            if let Some((path, _, _)) = &self.traps {
                match TrapLog::open(path) {
                    Ok(log) => self.trap_log = Some(log),
                    Err(e) => tracing::warn!(error = %e, "cannot open the trap log"),
                }
            }
        }
        for e in &events {
            match &self.trap_log {
                Some(log) => log.write(e),
                None => trap_log::info_line(e),
            }
        }
    }
}

impl PlayerClient for InProcess {
    fn name(&self) -> String {
        self.cfg.name.clone()
    }
    fn notes(&self) -> Notes {
        self.notes.clone()
    }
    fn handle(&mut self, req: &Request, _deadline: Instant) -> Result<String, Failure> {
        let receipt = Instant::now();
        self.notes = Notes::default();
        match req {
            Request::Start { id, role, game, start_clock, play_clock, .. } => {
                self.match_id = id.clone();
                self.play_clock = Duration::from_secs(*play_clock as u64);
                let (build, _) = deadlines(receipt, Duration::from_secs(*start_clock as u64), self.cfg.margin());
                match new_player(game, role, &self.cfg, self.seed, build) {
                    Ok(p) => {
                        self.notes.playout = Some(p.playout());
                        self.player = Some(p);
                        Ok("ready".into())
                    }
                    Err(e) => Err(Failure::Connection(format!("cannot build the game: {e}"))),
                }
            }
            Request::Play { moves, .. } => {
                let p = self.player.as_mut().ok_or_else(|| Failure::Connection("no engine (start failed)".into()))?;
                if let Some(m) = moves {
                    if let Err(e) = p.advance(m) {
                        tracing::error!(error = %e, "in-process player cannot apply the moves");
                    }
                }
                let (search, _) = deadlines(receipt, self.play_clock, self.cfg.margin());
                let chosen = p.select(search);
                self.write_traps();
                let p = self.player.as_mut().ok_or_else(|| Failure::Connection("no engine".into()))?;
                match chosen {
                    Ok(s) => {
                        self.notes.iterations = Some(s.iterations);
                        Ok(s.text)
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "in-process player chose no move; sending its first legal");
                        p.first_legal().ok_or(Failure::Connection(e))
                    }
                }
            }
            Request::Stop { .. } => {
                self.player = None;
                Ok("done".into())
            }
            Request::Abort { .. } => {
                self.player = None;
                Ok("aborted".into())
            }
            // As `factotum serve` answers it with this configuration.
            Request::Info => Ok(crate::message::info_reply(&self.cfg.name, true)),
        }
    }
}

/// Longest name taken from an INFO reply.
const MAX_NAME: usize = 100;

/// The name an INFO reply gives: ggp-base's `InfoResponse` is a list of `(key value)` pairs,
/// `((name NAME) (status available))`; the older replies (`available`, `busy`) name nobody.
/// A name that is not one atom, or is longer than 100 characters, is not taken.
pub fn info_name(reply: &str) -> Option<String> {
    let exprs = crate::message::read(reply).ok()?;
    let [Sx::List(pairs, _)] = exprs.as_slice() else { return None };
    pairs.iter().find_map(|p| match p {
        Sx::List(kv, _) => match kv.as_slice() {
            [Sx::Atom(k), Sx::Atom(v)] if k.eq_ignore_ascii_case("name") => {
                let v = v.trim_matches('"');
                (!v.is_empty() && v.chars().count() <= MAX_NAME).then(|| v.to_string())
            }
            _ => None,
        },
        Sx::Atom(_) => None,
    })
}

type Reply = (u64, Result<String, Failure>, Notes);

/// How often a wait looks at [`super::interrupted`].
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// A client on its own thread. Requests are numbered; a reply to an earlier request that
/// arrives late is dropped.
pub struct Seat {
    tx: Option<Sender<(u64, Request, Instant)>>,
    rx: Receiver<Reply>,
    seq: u64,
    /// The deadline of the last request sent (its reply, or its failure, is in by then).
    pub due: Instant,
    pub name: String,
    /// The player's notes on the last reply received in time (default before one is).
    pub notes: Notes,
}

impl Seat {
    pub fn new(mut client: Box<dyn PlayerClient>, span: tracing::Span) -> Seat {
        let name = client.name();
        let (tx, req_rx) = mpsc::channel::<(u64, Request, Instant)>();
        let (reply_tx, rx) = mpsc::channel::<Reply>();
        let spawned = std::thread::Builder::new().name(format!("seat {name}")).spawn(move || {
            let _e = span.enter();
            while let Ok((seq, req, deadline)) = req_rx.recv() {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| client.handle(&req, deadline)))
                    .unwrap_or_else(|_| Err(Failure::Connection("the player panicked".into())));
                if reply_tx.send((seq, r, client.notes())).is_err() {
                    break;
                }
            }
        });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start a player thread");
        }
        Seat { tx: Some(tx), rx, seq: 0, due: Instant::now(), name, notes: Notes::default() }
    }

    /// Sends a request; its reply is due by `deadline`.
    pub fn send(&mut self, req: Request, deadline: Instant) {
        self.seq += 1;
        self.due = deadline;
        self.notes = Notes::default();
        if let Some(tx) = &self.tx {
            let _ = tx.send((self.seq, req, deadline));
        }
    }

    /// Waits for the reply to the last request until `deadline`, or until the manager is
    /// interrupted ([`super::interrupted`]; then a timeout, which the referee does not
    /// record: it aborts the match).
    pub fn wait(&mut self, deadline: Instant) -> Result<String, Failure> {
        self.wait_for(deadline, true)
    }

    /// Waits for the reply to the last request until `deadline`, interrupted or not (for
    /// the ABORT sent because of an interruption).
    pub fn wait_out(&mut self, deadline: Instant) -> Result<String, Failure> {
        self.wait_for(deadline, false)
    }

    fn wait_for(&mut self, deadline: Instant, stop_on_interrupt: bool) -> Result<String, Failure> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if stop_on_interrupt && super::interrupted() && !left.is_zero() {
                return Err(Failure::Timeout);
            }
            match self.rx.recv_timeout(left.min(INTERRUPT_POLL)) {
                Ok((seq, r, notes)) if seq == self.seq => {
                    self.notes = notes;
                    return r;
                }
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) if left > INTERRUPT_POLL => continue,
                Err(RecvTimeoutError::Timeout) => return Err(Failure::Timeout),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Failure::Connection("the player thread ended".into()))
                }
            }
        }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        // Closing the channel ends the thread once its current request is done.
        self.tx.take();
    }
}
