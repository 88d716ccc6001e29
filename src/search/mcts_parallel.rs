//! Tree-parallel MCTS ([`TreeParallelMcts`]): one tree, searched with the playouts of
//! several threads.
//!
//! The main thread owns the tree and does every tree operation (selection, expansion, back
//! up, solving, recycling). Each helper thread owns a clone of the engine and only plays
//! playouts. The main thread hands an idle helper a *job*: `HELPER_LEAVES` descents (or
//! `batch_leaves` with batched playouts), each marked with a virtual loss so that they spread
//! over the tree, and their leaves' states; it then goes on with its own iterations, and at
//! each step backs up whatever a helper has finished (taking its virtual losses back) and
//! gives it the next job. The tree never waits for a helper, except before it is cut back
//! (recycling renumbers nodes) and at the end of a search (so that the answer sees no virtual
//! loss).
//!
//! This is tree parallelisation with virtual loss (Chaslot, Winands and van den Herik 2008)
//! in its master–worker form: no lock on the tree, because only one thread touches it. The
//! helpers play what the main thread plays (random or MAST moves, with decisive moves when
//! on, or the batch machine's playouts); MAST's table reaches a helper as a copy made when
//! the job is handed over (made again only once twenty times what the last copy took has
//! passed, so that copying a large table costs at most ~5% of the time), and the moves a helper played come back
//! with its rewards to update the table on the main thread. AMAF statistics (RAVE, GRAVE,
//! killer-RAVE) are gathered the same way: a job carries a copy of the moves' AMAF ids (made
//! again when a node has given a move a new id), the helper records its playouts' moves as
//! ids, and the main thread makes the AMAF update of each descent when it backs it up;
//! GRAVE's reference nodes are set as the main thread makes the descents. Similarity-guided
//! AMAF computes its similarities during the descent and is not shared: with it, the search
//! runs on the main thread alone.

use super::*;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};

/// Descents in a helper's job when its playouts run one at a time: enough that handing jobs
/// over costs little against the playouts, few enough that the virtual losses stay few.
pub(super) const HELPER_LEAVES: usize = 8;

/// The helper threads of one tree.
pub(super) struct Helpers<S, Mv> {
    links: Vec<Link<S, Mv>>,
    /// Playouts the helpers have played and the tree has backed up.
    playouts: u64,
}

/// Jobs a helper holds at once: while it plays one, the next waits, so that it does not
/// idle until the main thread's next step.
const JOBS: usize = 2;

/// One helper, as the main thread sees it.
struct Link<S, Mv> {
    to: SyncSender<Job<S, Mv>>,
    from: Receiver<Job<S, Mv>>,
    /// The job buffers not out with the helper.
    idle: Vec<Job<S, Mv>>,
    /// Per job buffer (by its `slot`), its descents while it is out.
    slots: [Descents; JOBS],
    /// When MAST's table was last copied into a job, and what the copy took.
    table_at: Option<Instant>,
    table_cost: Duration,
}

/// A job's descents, kept by the main thread: their paths one after another, their moves,
/// and per descent its path's end and its leaf.
#[derive(Default)]
struct Descents {
    path: Vec<u32>,
    path_moves: Vec<u32>,
    path_probs: Vec<f64>,
    pending: Vec<(u32, u32)>,
    out: bool,
}

/// The playouts one helper plays, and what they gave: buffers that go back and forth.
struct Job<S, Mv> {
    /// Which of the link's [`Descents`] are this job's.
    slot: usize,
    starts: Vec<S>,
    /// The leaves played from (the first `count` of `starts`).
    count: usize,
    /// On the engine's batch machine (else one playout at a time).
    batch: bool,
    decisive: bool,
    /// MAST playouts, by the copy of the table in `table` (and NST's, of the 2-grams in `pairs`).
    mast: bool,
    nst: bool,
    kit: PlayoutKit,
    until: Instant,
    table: Vec<(f64, f64)>,
    pairs: PairTable,
    /// NST: per leaf, the keys of the joint move that led to it (roles per leaf; `NONE` where
    /// the descent has no move).
    before: Vec<u32>,
    /// Playouts per leaf (0: given up at `until`); the leaves with results (the first
    /// `done`); the rewards summed per leaf and role; MAST's keys of the playouts one after
    /// another, and where each ends.
    per: usize,
    done: usize,
    sums: Vec<f64>,
    seq: Vec<u32>,
    seq_ends: Vec<u32>,
    /// AMAF: the playouts' moves are recorded (as ids, by the copy `ids` of the tree's), one
    /// playout after another in `aseq`, each ending where `aseq_ends` says, and whether each
    /// reached a terminal state (killer-RAVE counts only those).
    amaf: bool,
    /// The search's heuristic, and whether playouts are cut and scored by it.
    heuristic: Option<Arc<Heuristic>>,
    cut: bool,
    ids: FxHashMap<(u32, Mv), u32>,
    aseq: Vec<u32>,
    aseq_ends: Vec<u32>,
    ended: Vec<bool>,
}

impl<S, Mv> Job<S, Mv> {
    fn new(slot: usize, roles: usize) -> Job<S, Mv> {
        Job {
            slot,
            starts: Vec::new(),
            count: 0,
            batch: false,
            decisive: false,
            mast: false,
            nst: false,
            kit: PlayoutKit { depth: 0, epsilon: 0.0, roles, filter: false },
            until: Instant::now(),
            table: Vec::new(),
            pairs: PairTable::new(),
            before: Vec::new(),
            per: 0,
            done: 0,
            sums: Vec::new(),
            seq: Vec::new(),
            seq_ends: Vec::new(),
            amaf: false,
            heuristic: None,
            cut: false,
            ids: FxHashMap::default(),
            aseq: Vec::new(),
            aseq_ends: Vec::new(),
            ended: Vec::new(),
        }
    }
}

/// A helper thread's loop: plays each job it is given and sends it back, until the main
/// thread hangs up.
fn serve<M: StateMachine>(
    mut machine: M,
    seed: u64,
    jobs: Receiver<Job<M::State, M::Move>>,
    back: SyncSender<Job<M::State, M::Move>>,
) {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut bufs = PlayoutBuffers::new(&mut machine);
    let mut dec: Option<DecisiveBuffers<M>> = None;
    let mut play = machine.initial_state();
    while let Ok(mut job) = jobs.recv() {
        play_job(&mut machine, &mut job, &mut rng, &mut bufs, &mut dec, &mut play);
        if back.send(job).is_err() {
            return;
        }
    }
}

fn play_job<M: StateMachine>(
    machine: &mut M,
    job: &mut Job<M::State, M::Move>,
    rng: &mut Pcg64Mcg,
    bufs: &mut PlayoutBuffers<M>,
    dec: &mut Option<DecisiveBuffers<M>>,
    play: &mut M::State,
) {
    let roles = job.kit.roles;
    let k = job.count;
    job.sums.clear();
    job.sums.resize(k * roles, 0.0);
    job.seq.clear();
    job.seq_ends.clear();
    job.aseq.clear();
    job.aseq_ends.clear();
    job.ended.clear();
    job.per = 0;
    job.done = 0;
    if job.batch {
        match machine.batch_playouts(&job.starts[..k], job.kit.depth, rng, &mut job.sums, Some(job.until)) {
            Some(0) => return,
            Some(per) => {
                job.per = per;
                job.done = k;
                return;
            }
            None => {}
        }
    }
    job.per = 1;
    bufs.deadline = Some(job.until);
    for i in 0..k {
        if Instant::now() >= job.until {
            break;
        }
        play.clone_from(&job.starts[i]);
        let d = if job.decisive { Some(dec.get_or_insert_with(|| job.kit.decisive_buffers(machine))) } else { None };
        let mast = job.mast.then_some(MastSink {
            table: &job.table[..],
            pairs: job.nst.then_some(&job.pairs),
            before: if job.nst { &job.before[i * roles..(i + 1) * roles] } else { &[] },
            seq: &mut job.seq,
        });
        let amaf = job.amaf.then_some((&job.ids, &mut job.aseq));
        let result = job.kit.run(machine, play, rng, bufs, d, mast, amaf);
        match job.heuristic.as_deref() {
            Some(h) if job.cut && !result.terminal => {
                h.evaluate(machine, play, &mut job.sums[i * roles..(i + 1) * roles])
            }
            _ => {
                for r in 0..roles {
                    job.sums[i * roles + r] = reward(machine, play, r);
                }
            }
        }
        job.seq_ends.push(job.seq.len() as u32);
        job.aseq_ends.push(job.aseq.len() as u32);
        job.ended.push(result.terminal);
        job.done = i + 1;
    }
}

impl<M: StateMachine> Mcts<M> {
    /// Starts `n` helper threads on clones of `machine` (none with similarity-guided AMAF, or
    /// when they are already started). The helpers end when the search is dropped.
    pub(super) fn spawn_helpers(&mut self, machine: &mut M, n: usize)
    where
        M: Clone + Send + 'static,
        M::State: Send,
        M::Move: Send,
    {
        if n == 0 || self.cfg.amaf == Amaf::Similar || self.helpers.is_some() {
            return;
        }
        if !machine.clones_share_states() {
            // A helper on a clone would read the tree's states and moves wrongly.
            tracing::info!("the engine's clones do not share states (the interpreter): searching on one thread");
            return;
        }
        let roles = machine.roles().len();
        let mut links = Vec::new();
        for i in 0..n {
            let (to, jobs) = sync_channel(JOBS);
            let (back, from) = sync_channel(JOBS);
            let m = machine.clone();
            let seed = self.cfg.seed.wrapping_add((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let spawned =
                std::thread::Builder::new().name(format!("mcts-helper-{i}")).spawn(move || serve(m, seed, jobs, back));
            if let Err(e) = spawned {
                tracing::warn!(error = %e, "could not start an MCTS helper thread; searching with fewer");
                break;
            }
            links.push(Link {
                to,
                from,
                idle: (0..JOBS).map(|slot| Job::new(slot, roles)).collect(),
                slots: Default::default(),
                table_at: None,
                table_cost: Duration::ZERO,
            });
        }
        if !links.is_empty() {
            self.helpers = Some(Helpers { links, playouts: 0 });
        }
    }

    /// Helper threads running.
    pub fn helper_count(&self) -> usize {
        self.helpers.as_ref().map_or(0, |h| h.links.len())
    }

    /// Playouts the helpers have played, backed up in the tree.
    pub fn helper_playouts(&self) -> u64 {
        self.helpers.as_ref().map_or(0, |h| h.playouts)
    }

    /// The helpers' share of a step: backs up what they have finished, and gives each
    /// helper new descents up to [`JOBS`] jobs (none once the root is solved or `until` is
    /// past). Returns the descents made.
    pub(super) fn feed_helpers(&mut self, machine: &mut M, until: Instant) -> u64 {
        let Some(mut helpers) = self.helpers.take() else { return 0 };
        let mut descents = 0;
        helpers.links.retain_mut(|link| {
            loop {
                match link.from.try_recv() {
                    Ok(job) => {
                        self.back_up_job(&mut link.slots[job.slot], Some(&job));
                        helpers.playouts += (job.done * job.per) as u64;
                        link.idle.push(job);
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        self.unmark_jobs(link);
                        return false;
                    }
                }
            }
            while let Some(mut job) = link.idle.pop() {
                if self.nodes[self.root as usize].solved || Instant::now() >= until {
                    link.idle.push(job);
                    break;
                }
                let slot = job.slot;
                descents += self.fill_job(
                    machine,
                    &mut link.slots[slot],
                    &mut job,
                    &mut link.table_at,
                    &mut link.table_cost,
                    until,
                );
                if job.count == 0 {
                    link.idle.push(job);
                    break;
                }
                link.slots[slot].out = true;
                if link.to.send(job).is_err() {
                    // The helper is gone (it panicked): its descents are taken back.
                    self.unmark_jobs(link);
                    return false;
                }
            }
            true
        });
        if !helpers.links.is_empty() {
            self.helpers = Some(helpers);
        } else {
            tracing::warn!("every MCTS helper thread has stopped; searching on one thread");
        }
        descents
    }

    /// Waits for every helper's jobs and backs them up: the tree is then the main thread's
    /// alone, with no virtual loss on it.
    pub(super) fn drain_helpers(&mut self) {
        let Some(mut helpers) = self.helpers.take() else { return };
        helpers.links.retain_mut(|link| {
            while link.slots.iter().any(|d| d.out) {
                match link.from.recv() {
                    Ok(job) => {
                        self.back_up_job(&mut link.slots[job.slot], Some(&job));
                        helpers.playouts += (job.done * job.per) as u64;
                        link.idle.push(job);
                    }
                    Err(_) => {
                        self.unmark_jobs(link);
                        return false;
                    }
                }
            }
            true
        });
        if !helpers.links.is_empty() {
            self.helpers = Some(helpers);
        }
    }

    /// Makes `job`'s descents (kept in `mine`) and hands it the leaves' states and the
    /// playouts' settings; MAST's table is copied in when the copy is stale.
    fn fill_job(
        &mut self,
        machine: &mut M,
        mine: &mut Descents,
        job: &mut Job<M::State, M::Move>,
        table_at: &mut Option<Instant>,
        table_cost: &mut Duration,
        until: Instant,
    ) -> u64 {
        let lanes = machine.batch_lanes();
        job.batch = self.cfg.playout == Playout::Batch && lanes > 0;
        let leaves = if job.batch { self.cfg.batch_leaves.clamp(1, lanes) } else { HELPER_LEAVES };
        let descents = self.descend_marked(machine, leaves, &mut job.starts, &mut mine.pending);
        mine.path.clear();
        mine.path.extend_from_slice(&self.path);
        mine.path_moves.clear();
        mine.path_moves.extend_from_slice(&self.path_moves);
        mine.path_probs.clear();
        mine.path_probs.extend_from_slice(&self.path_probs);
        job.count = mine.pending.len();
        job.nst = self.cfg.playout == Playout::Nst;
        if job.nst {
            // Each leaf's context: its descent's last joint move.
            job.before.clear();
            let mut lo = 0;
            for &(hi, _) in &mine.pending {
                let hi = hi as usize;
                if hi > lo {
                    step_keys::<M>(&self.nodes, &self.path, &self.path_moves, hi - 1, self.roles, &mut self.mast.now);
                    job.before.extend_from_slice(&self.mast.now);
                } else {
                    job.before.extend(std::iter::repeat_n(NONE, self.roles));
                }
                lo = hi;
            }
        }
        job.decisive = self.cfg.decisive && !job.batch;
        job.mast = self.cfg.playout.learns_moves();
        job.amaf = self.cfg.amaf != Amaf::Off && !job.batch;
        job.kit = self.kit();
        if job.heuristic.as_ref().map(Arc::as_ptr) != self.heuristic.as_ref().map(Arc::as_ptr) {
            job.heuristic = self.heuristic.clone();
        }
        job.cut = self.cfg.cutoff > 0 && self.heuristic.is_some();
        job.until = until;
        // The playouts' keys and ids at their longest, so that jobs do not grow them.
        let most = leaves * self.cfg.max_playout_depth.min(100_000) * self.roles;
        if job.mast {
            job.seq.reserve(most.saturating_sub(job.seq.len()));
        }
        if job.amaf {
            job.aseq.reserve(most.saturating_sub(job.aseq.len()));
            // Ids are only added (a node's moves get theirs when it is made): a copy of the
            // same length is the same.
            if job.ids.len() != self.amaf.ids.len() {
                job.ids.clone_from(&self.amaf.ids);
            }
        }
        let stale = table_at.is_none_or(|at| at.elapsed() >= *table_cost * 20);
        if job.mast && job.count > 0 && (stale || job.table.len() != self.mast.table.len()) {
            let t = Instant::now();
            job.table.clone_from(&self.mast.table);
            if job.nst {
                job.pairs.copy_from(&self.mast.pairs);
            }
            *table_cost = t.elapsed();
            *table_at = Some(Instant::now());
        }
        descents
    }

    /// Backs up a job the helper has finished (`Some`): its playouts as visits (MAST's table
    /// and the AMAF statistics updated with their moves), and the descents it gave up
    /// unmarked; or (`None`) takes back the virtual losses of descents that will not come back.
    fn back_up_job(&mut self, mine: &mut Descents, job: Option<&Job<M::State, M::Move>>) {
        std::mem::swap(&mut self.path, &mut mine.path);
        std::mem::swap(&mut self.path_moves, &mut mine.path_moves);
        std::mem::swap(&mut self.path_probs, &mut mine.path_probs);
        let roles = self.roles;
        let done = job.filter(|j| j.per > 0).map_or(0, |j| j.done);
        let mut lo = 0;
        for (i, &(hi, leaf)) in mine.pending.iter().enumerate() {
            let hi = hi as usize;
            match job {
                Some(job) if i < done => {
                    let sums = &job.sums[i * roles..(i + 1) * roles];
                    if job.amaf {
                        let a = if i == 0 { 0 } else { job.aseq_ends[i - 1] as usize };
                        self.amaf_add(lo, hi, leaf, &job.aseq[a..job.aseq_ends[i] as usize], sums, job.ended[i]);
                    }
                    if job.mast && !job.batch {
                        let a = if i == 0 { 0 } else { job.seq_ends[i - 1] as usize };
                        self.mast_add(lo, hi, &job.seq[a..job.seq_ends[i] as usize], sums);
                    }
                    self.back_up(lo, hi, leaf, job.per as u32, 1, sums);
                }
                _ => self.virtual_loss(lo, hi, false),
            }
            lo = hi;
        }
        mine.pending.clear();
        mine.out = false;
        std::mem::swap(&mut self.path, &mut mine.path);
        std::mem::swap(&mut self.path_moves, &mut mine.path_moves);
        std::mem::swap(&mut self.path_probs, &mut mine.path_probs);
    }

    /// Takes back the virtual losses of a helper's jobs that will not come back.
    fn unmark_jobs(&mut self, link: &mut Link<M::State, M::Move>) {
        for mine in link.slots.iter_mut().filter(|d| d.out) {
            self.back_up_job(mine, None);
        }
    }
}

/// Tree-parallel MCTS (agent keys `threads` > 1 and `parallel = "tree"`): one [`Mcts`] tree,
/// its playouts shared with `threads - 1` helper threads started at the first search, each
/// on its own clone of the engine (see the module's comment). With similarity-guided AMAF
/// it searches on one thread.
pub struct TreeParallelMcts<M: StateMachine> {
    tree: Mcts<M>,
    threads: usize,
    started: bool,
}

impl<M: StateMachine> TreeParallelMcts<M> {
    pub fn new(cfg: MctsConfig, threads: usize) -> TreeParallelMcts<M> {
        TreeParallelMcts { tree: Mcts::new(cfg), threads: threads.max(1), started: false }
    }

    /// This search, its playouts scored by `h` where cut ([`Mcts::set_heuristic`]).
    pub fn with_heuristic(mut self, h: Option<Arc<Heuristic>>) -> Self {
        self.tree.set_heuristic(h);
        self
    }

    /// The tree searched.
    pub fn tree(&self) -> &Mcts<M> {
        &self.tree
    }
}

impl<M> Search<M> for TreeParallelMcts<M>
where
    M: StateMachine + Clone + Send + 'static,
    M::State: Send,
    M::Move: Send,
{
    fn name(&self) -> &'static str {
        "mcts"
    }

    fn select(&mut self, machine: &mut M, state: &M::State, role: usize, limit: Limit<'_>) -> Option<Choice<M::Move>> {
        if !self.started {
            self.started = true;
            self.tree.spawn_helpers(machine, self.threads - 1);
        }
        self.tree.select(machine, state, role, limit)
    }

    fn take_traps(&mut self) -> Vec<TrapFound<M::Move>> {
        self.tree.take_traps()
    }

    fn similarity_stats(&self) -> Option<SimStats> {
        self.tree.similarity_stats()
    }

    fn root_moves(&self, role: usize) -> Vec<(M::Move, u64, f64)> {
        self.tree.root_moves(role)
    }
}
