//! Factored MCTS: one tree per factor of the game (Cox et al.'s independent sub-games, found
//! by [`crate::factor`]), so the search pays for the sum of the sub-games' trees rather than
//! their product.
//!
//! Each factor is searched on a [`FactorMachine`]: the propnet machine whose moves are the
//! factor's move classes (one representative input per class among the legal ones, so a
//! move played in another factor is one *pseudo-noop*) and whose states hold the factor's
//! bases and the action-independent ones only; the other factors' bases are kept as they
//! are at the root (frozen, as Sancho does) and merged in for every question. So a factor's
//! tree is kept from turn to turn while play goes on elsewhere. Terminal and goals are the game's own, read on the
//! combined state, so any combination of per-factor goals (conjunction, sum, race) is
//! scored as the game scores it. Rollouts below a factor's tree play the whole game (a
//! frozen factor would never end a game that waits for every board).
//!
//! The move played: every legal input of the role is scored by the sum, over the factors
//! searched, of the mean value at that tree's root of the input's class in the factor. For
//! compound moves that picks the best part per factor (when the combination is legal); in a
//! serial game, where an input is active in one factor and a pseudo-noop in the others, it
//! compares each factor's best move by its gain over the pseudo-noop there (Sancho's
//! choice of the factor to play in). Factors that no goal or terminal reads, and factors in
//! which the role has one class to choose from, are not searched. Time goes by need: a
//! first share ([`FIRST_SHARE`]) is split among the factors searched, the rest among the
//! factors in which the move then preferred is played (in a serial game, the board where
//! the choice is made; with compound moves, every board).
//!
//! Contingent factoring: when the game does not factor (or factors less) from the start,
//! every call checks, in microseconds, whether the set of latches holding has changed; if
//! it has, the analysis runs again with the bases that provably keep their values fixed
//! ([`crate::factor::analyse_from`]) and the search switches to the factors found (logged).
//! Where nothing factors, the search is the whole game's searcher: a one-thread [`Mcts`], or
//! the player's own searcher ([`FactoredMcts::with_plain`]: threads, meta-gaming's playouts),
//! which the factored search then only wraps; so it is where a factor that a
//! goal or terminal reads changes by itself while play is elsewhere (lamps that dim), since
//! freezing it at the root would misjudge it ([`crate::factor::idle_static`]), and, in games
//! with an opponent, where no role's move is a compound of per-factor parts (see
//! [`plan`] for why).

use super::{Choice, Limit, Mcts, MctsConfig, Search};
use crate::factor::{self, Analysis, Latch, LatchKind, MoveShape, Place, Verdict};
use crate::machine::StateMachine;
use crate::propnet::{Net, PnState, PropnetMachine};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The propnet machine seen from one factor (see the module docs).
#[derive(Debug)]
pub struct FactorMachine {
    inner: PropnetMachine,
    /// Bits that move on (the factor's, IID, constants); the rest come from `frozen`.
    keep: Arc<Vec<u64>>,
    frozen: PnState,
    /// A state with the frozen bits merged in.
    full: PnState,
    /// The last rollout's end state, whole and as the factor's part.
    end_full: PnState,
    end_proj: PnState,
    /// Per input: its class in the factor.
    class_of: Arc<Vec<u32>>,
    seen: ClassStamps,
    tmp: Vec<u32>,
    bufs: Option<crate::machine::PlayoutBuffers<PropnetMachine>>,
    /// Batched rollouts' starts with the frozen bits merged in.
    starts: Vec<PnState>,
}

/// Which classes a listing of moves has met so far (one representative per class), reset per
/// listing by a new stamp rather than by clearing.
#[derive(Clone, Debug)]
pub(crate) struct ClassStamps {
    seen: Vec<u32>,
    stamp: u32,
}

impl ClassStamps {
    pub(crate) fn new(classes: usize) -> ClassStamps {
        ClassStamps { seen: vec![0; classes], stamp: 0 }
    }

    /// Starts a new listing.
    pub(crate) fn next_round(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
    }

    /// Whether `class` is met for the first time in this listing (it is met now).
    pub(crate) fn first(&mut self, class: usize) -> bool {
        std::mem::replace(&mut self.seen[class], self.stamp) != self.stamp
    }
}

impl Clone for FactorMachine {
    fn clone(&self) -> FactorMachine {
        FactorMachine {
            inner: self.inner.clone(),
            keep: self.keep.clone(),
            frozen: self.frozen.clone(),
            full: self.full.clone(),
            end_full: PnState::default(),
            end_proj: PnState::default(),
            class_of: self.class_of.clone(),
            seen: self.seen.clone(),
            tmp: Vec::new(),
            bufs: None,
            starts: Vec::new(),
        }
    }
}

impl FactorMachine {
    fn new(inner: PropnetMachine, a: &Analysis, k: usize) -> FactorMachine {
        let nb = a.place.len();
        let mut keep = vec![0u64; nb.div_ceil(64)];
        for b in 0..nb {
            let moves_on = match a.place[b] {
                Place::Factor(f) => f as usize == k,
                Place::Iid | Place::Constant => true,
                Place::Junk => false,
            };
            if moves_on {
                keep[b / 64] |= 1 << (b % 64);
            }
        }
        let class_of = a.factors[k].class_of.clone();
        let classes = class_of.iter().copied().max().map_or(0, |m| m as usize + 1);
        FactorMachine {
            inner,
            keep: Arc::new(keep),
            frozen: PnState::default(),
            full: PnState::default(),
            end_full: PnState::default(),
            end_proj: PnState::default(),
            class_of: Arc::new(class_of),
            seen: ClassStamps::new(classes),
            tmp: Vec::new(),
            bufs: None,
            starts: Vec::new(),
        }
    }

    /// The input's class in this factor.
    pub fn class(&self, input: u32) -> u32 {
        self.class_of[input as usize]
    }

    /// Sets the root: its other factors' bits are frozen; returns the factor's own state.
    fn set_root(&mut self, root: &PnState) -> PnState {
        self.frozen.bits.clear();
        self.frozen.bits.extend(root.bits.iter().zip(self.keep.iter()).map(|(w, k)| w & !k));
        PnState { bits: root.bits.iter().zip(self.keep.iter()).map(|(w, k)| w & k).collect() }
    }

    /// `state` with the frozen bits merged in, in `self.full`.
    fn merge(&mut self, state: &PnState) {
        merge_into(state, &self.frozen, &mut self.full);
    }
}

/// `state` with the `frozen` bits merged in, written to `out` (its buffer reused).
fn merge_into(state: &PnState, frozen: &PnState, out: &mut PnState) {
    out.bits.clear();
    out.bits.extend(state.bits.iter().zip(&frozen.bits).map(|(a, b)| a | b));
}

impl StateMachine for FactorMachine {
    type State = PnState;
    type Move = u32;

    fn roles(&self) -> &[String] {
        self.inner.roles()
    }
    fn initial_state(&mut self) -> PnState {
        self.inner.initial_state()
    }
    fn legal_moves(&mut self, state: &PnState, role: usize, out: &mut Vec<u32>) {
        self.merge(state);
        self.inner.legal_moves(&self.full, role, &mut self.tmp);
        out.clear();
        self.seen.next_round();
        for &m in &self.tmp {
            if self.seen.first(self.class_of[m as usize] as usize) {
                out.push(m);
            }
        }
    }
    fn next_state(&mut self, state: &PnState, joint: &[u32], out: &mut PnState) {
        self.merge(state);
        self.inner.next_state(&self.full, joint, out);
        for (w, k) in out.bits.iter_mut().zip(self.keep.iter()) {
            *w &= k;
        }
    }
    fn is_terminal(&mut self, state: &PnState) -> bool {
        self.merge(state);
        self.inner.is_terminal(&self.full)
    }
    /// The hint reaches the game's machine as the states it is asked about: merged.
    fn anchor(&mut self, state: &PnState) {
        self.merge(state);
        self.inner.anchor(&self.full);
    }
    fn goal(&mut self, state: &PnState, role: usize) -> crate::machine::Goal {
        if !self.end_full.bits.is_empty() && *state == self.end_proj {
            return self.inner.goal(&self.end_full, role);
        }
        self.merge(state);
        self.inner.goal(&self.full, role)
    }
    fn move_number(m: u32) -> Option<usize> {
        Some(m as usize)
    }
    fn move_number_bound(&self) -> usize {
        self.inner.move_number_bound()
    }
    fn move_text(&self, m: u32) -> String {
        self.inner.move_text(m)
    }
    fn state_facts(&self, state: &PnState) -> Vec<String> {
        self.inner.state_facts(state)
    }

    /// Rollouts play the whole game (every factor moves, on the propnet's own fast loop), so
    /// they end as the game ends and score what the game scores; the tree above them moves
    /// this factor only.
    fn playout_seen<R: rand::Rng, F: FnMut(&[u32])>(
        &mut self,
        state: &mut PnState,
        rng: &mut R,
        max_depth: usize,
        _bufs: &mut crate::machine::PlayoutBuffers<Self>,
        seen: F,
    ) -> crate::machine::PlayoutResult {
        self.whole_game(state, |m, full, bufs| m.playout_seen(full, rng, max_depth, bufs, seen))
    }

    /// A policy's rollouts (MAST's) play the whole game too, the policy choosing among the
    /// game's own moves.
    fn playout_policy<R: rand::Rng, P: crate::machine::PlayoutPolicy<u32>>(
        &mut self,
        state: &mut PnState,
        rng: &mut R,
        max_depth: usize,
        _bufs: &mut crate::machine::PlayoutBuffers<Self>,
        policy: &mut P,
    ) -> crate::machine::PlayoutResult {
        self.whole_game(state, |m, full, bufs| m.playout_policy(full, rng, max_depth, bufs, policy))
    }

    fn batch_lanes(&self) -> usize {
        self.inner.batch_lanes()
    }

    /// Batched rollouts of the whole game from each start, the other factors as frozen at
    /// the root (the rewards are the game's).
    fn batch_playouts<R: rand::Rng>(
        &mut self,
        starts: &[PnState],
        max_depth: usize,
        rng: &mut R,
        sums: &mut [f64],
        until: Option<Instant>,
    ) -> Option<usize> {
        let mut whole = std::mem::take(&mut self.starts);
        whole.resize_with(starts.len(), PnState::default);
        for (w, s) in whole.iter_mut().zip(starts) {
            merge_into(s, &self.frozen, w);
        }
        let r = self.inner.batch_playouts(&whole, max_depth, rng, sums, until);
        self.starts = whole;
        r
    }
}

impl FactorMachine {
    /// Runs `play` on the whole game from `state` with the frozen factors merged in; then
    /// `state` is the end state's part in this factor, and `goal` answers for the whole end
    /// state when asked of that part.
    fn whole_game(
        &mut self,
        state: &mut PnState,
        play: impl FnOnce(
            &mut PropnetMachine,
            &mut PnState,
            &mut crate::machine::PlayoutBuffers<PropnetMachine>,
        ) -> crate::machine::PlayoutResult,
    ) -> crate::machine::PlayoutResult {
        let mut bufs = self.bufs.take().unwrap_or_else(|| crate::machine::PlayoutBuffers::new(&mut self.inner));
        self.merge(state);
        let mut full = std::mem::take(&mut self.full);
        let r = play(&mut self.inner, &mut full, &mut bufs);
        for (w, (f, k)) in state.bits.iter_mut().zip(full.bits.iter().zip(self.keep.iter())) {
            *w = f & k;
        }
        self.end_proj.clone_from(state);
        std::mem::swap(&mut self.end_full, &mut full);
        self.full = full;
        self.bufs = Some(bufs);
        r
    }
}

/// Whether the factors of `a` are searched apart: the game factors; in two factors at least
/// some role has two moves or more (else each tree would be one choice deep); with an opponent, some
/// role's moves are compounds of per-factor parts, unless `opts.serial`; and every factor that
/// a goal, terminal or legality reads stays as it is while play goes on elsewhere
/// ([`factor::idle_static`]), since each factor's tree holds the others as they are at its
/// root (lamps that dim by themselves under a conjunctive goal, lightsOn, are searched whole,
/// and so is quartoSuicide, whose pool of pieces, changed by every move, decides which
/// moves are legal).
///
/// Why compound moves: a role whose move is a compound faces the product of its per-factor
/// choices in one tree and their sum in factored trees. Where each move plays in one factor
/// (serial: the player chooses the board, dualConnect4; or the turn sets each role's board,
/// chinook, doubletictactoe), the role's choices are already a sum in one tree (decoupled UCT
/// keeps each role's statistics apart where roles move at once), so factored trees gain no
/// width, and what they freeze couples the factors through time: a move on one board is a
/// free pass on the others ([`factor::chooses_factor`]: a sum of games), and a terminal that
/// any board reaches first (a race) cuts the others short at a moment the frozen trees do not
/// see. Measured: the factored search lost dualConnect4 (5-1-14 and 3-7) and did not win
/// chinook (8-1-11); see the notes of issue 12. Without an opponent there is neither tempo
/// nor a race between opponents, and one-role serial games (blocksWorldSerial) are searched
/// apart.
pub fn plan(net: &Net, a: &Analysis, opts: FactoredOptions) -> Result<(), &'static str> {
    plan_with(net, &crate::factor::net_info::NetInfo::new(net), a, opts)
}

fn plan_with(
    net: &Net,
    info: &crate::factor::net_info::NetInfo,
    a: &Analysis,
    opts: FactoredOptions,
) -> Result<(), &'static str> {
    if a.verdict != Verdict::Factorable {
        return Err("the game does not factor");
    }
    let compound = a.shapes.iter().any(|s| matches!(s, MoveShape::Compound | MoveShape::Mixed));
    if !opts.serial && net.roles.len() > 1 && !compound {
        return Err(if factor::chooses_factor(net, a).contains(&true) {
            "a sum of games: each move plays in one factor, which the player chooses"
        } else {
            "each move plays in one factor (no compound move to split)"
        });
    }
    // A factor in which no role has two moves gives a tree of one choice, play here or
    // elsewhere, which the whole game's tree makes at its root anyway: factors searched
    // apart must offer a choice, in two factors at least (queens: a factor per cell, each
    // with one move, under a goal that counts attacks across the board).
    let with_choice = a.factors.iter().filter(|f| (0..net.roles.len()).any(|r| f.choices(r) >= 2)).count();
    if with_choice < 2 {
        return Err("the factors are single moves: a tree per factor would be one choice deep");
    }
    let idle = factor::idle_static(net, info, a);
    // The factors that legality reads (all, where some legality is no fixed conjunction of
    // per-factor conditions): a frozen one would make moves legal in a tree that the game
    // no longer allows (quartoSuicide's pool of pieces, changed by every move).
    let mut in_legal = vec![false; a.factors.len()];
    for form in &a.legal_form {
        match form {
            factor::LegalForm::Never => {}
            factor::LegalForm::Conjunction(c) => {
                for &(k, _, _) in c {
                    if let Some(k) = k {
                        in_legal[k as usize] = true;
                    }
                }
            }
            _ => in_legal.iter_mut().for_each(|x| *x = true),
        }
    }
    if a.factors.iter().enumerate().all(|(k, f)| idle[k] || !(f.in_goals || f.in_terminal || in_legal[k])) {
        Ok(())
    } else {
        Err("a factor that goals, terminal or legality read changes while play goes on elsewhere")
    }
}

/// The current factoring and one tree per factor searched.
struct Factored {
    analysis: Arc<Analysis>,
    trees: Vec<Mcts<FactorMachine>>,
    machines: Vec<FactorMachine>,
}

/// MCTS per factor, with contingent factoring checked as play goes (see the module docs).
pub struct FactoredMcts {
    cfg: MctsConfig,
    net: Arc<Net>,
    info: crate::factor::net_info::NetInfo,
    latches: Vec<Latch>,
    held: Vec<bool>,
    /// The action-independent bases (from the static analysis).
    iid: Vec<u32>,
    /// Whether contingent analyses are cheap enough to run during play.
    contingent: bool,
    opts: FactoredOptions,
    /// Whether the static analysis searches the factors apart, or why not.
    plan: Result<(), &'static str>,
    factored: Option<Factored>,
    /// The whole game's searcher: every move while nothing factors (or nothing is there to
    /// choose); by default a one-thread [`Mcts`], the player's own searcher with
    /// [`FactoredMcts::with_plain`].
    plain: Box<dyn Search<PropnetMachine>>,
    legal: Vec<u32>,
}

/// Options of [`FactoredMcts`].
#[derive(Copy, Clone, Debug, Default)]
pub struct FactoredOptions {
    /// Switch to factors found contingently during play.
    pub contingent: bool,
    /// With an opponent, search per factor also games where every move plays in one factor
    /// (serial, or each role's factor set by the turn); see [`plan`].
    pub serial: bool,
    /// Factors searched at once, each on its own thread (0 or 1: one after the other). With
    /// two factors and two threads, each factor's tree gets the whole of the move's time
    /// rather than half of it.
    pub threads: usize,
}

/// Contingent analyses run during play only on networks whose analysis takes at most this
/// long.
const CONTINGENT_MAX_MS: f64 = 25.0;

/// A contingent analysis during play is cut (finding no factors) past this many
/// milliseconds.
const CONTINGENT_DEADLINE_MS: f64 = 4.0 * CONTINGENT_MAX_MS;

impl FactoredMcts {
    /// A factored search of the game whose optimised network is `net`, with its static
    /// analysis `a`.
    pub fn new(cfg: MctsConfig, net: Arc<Net>, a: Analysis, opts: FactoredOptions) -> FactoredMcts {
        let facts = factor::NetFacts::new(&net);
        FactoredMcts::with_facts(cfg, net, a, facts, opts)
    }

    /// [`FactoredMcts::new`] with the network's facts (graph and latches) made once by the
    /// caller, who may have needed them before (the goal latches of the playouts).
    pub fn with_facts(
        cfg: MctsConfig,
        net: Arc<Net>,
        a: Analysis,
        facts: factor::NetFacts,
        opts: FactoredOptions,
    ) -> FactoredMcts {
        let factor::NetFacts { info, latches } = facts;
        // What a re-check costs in play: the analysis over facts made once. Fixed latches only
        // refine factors (their gates turn constant, so the classes of a part of a factor
        // are no finer than the factor's): where no factor offers any role a choice (queens,
        // a factor per cell), no re-check can find factors to search apart.
        let choice = a.verdict != Verdict::Factorable
            || a.factors.iter().any(|f| (0..net.roles.len()).any(|r| f.choices(r) >= 2));
        let contingent = opts.contingent && a.millis <= CONTINGENT_MAX_MS && !latches.is_empty() && choice;
        let iid = a.iid.clone();
        let plan = plan_with(&net, &info, &a, opts);
        if let (Err(why), Verdict::Factorable) = (plan, &a.verdict) {
            tracing::info!(why, "factored search: the game factors but is searched whole");
        }
        let factored =
            plan.is_ok().then(|| Factored { analysis: Arc::new(a), trees: Vec::new(), machines: Vec::new() });
        if let Some(f) = &factored {
            tracing::info!(factors = f.analysis.factors.len(), "factored search: the game factors statically");
        }
        FactoredMcts {
            cfg,
            net,
            info,
            latches,
            held: Vec::new(),
            iid,
            contingent,
            opts,
            plan,
            factored,
            plain: Box::new(Mcts::new(cfg)),
            legal: Vec::new(),
        }
    }

    /// The same search with `plain` as the whole game's searcher (the player's own: threads,
    /// meta-gaming's playouts), so that watching for contingent factors costs the player
    /// nothing but the check of its latches.
    pub fn with_plain(self, plain: Box<dyn Search<PropnetMachine>>) -> FactoredMcts {
        FactoredMcts { plain, ..self }
    }

    /// The same search with the factor trees' rollouts played by `playout` (meta-gaming's
    /// choice on the whole game: random, MAST's or batched; each plays the whole game).
    pub fn with_playout(self, playout: super::mcts::Playout) -> FactoredMcts {
        FactoredMcts { cfg: MctsConfig { playout, ..self.cfg }, ..self }
    }

    /// Whether the static analysis has the factors searched apart, or why not ([`plan`]).
    pub fn plan(&self) -> Result<(), &'static str> {
        self.plan
    }

    /// Whether the search re-checks its latches during play for contingent factors: asked
    /// for, latches there are, the analysis cheap enough ([`CONTINGENT_MAX_MS`]), and the
    /// game whole or some factor offering a choice (fixed latches only refine factors).
    pub fn watches_latches(&self) -> bool {
        self.contingent
    }

    /// The game's network back (when no other holder shares it).
    pub fn into_net(self) -> Option<Net> {
        Arc::try_unwrap(self.net).ok()
    }

    /// Re-analyses when the latches held change (contingent factoring), within
    /// [`CONTINGENT_DEADLINE_MS`] and a quarter of the move's time (`until`): an analysis
    /// cut there finds no factors (never wrong ones) and ends the re-checks for the match.
    fn recheck(&mut self, state: &PnState, until: Instant) {
        if !self.contingent {
            return;
        }
        let held: Vec<bool> =
            self.latches.iter().map(|l| state.get(l.base as usize) == (l.kind == LatchKind::Positive)).collect();
        if held == self.held {
            return;
        }
        self.held = held;
        let t = Instant::now();
        let deadline = (t + Duration::from_secs_f64(CONTINGENT_DEADLINE_MS / 1000.0))
            .min(t + until.saturating_duration_since(t) / 4);
        // The analysis runs inside a move: a panic in it ends contingent factoring for the
        // match (logged), never the move.
        let analysed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let fixed = factor::latch::fixed_from(&self.net, &self.info, &|b| state.get(b as usize), Some(&self.iid));
            let a = factor::analyse_until(&self.net, &self.info, &fixed, Some(deadline));
            let plan = plan_with(&self.net, &self.info, &a, self.opts);
            (fixed, a, plan)
        }));
        let Ok((fixed, a, plan)) = analysed else {
            tracing::error!("factored search: the contingent analysis panicked; no more of it this match");
            self.contingent = false;
            return;
        };
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let now = self.factored.as_ref().map_or(1, |f| f.analysis.factors.len());
        tracing::debug!(
            factors = a.factors.len(),
            fixed = fixed.len(),
            ms,
            why = plan.err().unwrap_or("searched apart"),
            "factored search: the latches held changed; analysed again"
        );
        if plan.is_ok() && a.factors.len() > now {
            tracing::info!(
                factors = a.factors.len(),
                fixed = fixed.len(),
                ms,
                "factored search: the game factors contingently from here on"
            );
            self.factored = Some(Factored { analysis: Arc::new(a), trees: Vec::new(), machines: Vec::new() });
        }
        if ms > CONTINGENT_MAX_MS {
            self.contingent = false;
        }
    }
}

impl Search<PropnetMachine> for FactoredMcts {
    fn name(&self) -> &'static str {
        "factored-mcts"
    }

    fn select(
        &mut self,
        machine: &mut PropnetMachine,
        state: &PnState,
        role: usize,
        limit: Limit<'_>,
    ) -> Option<Choice<u32>> {
        self.recheck(state, limit.deadline);
        let Some(f) = self.factored.as_mut() else {
            return self.plain.select(machine, state, role, limit);
        };
        machine.legal_moves(state, role, &mut self.legal);
        if self.legal.is_empty() || machine.is_terminal(state) {
            return None;
        }
        let a = f.analysis.clone();
        if f.machines.is_empty() {
            for k in 0..a.factors.len() {
                f.machines.push(FactorMachine::new(machine.clone(), &a, k));
                f.trees.push(Mcts::new(MctsConfig {
                    seed: self.cfg.seed.wrapping_add(k as u64 * 0x9E37_79B9),
                    // The factor trees' moves are the factor's move classes while their
                    // rollouts play the whole game's moves: AMAF would mix the two, so the
                    // factored player runs without it.
                    amaf: super::mcts::Amaf::Off,
                    // Decisive moves' generic loop would step this factor's machine, which
                    // moves this factor only; rollouts must play the whole game.
                    decisive: false,
                    ..self.cfg
                }));
            }
        }
        // The factors worth searching: read by a goal or terminal, with a choice for the role.
        let todo: Vec<usize> = (0..a.factors.len())
            .filter(|&k| {
                let fac = &a.factors[k];
                let mut classes: Vec<u32> = self.legal.iter().map(|&m| fac.class_of[m as usize]).collect();
                classes.sort_unstable();
                classes.dedup();
                (fac.in_goals || fac.in_terminal) && classes.len() > 1
            })
            .collect();
        if self.legal.len() == 1 || todo.is_empty() {
            // Nothing to choose between: the plain tree keeps growing for later turns.
            let c = self.plain.select(machine, state, role, limit)?;
            return Some(c);
        }
        // Time by need: a first part of the time is shared among the factors searched; the
        // rest goes to the factors in which the move then preferred is played (in a serial
        // game, the board where the choice is being made; with compound moves, all).
        let threads = self.opts.threads.max(1);
        let mut q: Vec<ClassValues> = vec![ClassValues::default(); todo.len()];
        let start = Instant::now();
        let first = start + limit.deadline.saturating_duration_since(start).mul_f64(FIRST_SHARE);
        let all: Vec<usize> = (0..todo.len()).collect();
        let mut iterations = search_factors(f, &todo, &all, &mut q, state, role, limit, first, threads);
        if let Some((_, mv)) = best_input(&a, &todo, &q, &self.legal) {
            let active: Vec<usize> =
                (0..todo.len()).filter(|&i| a.factors[todo[i]].active_inputs.binary_search(&mv).is_ok()).collect();
            let focus: Vec<usize> = if active.is_empty() { all } else { active };
            iterations += search_factors(f, &todo, &focus, &mut q, state, role, limit, limit.deadline, threads);
        }
        let (s, mv) = best_input(&a, &todo, &q, &self.legal)?;
        tracing::debug!(
            iterations,
            value = s,
            per_factor = ?todo.iter().map(|&k| (k, f.trees[k].root_stats(role).iter().map(|x| x.1).sum::<u32>())).collect::<Vec<_>>(),
            "factored search: move chosen"
        );
        Some(Choice { mv, value: Some((s / todo.len() as f64).clamp(0.0, 1.0)), iterations, proven: false })
    }

    /// The whole game's searcher's traps (the factor trees' proofs are about projections of
    /// the game and are not reported).
    fn take_traps(&mut self) -> Vec<super::TrapFound<u32>> {
        self.plain.take_traps()
    }

    fn similarity_stats(&self) -> Option<super::mcts::SimStats> {
        self.plain.similarity_stats()
    }

    /// Whether the search currently runs per factor, and on how many factors.
    fn factors(&self) -> Option<usize> {
        self.factored.as_ref().map(|f| f.analysis.factors.len())
    }

    /// The whole game's searcher's root, while the game is searched whole.
    fn root_moves(&self, role: usize) -> Vec<(u32, u64, f64)> {
        if self.factored.is_some() {
            Vec::new()
        } else {
            self.plain.root_moves(role)
        }
    }
}

/// The share of a move's time spent on every factor searched before the rest goes to the
/// factors of the move then preferred.
const FIRST_SHARE: f64 = 0.4;

/// Searches the factors `todo[i]` for `i` in `which` until `end`, `threads` of them at once
/// (each on its own thread, the last of each round on this one), rounds sharing the time
/// left equally; stores each factor's class values in `q[i]`; returns the iterations.
#[allow(clippy::too_many_arguments)]
fn search_factors(
    f: &mut Factored,
    todo: &[usize],
    which: &[usize],
    q: &mut [ClassValues],
    state: &PnState,
    role: usize,
    limit: Limit<'_>,
    end: Instant,
    threads: usize,
) -> u64 {
    let mut iterations = 0;
    let rounds: Vec<&[usize]> = which.chunks(threads.max(1)).collect();
    for (r, round) in rounds.iter().enumerate() {
        let now = Instant::now();
        let deadline = now + end.saturating_duration_since(now) / (rounds.len() - r) as u32;
        let lim = Limit { deadline, ..limit };
        // Each factor of the round, with its own tree and machine (disjoint borrows).
        let mut jobs: Vec<(usize, &mut FactorMachine, &mut Mcts<FactorMachine>)> = f
            .machines
            .iter_mut()
            .zip(f.trees.iter_mut())
            .enumerate()
            .filter_map(|(k, (m, t))| round.iter().find(|&&i| todo[i] == k).map(|&i| (i, m, t)))
            .collect();
        let results: Vec<(usize, ClassValues, u64)> = if jobs.len() == 1 {
            let (i, m, t) = jobs.pop().expect("one job");
            let (qk, n) = search_factor(m, t, state, role, lim);
            vec![(i, qk, n)]
        } else {
            std::thread::scope(|scope| {
                let last = jobs.pop();
                let handles: Vec<_> = jobs
                    .into_iter()
                    .map(|(i, m, t)| {
                        scope.spawn(move || {
                            let (qk, n) = search_factor(m, t, state, role, lim);
                            (i, qk, n)
                        })
                    })
                    .collect();
                let mut out: Vec<(usize, ClassValues, u64)> = Vec::new();
                if let Some((i, m, t)) = last {
                    let (qk, n) = search_factor(m, t, state, role, lim);
                    out.push((i, qk, n));
                }
                // A factor's search that panicked leaves its values as they were.
                out.extend(handles.into_iter().filter_map(|h| h.join().ok()));
                out
            })
        };
        for (i, qk, n) in results {
            q[i] = qk;
            iterations += n;
        }
    }
    iterations
}

/// A factor tree's values of the role's move classes at its root, as [`best_input`] weighs
/// them.
#[derive(Clone, Debug, Default)]
struct ClassValues {
    /// Per class: the mean value of its moves at the root (`None`: not tried).
    q: Vec<Option<f64>>,
    /// The class of the tree's choice when its value is proven (MCTS-Solver): an exact value,
    /// which outranks an estimate as high. A tree stops once its root is proven, which leaves
    /// the other classes a visit or two whose mean may tie with the proof (a lucky rollout
    /// scores 1 as surely as the win in one does).
    proven: Option<u32>,
}

/// Searches one factor's tree until `limit`; returns the mean value of each of the role's
/// classes at the tree's root, and the iterations.
fn search_factor(
    m: &mut FactorMachine,
    tree: &mut Mcts<FactorMachine>,
    state: &PnState,
    role: usize,
    limit: Limit<'_>,
) -> (ClassValues, u64) {
    let own = m.set_root(state);
    m.end_full.bits.clear();
    let c = tree.select(m, &own, role, limit);
    let classes = m.class_of.iter().copied().max().map_or(0, |x| x as usize + 1);
    let mut qk = ClassValues { q: vec![None; classes], proven: None };
    for (mv, n, w) in tree.root_stats(role) {
        if n > 0 {
            qk.q[m.class(mv) as usize] = Some(w / n as f64);
        }
    }
    let mut iterations = 0;
    if let Some(c) = c {
        iterations = c.iterations;
        if let Some(v) = c.value {
            let class = m.class(c.mv);
            qk.q[class as usize] = Some(v);
            qk.proven = c.proven.then_some(class);
        }
    }
    (qk, iterations)
}

/// The legal input with the highest sum of its classes' values over the factors searched.
/// Among equal sums, the one with more parts whose value a factor tree proved ([`ClassValues`]).
/// (Scoring an input by its active factors' values alone, which compares a serial move by the
/// tree of its own board and leaves out the pseudo-noop's value elsewhere, did no better on
/// dualConnect4 with `factor_serial`: 1-7 against plain MCTS, where the sum went 3-7.)
fn best_input(a: &Analysis, todo: &[usize], q: &[ClassValues], legal: &[u32]) -> Option<(f64, u32)> {
    let mut best: Option<(f64, usize, u32)> = None;
    for &mv in legal {
        let (mut s, mut proven) = (0.0, 0);
        for (i, &k) in todo.iter().enumerate() {
            let c = a.factors[k].class_of[mv as usize];
            s += q[i].q.get(c as usize).copied().flatten().unwrap_or(-1.0);
            proven += usize::from(q[i].proven == Some(c));
        }
        // Equal sums: the move with more proven parts (exact values before estimates).
        if best.is_none_or(|(b, bp, _)| s > b || (s == b && proven > bp)) {
            best = Some((s, proven, mv));
        }
    }
    best.map(|(s, _, mv)| (s, mv))
}

#[cfg(test)]
#[path = "factored_tests.rs"]
pub(crate) mod tests;
