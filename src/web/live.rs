//! The matches being played now, as the web view shows them: one [`LiveMatch`] per match
//! the server plays (updated by the GGP server at START, each PLAY and STOP/ABORT) or a
//! person plays from the browser ([`super::kiosk`]). Finished matches stay listed until
//! [`KEEP`] newer ones have started.

use crate::agent::trap_log::{now_ms, TrapEvent};
use crate::agent::{MoveStat, PlayerView};
use serde::Serialize;
use std::sync::Mutex;

/// Matches kept (playing or over); the oldest finished ones go first.
pub const KEEP: usize = 50;
/// Trap notes kept per match.
const TRAPS: usize = 100;
/// A match is watched while a page asked for it within this long (pages poll every 400 ms).
pub const WATCHED_MS: u64 = 3000;

/// A trap the search detected, as the page lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrapNote {
    pub step: usize,
    pub role: String,
    pub trap_move: String,
    pub chosen: String,
    pub avoided: bool,
    pub depth: usize,
    pub found_by: String,
}

impl From<&TrapEvent> for TrapNote {
    fn from(e: &TrapEvent) -> TrapNote {
        TrapNote {
            step: e.step,
            role: e.role.clone(),
            trap_move: e.trap_move.clone(),
            chosen: e.chosen.clone(),
            avoided: e.avoided,
            depth: e.depth,
            found_by: e.found_by.clone(),
        }
    }
}

/// One match as one seat sees it (the server's role, or the person's).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LiveMatch {
    pub id: String,
    /// The game: its file name for a match started here, else `rules:HASH`.
    pub game: String,
    pub role: String,
    pub roles: Vec<String>,
    /// A person plays this seat from the browser.
    pub human: bool,
    pub started_ms: u64,
    pub updated_ms: u64,
    pub over: bool,
    /// Joint moves played, and the state's facts.
    pub step: usize,
    pub state: Vec<String>,
    /// The joint move that led here (role order).
    pub last_moves: Option<Vec<String>>,
    /// This seat's last move, and the search's root moves when it chose it.
    pub chosen: Option<String>,
    pub best: Vec<MoveStat>,
    /// Legal moves of a person's seat while a move is wanted.
    pub legal: Vec<String>,
    pub waiting: bool,
    /// When a wanted move is due (ms since the epoch).
    pub deadline_ms: u64,
    pub traps: Vec<TrapNote>,
    pub goals: Vec<Option<u32>>,
    /// Why the match ended early, if it did.
    pub note: Option<String>,
    /// Bumped at every change (pages redraw when it moves).
    pub version: u64,
    /// When a page last asked for the match (ms since the epoch; see [`Live::watched`]).
    #[serde(skip)]
    pub viewed_ms: u64,
}

impl LiveMatch {
    /// Takes a player's view: state, step and, after a search, its root moves.
    pub fn see(&mut self, v: PlayerView) {
        self.step = v.step;
        self.state = v.state;
        if !v.best.is_empty() {
            self.best = v.best;
        }
        if v.terminal {
            self.legal.clear();
        }
    }
}

/// The registry (shared by the GGP server, the kiosk and the pages).
#[derive(Default)]
pub struct Live {
    matches: Mutex<Vec<LiveMatch>>,
}

impl Live {
    pub fn new() -> Live {
        Live::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<LiveMatch>> {
        self.matches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a match (replacing one of the same id).
    pub fn begin(&self, id: &str, game: &str, role: &str, roles: &[String], human: bool) {
        let mut ms = self.lock();
        ms.retain(|m| m.id != id);
        while ms.len() >= KEEP {
            match ms.iter().position(|m| m.over) {
                Some(i) => ms.remove(i),
                None => ms.remove(0),
            };
        }
        let now = now_ms();
        ms.push(LiveMatch {
            id: id.into(),
            game: game.into(),
            role: role.into(),
            roles: roles.to_vec(),
            human,
            started_ms: now,
            updated_ms: now,
            ..LiveMatch::default()
        });
    }

    /// Changes match `id` (if registered) and bumps its version.
    pub fn update(&self, id: &str, f: impl FnOnce(&mut LiveMatch)) {
        let mut ms = self.lock();
        if let Some(m) = ms.iter_mut().find(|m| m.id == id) {
            f(m);
            m.updated_ms = now_ms();
            m.version += 1;
        }
    }

    /// Adds the traps a search detected.
    pub fn traps(&self, id: &str, events: &[TrapEvent]) {
        if events.is_empty() {
            return;
        }
        self.update(id, |m| {
            m.traps.extend(events.iter().map(TrapNote::from));
            let over = m.traps.len().saturating_sub(TRAPS);
            m.traps.drain(..over);
        });
    }

    /// Marks match `id` over.
    pub fn finish(&self, id: &str, note: Option<String>) {
        self.update(id, |m| {
            m.over = true;
            m.waiting = false;
            m.legal.clear();
            if m.note.is_none() {
                m.note = note;
            }
        });
    }

    pub fn get(&self, id: &str) -> Option<LiveMatch> {
        self.lock().iter().find(|m| m.id == id).cloned()
    }

    /// Match `id` as a page asks for it: noted as watched.
    pub fn view(&self, id: &str) -> Option<LiveMatch> {
        let mut ms = self.lock();
        let m = ms.iter_mut().find(|m| m.id == id)?;
        m.viewed_ms = now_ms();
        Some(m.clone())
    }

    /// Whether a page asked for match `id` within the last [`WATCHED_MS`]: the server then
    /// shows its search as it goes.
    pub fn watched(&self, id: &str) -> bool {
        self.lock().iter().any(|m| m.id == id && now_ms().saturating_sub(m.viewed_ms) < WATCHED_MS)
    }

    /// Every match kept, newest first.
    pub fn list(&self) -> Vec<LiveMatch> {
        let mut v = self.lock().clone();
        v.reverse();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_registered_updated_finished_and_old_ones_dropped() {
        let live = Live::new();
        live.begin("m1", "ttt", "x", &["x".into(), "o".into()], false);
        live.update("m1", |m| m.step = 2);
        live.update("nobody", |m| m.step = 9);
        let m = live.get("m1").unwrap();
        assert_eq!((m.step, m.version, m.over), (2, 1, false));
        assert!(!live.watched("m1"), "no page asked yet");
        assert!(live.view("m1").is_some() && live.watched("m1") && !live.watched("nobody"));
        let event = |step| TrapEvent {
            match_id: "m1".into(),
            game: "ttt".into(),
            step,
            role: "x".into(),
            player: String::new(),
            state: Vec::new(),
            state_hash: String::new(),
            trap_move: "( mark 1 1 )".into(),
            refutation: Vec::new(),
            depth: 2,
            refutation_complete: true,
            found_by: "solver".into(),
            hint: None,
            value: 0.0,
            chosen: "( mark 2 2 )".into(),
            avoided: true,
            time_ms: 0,
        };
        live.traps("m1", &(0..TRAPS + 3).map(event).collect::<Vec<_>>());
        let traps = live.get("m1").unwrap().traps;
        assert_eq!((traps.len(), traps[0].step, traps[0].avoided), (TRAPS, 3, true), "the newest kept");
        live.finish("m1", Some("aborted".into()));
        assert!(live.get("m1").unwrap().over);
        for i in 0..KEEP + 5 {
            live.begin(&format!("n{i}"), "g", "r", &[], false);
        }
        let list = live.list();
        assert_eq!(list.len(), KEEP);
        assert_eq!(list[0].id, format!("n{}", KEEP + 4), "newest first");
        assert!(live.get("m1").is_none(), "the finished match went first");
    }
}
