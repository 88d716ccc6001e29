//! Tournaments: every game × every pair of players × every role assignment × `rounds`,
//! `parallel` matches at a time. Match ids are derived from the tournament name, the game,
//! the players in role order and the round, so a re-run finds the records already written
//! and plays only the matches whose record is missing or not finished.
//!
//! Role assignments: in a game of n ≥ 2 roles, pair (A, B) plays n matches per round, A in
//! role k and B in all the others (k = 0..n; for two roles, both ways round). A one-role
//! game is played by each player alone, `rounds` times; it counts for mean scores only.
//!
//! Sharding: the schedule's order is fixed by the config, so shard K of N (`run`'s `shard`)
//! plays the matches whose index is K-1 modulo N; N runs on N machines play every match
//! once. Each run copies its config beside its records ([`CONFIG_COPY`]), and a tournament
//! whose records are spread over several folders reads them all ([`Tournament::record_dirs`]).

use super::rating::{self, Pairing};
use super::record::MatchRecord;
use super::referee::{match_seed, rules_text, run_match, MatchSpec};
use super::{sanitize, PlayerSpec};
use crate::gdl::Game;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A tournament as written in TOML. Paths are relative to the current directory.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentConfig {
    /// Used in match ids and the default output folder (default: the config file's stem).
    pub name: Option<String>,
    /// `.kif` files.
    pub games: Vec<String>,
    /// Agent TOML files or `http://host:port` URLs.
    pub players: Vec<String>,
    /// Pairs to play (entries of `players`); default: every pair of distinct players.
    #[serde(default)]
    pub pairs: Vec<[String; 2]>,
    /// Each round plays every role assignment of every pair on every game once.
    #[serde(default = "one")]
    pub rounds: usize,
    #[serde(default = "ten")]
    pub startclock: u32,
    #[serde(default = "five")]
    pub playclock: u32,
    /// Matches run at once.
    #[serde(default = "one")]
    pub parallel: usize,
    /// Folder for the records and the report (default `matches/<name>`).
    pub out: Option<String>,
    #[serde(default = "one_u64")]
    pub seed: u64,
    /// Overrides every in-process agent's `margin_s`.
    pub margin_s: Option<f64>,
    /// The player whose rating is 0 (a `players` entry or its label); default: mean 0.
    pub anchor: Option<String>,
    /// Bootstrap resamples for the rating error bars.
    #[serde(default = "boots")]
    pub bootstrap: usize,
}

fn one() -> usize {
    1
}
fn one_u64() -> u64 {
    1
}
fn ten() -> u32 {
    10
}
fn five() -> u32 {
    5
}
fn boots() -> usize {
    500
}

impl TournamentConfig {
    pub fn load(path: &Path) -> Result<TournamentConfig, String> {
        Self::load_with_copy(path).map(|(cfg, _)| cfg)
    }

    /// The config at `path`, and the text a run copies beside its records ([`CONFIG_COPY`]):
    /// the file as read, once, with the name it took from its file's stem put first if it
    /// had none, so that `factotum report` over the copies gives the same match ids.
    pub fn load_with_copy(path: &Path) -> Result<(TournamentConfig, String), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut cfg: TournamentConfig = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if cfg.name.is_some() {
            return Ok((cfg, text));
        }
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let copy = format!("name = {}\n{text}", toml::Value::String(name.clone()));
        cfg.name = Some(name);
        Ok((cfg, copy))
    }
}

/// The name of the config's copy a run writes beside its records.
pub const CONFIG_COPY: &str = "tournament.toml";

/// One scheduled match.
#[derive(Clone)]
pub struct Scheduled {
    pub spec: MatchSpec,
    /// Index into [`Tournament::games`].
    pub game: usize,
    /// Player index per role.
    pub seats: Vec<usize>,
}

/// A loaded tournament: its players, games and schedule.
pub struct Tournament {
    pub name: String,
    pub cfg: TournamentConfig,
    pub players: Vec<PlayerSpec>,
    /// Game names (file stems).
    pub games: Vec<String>,
    pub out: PathBuf,
    pub schedule: Vec<Scheduled>,
    pub anchor: Option<usize>,
    /// Folders holding records, searched in order (empty: `out` alone).
    pub record_dirs: Vec<PathBuf>,
}

impl Tournament {
    pub fn new(cfg: TournamentConfig) -> Result<Tournament, String> {
        let name = sanitize(cfg.name.as_deref().unwrap_or("tournament"));
        if cfg.games.is_empty() || cfg.players.is_empty() {
            return Err("a tournament needs games and players".into());
        }
        if cfg.rounds == 0 || cfg.parallel == 0 || cfg.playclock == 0 || cfg.startclock == 0 {
            return Err("rounds, parallel, startclock and playclock must be at least 1".into());
        }
        let mut players = Vec::new();
        for p in &cfg.players {
            players.push(PlayerSpec::parse(p, cfg.margin_s)?);
        }
        // Unique labels (they name matches and table rows).
        for i in 0..players.len() {
            let l = sanitize(players[i].label());
            let clash = players[..i].iter().any(|q| q.label() == l);
            players[i].set_label(if clash { format!("{l}{i}") } else { l });
        }
        let index = |s: &str| -> Result<usize, String> {
            cfg.players
                .iter()
                .position(|p| p == s)
                .or_else(|| players.iter().position(|p| p.label() == s))
                .ok_or_else(|| format!("`{s}` is not one of the players"))
        };
        let pairs: Vec<(usize, usize)> = if cfg.pairs.is_empty() {
            (0..players.len()).flat_map(|a| ((a + 1)..players.len()).map(move |b| (a, b))).collect()
        } else {
            cfg.pairs.iter().map(|[a, b]| Ok((index(a)?, index(b)?))).collect::<Result<_, String>>()?
        };
        let anchor = cfg.anchor.as_deref().map(index).transpose()?;
        let out = PathBuf::from(cfg.out.clone().unwrap_or_else(|| format!("matches/{name}")));
        let mut games = Vec::new();
        let mut loaded = Vec::new();
        for g in &cfg.games {
            let text = std::fs::read_to_string(g).map_err(|e| format!("{g}: {e}"))?;
            let game = Game::parse(g, &text).map_err(|e| e.to_string())?;
            let rules = rules_text(&text).map_err(|e| format!("{g}: {e}"))?;
            let roles = game.roles().len();
            if roles == 0 {
                return Err(format!("{g}: the game has no roles"));
            }
            games.push(sanitize(&game.name));
            loaded.push((Arc::new(game), Arc::new(rules), roles, g.clone()));
        }
        if pairs.is_empty() {
            if let Some((_, _, roles, path)) = loaded.iter().find(|g| g.2 > 1) {
                return Err(format!("{path} has {roles} roles: a tournament needs at least two players to play it"));
            }
        }
        let mut schedule = Vec::new();
        for round in 0..cfg.rounds {
            for (gi, (game, rules, roles, path)) in loaded.iter().enumerate() {
                let mut seatings: Vec<Vec<usize>> = Vec::new();
                if *roles == 1 {
                    seatings.extend((0..players.len()).map(|p| vec![p]));
                } else {
                    for &(a, b) in &pairs {
                        for k in 0..*roles {
                            let s: Vec<usize> = (0..*roles).map(|r| if r == k { a } else { b }).collect();
                            if !seatings.contains(&s) {
                                seatings.push(s);
                            }
                        }
                    }
                }
                for seats in seatings {
                    let who: Vec<&str> = seats.iter().map(|&p| players[p].label()).collect();
                    let id = sanitize(&format!("{name}.{}.{}.{round}", games[gi], who.join("-")));
                    let spec = MatchSpec {
                        seed: match_seed(cfg.seed, &id),
                        id,
                        game_path: path.clone(),
                        game: game.clone(),
                        rules: rules.clone(),
                        players: seats.iter().map(|&p| players[p].clone()).collect(),
                        start_clock: cfg.startclock,
                        play_clock: cfg.playclock,
                        tournament: Some(name.clone()),
                        out: Some(out.clone()),
                    };
                    schedule.push(Scheduled { spec, game: gi, seats });
                }
            }
        }
        Ok(Tournament { name, cfg, players, games, out, schedule, anchor, record_dirs: Vec::new() })
    }

    /// The record of a scheduled match if it is finished (completed, or aborted other than
    /// by an interruption of the manager) and was played by the same players (the same
    /// agent files or URLs, as the record's own section keeps them; the files' settings are
    /// not compared) on the same rules and clocks.
    pub fn finished(&self, s: &Scheduled) -> Option<MatchRecord> {
        if self.record_dirs.is_empty() {
            return self.finished_in(&self.out, s);
        }
        self.record_dirs.iter().find_map(|d| self.finished_in(d, s))
    }

    fn finished_in(&self, dir: &Path, s: &Scheduled) -> Option<MatchRecord> {
        let rec = MatchRecord::load(&dir.join(format!("{}.json", s.spec.id)))?;
        // Players are known by how they were given (agent file or URL), not by the names
        // they give themselves (two copies of one program share a name).
        let same_players =
            rec.factotum.players.iter().map(String::as_str).eq(s.spec.players.iter().map(|p| p.source()));
        let same_rules = rec.factotum.rules_hash == super::record::fnv1a(s.spec.rules.as_bytes());
        let same_clocks = (rec.start_clock, rec.play_clock) == (s.spec.start_clock, s.spec.play_clock);
        let over = rec.is_completed || (rec.is_aborted && !rec.factotum.interrupted);
        (over && same_players && same_rules && same_clocks).then_some(rec)
    }
}

/// How a run went.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub scheduled: usize,
    /// Finished before this run (not replayed).
    pub skipped: usize,
    /// Played to their end in this run (completed, or aborted by the game or a player).
    pub played: usize,
    /// Matches that could not be set up.
    pub failed: usize,
    /// Still to play: past `max_matches`, or not started or aborted because the run was
    /// interrupted (they are played when the tournament is run again).
    pub remaining: usize,
    pub elapsed_s: f64,
}

/// Plays the matches not yet finished (at most `max_matches` of them), `parallel` at a
/// time, with a progress line per match on stderr. With `shard` (k, n): only the scheduled
/// matches whose index is k modulo n.
pub fn run(
    t: &Tournament,
    max_matches: Option<usize>,
    parallel: usize,
    shard: Option<(usize, usize)>,
) -> Result<RunStats, String> {
    std::fs::create_dir_all(&t.out).map_err(|e| format!("{}: {e}", t.out.display()))?;
    let t0 = Instant::now();
    let mine: Vec<&Scheduled> = match shard {
        Some((k, n)) => t.schedule.iter().enumerate().filter(|(i, _)| i % n == k).map(|(_, s)| s).collect(),
        None => t.schedule.iter().collect(),
    };
    let mut pending: Vec<&Scheduled> = mine.iter().copied().filter(|s| t.finished(s).is_none()).collect();
    let mut stats = RunStats { scheduled: mine.len(), skipped: mine.len() - pending.len(), ..RunStats::default() };
    if let Some(m) = max_matches {
        stats.remaining = pending.len().saturating_sub(m);
        pending.truncate(m);
    }
    eprintln!(
        "tournament {}{}: {} matches, {} already finished, {} to play now ({} in parallel); records in {}",
        t.name,
        shard.map_or(String::new(), |(k, n)| format!(" (shard {} of {n})", k + 1)),
        stats.scheduled,
        stats.skipped,
        pending.len(),
        parallel,
        t.out.display()
    );
    let failed = AtomicUsize::new(0);
    let base = stats.skipped;
    let results = crate::par::map(
        &pending,
        parallel,
        |s| {
            if super::interrupted() {
                return (s.spec.id.clone(), None);
            }
            let r = run_match(&s.spec);
            if let Err(e) = &r {
                tracing::error!(id = %s.spec.id, error = %e, "match not played");
                failed.fetch_add(1, Ordering::Relaxed);
            }
            (s.spec.id.clone(), Some(r))
        },
        |(id, r), k, n| {
            let el = t0.elapsed().as_secs_f64();
            let eta = el / k as f64 * (n - k) as f64;
            let what = match r {
                None => "not started: the tournament was interrupted".to_string(),
                Some(Ok(rec)) if rec.is_aborted => {
                    format!("aborted ({})", rec.factotum.abort_reason.as_deref().unwrap_or(""))
                }
                Some(Ok(rec)) => format!("goals {:?} errors {:?}", rec.goal_values, rec.error_counts()),
                Some(Err(e)) => format!("not played: {e}"),
            };
            eprintln!(
                "[{}/{}] {id}: {what} | {:.0}s elapsed, ETA {:.0}s",
                base + k,
                base + n + stats.remaining,
                el,
                eta
            );
        },
    );
    for (_, r) in &results {
        match r {
            Some(Ok(rec)) if !(rec.is_aborted && rec.factotum.interrupted) => stats.played += 1,
            Some(Err(_)) => {}
            // Not started, or aborted by the interruption: replayed by the next run.
            _ => stats.remaining += 1,
        }
    }
    stats.failed = failed.into_inner();
    stats.elapsed_s = t0.elapsed().as_secs_f64();
    Ok(stats)
}

/// One row of a results table.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub player: String,
    pub matches: usize,
    pub mean: f64,
    pub ci: f64,
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
    pub elo: f64,
    pub elo_err: f64,
    /// Errors recorded against the player (TO, IL, CE), over all its turns.
    pub errors: usize,
}

/// Results of one game, or of all games.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub title: String,
    pub matches: usize,
    pub rows: Vec<Row>,
}

/// A head-to-head line: `a` against `b` over all games.
#[derive(Clone, Debug)]
pub struct Head {
    pub a: String,
    pub b: String,
    pub matches: usize,
    pub a_mean: f64,
    pub a_ci: f64,
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
}

/// Everything the report shows.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub name: String,
    pub players: Vec<String>,
    pub anchor: Option<String>,
    pub scheduled: usize,
    pub completed: usize,
    pub aborted: usize,
    pub per_game: Vec<Table>,
    pub overall: Table,
    pub heads: Vec<Head>,
    pub start_clock: u32,
    pub play_clock: u32,
}

struct Played {
    game: usize,
    /// (player, score) per player in the match (a player in several roles: its mean goal).
    scores: Vec<(usize, f64)>,
    errors: Vec<(usize, usize)>,
}

/// Reads every finished record of the schedule and computes the tables.
pub fn summarize(t: &Tournament) -> Summary {
    let np = t.players.len();
    let mut played = Vec::new();
    let mut aborted = 0;
    for s in &t.schedule {
        let Some(rec) = t.finished(s) else { continue };
        if rec.is_aborted || rec.goal_values.len() != s.seats.len() {
            aborted += 1;
            continue;
        }
        let mut scores: Vec<(usize, f64)> = Vec::new();
        let mut errors: Vec<(usize, usize)> = Vec::new();
        let counts = rec.error_counts();
        let mut distinct: Vec<usize> = s.seats.clone();
        distinct.sort_unstable();
        distinct.dedup();
        for p in distinct {
            let goals: Vec<f64> =
                s.seats.iter().zip(&rec.goal_values).filter(|(&q, _)| q == p).map(|(_, &g)| g as f64).collect();
            scores.push((p, goals.iter().sum::<f64>() / goals.len() as f64));
            let e = s
                .seats
                .iter()
                .enumerate()
                .filter(|(_, &q)| q == p)
                .map(|(r, _)| counts.get(r).copied().unwrap_or(0))
                .sum();
            errors.push((p, e));
        }
        played.push(Played { game: s.game, scores, errors });
    }
    let table = |title: String, ms: &[&Played]| -> Table {
        let mut rows: Vec<Row> =
            (0..np).map(|p| Row { player: t.players[p].label().to_string(), ..Row::default() }).collect();
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); np];
        let mut pairings = Vec::new();
        for m in ms {
            for &(p, s) in &m.scores {
                samples[p].push(s);
            }
            for &(p, e) in &m.errors {
                rows[p].errors += e;
            }
            if let [(a, sa), (b, sb)] = m.scores[..] {
                let score = if sa > sb {
                    1.0
                } else if sa < sb {
                    0.0
                } else {
                    0.5
                };
                pairings.push(Pairing { a, b, score });
                let (ra, rb) = if score == 1.0 {
                    (0, 2)
                } else if score == 0.0 {
                    (2, 0)
                } else {
                    (1, 1)
                };
                for (p, r) in [(a, ra), (b, rb)] {
                    match r {
                        0 => rows[p].wins += 1,
                        1 => rows[p].draws += 1,
                        _ => rows[p].losses += 1,
                    }
                }
            }
        }
        let elo = rating::elo(np, &pairings, t.anchor, t.cfg.bootstrap, t.cfg.seed);
        for p in 0..np {
            let (mean, ci) = rating::mean_ci(&samples[p]);
            rows[p].matches = samples[p].len();
            rows[p].mean = mean;
            rows[p].ci = ci;
            rows[p].elo = elo[p].0;
            rows[p].elo_err = elo[p].1;
        }
        rows.retain(|r| r.matches > 0);
        rows.sort_by(|a, b| {
            b.elo.partial_cmp(&a.elo).unwrap_or(std::cmp::Ordering::Equal).then(b.mean.total_cmp(&a.mean))
        });
        Table { title, matches: ms.len(), rows }
    };
    let per_game = (0..t.games.len())
        .map(|g| table(t.games[g].clone(), &played.iter().filter(|m| m.game == g).collect::<Vec<_>>()))
        .collect();
    let overall = table("all games".into(), &played.iter().collect::<Vec<_>>());
    let mut heads = Vec::new();
    for a in 0..np {
        for b in (a + 1)..np {
            let mut xs = Vec::new();
            let (mut w, mut d, mut l) = (0, 0, 0);
            for m in &played {
                if let [(p, sp), (q, sq)] = m.scores[..] {
                    let (sa, sb) = if (p, q) == (a, b) {
                        (sp, sq)
                    } else if (p, q) == (b, a) {
                        (sq, sp)
                    } else {
                        continue;
                    };
                    xs.push(sa);
                    if sa > sb {
                        w += 1
                    } else if sa < sb {
                        l += 1
                    } else {
                        d += 1
                    }
                }
            }
            if !xs.is_empty() {
                let (a_mean, a_ci) = rating::mean_ci(&xs);
                heads.push(Head {
                    a: t.players[a].label().into(),
                    b: t.players[b].label().into(),
                    matches: xs.len(),
                    a_mean,
                    a_ci,
                    wins: w,
                    draws: d,
                    losses: l,
                });
            }
        }
    }
    Summary {
        name: t.name.clone(),
        players: t.players.iter().map(|p| p.label().to_string()).collect(),
        anchor: t.anchor.map(|a| t.players[a].label().to_string()),
        scheduled: t.schedule.len(),
        completed: played.len(),
        aborted,
        per_game,
        overall,
        heads,
        start_clock: t.cfg.startclock,
        play_clock: t.cfg.playclock,
    }
}
