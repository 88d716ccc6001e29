//! Recorded matches and tournament reports under one folder, as the web view browses them:
//! the folders holding records (the folder itself and its subfolders, two levels down),
//! each folder's records with their players and results, and a record's steps.
//!
//! Paths in URLs are relative to the folder and may only name what is under it: `..`,
//! absolute paths and symbolic links out of it are refused.

use super::board::parse_fact;
use crate::manager::record::MatchRecord;
use std::path::{Component, Path, PathBuf};

/// Folder levels looked into below the root.
const DEPTH: usize = 2;

/// A folder holding match records.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Folder {
    /// Relative to the root (`""` for the root itself).
    pub rel: String,
    pub records: usize,
    /// A tournament report (`report.md`) is there.
    pub report: bool,
}

/// A record as a folder's listing shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Entry {
    pub rel: String,
    pub id: String,
    pub game: String,
    pub players: Vec<String>,
    pub goals: Vec<u32>,
    pub steps: usize,
    pub completed: bool,
}

/// The records under `root`.
pub struct Records {
    root: PathBuf,
}

fn is_record_file(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "json")
}

impl Records {
    pub fn new(root: PathBuf) -> Records {
        Records { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `rel` under the root, if it names something there.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, String> {
        let p = Path::new(rel);
        if !p.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(format!("`{rel}` is not a path inside the folder"));
        }
        let full = self.root.join(p);
        let (Ok(real), Ok(root)) = (full.canonicalize(), self.root.canonicalize()) else {
            return Err(format!("`{rel}` does not exist"));
        };
        if !real.starts_with(&root) {
            return Err(format!("`{rel}` leads out of the folder"));
        }
        Ok(real)
    }

    /// The folders holding records or a report, the root first, then by path.
    pub fn folders(&self) -> Vec<Folder> {
        let mut out = Vec::new();
        self.walk(&self.root, "", 0, &mut out);
        out
    }

    fn walk(&self, dir: &Path, rel: &str, depth: usize, out: &mut Vec<Folder>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        let mut subdirs = Vec::new();
        let (mut records, mut report) = (0, false);
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() && !name.starts_with('.') {
                subdirs.push(name);
            } else if is_record_file(&p) {
                records += 1;
            } else if name == "report.md" {
                report = true;
            }
        }
        if records > 0 || report {
            out.push(Folder { rel: rel.to_string(), records, report });
        }
        if depth < DEPTH {
            subdirs.sort();
            for s in subdirs {
                let r = if rel.is_empty() { s.clone() } else { format!("{rel}/{s}") };
                self.walk(&dir.join(&s), &r, depth + 1, out);
            }
        }
    }

    /// The records of folder `rel`, by file name (files that are not records are skipped).
    pub fn entries(&self, rel: &str) -> Result<Vec<Entry>, String> {
        let dir = if rel.is_empty() { self.root.clone() } else { self.resolve(rel)? };
        let rd = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut files: Vec<PathBuf> =
            rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| is_record_file(p)).collect();
        files.sort();
        Ok(files
            .iter()
            .filter_map(|f| {
                let rec = MatchRecord::load(f)?;
                let name = f.file_name()?.to_string_lossy().into_owned();
                Some(Entry {
                    rel: if rel.is_empty() { name } else { format!("{rel}/{name}") },
                    game: game_name(&rec),
                    id: rec.match_id,
                    players: rec.player_names_from_host,
                    goals: rec.goal_values,
                    steps: rec.moves.len(),
                    completed: rec.is_completed,
                })
            })
            .collect())
    }

    /// The record `rel`.
    pub fn record(&self, rel: &str) -> Result<MatchRecord, String> {
        MatchRecord::read(&self.resolve(rel)?)
    }

    /// The text of `report.md` in folder `rel`, if there is one.
    pub fn report(&self, rel: &str) -> Option<String> {
        let dir = if rel.is_empty() { self.root.clone() } else { self.resolve(rel).ok()? };
        std::fs::read_to_string(dir.join("report.md")).ok()
    }
}

/// A record's game: its file's stem when the record names one, else its repository URL's
/// last part, else `?`.
pub fn game_name(rec: &MatchRecord) -> String {
    let from = if rec.factotum.game_path.is_empty() { &rec.game_meta_url } else { &rec.factotum.game_path };
    let last = from.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    match last.trim_end_matches(".kif") {
        "" => "?".into(),
        s => s.into(),
    }
}

/// A recorded state (`( ( cell 1 1 b ) ( control x ) )`) as its facts.
pub fn state_facts(state: &str) -> Vec<String> {
    let t = state.trim();
    let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else { return Vec::new() };
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, None);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => {
                if depth == 0 {
                    start = Some(i);
                }
                depth += 1;
            }
            ')' => {
                depth -= 1;
                if depth == 0 {
                    if let Some(s) = start.take() {
                        out.push(inner[s..=i].to_string());
                    }
                }
            }
            c if depth == 0 && !c.is_whitespace() => {
                // A bare atom fact (a proposition without arguments).
                if start.is_none() {
                    start = Some(i);
                }
                let next = inner[i + c.len_utf8()..].chars().next();
                if next.is_none_or(|n| n.is_whitespace() || n == '(') {
                    if let Some(s) = start.take() {
                        out.push(inner[s..=i].to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out.retain(|f| parse_fact(f).is_some());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_states_split_into_facts() {
        assert_eq!(
            state_facts("( ( cell 1 1 b ) ( control ( who x ) ) open )"),
            vec!["( cell 1 1 b )", "( control ( who x ) )", "open"]
        );
        assert_eq!(state_facts("( )"), Vec::<String>::new());
        assert_eq!(state_facts("garbage"), Vec::<String>::new());
    }

    #[test]
    fn paths_out_of_the_folder_are_refused() {
        let dir = std::env::temp_dir().join(format!("factotum-web-records-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("t")).unwrap();
        std::fs::write(dir.join("t/x.json"), "{}").unwrap();
        let r = Records::new(dir.clone());
        assert!(r.resolve("t/x.json").is_ok());
        for bad in ["../x", "/etc/passwd", "t/../../x", "nothing.json"] {
            assert!(r.resolve(bad).is_err(), "{bad}");
        }
        assert_eq!(r.folders(), vec![Folder { rel: "t".into(), records: 1, report: false }]);
        assert!(r.entries("t").unwrap().is_empty(), "`{{}}` is not a record");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
