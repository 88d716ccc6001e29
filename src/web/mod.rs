//! The web view: pages a person opens in a browser, served by `factotum serve` on the GGP
//! port (the protocol stays POST to `/`; the pages are GET, their API under `/api/`) and by
//! `factotum view DIR` over recorded matches.
//!
//! - the matches being played now ([`live`]), each with its board ([`board`]: a grid drawn
//!   from any game's `(cell X Y PIECE)`-shaped facts, else a sorted fact list), the last
//!   moves, the search's root moves with visits and values, and the traps it detected;
//! - recorded matches and tournament reports ([`records`]): a replay per match, stepped by a
//!   slider, and a tournament's ratings chart and tables;
//! - a match a person plays against the agent ([`kiosk`]).
//!
//! This module is HTTP-free: [`Web::route`] takes a method, a path and a body and returns a
//! [`WebReply`]; the server in `protocol` carries it. Every piece of HTML is rendered here
//! ([`pages`]); the pages' script only swaps fragments, steps replays and posts moves.
//!
//! | route | what |
//! |---|---|
//! | `GET /` | index: live matches, the kiosk's link, record folders |
//! | `GET /match/ID` | a live match (`GET /api/match/ID` its fragments as JSON) |
//! | `POST /api/match/ID/move` | a person's move (body: the move) |
//! | `GET /api/matches` | the live matches (JSON, with the list's HTML) |
//! | `GET /play`, `GET /api/roles?game=G`, `POST /api/kiosk` | the kiosk |
//! | `GET /records/DIR`, `GET /record/FILE`, `GET /raw/FILE` | folders, replays, files |

pub mod board;
pub mod kiosk;
pub mod live;
pub mod pages;
pub mod records;

use crate::agent::AgentConfig;
use crate::message::{percent_decode, url_decode};
use kiosk::{Kiosk, NewMatch};
use live::Live;
use records::Records;
use std::path::PathBuf;
use std::sync::Arc;

/// What the web view shows.
#[derive(Clone, Debug, Default)]
pub struct WebConfig {
    /// The agent that plays here (named on the index; the kiosk's opponent); `None` for
    /// `factotum view`, which plays no GGP.
    pub agent: Option<AgentConfig>,
    /// A folder of recorded matches and tournament reports to browse.
    pub records: Option<PathBuf>,
    /// A folder of `.kif` games a person may play against the agent.
    pub games: Option<PathBuf>,
    /// Where the kiosk's match records go.
    pub kiosk_out: Option<PathBuf>,
}

/// A reply: status, content type and body.
#[derive(Clone, Debug, PartialEq)]
pub struct WebReply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

const HTML: &str = "text/html; charset=utf-8";
const JSON: &str = "application/json";
const TEXT: &str = "text/plain; charset=utf-8";

fn reply(status: u16, content_type: &'static str, body: String) -> WebReply {
    WebReply { status, content_type, body }
}

fn not_found(what: &str) -> WebReply {
    reply(404, TEXT, format!("not found: {what}"))
}

/// The web view's state.
pub struct Web {
    pub live: Arc<Live>,
    agent: Option<String>,
    records: Option<Records>,
    kiosk: Option<Kiosk>,
}

/// Paths the web view answers (any other GET is a GGP message in the path, as ggp-base's
/// players accept).
const PREFIXES: [&str; 8] = ["/api/", "/match/", "/record/", "/records/", "/raw/", "/play", "/app.js", "/style.css"];

impl Web {
    pub fn new(cfg: WebConfig) -> Web {
        let live = Arc::new(Live::new());
        let kiosk = match (&cfg.games, &cfg.agent) {
            (Some(g), Some(a)) => Some(Kiosk::new(
                g.clone(),
                a.clone(),
                cfg.kiosk_out.clone().unwrap_or_else(|| kiosk::default_out().to_path_buf()),
                live.clone(),
            )),
            _ => None,
        };
        Web { live, agent: cfg.agent.as_ref().map(|a| a.name.clone()), records: cfg.records.map(Records::new), kiosk }
    }

    /// Whether `path` is the web view's (else a GET is a GGP message).
    pub fn handles(path: &str) -> bool {
        path == "/" || path == "/index.html" || PREFIXES.iter().any(|p| path.starts_with(p))
    }

    /// Answers one request. `path` may carry a query (`?game=...`).
    pub fn route(&self, method: &str, path: &str, body: &str) -> WebReply {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let path = percent_decode(path);
        let post = method.eq_ignore_ascii_case("POST");
        if let Some(rest) = path.strip_prefix("/api/match/") {
            if let Some(id) = rest.strip_suffix("/move") {
                if !post {
                    return reply(405, TEXT, "POST the move".into());
                }
                let Some(k) = &self.kiosk else { return not_found("the kiosk") };
                return match k.submit(id, body) {
                    Ok(()) => reply(200, TEXT, "ok".into()),
                    Err(e) => reply(409, TEXT, e),
                };
            }
            return match self.live.view(rest) {
                Some(m) => {
                    let parts: serde_json::Map<String, serde_json::Value> =
                        pages::match_parts(&m).into_iter().map(|(k, v)| (k.to_string(), v.into())).collect();
                    let v = serde_json::json!({ "match": m, "version": m.version, "parts": parts });
                    reply(200, JSON, v.to_string())
                }
                None => not_found(rest),
            };
        }
        if post {
            if path == "/api/kiosk" {
                let Some(k) = &self.kiosk else { return not_found("the kiosk") };
                let req: NewMatch = match serde_json::from_str(body) {
                    Ok(r) => r,
                    Err(e) => return reply(400, TEXT, format!("not a match request: {e}")),
                };
                return match k.start(&req) {
                    Ok(id) => reply(200, JSON, serde_json::json!({ "id": id }).to_string()),
                    Err(e) => reply(400, TEXT, e),
                };
            }
            return reply(405, TEXT, format!("{path} is not posted to"));
        }
        match path.as_str() {
            "/" | "/index.html" => {
                let fs = self.records.as_ref().map(Records::folders);
                reply(
                    200,
                    HTML,
                    pages::index(&self.live.list(), self.agent.as_deref(), self.kiosk.is_some(), fs.as_deref()),
                )
            }
            "/style.css" => reply(200, "text/css; charset=utf-8", pages::STYLE.into()),
            "/app.js" => reply(200, "text/javascript; charset=utf-8", pages::SCRIPT.into()),
            "/api/matches" => {
                let list = self.live.list();
                let html = pages::live_list(&list);
                reply(200, JSON, serde_json::json!({ "matches": list, "html": html }).to_string())
            }
            "/play" => match (&self.kiosk, &self.agent) {
                (Some(k), Some(a)) => reply(200, HTML, pages::play_page(&k.games(), a)),
                _ => not_found("the kiosk (serve with --games DIR)"),
            },
            "/api/games" => match &self.kiosk {
                Some(k) => reply(200, JSON, serde_json::json!(k.games()).to_string()),
                None => not_found("the kiosk"),
            },
            "/api/roles" => {
                let Some(k) = &self.kiosk else { return not_found("the kiosk") };
                let game = query.split('&').find_map(|kv| kv.strip_prefix("game=")).map(url_decode).unwrap_or_default();
                match k.roles(&game) {
                    Ok(r) => reply(200, JSON, serde_json::json!(r).to_string()),
                    Err(e) => reply(404, TEXT, e),
                }
            }
            p => self.route_more(p),
        }
    }

    fn route_more(&self, path: &str) -> WebReply {
        if let Some(id) = path.strip_prefix("/match/") {
            return match self.live.view(id) {
                Some(m) => reply(200, HTML, pages::match_page(&m)),
                None => not_found(id),
            };
        }
        let Some(recs) = &self.records else { return not_found(path) };
        if let Some(rel) = path.strip_prefix("/records/") {
            let rel = rel.trim_end_matches('/');
            return match recs.entries(rel) {
                Ok(entries) => {
                    let chart = recs.resolve(&join(rel, "report.svg")).is_ok();
                    let report = recs.report(rel);
                    reply(200, HTML, pages::folder_page(rel, report.as_deref(), chart, &entries))
                }
                Err(e) => reply(404, TEXT, e),
            };
        }
        if let Some(rel) = path.strip_prefix("/record/") {
            return match recs.record(rel) {
                Ok(rec) => reply(200, HTML, pages::replay_page(rel, &rec, &records::game_name(&rec))),
                Err(e) => reply(404, TEXT, e),
            };
        }
        if let Some(rel) = path.strip_prefix("/raw/") {
            let kind = match rel.rsplit('.').next() {
                Some("svg") => "image/svg+xml",
                Some("json") => JSON,
                Some("md" | "jsonl" | "toml" | "kif" | "txt") => TEXT,
                _ => return not_found(rel),
            };
            return match recs.resolve(rel).and_then(|p| std::fs::read_to_string(&p).map_err(|e| e.to_string())) {
                Ok(text) => reply(200, kind, text),
                Err(e) => reply(404, TEXT, e),
            };
        }
        not_found(path)
    }
}

fn join(dir: &str, file: &str) -> String {
    if dir.is_empty() {
        file.to_string()
    } else {
        format!("{dir}/{file}")
    }
}

#[cfg(test)]
mod tests;
