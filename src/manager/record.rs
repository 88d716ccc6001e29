//! Match records in ggp-base's JSON match format (`util/match/Match.java`), plus our own
//! extras under one key (`factotum`), and the atomic write that keeps a record valid when
//! the process is interrupted.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// ggp-base's error codes, one string per role per step (`""` when none).
pub const TIMEOUT: &str = "TO";
pub const CONNECTION: &str = "CE";
/// Followed by a space and the reply (illegal or unparseable), as ggp-base writes `IL move`.
pub const ILLEGAL: &str = "IL";

/// One match as ggp-base's `Match.toJSON` writes it. `states[i]` is the state reached after
/// `moves[i-1]` (`states[0]` the initial state), printed as `( ( cell 1 1 b ) ( control x ) )`;
/// `errors` has one entry per state (the first for the start request), `stateTimes` epoch
/// milliseconds. `goalValues` is written once the match is completed. Reading follows
/// ggp-base's own reader (`Match(String, ...)`): the fields it requires are required, every
/// other field is optional, and fields of other tools (Tiltyard's signatures) are ignored.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MatchRecord {
    pub match_id: String,
    pub random_token: String,
    pub start_time: u64,
    /// Left out by ggp-base for games not from a repository (`put` of null).
    #[serde(rename = "gameMetaURL", default)]
    pub game_meta_url: String,
    pub is_completed: bool,
    #[serde(default)]
    pub is_aborted: bool,
    pub states: Vec<String>,
    pub moves: Vec<Vec<String>>,
    pub state_times: Vec<u64>,
    #[serde(default)]
    pub errors: Vec<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub goal_values: Vec<u32>,
    #[serde(default = "no_preview")]
    pub preview_clock: i64,
    pub start_clock: u32,
    pub play_clock: u32,
    #[serde(default)]
    pub player_names_from_host: Vec<String>,
    #[serde(default)]
    pub is_player_human: Vec<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament_name_from_host: Option<String>,
    #[serde(default)]
    pub scrambled: bool,
    /// Ours; ggp-base ignores unknown keys.
    #[serde(default)]
    pub factotum: Extras,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The trap log beside the record of match `id` in `dir`: `<dir>/<id>.traps.jsonl`.
pub fn traps_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.traps.jsonl"))
}

fn no_preview() -> i64 {
    -1
}

/// What ggp-base's format has no place for.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Extras {
    /// The game file as given.
    pub game_path: String,
    /// FNV-1a 64 of the rules as sent to the players (a change of rules changes it).
    pub rules_hash: String,
    pub roles: Vec<String>,
    /// How each role's player was given (agent TOML path or URL).
    pub players: Vec<String>,
    /// The referee's engine: `propnet` or `interp`.
    pub engine: String,
    /// Seeds the replacement moves (and the in-process agents' searches).
    pub seed: u64,
    /// Why the match was aborted, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_reason: Option<String>,
    /// Aborted because the manager was interrupted (not the game's or a player's doing): a
    /// resumed tournament plays it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Traps the in-process agents' searches detected, logged in `<id>.traps.jsonl` beside
    /// the record (see `agent::trap_log`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub traps: u64,
    /// Per role, the playouts an in-process agent searched with (meta-gaming's choice where
    /// it chose; empty for a remote player). Absent when no role was in-process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub playouts: Vec<String>,
    /// Per joint move (parallel to `moves`), each role's search iterations for its move (0
    /// for a remote player, a late reply or a replaced move). Absent when no role was
    /// in-process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iterations: Vec<Vec<u64>>,
}

impl MatchRecord {
    /// Errors per role over the whole match (non-empty entries).
    pub fn error_counts(&self) -> Vec<usize> {
        let n = self.player_names_from_host.len().max(self.errors.first().map_or(0, Vec::len));
        let mut out = vec![0; n];
        for step in &self.errors {
            for (r, e) in step.iter().enumerate() {
                if !e.is_empty() && r < n {
                    out[r] += 1;
                }
            }
        }
        out
    }

    /// Reads a record; `None` when the file is missing or not a record.
    pub fn load(path: &Path) -> Option<MatchRecord> {
        Self::read(path).ok()
    }

    /// Reads a record, saying why it cannot be read.
    pub fn read(path: &Path) -> Result<MatchRecord, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: not a match record: {e}", path.display()))
    }

    /// Writes the record atomically to `dir/<matchId>.json` and returns the path.
    pub fn save(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let path = dir.join(format!("{}.json", self.match_id));
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        write_atomic(&path, text.as_bytes())?;
        Ok(path)
    }
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, then renames it over `path`
/// (atomic on POSIX file systems), so readers see the old file or the new one, never half.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Unique per write, also across machines sharing the folder (where process ids repeat:
    // every container's first process is 1), so concurrent writers never share a temporary.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let k = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.tmp-{}-{k}-{nanos}", std::process::id()));
    {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    // Make the rename itself durable (best effort: not every platform opens directories).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A state's facts in ggp-base's record form: `( ( cell 1 1 b ) ( control x ) )`.
pub fn state_string(facts: &[String]) -> String {
    let mut s = String::from("( ");
    for f in facts {
        s.push_str(f);
        s.push(' ');
    }
    s.push(')');
    s
}

/// FNV-1a 64 as hex, and milliseconds since the Unix epoch (shared with the trap log).
pub use crate::agent::trap_log::{fnv1a, now_ms};
