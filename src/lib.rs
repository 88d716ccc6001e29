//! Factotum: a General Game Playing agent.
//!
//! Codemap (dependencies flow downwards only):
//! - [`gdl`]: parser, AST, symbols, printer, validation. Knows no game semantics.
//! - [`graph`]: small graph algorithms (strongly connected components).
//! - [`machine`]: the [`machine::StateMachine`] trait every engine implements; random playouts.
//! - [`interp`]: the GDL interpreter (fallback engine and test oracle).
//! - [`propnet`]: grounding, propositional network construction and optimization, and the
//!   propnet engine.
//! - [`factor`]: factoring (independent sub-games, latches, contingent factoring) over a
//!   propnet's `Net`.
//! - [`equilibrium`]: exact values and equilibrium strategies of small two-player games.
//! - [`equiv`]: agency equivalence of games (reduced game trees in canonical forms).
//! - [`hsg`]: hyperstate space graphs (reversible closures, critical actions, win / fail
//!   tags, headroom, loss distance) over the trait.
//! - [`heuristic`]: evaluations learned in the start clock (counts of base propositions,
//!   goal values) over the trait.
//! - [`search`]: random, first-legal, flat Monte Carlo and MCTS searchers over the trait.
//! - [`agent`]: agent configurations (TOML) and the per-match player in move texts.
//! - [`par`]: a small work pool for batch commands (a folder of files, a few threads).
//! - [`message`]: GGP messages (ggp-base's grammar, read by byte spans), replies'
//!   S-expressions, percent-decoding, the INFO reply; shared by the server, the manager's
//!   client and the web view.
//! - [`manager`]: the game manager: matches, records (ggp-base's JSON), tournaments, ratings,
//!   reports; the HTTP client for remote players. The only writer of `matches/`.
//! - [`conform`]: replays reference traces against an engine and reports disagreements.
//! - [`bench`]: playout benchmarks.
//! - [`web`]: the web view (live matches, replays, reports, a person's seat), HTTP-free:
//!   the protocol server and `factotum view` route requests to it.
//! - [`protocol`]: the GGP protocol over HTTP (the player's server; it carries [`web`]).

pub mod agent;
pub mod bench;
pub mod conform;
pub mod equilibrium;
pub mod equiv;
pub mod factor;
pub mod gdl;
pub mod graph;
pub mod heuristic;
pub mod hsg;
pub mod interp;
pub mod machine;
pub mod manager;
pub mod message;
pub mod par;
pub mod propnet;
pub mod protocol;
pub mod search;
pub mod similarity;
pub mod traps;
pub mod web;
