//! Monte Carlo tree search: decoupled UCT with per-role values (every GDL game is
//! simultaneous-move in form: each role picks its move by UCB on its own statistics, the
//! joint move indexes the child), an MCTS-Solver (exact where at most one role has a
//! choice; forced wins and one-valued nodes where several choose at once), tree reuse
//! between turns, and a node budget that bounds memory.
//!
//! Nodes live in one arena (`Vec`); a node keeps its state, its legal moves per role and
//! per-(role, move) visit counts and reward sums. An iteration selects down the tree,
//! adds one node, runs a random playout from it and backs the per-role rewards up the
//! path. When the tree reaches its node budget it is cut back to its most visited half
//! (recycling), so memory stays bounded and the tree keeps growing where search goes.
//! Buffers are reused, so an iteration allocates only for the node it adds (and, with
//! similarity-guided AMAF, for the one signature a node gets when it is signed).
//!
//! **The AMAF family** ([`Amaf`]): all-moves-as-first statistics per (node, role, move),
//! gathered from every move a role played later in the same iteration (in the tree below
//! the node and in the playout, first play of a move only counted once), blended into the
//! mean before the UCB bonus with the weight β = ñ / (ñ + n + b·ñ·n) (Gelly and Silver 2011's
//! minimum-error schedule, written with the bias of Cazenave's GRAVE; n visits, ñ AMAF
//! visits, b = `rave_bias`). GRAVE reads the AMAF statistics of the closest node on the path
//! (itself included) with at least `grave_ref` visits; killer-RAVE gathers them only from
//! decisive moves. Roles keep their own statistics, so it works per role in simultaneous-move
//! games. Moves get dense ids when a node first holds them, so the updates mark and test
//! ids in reused arrays: no allocation per iteration.

use super::classes::{PositionClasses, NO_CLASS};
use super::nst::{self, PairTable};
use super::trap_check::{self, TrapWatch};
use super::trap_memory::TrapMemory;
use super::{reward, Choice, Limit, Search, TrapFound};
use crate::heuristic::Heuristic;
use crate::machine::decisive::{decisive_playout, DecisiveBuffers};
use crate::machine::{PlayoutBuffers, StateMachine};
use crate::similarity::{SigScratch, TacticsSig};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which all-moves-as-first statistics the search keeps and blends into UCB.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Amaf {
    /// Plain UCT.
    #[default]
    Off,
    /// RAVE (Gelly and Silver): each node blends its own AMAF statistics.
    Rave,
    /// GRAVE (Cazenave 2015): the AMAF statistics of the closest node on the path, the node
    /// itself included, with at least `grave_ref` visits, per role: a node where the role
    /// has a choice (in a turn-taking game, two plies up: the parent holds only the role's
    /// noop). Where none has, the node's own (RAVE).
    Grave,
    /// Killer-RAVE (Lorentz 2011, as section 5.1 of Evans and Turrini proposes): RAVE whose
    /// AMAF statistics count only decisive moves: the moves of the last `killer_window` joint
    /// moves of an iteration that reached a terminal state where the roles' rewards differ.
    /// (Lorentz's Havannah counted the moves of the winning chain; GDL names no such chain,
    /// so the moves that ended the game stand for it.)
    Killer,
    /// Similarity-guided GRAVE (section 5.1 of Evans and Turrini: AMAF statistics shared
    /// only between positions that are similar). A node reads, per role, the AMAF statistics
    /// of the closest node on the path with `grave_ref` visits where the role has a choice
    /// *whose position is similar to its own*: tactical similarity ([`TacticsSig`], the
    /// measure that told traps best in our benchmark, at depth `sim_depth`) at least
    /// `sim_rho`, weighted by that similarity (ñ and w̃ scaled by it). The nearest three such
    /// candidates are tried; where none is similar enough, the node's own statistics. A node's
    /// signature is computed once, when it reaches `sim_visits` visits; a node not yet signed
    /// is judged by its closest signed ancestor (the references chosen there stay). A new
    /// signature is computed only while signatures and comparisons have taken at most
    /// `sim_share` of the search's time; comparisons (memoised per node) are measured, not
    /// throttled.
    Similar,
}

/// How MCTS picks each role's move at a node where two or more roles choose at once.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Simultaneous {
    /// Decoupled UCB: each role by UCB on its own statistics, as at any node.
    #[default]
    Ucb,
    /// Regret matching (Hart and Mas-Colell 2000, in MCTS as Lanctot, Lisý and Winands 2013
    /// and Tak, Lanctot and Winands 2014): at a simultaneous node each role keeps a regret per
    /// move and samples its move from the positive regrets' distribution mixed with uniform
    /// exploration γ (`regret_exploration`). After an iteration with reward u, move a's regret
    /// grows by x̂(a) − u, where x̂(a) = u / σ(a) for the move played (σ its probability) and
    /// 0 for the others: the importance-sampled estimate of what a would have earned; regrets
    /// are then floored at 0 (regret matching+, Tammelin 2014, which forgets a move's early
    /// bad luck sooner). The move played at such a root is sampled from the average of the
    /// strategies used (the part that converges to an equilibrium in zero-sum games), not the
    /// most visited one, after thresholding (Ganzfried, Sandholm and Waugh 2012): moves whose
    /// average probability is below `regret_threshold` are left out, since the average still
    /// carries the uniform strategy of the first iterations (matches/regret-1, without it,
    /// played such leftovers in every point_grab match).
    Regret,
}

/// How playouts choose their moves.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Playout {
    /// Uniformly random moves (the engine's own depth charge).
    #[default]
    Random,
    /// MAST (Finnsson and Björnsson 2008, the move-average sampling technique; ε-greedy as
    /// Tak, Winands and Björnsson 2012 found best): every (role, move) keeps the mean reward
    /// its role got in the iterations that played it (in the tree and in playouts, wherever
    /// in the game); a playout plays, with probability 1 − ε, the legal move of best mean
    /// (moves never played count as 1, so each is tried) and otherwise a random one. The
    /// statistics are kept from turn to turn, multiplied by `mast_decay` when the root
    /// changes. Needs an engine with move numbers ([`StateMachine::move_number`]); without
    /// them every move counts as never played (random playouts).
    Mast,
    /// Leaf-batched random playouts on the engine's batch machine
    /// ([`StateMachine::batch_playouts`], 256 playouts at once, one per bit of a word):
    /// `batch_leaves` leaves are selected one after another, each descent marking its path
    /// with a virtual loss (a visit scored 0 for every role, so that the next descents
    /// spread), then `lanes / batch_leaves` random playouts run from each leaf at once and are
    /// backed up as that many visits (the virtual loss taken back). Leaf parallelisation
    /// (Cazenave and Jouandeau 2007) with the tree parallelisation's virtual loss (Chaslot,
    /// Winands and van den Herik 2008), here on one core: the batch machine runs random
    /// playouts 5 to 45 times faster than the propnet runs one at a time on most games.
    /// AMAF statistics are not gathered. On an engine without a batch machine, random
    /// playouts one at a time.
    Batch,
    /// NST (the N-gram selection technique, [`super::nst`]): MAST whose statistics are kept
    /// for moves alone and for 2-grams, a move after the previous role's move at the joint
    /// move before; a playout move's value is the mean of its MAST mean and, once the 2-gram
    /// has been played often enough, the 2-gram's mean. ε-greedy and decayed as MAST.
    Nst,
}

impl Playout {
    /// Whether playouts play by learned move statistics (MAST's table, and NST's 2-grams).
    pub fn learns_moves(self) -> bool {
        matches!(self, Playout::Mast | Playout::Nst)
    }
}

/// Tuning of [`Mcts`].
#[derive(Copy, Clone, Debug)]
pub struct MctsConfig {
    /// UCB exploration constant (rewards are in 0..=1).
    pub exploration: f64,
    /// The exploration constant when `amaf` is not off: AMAF statistics explore by
    /// themselves, and Cazenave's GRAVE plays with little or no UCB bonus.
    pub amaf_exploration: f64,
    /// Most nodes kept in the tree.
    pub node_budget: usize,
    pub seed: u64,
    /// Longest random playout, in joint moves.
    pub max_playout_depth: usize,
    pub amaf: Amaf,
    /// b in β = ñ / (ñ + n + b·ñ·n): the AMAF weight halves near n = 1/b visits.
    pub rave_bias: f64,
    /// GRAVE: visits a node needs for its AMAF statistics to be used below it.
    pub grave_ref: u32,
    /// Killer-RAVE: joint moves before the end of a decisive iteration that count.
    pub killer_window: u32,
    /// MCTS-Solver: proven values backed up the tree (and the traps they reveal). Off, the
    /// search is plain UCT: only terminal states are exact.
    pub solver: bool,
    /// Similarity-guided AMAF: the least similarity for a node's statistics to be shared.
    pub sim_rho: f64,
    /// Similarity-guided AMAF: visits before a node's signature is computed.
    pub sim_visits: u32,
    /// Depth of the tactical signatures (plies of the local tree).
    pub sim_depth: u32,
    /// Most states a signature may expand (beyond, the position is not compared).
    pub sim_max_states: u64,
    /// Share of the search's time that signatures and comparisons may take.
    pub sim_share: f64,
    /// Similarity hints ([`super::trap_memory`]): traps proven earlier in the match are
    /// remembered, and at each new root similar to one of them the move paired with the trap
    /// move is checked by the exact trap finder, its refutation's matched killer move first.
    pub trap_hints: bool,
    /// Exact trap checks ([`super::trap_check`]): a root move whose mean falls well below the
    /// best it showed, and the move about to be played, are checked by the exact trap finder,
    /// and kept out of the search and of the choice once proven lost.
    pub trap_check: bool,
    /// How playouts choose moves.
    pub playout: Playout,
    /// MAST: share of playout moves chosen at random.
    pub mast_epsilon: f64,
    /// MAST: factor the statistics are multiplied by when the root changes.
    pub mast_decay: f64,
    /// Batched playouts: leaves selected per batch (each gets the batch's lanes / this).
    pub batch_leaves: usize,
    /// Heuristic cut-offs: where the search has a heuristic ([`Mcts::set_heuristic`]),
    /// random and MAST playouts end after this many joint moves and a playout that has not
    /// ended is scored by the heuristic (Finnsson's early cut-offs, scored as Winands and
    /// Björnsson's evaluation cut-off in MC-LOA). 0, or no heuristic: playouts run to the end.
    /// Batched playouts are not cut.
    pub cutoff: usize,
    /// Transpositions: a state reached again by another order of moves is the same node
    /// (a search graph: a table from state hash to node, rebuilt when the tree is compacted).
    /// Each node keeps its own per-move statistics, updated by the descents through it,
    /// whichever parent they came from (UCT on a DAG with node statistics, the simplest of
    /// Childs, Brodeur and Kocsis 2008's variants); a parent's statistics count the descents
    /// through that parent. A child already on the descent's path is not linked (a
    /// repeated position gets a node of its own), and a descent that meets its own path
    /// again ends there with a playout. Batched playouts make no links.
    pub transpositions: bool,
    /// Position classes ([`super::classes`]): statistics pooled over the states the
    /// machine gives one [`StateMachine::position_key`]; a move into a node of a class is
    /// ranked by the class's mean (when the class has more descents than the move) at nodes
    /// where one role chooses. Without keys from the machine, nothing changes.
    pub position_classes: bool,
    /// Decisive and anti-decisive moves in random and MAST playouts
    /// ([`crate::machine::decisive`]): a move that wins at once is played, and a move that
    /// lets the opponent win at once is avoided where another does not. Not with batched
    /// playouts (the batch machine plays uniformly random moves).
    pub decisive: bool,
    /// Decisive moves try only the moves that have ended a playout before (the learned
    /// filter of [`crate::machine::decisive`], Sancho's "terminating moves"), not every legal
    /// move: a few successor states a ply instead of one per legal move where few moves can
    /// end the game.
    pub decisive_filter: bool,
    /// How roles choose at simultaneous-move nodes.
    pub simultaneous: Simultaneous,
    /// Regret matching's uniform exploration γ (0..=1).
    pub regret_exploration: f64,
    /// Regret matching: least average probability for a move to be played at the root.
    pub regret_threshold: f64,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            exploration: 0.7,
            amaf_exploration: 0.7,
            node_budget: 200_000,
            seed: 1,
            max_playout_depth: 1000,
            amaf: Amaf::Off,
            rave_bias: 1e-3,
            grave_ref: 50,
            killer_window: 2,
            solver: true,
            sim_rho: 0.5,
            sim_visits: 16,
            sim_depth: 2,
            sim_max_states: 4096,
            sim_share: 0.15,
            trap_hints: false,
            trap_check: false,
            playout: Playout::Random,
            mast_epsilon: 0.4,
            mast_decay: 0.2,
            batch_leaves: 16,
            cutoff: 0,
            decisive: false,
            decisive_filter: true,
            transpositions: false,
            position_classes: false,
            simultaneous: Simultaneous::Ucb,
            regret_exploration: 0.1,
            regret_threshold: 0.1,
        }
    }
}

/// The AMAF weight β = ñ / (ñ + n + b·ñ·n) for n visits and ñ AMAF visits (0 when ñ is 0).
pub fn rave_beta(n: u32, amaf_n: u32, bias: f64) -> f64 {
    beta(n, amaf_n as f64, bias)
}

/// [`rave_beta`] with ñ weighted (similarity-guided AMAF scales it).
fn beta(n: u32, a: f64, bias: f64) -> f64 {
    if a <= 0.0 {
        return 0.0;
    }
    let n = n as f64;
    a / (a + n + bias * a * n)
}

/// The value UCB ranks a move by: its mean blended with its AMAF mean by [`rave_beta`], plus
/// the exploration bonus. An unvisited move ranks first unless AMAF statistics give it a
/// mean, which is then used as it stands with the bonus of one visit.
/// `amaf_n` may be fractional: similarity-guided AMAF weighs the statistics it shares.
pub fn rave_value(n: u32, w: f64, amaf_n: f64, amaf_w: f64, bias: f64, c: f64, ln_parent: f64) -> f64 {
    if n == 0 {
        if amaf_n <= 0.0 {
            return f64::INFINITY;
        }
        return amaf_w / amaf_n + c * ln_parent.sqrt();
    }
    let b = beta(n, amaf_n, bias);
    let mean = w / n as f64;
    let q = if amaf_n <= 0.0 { mean } else { (1.0 - b) * mean + b * amaf_w / amaf_n };
    q + c * (ln_parent / n as f64).sqrt()
}

const NONE: u32 = u32::MAX;

/// The index `x` falls in when `weights` are laid end to end from 0 (x below their sum; past
/// it, round-off, the last positive weight).
fn sample(weights: &[f64], mut x: f64) -> usize {
    for (i, &q) in weights.iter().enumerate() {
        if x < q {
            return i;
        }
        x -= q;
    }
    weights.iter().rposition(|&q| q > 0.0).unwrap_or(weights.len() - 1)
}

/// States the exact trap finder may expand per similarity hint.
const HINT_BUDGET: u64 = 5_000;
/// Share of the time left that similarity hints may start new checks in.
const HINT_SHARE: u32 = 10;
/// Time a search must have left for similarity hints to be checked.
const HINT_MIN_TIME: Duration = Duration::from_millis(100);

fn state_hash<S: std::hash::Hash>(state: &S) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(state)
}

struct Node<S, Mv> {
    state: S,
    /// Terminal, or proven: `values` are then exact.
    solved: bool,
    /// Per-role values (terminal goals or proven values), 0..=1.
    values: Box<[f64]>,
    /// Legal moves of every role, flattened: role `r`'s are `moves[offs[r]..offs[r + 1]]`.
    moves: Box<[Mv]>,
    offs: Box<[u32]>,
    /// Per (role, move), parallel to `moves`: visits and reward sums of that role.
    n: Box<[u32]>,
    w: Box<[f64]>,
    visits: u32,
    /// Number of joint moves (saturating).
    joints: u64,
    /// The role with a choice when at most one role has one (`NONE` otherwise, or when no
    /// role has a choice: then role 0 counts as the mover).
    mover: u32,
    /// (joint code, child index).
    children: Vec<(u64, u32)>,
    /// With AMAF on, parallel to `moves`: the moves' dense ids (per role), and the AMAF
    /// visits and reward sums of that role. Empty otherwise.
    gid: Box<[u32]>,
    an: Box<[u32]>,
    aw: Box<[f64]>,
    /// Similarity-guided AMAF: the position's tactical signature, once computed (`sig_tried`:
    /// computed, or found too large), and the last two comparisons made from this node (the
    /// other node's index, the similarity; two, so that two roles' references both stay).
    sig: Option<Box<TacticsSig>>,
    sig_tried: bool,
    sim_memo: [(u32, f64); 2],
    /// With regret matching, at a node where two or more roles choose, parallel to `moves`:
    /// each role's regret per move and the sum of the strategies it played. Empty otherwise.
    regret: Box<[f64]>,
    played: Box<[f64]>,
    /// With position classes, the state's class ([`NO_CLASS`]: none).
    class: u32,
}

impl<S, Mv: Copy> Node<S, Mv> {
    fn count(&self, r: usize) -> usize {
        (self.offs[r + 1] - self.offs[r]) as usize
    }
}

/// The MCTS searcher. Keeps its tree between calls: when the next call's state is the
/// root's or one of its descendants' (two levels down at most), that subtree is kept.
pub struct Mcts<M: StateMachine> {
    cfg: MctsConfig,
    rng: Pcg64Mcg,
    nodes: Vec<Node<M::State, M::Move>>,
    root: u32,
    roles: usize,
    /// Times the full tree was cut back to its most visited half.
    recycled: u64,
    // Reused buffers.
    path: Vec<u32>,
    path_moves: Vec<u32>,
    /// Parallel to `path_moves`: the probability regret matching gave the move chosen (1 where
    /// it did not choose).
    path_probs: Vec<f64>,
    /// Regret matching's strategy at the node being selected (reused).
    sigma: Vec<f64>,
    joint: Vec<M::Move>,
    rewards: Vec<f64>,
    legal: Vec<M::Move>,
    scratch: Option<M::State>,
    play: Option<M::State>,
    bufs: Option<PlayoutBuffers<M>>,
    /// The end of the current step's time: where a slow engine's playout stops
    /// ([`PlayoutBuffers::deadline`]).
    until: Option<Instant>,
    /// The current search's shared cancel flag (`Limit::shared`), which playouts read too.
    stop: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// Decisive moves' buffers (made at the first playout with `decisive`).
    dec: Option<DecisiveBuffers<M>>,
    /// With `transpositions`: state hash -> the first node holding that state.
    trans: FxHashMap<u64, u32>,
    /// With `position_classes`: the classes' statistics.
    classes: PositionClasses,
    /// Per move of the node being selected: its child's class's descents and mean (reused).
    class_mean: Vec<(u32, f64)>,
    amaf: AmafState<M::Move>,
    /// Traps found and not yet taken, and the (state hash, move) of every trap reported, so
    /// that pondering on a state reports its traps once.
    traps: Vec<TrapFound<M::Move>>,
    reported: rustc_hash::FxHashSet<(u64, M::Move)>,
    sim: SimState<M>,
    /// Traps proven earlier, for similarity hints; the moves of the root they proved lost
    /// (with what to report), until the root changes.
    memory: TrapMemory<M>,
    hinted: Vec<(u32, M::Move)>,
    hinted_at: Option<u64>,
    hint_finds: Vec<TrapFound<M::Move>>,
    watch: TrapWatch,
    mast: MastState,
    batch: BatchState<M>,
    /// Tree-parallel search's helper threads ([`TreeParallelMcts`]), once started.
    helpers: Option<parallel::Helpers<M::State, M::Move>>,
    /// A heuristic learned in the start clock ([`crate::heuristic`]): with `cutoff`, playouts
    /// end early and are scored by it.
    heuristic: Option<Arc<Heuristic>>,
}

/// Leaf batching's pending descents and reused buffers (see [`Playout::Batch`]).
struct BatchState<M: StateMachine> {
    /// The leaves' states (a pool: the first `pending.len()` are this batch's).
    starts: Vec<M::State>,
    /// Per pending descent: the end of its path in `Mcts::path` (and of its moves, times
    /// the roles, in `Mcts::path_moves`), and its leaf node (`NONE` when the tree was full).
    pending: Vec<(u32, u32)>,
    /// Per pending descent and role: the rewards summed over its playouts.
    sums: Vec<f64>,
}

/// MAST's statistics and reused buffer.
struct MastState {
    /// Per key (move number × roles + role): the role's reward sum and the count of plays.
    table: Vec<(f64, f64)>,
    /// NST's 2-grams (no slots unless the playouts are [`Playout::Nst`]).
    pairs: PairTable,
    /// The playout's moves as keys (`NONE` for moves without a number), roles per ply.
    seq: Vec<u32>,
    /// NST: the keys of the joint move before and of this one, for the update; `before` is
    /// also the playout's context (the tree's last joint move) while it runs.
    before: Vec<u32>,
    now: Vec<u32>,
    /// The root the statistics were last decayed for.
    at: Option<u64>,
}

impl MastState {
    fn new() -> MastState {
        MastState {
            table: Vec::new(),
            pairs: PairTable::new(),
            seq: Vec::new(),
            before: Vec::new(),
            now: Vec::new(),
            at: None,
        }
    }
}

/// Most keys MAST's table holds (64 MiB): moves numbered beyond (an interpreter's terms in a
/// very large game) keep no statistics and count as never played.
const MAST_MAX_KEYS: usize = 1 << 22;

/// The keys (MAST's) of the joint move of descent step `d` (`path[d]`'s node, the moves
/// `path_moves` picked there) into `out`, one per role.
fn step_keys<M: StateMachine>(
    nodes: &[Node<M::State, M::Move>],
    path: &[u32],
    path_moves: &[u32],
    d: usize,
    roles: usize,
    out: &mut Vec<u32>,
) {
    out.clear();
    let node = &nodes[path[d] as usize];
    for r in 0..roles {
        let mv = node.moves[node.offs[r] as usize + path_moves[d * roles + r] as usize];
        out.push(mast_key::<M>(mv, r, roles));
    }
}

/// The key of `role`'s move `mv` in MAST's table.
fn mast_key<M: StateMachine>(mv: M::Move, role: usize, roles: usize) -> u32 {
    match M::move_number(mv) {
        Some(n) if n.saturating_mul(roles) < MAST_MAX_KEYS => (n * roles + role) as u32,
        _ => NONE,
    }
}

/// MAST's playout policy (see [`Playout::Mast`]), NST's with 2-grams (see [`Playout::Nst`]);
/// it also records the playout's moves for the update, and for AMAF when that is on.
struct MastPolicy<'a, M: StateMachine> {
    table: &'a [(f64, f64)],
    /// NST's 2-grams (`None` for MAST).
    pairs: Option<&'a PairTable>,
    /// NST: the keys of the joint move that led to the playout's first state (the tree's
    /// last), one per role; empty where there is none.
    before: &'a [u32],
    roles: usize,
    epsilon: f64,
    seq: &'a mut Vec<u32>,
    /// Where this playout's keys begin in `seq` (a helper's playouts follow one another).
    start: usize,
    amaf: AmafSink<'a, M::Move>,
}

impl<M: StateMachine> crate::machine::PlayoutPolicy<M::Move> for MastPolicy<'_, M> {
    fn choose<R: Rng>(&mut self, role: usize, legal: &[M::Move], rng: &mut R) -> usize {
        let k = legal.len();
        if rng.gen::<f64>() < self.epsilon {
            return rng.gen_range(0..k);
        }
        // NST: the previous role's move at the joint move before, once the playout has one.
        let at = self.seq.len();
        let prev = match self.pairs {
            None => NONE,
            Some(_) if at >= self.start + self.roles => self.seq[at - self.roles + nst::context_role(role, self.roles)],
            Some(_) => self.before.get(nst::context_role(role, self.roles)).copied().unwrap_or(NONE),
        };
        let start = rng.gen_range(0..k);
        let (mut best, mut best_v) = (start, f64::NEG_INFINITY);
        for j in 0..k {
            let i = if start + j >= k { start + j - k } else { start + j };
            let key = mast_key::<M>(legal[i], role, self.roles);
            let single = match self.table.get(key as usize) {
                Some(&(w, n)) if n > 0.0 => w / n,
                _ => 1.0,
            };
            let v = match self.pairs.and_then(|p| p.mean(prev, key)) {
                Some(p) => 0.5 * (single + p),
                None => single,
            };
            if v > best_v {
                best_v = v;
                best = i;
            }
        }
        best
    }

    fn seen(&mut self, joint: &[M::Move]) {
        for (r, &mv) in joint.iter().enumerate() {
            self.seq.push(mast_key::<M>(mv, r, self.roles));
        }
        if let Some((ids, seq)) = &mut self.amaf {
            for (r, mv) in joint.iter().enumerate() {
                seq.push(ids.get(&(r as u32, *mv)).copied().unwrap_or(NONE));
            }
        }
    }
}

/// Uniformly random moves, recorded for AMAF when that is on (the random policy of
/// playouts with decisive moves).
struct UniformSeen<'a, M: StateMachine> {
    amaf: AmafSink<'a, M::Move>,
}

impl<M: StateMachine> crate::machine::PlayoutPolicy<M::Move> for UniformSeen<'_, M> {
    fn choose<R: Rng>(&mut self, _role: usize, legal: &[M::Move], rng: &mut R) -> usize {
        rng.gen_range(0..legal.len())
    }

    fn seen(&mut self, joint: &[M::Move]) {
        if let Some((ids, seq)) = &mut self.amaf {
            for (r, mv) in joint.iter().enumerate() {
                seq.push(ids.get(&(r as u32, *mv)).copied().unwrap_or(NONE));
            }
        }
    }
}

/// The settings of one playout that do not change during a search: what [`Mcts`] and its
/// helper threads ([`parallel`]) both play by.
#[derive(Copy, Clone, Debug)]
struct PlayoutKit {
    depth: usize,
    epsilon: f64,
    roles: usize,
    /// Decisive moves' buffers are made with the learned filter of ending moves.
    filter: bool,
}

/// Where a playout's moves go for AMAF: the moves' ids, and the sequence they are pushed to.
type AmafSink<'a, Mv> = Option<(&'a FxHashMap<(u32, Mv), u32>, &'a mut Vec<u32>)>;

/// MAST's side of a playout: the table it plays by, NST's 2-grams (`None` for MAST) and the
/// keys of the joint move before the playout (empty where unknown), and the sequence its
/// moves' keys are pushed to.
struct MastSink<'a> {
    table: &'a [(f64, f64)],
    pairs: Option<&'a PairTable>,
    before: &'a [u32],
    seq: &'a mut Vec<u32>,
}

impl PlayoutKit {
    fn new(cfg: &MctsConfig, roles: usize) -> PlayoutKit {
        PlayoutKit { depth: cfg.max_playout_depth, epsilon: cfg.mast_epsilon, roles, filter: cfg.decisive_filter }
    }

    /// Buffers for this kit's decisive moves.
    fn decisive_buffers<M: StateMachine>(self, machine: &mut M) -> DecisiveBuffers<M> {
        DecisiveBuffers::with_filter(machine, self.filter)
    }

    /// A playout from `play` (which ends as the last state reached): uniformly random moves,
    /// or MAST's (and NST's) with `mast`, with decisive moves when `dec` is given, the moves
    /// recorded for AMAF when `amaf` is given.
    #[allow(clippy::too_many_arguments)]
    fn run<M: StateMachine, R: Rng>(
        self,
        machine: &mut M,
        play: &mut M::State,
        rng: &mut R,
        bufs: &mut PlayoutBuffers<M>,
        dec: Option<&mut DecisiveBuffers<M>>,
        mast: Option<MastSink<'_>>,
        amaf: AmafSink<'_, M::Move>,
    ) -> crate::machine::PlayoutResult {
        let depth = self.depth;
        if let Some(MastSink { table, pairs, before, seq }) = mast {
            let start = seq.len();
            let (roles, epsilon) = (self.roles, self.epsilon);
            let mut policy = MastPolicy::<M> { table, pairs, before, roles, epsilon, seq, start, amaf };
            return match dec {
                Some(d) => decisive_playout(machine, play, rng, depth, bufs, d, &mut policy, true),
                None => machine.playout_policy(play, rng, depth, bufs, &mut policy),
            };
        }
        if let Some(d) = dec {
            let mut policy = UniformSeen::<M> { amaf };
            return decisive_playout(machine, play, rng, depth, bufs, d, &mut policy, true);
        }
        match amaf {
            Some((ids, seq)) => machine.playout_seen(play, rng, depth, bufs, |joint| {
                for (r, mv) in joint.iter().enumerate() {
                    seq.push(ids.get(&(r as u32, *mv)).copied().unwrap_or(NONE));
                }
            }),
            None => machine.playout(play, rng, depth, bufs),
        }
    }
}

/// Similarity-guided AMAF's state besides the nodes.
struct SimState<M: StateMachine> {
    scratch: Option<SigScratch<M>>,
    /// Per role: the nodes on the path that may be read (signed, `grave_ref` visits, the
    /// role choosing there), closest last; and the weight of the reference chosen.
    cands: Vec<Vec<u32>>,
    weight: Vec<f64>,
    /// The closest signed node on the path.
    proxy: u32,
    /// When the current search began, and the similarity work's measured cost.
    started: Instant,
    pub stats: SimStats,
}

/// What similarity costs a search: signatures computed (and their time), comparisons made
/// (timed one in [`SAMPLE`] and scaled).
#[derive(Clone, Copy, Debug, Default)]
pub struct SimStats {
    pub signatures: u64,
    pub too_large: u64,
    pub skipped_for_time: u64,
    pub signature_time: Duration,
    pub comparisons: u64,
    sampled: u64,
    sampled_time: Duration,
    /// Time of the searches (`select` calls) these figures cover.
    pub search_time: Duration,
}

/// One comparison in this many is timed.
const SAMPLE: u64 = 64;

impl SimStats {
    /// The estimated time of all comparisons (the sampled ones' mean, times their count).
    pub fn comparison_time(&self) -> Duration {
        if self.sampled == 0 {
            return Duration::ZERO;
        }
        self.sampled_time.mul_f64(self.comparisons as f64 / self.sampled as f64)
    }

    /// The time signatures and comparisons took.
    pub fn spent(&self) -> Duration {
        self.signature_time + self.comparison_time()
    }
}

impl<M: StateMachine> SimState<M> {
    fn new() -> Self {
        SimState {
            scratch: None,
            cands: Vec::new(),
            weight: Vec::new(),
            proxy: NONE,
            started: Instant::now(),
            stats: SimStats::default(),
        }
    }
}

/// What the AMAF family needs besides the nodes: dense move ids, and reused marks.
struct AmafState<Mv> {
    /// (role, move) -> dense id, given when a node first holds the move.
    ids: FxHashMap<(u32, Mv), u32>,
    /// The playout's joint moves as ids (`NONE` for moves no node holds), roles per ply.
    seq: Vec<u32>,
    /// Per id: the iteration stamp when it was last marked played.
    mark: Vec<u32>,
    stamp: u32,
    /// GRAVE, per role: the reference node (the closest on the path, itself included, with
    /// `grave_ref` visits where the role has a choice; `NONE` when none has: the node's own
    /// statistics are read then).
    refs: Vec<u32>,
    /// GRAVE, per id: its index in its role's reference node's moves, valid where
    /// `pos_stamp` equals the stamp in `pos_of` (per role: node indexed, stamp).
    pos: Vec<u32>,
    pos_stamp: Vec<u32>,
    pos_of: Vec<(u32, u32)>,
    pos_stamp_now: u32,
}

impl<Mv> AmafState<Mv> {
    fn new() -> Self {
        AmafState {
            ids: FxHashMap::default(),
            seq: Vec::new(),
            mark: Vec::new(),
            stamp: 0,
            refs: Vec::new(),
            pos: Vec::new(),
            pos_stamp: Vec::new(),
            pos_of: Vec::new(),
            pos_stamp_now: 0,
        }
    }
}

impl<M: StateMachine> Mcts<M> {
    pub fn new(cfg: MctsConfig) -> Mcts<M> {
        let rng = Pcg64Mcg::seed_from_u64(cfg.seed);
        Mcts {
            cfg,
            rng,
            nodes: Vec::new(),
            root: NONE,
            roles: 0,
            recycled: 0,
            path: Vec::new(),
            path_moves: Vec::new(),
            path_probs: Vec::new(),
            sigma: Vec::new(),
            joint: Vec::new(),
            rewards: Vec::new(),
            legal: Vec::new(),
            scratch: None,
            play: None,
            bufs: None,
            until: None,
            stop: None,
            dec: None,
            trans: FxHashMap::default(),
            classes: PositionClasses::new(0),
            class_mean: Vec::new(),
            amaf: AmafState::new(),
            traps: Vec::new(),
            reported: Default::default(),
            sim: SimState::new(),
            memory: TrapMemory::new(),
            hinted: Vec::new(),
            hinted_at: None,
            hint_finds: Vec::new(),
            watch: TrapWatch::new(),
            mast: MastState::new(),
            batch: BatchState { starts: Vec::new(), pending: Vec::new(), sums: Vec::new() },
            helpers: None,
            heuristic: None,
        }
    }

    /// Scores playouts cut off by [`MctsConfig::cutoff`] with `h` (none: playouts run to the
    /// end, as without a cutoff).
    pub fn set_heuristic(&mut self, h: Option<Arc<Heuristic>>) {
        self.heuristic = h;
    }

    /// The playouts' settings: the config's, their depth cut to [`MctsConfig::cutoff`] where a
    /// heuristic scores the cut playouts.
    fn kit(&self) -> PlayoutKit {
        let mut kit = PlayoutKit::new(&self.cfg, self.roles);
        if self.heuristic.is_some() && self.cfg.cutoff > 0 {
            kit.depth = kit.depth.min(self.cfg.cutoff);
        }
        kit
    }

    /// The rewards of a playout that ended in `state` (terminal or not, `ended` saying which)
    /// into `out`: the goals, or the heuristic's values where a cut playout did not end.
    fn score(machine: &mut M, heuristic: Option<&Heuristic>, state: &M::State, ended: bool, out: &mut Vec<f64>) {
        let roles = machine.roles().len();
        out.clear();
        match heuristic {
            Some(h) if !ended => {
                out.resize(roles, 0.0);
                h.evaluate(machine, state, out);
            }
            _ => out.extend((0..roles).map(|r| reward(machine, state, r))),
        }
    }

    /// What similarity-guided AMAF has cost so far.
    pub fn sim_stats(&self) -> SimStats {
        self.sim.stats
    }

    /// Nodes in the tree.
    pub fn tree_size(&self) -> usize {
        self.nodes.len()
    }

    /// Times the tree filled its node budget and was cut back to its most visited half.
    pub fn recycled(&self) -> u64 {
        self.recycled
    }

    /// Per root move of `role`: its proven value (see [`Mcts::proven_moves`]; empty before a
    /// search).
    pub fn root_proven(&self, role: usize) -> Vec<Option<f64>> {
        if self.nodes.get(self.root as usize).is_none() || role >= self.roles {
            return Vec::new();
        }
        self.proven_moves(self.root as usize, role)
    }

    /// The root's moves for `role` with their visits and reward sums (empty before a search).
    pub fn root_stats(&self, role: usize) -> Vec<(M::Move, u32, f64)> {
        let Some(node) = self.nodes.get(self.root as usize) else { return Vec::new() };
        if role >= self.roles {
            return Vec::new();
        }
        let lo = node.offs[role] as usize;
        (0..node.count(role)).map(|i| (node.moves[lo + i], node.n[lo + i], node.w[lo + i])).collect()
    }

    fn make_node(&mut self, machine: &mut M, state: M::State) -> Node<M::State, M::Move> {
        let roles = self.roles;
        let mut values = vec![0.0; roles].into_boxed_slice();
        let mut moves = Vec::new();
        let mut offs = Vec::with_capacity(roles + 1);
        offs.push(0u32);
        let mut solved = machine.is_terminal(&state);
        if !solved {
            for r in 0..roles {
                machine.legal_moves(&state, r, &mut self.legal);
                if self.legal.is_empty() {
                    // A role without a move in a non-terminal state: the game is broken
                    // here; score the state as it stands.
                    solved = true;
                    break;
                }
                moves.extend_from_slice(&self.legal);
                offs.push(moves.len() as u32);
            }
        }
        if solved {
            for (r, v) in values.iter_mut().enumerate() {
                *v = reward(machine, &state, r);
            }
            moves.clear();
            offs.clear();
            offs.resize(roles + 1, 0);
        }
        let mut joints = 1u64;
        let mut choosers = 0;
        let mut mover = 0u32;
        for r in 0..roles {
            let k = (offs[r + 1] - offs[r]) as u64;
            if k > 1 {
                choosers += 1;
                mover = r as u32;
            }
            joints = joints.saturating_mul(k.max(1));
        }
        let len = moves.len();
        let (gid, an, aw) = if self.cfg.amaf == Amaf::Off {
            (Box::default(), Box::default(), Box::default())
        } else {
            let mut gid = Vec::with_capacity(len);
            for r in 0..roles {
                for &mv in &moves[offs[r] as usize..offs[r + 1] as usize] {
                    let next = self.amaf.ids.len() as u32;
                    let id = *self.amaf.ids.entry((r as u32, mv)).or_insert(next);
                    if id == next {
                        self.amaf.mark.push(0);
                        self.amaf.pos.push(0);
                        self.amaf.pos_stamp.push(0);
                    }
                    gid.push(id);
                }
            }
            (gid.into_boxed_slice(), vec![0; len].into_boxed_slice(), vec![0.0; len].into_boxed_slice())
        };
        let (regret, played) = if self.cfg.simultaneous == Simultaneous::Regret && choosers > 1 {
            (vec![0.0; len].into_boxed_slice(), vec![0.0; len].into_boxed_slice())
        } else {
            (Box::default(), Box::default())
        };
        let class = match machine.position_key(&state) {
            Some(key) if self.cfg.position_classes => self.classes.class_of(key),
            _ => NO_CLASS,
        };
        Node {
            class,
            regret,
            played,
            gid,
            an,
            aw,
            sig: None,
            sig_tried: false,
            sim_memo: [(NONE, 0.0); 2],
            state,
            solved,
            values,
            moves: moves.into_boxed_slice(),
            offs: offs.into_boxed_slice(),
            n: vec![0; len].into_boxed_slice(),
            w: vec![0.0; len].into_boxed_slice(),
            visits: 0,
            joints,
            mover: if choosers <= 1 { mover } else { NONE },
            children: Vec::new(),
        }
    }

    /// Makes `state` the root, keeping the subtree below it if the tree holds it.
    fn set_root(&mut self, machine: &mut M, state: &M::State) {
        if self.root != NONE && self.nodes[self.root as usize].state == *state {
            return;
        }
        let mut found = NONE;
        if self.root != NONE {
            let mut frontier = vec![self.root];
            'outer: for _ in 0..2 {
                let mut next = Vec::new();
                for &i in &frontier {
                    for &(_, c) in &self.nodes[i as usize].children {
                        if self.nodes[c as usize].state == *state {
                            found = c;
                            break 'outer;
                        }
                        next.push(c);
                    }
                }
                frontier = next;
            }
        }
        if found == NONE {
            self.nodes.clear();
            let node = self.make_node(machine, state.clone());
            self.nodes.push(node);
            self.root = 0;
            self.reindex();
            return;
        }
        self.compact(found, usize::MAX, 0);
    }

    /// With transpositions: rebuilds the table from the nodes (after a new root or a
    /// compaction renumbered them).
    fn reindex(&mut self) {
        if self.classes.len() > self.nodes.len() {
            // Classes no node holds are dropped (their statistics with them), so the table
            // stays within the tree's size.
            let map = self.classes.retain(self.nodes.iter().map(|n| n.class));
            for node in &mut self.nodes {
                if node.class != NO_CLASS {
                    node.class = map[node.class as usize];
                }
            }
        }
        self.trans.clear();
        if !self.cfg.transpositions {
            return;
        }
        for (i, node) in self.nodes.iter().enumerate() {
            self.trans.entry(state_hash(&node.state)).or_insert(i as u32);
        }
    }

    /// Adds node `id` to the transposition table (the first node of a state stays).
    fn index_node(&mut self, id: u32) {
        if self.cfg.transpositions {
            self.trans.entry(state_hash(&self.nodes[id as usize].state)).or_insert(id);
        }
    }

    /// With transpositions: the node holding `state`, if there is one off the current
    /// descent's path (linking to a node on it would make a cycle).
    fn transposed(&self, state: &M::State) -> Option<u32> {
        if !self.cfg.transpositions {
            return None;
        }
        let &t = self.trans.get(&state_hash(state))?;
        (self.nodes[t as usize].state == *state && !self.path.contains(&t)).then_some(t)
    }

    /// Copies the subtree under `top` into a fresh arena (breadth first) and makes it the
    /// root, dropping every other node, every unproven child visited fewer than `min_visits`
    /// times (with its subtree), and every node past the first `limit`.
    fn compact(&mut self, top: u32, limit: usize, min_visits: u32) {
        let old: Vec<Node<M::State, M::Move>> = std::mem::take(&mut self.nodes);
        let mut old: Vec<Option<Node<M::State, M::Move>>> = old.into_iter().map(Some).collect();
        let mut map = vec![NONE; old.len()];
        let mut order = vec![top];
        map[top as usize] = 0;
        let mut k = 0;
        while k < order.len() {
            let i = order[k] as usize;
            k += 1;
            if let Some(node) = &old[i] {
                for &(_, c) in &node.children {
                    // Proven children are kept whatever their visits: a proven parent's
                    // proof (and the trap log's refutation lines) stay in the tree.
                    let keep = old[c as usize].as_ref().is_some_and(|n| n.visits >= min_visits || n.solved);
                    if keep && map[c as usize] == NONE && order.len() < limit {
                        map[c as usize] = order.len() as u32;
                        order.push(c);
                    }
                }
            }
        }
        let mut nodes = Vec::with_capacity(order.len().max(1024).min(self.cfg.node_budget));
        for &i in &order {
            if let Some(mut node) = old[i as usize].take() {
                node.children.retain(|ch| map[ch.1 as usize] != NONE);
                for ch in node.children.iter_mut() {
                    ch.1 = map[ch.1 as usize];
                }
                node.sim_memo = [(NONE, 0.0); 2];
                nodes.push(node);
            }
        }
        self.nodes = nodes;
        self.root = 0;
        self.reindex();
    }

    /// Recycling, when the tree is full: keeps the most visited half of the budget (a
    /// connected tree from the root, since a node has at least its children's visits) and
    /// frees the rest, so that search goes on growing the tree where it matters.
    fn recycle(&mut self) {
        let keep = self.cfg.node_budget / 2;
        if keep < 2 {
            return;
        }
        let mut visits: Vec<u32> = self.nodes.iter().map(|n| n.visits).collect();
        let k = visits.len().saturating_sub(keep).min(visits.len() - 1);
        let (_, &mut min_visits, _) = visits.select_nth_unstable(k);
        self.compact(self.root, keep, min_visits.max(1));
        self.recycled += 1;
    }

    /// Picks each role's move at `node` by UCB on its own statistics; writes the indices to
    /// `path_moves`, the moves to `joint`; returns the joint code.
    /// With GRAVE, each role's AMAF statistics are read at its reference node.
    fn select_joint(&mut self, ni: usize) -> u64 {
        let (amaf, bias) = (self.cfg.amaf, self.cfg.rave_bias);
        let c = if amaf == Amaf::Off { self.cfg.exploration } else { self.cfg.amaf_exploration };
        let ln = ((self.nodes[ni].visits.max(1)) as f64).ln();
        self.joint.clear();
        let mut code = 0u64;
        let mut radix = 1u64;
        let regret = !self.nodes[ni].regret.is_empty();
        let pooled = self.cfg.position_classes && self.nodes[ni].mover != NONE;
        if pooled {
            self.fill_class_means(ni);
        }
        for r in 0..self.roles {
            let (lo, k) = (self.nodes[ni].offs[r] as usize, self.nodes[ni].count(r));
            if regret && k > 1 {
                let (idx, p) = self.regret_match(ni, lo, k);
                self.path_moves.push(idx as u32);
                self.path_probs.push(p);
                self.joint.push(self.nodes[ni].moves[lo + idx]);
                code = code.wrapping_add((idx as u64).wrapping_mul(radix));
                radix = radix.wrapping_mul(k as u64);
                continue;
            }
            let refn = match self.amaf.refs.get(r) {
                Some(&g) if matches!(amaf, Amaf::Grave | Amaf::Similar) && g != NONE => g as usize,
                _ => ni,
            };
            let weight = if amaf == Amaf::Similar && refn != ni { self.sim.weight[r] } else { 1.0 };
            let hinted = ni == self.root as usize && self.hinted.iter().any(|h| h.0 as usize == r);
            let foreign = refn != ni;
            if foreign && self.amaf.pos_of[r].0 != refn as u32 {
                self.index_reference(refn, r);
            }
            let node = &self.nodes[ni];
            let src = &self.nodes[refn];
            let idx = if k == 1 {
                0
            } else {
                let start = self.rng.gen_range(0..k);
                let mut best = 0;
                let mut best_v = f64::NEG_INFINITY;
                for j in 0..k {
                    let m = (start + j) % k;
                    let n = node.n[lo + m];
                    // The move's reward sum, or its class's mean times its visits where the
                    // class has seen more.
                    let w = match self.class_mean.get(m) {
                        Some(&(cn, mean)) if pooled && r == node.mover as usize && cn > n => mean * n as f64,
                        _ => node.w[lo + m],
                    };
                    if hinted && self.hinted.iter().any(|h| h.0 as usize == r && h.1 == node.moves[lo + m]) {
                        // Proven lost by a similarity hint: searched only if all else is.
                        if best_v == f64::NEG_INFINITY {
                            best = m;
                        }
                        continue;
                    }
                    let v = if amaf == Amaf::Off {
                        if n == 0 {
                            f64::INFINITY
                        } else {
                            w / n as f64 + c * (ln / n as f64).sqrt()
                        }
                    } else {
                        let (an, aw) = if foreign {
                            let g = node.gid[lo + m] as usize;
                            if self.amaf.pos_stamp[g] == self.amaf.pos_of[r].1 {
                                let i = self.amaf.pos[g] as usize;
                                (src.an[i] as f64 * weight, src.aw[i] * weight)
                            } else {
                                (0.0, 0.0)
                            }
                        } else {
                            (node.an[lo + m] as f64, node.aw[lo + m])
                        };
                        rave_value(n, w, an, aw, bias, c, ln)
                    };
                    if v > best_v {
                        best_v = v;
                        best = m;
                        if v == f64::INFINITY {
                            break;
                        }
                    }
                }
                best
            };
            self.path_moves.push(idx as u32);
            self.path_probs.push(1.0);
            self.joint.push(node.moves[lo + idx]);
            code = code.wrapping_add((idx as u64).wrapping_mul(radix));
            radix = radix.wrapping_mul(k as u64);
        }
        code
    }

    /// Fills `class_mean` with, per move of the one role choosing at node `ni`, its child's
    /// class's descents and mean reward for that role ((0, 0) without a child or class).
    /// With one role choosing, a joint's code is that role's move index.
    fn fill_class_means(&mut self, ni: usize) {
        let node = &self.nodes[ni];
        let r = node.mover as usize;
        self.class_mean.clear();
        self.class_mean.resize(node.count(r), (0, 0.0));
        for &(code, child) in &node.children {
            let (cn, cw) = self.classes.stats(self.nodes[child as usize].class, r);
            if let Some(slot) = self.class_mean.get_mut(code as usize) {
                if cn > 0 {
                    *slot = (cn, cw / cn as f64);
                }
            }
        }
    }

    /// Regret matching at node `ni` for the role whose `k` moves start at `lo`: the strategy σ
    /// (positive regrets normalised, uniform when none is positive) is added to the role's
    /// strategy sum, and a move is sampled from σ mixed with γ of uniform; returns it and its
    /// probability.
    fn regret_match(&mut self, ni: usize, lo: usize, k: usize) -> (usize, f64) {
        let gamma = self.cfg.regret_exploration;
        let node = &mut self.nodes[ni];
        self.sigma.clear();
        self.sigma.extend(node.regret[lo..lo + k].iter().map(|&x| x.max(0.0)));
        let total: f64 = self.sigma.iter().sum();
        for (q, sum) in self.sigma.iter_mut().zip(&mut node.played[lo..lo + k]) {
            *q = if total > 0.0 { *q / total } else { 1.0 / k as f64 };
            *sum += *q;
            *q = (1.0 - gamma) * *q + gamma / k as f64;
        }
        let idx = sample(&self.sigma, self.rng.gen::<f64>());
        (idx, self.sigma[idx])
    }

    /// GRAVE: indexes `role`'s moves at `refn` by id, for [`Mcts::select_joint`].
    fn index_reference(&mut self, refn: usize, role: usize) {
        let a = &mut self.amaf;
        a.pos_stamp_now = a.pos_stamp_now.wrapping_add(1);
        if a.pos_stamp_now == 0 {
            a.pos_stamp.fill(0);
            a.pos_of.iter_mut().for_each(|p| *p = (NONE, 0));
            a.pos_stamp_now = 1;
        }
        let node = &self.nodes[refn];
        for i in node.offs[role] as usize..node.offs[role + 1] as usize {
            let g = node.gid[i] as usize;
            a.pos[g] = i as u32;
            a.pos_stamp[g] = a.pos_stamp_now;
        }
        a.pos_of[role] = (refn as u32, a.pos_stamp_now);
    }

    /// The AMAF update of one iteration: every node on the descent `path[lo..hi]`, and the
    /// node added (`leaf`), counts each role's moves played at or below it (once each) with
    /// that role's reward (`rewards`); `seq` holds the playout's moves as ids, roles per ply.
    /// With killer-RAVE only the last `killer_window` joint moves count, and only when the
    /// iteration ended in a terminal state with unequal rewards. `ended`: it did end so.
    /// Helpers' playouts ([`parallel`]) are counted here too, by the main thread.
    fn amaf_add(&mut self, lo: usize, hi: usize, leaf: u32, seq: &[u32], rewards: &[f64], ended: bool) {
        let roles = self.roles;
        let depth = hi - lo;
        let plies = seq.len() / roles.max(1);
        let total = depth + plies;
        let from = if self.cfg.amaf == Amaf::Killer {
            let decisive = ended && rewards.iter().any(|&v| v != rewards[0]);
            if !decisive {
                return;
            }
            total.saturating_sub(self.cfg.killer_window as usize)
        } else {
            0
        };
        let a = &mut self.amaf;
        a.stamp = a.stamp.wrapping_add(1);
        if a.stamp == 0 {
            a.mark.fill(0);
            a.stamp = 1;
        }
        let stamp = a.stamp;
        for p in from.max(depth)..total {
            for &g in &seq[(p - depth) * roles..(p - depth + 1) * roles] {
                if g != NONE {
                    a.mark[g as usize] = stamp;
                }
            }
        }
        let update = |node: &mut Node<M::State, M::Move>, mark: &[u32]| {
            for r in 0..roles {
                for i in node.offs[r] as usize..node.offs[r + 1] as usize {
                    if mark[node.gid[i] as usize] == stamp {
                        node.an[i] += 1;
                        node.aw[i] += rewards[r];
                    }
                }
            }
        };
        if leaf != NONE && !self.nodes[leaf as usize].solved {
            update(&mut self.nodes[leaf as usize], &a.mark);
        }
        for d in (0..depth).rev() {
            let node = &mut self.nodes[self.path[lo + d] as usize];
            if d >= from {
                for r in 0..roles {
                    let g = node.gid[node.offs[r] as usize + self.path_moves[(lo + d) * roles + r] as usize];
                    a.mark[g as usize] = stamp;
                }
            }
            update(node, &a.mark);
        }
    }

    /// GRAVE: forgets the reference nodes at the start of a descent.
    fn grave_reset(&mut self) {
        let a = &mut self.amaf;
        a.refs.clear();
        a.refs.resize(self.roles, NONE);
        a.pos_of.clear();
        a.pos_of.resize(self.roles, (NONE, 0));
    }

    /// GRAVE: a descent at node `cur`; with `grave_ref` visits it becomes the reference of
    /// each role with a choice there.
    fn grave_step(&mut self, cur: usize) {
        if self.nodes[cur].visits >= self.cfg.grave_ref {
            for r in 0..self.roles {
                if self.nodes[cur].count(r) > 1 {
                    self.amaf.refs[r] = cur as u32;
                }
            }
        }
    }

    /// MAST's update of one iteration: each role's moves on the path and in the playout
    /// count the role's reward (every play counts).
    fn mast_update(&mut self) {
        let seq = std::mem::take(&mut self.mast.seq);
        let rewards = std::mem::take(&mut self.rewards);
        self.mast_add(0, self.path.len(), &seq, &rewards);
        self.mast.seq = seq;
        self.rewards = rewards;
    }

    /// MAST's update for the descent `path[lo..hi]` and the playout of keys `seq` (roles per
    /// ply), which gave `rewards`; with NST's 2-grams on, theirs too (the descent's path
    /// begins at the root, and its playout follows it).
    fn mast_add(&mut self, lo: usize, hi: usize, seq: &[u32], rewards: &[f64]) {
        let roles = self.roles;
        if self.cfg.playout == Playout::Nst && roles > 0 {
            self.pairs_add(lo, hi, seq, rewards);
        }
        let table = &mut self.mast.table;
        let mut add = |key: u32, r: usize| {
            if key == NONE {
                return;
            }
            let k = key as usize;
            if k >= table.len() {
                // Engines whose move numbers grow as they go (the interpreter's terms).
                table.resize(k + 1, (0.0, 0.0));
            }
            table[k].0 += rewards[r];
            table[k].1 += 1.0;
        };
        for d in lo..hi {
            let node = &self.nodes[self.path[d] as usize];
            for r in 0..roles {
                let mv = node.moves[node.offs[r] as usize + self.path_moves[d * roles + r] as usize];
                add(mast_key::<M>(mv, r, roles), r);
            }
        }
        for (i, &key) in seq.iter().enumerate() {
            add(key, i % roles.max(1));
        }
    }

    /// NST's update of the 2-grams of the descent `path[lo..hi]` and its playout `seq` (see
    /// `mast_add`).
    fn pairs_add(&mut self, lo: usize, hi: usize, seq: &[u32], rewards: &[f64]) {
        let roles = self.roles;
        let MastState { pairs, before, now, .. } = &mut self.mast;
        before.clear();
        for d in lo..hi {
            step_keys::<M>(&self.nodes, &self.path, &self.path_moves, d, roles, now);
            if !before.is_empty() {
                nst::add_step(pairs, before, now, rewards);
            }
            std::mem::swap(before, now);
        }
        for step in seq.chunks_exact(roles) {
            if !before.is_empty() {
                nst::add_step(pairs, before, step, rewards);
            }
            before.clear();
            before.extend_from_slice(step);
        }
    }

    /// MAST at a new root: the table sized for the engine's moves, and the statistics of
    /// earlier turns decayed; NST's 2-grams made when the playouts are NST's.
    fn mast_new_root(&mut self, machine: &M, root_hash: u64) {
        let want = machine.move_number_bound().saturating_mul(self.roles).min(MAST_MAX_KEYS);
        if self.mast.table.len() < want {
            self.mast.table.resize(want, (0.0, 0.0));
        }
        if self.cfg.playout == Playout::Nst {
            self.mast.pairs.ensure();
            self.mast.before.reserve(self.roles);
            self.mast.now.reserve(self.roles);
        }
        // The playout's recorded moves, at their longest, so that iterations do not grow them.
        let most = self.cfg.max_playout_depth.min(100_000) * self.roles;
        self.mast.seq.reserve(most.saturating_sub(self.mast.seq.len()));
        if self.cfg.amaf != Amaf::Off {
            self.amaf.seq.reserve(most.saturating_sub(self.amaf.seq.len()));
        }
        if self.mast.at != Some(root_hash) {
            if self.mast.at.is_some() {
                let g = self.cfg.mast_decay;
                self.mast.table.iter_mut().for_each(|e| *e = (e.0 * g, e.1 * g));
                self.mast.pairs.decay(g);
            }
            self.mast.at = Some(root_hash);
        }
    }

    /// Similarity-guided AMAF, at node `cur` on the way down: signs the node when it has
    /// `sim_visits` visits (within the time share), makes it the path's proxy if signed, adds
    /// it to the candidates of the roles that choose there when it has `grave_ref` visits,
    /// and then picks each role's reference anew: the closest of its last three candidates
    /// whose similarity to the proxy is at least `sim_rho`.
    fn similar_step(&mut self, machine: &mut M, cur: usize) {
        let node = &self.nodes[cur];
        if !node.sig_tried && !node.solved && node.visits >= self.cfg.sim_visits {
            let stats = &self.sim.stats;
            let spent = stats.spent();
            let elapsed = stats.search_time + self.sim.started.elapsed();
            if self.cfg.sim_share > 0.0 && spent.as_secs_f64() <= self.cfg.sim_share * elapsed.as_secs_f64() {
                let t = Instant::now();
                let scratch = self.sim.scratch.get_or_insert_with(|| SigScratch::new(self.cfg.sim_max_states));
                let sig = scratch.compute(machine, &self.nodes[cur].state, self.cfg.sim_depth);
                let stats = &mut self.sim.stats;
                stats.signature_time += t.elapsed();
                stats.signatures += 1;
                stats.too_large += u64::from(sig.is_none());
                let node = &mut self.nodes[cur];
                node.sig = sig.map(Box::new);
                node.sig_tried = true;
            } else {
                self.sim.stats.skipped_for_time += 1;
            }
        }
        let node = &self.nodes[cur];
        if node.sig.is_none() {
            return;
        }
        self.sim.proxy = cur as u32;
        if node.visits >= self.cfg.grave_ref {
            for r in 0..self.roles {
                if self.nodes[cur].count(r) > 1 {
                    self.sim.cands[r].push(cur as u32);
                }
            }
        }
        for r in 0..self.roles {
            self.amaf.refs[r] = NONE;
            self.sim.weight[r] = 1.0;
            let k = self.sim.cands[r].len();
            for i in (k.saturating_sub(3)..k).rev() {
                let c = self.sim.cands[r][i];
                let s = self.similarity(cur, c as usize);
                if s >= self.cfg.sim_rho {
                    self.amaf.refs[r] = c;
                    self.sim.weight[r] = s;
                    break;
                }
            }
        }
    }

    /// Tactical similarity of two signed nodes, remembered at `a` for its last two `b`s.
    fn similarity(&mut self, a: usize, b: usize) -> f64 {
        if a == b {
            return 1.0;
        }
        if let Some(&(_, s)) = self.nodes[a].sim_memo.iter().find(|m| m.0 == b as u32) {
            return s;
        }
        let stats = &mut self.sim.stats;
        stats.comparisons += 1;
        let timed = stats.comparisons % SAMPLE == 0;
        let t = timed.then(Instant::now);
        let s = match (&self.nodes[a].sig, &self.nodes[b].sig) {
            (Some(x), Some(y)) => x.similarity(y),
            _ => 0.0,
        };
        if let Some(t) = t {
            stats.sampled += 1;
            stats.sampled_time += t.elapsed();
        }
        let memo = &mut self.nodes[a].sim_memo;
        memo[1] = memo[0];
        memo[0] = (b as u32, s);
        s
    }

    /// One iteration, or one batch of them with batched playouts on an engine that has a
    /// batch machine (given up at `until`); the descents made.
    fn step(&mut self, machine: &mut M, until: Instant) -> u64 {
        self.until = Some(until);
        let mut descents = 0;
        if self.helpers.is_some() {
            descents += self.feed_helpers(machine, until);
            if self.nodes.len() >= self.cfg.node_budget {
                // Recycling renumbers the nodes the helpers' descents hold.
                self.drain_helpers();
            }
        }
        if self.cfg.playout == Playout::Batch && machine.batch_lanes() > 0 {
            descents + self.iterate_batch(machine, until)
        } else {
            self.iterate(machine);
            descents + 1
        }
    }

    /// One iteration: select, expand one node, playout, back up.
    fn iterate(&mut self, machine: &mut M) {
        if self.nodes.len() >= self.cfg.node_budget {
            self.recycle();
        }
        self.path.clear();
        self.path_moves.clear();
        self.path_probs.clear();
        self.amaf.seq.clear();
        self.mast.seq.clear();
        let grave = self.cfg.amaf == Amaf::Grave;
        let similar = self.cfg.amaf == Amaf::Similar;
        if grave || similar {
            self.grave_reset();
        }
        if similar {
            let sim = &mut self.sim;
            sim.cands.resize_with(self.roles, Vec::new);
            sim.cands.iter_mut().for_each(Vec::clear);
            sim.weight.clear();
            sim.weight.resize(self.roles, 1.0);
            sim.proxy = NONE;
        }
        let mut ended = true;
        let mut cur = self.root as usize;
        machine.anchor(&self.nodes[cur].state);
        let mut leaf = NONE;
        loop {
            if self.nodes[cur].solved {
                self.rewards.clear();
                self.rewards.extend_from_slice(&self.nodes[cur].values);
                leaf = cur as u32;
                break;
            }
            if grave {
                self.grave_step(cur);
            }
            if similar {
                self.similar_step(machine, cur);
            }
            let code = self.select_joint(cur);
            self.path.push(cur as u32);
            if let Some(&(_, child)) = self.nodes[cur].children.iter().find(|&&(c, _)| c == code) {
                if self.cfg.transpositions && self.path.contains(&child) {
                    // Transpositions closed a cycle: the descent ends with a playout from
                    // the position it came back to.
                    let mut scratch = self.scratch.take().unwrap_or_else(|| self.nodes[child as usize].state.clone());
                    scratch.clone_from(&self.nodes[child as usize].state);
                    ended = self.playout(machine, &scratch);
                    self.scratch = Some(scratch);
                    break;
                }
                cur = child as usize;
                continue;
            }
            let mut scratch = self.scratch.take().unwrap_or_else(|| self.nodes[cur].state.clone());
            machine.next_state(&self.nodes[cur].state, &self.joint, &mut scratch);
            if let Some(t) = self.transposed(&scratch) {
                // Reached before by another order of moves: the descent goes on there.
                self.nodes[cur].children.push((code, t));
                self.scratch = Some(scratch);
                cur = t as usize;
                continue;
            }
            if self.nodes.len() < self.cfg.node_budget {
                let node = self.make_node(machine, scratch.clone());
                let id = self.nodes.len() as u32;
                self.nodes.push(node);
                self.index_node(id);
                self.nodes[cur].children.push((code, id));
                leaf = id;
                if self.nodes[id as usize].solved {
                    self.rewards.clear();
                    self.rewards.extend_from_slice(&self.nodes[id as usize].values);
                    self.scratch = Some(scratch);
                    break;
                }
            }
            ended = self.playout(machine, &scratch);
            self.scratch = Some(scratch);
            break;
        }
        if self.cfg.amaf != Amaf::Off {
            let seq = std::mem::take(&mut self.amaf.seq);
            let rewards = std::mem::take(&mut self.rewards);
            self.amaf_add(0, self.path.len(), leaf, &seq, &rewards, ended);
            self.amaf.seq = seq;
            self.rewards = rewards;
        }
        if self.cfg.playout.learns_moves() {
            self.mast_update();
        }
        let rewards = std::mem::take(&mut self.rewards);
        self.back_up(0, self.path.len(), leaf, 1, 0, &rewards);
        self.rewards = rewards;
    }

    /// Backs up `visits` playouts whose rewards sum to `sums` (per role) along the descent
    /// `path[lo..hi]` (its moves at `path_moves[lo * roles..hi * roles]`) ending at `leaf`
    /// (`NONE`: the tree was full), `marked` of those visits (scored 0) already counted as
    /// a virtual loss. Proofs go up from a solved leaf (MCTS-Solver).
    fn back_up(&mut self, lo: usize, hi: usize, leaf: u32, visits: u32, marked: u32, sums: &[f64]) {
        if leaf != NONE {
            self.nodes[leaf as usize].visits += visits;
        }
        let roles = self.roles;
        let add = visits - marked;
        if self.cfg.position_classes {
            // Each node below the descent's first counts it in its class (the root's class
            // ranks no move of this descent).
            for d in lo + 1..hi {
                self.classes.add(self.nodes[self.path[d] as usize].class, add, sums);
            }
            if leaf != NONE && (hi == lo || self.path[hi - 1] != leaf) {
                self.classes.add(self.nodes[leaf as usize].class, add, sums);
            }
        }
        let mut child_solved = leaf != NONE && self.nodes[leaf as usize].solved;
        for d in (lo..hi).rev() {
            let ni = self.path[d] as usize;
            let node = &mut self.nodes[ni];
            node.visits += add;
            for r in 0..roles {
                let i = node.offs[r] as usize + self.path_moves[d * roles + r] as usize;
                node.n[i] += add;
                node.w[i] += sums[r];
            }
            if !node.regret.is_empty() {
                // Regret matching: every move loses the reward got (summed over the visits),
                // the move played gains it back divided by its probability.
                for r in 0..roles {
                    let (a, b) = (node.offs[r] as usize, node.offs[r + 1] as usize);
                    if b - a > 1 {
                        let i = a + self.path_moves[d * roles + r] as usize;
                        let gain = sums[r] / self.path_probs[d * roles + r];
                        for (j, x) in node.regret[a..b].iter_mut().enumerate() {
                            let got = if a + j == i { gain } else { 0.0 };
                            *x = (*x + got - sums[r]).max(0.0);
                        }
                    }
                }
            }
            if child_solved && self.cfg.solver {
                child_solved = self.try_solve(ni);
            }
        }
    }

    /// Puts (`on`) or takes back a virtual loss on the descent `path[lo..hi]`: one visit
    /// scored 0 for every role (also taken back by [`Mcts::back_up`] with `marked` 1).
    fn virtual_loss(&mut self, lo: usize, hi: usize, on: bool) {
        let roles = self.roles;
        let step = |x: &mut u32| *x = if on { *x + 1 } else { *x - 1 };
        for d in lo..hi {
            let node = &mut self.nodes[self.path[d] as usize];
            step(&mut node.visits);
            for r in 0..roles {
                step(&mut node.n[node.offs[r] as usize + self.path_moves[d * roles + r] as usize]);
            }
        }
    }

    /// Up to `leaves` descents, each marked with a virtual loss, for playouts to come: their
    /// paths go one after another to `path` and `path_moves` (cleared first), the leaves'
    /// states to `starts` (a pool: the first `pending.len()` are these), and per descent its
    /// path's end and its leaf (`NONE` when the tree was full) to `pending` (cleared first).
    /// A descent that ends in a solved node is backed up at once and is not pending. Stops
    /// early when the root is solved. Returns the descents made.
    fn descend_marked(
        &mut self,
        machine: &mut M,
        leaves: usize,
        starts: &mut Vec<M::State>,
        pending: &mut Vec<(u32, u32)>,
    ) -> u64 {
        self.path.clear();
        self.path_moves.clear();
        self.path_probs.clear();
        pending.clear();
        let roles = self.roles;
        // GRAVE's references, per descent as in `iterate` (helpers' playouts gather AMAF
        // statistics; similarity-guided AMAF has no helpers).
        let grave = self.cfg.amaf == Amaf::Grave;
        let mut descents = 0u64;
        for _ in 0..leaves {
            if self.nodes[self.root as usize].solved {
                break;
            }
            descents += 1;
            let lo = self.path.len();
            let mut cur = self.root as usize;
            machine.anchor(&self.nodes[cur].state);
            let mut leaf = NONE;
            let mut solved = false;
            if grave {
                self.grave_reset();
            }
            loop {
                if self.nodes[cur].solved {
                    leaf = cur as u32;
                    solved = true;
                    break;
                }
                if grave {
                    self.grave_step(cur);
                }
                let code = self.select_joint(cur);
                self.path.push(cur as u32);
                if let Some(&(_, child)) = self.nodes[cur].children.iter().find(|&&(c, _)| c == code) {
                    cur = child as usize;
                    continue;
                }
                let k = pending.len();
                if starts.len() <= k {
                    starts.push(self.nodes[cur].state.clone());
                }
                machine.next_state(&self.nodes[cur].state, &self.joint, &mut starts[k]);
                if self.nodes.len() < self.cfg.node_budget {
                    let node = self.make_node(machine, starts[k].clone());
                    let id = self.nodes.len() as u32;
                    solved = node.solved;
                    self.nodes.push(node);
                    self.index_node(id);
                    self.nodes[cur].children.push((code, id));
                    leaf = id;
                }
                break;
            }
            let hi = self.path.len();
            if solved {
                let mut values = std::mem::take(&mut self.rewards);
                values.clear();
                values.extend_from_slice(&self.nodes[leaf as usize].values);
                if self.cfg.amaf != Amaf::Off {
                    // As `iterate` counts a descent that ends in a solved node.
                    self.amaf_add(lo, hi, leaf, &[], &values, true);
                }
                self.back_up(lo, hi, leaf, 1, 0, &values);
                self.rewards = values;
                // Its path is done with: the next descent writes over it.
                self.path.truncate(lo);
                self.path_moves.truncate(lo * roles);
                self.path_probs.truncate(lo * roles);
            } else {
                self.virtual_loss(lo, hi, true);
                pending.push((hi as u32, leaf));
            }
        }
        descents
    }

    /// Leaf-batched iterations ([`Playout::Batch`]): up to `batch_leaves` descents, each
    /// marked with a virtual loss, then playouts from all their leaves at once on the
    /// engine's batch machine, backed up. A descent that ends in a solved node is backed up
    /// at once. Playouts still running at `until` are given up (their descents unmarked,
    /// their new nodes kept unvisited). Returns the descents made.
    fn iterate_batch(&mut self, machine: &mut M, until: Instant) -> u64 {
        if self.nodes.len() >= self.cfg.node_budget {
            self.recycle();
        }
        let lanes = machine.batch_lanes();
        let leaves = self.cfg.batch_leaves.clamp(1, lanes.max(1));
        let roles = self.roles;
        let mut starts = std::mem::take(&mut self.batch.starts);
        let mut pending = std::mem::take(&mut self.batch.pending);
        let descents = self.descend_marked(machine, leaves, &mut starts, &mut pending);
        self.batch.starts = starts;
        self.batch.pending = pending;
        let k = self.batch.pending.len();
        if k == 0 {
            return descents;
        }
        self.batch.sums.resize(k * roles, 0.0);
        let mut sums = std::mem::take(&mut self.batch.sums);
        let depth = self.cfg.max_playout_depth;
        let ran = machine.batch_playouts(&self.batch.starts[..k], depth, &mut self.rng, &mut sums, Some(until));
        if ran == Some(0) {
            let mut lo = 0;
            for i in 0..k {
                let hi = self.batch.pending[i].0 as usize;
                self.virtual_loss(lo, hi, false);
                lo = hi;
            }
            self.batch.sums = sums;
            return descents;
        }
        let mut per = ran.unwrap_or(0);
        if per == 0 {
            // No batch machine: one playout per leaf, one at a time.
            let starts = std::mem::take(&mut self.batch.starts);
            for (i, from) in starts[..k].iter().enumerate() {
                self.playout(machine, from);
                sums[i * roles..(i + 1) * roles].copy_from_slice(&self.rewards);
            }
            self.batch.starts = starts;
            per = 1;
        }
        let mut lo = 0;
        for i in 0..k {
            let (hi, leaf) = self.batch.pending[i];
            self.back_up(lo, hi as usize, leaf, per as u32, 1, &sums[i * roles..(i + 1) * roles]);
            lo = hi as usize;
        }
        self.batch.sums = sums;
        descents
    }

    /// MCTS-Solver. Where at most one role chooses: proven if a child is proven to give the
    /// mover 100, or every joint move has a proven child (the mover's best). Where several
    /// roles choose at once (no minimax value in general), two sound cases: some role has a
    /// move whose every joint child is proven to give it 100 with one and the same value
    /// vector (a forced win whatever the others do), or every joint child is proven with one
    /// and the same value vector.
    fn try_solve(&mut self, ni: usize) -> bool {
        let node = &self.nodes[ni];
        if node.solved {
            return true;
        }
        if node.mover == NONE {
            return self.try_solve_simultaneous(ni);
        }
        let mover = node.mover as usize;
        let mut best: Option<u32> = None;
        let mut all = node.children.len() as u64 == node.joints;
        for &(_, c) in &node.children {
            let child = &self.nodes[c as usize];
            if !child.solved {
                all = false;
                continue;
            }
            if child.values[mover] >= 1.0 {
                best = Some(c);
                all = true;
                break;
            }
            if best.is_none_or(|b| child.values[mover] > self.nodes[b as usize].values[mover]) {
                best = Some(c);
            }
        }
        match best {
            Some(b) if all => {
                let values = self.nodes[b as usize].values.clone();
                let node = &mut self.nodes[ni];
                node.values = values;
                node.solved = true;
                true
            }
            _ => false,
        }
    }

    fn try_solve_simultaneous(&mut self, ni: usize) -> bool {
        let node = &self.nodes[ni];
        let same = |a: u32, b: u32| self.nodes[a as usize].values == self.nodes[b as usize].values;
        let solved = |c: u32| self.nodes[c as usize].solved;
        let mut found: Option<u32> = None;
        let mut radix = 1u64;
        'roles: for r in 0..self.roles {
            let k = node.count(r) as u64;
            if k > 1 {
                let per_move = node.joints / k;
                for m in 0..k {
                    let mut under = node.children.iter().filter(|&&(code, _)| (code / radix) % k == m).map(|&(_, c)| c);
                    let Some(first) = under.next() else { continue };
                    if !solved(first) || self.nodes[first as usize].values[r] < 1.0 {
                        continue;
                    }
                    let mut count = 1u64;
                    let mut ok = true;
                    for c in under {
                        count += 1;
                        if !solved(c) || !same(c, first) {
                            ok = false;
                            break;
                        }
                    }
                    if ok && count == per_move {
                        found = Some(first);
                        break 'roles;
                    }
                }
            }
            radix = radix.saturating_mul(k.max(1));
        }
        if found.is_none() && node.children.len() as u64 == node.joints {
            let first = node.children.first().map(|&(_, c)| c);
            if let Some(f) = first {
                if node.children.iter().all(|&(_, c)| solved(c) && same(c, f)) {
                    found = Some(f);
                }
            }
        }
        match found {
            Some(f) => {
                let values = self.nodes[f as usize].values.clone();
                let node = &mut self.nodes[ni];
                node.values = values;
                node.solved = true;
                true
            }
            None => false,
        }
    }

    /// A random playout from `from`; its rewards go to `rewards`, its moves (with AMAF on) to
    /// the AMAF sequence. Whether it reached a terminal state.
    fn playout(&mut self, machine: &mut M, from: &M::State) -> bool {
        let mut play = self.play.take().unwrap_or_else(|| from.clone());
        play.clone_from(from);
        let stop = &self.stop;
        let mut bufs =
            self.bufs.take().unwrap_or_else(|| PlayoutBuffers { stop: stop.clone(), ..PlayoutBuffers::new(machine) });
        bufs.deadline = self.until;
        // Decisive moves' buffers while they are in use (taken out, put back below).
        let kit = self.kit();
        let mut dec = self.cfg.decisive.then(|| self.dec.take().unwrap_or_else(|| kit.decisive_buffers(machine)));
        let amaf = (self.cfg.amaf != Amaf::Off).then_some((&self.amaf.ids, &mut self.amaf.seq));
        self.mast.seq.clear();
        let nst = self.cfg.playout == Playout::Nst;
        if nst {
            // The tree's last joint move: the context of the playout's first.
            match self.path.len() {
                0 => self.mast.before.clear(),
                n => {
                    step_keys::<M>(&self.nodes, &self.path, &self.path_moves, n - 1, self.roles, &mut self.mast.before)
                }
            }
        }
        let mast = self.cfg.playout.learns_moves().then_some(MastSink {
            table: &self.mast.table[..],
            pairs: nst.then_some(&self.mast.pairs),
            before: if nst { &self.mast.before[..] } else { &[] },
            seq: &mut self.mast.seq,
        });
        let result = kit.run(machine, &mut play, &mut self.rng, &mut bufs, dec.as_mut(), mast, amaf);
        if dec.is_some() {
            self.dec = dec;
        }
        let h = self.heuristic.as_deref().filter(|_| self.cfg.cutoff > 0);
        Self::score(machine, h, &play, result.terminal, &mut self.rewards);
        self.play = Some(play);
        self.bufs = Some(bufs);
        result.terminal
    }

    /// The radix of `role`'s move index in the joint codes of node `ni`.
    fn radix(&self, ni: usize, role: usize) -> u64 {
        let node = &self.nodes[ni];
        (0..role).fold(1u64, |acc, r| acc.saturating_mul(node.count(r).max(1) as u64))
    }

    /// Per move of `role` at node `ni`: its proven value, when every joint child under it is
    /// proven (the worst of them for `role`: exact when `role` alone chooses, a guaranteed
    /// floor otherwise).
    fn proven_moves(&self, ni: usize, role: usize) -> Vec<Option<f64>> {
        let node = &self.nodes[ni];
        let k = node.count(role);
        if k == 0 {
            return Vec::new();
        }
        let radix = self.radix(ni, role);
        let per_move = node.joints / k as u64;
        let mut solved = vec![0u64; k];
        let mut worst = vec![f64::INFINITY; k];
        for &(code, c) in &node.children {
            let child = &self.nodes[c as usize];
            let idx = (code / radix.max(1)) as usize % k;
            if child.solved {
                solved[idx] += 1;
                worst[idx] = worst[idx].min(child.values[role]);
            }
        }
        (0..k).map(|i| (solved[i] == per_move).then_some(worst[i])).collect()
    }

    /// The joint move of code `code` at node `ni`.
    fn joint_of(&self, ni: usize, code: u64) -> Vec<M::Move> {
        let node = &self.nodes[ni];
        let mut rest = code;
        (0..self.roles)
            .map(|r| {
                let k = node.count(r) as u64;
                let i = rest % k.max(1);
                rest /= k.max(1);
                node.moves[node.offs[r] as usize + i as usize]
            })
            .collect()
    }

    /// Traps at the root for `role` (MCTS-Solver): moves proven to give `role` its lowest
    /// reward (0) while some other move is not. Each with the proof's line: the joint child
    /// worst for `role`, then at each proven node a child holding the node's proven values,
    /// down to a terminal state. Reported once per (state, move).
    /// With `trap_hints`, each is remembered for the hints of later roots.
    fn find_traps(&mut self, machine: &mut M, role: usize, chosen: M::Move) {
        let ri = self.root as usize;
        let proven = self.proven_moves(ri, role);
        let lost = |p: &Option<f64>| p.is_some_and(|v| v <= 0.0);
        if !proven.iter().any(lost) || proven.iter().all(lost) {
            return;
        }
        let hash = state_hash(&self.nodes[ri].state);
        let first_new = self.traps.len();
        let (lo, k) = (self.nodes[ri].offs[role] as usize, self.nodes[ri].count(role));
        let radix = self.radix(ri, role);
        for i in (0..k).filter(|&i| lost(&proven[i])) {
            let mv = self.nodes[ri].moves[lo + i];
            if !self.reported.insert((hash, mv)) {
                continue;
            }
            let under = self.nodes[ri].children.iter().filter(|&&(code, _)| (code / radix) as usize % k == i);
            let Some(&(code, first)) = under
                .min_by(|a, b| self.nodes[a.1 as usize].values[role].total_cmp(&self.nodes[b.1 as usize].values[role]))
            else {
                continue;
            };
            let mut line = vec![self.joint_of(ri, code)];
            let mut cur = first as usize;
            while !self.nodes[cur].moves.is_empty() && line.len() < 1000 {
                let values = &self.nodes[cur].values;
                let next = self.nodes[cur]
                    .children
                    .iter()
                    .find(|&&(_, c)| self.nodes[c as usize].solved && self.nodes[c as usize].values == *values);
                let Some(&(code, c)) = next else { break };
                line.push(self.joint_of(cur, code));
                cur = c as usize;
            }
            let complete = self.nodes[cur].moves.is_empty();
            self.traps.push(TrapFound {
                role,
                mv,
                line,
                complete,
                value: proven[i].unwrap_or(0.0),
                how: "solver",
                chosen,
                hint: None,
            });
        }
        if self.cfg.trap_hints && self.traps.len() > first_new {
            self.remember_traps(machine, role, first_new);
        }
    }

    /// The root's signature, computed into the node if it has none yet (so a search's hint
    /// check and its remembering share it); `None` when too large.
    fn root_signature(&mut self, machine: &mut M) -> Option<TacticsSig> {
        let ri = self.root as usize;
        if !self.nodes[ri].sig_tried {
            let scratch = self.sim.scratch.get_or_insert_with(|| SigScratch::new(self.cfg.sim_max_states));
            let sig = scratch.compute(machine, &self.nodes[ri].state, self.cfg.sim_depth);
            let node = &mut self.nodes[ri];
            node.sig = sig.map(Box::new);
            node.sig_tried = true;
        }
        self.nodes[ri].sig.as_deref().cloned()
    }

    /// Remembers the traps found at the root since `self.traps[from]`, for similarity hints:
    /// the root's signature once, and the complete refutations (a few per position, so that
    /// the work after the search stays small).
    fn remember_traps(&mut self, machine: &mut M, role: usize, from: usize) {
        let ri = self.root as usize;
        let Some(sig) = self.root_signature(machine) else { return };
        let state = self.nodes[ri].state.clone();
        let lines: Vec<&[Vec<M::Move>]> =
            self.traps[from..].iter().filter(|t| t.complete).map(|t| t.line.as_slice()).collect();
        self.memory.remember(machine, &sig, &state, role, &lines);
    }

    /// Whether the root is one where the exact trap checks apply: `role` alone chooses, and
    /// nothing is proven there yet.
    fn checkable_root(&self, role: usize) -> bool {
        let node = &self.nodes[self.root as usize];
        !node.solved && (0..self.roles).all(|r| r == role || node.count(r) == 1)
    }

    /// Exact trap checks on a collapse ([`super::trap_check`]): the moves whose mean has
    /// collapsed at the root are checked by the exact trap finder.
    fn check_collapse(&mut self, machine: &mut M, role: usize, iterations: u64, deadline: Instant) {
        if !self.checkable_root(role) {
            self.watch.stop();
            return;
        }
        let node = &self.nodes[self.root as usize];
        let (lo, k) = (node.offs[role] as usize, node.count(role));
        let left = |d: Instant| d.saturating_duration_since(Instant::now());
        // Nothing is allocated unless a check runs.
        if self.watch.scan(iterations, &node.n[lo..lo + k], &node.w[lo..lo + k]).is_empty()
            || !self.watch.may_check(self.sim.started.elapsed(), left(deadline))
        {
            return;
        }
        for i in self.watch.collapsed().to_vec() {
            if !self.watch.may_check(self.sim.started.elapsed(), left(deadline)) {
                break;
            }
            self.prove_lost(machine, role, i, "collapse", deadline);
        }
    }

    /// Exact trap checks of the choice ([`super::trap_check`]), once the search is over: the
    /// move `best` would play is checked, and while a check proves it lost, the next,
    /// [`trap_check::CHOICES`] at most, until `deadline`.
    fn check_choice(&mut self, machine: &mut M, role: usize, deadline: Instant) {
        if !self.checkable_root(role) {
            return;
        }
        for _ in 0..trap_check::CHOICES {
            let Some((i, _, proven)) = self.best(role) else { return };
            if proven || self.watch.is_checked(i) || Instant::now() >= deadline {
                return;
            }
            if !self.prove_lost(machine, role, i, "choice", deadline) {
                return;
            }
        }
    }

    /// Runs the exact trap finder on root move `i` of `role` (once per root: the watch
    /// records it); a move proven lost is kept out of the search and of the choice, as a
    /// similarity hint's is, and its trap reported once the move is chosen, found by `how`.
    /// Whether it was proven lost.
    fn prove_lost(&mut self, machine: &mut M, role: usize, i: usize, how: &'static str, deadline: Instant) -> bool {
        let ri = self.root as usize;
        let node = &self.nodes[ri];
        let mv = node.moves[node.offs[role] as usize + i];
        let known = self.hinted.iter().any(|h| h.0 as usize == role && h.1 == mv);
        if known || self.proven_moves(ri, role)[i].is_some() {
            self.watch.checked(i, Duration::ZERO, false);
            return known;
        }
        let state = self.nodes[ri].state.clone();
        let now = Instant::now();
        let mut finder = crate::traps::TrapSearch::new(machine, role, 0, trap_check::BUDGET).until(deadline);
        let found = finder.move_loses(&state, mv, trap_check::DEPTH).flatten();
        let nodes = finder.nodes;
        self.watch.checked(i, now.elapsed(), found.is_some());
        tracing::debug!(
            how,
            mv = %machine.move_text(mv),
            nodes,
            ms = now.elapsed().as_secs_f64() * 1e3,
            lost = found.is_some(),
            "trap check"
        );
        let Some((_, line)) = found else { return false };
        self.hinted.push((role as u32, mv));
        if !self.reported.insert((state_hash(&state), mv)) {
            return true;
        }
        let mut end = state;
        for joint in &line {
            let mut next = end.clone();
            machine.next_state(&end, joint, &mut next);
            end = next;
        }
        self.hint_finds.push(TrapFound {
            role,
            mv,
            complete: machine.is_terminal(&end),
            line,
            value: 0.0,
            how,
            chosen: mv,
            hint: None,
        });
        true
    }

    /// Similarity hints at a new root (see [`super::trap_memory`]): the moves of `role` that
    /// remembered traps of similar positions lead the exact finder to prove lost. They are
    /// kept out of the search and reported once the move is chosen.
    /// New checks start only within a tenth of the time left before `deadline`.
    fn check_hints(&mut self, machine: &mut M, role: usize, deadline: Instant) {
        let ri = self.root as usize;
        if self.memory.is_empty() || self.nodes[ri].solved {
            return;
        }
        let Some(sig) = self.root_signature(machine) else { return };
        let state = self.nodes[ri].state.clone();
        let proven = self.proven_moves(ri, role);
        let (lo, k) = (self.nodes[ri].offs[role] as usize, self.nodes[ri].count(role));
        let known: Vec<M::Move> = (0..k)
            .filter(|&i| proven.get(i).is_some_and(|p| p.is_some()))
            .map(|i| self.nodes[ri].moves[lo + i])
            .collect();
        let t = Instant::now();
        let until = t + deadline.saturating_duration_since(t) / HINT_SHARE;
        let found = self.memory.check(
            machine,
            &state,
            &sig,
            self.cfg.sim_depth,
            role,
            (self.cfg.sim_rho, HINT_BUDGET, until),
            &known,
        );
        let ms = t.elapsed().as_secs_f64() * 1e3;
        tracing::debug!(ms, found = found.len(), memos = self.memory.len(), "trap hints checked");
        let hash = state_hash(&state);
        for h in found {
            if !self.reported.insert((hash, h.mv)) {
                continue;
            }
            self.hinted.push((role as u32, h.mv));
            self.hint_finds.push(TrapFound {
                role,
                mv: h.mv,
                line: h.line,
                complete: h.complete,
                value: 0.0,
                how: "similarity",
                chosen: h.mv,
                hint: Some(h.hint),
            });
        }
    }

    /// Regret matching's average strategy of `role` at the root (the strategies it played,
    /// summed and normalised; one probability per legal move), or None where the root is not
    /// a simultaneous node searched by regret matching.
    pub fn root_average_strategy(&self, role: usize) -> Option<Vec<f64>> {
        let node = self.nodes.get(self.root as usize)?;
        if node.regret.is_empty() || role >= self.roles {
            return None;
        }
        let played = &node.played[node.offs[role] as usize..node.offs[role + 1] as usize];
        let total: f64 = played.iter().sum();
        Some(played.iter().map(|&q| if total > 0.0 { q / total } else { 0.0 }).collect())
    }

    /// Regret matching at a simultaneous root: a move sampled from the role's average
    /// strategy (the strategies it played, summed), moves below `regret_threshold` of it left
    /// out (the most likely move always stays), with its mean reward.
    fn average_strategy_move(&mut self, role: usize) -> (usize, f64, bool) {
        let node = &self.nodes[self.root as usize];
        let (lo, k) = (node.offs[role] as usize, node.count(role));
        let played = &node.played[lo..lo + k];
        let total: f64 = played.iter().sum();
        let top = played.iter().copied().fold(0.0, f64::max);
        let floor = (self.cfg.regret_threshold * total).min(top);
        self.sigma.clear();
        self.sigma.extend(played.iter().map(|&q| if q >= floor { q } else { 0.0 }));
        let mass: f64 = self.sigma.iter().sum();
        let idx = if mass > 0.0 { sample(&self.sigma, self.rng.gen::<f64>() * mass) } else { 0 };
        let n = node.n[lo + idx];
        (idx, if n == 0 { 0.0 } else { node.w[lo + idx] / n as f64 }, false)
    }

    /// The move for `role` at the root: a proven win, else the most visited move that is
    /// not a proven loss (ties by mean), else the best proven value.
    fn best(&self, role: usize) -> Option<(usize, f64, bool)> {
        let node = &self.nodes[self.root as usize];
        let k = node.count(role);
        if k == 0 {
            return None;
        }
        let lo = node.offs[role] as usize;
        let mut proven = self.proven_moves(self.root as usize, role);
        for (i, p) in proven.iter_mut().enumerate() {
            if p.is_none() && self.hinted.iter().any(|h| h.0 as usize == role && h.1 == node.moves[lo + i]) {
                *p = Some(0.0);
            }
        }
        if let Some(i) = (0..k).find(|&i| proven[i].is_some_and(|v| v >= 1.0)) {
            return Some((i, 1.0, true));
        }
        let mean = |i: usize| if node.n[lo + i] == 0 { 0.0 } else { node.w[lo + i] / node.n[lo + i] as f64 };
        let unproven: Vec<usize> = (0..k).filter(|&i| proven[i].is_none()).collect();
        if unproven.is_empty() {
            let i = (0..k).max_by(|&a, &b| proven[a].unwrap_or(0.0).total_cmp(&proven[b].unwrap_or(0.0)))?;
            return Some((i, proven[i].unwrap_or(0.0), true));
        }
        // A proven draw-or-better may beat the unproven moves' means.
        let i = *unproven
            .iter()
            .max_by(|&&a, &&b| node.n[lo + a].cmp(&node.n[lo + b]).then(mean(a).total_cmp(&mean(b))))?;
        if let Some(j) = (0..k)
            .filter(|&j| proven[j].is_some())
            .max_by(|&a, &b| proven[a].unwrap_or(0.0).total_cmp(&proven[b].unwrap_or(0.0)))
        {
            let pv = proven[j].unwrap_or(0.0);
            if pv > mean(i) {
                return Some((j, pv, true));
            }
        }
        Some((i, mean(i), false))
    }
}

impl<M: StateMachine> Search<M> for Mcts<M>
where
    M::State: Send,
    M::Move: Send,
{
    fn name(&self) -> &'static str {
        "mcts"
    }

    fn select(&mut self, machine: &mut M, state: &M::State, role: usize, limit: Limit<'_>) -> Option<Choice<M::Move>> {
        // Playouts read the search's cancel flag too (set once per search, not per playout).
        self.stop = limit.shared.cloned();
        if let Some(b) = self.bufs.as_mut() {
            b.stop.clone_from(&self.stop);
        }
        if self.roles != machine.roles().len() {
            self.roles = machine.roles().len();
            self.nodes.clear();
            self.root = NONE;
            self.amaf = AmafState::new();
            self.classes = PositionClasses::new(self.roles);
            self.mast = MastState::new();
        }
        if role >= self.roles {
            return None;
        }
        self.set_root(machine, state);
        let root = &self.nodes[self.root as usize];
        if root.solved && root.moves.is_empty() {
            return None;
        }
        self.sim.started = Instant::now();
        let root_hash = state_hash(&root.state);
        if self.cfg.playout.learns_moves() {
            self.mast_new_root(machine, root_hash);
        }
        if self.hinted_at != Some(root_hash) {
            self.hinted.clear();
            self.hinted_at = Some(root_hash);
            // The hints cost milliseconds: not when the clock is nearly out.
            if self.cfg.trap_hints && limit.deadline.saturating_duration_since(Instant::now()) > HINT_MIN_TIME {
                self.check_hints(machine, role, limit.deadline);
            }
        }
        let mut iterations = 0u64;
        // Nothing to think about with a single legal move (the tree still grows below it on
        // the other roles' turns).
        let single = self.nodes[self.root as usize].count(role) == 1;
        let watch = self.cfg.trap_check && !single;
        // The exact checks of the choice get the end of the time.
        let (limit, end) = if watch {
            self.watch.start(root_hash, self.nodes[self.root as usize].count(role));
            let left = limit.deadline.saturating_duration_since(Instant::now());
            (Limit { deadline: limit.deadline - TrapWatch::reserve(left), ..limit }, limit.deadline)
        } else {
            (limit, limit.deadline)
        };
        if !single {
            while !self.nodes[self.root as usize].solved && !limit.over() && !limit.spent(iterations) {
                iterations += self.step(machine, limit.deadline);
                if watch && self.watch.due(iterations) {
                    self.check_collapse(machine, role, iterations, limit.deadline);
                }
            }
        } else {
            // Spend a little of the time anyway, so the tree is ready for later turns.
            let now = std::time::Instant::now();
            let half = Limit { deadline: now + limit.deadline.saturating_duration_since(now) / 2, ..limit };
            while !self.nodes[self.root as usize].solved && !half.over() && !half.spent(iterations) {
                iterations += self.step(machine, half.deadline);
            }
        }
        // The helpers' descents backed up: no virtual loss is left to mislead the choice.
        self.drain_helpers();
        if watch && !limit.cancelled() {
            self.check_choice(machine, role, end);
        }
        self.sim.stats.search_time += self.sim.started.elapsed();
        let (idx, value, proven) = match self.best(role)? {
            // A proven win stands; otherwise each move's proven value is only its worst case
            // against the other roles' moves, which is not how a simultaneous node is played.
            (_, v, proven) if !self.nodes[self.root as usize].regret.is_empty() && !(proven && v >= 1.0) => {
                self.average_strategy_move(role)
            }
            best => best,
        };
        let root = &self.nodes[self.root as usize];
        let mv = root.moves[root.offs[role] as usize + idx];
        // A trap is a loss some other move avoids: where the move chosen is lost too, every
        // move is, and the moves proven lost outside the tree are not traps.
        let lost = (proven && value <= 0.0) || self.hinted.iter().any(|h| h.0 as usize == role && h.1 == mv);
        for mut t in self.hint_finds.drain(..) {
            t.chosen = mv;
            if !lost {
                self.traps.push(t);
            }
        }
        self.find_traps(machine, role, mv);
        Some(Choice { mv, value: Some(value), iterations, proven })
    }

    fn take_traps(&mut self) -> Vec<TrapFound<M::Move>> {
        std::mem::take(&mut self.traps)
    }

    fn similarity_stats(&self) -> Option<SimStats> {
        Some(self.sim.stats)
    }

    fn root_moves(&self, role: usize) -> Vec<(M::Move, u64, f64)> {
        self.root_stats(role).into_iter().map(|(mv, n, w)| (mv, n as u64, w)).collect()
    }
}

/// Root-parallel MCTS's choice from the trees' summed root statistics `(visits, reward sum)`
/// per move and each move's proven value, as [`Mcts`] chooses from one tree: a proven win,
/// else the most visited move not proven (ties by mean), unless a proven value beats its
/// mean; when every move is proven, the best. `None` when nothing was searched.
fn combine_roots(stats: &[(u64, f64)], proven: &[Option<f64>]) -> Option<(usize, f64, bool)> {
    if let Some(i) = (0..stats.len()).find(|&i| proven[i].is_some_and(|v| v >= 1.0)) {
        return Some((i, 1.0, true));
    }
    let mean = |i: usize| if stats[i].0 == 0 { 0.0 } else { stats[i].1 / stats[i].0 as f64 };
    let best_proven = (0..stats.len())
        .filter(|&j| proven[j].is_some())
        .max_by(|&a, &b| proven[a].unwrap_or(0.0).total_cmp(&proven[b].unwrap_or(0.0)));
    let unproven = (0..stats.len())
        .filter(|&i| proven[i].is_none())
        .max_by(|&a, &b| stats[a].0.cmp(&stats[b].0).then(mean(a).total_cmp(&mean(b))));
    match (unproven, best_proven) {
        (Some(i), Some(j)) if proven[j].unwrap_or(0.0) > mean(i) => Some((j, proven[j].unwrap_or(0.0), true)),
        (Some(i), _) if stats[i].0 > 0 => Some((i, mean(i), false)),
        (Some(_), _) => None,
        (None, Some(j)) => Some((j, proven[j].unwrap_or(0.0), true)),
        (None, None) => None,
    }
}

/// Root-parallel MCTS: one independent tree per thread (seeds differ), each on its own clone
/// of the engine, searching the same state until the same deadline; the move with the most
/// visits summed over the trees is played, unless a tree has proven a win, and never a move
/// a tree has proven lost while another is not ([`combine_roots`]).
pub struct ParallelMcts<M: StateMachine> {
    trees: Vec<Mcts<M>>,
}

impl<M: StateMachine> ParallelMcts<M> {
    pub fn new(cfg: MctsConfig, threads: usize) -> ParallelMcts<M> {
        let trees = (0..threads.max(1) as u64)
            .map(|i| {
                Mcts::new(MctsConfig { seed: cfg.seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)), ..cfg })
            })
            .collect();
        ParallelMcts { trees }
    }

    /// This search, every tree's playouts scored by `h` where cut ([`Mcts::set_heuristic`]).
    pub fn with_heuristic(mut self, h: Option<Arc<Heuristic>>) -> Self {
        for t in &mut self.trees {
            t.set_heuristic(h.clone());
        }
        self
    }
}

impl<M> Search<M> for ParallelMcts<M>
where
    M: StateMachine + Clone + Send,
    M::State: Send,
    M::Move: Send,
{
    fn name(&self) -> &'static str {
        "mcts"
    }

    fn select(&mut self, machine: &mut M, state: &M::State, role: usize, limit: Limit<'_>) -> Option<Choice<M::Move>> {
        let (first, rest) = self.trees.split_first_mut()?;
        if !machine.clones_share_states() {
            // The other trees would keep states and moves of clones that no longer agree.
            return first.select(machine, state, role, limit);
        }
        let mut clones: Vec<M> = rest.iter().map(|_| machine.clone()).collect();
        let choices: Vec<Option<Choice<M::Move>>> = std::thread::scope(|s| {
            let handles: Vec<_> = rest
                .iter_mut()
                .zip(clones.iter_mut())
                .map(|(tree, m)| s.spawn(move || tree.select(m, state, role, limit)))
                .collect();
            let mut out = vec![first.select(machine, state, role, limit)];
            // A worker that panicked counts as a tree with no answer.
            out.extend(handles.into_iter().map(|h| h.join().ok().flatten()));
            out
        });
        let iterations: u64 = choices.iter().flatten().map(|c| c.iterations).sum();
        if let Some(c) = choices.iter().flatten().find(|c| c.proven && c.value.is_some_and(|v| v >= 1.0)) {
            return Some(Choice { iterations, ..c.clone() });
        }
        let total = self.root_moves(role);
        // A move any tree has proven keeps that value (proofs are exact, so trees agree).
        let mut proven: Vec<Option<f64>> = vec![None; total.len()];
        for tree in &self.trees {
            let moves = tree.root_stats(role);
            for ((mv, _, _), p) in moves.iter().zip(tree.root_proven(role)) {
                if let (Some(i), Some(v)) = (total.iter().position(|t| t.0 == *mv), p) {
                    proven[i] = Some(proven[i].map_or(v, |u: f64| u.min(v)));
                }
            }
        }
        let fallback = choices.into_iter().flatten().next()?;
        let stats: Vec<(u64, f64)> = total.iter().map(|t| (t.1, t.2)).collect();
        match combine_roots(&stats, &proven) {
            Some((i, value, proven)) => Some(Choice { mv: total[i].0, value: Some(value), iterations, proven }),
            None => Some(Choice { iterations, ..fallback }),
        }
    }

    /// The root visits of every tree summed, move by move.
    fn root_moves(&self, role: usize) -> Vec<(M::Move, u64, f64)> {
        let mut total: Vec<(M::Move, u64, f64)> = Vec::new();
        for tree in &self.trees {
            for (mv, n, w) in tree.root_stats(role) {
                match total.iter_mut().find(|(m, _, _)| *m == mv) {
                    Some(t) => {
                        t.1 += n as u64;
                        t.2 += w;
                    }
                    None => total.push((mv, n as u64, w)),
                }
            }
        }
        total
    }

    /// The trees' traps, each move once (the trees search the same states).
    fn take_traps(&mut self) -> Vec<TrapFound<M::Move>> {
        let mut out: Vec<TrapFound<M::Move>> = Vec::new();
        for tree in &mut self.trees {
            for t in tree.take_traps() {
                if !out.iter().any(|o| o.role == t.role && o.mv == t.mv) {
                    out.push(t);
                }
            }
        }
        out
    }
}

#[path = "mcts_parallel.rs"]
mod parallel;
pub use parallel::TreeParallelMcts;

#[cfg(test)]
#[path = "amaf_tests.rs"]
mod amaf_tests;

#[cfg(test)]
#[path = "mast_tests.rs"]
mod mast_tests;

#[cfg(test)]
#[path = "batch_tests.rs"]
mod batch_tests;

#[cfg(test)]
#[path = "transposition_tests.rs"]
mod transposition_tests;

#[cfg(test)]
#[path = "parallel_tests.rs"]
mod parallel_tests;

#[cfg(test)]
#[path = "cutoff_tests.rs"]
mod cutoff_tests;

#[cfg(test)]
#[path = "regret_tests.rs"]
mod regret_tests;

#[cfg(test)]
#[path = "classes_tests.rs"]
mod classes_tests;
