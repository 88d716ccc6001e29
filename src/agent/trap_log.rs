//! The trap log: every trap a player's search detects, as one JSON object per line
//! (JSON Lines), written by `factotum serve --trap-log FILE` and by the manager's in-process
//! agents (`matches/ID.traps.jsonl` beside the match record), and summarised by
//! `factotum traps --log FILE`.
//!
//! A trap (see `crate::traps`) is a move after which the other roles force the mover's
//! loss while another move does not lose by force. The player reports those its search
//! proves ([`crate::search::TrapFound`]); [`TrapEvent`] adds where and when.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One detection.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TrapEvent {
    /// The match id (as the game manager named it).
    pub match_id: String,
    /// The game's file or name, when the writer knows it.
    #[serde(default)]
    pub game: String,
    /// Joint moves played before the position.
    pub step: usize,
    /// The role that would fall into the trap (the searching player's).
    pub role: String,
    /// The player whose search found it, as the writer names it: the manager's label of an
    /// in-process agent (its TOML file's stem, or the name a tournament gives it, as in the
    /// reports) or the serving agent's name (its INFO reply). Empty in logs written before
    /// it was kept; a match's log holds the traps of all its in-process players, told apart
    /// by this.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub player: String,
    /// The position: its facts in ggp-base's printed form, sorted, and a hash of them
    /// (FNV-1a 64 of the facts joined by spaces, in hex).
    pub state: Vec<String>,
    pub state_hash: String,
    /// The trap move, as the game prints it.
    pub trap_move: String,
    /// The refutation: joint moves (texts in role order) from the position, the trap's own
    /// first, to the loss.
    pub refutation: Vec<Vec<String>>,
    /// Joint moves after the trap's until the loss is on the board (at least this many
    /// when the refutation is not complete).
    pub depth: usize,
    /// Whether the refutation reaches the end of the game; false when the search's tree no
    /// longer held the whole proof (cut back to its node budget).
    #[serde(default = "yes")]
    pub refutation_complete: bool,
    /// How it was found: `solver` (MCTS-Solver proved the move lost) or `similarity` (a
    /// similarity hint led the exact trap finder to it: `hint` says from where).
    pub found_by: String,
    /// For `similarity`: the measure, the similarity, the remembered trap position and move,
    /// its killer move and the reply move matching paired with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<crate::search::Hint>,
    /// The role's proven value after the trap move, 0..=1.
    pub value: f64,
    /// The move the player chose, and whether it avoided the trap.
    pub chosen: String,
    pub avoided: bool,
    /// Milliseconds since the Unix epoch.
    pub time_ms: u64,
}

fn yes() -> bool {
    true
}

/// FNV-1a 64 of the facts joined by single spaces, as 16 hex digits.
pub fn state_hash(facts: &[String]) -> String {
    fnv1a(facts.join(" ").as_bytes())
}

/// FNV-1a, 64 bits, as 16 hex digits (a cheap fingerprint, not a cryptographic hash). Also
/// the match records' rules hash (`manager::record` re-exports it).
pub fn fnv1a(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// An append-only JSON Lines file shared by the matches that write to it. A write that
/// fails is logged and the match goes on: a log never costs a move.
#[derive(Clone, Debug)]
pub struct TrapLog {
    path: PathBuf,
    file: Arc<Mutex<std::fs::File>>,
}

impl TrapLog {
    /// Opens `path` for appending (created if missing, with its folder).
    pub fn open(path: &Path) -> Result<TrapLog, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TrapLog { path: path.to_path_buf(), file: Arc::new(Mutex::new(file)) })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `event` as one line, and prints its one-line summary at `info`.
    pub fn write(&self, event: &TrapEvent) {
        info_line(event);
        let mut line = match serde_json::to_string(event) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "trap log: cannot encode an event");
                return;
            }
        };
        line.push('\n');
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = f.write_all(line.as_bytes()).and_then(|_| f.flush()) {
            tracing::warn!(error = %e, path = %self.path.display(), "trap log: write failed");
        }
    }
}

/// The one-line summary of a detection, at `info`.
pub fn info_line(e: &TrapEvent) {
    tracing::info!(
        match_id = %e.match_id,
        step = e.step,
        role = %e.role,
        player = %e.player,
        trap = %e.trap_move,
        depth = e.depth,
        found_by = %e.found_by,
        avoided = e.avoided,
        "trap detected"
    );
}

/// Per game: traps found, avoided, and how found.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct GameSummary {
    pub found: u64,
    pub avoided: u64,
    /// Traps found, and traps avoided, by how they were found (`solver`, `similarity`).
    pub by: BTreeMap<String, u64>,
    #[serde(default)]
    pub avoided_by: BTreeMap<String, u64>,
    /// Traps found, and traps avoided, by the player that found them (`?` where the log does
    /// not say).
    #[serde(default)]
    pub by_player: BTreeMap<String, u64>,
    #[serde(default)]
    pub avoided_by_player: BTreeMap<String, u64>,
    /// Matches with at least one detection.
    pub matches: u64,
    /// Least, and greatest depth.
    pub depth_min: usize,
    pub depth_max: usize,
}

/// What a log holds, per game (the game as written, or `?`), and lines that did not parse
/// (`FILE:LINE`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub games: BTreeMap<String, GameSummary>,
    pub bad_lines: Vec<String>,
}

/// Reads a trap log, or every `*.traps.jsonl` of a folder (the manager's match folder), and
/// sums it up per game. Lines that are not events are listed, not fatal (a log cut by a
/// crash ends in half a line).
pub fn summarise(path: &Path) -> Result<Summary, String> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".traps.jsonl"))
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_path_buf()]
    };
    let mut out = Summary::default();
    let mut seen_matches: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        summarise_file(file, &mut out, &mut seen_matches)?;
    }
    for (game, ids) in seen_matches {
        if let Some(g) = out.games.get_mut(&game) {
            g.matches = ids.len() as u64;
        }
    }
    Ok(out)
}

fn summarise_file(
    path: &Path,
    out: &mut Summary,
    seen_matches: &mut BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Result<(), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let Ok(e) = serde_json::from_str::<TrapEvent>(&line) else {
            out.bad_lines.push(format!("{}:{}", path.display(), i + 1));
            continue;
        };
        let game = if e.game.is_empty() { "?".to_string() } else { e.game.clone() };
        let g = out.games.entry(game.clone()).or_default();
        if g.found == 0 || e.depth < g.depth_min {
            g.depth_min = e.depth;
        }
        g.depth_max = g.depth_max.max(e.depth);
        g.found += 1;
        g.avoided += e.avoided as u64;
        *g.by.entry(e.found_by.clone()).or_default() += 1;
        let player = if e.player.is_empty() { "?" } else { e.player.as_str() };
        *g.by_player.entry(player.to_string()).or_default() += 1;
        if e.avoided {
            *g.avoided_by.entry(e.found_by.clone()).or_default() += 1;
            *g.avoided_by_player.entry(player.to_string()).or_default() += 1;
        }
        seen_matches.entry(game).or_default().insert(e.match_id);
    }
    Ok(())
}

/// Counts the events in a log (0 when it does not exist).
pub fn count(path: &Path) -> u64 {
    std::fs::read_to_string(path).map(|t| t.lines().filter(|l| !l.trim().is_empty()).count() as u64).unwrap_or(0)
}

/// The current time in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
