//! The game manager: runs matches between players as a GGP game manager does, writes match
//! records (ggp-base's JSON format) and runs tournaments with statistics and a report. The
//! only writer of `matches/`.
//!
//! - [`client`]: the [`client::PlayerClient`] trait (START/PLAY/STOP in text), the in-process
//!   adapter over [`crate::agent::Player`], and [`client::Seat`] (one thread per player, the
//!   manager's clock).
//! - [`remote`]: the HTTP client for remote players.
//! - [`referee`]: one match, refereed by our engine; errors recorded and replaced.
//! - [`record`]: the record format and atomic writes.
//! - [`tournament`]: config, schedule (games × pairs × role assignments × rounds), resume,
//!   parallel runs and progress.
//! - [`rating`]: means with confidence intervals, W/D/L, Bradley-Terry ratings as Elo.
//! - [`report`]: Markdown tables and an SVG chart.

pub mod client;
pub mod rating;
pub mod record;
pub mod referee;
pub mod remote;
pub mod replay;
pub mod report;
pub mod tournament;

use crate::agent::AgentConfig;
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether the manager was told to stop (SIGINT or SIGTERM, once [`stop_on_signals`] is
/// installed, or [`interrupt`]): running matches are aborted (ABORT sent to every player,
/// the record saved as aborted and interrupted, so a tournament replays it when resumed)
/// and no new match starts.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Asks running matches to stop, as a signal does.
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// The first SIGINT or SIGTERM asks matches to stop ([`interrupted`]); a second one ends
/// the process at once (exit code 130).
pub fn stop_on_signals() -> Result<(), String> {
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::Relaxed) {
            std::process::exit(130);
        }
        eprintln!("interrupted: aborting the matches in progress (again to quit at once)");
    })
    .map_err(|e| format!("cannot install the signal handler: {e}"))
}
use std::path::Path;

/// A player as given on the command line or in a tournament config.
#[derive(Clone, Debug)]
pub enum PlayerSpec {
    /// An agent configuration played in-process.
    Agent { path: String, label: String, cfg: AgentConfig },
    /// A GGP player over HTTP.
    Remote { url: String, label: String },
    /// A person, whose client the caller hands the referee ([`referee::run_match_with`]);
    /// recorded with ggp-base's `isPlayerHuman`.
    Human { label: String },
}

impl PlayerSpec {
    /// `http://...` is a remote player; anything else is an agent TOML file. `margin_s`
    /// overrides the agent's margin.
    pub fn parse(s: &str, margin_s: Option<f64>) -> Result<PlayerSpec, String> {
        if s.starts_with("http://") || s.starts_with("https://") {
            remote::check_url(s)?;
            let label = s.trim_start_matches("http://").trim_end_matches('/').replace([':', '/'], "_");
            return Ok(PlayerSpec::Remote { url: s.to_string(), label });
        }
        let mut cfg = AgentConfig::load(Path::new(s))?;
        if let Some(m) = margin_s {
            if !(m.is_finite() && m >= 0.0) {
                return Err(format!("margin_s must be a finite number >= 0, not {m}"));
            }
            cfg.margin_s = m;
        }
        let label = Path::new(s).file_stem().map(|x| x.to_string_lossy().into_owned()).unwrap_or_else(|| s.into());
        Ok(PlayerSpec::Agent { path: s.to_string(), label, cfg })
    }

    /// A short name: the agent file's stem, or the URL's host and port.
    pub fn label(&self) -> &str {
        match self {
            PlayerSpec::Agent { label, .. } | PlayerSpec::Remote { label, .. } | PlayerSpec::Human { label } => label,
        }
    }

    pub fn set_label(&mut self, l: String) {
        match self {
            PlayerSpec::Agent { label, .. } | PlayerSpec::Remote { label, .. } | PlayerSpec::Human { label } => {
                *label = l
            }
        }
    }

    /// As given: the TOML path or the URL (`human` for a person).
    pub fn source(&self) -> &str {
        match self {
            PlayerSpec::Agent { path, .. } => path,
            PlayerSpec::Remote { url, .. } => url,
            PlayerSpec::Human { .. } => "human",
        }
    }
}

/// Characters allowed in match ids (GGP atoms, file names): others become `_`.
pub fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests;
