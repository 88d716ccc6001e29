//! The `factotum` command line: a thin shell over the library.

mod coverage;
mod equiv_cmd;
mod factor_cmd;
mod hsg_cmd;
mod replay_cmd;
mod solve_cmd;
mod traps_cmd;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use factotum::agent::duel::duel;
use factotum::agent::trap_log::TrapLog;
use factotum::agent::AgentConfig;
use factotum::bench::{bench_batch, bench_playouts};
use factotum::conform::{conform_dir, conform_trace, EngineBuilder, InterpBuilder, PropnetBuilder, TraceResult};
use factotum::gdl::{validate, Game, Severity};
use factotum::interp::Interpreter;
use factotum::manager;
use factotum::propnet::{self, Budget};
use factotum::protocol::{self, ServerConfig};
use factotum::web::WebConfig;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// mimalloc, not the system's allocator: building a large game's network (chess: six million
/// gates, each with its own input vector) spends much of its time making and freeing small
/// vectors. The search's hot path allocates nothing, so it does not care.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "factotum", version, about = "A General Game Playing agent: GDL in, propnet out, MCTS on top.")]
struct Cli {
    /// Write logs as JSON lines.
    #[arg(long, global = true)]
    log_json: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Copy, Clone, ValueEnum)]
enum Engine {
    /// The GDL interpreter.
    Interp,
    /// The propositional network (grounded; fails on games too large to ground).
    Propnet,
}

#[derive(Subcommand)]
enum Cmd {
    /// Parse and validate a game: roles, relations, strata and any problems (exit 2 on errors).
    Check { game: PathBuf },
    /// Replay reference traces (a .jsonl file, or a folder of them) and compare every state.
    Conform {
        trace: PathBuf,
        /// Folder of the .kif games the traces name (default: ../games beside the traces).
        #[arg(long)]
        games: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "interp")]
        engine: Engine,
        /// Give up on one game after this many seconds.
        #[arg(long, default_value_t = 120.0)]
        timeout_s: f64,
        /// Games replayed in parallel (folder mode).
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        /// Exit 0 when the only problems are time-outs (every state checked agreed).
        #[arg(long)]
        allow_timeout: bool,
        /// Exit 0 when games the engine could not build (a propnet over its budget) are the
        /// only other problems; they are still listed.
        #[arg(long)]
        allow_not_built: bool,
        /// A file naming games known to fail (one per line, `#` comments): they are still
        /// run and shown, but do not change the exit code.
        #[arg(long)]
        known_failures: Option<PathBuf>,
    },
    /// Ground a game and build its propnet: component counts before and after optimization,
    /// build time (exit 3 if it cannot be built within the budget).
    Propnet {
        /// A .kif game (or, with --all, a folder of them).
        game: PathBuf,
        /// Build every game of the folder GAME, each in a child process, and print a table.
        #[arg(long)]
        all: bool,
        /// With --all: kill a build whose resident memory passes this many GiB.
        #[arg(long, default_value_t = 4.0)]
        mem_gib: f64,
        /// With --all: builds run in parallel.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Write a Graphviz picture of the optimized network (for small games).
        #[arg(long)]
        dot: Option<PathBuf>,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 30.0)]
        budget_s: f64,
        /// Print one JSON line instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Factor analysis (Cox et al.): independent sub-games, the action-independent part,
    /// latches, contingent factoring; `--all DIR` prints a line per game.
    Factor {
        /// A .kif game (or, with --all, a folder of them).
        game: PathBuf,
        /// Analyse every game of the folder GAME, each in a child process, and print a table.
        #[arg(long)]
        all: bool,
        /// Print one JSON line instead of the report.
        #[arg(long)]
        json: bool,
        /// Write a Graphviz picture of the factors.
        #[arg(long)]
        dot: Option<PathBuf>,
        /// Give up building the propnet after this many seconds.
        #[arg(long, default_value_t = 30.0)]
        budget_s: f64,
        /// Check the product of the factors against the game on this many random playouts
        /// (exit 4 on a difference).
        #[arg(long, default_value_t = 20)]
        check: usize,
        /// Random playouts searched for contingent factoring when the game does not factor
        /// statically.
        #[arg(long, default_value_t = 10)]
        contingent: usize,
        /// The contingent search's work bound: network nodes analysed, summed over its
        /// analyses (about 5 s on the largest networks of the corpus, amazons: 355K nodes).
        /// A bound of work, not of time, so that the verdict is the same on every run.
        #[arg(long, default_value_t = 5_000_000)]
        contingent_work: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Give the static analysis at most this many milliseconds, as the player does in
        /// its start clock: past them every factor left is merged (never a wrong split) and
        /// the analysis ends with one more round, over one factor.
        #[arg(long)]
        deadline_ms: Option<f64>,
        /// With --all: kill an analysis whose resident memory passes this many GiB.
        #[arg(long, default_value_t = 4.0)]
        mem_gib: f64,
        /// With --all: analyses run in parallel.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
    },
    /// The exact value of a small two-player game and each role's security strategy (an
    /// equilibrium when the goals are constant-sum), by backward induction over the states
    /// and by the sequence form's linear program over the histories; exit 3 when the game is
    /// too large or cannot be solved, 4 if the two solvers disagree.
    Solve {
        game: PathBuf,
        /// Solve from the position after these moves (one per ply for the role with a choice,
        /// as `traps --moves`).
        #[arg(long)]
        moves: Option<String>,
        /// Give up beyond this many states (backward induction).
        #[arg(long, default_value_t = 1_000_000)]
        max_states: usize,
        /// Skip the sequence form beyond this many histories (0: skip it).
        #[arg(long, default_value_t = 20_000)]
        max_nodes: usize,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        /// Print one JSON line instead of the report.
        #[arg(long)]
        json: bool,
    },
    /// Whether two games are agency equivalent: their game trees equal up to relabeling of
    /// roles, moves and outcomes after the bookkeeping, single-player, symmetry and
    /// decision-matrix reductions; the role and move correspondence, or the first place where
    /// they differ and a distance. Exit 0 equivalent, 1 not, 3 if a game cannot be explored.
    Equiv {
        a: PathBuf,
        b: PathBuf,
        /// Give up beyond this many states per game.
        #[arg(long, default_value_t = 200_000)]
        max_states: usize,
        /// Give up after this many seconds (per game).
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        /// Print one JSON object instead of the report.
        #[arg(long)]
        json: bool,
    },
    /// The hyperstate space graph of a game from one role's view (Cook and Raad): states
    /// merged into hyperstates where mutually reachable, critical and reversible actions,
    /// win / fail / eventually winnable / implicitly failed tags, headroom, loss distance and
    /// the failure spectrum along the ideal path; exit 3 if the graph cannot be built.
    Hsg {
        game: PathBuf,
        /// The role whose wins are tagged (default: the first).
        #[arg(long)]
        role: Option<String>,
        /// A terminal state is a win when the role's goal is at least this.
        #[arg(long, default_value_t = 100)]
        win: u32,
        /// Stop adding states beyond this many (what is cut off is tagged open).
        #[arg(long, default_value_t = 1_000_000)]
        max_states: usize,
        /// Expand states up to this many joint moves from the start (depth-limited HSG).
        #[arg(long)]
        depth: Option<u32>,
        /// Stop exploring after this many seconds (what is left is tagged open).
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        /// Weak equivalence: compare states without the action-independent bases (step
        /// counters, turns) and unused ones, found in the propnet by factor analysis.
        #[arg(long)]
        weak: bool,
        /// Write the graph as Graphviz DOT.
        #[arg(long)]
        dot: Option<PathBuf>,
        /// Write the graph as a layered SVG picture.
        #[arg(long)]
        svg: Option<PathBuf>,
        /// Hyperstates drawn at most (those nearest the start).
        #[arg(long, default_value_t = 200)]
        draw: usize,
        /// Print one JSON object instead of the report.
        #[arg(long)]
        json: bool,
    },
    /// The traps of a position: each move of the role(s) to move after which the others can
    /// force a loss within DEPTH plies, with a refutation line (exact bounded search).
    Traps {
        /// A .kif game (or --chess).
        game: Option<PathBuf>,
        /// Chess by the shakmaty crate; --moves in SAN ("1.e4 e5 2.Nf3").
        #[arg(long)]
        chess: bool,
        /// Moves from the initial state, one per ply for the role with a choice
        /// ("(mark 1 1) (mark 2 2)"; in simultaneous plies, one per choosing role).
        #[arg(long)]
        moves: Option<String>,
        /// A ggp-base match record to take the position from (with --step).
        #[arg(long)]
        record: Option<PathBuf>,
        /// Joint moves of the record to play.
        #[arg(long)]
        step: Option<usize>,
        /// Plies after the move within which the loss must be forced.
        #[arg(long, default_value_t = 3)]
        depth: u32,
        /// The role whose moves are judged (default: every role with a choice).
        #[arg(long)]
        role: Option<String>,
        /// A loss is a goal at most this (default: the role's lowest goal value).
        #[arg(long)]
        loss: Option<u32>,
        /// States searched per move before it is called undecided.
        #[arg(long, default_value_t = 2_000_000)]
        budget: u64,
        #[arg(long)]
        json: bool,
        /// Summarise a trap log (`serve --trap-log`, `matches/ID.traps.jsonl`), or every
        /// `*.traps.jsonl` of a folder, instead: per game, traps found, avoided, and how found.
        #[arg(long, value_name = "FILE|DIR", conflicts_with_all = ["game", "chess", "moves", "record", "step"])]
        log: Option<PathBuf>,
    },
    /// Two positions compared by every similarity measure, and their moves matched
    /// (structural similarity's assignment; the most frequent pairs over two plies).
    Similar {
        /// A .kif game (or --chess).
        game: Option<PathBuf>,
        /// Chess by the shakmaty crate; positions in SAN.
        #[arg(long)]
        chess: bool,
        /// Moves from the initial state to the first position.
        #[arg(long)]
        a: String,
        /// Moves from the initial state to the second position.
        #[arg(long)]
        b: String,
        /// The role whose view gives rewards in both positions (default: each position's
        /// role with a choice, its side to move).
        #[arg(long)]
        role: Option<String>,
        /// Most frequent matches shown.
        #[arg(long, default_value_t = 5)]
        top: usize,
        #[arg(long)]
        json: bool,
    },
    /// The paper's experiment (Evans and Turrini, section 4): around trap states, how well
    /// each similarity measure tells the positions two plies later that keep the trap.
    Trapbench {
        /// A .kif game: trap states are found by random playouts.
        game: Option<PathBuf>,
        /// Chess trap positions instead, one per line: `name | depth | SAN moves`.
        #[arg(long)]
        chess: Option<PathBuf>,
        #[command(flatten)]
        opts: traps_cmd::BenchOpts,
    },
    /// Random playouts from the initial state: playouts/s and states/s, median of several runs.
    Bench {
        game: PathBuf,
        #[arg(long, value_enum, default_value = "interp")]
        engine: Engine,
        /// Seconds per run.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        #[arg(long, default_value_t = 5)]
        runs: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Longest playout, in joint moves.
        #[arg(long, default_value_t = 10_000)]
        max_depth: usize,
        /// Run the propnet's batch machine: one playout per bit, 64 per word, 256 lanes by
        /// default (states/s counts lane-steps; the last column divides by the lanes).
        #[arg(long)]
        batch: bool,
        /// With --batch: words per node (lanes = 64 × words): 1, 2, 4 or 8.
        #[arg(long, default_value_t = propnet::batch::BATCH_WORDS)]
        words: usize,
        /// With --engine propnet: no selected edges (to measure what they give).
        #[arg(long)]
        plain: bool,
        /// With --engine propnet: playouts end where goal latches decide every goal, as the
        /// player's do with agent key `goal_latches`.
        #[arg(long)]
        goal_latches: bool,
    },
    /// Meta-gaming as the player does it in the start clock (agent key `metagame`): self-play
    /// between the agent's candidate playouts (`metagame_candidates`: random, MAST, batched,
    /// and random and MAST with decisive moves) on the propnet, and the choice.
    Metagame {
        game: PathBuf,
        /// The agent whose search options the candidates share.
        #[arg(long, default_value = "agents/mcts_meta.toml")]
        agent: PathBuf,
        /// Seconds of self-play.
        #[arg(long, default_value_t = 4.0)]
        seconds: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print the result as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// A heuristic learned from random playouts as the player learns one in the start clock
    /// (agent key `heuristic`, `factotum::heuristic`): count features of the bases and goal
    /// values, fitted per role to the playouts' outcomes; the fit, or why none was kept.
    Heuristic {
        game: PathBuf,
        /// Seconds of random playouts (4000 playouts at most).
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print the result as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// Search speed side by side: each agent's searcher (threads included) searches the same
    /// positions, sampled along random playouts, for the same time; iterations per second.
    Searchbench {
        game: PathBuf,
        /// An agent TOML; give two or more to compare.
        #[arg(long = "agent", required = true)]
        agents: Vec<PathBuf>,
        #[arg(long, default_value_t = 8)]
        positions: usize,
        /// Seconds of search per agent and position.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print the result as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// Play: a GGP player over HTTP (register the printed address with a game manager).
    Serve {
        #[arg(long, default_value_t = 9147)]
        port: u16,
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0")]
        host: String,
        /// Agent configuration (TOML).
        #[arg(long, default_value = "agents/mcts.toml")]
        agent: PathBuf,
        /// Matches played at once; more are answered `busy`.
        #[arg(long, default_value_t = 4)]
        max_matches: usize,
        /// Connections open at once; more are closed on arrival.
        #[arg(long, default_value_t = 256)]
        max_connections: usize,
        /// Seconds a match may go without a message beyond its start clock + play clock
        /// before it is dropped as abandoned (its slot freed).
        #[arg(long, default_value_t = 60.0)]
        match_expiry: f64,
        /// Append every trap the searches detect to FILE, one JSON object per line
        /// (summarise it with `factotum traps --log FILE`).
        #[arg(long, value_name = "FILE")]
        trap_log: Option<PathBuf>,
        /// The web view (GET / on the same port) lets a person play the agent at the games
        /// (`.kif` files) of DIR.
        #[arg(long, value_name = "DIR")]
        games: Option<PathBuf>,
        /// Where those matches' records go.
        #[arg(long, value_name = "DIR", default_value = "matches/kiosk")]
        kiosk_out: PathBuf,
        /// The web view also browses the recorded matches and tournament reports in DIR.
        #[arg(long, value_name = "DIR")]
        records: Option<PathBuf>,
    },
    /// The web view over recorded matches and tournament reports: a page per folder (its
    /// tournament's ratings chart and tables), a replay per match. Open http://HOST:PORT/.
    View {
        /// A folder of match records (subfolders two levels down are listed too).
        dir: PathBuf,
        #[arg(long, default_value_t = 9148)]
        port: u16,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// Also let a person play an agent at the games of DIR (with `--agent`).
        #[arg(long, value_name = "DIR")]
        games: Option<PathBuf>,
        /// The agent people play (with `--games`).
        #[arg(long, default_value = "agents/mcts.toml")]
        agent: PathBuf,
        /// Where those matches' records go.
        #[arg(long, value_name = "DIR", default_value = "matches/kiosk")]
        kiosk_out: PathBuf,
    },
    /// The trap-avoidance suite: trap positions (by the exact trap finder) taken from the
    /// match records in DIR (real play), searched by each agent at each iteration budget;
    /// prints the share of positions where the agent's move is not a trap.
    Trapsuite {
        /// A folder of match records (ggp-base format with factotum.gamePath).
        dir: PathBuf,
        /// Agent configurations (TOML) to compare.
        #[arg(long = "agent", required = true)]
        agents: Vec<PathBuf>,
        /// Most positions per game (one per match at most).
        #[arg(long, default_value_t = 10)]
        per_game: usize,
        /// Skip this many joint moves of each match before looking for a trap.
        #[arg(long, default_value_t = 4)]
        min_ply: usize,
        /// Iteration budgets, comma separated.
        #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
        iterations: Vec<u64>,
        /// Trap depth (plies after the trap move).
        #[arg(long, default_value_t = 3)]
        depth: u32,
        /// States the trap finder searches per question before it gives up.
        #[arg(long, default_value_t = 200_000)]
        budget: u64,
        /// Before each position, the agent searches the role's last K positions of the match
        /// (same budget, same searcher), as it did in play: what similarity hints remember.
        #[arg(long, default_value_t = 0)]
        history: usize,
        #[arg(long)]
        json: bool,
    },
    /// Agent A against agent B on one game for a number of matches (no HTTP), alternating
    /// roles; prints scores, late replies and errors.
    Duel {
        game: PathBuf,
        #[arg(long)]
        a: PathBuf,
        #[arg(long)]
        b: PathBuf,
        #[arg(long, default_value_t = 10)]
        matches: usize,
        /// Play clock in seconds (each agent searches for the clock less its margin).
        #[arg(long, default_value_t = 3.0)]
        playclock: f64,
        /// Print the report as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// Run one match as a GGP game manager: each player is an agent TOML (played in-process)
    /// or a GGP player's URL (http://host:port), one per role in role order; writes the
    /// record (ggp-base's JSON match format) to OUT/ID.json.
    Match {
        game: PathBuf,
        /// An agent TOML or an http:// URL; one per role, in role order.
        #[arg(long = "player", required = true)]
        players: Vec<String>,
        #[arg(long, default_value_t = 10)]
        startclock: u32,
        #[arg(long, default_value_t = 5)]
        playclock: u32,
        /// Folder for the record.
        #[arg(long, default_value = "matches")]
        out: PathBuf,
        /// Match id (default: the game's name and the time).
        #[arg(long)]
        id: Option<String>,
        /// Seeds replacement moves and the in-process agents.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Overrides the in-process agents' margin_s.
        #[arg(long)]
        margin_s: Option<f64>,
        /// Exit 0 even when a player produced connection errors (a dead or unreachable
        /// player's moves were replaced by random ones).
        #[arg(long)]
        allow_player_errors: bool,
    },
    /// Run a tournament (TOML config): games × pairs × role assignments × rounds, in parallel,
    /// resumable (finished records in the output folder are not replayed); writes
    /// report.md and report.svg beside the records.
    Tournament {
        config: PathBuf,
        /// Play at most this many matches in this run (the rest on a later run).
        #[arg(long)]
        max_matches: Option<usize>,
        /// Matches at once (default: the config's `parallel`).
        #[arg(long)]
        parallel: Option<usize>,
        /// Play only shard K of N (K in 1..=N): the scheduled matches whose index is K-1
        /// modulo N, so N machines can share a tournament; `factotum report` merges them.
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
        /// Folder for the records and the report (default: the config's `out`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The report of a tournament whose records are in one or more folders (the shards of
    /// `tournament --shard`): each folder holds the `tournament.toml` its run copied there
    /// (all the same); run from the folder the tournament was run from (its paths are
    /// relative to it). Writes report.md and report.svg to --out (default: the first folder).
    Report {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Replay a match record (ours, or any ggp-base-format record such as its GameServer's or
    /// Tiltyard's) on our engine: each move's legality, each state, the ending and the goals.
    /// Exit 0 if it replays cleanly, 1 if not, 3 if the record or its game cannot be read.
    Replay {
        record: PathBuf,
        /// The game's rules (default: the game file the record names).
        #[arg(long)]
        game: Option<PathBuf>,
        /// Print one JSON object instead of the steps.
        #[arg(long)]
        json: bool,
    },
}

fn init_logs(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let b = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        b.json().init();
    } else {
        b.init();
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs(cli.log_json);
    match run(cli.cmd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn load(path: &Path) -> Result<Game, ExitCode> {
    Game::load(path).map_err(|e| {
        eprintln!("{e}");
        ExitCode::from(2)
    })
}

/// The game, the agents' configurations and the game's propnet, or the exit code of a
/// message already printed.
fn agents_on_propnet(
    game: &Path,
    agents: &[PathBuf],
) -> Result<(Game, Vec<AgentConfig>, propnet::PropnetMachine), ExitCode> {
    let g = load(game)?;
    let cfgs = agents.iter().map(|a| AgentConfig::load(a)).collect::<Result<Vec<_>, _>>().map_err(|e| {
        eprintln!("{e}");
        ExitCode::from(2)
    })?;
    // With the batch machine attached: agents with batched playouts use it, others ignore it.
    let (m, _) = propnet::build_with(&g, &Budget::default(), true).map_err(|e| {
        eprintln!("{}: {e}", game.display());
        ExitCode::from(2)
    })?;
    Ok((g, cfgs, m))
}

fn run(cmd: Cmd) -> Result<ExitCode> {
    match cmd {
        Cmd::Check { game } => Ok(check(&game)),
        Cmd::Conform { trace, games, engine, timeout_s, jobs, allow_timeout, allow_not_built, known_failures } => {
            let known: Vec<String> = match &known_failures {
                Some(p) => std::fs::read_to_string(p)?
                    .lines()
                    .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
                    .filter(|l| !l.is_empty())
                    .collect(),
                None => Vec::new(),
            };
            let games = games.unwrap_or_else(|| {
                let dir = if trace.is_dir() {
                    trace.clone()
                } else {
                    trace.parent().map(Path::to_path_buf).unwrap_or_default()
                };
                dir.join("../games")
            });
            let limit = Duration::from_secs_f64(timeout_s);
            let results = match engine {
                Engine::Interp => conform_any(&InterpBuilder, &trace, &games, limit, jobs)?,
                Engine::Propnet => conform_any(&PropnetBuilder, &trace, &games, limit, jobs)?,
            };
            print_conformance(&results);
            for r in results.iter().filter(|r| r.outcome.is_pass() && known.contains(&r.game)) {
                println!("note: {} is listed as a known failure but now passes", r.game);
            }
            let ok = |r: &TraceResult| {
                r.outcome.is_pass()
                    || known.contains(&r.game)
                    || (allow_timeout && r.outcome == factotum::conform::Outcome::Timeout)
                    || (allow_not_built && matches!(r.outcome, factotum::conform::Outcome::NotBuilt(_)))
            };
            Ok(if results.iter().all(ok) { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Cmd::Searchbench { game, agents, positions, seconds, seed, json } => {
            use factotum::agent::search_bench::{median, search_speed};
            let (g, cfgs, m) = match agents_on_propnet(&game, &agents) {
                Ok(x) => x,
                Err(code) => return Ok(code),
            };
            let time = Duration::from_secs_f64(seconds.max(0.001));
            let ps = search_speed(&m, &cfgs, positions, time, seed);
            let med: Vec<f64> = (0..cfgs.len()).map(|a| median(ps.iter().map(|p| p.rates[a]).collect())).collect();
            // Per position, each agent's rate over the first agent's: the median of ratios.
            let ratio: Vec<f64> = (0..cfgs.len())
                .map(|a| median(ps.iter().filter(|p| p.rates[0] > 0.0).map(|p| p.rates[a] / p.rates[0]).collect()))
                .collect();
            if json {
                let v = serde_json::json!({
                    "game": g.name, "positions": ps.len(), "seconds": seconds,
                    "agents": agents.iter().enumerate().map(|(a, p)| serde_json::json!({
                        "agent": p.display().to_string(), "median_iterations_per_s": med[a],
                        "median_ratio_to_first": ratio[a],
                        "per_position": ps.iter().map(|p| p.rates[a]).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                });
                println!("{v}");
            } else {
                println!("| game | agent | positions | median iterations/s | median ratio to the first |");
                println!("|---|---|---|---|---|");
                for (a, p) in agents.iter().enumerate() {
                    println!("| {} | {} | {} | {:.0} | {:.2} |", g.name, p.display(), ps.len(), med[a], ratio[a]);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Heuristic { game, seconds, seed, json } => {
            let g = match load(&game) {
                Ok(g) => g,
                Err(code) => return Ok(code),
            };
            let mut m = match propnet::build(&g, &Budget::default()) {
                Ok((m, _)) => m,
                Err(e) => {
                    eprintln!("{}: {e}", game.display());
                    return Ok(ExitCode::from(2));
                }
            };
            let until = std::time::Instant::now() + Duration::from_secs_f64(seconds.max(0.0));
            let l = factotum::heuristic::learn(&mut m, seed, until);
            let roles = factotum::machine::StateMachine::roles(&m).to_vec();
            if json {
                let v = serde_json::json!({
                    "game": g.name, "found": l.heuristic.as_ref().map(|h| h.summary(&roles)),
                    "quality": l.quality, "best": l.best, "playouts": l.playouts,
                    "candidates": l.candidates, "millis": l.millis,
                });
                println!("{v}");
            } else {
                match &l.heuristic {
                    Some(h) => println!("{}: {}", g.name, h.summary(&roles)),
                    None => println!("{}: none", g.name),
                }
                println!("| role | held-out quality | best single feature | its correlation |");
                println!("|---|---|---|---|");
                for (r, name) in roles.iter().enumerate() {
                    let (f, c) = l.best.get(r).cloned().unwrap_or_default();
                    println!("| {name} | {:.3} | {f} | {c:.3} |", l.quality[r]);
                }
                println!("{} playouts, {} candidate features, {} ms", l.playouts, l.candidates, l.millis);
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Metagame { game, agent, seconds, seed, json } => {
            let (g, cfgs, m) = match agents_on_propnet(&game, std::slice::from_ref(&agent)) {
                Ok(x) => x,
                Err(code) => return Ok(code),
            };
            let cfg = &cfgs[0];
            let until = std::time::Instant::now() + Duration::from_secs_f64(seconds.max(0.0));
            let gate = cfg.decisive_gate.then(|| {
                let now = std::time::Instant::now();
                factotum::search::metagame::decisive_gate(&m, seed, now + until.saturating_duration_since(now) / 8)
            });
            let candidates = match &gate {
                Some(g) => g.candidates(&cfg.metagame_candidates),
                None => cfg.metagame_candidates.clone(),
            };
            let learned = cfg.heuristic.then(|| factotum::heuristic::learn_within(&mut m.clone(), seed, until));
            let heuristic = learned.as_ref().and_then(|l| l.heuristic.clone()).map(std::sync::Arc::new);
            let t = factotum::search::metagame::choose_playout(
                &m,
                cfg.mcts_config(seed),
                &candidates,
                cfg.threads,
                until,
                heuristic.as_ref(),
            );
            let name = |c: factotum::search::metagame::Candidate| c.to_string();
            if json {
                let v = serde_json::json!({
                    "game": g.name, "games": t.games, "move_ms": t.move_ms, "millis": t.millis,
                    "chosen": name(t.chosen),
                    "gate": gate.as_ref().map(|g| serde_json::json!({
                        "on": g.on, "cost": g.cost, "branching": g.branching,
                        "tries_per_ply": g.tries_per_ply, "overrides_per_ply": g.overrides_per_ply,
                        "turn_taking": g.turn_taking, "measured": g.measured, "millis": g.millis,
                    })),
                    "heuristic": learned.as_ref().map(|l| serde_json::json!({
                        "found": l.heuristic.as_ref().map(|h| h.summary(factotum::machine::StateMachine::roles(&m))),
                        "quality": l.quality, "playouts": l.playouts, "candidates": l.candidates,
                        "millis": l.millis,
                    })),
                    "candidates": t.candidates.iter().enumerate().map(|(i, &c)| serde_json::json!({
                        "playout": name(c), "mean": t.mean(i), "played": t.score[i].1,
                    })).collect::<Vec<_>>(),
                });
                println!("{v}");
            } else {
                if let Some(g) = &gate {
                    println!("decisive moves' gate: {} in {} ms\n", g.summary(), g.millis);
                }
                if let Some(l) = &learned {
                    match &l.heuristic {
                        Some(h) => println!("heuristic: {} in {} ms\n", h.summary(factotum::machine::StateMachine::roles(&m)), l.millis),
                        None => println!(
                            "heuristic: none (held-out quality per role {:?}, best single features {:?}, {} playouts) in {} ms\n",
                            l.quality, l.best, l.playouts, l.millis
                        ),
                    }
                }
                println!("| game | self-play games | ms/move | candidate | games played | mean goal | chosen |");
                println!("|---|---|---|---|---|---|---|");
                for (i, &c) in t.candidates.iter().enumerate() {
                    let mark = if c == t.chosen { "yes" } else { "" };
                    println!(
                        "| {} | {} | {} | {} | {} | {:.1} | {mark} |",
                        g.name,
                        t.games,
                        t.move_ms,
                        name(c),
                        t.score[i].1,
                        100.0 * t.mean(i)
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench { game, engine, seconds, runs, seed, max_depth, batch, words, plain, goal_latches } => {
            let g = match load(&game) {
                Ok(g) => g,
                Err(code) => return Ok(code),
            };
            let time = Duration::from_secs_f64(seconds);
            // The batch machine adds a column: states/s per lane.
            if batch {
                println!("| game | engine | runs | median playouts/s | median states/s | per lane |");
                println!("|---|---|---|---|---|---|");
            } else {
                println!("| game | engine | runs | median playouts/s | median states/s |");
                println!("|---|---|---|---|---|");
            }
            let lanes = if batch { 64 * words } else { 1 };
            let (name, r) = match engine {
                _ if batch => match propnet::build_net(&g, &Budget::default()) {
                    Ok(b) => match words {
                        1 => ("batch", batch_bench::<1>(&b.net, time, runs, seed, max_depth)),
                        2 => ("batch", batch_bench::<2>(&b.net, time, runs, seed, max_depth)),
                        4 => ("batch", batch_bench::<4>(&b.net, time, runs, seed, max_depth)),
                        8 => ("batch", batch_bench::<8>(&b.net, time, runs, seed, max_depth)),
                        _ => {
                            eprintln!("--words: 1, 2, 4 or 8");
                            return Ok(ExitCode::from(2));
                        }
                    },
                    Err(e) => {
                        eprintln!("{}: {e}", game.display());
                        return Ok(ExitCode::from(2));
                    }
                },
                Engine::Interp => match Interpreter::new(&g) {
                    Ok(mut m) => ("interp", bench_playouts(&mut m, time, runs, seed, max_depth)),
                    Err(e) => {
                        eprintln!("{}: {e}", game.display());
                        return Ok(ExitCode::from(2));
                    }
                },
                Engine::Propnet => match propnet::build_net(&g, &Budget::default()) {
                    Ok(b) => {
                        let c = if plain {
                            propnet::Compiled::without_selection(&b.net, b.grounding_terms, b.symbols)
                        } else {
                            propnet::Compiled::new(&b.net, b.grounding_terms, b.symbols)
                        };
                        let mut m = propnet::PropnetMachine::new(c);
                        if goal_latches {
                            let table = factotum::factor::outcome::playout_table(&b.net);
                            eprintln!("goal latches: {} (playouts end where they decide every goal)", table.len());
                            m.set_goal_latches(&table);
                        }
                        let c = m.compiled();
                        let (edges, families, groups) = c.selected_counts();
                        eprintln!(
                            "propnet machine: {} nodes, {} lazy, {} guarded legal, {edges} selected edges in {families} families over {groups} groups",
                            c.node_count(),
                            c.lazy_count(),
                            c.guarded_count()
                        );
                        ("propnet", bench_playouts(&mut m, time, runs, seed, max_depth))
                    }
                    Err(e) => {
                        eprintln!("{}: {e}", game.display());
                        return Ok(ExitCode::from(2));
                    }
                },
            };
            let (p, st) = (r.median_playouts_per_s(), r.median_states_per_s());
            if batch {
                let per_lane = st / lanes as f64;
                println!("| {} | {name} x{lanes} | {} | {p:.0} | {st:.0} | {per_lane:.0} |", g.name, r.runs.len());
            } else {
                println!("| {} | {name} | {} | {p:.0} | {st:.0} |", g.name, r.runs.len());
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Serve {
            port,
            host,
            agent,
            max_matches,
            max_connections,
            match_expiry,
            trap_log,
            games,
            kiosk_out,
            records,
        } => {
            let agent = AgentConfig::load(&agent).map_err(anyhow::Error::msg)?;
            if !(match_expiry.is_finite() && match_expiry >= 0.0) {
                anyhow::bail!("--match-expiry must be a finite number of seconds >= 0, not {match_expiry}");
            }
            let match_expiry = Duration::from_secs_f64(match_expiry);
            let trap_log = trap_log.map(|p| TrapLog::open(&p)).transpose().map_err(anyhow::Error::msg)?;
            for d in games.iter().chain(&records) {
                if !d.is_dir() {
                    anyhow::bail!("{}: not a folder", d.display());
                }
            }
            let web = WebConfig { agent: None, records, games, kiosk_out: Some(kiosk_out) };
            let cfg = ServerConfig {
                agent,
                max_matches,
                max_connections,
                match_expiry,
                trap_log,
                web,
                ..ServerConfig::default()
            };
            protocol::serve(&format!("{host}:{port}"), cfg, |addr| {
                println!(
                    "factotum listening on {addr}: register http://HOST:{} with the game manager; web view at http://HOST:{}/",
                    addr.port(),
                    addr.port()
                );
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::View { dir, port, host, games, agent, kiosk_out } => {
            for d in std::iter::once(&dir).chain(&games) {
                if !d.is_dir() {
                    anyhow::bail!("{}: not a folder", d.display());
                }
            }
            // The kiosk's agent is only needed (and only read) when people may play.
            let agent = match &games {
                Some(_) => Some(AgentConfig::load(&agent).map_err(anyhow::Error::msg)?),
                None => None,
            };
            let web = WebConfig { agent, records: Some(dir), games, kiosk_out: Some(kiosk_out) };
            let cfg = ServerConfig { plays: false, web, ..ServerConfig::default() };
            protocol::serve(&format!("{host}:{port}"), cfg, |addr| {
                println!("factotum view: open http://{addr}/");
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Duel { game, a, b, matches, playclock, json } => {
            let g = match load(&game) {
                Ok(g) => g,
                Err(code) => return Ok(code),
            };
            let (ca, cb) = (
                AgentConfig::load(&a).map_err(anyhow::Error::msg)?,
                AgentConfig::load(&b).map_err(anyhow::Error::msg)?,
            );
            let clock = Duration::from_secs_f64(playclock);
            let rep = duel(&g, &ca, &cb, matches, clock, &|i, goals, a_role| {
                eprintln!("match {}: A plays role {a_role}, goals {goals:?}", i + 1);
            })
            .map_err(anyhow::Error::msg)?;
            if json {
                println!("{}", serde_json::to_string(&rep)?);
            } else {
                println!("| game | A | B | matches | A score | B score | A wins | B wins | draws | late | errors | A it/move | B it/move |");
                println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
                println!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.0} |",
                    g.name,
                    a.display(),
                    b.display(),
                    rep.matches,
                    rep.a_score,
                    rep.b_score,
                    rep.a_wins,
                    rep.b_wins,
                    rep.draws,
                    rep.late,
                    rep.errors,
                    rep.a_iterations_per_move,
                    rep.b_iterations_per_move
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Match { game, players, startclock, playclock, out, id, seed, margin_s, allow_player_errors } => {
            match_cmd(&game, &players, startclock, playclock, &out, id, seed, margin_s, allow_player_errors)
        }
        Cmd::Tournament { config, max_matches, parallel, shard, out } => {
            tournament_cmd(&config, max_matches, parallel, shard.as_deref(), out)
        }
        Cmd::Report { dirs, out } => report_cmd(&dirs, out),
        Cmd::Replay { record, game, json } => replay_cmd::replay_cmd(&record, game.as_deref(), json),
        Cmd::Solve { game, moves, max_states, max_nodes, seconds, json } => {
            solve_cmd::solve_cmd(&game, &solve_cmd::SolveArgs { moves, max_states, max_nodes, seconds, json })
        }
        Cmd::Equiv { a, b, max_states, seconds, json } => {
            equiv_cmd::equiv_cmd(&a, &b, &equiv_cmd::EquivArgs { max_states, seconds, json })
        }
        Cmd::Hsg { game, role, win, max_states, depth, seconds, weak, dot, svg, draw, json } => hsg_cmd::hsg_cmd(
            &game,
            &hsg_cmd::HsgArgs { role, win, max_states, depth, seconds, weak, dot, svg, draw, json },
        ),
        Cmd::Traps { log: Some(log), json, .. } => traps_cmd::summarise_log(&log, json),
        Cmd::Traps { game, chess, moves, record, step, depth, role, loss, budget, json, log: None } => {
            let p = traps_cmd::Position { moves, record, step };
            traps_cmd::traps(game.as_deref(), chess, &p, &traps_cmd::TrapsOpts { depth, role, loss, budget, json })
        }
        Cmd::Trapsuite { dir, agents, per_game, min_ply, iterations, depth, budget, history, json } => {
            traps_cmd::trapsuite(
                &dir,
                &traps_cmd::SuiteOpts { agents, per_game, min_ply, iterations, depth, budget, history, json },
            )
        }
        Cmd::Similar { game, chess, a, b, role, top, json } => {
            traps_cmd::similar(game.as_deref(), chess, &a, &b, &traps_cmd::SimilarOpts { role, top, json })
        }
        Cmd::Trapbench { game, chess, opts: o } => match (game, chess) {
            (None, Some(file)) => traps_cmd::trapbench_chess(&file, &o),
            (Some(game), None) => traps_cmd::trapbench_game(&game, &o),
            _ => {
                eprintln!("trapbench: give a GAME.kif or --chess FILE");
                Ok(ExitCode::from(2))
            }
        },
        Cmd::Factor {
            game,
            all,
            json,
            dot,
            budget_s,
            check,
            contingent,
            contingent_work,
            seed,
            deadline_ms,
            mem_gib,
            jobs,
        } => {
            let o = factor_cmd::Opts { budget_s, json, check, contingent, contingent_work, seed, deadline_ms };
            if all {
                factor_cmd::factor_all(&game, &o, mem_gib, jobs)
            } else {
                factor_cmd::factor_one(&game, dot.as_deref(), &o)
            }
        }
        Cmd::Propnet { game, all: true, mem_gib, jobs, budget_s, .. } => {
            let rows = coverage::run_all(&game, budget_s, mem_gib * 1024.0, jobs)?;
            coverage::print(&rows, budget_s, mem_gib * 1024.0);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Propnet { game, dot, budget_s, json, .. } => propnet_cmd(&game, dot.as_deref(), budget_s, json),
    }
}

#[allow(clippy::too_many_arguments)]
fn match_cmd(
    path: &Path,
    players: &[String],
    startclock: u32,
    playclock: u32,
    out: &Path,
    id: Option<String>,
    seed: u64,
    margin_s: Option<f64>,
    allow_player_errors: bool,
) -> Result<ExitCode> {
    if startclock == 0 || playclock == 0 {
        anyhow::bail!("startclock and playclock must be at least 1 s");
    }
    let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let game = match Game::parse(&path.display().to_string(), &text) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(2));
        }
    };
    let specs = players
        .iter()
        .map(|p| manager::PlayerSpec::parse(p, margin_s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    let id = manager::sanitize(&id.unwrap_or_else(|| format!("{}.{}", game.name, manager::record::now_ms())));
    std::fs::create_dir_all(out)?;
    let spec = manager::referee::MatchSpec {
        seed: manager::referee::match_seed(seed, &id),
        id,
        game_path: path.display().to_string(),
        rules: std::sync::Arc::new(manager::referee::rules_text(&text).map_err(anyhow::Error::msg)?),
        game: std::sync::Arc::new(game),
        players: specs,
        start_clock: startclock,
        play_clock: playclock,
        tournament: None,
        out: Some(out.to_path_buf()),
    };
    manager::stop_on_signals().map_err(anyhow::Error::msg)?;
    let rec = manager::referee::run_match(&spec).map_err(anyhow::Error::msg)?;
    println!("| role | player | goal | errors |");
    println!("|---|---|---|---|");
    let counts = rec.error_counts();
    for (r, role) in rec.factotum.roles.iter().enumerate() {
        println!(
            "| {role} | {} | {} | {} |",
            rec.player_names_from_host[r],
            rec.goal_values.get(r).map_or("–".to_string(), |g| g.to_string()),
            counts.get(r).copied().unwrap_or(0)
        );
    }
    let state = if rec.is_completed { "completed" } else { "aborted" };
    println!(
        "match {} {state} after {} joint moves; record {}",
        rec.match_id,
        rec.moves.len(),
        out.join(format!("{}.json", rec.match_id)).display()
    );
    if rec.factotum.interrupted {
        eprintln!("interrupted: the match was aborted (ABORT sent to the players)");
        return Ok(ExitCode::from(130));
    }
    if !rec.is_completed {
        return Ok(ExitCode::from(1));
    }
    // A player that could not be reached had its moves replaced by random ones (and may be
    // credited with a win): not a clean match.
    let failed: Vec<String> = rec
        .factotum
        .roles
        .iter()
        .enumerate()
        .filter_map(|(r, role)| {
            let ce = rec.errors.iter().filter(|e| e.get(r).is_some_and(|x| x == manager::record::CONNECTION)).count();
            (ce > 0).then(|| {
                format!(
                    "{} ({role}): {ce} of {} requests failed to connect",
                    spec.players[r].source(),
                    rec.errors.len()
                )
            })
        })
        .collect();
    if !failed.is_empty() && !allow_player_errors {
        eprintln!("player errors: {} (--allow-player-errors to accept)", failed.join("; "));
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// `K/N` with 1 ≤ K ≤ N, as (K - 1, N).
fn parse_shard(text: &str) -> Result<(usize, usize)> {
    let bad = || anyhow::anyhow!("--shard takes K/N with 1 <= K <= N, such as 2/4, not `{text}`");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if k == 0 || k > n {
        return Err(bad());
    }
    Ok((k - 1, n))
}

/// Writes the tournament's report (markdown and SVG) to its folder and prints it.
fn write_report(t: &manager::tournament::Tournament) -> Result<()> {
    let summary = manager::tournament::summarize(t);
    let md = manager::report::markdown(&summary);
    manager::record::write_atomic(&t.out.join("report.md"), md.as_bytes())?;
    manager::record::write_atomic(&t.out.join("report.svg"), manager::report::svg(&summary).as_bytes())?;
    print!("{md}");
    Ok(())
}

fn tournament_cmd(
    config: &Path,
    max_matches: Option<usize>,
    parallel: Option<usize>,
    shard: Option<&str>,
    out: Option<PathBuf>,
) -> Result<ExitCode> {
    let shard = shard.map(parse_shard).transpose()?;
    let (mut cfg, copy) = manager::tournament::TournamentConfig::load_with_copy(config).map_err(anyhow::Error::msg)?;
    if let Some(out) = out {
        cfg.out = Some(out.display().to_string());
    }
    let t = manager::tournament::Tournament::new(cfg).map_err(anyhow::Error::msg)?;
    let parallel = parallel.unwrap_or(t.cfg.parallel).max(1);
    manager::stop_on_signals().map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(&t.out)?;
    // The config beside the records, for `factotum report` over the shards' folders.
    manager::record::write_atomic(&t.out.join(manager::tournament::CONFIG_COPY), copy.as_bytes())?;
    let stats = manager::tournament::run(&t, max_matches, parallel, shard).map_err(anyhow::Error::msg)?;
    write_report(&t)?;
    println!(
        "\nthis run: {} played, {} skipped (already finished), {} not played (errors), {} left for a later run; {:.1} s. \
         Report: {}",
        stats.played,
        stats.skipped,
        stats.failed,
        stats.remaining,
        stats.elapsed_s,
        t.out.join("report.md").display()
    );
    if manager::interrupted() {
        eprintln!(
            "interrupted: the matches in progress were aborted and will be replayed when the tournament is run again"
        );
        return Ok(ExitCode::from(130));
    }
    Ok(if stats.failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `factotum report DIR...`: one report over the records of every folder.
fn report_cmd(dirs: &[PathBuf], out: Option<PathBuf>) -> Result<ExitCode> {
    let mut text: Option<String> = None;
    for d in dirs {
        let path = d.join(manager::tournament::CONFIG_COPY);
        let t = std::fs::read_to_string(&path).map_err(|e| {
            anyhow::anyhow!("{}: {e} (a folder written by `factotum tournament` holds it)", path.display())
        })?;
        match &text {
            Some(first) if *first != t => {
                anyhow::bail!(
                    "{} differs from {}: the folders are not one tournament's",
                    path.display(),
                    dirs[0].display()
                )
            }
            _ => text = Some(t),
        }
    }
    let text = text.expect("at least one folder");
    let mut cfg: manager::tournament::TournamentConfig =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", dirs[0].display()))?;
    let out = out.unwrap_or_else(|| dirs[0].clone());
    cfg.out = Some(out.display().to_string());
    let mut t = manager::tournament::Tournament::new(cfg).map_err(anyhow::Error::msg)?;
    t.record_dirs = dirs.to_vec();
    std::fs::create_dir_all(&t.out)?;
    write_report(&t)?;
    Ok(ExitCode::SUCCESS)
}

fn conform_any<B: EngineBuilder>(
    builder: &B,
    trace: &Path,
    games: &Path,
    limit: Duration,
    jobs: usize,
) -> std::io::Result<Vec<TraceResult>> {
    if trace.is_dir() {
        conform_dir(builder, trace, games, limit, jobs, &|r, k, n| {
            eprintln!("[{k}/{n}] {} {} ({} states, {:.0} ms)", r.game, r.outcome.label(), r.states, r.ms);
        })
    } else {
        Ok(vec![conform_trace(builder, trace, games, limit)])
    }
}

fn propnet_cmd(path: &Path, dot: Option<&Path>, budget_s: f64, json: bool) -> Result<ExitCode> {
    let game = match Game::load(path) {
        Ok(g) => g,
        Err(e) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"game": path.display().to_string(), "ok": false, "error": e.to_string()})
                );
            }
            eprintln!("{e}");
            return Ok(ExitCode::from(2));
        }
    };
    let budget = Budget { deadline: Some(Instant::now() + Duration::from_secs_f64(budget_s)), ..Budget::default() };
    let built = match propnet::build_net(&game, &budget) {
        Ok(b) => b,
        Err(e) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"game": game.name, "ok": false, "error": e.to_string(), "peak_mib": coverage::own_peak_mib()})
                );
            } else {
                eprintln!("{}: cannot build a propnet: {e}", path.display());
            }
            return Ok(ExitCode::from(3));
        }
    };
    let r = &built.report;
    if json {
        println!(
            "{}",
            serde_json::json!({"game": game.name, "ok": true, "report": r, "peak_mib": coverage::own_peak_mib()})
        );
    } else {
        println!("game: {}", game.name);
        println!("ground rule instances: {}", r.instances);
        println!("| | components | bases | inputs | and | or | not | transitions | edges |");
        println!("|---|---|---|---|---|---|---|---|---|");
        for (label, s) in [("raw", &r.raw), ("optimized", &r.optimized)] {
            println!(
                "| {label} | {} | {} | {} | {} | {} | {} | {} | {} |",
                s.components, s.bases, s.inputs, s.ands, s.ors, s.nots, s.transitions, s.edges
            );
        }
        println!(
            "build: {:.3} s (grounding and translation {:.3} s, optimization {:.3} s)",
            r.total_s, r.ground_s, r.optimize_s
        );
    }
    if let Some(dot) = dot {
        let mut f = std::io::BufWriter::new(std::fs::File::create(dot)?);
        propnet::write_dot(&built.net, &built.grounding_terms, &built.symbols, &mut f)?;
        if !json {
            println!("wrote {}", dot.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn check(path: &Path) -> ExitCode {
    let game = match load(path) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let report = validate(&game);
    println!("game: {}", game.name);
    println!("roles: {}", report.roles.join(" "));
    println!("rules: {}", game.rules.len());
    println!("relations ({}):", report.relations.len());
    for (name, arity, count) in &report.relations {
        println!("  {name}/{arity}: {count} rule(s)");
    }
    println!("strata ({}):", report.strata.len());
    for s in &report.strata {
        println!("  {}: {}", s.level, s.relations.join(" "));
    }
    let file = path.display();
    for d in &report.diags {
        let sev = if d.severity == Severity::Error { "error" } else { "warning" };
        eprintln!("{file}:{}:{}: {sev}: {}", d.pos.line, d.pos.col, d.msg);
    }
    let errors = report.errors().count();
    if errors > 0 {
        eprintln!("{file}: {errors} error(s)");
        ExitCode::from(2)
    } else {
        println!("ok");
        ExitCode::SUCCESS
    }
}

fn print_conformance(results: &[TraceResult]) {
    println!("| game | states checked | result | ms |");
    println!("|---|---|---|---|");
    for r in results {
        println!("| {} | {} | {} | {:.0} |", r.game, r.states, r.outcome.label(), r.ms);
    }
    let pass = results.iter().filter(|r| r.outcome.is_pass()).count();
    let states: usize = results.iter().map(|r| r.states).sum();
    let not_built = results.iter().filter(|r| matches!(r.outcome, factotum::conform::Outcome::NotBuilt(_))).count();
    println!("\n{pass}/{} games agree, {states} states checked", results.len());
    if not_built > 0 {
        println!(
            "{not_built} game(s) not built by the engine; {pass}/{} of those built agree",
            results.len() - not_built
        );
    }
    for r in results.iter().filter(|r| !r.outcome.is_pass()) {
        let why = match &r.outcome {
            factotum::conform::Outcome::Fail(s)
            | factotum::conform::Outcome::LoadError(s)
            | factotum::conform::Outcome::NotBuilt(s) => s.clone(),
            factotum::conform::Outcome::Timeout => "time limit".into(),
            _ => String::new(),
        };
        println!("- {}: {} {}", r.game, r.outcome.label(), why);
    }
}

/// `bench --batch`: the batch machine with `W` words per node.
fn batch_bench<const W: usize>(
    net: &propnet::Net,
    time: Duration,
    runs: usize,
    seed: u64,
    max_depth: usize,
) -> factotum::bench::BenchResult {
    let mut m = propnet::batch::Batch::<W>::new(net);
    let (sg, gg, mg) = m.gate_counts();
    eprintln!(
        "batch machine: {} lanes, {sg} state-phase, {gg} goal-only and {mg} move-phase gates, {} cycles",
        propnet::batch::Batch::<W>::LANES,
        m.cycle_count()
    );
    let initial = m.initial_state();
    bench_batch(&mut m, &initial, time, runs, seed, max_depth)
}
