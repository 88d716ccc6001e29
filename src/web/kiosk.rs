//! A person plays an agent from the browser, as ggp-base's Kiosk allows: a game from a
//! folder, a role and clocks; the match is refereed like any other ([`run_match_with`]),
//! recorded in ggp-base's format (`isPlayerHuman` set for the person's seat), and the
//! person's seat is a [`HumanClient`] that shows its legal moves on the match's page and
//! waits, until the play clock runs out, for the move the page posts.

use super::live::Live;
use crate::agent::trap_log::now_ms;
use crate::agent::{new_player, same_move, AgentConfig, Kind, Player};
use crate::gdl::Game;
use crate::manager::client::{Failure, PlayerClient, Request};
use crate::manager::referee::{match_seed, rules_text, run_match_with, MatchSpec};
use crate::manager::{sanitize, PlayerSpec};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Clocks a person may ask for, in seconds.
pub const CLOCKS: std::ops::RangeInclusive<u32> = 1..=3600;
/// Kiosk matches played at once.
const MAX_PLAYING: usize = 4;

/// Where a person's move waits for the seat that asked for it.
#[derive(Default)]
struct Inbox {
    slot: Mutex<Option<String>>,
    ready: Condvar,
}

/// The kiosk: its games, the agent people play, and where records go.
pub struct Kiosk {
    games: PathBuf,
    agent: AgentConfig,
    out: PathBuf,
    live: Arc<Live>,
    inboxes: Arc<Mutex<HashMap<String, Arc<Inbox>>>>,
    seq: AtomicU64,
}

/// What a person asks for.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct NewMatch {
    /// A `.kif` file name in the kiosk's folder.
    pub game: String,
    pub role: String,
    pub startclock: u32,
    pub playclock: u32,
    /// How the record names the person (default `human`).
    #[serde(default)]
    pub name: String,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Kiosk {
    pub fn new(games: PathBuf, agent: AgentConfig, out: PathBuf, live: Arc<Live>) -> Kiosk {
        Kiosk { games, agent, out, live, inboxes: Arc::default(), seq: AtomicU64::new(0) }
    }

    /// The `.kif` files of the folder, sorted by name.
    pub fn games(&self) -> Vec<String> {
        let Ok(rd) = std::fs::read_dir(&self.games) else { return Vec::new() };
        let mut v: Vec<String> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".kif"))
            .collect();
        v.sort();
        v
    }

    /// A game of the folder by file name (only names the folder lists are read).
    fn game(&self, name: &str) -> Result<(PathBuf, String, Game), String> {
        if !self.games().iter().any(|g| g == name) {
            return Err(format!("`{name}` is not a game of {}", self.games.display()));
        }
        let path = self.games.join(name);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let game = Game::parse(name, &text).map_err(|e| e.to_string())?;
        Ok((path, text, game))
    }

    /// The roles of game `name`.
    pub fn roles(&self, name: &str) -> Result<Vec<String>, String> {
        Ok(role_names(&self.game(name)?.2))
    }

    /// Starts a match between the person and the agent (the agent in every other role);
    /// returns its id. The record goes to the kiosk's folder.
    pub fn start(&self, req: &NewMatch) -> Result<String, String> {
        if !CLOCKS.contains(&req.startclock) || !CLOCKS.contains(&req.playclock) {
            return Err(format!("clocks must be {} to {} seconds", CLOCKS.start(), CLOCKS.end()));
        }
        let playing = self.live.list().iter().filter(|m| m.human && !m.over).count();
        if playing >= MAX_PLAYING {
            return Err(format!("{MAX_PLAYING} matches against people are being played; try again later"));
        }
        let (path, text, game) = self.game(&req.game)?;
        let roles = role_names(&game);
        let seat = roles
            .iter()
            .position(|r| r == &req.role)
            .ok_or_else(|| format!("`{}` is not a role of {} (roles: {})", req.role, req.game, roles.join(", ")))?;
        let name = match req.name.trim() {
            "" => "human".to_string(),
            n => sanitize(n),
        };
        let stem = req.game.trim_end_matches(".kif");
        let id = sanitize(&format!("kiosk.{stem}.{}.{}", now_ms(), self.seq.fetch_add(1, Ordering::Relaxed)));
        let agent_label = sanitize(&self.agent.name);
        let players = (0..roles.len())
            .map(|r| {
                if r == seat {
                    PlayerSpec::Human { label: name.clone() }
                } else {
                    PlayerSpec::Agent {
                        path: "(served agent)".into(),
                        label: agent_label.clone(),
                        cfg: self.agent.clone(),
                    }
                }
            })
            .collect();
        let spec = MatchSpec {
            seed: match_seed(self.agent.seed, &id),
            id: id.clone(),
            game_path: path.display().to_string(),
            rules: Arc::new(rules_text(&text)?),
            game: Arc::new(game),
            players,
            start_clock: req.startclock,
            play_clock: req.playclock,
            tournament: None,
            out: Some(self.out.clone()),
        };
        std::fs::create_dir_all(&self.out).map_err(|e| format!("{}: {e}", self.out.display()))?;
        let inbox = Arc::new(Inbox::default());
        lock(&self.inboxes).insert(id.clone(), inbox.clone());
        self.live.begin(&id, &req.game, &req.role, &roles, true);
        let human = HumanClient { id: id.clone(), name, live: self.live.clone(), inbox, player: None };
        let mut given: Vec<Option<Box<dyn PlayerClient>>> = (0..roles.len()).map(|_| None).collect();
        given[seat] = Some(Box::new(human));
        let live = self.live.clone();
        let inboxes = self.inboxes.clone();
        let match_id = id.clone();
        std::thread::Builder::new()
            .name(format!("kiosk {id}"))
            .spawn(move || {
                let (goals, note) = match run_match_with(&spec, given) {
                    Ok(rec) => (rec.goal_values.clone(), rec.factotum.abort_reason.clone()),
                    Err(e) => (Vec::new(), Some(e)),
                };
                live.update(&match_id, |m| {
                    if !goals.is_empty() {
                        m.goals = goals.iter().map(|&g| Some(g)).collect();
                    }
                });
                live.finish(&match_id, note);
                lock(&inboxes).remove(&match_id);
            })
            .map_err(|e| format!("cannot start the match: {e}"))?;
        Ok(id)
    }

    /// The person's move for match `id`: taken if the seat is waiting for one and it is
    /// legal.
    pub fn submit(&self, id: &str, text: &str) -> Result<(), String> {
        let m = self.live.get(id).filter(|m| m.human).ok_or_else(|| format!("no match `{id}` against a person"))?;
        if !m.waiting {
            return Err("no move is wanted now".into());
        }
        let Some(legal) = m.legal.iter().find(|l| same_move(text.trim(), l)) else {
            return Err(format!("`{}` is not legal now", text.trim()));
        };
        let inbox = lock(&self.inboxes).get(id).cloned().ok_or("the match is over")?;
        *lock(&inbox.slot) = Some(legal.clone());
        inbox.ready.notify_all();
        Ok(())
    }
}

fn role_names(game: &Game) -> Vec<String> {
    game.roles().iter().map(|&r| game.symbols.name(r).to_string()).collect()
}

/// A person's seat: an engine of its own (to know the legal moves) and the inbox the page
/// posts to.
struct HumanClient {
    id: String,
    name: String,
    live: Arc<Live>,
    inbox: Arc<Inbox>,
    player: Option<Box<dyn Player>>,
}

/// Kept back from the play clock so the move reaches the referee in time.
const MARGIN: Duration = Duration::from_millis(300);

impl HumanClient {
    fn show(&mut self, last: Option<&Vec<String>>) {
        let Some(p) = self.player.as_mut() else { return };
        let v = p.view();
        let goals = if v.terminal { p.goals() } else { Vec::new() };
        self.live.update(&self.id, |m| {
            if let Some(l) = last {
                m.last_moves = Some(l.clone());
            }
            m.legal = v.legal.clone();
            m.see(v);
            if !goals.is_empty() {
                m.goals = goals;
            }
        });
    }
}

impl PlayerClient for HumanClient {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn handle(&mut self, req: &Request, deadline: Instant) -> Result<String, Failure> {
        match req {
            Request::Info => Ok(crate::message::info_reply(&self.name, true)),
            Request::Start { role, game, .. } => {
                // The person's engine needs no search: the first-legal agent's.
                let cfg = AgentConfig { kind: Kind::First, ..AgentConfig::default() };
                let p = new_player(game, role, &cfg, 0, deadline)
                    .map_err(|e| Failure::Connection(format!("cannot build the game: {e}")))?;
                self.player = Some(p);
                self.show(None);
                Ok("ready".into())
            }
            Request::Play { moves, .. } => {
                let p = self.player.as_mut().ok_or_else(|| Failure::Connection("no engine".into()))?;
                if let Some(m) = moves {
                    p.advance(m).map_err(Failure::Connection)?;
                }
                self.show(moves.as_ref());
                *lock(&self.inbox.slot) = None;
                let due = deadline.checked_sub(MARGIN).unwrap_or(deadline);
                let left_ms = due.saturating_duration_since(Instant::now()).as_millis() as u64;
                self.live.update(&self.id, |m| {
                    m.waiting = true;
                    m.deadline_ms = now_ms() + left_ms;
                });
                let mut slot = lock(&self.inbox.slot);
                while slot.is_none() {
                    let left = due.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    slot = self.inbox.ready.wait_timeout(slot, left).unwrap_or_else(|e| e.into_inner()).0;
                }
                let chosen = slot.take();
                drop(slot);
                self.live.update(&self.id, |m| {
                    m.waiting = false;
                    m.legal.clear();
                    m.chosen = chosen.clone();
                });
                chosen.ok_or(Failure::Timeout)
            }
            Request::Stop { moves, .. } => {
                if let (Some(p), Some(m)) = (self.player.as_mut(), moves) {
                    let _ = p.advance(m);
                }
                self.show(moves.as_ref());
                Ok("done".into())
            }
            Request::Abort { .. } => Ok("aborted".into()),
        }
    }
}

/// The kiosk's default record folder.
pub fn default_out() -> &'static Path {
    Path::new("matches/kiosk")
}
