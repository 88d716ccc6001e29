//! Factoring: independent sub-games in a propositional network, static and contingent.
//!
//! Follows Cox, Schkufza, Madsen and Genesereth, *Factoring General Games using
//! Propositional Automata* (`../shared/papers/factoring-propositional-automata.txt`). All of
//! it reads an optimised [`Net`], never GDL text.
//!
//! - **Action-independent part** (IID, Lemma 3.12): the components no input reaches,
//!   through gates and transitions. Its evolution is a fixed function of time (step
//!   counters, turns), so [`Analysis::iid_trajectory`] lists it ahead of play.
//! - **Independent sets** (Definition 3.4): the bases left once IID is set aside, joined
//!   when a base's next value reads another through gates that read some state (gates that
//!   read only inputs and IID, like "any move of x", join nothing). Bases that no legal, goal
//!   or terminal reads, through any chain of next values, are *junk* and belong to no
//!   factor.
//! - **Moves**: per factor, a role's inputs fall into classes of identical effect: two
//!   inputs are in one class when every gate of the factor's next-state cone reads both with
//!   the same sign or neither (swapping them then changes no value in the factor: exact). A
//!   compound move (`(mark x1 y1 x2 y2)`) has one class per factor; a move played in another
//!   factor lands in a *pseudo-noop* class.
//! - **Legal, goal and terminal** become [`Formulas`] over per-factor atoms. Legal
//!   partitionability (Definition 3.13) asks each input's legality to be a conjunction of
//!   per-factor conditions, here possibly once the action-independent part is known (whose
//!   turn it is decides which board's `noop` rule applies). Goal partitionability
//!   (Definition 3.14) is generalized from conjunctions to any combination, so long as no
//!   two of its conjunctive terms *cross* (share a factor with neither holding the other:
//!   two tic-tac-toe lines through one cell); crossing factors are merged, smallest unions
//!   first, until none cross. Moves couple too: factors that one input changes together
//!   stay apart only where the role's moves are every combination of per-factor parts
//!   (compound moves), not where a move is "two presses anywhere" or "a piece from one cell
//!   to another". Legality and moves are merged first (they are the dynamics, and a coupling
//!   they find between fine factors holds between their unions), crossings last, so goals
//!   are judged at the grain the dynamics set: a board's marks and blanks are one board before
//!   terms are compared across boards. Merging goes on until nothing couples; what is left
//!   is searchable apart.
//! - **Latches** (Lemma 4.3 and its generalization through the next-state cone) in
//!   [`latch`]; **contingent factoring** (Definitions 4.4 and 4.6): the bases that provably
//!   keep their current values from a state on are fixed as constants (latch modification)
//!   and the same analysis runs on what is left ([`analyse_from`]).

pub mod formula;
pub mod latch;
pub(crate) mod net_info;
pub mod outcome;
pub mod product;
pub mod report;

pub use formula::{Combination, Formulas};
pub use latch::{Latch, LatchKind};

use crate::propnet::build::Kind;
use crate::propnet::{Net, Ref};
use formula::{FRef, IID, MANY};
use net_info::{NetInfo, NONE, V};
use serde::Serialize;
use std::time::Instant;

/// Where a base belongs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// Constant in the network, or fixed by latch modification.
    Constant,
    /// Action-independent: no input reaches it.
    Iid,
    /// Nothing that legal, goal or terminal reads depends on it.
    Junk,
    /// A factor.
    Factor(u32),
}

/// How a role's moves meet the factors.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveShape {
    /// The role has no move active in a factor.
    None,
    /// Every move is active in one factor at most (the role plays in one factor per turn, the
    /// others see a pseudo-noop); all in one factor: the role belongs to that factor.
    Serial,
    /// Every move is active in several factors: a compound of per-factor parts.
    Compound,
    /// Some of each.
    Mixed,
}

/// One independent sub-game.
#[derive(Clone, Debug, Serialize)]
pub struct Factor {
    /// Its bases (indices into [`Net::bases`]).
    pub bases: Vec<u32>,
    /// Per role: each input's class in this factor (`class[role][k]` lists input ids).
    pub classes: Vec<Vec<Vec<u32>>>,
    /// Per input id: its class in this factor (an index into `classes[role]`).
    #[serde(skip)]
    pub class_of: Vec<u32>,
    /// Per role: the class of inputs that no gate of the factor's next-state cone reads
    /// (`NONE` if every input is read).
    #[serde(skip)]
    pub idle: Vec<u32>,
    /// Inputs active in this factor (whose class is not the passive one, the moves played elsewhere).
    pub active_inputs: Vec<u32>,
    /// Whether some goal reads this factor.
    pub in_goals: bool,
    /// Whether terminal reads this factor.
    pub in_terminal: bool,
}

impl Factor {
    /// The moves `role` can make in this factor: its classes of inputs, less the passive
    /// class (the moves played elsewhere, a pseudo-noop here).
    pub fn choices(&self, role: usize) -> usize {
        let all = self.classes.get(role).map_or(0, |c| c.len());
        all - usize::from(self.idle.get(role).is_some_and(|&c| c != NONE) && all > 0)
    }
}

/// The legality of one input as per-factor conjuncts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LegalForm {
    /// Never legal (or legal in no reachable action-independent state).
    Never,
    /// A conjunction of per-factor conditions: `(factor or None for IID, node, negated)`.
    Conjunction(Vec<(Option<u32>, u32, bool)>),
    /// A conjunction once the action-independent part is known (it differs by step).
    ConjunctionPerStep,
    /// Not a conjunction of per-factor conditions.
    Coupled,
}

/// What couples factors.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CoupledBy {
    /// The legality of this input is no conjunction of per-factor conditions.
    Legal(u32),
    /// This goal (role, value) has a gate over a proper part of its factors.
    Goal(usize, Option<u32>),
    Terminal,
    /// A recursive relation (a cycle of gates) reads several factors.
    Recursion,
    /// This input changes several factors, and the role's moves are no product of per-factor
    /// parts (two presses anywhere, a piece moved from one cell to another).
    Moves(u32),
    /// The analysis ran past its deadline ([`analyse_until`]): every factor was merged, as
    /// when its work bound cuts the goal term sets short, so that it ends with one factor
    /// and never splits wrongly.
    Deadline,
}

/// Why two or more factors were merged.
#[derive(Clone, Debug, Serialize)]
pub struct Coupling {
    pub by: CoupledBy,
    /// A few bases of each factor it merged.
    pub factors: Vec<Vec<u32>>,
}

/// The verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// At least two factors.
    Factorable,
    /// One factor (or none): why.
    NotFactorable(String),
}

/// The result of the analysis of a network (from its initial state, or contingent on a
/// set of fixed bases).
#[derive(Clone, Debug)]
pub struct Analysis {
    pub verdict: Verdict,
    /// Per base: where it belongs.
    pub place: Vec<Place>,
    pub factors: Vec<Factor>,
    /// Action-independent bases.
    pub iid: Vec<u32>,
    /// Bases nothing reads.
    pub junk: Vec<u32>,
    /// Per role: how its moves meet the factors.
    pub shapes: Vec<MoveShape>,
    pub formulas: Formulas,
    /// Per input id: its legality formula and its form.
    pub legal: Vec<FRef>,
    pub legal_form: Vec<LegalForm>,
    /// Per role: (goal value, formula).
    pub goals: Vec<Vec<(Option<u32>, FRef)>>,
    pub terminal: FRef,
    /// Per role: how its goals combine the factors (the least specific over its values).
    pub goal_combination: Vec<Combination>,
    pub terminal_combination: Combination,
    pub couplings: Vec<Coupling>,
    /// Bases fixed by latch modification (contingent analysis only).
    pub fixed: Vec<(u32, bool)>,
    /// The reachable action-independent states, in order from the initial one, until one
    /// repeats (`iid_cycle_start` is where the repetition goes back to); empty if there
    /// are more than [`MAX_IID_STATES`].
    pub iid_trajectory: Vec<Vec<bool>>,
    pub iid_cycle_start: usize,
    /// Per input: in which steps of `iid_trajectory` it can be legal (empty: in any).
    pub legal_when: Vec<Vec<bool>>,
    pub millis: f64,
}

/// At most this many action-independent states are listed (legality is checked per step
/// only when they fit).
pub const MAX_IID_STATES: usize = 1024;

/// Past this many multi-factor gates in goals and terminal, the factors are taken as coupled.
const MAX_GATE_SETS: usize = 3000;

/// Analyses a network from its initial state (static factoring).
pub fn analyse(net: &Net) -> Analysis {
    let info = NetInfo::new(net);
    analyse_with(net, &info, &[])
}

/// [`analyse`] within `deadline` ([`analyse_until`]): past it every factor left is merged,
/// so the verdict is "not factorable" ([`CoupledBy::Deadline`] says why).
pub fn analyse_within(net: &Net, deadline: Instant) -> Analysis {
    let info = NetInfo::new(net);
    analyse_until(net, &info, &[], Some(deadline))
}

/// What the analyses of one network share, made once per game: the facts of its graph
/// ([`NetInfo`]) and its latches (proved, [`latch::latches`]). The player's start clock
/// needs both for the goal latches of its playouts ([`outcome::playout_table_with`]), the
/// static analysis and the factored search's watch for contingent factors.
pub struct NetFacts {
    pub(crate) info: NetInfo,
    pub latches: Vec<Latch>,
}

impl NetFacts {
    pub fn new(net: &Net) -> NetFacts {
        let info = NetInfo::new(net);
        let latches = latch::latches_with(net, &info);
        NetFacts { info, latches }
    }

    /// [`analyse`] over these facts.
    pub fn analyse(&self, net: &Net) -> Analysis {
        analyse_with(net, &self.info, &[])
    }

    /// [`NetFacts::analyse`] within a deadline ([`analyse_until`]).
    pub fn analyse_until(&self, net: &Net, deadline: Option<Instant>) -> Analysis {
        analyse_until(net, &self.info, &[], deadline)
    }
}

/// Contingent factoring (Cox et al., Definition 4.6): the bases that provably keep their
/// values from `state` on ([`latch::fixed_from`]) are fixed (latch modification,
/// Definition 4.4), then the network is analysed as [`analyse`] does.
pub fn analyse_from(net: &Net, state: &dyn Fn(u32) -> bool) -> Analysis {
    let info = NetInfo::new(net);
    let fixed = latch::fixed_from(net, &info, state, None);
    analyse_with(net, &info, &fixed)
}

/// A small union-find.
struct Uf(Vec<u32>);

impl Uf {
    fn new(n: usize) -> Uf {
        Uf((0..n as u32).collect())
    }
    fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            let p = self.0[self.0[x as usize] as usize];
            self.0[x as usize] = p;
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) -> u32 {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            let (lo, hi) = if a < b { (a, b) } else { (b, a) };
            self.0[hi as usize] = lo;
            lo
        } else {
            a
        }
    }
}

pub(crate) fn analyse_with(net: &Net, info: &NetInfo, fixed: &[(u32, bool)]) -> Analysis {
    analyse_until(net, info, fixed, None)
}

/// The analysis with bases `fixed`, within a deadline: past it, at the start of a round of
/// merging or between the goal and terminal roots whose term sets are gathered, every factor
/// left is merged into one ([`CoupledBy::Deadline`]) and the analysis ends with the round
/// that follows, over one factor (a round over one factor is the cheapest there is: its
/// term sets are single words, and no move or legality can couple it). Its verdict is then
/// "not factorable", which is never wrong, only a factoring missed; so the player can give
/// the analysis a part of its start clock and count on it.
pub(crate) fn analyse_until(net: &Net, info: &NetInfo, fixed: &[(u32, bool)], deadline: Option<Instant>) -> Analysis {
    let t0 = Instant::now();
    let late = || deadline.is_some_and(|d| Instant::now() >= d);
    let n = net.nodes.len();
    let nb = net.bases.len();
    let mut fixed_of = vec![None; nb];
    for &(b, v) in fixed {
        fixed_of[b as usize] = Some(v);
    }
    // With bases fixed (contingent analysis), moves they make illegal are never played.
    let val = info.values(net, &fixed_of);
    let live = |r: Ref| val[r.node()] == V::U;

    // Readers of each node (among live gates), for forward closures.
    let mut readers_start = vec![0u32; n + 1];
    for nd in &net.nodes {
        for x in &nd.inputs {
            readers_start[x.node() + 1] += 1;
        }
    }
    for i in 0..n {
        readers_start[i + 1] += readers_start[i];
    }
    let mut fill = readers_start.clone();
    let mut readers = vec![0u32; readers_start[n] as usize];
    for (g, nd) in net.nodes.iter().enumerate() {
        for x in &nd.inputs {
            let p = &mut fill[x.node()];
            readers[*p as usize] = g as u32;
            *p += 1;
        }
    }
    // Transitions: base node -> (its next ref's node) reads; forward from the next node to
    // the base node.
    let mut next_readers: Vec<Vec<u32>> = vec![Vec::new(); n];
    for b in 0..nb {
        let (bn, nx) = (net.base_ref[b], net.next[b]);
        if !bn.is_const() && fixed_of[b].is_none() && live(nx) {
            next_readers[nx.node()].push(bn.node() as u32);
        }
    }

    // 1. Action-independent part: what no input reaches.
    let mut reached = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    for (i, r) in net.input_ref.iter().enumerate() {
        if !r.is_const() && net.legal[i] != Ref::FALSE && val[r.node()] == V::U {
            reached[r.node()] = true;
            stack.push(r.node() as u32);
        }
    }
    while let Some(v) = stack.pop() {
        let vi = v as usize;
        let rs = &readers[readers_start[vi] as usize..readers_start[vi + 1] as usize];
        for &g in rs.iter().chain(&next_readers[vi]) {
            if !reached[g as usize] && val[g as usize] == V::U {
                reached[g as usize] = true;
                stack.push(g);
            }
        }
    }
    let base_node = |b: usize| net.base_ref[b].node();
    let mut place = vec![Place::Constant; nb];
    for b in 0..nb {
        if net.base_ref[b].is_const() || fixed_of[b].is_some() {
            continue;
        }
        place[b] = if reached[base_node(b)] { Place::Junk } else { Place::Iid };
    }

    // 2. Relevance: what legal, goal and terminal read, through gates and next values.
    let mut relevant = vec![false; n];
    let roots: Vec<Ref> =
        net.legal.iter().chain(net.goals.iter().flatten().map(|(r, _)| r)).chain([&net.terminal]).copied().collect();
    for r in &roots {
        if live(*r) && !relevant[r.node()] {
            relevant[r.node()] = true;
            stack.push(r.node() as u32);
        }
    }
    while let Some(v) = stack.pop() {
        let nd = &net.nodes[v as usize];
        let next = match nd.kind {
            Kind::Base(b) => Some(net.next[b as usize]),
            _ => None,
        };
        for x in nd.inputs.iter().chain(&next) {
            let w = x.node();
            if live(*x) && !relevant[w] {
                relevant[w] = true;
                stack.push(w as u32);
            }
        }
    }

    // 3. Independent sets over the relevant bases reached by inputs. A gate carries state
    // when it reads, through live gates, such a base.
    for b in 0..nb {
        if place[b] == Place::Junk && relevant[base_node(b)] {
            place[b] = Place::Factor(NONE); // numbered below
        }
    }
    let state_base = |b: u32, place: &[Place]| matches!(place[b as usize], Place::Factor(_));
    let mut has_state = vec![false; n];
    for comp in &info.sccs {
        let mut any = false;
        for &v in comp {
            let nd = &net.nodes[v as usize];
            any |= match nd.kind {
                Kind::Base(b) => state_base(b, &place),
                Kind::And | Kind::Or => {
                    val[v as usize] == V::U && nd.inputs.iter().any(|x| live(*x) && has_state[x.node()])
                }
                _ => false,
            };
        }
        if comp.len() > 1 && any {
            for &v in comp {
                has_state[v as usize] = val[v as usize] == V::U;
            }
        } else if any {
            has_state[comp[0] as usize] = true;
        }
    }
    // Cones of next values of state bases: union every gate carrying state with the
    // state-carrying nodes it reads.
    let mut uf = Uf::new(n);
    let mut in_cone = vec![false; n];
    for b in 0..nb {
        if !state_base(b as u32, &place) {
            continue;
        }
        let nx = net.next[b];
        if !live(nx) || !has_state[nx.node()] {
            continue;
        }
        uf.union(base_node(b) as u32, nx.node() as u32);
        if !in_cone[nx.node()] {
            in_cone[nx.node()] = true;
            stack.push(nx.node() as u32);
        }
    }
    while let Some(v) = stack.pop() {
        let nd = &net.nodes[v as usize];
        if !matches!(nd.kind, Kind::And | Kind::Or) {
            continue;
        }
        for x in &nd.inputs {
            let w = x.node();
            if !live(*x) || !has_state[w] {
                continue;
            }
            uf.union(v, w as u32);
            if !in_cone[w] {
                in_cone[w] = true;
                stack.push(w as u32);
            }
        }
    }
    // Number the factors by their first base.
    let mut root_factor: rustc_hash::FxHashMap<u32, u32> = Default::default();
    let mut nf = 0u32;
    for b in 0..nb {
        if state_base(b as u32, &place) {
            let r = uf.find(base_node(b) as u32);
            let k = *root_factor.entry(r).or_insert_with(|| {
                nf += 1;
                nf - 1
            });
            place[b] = Place::Factor(k);
        }
    }

    let trajectory = iid_trajectory(net, &place, &fixed_of);
    let (iid_trajectory, iid_cycle_start) = trajectory.unwrap_or_default();

    // Read only with a trajectory to tell its steps apart.
    let iid_reads = if iid_trajectory.is_empty() {
        IidReads { set_of: Vec::new(), sets: Vec::new() }
    } else {
        IidReads::new(net, info, &place)
    };
    let when = legal_when(net, info, &place, &iid_reads, &iid_trajectory);
    let mut move_sets = MoveSets::new(n, net.inputs.len());

    // 4. Formulas, couplings and merging, until no coupling is left.
    let mut couplings = Vec::new();
    let mut rounds = 0;
    // The values of nodes in each action-independent state: the same in every round.
    let mut iid_memo: rustc_hash::FxHashMap<(usize, u32), V> = Default::default();
    let mut cone_eval = net_info::ConeEval::new(n);
    loop {
        // Past the deadline, every factor is merged before the round's formulas are built.
        let nfac = count_factors(&place);
        if nfac > 1 && late() {
            let mut fuf = Uf::new(nfac);
            let all: Vec<u32> = (0..nfac as u32).collect();
            for &k in &all {
                fuf.union(0, k);
            }
            couplings.push(Coupling {
                by: CoupledBy::Deadline,
                factors: all.iter().map(|&k| sample_bases(&place, k)).collect(),
            });
            merge(&mut place, &mut fuf);
            continue;
        }
        let fs = node_factors(net, info, &place, &val);
        let mut b = formula::Builder::new(net, &fs, &val, &info.cyclic);
        let legal: Vec<FRef> = net.legal.iter().map(|&r| b.root(r)).collect();
        let goals: Vec<Vec<(Option<u32>, FRef)>> =
            net.goals.iter().map(|g| g.iter().map(|&(r, v)| (v, b.root(r))).collect()).collect();
        let terminal = b.root(net.terminal);
        let cyclic_many = b.cyclic_many;
        let formulas = b.f;
        let mut fuf = Uf::new(nfac);
        // The round after a deadline cut (over one factor): none of its legality and move
        // analysis can change the verdict, so it is skipped ([`cut_factor`]).
        let cut_short = couplings.last().is_some_and(|c: &Coupling| c.by == CoupledBy::Deadline);
        let mut merged = false;
        let couplings_before = couplings.len();
        let mut note = |by: CoupledBy, set: &[u32], fuf: &mut Uf, couplings: &mut Vec<Coupling>| {
            let roots: Vec<u32> = set.iter().map(|&k| fuf.find(k)).collect();
            if roots.iter().any(|&r| r != roots[0]) {
                for &k in set {
                    fuf.union(set[0], k);
                }
                couplings.push(Coupling { by, factors: set.iter().map(|&k| sample_bases(&place, k)).collect() });
                merged = true;
            }
        };
        if cyclic_many {
            let all: Vec<u32> = (0..nfac as u32).collect();
            if all.len() > 1 {
                note(CoupledBy::Recursion, &all, &mut fuf, &mut couplings);
            }
        }
        // Gates' decided values per step: formulas are built anew each round.
        let mut gates = Vec::new();
        // Per formula node: the action-independent bases it reads, and its factors.
        let mut memos = [formula::FactorMemo::default(), formula::FactorMemo::default()];
        let mut legal_form = Vec::with_capacity(legal.len());
        for (i, &root) in legal.iter().enumerate() {
            if cut_short {
                legal_form.push(LegalForm::Coupled);
                continue;
            }
            let (form, sets) = legal_form_of(
                net,
                info,
                &place,
                &mut cone_eval,
                &formulas,
                root,
                &iid_trajectory,
                &iid_reads,
                &mut iid_memo,
                &mut gates,
                &mut memos,
            );
            for set in sets {
                note(CoupledBy::Legal(i as u32), &set, &mut fuf, &mut couplings);
            }
            legal_form.push(form);
        }
        let mut sets: Vec<(Vec<u32>, CoupledBy)> = Vec::new();
        if couplings.len() > couplings_before {
            // Legality first: its merges change the grain at which moves and goals are read.
            merge(&mut place, &mut fuf);
            continue;
        }
        // Moves next, before goals: a move whose effect is no product of per-factor parts
        // couples at any grain (a coupling found between fine factors holds between their
        // unions), and these merges set the grain at which goals are read (a board's marks
        // and blanks are one board before lines are judged across boards).
        let factors = if cut_short {
            vec![cut_factor(net, &place)]
        } else {
            moves_per_factor(net, &place, &val, nfac, &mut move_sets)
        };
        for (i, set) in move_couplings(net, &factors, &legal_form, &when) {
            note(CoupledBy::Moves(i), &set, &mut fuf, &mut couplings);
        }
        if couplings.len() > couplings_before {
            merge(&mut place, &mut fuf);
            continue;
        }
        let mut memo = formula::TermMemo::new(formula::MAX_TERM_WORK);
        // The first root whose term sets the work bound cut short.
        let mut cut: Option<CoupledBy> = None;
        let mut gather = |root: FRef, by: CoupledBy| {
            if cut_short {
                return;
            }
            if cut.is_none() && late() {
                cut = Some(CoupledBy::Deadline);
            }
            if cut.is_some() {
                return;
            }
            let mut s = Vec::new();
            formulas.term_sets(root, &mut memo, &mut s);
            if memo.work_left == 0 && cut.is_none() {
                cut = Some(by.clone());
            }
            sets.extend(s.into_iter().map(|x| (x, by.clone())));
        };
        for (role, gs) in goals.iter().enumerate() {
            for &(v, root) in gs {
                gather(root, CoupledBy::Goal(role, v));
            }
        }
        gather(terminal, CoupledBy::Terminal);
        sets.sort_by(|a, b| a.0.cmp(&b.0));
        sets.dedup_by(|a, b| a.0 == b.0);
        if let Some(by) = cut.filter(|_| nfac > 1) {
            // Term sets too costly to multiply out: every factor merged (never split wrongly).
            let all: Vec<u32> = (0..nfac as u32).collect();
            note(by, &all, &mut fuf, &mut couplings);
        } else if sets.len() > MAX_GATE_SETS {
            let all: Vec<u32> = (0..nfac as u32).collect();
            note(sets[0].1.clone(), &all, &mut fuf, &mut couplings);
        } else {
            let by: rustc_hash::FxHashMap<Vec<u32>, CoupledBy> = sets.iter().cloned().collect();
            let mut crossing = formula::crossings(sets.into_iter().map(|x| x.0).collect());
            // Smallest unions first (two lines through one cell before two boards' terms), one
            // size per round, so that merges follow the game's own grain.
            rounds += 1;
            if rounds <= MAX_CROSSING_ROUNDS {
                let least = crossing.iter().map(|u| u.len()).min().unwrap_or(0);
                crossing.retain(|u| u.len() == least);
            }
            for u in crossing {
                let who = by
                    .iter()
                    .find(|(k, _)| k.iter().all(|x| u.contains(x)))
                    .map_or(CoupledBy::Terminal, |x| x.1.clone());
                note(who, &u, &mut fuf, &mut couplings);
            }
        }
        if merged {
            merge(&mut place, &mut fuf);
            continue;
        }

        // 5. Moves per factor.
        let nfac = count_factors(&place);
        let mut factors = factors;
        let shapes = move_shapes(net, &legal_form, &mut factors);
        let mut fmemo = std::mem::take(&mut memo.factors);
        for &(_, r) in goals.iter().flatten() {
            for &k in formulas.factors_memo(r, &mut fmemo).iter() {
                factors[k as usize].in_goals = true;
            }
        }
        for &k in formulas.factors_memo(terminal, &mut fmemo).iter() {
            factors[k as usize].in_terminal = true;
        }
        let goal_combination = goals
            .iter()
            .map(|gs| least_specific(gs.iter().map(|&(_, r)| formulas.combination(r, &mut fmemo))))
            .collect();
        let terminal_combination = formulas.combination(terminal, &mut fmemo);
        let verdict = if nfac >= 2 {
            Verdict::Factorable
        } else if nfac == 1 {
            let why = match couplings.last() {
                Some(c) => format!("one factor: coupled by {:?}", c.by),
                None => "one factor: every base is joined to the others through next-state rules".into(),
            };
            Verdict::NotFactorable(why)
        } else {
            Verdict::NotFactorable("no state that moves change and legal, goal or terminal read".into())
        };
        let iid = (0..nb as u32).filter(|&b| place[b as usize] == Place::Iid).collect();
        let junk = (0..nb as u32).filter(|&b| place[b as usize] == Place::Junk).collect();
        return Analysis {
            verdict,
            place,
            factors,
            iid,
            junk,
            shapes,
            formulas,
            legal,
            legal_form,
            goals,
            terminal,
            goal_combination,
            terminal_combination,
            couplings,
            fixed: fixed.to_vec(),
            iid_trajectory,
            iid_cycle_start,
            legal_when: when.clone(),
            millis: t0.elapsed().as_secs_f64() * 1000.0,
        };
    }
}

/// Per factor: whether it stays as it is while every role plays a move of its passive class
/// there (a move made in another factor): each base keeps its value whatever the other bases
/// hold, by three-valued evaluation of its next value. A board under frame rules does; a lamp
/// that dims by itself (lightsOn) does not, so a search that freezes it while play goes on
/// elsewhere would misjudge it. A role without a passive class (compound moves, which always
/// play in every factor) is no obstacle: its other parts are searched in their own factors.
pub(crate) fn idle_static(net: &Net, info: &NetInfo, a: &Analysis) -> Vec<bool> {
    let passive = passive_classes(net, &a.factors);
    let mut ev = net_info::ConeEval::new(net.nodes.len());
    (0..a.factors.len())
        .map(|k| {
            let f = &a.factors[k];
            if (0..net.roles.len()).any(|r| passive[k][r] == NONE) {
                return true;
            }
            // Step by step along the action-independent trajectory (frame rules often read
            // whose turn it is), each role plays a passive move that can be legal then, or
            // its one possible move (a `noop` while the other plays).
            let traj = !a.iid_trajectory.is_empty() && a.iid_trajectory.len() <= 256;
            let steps = if traj { a.iid_trajectory.len() } else { 1 };
            let can = |i: usize, s: usize| !traj || a.legal_when.get(i).and_then(|w| w.get(s)).copied().unwrap_or(true);
            (0..steps).all(|s| {
                let mut play = vec![false; net.inputs.len()];
                for r in 0..net.roles.len() {
                    let mine: Vec<usize> =
                        (0..net.inputs.len()).filter(|&i| net.inputs[i].0 == r && can(i, s)).collect();
                    match mine.iter().find(|&&i| f.class_of[i] == passive[k][r]) {
                        Some(&i) => play[i] = true,
                        None if mine.len() == 1 => play[mine[0]] = true,
                        None if mine.is_empty() => {}
                        // The role can only play here then: play is never elsewhere only.
                        None => return true,
                    }
                }
                let step = traj.then(|| &a.iid_trajectory[s]);
                let moves = |i: u32| Some(play[i as usize]);
                f.bases.iter().all(|&b| {
                    [false, true].into_iter().all(|v| {
                        let fixed = |x: u32| {
                            if x == b {
                                return Some(v);
                            }
                            if let (Some(st), Place::Iid) = (step, a.place[x as usize]) {
                                return Some(st[x as usize]);
                            }
                            a.fixed.iter().find(|f| f.0 == x).map(|f| f.1)
                        };
                        ev.eval_moves(net, info, net.next[b as usize], &fixed, &moves) == V::of(v)
                    })
                })
            })
        })
        .collect()
}

/// Per role: whether it chooses the factor it plays in: at some step of the
/// action-independent trajectory, two of its moves that can be legal then are each active in
/// one factor, not the same (dualConnect4: a disc on either board, each turn). A move active
/// in several factors (a compound of parts, or a `noop` that no factor treats as its passive
/// move) is no such choice. With an opponent, such a game is a *sum* of games in the sense of
/// combinatorial game theory: a move in one factor is a pass (a tempo) in the others, so the
/// value of each factor depends on who moves next in it, which play in the others decides.
/// Searching each factor with free pseudo-noops, as if either player could pass at will, is
/// then an approximation. Factors that advance in lockstep (compound moves; or each role's
/// factor set by the turn, as in doubletictactoe and chinook, where the roles play on
/// different boards at once) have no such coupling: those games are the paper's synchronous
/// independent games.
pub fn chooses_factor(net: &Net, a: &Analysis) -> Vec<bool> {
    let mut act: Vec<Vec<u32>> = vec![Vec::new(); net.inputs.len()];
    for (k, f) in a.factors.iter().enumerate() {
        for &i in &f.active_inputs {
            act[i as usize].push(k as u32);
        }
    }
    let steps = a.legal_when.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let can = |i: usize, s: usize| {
        a.legal_form.get(i) != Some(&LegalForm::Never)
            && a.legal_when.get(i).is_none_or(|w| w.is_empty() || w.get(s).copied().unwrap_or(true))
    };
    (0..net.roles.len())
        .map(|r| {
            (0..steps).any(|s| {
                let mut first: Option<u32> = None;
                (0..net.inputs.len()).filter(|&i| net.inputs[i].0 == r && can(i, s) && act[i].len() == 1).any(|i| {
                    match first {
                        None => {
                            first = Some(act[i][0]);
                            false
                        }
                        Some(f) => f != act[i][0],
                    }
                })
            })
        })
        .collect()
}

/// Applies the merges of `fuf` to the factors.
fn merge(place: &mut [Place], fuf: &mut Uf) {
    for p in place.iter_mut() {
        if let Place::Factor(k) = p {
            *k = fuf.find(*k);
        }
    }
    renumber(place);
}

/// Rounds of crossing merges done smallest first; later rounds merge every crossing at once.
const MAX_CROSSING_ROUNDS: usize = 64;

fn count_factors(place: &[Place]) -> usize {
    place.iter().filter_map(|p| if let Place::Factor(k) = p { Some(*k as usize + 1) } else { None }).max().unwrap_or(0)
}

/// Renumbers factors 0.. in order of their first base.
fn renumber(place: &mut [Place]) {
    let mut map: rustc_hash::FxHashMap<u32, u32> = Default::default();
    for p in place.iter_mut() {
        if let Place::Factor(k) = p {
            let len = map.len() as u32;
            *k = *map.entry(*k).or_insert(len);
        }
    }
}

/// The least specific of several combinations: a conjunction and a disjunction together
/// make a boolean combination.
fn least_specific(it: impl Iterator<Item = Combination>) -> Combination {
    let rank = |c: Combination| match c {
        Combination::Constant => 0,
        Combination::ActionIndependent => 1,
        Combination::OneFactor => 2,
        Combination::Conjunction | Combination::Disjunction => 3,
        Combination::Boolean => 4,
    };
    it.fold(Combination::Constant, |out, c| match rank(c).cmp(&rank(out)) {
        std::cmp::Ordering::Greater => c,
        std::cmp::Ordering::Equal if c != out => Combination::Boolean,
        _ => out,
    })
}

/// Per node: `IID` (reads no factor), a factor, or `MANY`.
fn node_factors(net: &Net, info: &NetInfo, place: &[Place], val: &[V]) -> Vec<u32> {
    let mut fs = vec![IID; net.nodes.len()];
    let join = |a: u32, b: u32| {
        if a == IID {
            b
        } else if b == IID || a == b {
            a
        } else {
            MANY
        }
    };
    for comp in &info.sccs {
        let mut acc = IID;
        for &v in comp {
            let nd = &net.nodes[v as usize];
            if val[v as usize] != V::U {
                continue;
            }
            match nd.kind {
                Kind::Base(b) => {
                    if let Place::Factor(k) = place[b as usize] {
                        acc = join(acc, k);
                    }
                }
                Kind::And | Kind::Or => {
                    for x in &nd.inputs {
                        if val[x.node()] == V::U {
                            acc = join(acc, fs[x.node()]);
                        }
                    }
                }
                _ => {}
            }
        }
        for &v in comp {
            if val[v as usize] == V::U {
                fs[v as usize] = acc;
            }
        }
    }
    fs
}

/// The legality of an input as per-factor conjuncts, trying each reachable
/// action-independent state when it is no conjunction as it stands; with the factor sets
/// of the disjunctions that couple them (per state) where it is none even so.
#[allow(clippy::too_many_arguments)]
fn legal_form_of(
    net: &Net,
    info: &NetInfo,
    place: &[Place],
    ev: &mut net_info::ConeEval,
    f: &Formulas,
    root: FRef,
    traj: &[Vec<bool>],
    iid_reads: &IidReads,
    memo: &mut rustc_hash::FxHashMap<(usize, u32), V>,
    gates: &mut Vec<Vec<Option<V>>>,
    memos: &mut [formula::FactorMemo; 2],
) -> (LegalForm, Vec<Vec<u32>>) {
    let [reads_memo, factors_memo] = memos;
    gates.resize_with(traj.len() + 1, Vec::new);
    let first = match f.conjuncts(root, &mut |_, _| V::U, &mut gates[traj.len()]) {
        Ok(None) => return (LegalForm::Never, Vec::new()),
        Ok(Some(c)) => return (LegalForm::Conjunction(c), Vec::new()),
        Err(node) => node,
    };
    if traj.is_empty() {
        return (LegalForm::Coupled, vec![f.factors_memo((first, false), factors_memo).to_vec()]);
    }
    let mut any = false;
    let mut coupling = Vec::new();
    // Steps that agree on the action-independent bases the formula reads give one answer
    // (through any atom: one that reads a factor may read the action-independent part too,
    // and `iid_value` decides it then).
    let reads = iid_reads.of_formula(f, root, reads_memo);
    let mut done: rustc_hash::FxHashSet<Vec<bool>> = Default::default();
    for s in 0..traj.len() {
        if !done.insert(reads.iter().map(|&b| traj[s][b as usize]).collect()) {
            continue;
        }
        let mut tri = |_f: Option<u32>, node: u32| iid_value(net, info, place, ev, traj, memo, s, node);
        match f.conjuncts(root, &mut tri, &mut gates[s]) {
            Err(node) => coupling.push(node),
            Ok(Some(_)) => any = true,
            Ok(None) => {}
        }
    }
    if !coupling.is_empty() {
        coupling.sort_unstable();
        coupling.dedup();
        let mut sets: Vec<Vec<u32>> =
            coupling.into_iter().map(|node| f.factors_memo((node, false), factors_memo).to_vec()).collect();
        sets.sort();
        sets.dedup();
        (LegalForm::Coupled, sets)
    } else if any {
        (LegalForm::ConjunctionPerStep, Vec::new())
    } else {
        (LegalForm::Never, Vec::new())
    }
}

/// The three-valued value of `node` in step `s` of the action-independent trajectory, with
/// only the action-independent bases known.
#[allow(clippy::too_many_arguments)]
fn iid_value(
    net: &Net,
    info: &NetInfo,
    place: &[Place],
    ev: &mut net_info::ConeEval,
    traj: &[Vec<bool>],
    memo: &mut rustc_hash::FxHashMap<(usize, u32), V>,
    s: usize,
    node: u32,
) -> V {
    *memo.entry((s, node)).or_insert_with(|| {
        ev.eval(net, info, Ref::new(node, false), &|b| (place[b as usize] == Place::Iid).then(|| traj[s][b as usize]))
    })
}

/// Per input, in which steps of the action-independent trajectory it can be legal, by
/// three-valued evaluation of its legality with the action-independent bases known (empty:
/// no trajectory, or too long a one to be worth it, so in any).
fn legal_when(net: &Net, info: &NetInfo, place: &[Place], iid_reads: &IidReads, traj: &[Vec<bool>]) -> Vec<Vec<bool>> {
    if traj.is_empty() || traj.len().saturating_mul(net.inputs.len()) > MAX_LEGAL_WHEN {
        return vec![Vec::new(); net.inputs.len()];
    }
    let mut ev = net_info::ConeEval::new(net.nodes.len());
    net.legal
        .iter()
        .map(|&r| {
            // The action-independent bases this legality reads: steps that agree on them get
            // one evaluation (a step counter that legality ignores multiplies nothing).
            let reads = iid_reads.of(std::iter::once(r.node()));
            let mut done: rustc_hash::FxHashMap<Vec<bool>, bool> = Default::default();
            traj.iter()
                .map(|state| {
                    let key: Vec<bool> = reads.iter().map(|&b| state[b]).collect();
                    *done.entry(key).or_insert_with(|| {
                        ev.eval(net, info, r, &|b| (place[b as usize] == Place::Iid).then(|| state[b as usize])) != V::F
                    })
                })
                .collect()
        })
        .collect()
}

/// Per node, the action-independent bases in its cone (a base ends the walk), as interned
/// sets: the bases a formula reads are then a union of a few small sets, not a walk of its
/// cone per input (chess variants: thousands of inputs whose legality cones overlap).
struct IidReads {
    set_of: Vec<u32>,
    sets: Vec<Vec<usize>>,
}

impl IidReads {
    fn new(net: &Net, info: &NetInfo, place: &[Place]) -> IidReads {
        let mut set_of = vec![0u32; net.nodes.len()];
        let mut sets: Vec<Vec<usize>> = vec![Vec::new()];
        let mut index: rustc_hash::FxHashMap<Vec<usize>, u32> = Default::default();
        index.insert(Vec::new(), 0);
        let mut acc: Vec<usize> = Vec::new();
        // Components in evaluation order: every input outside a component is done before
        // it, and the nodes of one component reach each other, so they share one set.
        for comp in &info.sccs {
            acc.clear();
            for &v in comp {
                let nd = &net.nodes[v as usize];
                match nd.kind {
                    Kind::Base(b) if place[b as usize] == Place::Iid => acc.push(b as usize),
                    _ => {
                        for x in &nd.inputs {
                            acc.extend_from_slice(&sets[set_of[x.node()] as usize]);
                        }
                    }
                }
            }
            acc.sort_unstable();
            acc.dedup();
            let id = match index.get(&acc) {
                Some(&id) => id,
                None => {
                    sets.push(acc.clone());
                    let id = (sets.len() - 1) as u32;
                    index.insert(acc.clone(), id);
                    id
                }
            };
            for &v in comp {
                set_of[v as usize] = id;
            }
        }
        IidReads { set_of, sets }
    }

    /// The action-independent bases that the atoms of formula `root` read, sorted, kept per
    /// formula node in `memo` (one per round's formulas): the legality formulas of many
    /// inputs share their parts (chess_200: a walk of each input's formula took most of its
    /// 2.7 s analysis).
    fn of_formula(&self, f: &Formulas, root: FRef, memo: &mut formula::FactorMemo) -> std::rc::Rc<[u32]> {
        f.union_memo(root, memo, &|_, node| {
            self.sets[self.set_of[node as usize] as usize].iter().map(|&b| b as u32).collect()
        })
    }

    /// The action-independent bases in the cones of `nodes`, sorted.
    fn of(&self, nodes: impl Iterator<Item = usize>) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for v in nodes {
            out.extend_from_slice(&self.sets[self.set_of[v] as usize]);
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Most (input, step) pairs [`legal_when`] evaluates.
const MAX_LEGAL_WHEN: usize = 200_000;

/// The value of an action-independent node when the bases hold `state` (indexed by base).
fn eval_iid(net: &Net, node: u32, state: &[bool]) -> bool {
    let mut memo: rustc_hash::FxHashMap<u32, bool> = Default::default();
    fn go(net: &Net, v: u32, state: &[bool], memo: &mut rustc_hash::FxHashMap<u32, bool>, depth: usize) -> bool {
        if let Some(&b) = memo.get(&v) {
            return b;
        }
        let nd = &net.nodes[v as usize];
        let b = match nd.kind {
            Kind::False => false,
            Kind::Base(b) => state[b as usize],
            Kind::Input(_) => false,
            Kind::And | Kind::Or if depth > 10_000 => false,
            Kind::And => nd.inputs.iter().all(|x| go(net, x.node() as u32, state, memo, depth + 1) != x.neg()),
            Kind::Or => nd.inputs.iter().any(|x| go(net, x.node() as u32, state, memo, depth + 1) != x.neg()),
        };
        memo.insert(v, b);
        b
    }
    go(net, node, state, &mut memo, 0)
}

/// The action-independent states from the initial one, one per step, until one repeats.
/// Entries are indexed by base (values of bases outside IID are false, and unused).
fn iid_trajectory(net: &Net, place: &[Place], fixed: &[Option<bool>]) -> Option<(Vec<Vec<bool>>, usize)> {
    let iid: Vec<usize> = (0..place.len()).filter(|&b| place[b] == Place::Iid).collect();
    let mut cur: Vec<bool> = (0..place.len())
        .map(|b| fixed[b].unwrap_or(net.init[b] && place[b] == Place::Iid) || (net.base_ref[b] == Ref::TRUE))
        .collect();
    let mut seen: rustc_hash::FxHashMap<Vec<bool>, usize> = Default::default();
    let mut out = Vec::new();
    loop {
        let key: Vec<bool> = iid.iter().map(|&b| cur[b]).collect();
        if let Some(&at) = seen.get(&key) {
            return Some((out, at));
        }
        if out.len() >= MAX_IID_STATES {
            return None;
        }
        seen.insert(key, out.len());
        out.push(cur.clone());
        let mut next = cur.clone();
        for &b in &iid {
            let r = net.next[b];
            next[b] = if r.is_const() { r == Ref::TRUE } else { eval_iid(net, r.node() as u32, &cur) != r.neg() };
        }
        cur = next;
    }
}

/// Per factor, each role's inputs in classes of identical effect on the factor's next
/// values (see the module docs).
fn moves_per_factor(net: &Net, place: &[Place], val: &[V], nfac: usize, moves: &mut MoveSets) -> Vec<Factor> {
    let n = net.nodes.len();
    let mut factors = Vec::with_capacity(nfac);
    let mut stamp = vec![NONE; n];
    let mut stack = Vec::new();
    for k in 0..nfac as u32 {
        let bases: Vec<u32> = (0..place.len() as u32).filter(|&b| place[b as usize] == Place::Factor(k)).collect();
        // Signatures: per input, the gates of the cone that list it, where a gate that reads
        // one role's moves only is judged by its move set (see [`MoveSets`]); inputs with one
        // signature are one class, found by splitting the classes by each gate's list.
        let mut sig = Refiner::new(net);
        let visit = |w: usize, moves: &mut MoveSets, stamp: &mut [u32], stack: &mut Vec<u32>, sig: &mut Refiner| {
            if stamp[w] == k {
                return;
            }
            stamp[w] = k;
            if let Some(set) = moves.of(net, w as u32) {
                sig.refine(&set.inputs);
            } else {
                stack.push(w as u32);
            }
        };
        for &b in &bases {
            let nx = net.next[b as usize];
            if val[nx.node()] == V::U {
                visit(nx.node(), moves, &mut stamp, &mut stack, &mut sig);
            }
            // An input read directly as the next value.
            if let Kind::Input(i) = net.nodes[nx.node()].kind {
                sig.refine(&[i]);
            }
        }
        while let Some(v) = stack.pop() {
            let nd = &net.nodes[v as usize];
            if !matches!(nd.kind, Kind::And | Kind::Or) {
                continue;
            }
            // The gate's kids that read one role's moves only are taken together, per role,
            // as one move set (however the rules split "any unstack move" among them): the
            // kids' memoized sets (and whether the gate negates each), joined only where a
            // role has two.
            let and = matches!(nd.kind, Kind::And);
            let mut parts: Vec<(Option<usize>, Vec<(std::rc::Rc<MoveSet>, bool)>)> = Vec::new();
            for x in &nd.inputs {
                let w = x.node();
                if val[w] != V::U {
                    continue;
                }
                match moves.of(net, w as u32) {
                    Some(set) => match parts.iter_mut().find(|p| p.0 == set.role) {
                        Some(p) => p.1.push((set, x.neg())),
                        None => parts.push((set.role, vec![(set, x.neg())])),
                    },
                    None => visit(w, moves, &mut stamp, &mut stack, &mut sig),
                }
            }
            for (_, kids) in &parts {
                match &kids[..] {
                    [(one, _)] => sig.refine(&one.inputs),
                    _ => {
                        // One role's sets always join.
                        if let Some(u) = moves.fold(kids, and, usize::MAX) {
                            sig.refine(&u.inputs);
                        }
                    }
                }
            }
        }
        // Classes numbered per role in the order of their first input.
        let mut classes = vec![Vec::new(); net.roles.len()];
        let mut class_of = vec![NONE; net.inputs.len()];
        let mut number = vec![NONE; sig.count()];
        for (i, (&(role, _), of)) in net.inputs.iter().zip(class_of.iter_mut()).enumerate() {
            let c = sig.class[i] as usize;
            if number[c] == NONE {
                number[c] = classes[role].len() as u32;
                classes[role].push(Vec::new());
            }
            classes[role][number[c] as usize].push(i as u32);
            *of = number[c];
        }
        // The idle class: the inputs no list names, left in their role's first class.
        let idle = (0..net.roles.len()).map(|r| number[r]).collect();
        factors.push(Factor {
            bases,
            classes,
            class_of,
            idle,
            active_inputs: Vec::new(),
            in_goals: false,
            in_terminal: false,
        });
    }
    factors
}

/// The one factor an analysis cut by its deadline ends with: every base left, and each input
/// a class of its own (no two moves taken as alike, which only a finished analysis shows).
fn cut_factor(net: &Net, place: &[Place]) -> Factor {
    let bases = (0..place.len() as u32).filter(|&b| matches!(place[b as usize], Place::Factor(_))).collect();
    let mut classes = vec![Vec::new(); net.roles.len()];
    let class_of = net
        .inputs
        .iter()
        .enumerate()
        .map(|(i, &(role, _))| {
            classes[role].push(vec![i as u32]);
            classes[role].len() as u32 - 1
        })
        .collect();
    Factor {
        bases,
        classes,
        class_of,
        idle: vec![NONE; net.roles.len()],
        active_inputs: Vec::new(),
        in_goals: false,
        in_terminal: false,
    }
}

/// Gates that read the moves of one role only (through ANDs, ORs and negations), each with
/// the set of that role's inputs under which it is true. As a role plays exactly one input,
/// two inputs that every such gate of a cone treats alike (both in its true set or both out)
/// change nothing there when swapped, however the rules happen to group them
/// (blocksWorldParallel reads "any stack move on board 1" through disjunctions it shares
/// with board 2's rules).
struct MoveSets {
    /// Per node: `None` not yet known; `Some(None)` reads something else; `Some(Some(set))`.
    memo: Vec<Option<Option<std::rc::Rc<MoveSet>>>>,
    /// The scratch of [`MoveSets::fold`]: per input, the stamp of the set being built when
    /// it is in it (a stamp of 0: in none); the stamp; the inputs listed so far (some may
    /// have left the set since).
    stamp: Vec<u32>,
    gen: u32,
    members: Vec<u32>,
}

/// The inputs of `role` under which a gate is true: `inputs`, or all but them (`comp`).
/// `role` is `None` for a gate that reads no input (a constant).
#[derive(Clone, Debug)]
struct MoveSet {
    role: Option<usize>,
    comp: bool,
    inputs: Vec<u32>,
}

impl MoveSet {
    #[cfg(test)]
    fn not(mut self) -> MoveSet {
        self.comp = !self.comp;
        self
    }

    /// `a ∧ b` (`and`) or `a ∨ b`, by De Morgan from set operations on the listed inputs:
    /// the reference that [`MoveSets::fold`] is tested against.
    #[cfg(test)]
    fn join(a: MoveSet, b: MoveSet, and: bool) -> Option<MoveSet> {
        let role = match (a.role, b.role) {
            (Some(x), Some(y)) if x != y => return None,
            (x, y) => x.or(y),
        };
        if !and {
            return MoveSet::join(a.not(), b.not(), true).map(MoveSet::not);
        }
        let (x, y) = (&a.inputs, &b.inputs);
        let (comp, inputs): (bool, Vec<u32>) = match (a.comp, b.comp) {
            (false, false) => (false, x.iter().copied().filter(|i| y.binary_search(i).is_ok()).collect()),
            (false, true) => (false, x.iter().copied().filter(|i| y.binary_search(i).is_err()).collect()),
            (true, false) => (false, y.iter().copied().filter(|i| x.binary_search(i).is_err()).collect()),
            (true, true) => {
                let mut u: Vec<u32> = x.iter().chain(y).copied().collect();
                u.sort_unstable();
                u.dedup();
                (true, u)
            }
        };
        Some(MoveSet { role, comp, inputs })
    }
}

/// Inputs in classes by the lists they are in (partition refinement): two inputs share a
/// class exactly when every list given to [`Refiner::refine`] names both or neither. Each
/// role's inputs start in a class of their own (class `role`), so roles never share one.
struct Refiner {
    /// Per input: its class.
    class: Vec<u32>,
    /// Per class: the round of its last split, and the class its listed inputs moved to.
    mark: Vec<u32>,
    split: Vec<u32>,
    /// Per input: the round that last moved it (a list naming an input twice moves it once).
    seen: Vec<u32>,
    round: u32,
}

impl Refiner {
    fn new(net: &Net) -> Refiner {
        let roles = net.roles.len();
        Refiner {
            class: net.inputs.iter().map(|&(r, _)| r as u32).collect(),
            mark: vec![0; roles],
            split: vec![0; roles],
            seen: vec![0; net.inputs.len()],
            round: 0,
        }
    }

    /// Splits every class into its inputs in `list` and the others.
    fn refine(&mut self, list: &[u32]) {
        self.round += 1;
        for &i in list {
            let i = i as usize;
            if std::mem::replace(&mut self.seen[i], self.round) == self.round {
                continue;
            }
            let c = self.class[i] as usize;
            if self.mark[c] != self.round {
                self.mark[c] = self.round;
                self.split[c] = self.mark.len() as u32;
                self.mark.push(0);
                self.split.push(0);
            }
            self.class[i] = self.split[c];
        }
    }

    /// Classes made so far (some may be empty).
    fn count(&self) -> usize {
        self.mark.len()
    }
}

/// Most listed inputs per gate before it is taken as opaque.
const MAX_MOVE_SET: usize = 4096;

impl MoveSets {
    fn new(n: usize, inputs: usize) -> MoveSets {
        MoveSets { memo: vec![None; n], stamp: vec![0; inputs], gen: 0, members: Vec::new() }
    }

    /// The move set of `v`, if it reads one role's moves only.
    fn of(&mut self, net: &Net, v: u32) -> Option<std::rc::Rc<MoveSet>> {
        self.of_depth(net, v, 0)
    }

    fn of_depth(&mut self, net: &Net, v: u32, depth: usize) -> Option<std::rc::Rc<MoveSet>> {
        if let Some(m) = &self.memo[v as usize] {
            return m.clone();
        }
        let nd = &net.nodes[v as usize];
        let out = match nd.kind {
            Kind::Input(i) => Some(MoveSet { role: Some(net.inputs[i as usize].0), comp: false, inputs: vec![i] }),
            Kind::False => Some(MoveSet { role: None, comp: false, inputs: Vec::new() }),
            Kind::And | Kind::Or if depth < 64 && !nd.inputs.is_empty() => {
                let mut kids = Vec::with_capacity(nd.inputs.len());
                for x in &nd.inputs {
                    match self.of_depth(net, x.node() as u32, depth + 1) {
                        Some(k) => kids.push((k, x.neg())),
                        None => break,
                    }
                }
                if kids.len() == nd.inputs.len() {
                    self.fold(&kids, matches!(nd.kind, Kind::And), MAX_MOVE_SET)
                } else {
                    None
                }
            }
            _ => None,
        };
        let r = out.map(std::rc::Rc::new);
        self.memo[v as usize] = Some(r.clone());
        r
    }

    /// The kids (each negated where its flag says) joined left to right by `∧` (`and`) or
    /// `∨`, exactly as [`MoveSet::join`] would fold them: `None` where two roles meet or a
    /// partial result lists more than `limit` inputs. A step costs the kid's size,
    /// not the partial result's (membership by stamp), so a gate over thousands of single
    /// inputs costs their number, not its square.
    fn fold(&mut self, kids: &[(std::rc::Rc<MoveSet>, bool)], and: bool, limit: usize) -> Option<MoveSet> {
        // By De Morgan, `∨` is `∧` of the complements, complemented: the partial result is
        // kept complemented (`flip`) throughout an `∨`.
        let flip = !and;
        let (first, neg) = &kids[0];
        let mut role = first.role;
        let mut comp = first.comp ^ neg ^ flip;
        self.next_gen();
        self.members.clear();
        for &i in &first.inputs {
            self.stamp[i as usize] = self.gen;
            self.members.push(i);
        }
        let mut size = first.inputs.len();
        if size > limit {
            return None;
        }
        for (k, neg) in &kids[1..] {
            role = match (role, k.role) {
                (Some(x), Some(y)) if x != y => return None,
                (x, y) => x.or(y),
            };
            match (comp, k.comp ^ neg ^ flip) {
                // A ∩ K, or K \ A (which is no longer complemented).
                (a, false) => {
                    let old = self.gen;
                    self.next_gen();
                    self.members.clear();
                    for &i in &k.inputs {
                        if (self.stamp[i as usize] == old) != a {
                            self.stamp[i as usize] = self.gen;
                            self.members.push(i);
                        }
                    }
                    size = self.members.len();
                    comp = false;
                }
                // A \ K.
                (false, true) => {
                    for &i in &k.inputs {
                        if self.stamp[i as usize] == self.gen {
                            self.stamp[i as usize] = 0;
                            size -= 1;
                        }
                    }
                }
                // A ∪ K, complemented.
                (true, true) => {
                    for &i in &k.inputs {
                        if self.stamp[i as usize] != self.gen {
                            self.stamp[i as usize] = self.gen;
                            self.members.push(i);
                            size += 1;
                        }
                    }
                }
            }
            if size > limit {
                return None;
            }
        }
        let gen = self.gen;
        let mut inputs: Vec<u32> = self.members.iter().copied().filter(|&i| self.stamp[i as usize] == gen).collect();
        inputs.sort_unstable();
        Some(MoveSet { role, comp: comp ^ flip, inputs })
    }

    /// A fresh stamp for a set being built.
    fn next_gen(&mut self) {
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.gen = 1;
        }
    }
}

/// Per role and factor, the *passive* class (in a serial game, the moves played
/// elsewhere): the idle class, which the factor's rules do not read, if there is one; else
/// the one with the most inputs, if one has more than any other (frame rules that name the
/// other board's moves); `NONE` on a tie (compound moves: every class is a part).
fn passive_classes(net: &Net, factors: &[Factor]) -> Vec<Vec<u32>> {
    factors
        .iter()
        .map(|f| {
            (0..net.roles.len())
                .map(|r| {
                    if f.idle[r] != NONE {
                        return f.idle[r];
                    }
                    let sizes: Vec<usize> = f.classes[r].iter().map(|c| c.len()).collect();
                    let max = sizes.iter().copied().max().unwrap_or(0);
                    match sizes.iter().filter(|&&s| s == max).count() {
                        1 => sizes.iter().position(|&s| s == max).unwrap_or(0) as u32,
                        _ => NONE,
                    }
                })
                .collect()
        })
        .collect()
}

/// The factors in which an input is active (its class is not the passive one), and
/// whether it is *noop-like* (alone in its class in every factor where it is active: a
/// `noop` whose frame rules name it).
fn activity(net: &Net, factors: &[Factor], passive: &[Vec<u32>], i: usize) -> (Vec<u32>, bool) {
    let r = net.inputs[i].0;
    let act: Vec<u32> =
        (0..factors.len() as u32).filter(|&k| factors[k as usize].class_of[i] != passive[k as usize][r]).collect();
    let lonely =
        act.iter().all(|&k| factors[k as usize].classes[r][factors[k as usize].class_of[i] as usize].len() == 1);
    (act, lonely)
}

/// Inputs that change several factors where the role's moves are no product of per-factor
/// parts: the factors each touches must be merged. A role whose inputs active in several
/// factors realize every combination of their per-factor classes plays compound moves,
/// which decompose.
///
/// Only moves that can be legal together are compared: `when[i]` says in which states of
/// the action-independent trajectory input `i` can be legal (empty: in all). So a `noop`
/// that is a role's only move while the other plays (doubletictactoe, parallel boards)
/// never pairs with the marks, while a `place` that is every cell's own move (hex) does.
fn move_couplings(net: &Net, factors: &[Factor], forms: &[LegalForm], when: &[Vec<bool>]) -> Vec<(u32, Vec<u32>)> {
    let passive = passive_classes(net, factors);
    let mut out = Vec::new();
    let states = when.iter().map(|w| w.len()).max().unwrap_or(0);
    for r in 0..net.roles.len() {
        let multi: Vec<(u32, Vec<u32>)> = (0..net.inputs.len())
            .filter(|&i| net.inputs[i].0 == r && forms[i] != LegalForm::Never)
            .filter_map(|i| {
                let (act, _) = activity(net, factors, &passive, i);
                (act.len() >= 2).then_some((i as u32, act))
            })
            .collect();
        let mut seen: rustc_hash::FxHashSet<Vec<u32>> = Default::default();
        for s in 0..states.max(1) {
            let together: Vec<(u32, Vec<u32>)> =
                multi.iter().filter(|(i, _)| when[*i as usize].get(s).copied().unwrap_or(true)).cloned().collect();
            if seen.insert(together.iter().map(|x| x.0).collect()) {
                move_product(factors, together, &mut out);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// [`move_couplings`] for one set of moves that can be legal together.
fn move_product(factors: &[Factor], multi: Vec<(u32, Vec<u32>)>, out: &mut Vec<(u32, Vec<u32>)>) {
    {
        // Components of factors that some move changes together (two boards' moves never
        // meet), each checked on its own.
        let mut uf = Uf::new(factors.len());
        for (_, a) in &multi {
            for &k in &a[1..] {
                uf.union(a[0], k);
            }
        }
        let mut comps: rustc_hash::FxHashMap<u32, Vec<(u32, Vec<u32>)>> = Default::default();
        for m in &multi {
            comps.entry(uf.find(m.1[0])).or_default().push(m.clone());
        }
        for (_, moves) in comps {
            let mut fset: Vec<u32> = moves.iter().flat_map(|(_, a)| a.iter().copied()).collect();
            fset.sort_unstable();
            fset.dedup();
            if fset.len() > MAX_MOVE_COMPONENT {
                out.extend(moves);
                continue;
            }
            // Group the factors by dependence: two factors depend on each other when the
            // pairs of their classes over these moves are not every combination of the
            // classes each shows (a board's cells, one of which each move marks; the bases
            // one block move sets and clears). Independent groups are the candidate parts.
            let m = fset.len();
            let cls: Vec<Vec<u32>> = fset
                .iter()
                .map(|&k| moves.iter().map(|&(i, _)| factors[k as usize].class_of[i as usize]).collect())
                .collect();
            let distinct = |xs: &mut Vec<u64>| {
                xs.sort_unstable();
                xs.dedup();
                xs.len()
            };
            let mut buf = Vec::new();
            let counts: Vec<usize> = cls
                .iter()
                .map(|c| {
                    buf.clear();
                    buf.extend(c.iter().map(|&x| x as u64));
                    distinct(&mut buf)
                })
                .collect();
            // Two factors that no move changes together are alternatives within one part
            // (each move marks one cell of a board): dependent without a closer look.
            let mut pos = vec![0; factors.len()];
            for (x, &k) in fset.iter().enumerate() {
                pos[k as usize] = x;
            }
            // Marking the pairs each move changes together costs the squares of its factor
            // counts (knightazons: moves over many factors at once).
            if moves.iter().map(|(_, a)| a.len() * a.len()).sum::<usize>() > MAX_MOVE_WORK {
                out.extend(moves);
                continue;
            }
            let mut co = vec![false; m * m];
            let mut at = Vec::new();
            for (_, a) in &moves {
                at.clear();
                at.extend(a.iter().map(|&k| pos[k as usize] * m));
                for &x in &at {
                    for &k in a {
                        co[x + pos[k as usize]] = true;
                    }
                }
            }
            // The pairs compared below, each over every move.
            let pairs = (0..m).map(|x| co[x * m + x + 1..(x + 1) * m].iter().filter(|&&c| c).count()).sum::<usize>();
            if pairs.saturating_mul(moves.len()) > MAX_MOVE_WORK {
                out.extend(moves);
                continue;
            }
            let mut g = Uf::new(m);
            for x in 0..m {
                for y in x + 1..m {
                    if !co[x * m + y] {
                        g.union(x as u32, y as u32);
                    }
                }
            }
            for x in 0..m {
                for y in x + 1..m {
                    if !co[x * m + y] || g.find(x as u32) == g.find(y as u32) {
                        continue;
                    }
                    buf.clear();
                    buf.extend(cls[x].iter().zip(&cls[y]).map(|(&p, &q)| (p as u64) << 32 | q as u64));
                    if distinct(&mut buf) < counts[x] * counts[y] {
                        g.union(x as u32, y as u32);
                    }
                }
            }
            let group: Vec<u32> = (0..m as u32).map(|x| g.find(x)).collect();
            let mut groups: Vec<u32> = group.clone();
            groups.sort_unstable();
            groups.dedup();
            let members: Vec<Vec<usize>> =
                groups.iter().map(|&gr| (0..m).filter(|&x| group[x] == gr).collect()).collect();
            // Each move's part in each group: its classes in the group's factors.
            let part = |j: usize, gi: usize| -> Vec<u32> { members[gi].iter().map(|&x| cls[x][j]).collect() };
            let mut product = 1f64;
            for gi in 0..groups.len() {
                let mut cs: Vec<Vec<u32>> = (0..moves.len()).map(|j| part(j, gi)).collect();
                cs.sort_unstable();
                cs.dedup();
                product *= cs.len() as f64;
            }
            let mut tuples: Vec<Vec<Vec<u32>>> =
                (0..moves.len()).map(|j| (0..groups.len()).map(|gi| part(j, gi)).collect()).collect();
            tuples.sort();
            tuples.dedup();
            if tuples.len() as f64 >= product {
                // Compound moves over the groups: each group is one part (one factor).
                for mem in &members {
                    let set: Vec<u32> = mem.iter().map(|&x| fset[x]).collect();
                    if set.len() >= 2 {
                        out.push((moves[0].0, set));
                    }
                }
                continue;
            }
            out.extend(moves);
        }
    }
}

/// Past this many factors changed together by moves, or this much work (the squares of the
/// factor counts of the moves, to mark which factors change together; the pairs of factors
/// that some move changes together, times moves, to compare their classes pairwise), they
/// are merged without a closer look.
const MAX_MOVE_COMPONENT: usize = 512;
const MAX_MOVE_WORK: usize = 10_000_000;

/// Which factors each input is active in (see [`activity`]), and each role's shape.
fn move_shapes(net: &Net, forms: &[LegalForm], factors: &mut [Factor]) -> Vec<MoveShape> {
    let passive = passive_classes(net, factors);
    let mut one = vec![false; net.roles.len()];
    let mut several = vec![false; net.roles.len()];
    for (i, form) in forms.iter().enumerate() {
        if *form == LegalForm::Never {
            continue;
        }
        let (act, lonely) = activity(net, factors, &passive, i);
        for &k in &act {
            factors[k as usize].active_inputs.push(i as u32);
        }
        let role = net.inputs[i].0;
        match act.len() {
            0 => {}
            1 => one[role] = true,
            _ if lonely => {}
            _ => several[role] = true,
        }
    }
    (0..net.roles.len())
        .map(|r| match (one[r], several[r]) {
            (false, false) => MoveShape::None,
            (true, false) => MoveShape::Serial,
            (false, true) => MoveShape::Compound,
            (true, true) => MoveShape::Mixed,
        })
        .collect()
}

/// A few bases of a factor (for reports).
fn sample_bases(place: &[Place], k: u32) -> Vec<u32> {
    (0..place.len() as u32).filter(|&b| place[b as usize] == Place::Factor(k)).take(3).collect()
}

#[cfg(test)]
mod tests;
