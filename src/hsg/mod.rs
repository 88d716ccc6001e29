//! Hyperstate space graphs (issue 18, item 1; Cook and Raad, *Hyperstate Space Graphs for
//! Automated Game Analysis*, `../shared/papers/hyperstate-space-graphs.txt`).
//!
//! - The *state space graph* (SSG, [`Ssg`]) is the reachable states and the actions between
//!   them: here one edge per joint move, so a two-player game is seen as one graph with every
//!   role's choices, and tags are taken from one role's view.
//! - An action is *reversible* (immediately or eventually) when its source is reachable again
//!   from its target; a state's *reversible closure* rc(g) is the states mutually reachable with
//!   it (section II.C). A *hyperstate* is one reversible closure, so the hyperstates are the
//!   strongly connected components of the SSG ([`crate::graph::sccs`]); the actions between
//!   hyperstates are the *critical* actions, lifted to (hs, label, hs') and without self-loops
//!   (the HSG conditions 1-4). The HSG is acyclic.
//! - Tags (section II.D): a *leaf* hyperstate (no critical action) is *win* when it holds a
//!   state where the role gets its winning goal, *fail* otherwise; a non-leaf one is *eventually
//!   winnable* when it reaches a win (◇W), *implicitly failed* otherwise (□¬W).
//! - *Headroom* (section IV.A): the share of winnable states in a hyperstate's closure a*(hs),
//!   and among the critical actions leaving it (one step). *Loss distance* (section IV.B):
//!   critical actions to the nearest fail or implicitly failed hyperstate; the *ideal path*
//!   follows winnable successors of greatest loss distance, and the loss distances along it are
//!   the game's *failure spectrum*.
//! - Bounds (section VI.1, depth-limited HSGs): exploration stops at a depth, a number of
//!   states or a deadline; a state left unexpanded is *open*, and a hyperstate that reaches no
//!   win but reaches an open state is tagged [`Tag::Open`], never implicitly failed: that tag
//!   is only given when everything the hyperstate reaches was explored, so it is a proof.
//! - Weak equivalence (section VI.2): the SSG may be quotiented by a weaker equivalence
//!   ([`Ssg::quotient`]), e.g. states compared without the action-independent bases that no
//!   legality reads ([`timer_bases`]: step counters), which make every action of a puzzle with
//!   a move limit irreversible. The quotient is taken of the explored SSG, so it costs what the
//!   strong graph costs; a class holds a win when one of its states is a winning terminal
//!   state, so an ending by the move limit is kept (a game that ends only by its clock still
//!   has wins), and a path through the quotient may join states of different times.

use crate::graph::scc_ids_by;
use crate::machine::explore::{JointMoves, StateIndex};
use crate::machine::{canonical_move_text, StateMachine};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::hash::Hash;
use std::time::Instant;

pub mod picture;
pub mod prune;
#[cfg(test)]
mod tests;

/// Bounds and view of one analysis.
#[derive(Clone, Debug)]
pub struct HsgOptions {
    /// The role whose wins and failures are tagged.
    pub role: usize,
    /// A terminal state is a win for the role when its goal is at least this.
    pub win: u32,
    /// States at most (further new states are not added; their parents are open).
    pub max_states: usize,
    /// Joint moves from the start at most (states at this depth are open).
    pub depth: Option<u32>,
    pub deadline: Option<Instant>,
}

impl Default for HsgOptions {
    fn default() -> Self {
        HsgOptions { role: 0, win: 100, max_states: 1_000_000, depth: None, deadline: None }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HsgError {
    #[error("role {role} has no legal move in a state that is not terminal (depth {depth})")]
    NoMoves { role: String, depth: u32 },
    #[error("the reasoner hit a resource limit, so its answers may be incomplete")]
    Overflow,
}

/// One state of the state space graph (SSG).
#[derive(Clone, Debug)]
pub struct StateNode {
    /// Joint moves from the start (breadth first: the fewest).
    pub depth: u32,
    pub terminal: bool,
    /// The role's goal, for a terminal state.
    pub goal: Option<u32>,
    /// Not (fully) expanded: at the depth bound, past the deadline, or some successor not
    /// added for the state bound.
    pub open: bool,
}

/// The reachable state space graph: node 0 the start.
pub struct Ssg<S, Mv> {
    /// One state per node (in a quotient: the class's first state).
    pub states: Vec<S>,
    pub nodes: Vec<StateNode>,
    /// (label, successor) per joint move, node by node: node `s`'s are
    /// `edge_list[edge_start[s]..edge_start[s + 1]]` ([`Ssg::edges`]; one flat array, not a
    /// list per state, so a million states cost no million allocations).
    pub edge_start: Vec<u32>,
    pub edge_list: Vec<(u32, u32)>,
    /// Joint move texts (one role's move for a one-role game; "a | b" otherwise).
    pub labels: Vec<String>,
    /// The joint move of each label.
    pub joints: Vec<Vec<Mv>>,
}

impl<S, Mv: Clone> Ssg<S, Mv> {
    /// Explores the states reachable from `start` breadth first, within `opts`' bounds.
    pub fn explore<M>(m: &mut M, start: &S, opts: &HsgOptions) -> Result<Self, HsgError>
    where
        M: StateMachine<State = S, Move = Mv>,
        S: Clone + Hash + Eq,
        Mv: Copy + Eq + Hash,
    {
        let mut index = StateIndex::new(start);
        let mut depth_of = vec![0u32];
        let mut nodes: Vec<StateNode> = Vec::new();
        let mut edge_start = vec![0u32];
        let mut edge_list: Vec<(u32, u32)> = Vec::new();
        let mut labels = Vec::new();
        let mut joints = Vec::new();
        let mut label_index: FxHashMap<Vec<M::Move>, u32> = FxHashMap::default();
        let mut moves = JointMoves::new(m.roles().len());
        let mut next = start.clone();
        let mut out_of_time = false;
        let mut at = 0;
        while at < index.len() {
            let s = index.state(at as u32).clone();
            let depth = depth_of[at];
            at += 1;
            let mut node = StateNode { depth, terminal: false, goal: None, open: false };
            if m.is_terminal(&s) {
                node.terminal = true;
                node.goal = m.goal(&s, opts.role);
                nodes.push(node);
                edge_start.push(edge_list.len() as u32);
                continue;
            }
            // Once out of time, every state left is open (checked every 256 states).
            out_of_time = out_of_time || (at % 256 == 0 && opts.deadline.is_some_and(|d| Instant::now() >= d));
            if opts.depth.is_some_and(|d| depth >= d) || out_of_time {
                node.open = true;
                nodes.push(node);
                edge_start.push(edge_list.len() as u32);
                continue;
            }
            moves.load(m, &s).map_err(|r| HsgError::NoMoves { role: m.roles()[r].clone(), depth })?;
            while let Some(joint) = moves.next_joint() {
                m.next_state(&s, joint, &mut next);
                match index.intern(&next, opts.max_states) {
                    Some((to, new)) => {
                        if new {
                            depth_of.push(depth + 1);
                        }
                        // Look up before inserting: the joint is copied only for a new label.
                        let label = match label_index.get(joint) {
                            Some(&l) => l,
                            None => {
                                labels.push(
                                    joint
                                        .iter()
                                        .map(|&mv| canonical_move_text(&m.move_text(mv)))
                                        .collect::<Vec<_>>()
                                        .join(" | "),
                                );
                                joints.push(joint.to_vec());
                                let l = labels.len() as u32 - 1;
                                label_index.insert(joint.to_vec(), l);
                                l
                            }
                        };
                        edge_list.push((label, to));
                    }
                    None => node.open = true,
                }
            }
            if m.overflowed() {
                return Err(HsgError::Overflow);
            }
            nodes.push(node);
            edge_start.push(edge_list.len() as u32);
        }
        let states = index.into_states();
        Ok(Ssg { states, nodes, edge_start, edge_list, labels, joints })
    }

    /// The SSG quotiented by a weaker state equivalence (section VI.2): states with equal
    /// `key`s become one node, with every edge of its members (distinct (label, node) pairs),
    /// terminal when some member is, with its members' best terminal goal (so it holds a win
    /// when some member is a winning terminal state), open when some member is, at its
    /// members' least depth. Node 0 stays the start's class; the rest are numbered by first
    /// member, and each keeps its first member as its state.
    pub fn quotient<K: Hash + Eq>(&self, mut key: impl FnMut(&S) -> K) -> Ssg<S, Mv>
    where
        S: Clone,
    {
        let mut index: FxHashMap<K, u32> = FxHashMap::default();
        let mut class_of = Vec::with_capacity(self.states.len());
        let mut states = Vec::new();
        for s in &self.states {
            let next = index.len() as u32;
            let c = *index.entry(key(s)).or_insert(next);
            if c == next {
                states.push(s.clone());
            }
            class_of.push(c);
        }
        let mut nodes: Vec<StateNode> = (0..states.len())
            .map(|_| StateNode { depth: u32::MAX, terminal: false, goal: None, open: false })
            .collect();
        // (class, label, class) per edge, sorted and deduplicated: the classes' edges in order.
        let mut all: Vec<(u32, u32, u32)> = Vec::with_capacity(self.edge_list.len());
        for (s, node) in self.nodes.iter().enumerate() {
            let cs = class_of[s];
            let c = &mut nodes[cs as usize];
            c.depth = c.depth.min(node.depth);
            c.open |= node.open;
            if node.terminal {
                c.terminal = true;
                c.goal = c.goal.max(node.goal);
            }
            all.extend(self.edges(s).iter().map(|&(l, t)| (cs, l, class_of[t as usize])));
        }
        all.sort_unstable();
        all.dedup();
        let mut edge_start = vec![0u32; nodes.len() + 1];
        for &(c, _, _) in &all {
            edge_start[c as usize + 1] += 1;
        }
        for c in 0..nodes.len() {
            edge_start[c + 1] += edge_start[c];
        }
        let edge_list = all.into_iter().map(|(_, l, t)| (l, t)).collect();
        Ssg { states, nodes, edge_start, edge_list, labels: self.labels.clone(), joints: self.joints.clone() }
    }
}

impl<S, Mv> Ssg<S, Mv> {
    /// Node `s`'s edges: (label, successor) per joint move.
    pub fn edges(&self, s: usize) -> &[(u32, u32)] {
        &self.edge_list[self.edge_start[s] as usize..self.edge_start[s + 1] as usize]
    }

    /// Whether every state was expanded.
    pub fn complete(&self) -> bool {
        !self.nodes.iter().any(|n| n.open)
    }
}

/// A hyperstate's tag from the role's view (section II.D, plus `Open` for bounded graphs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tag {
    /// A leaf holding a winning terminal state.
    Win,
    /// A leaf without one: the game ends (or can go on only inside it) without a win.
    Fail,
    /// Not a leaf, and a win is reachable (◇W).
    EventuallyWinnable,
    /// Not a leaf, no win reachable, and everything reachable explored (□¬W, proven).
    ImplicitlyFailed,
    /// No win found, but part of what it reaches was not explored.
    Open,
}

impl Tag {
    pub fn winnable(self) -> bool {
        matches!(self, Tag::Win | Tag::EventuallyWinnable)
    }

    /// Fail and implicitly failed: "functionally the same" (the paper), the loss states.
    pub fn lost(self) -> bool {
        matches!(self, Tag::Fail | Tag::ImplicitlyFailed)
    }

    pub fn name(self) -> &'static str {
        match self {
            Tag::Win => "win",
            Tag::Fail => "fail",
            Tag::EventuallyWinnable => "eventually winnable",
            Tag::ImplicitlyFailed => "implicitly failed",
            Tag::Open => "open",
        }
    }
}

/// One hyperstate: a reversible closure of states (its states and critical actions are in
/// [`Hsg::states`] and [`Hsg::edges`]).
#[derive(Clone, Debug)]
pub struct Hyperstate {
    pub tag: Tag,
    /// Holds a state left unexpanded.
    pub open: bool,
    /// Holds a winning terminal state.
    pub holds_win: bool,
    /// Critical actions to the nearest fail or implicitly failed hyperstate (0 for those);
    /// `None` when none is reachable.
    pub loss_distance: Option<u32>,
    /// Critical actions to the nearest win (0 when it holds one); `None` when not winnable.
    pub win_distance: Option<u32>,
    /// Share of the critical actions leaving it that lead to a winnable hyperstate.
    pub step_headroom: Option<f64>,
    /// Longest chain of critical actions from the start hyperstate to it.
    pub layer: u32,
    /// The role's best goal in a terminal state it reaches (itself included): with `closed`,
    /// the best it can get from here (a one-player game is deterministic); otherwise a
    /// lower bound. The tags are this compared with the win threshold.
    pub best: Option<u32>,
    /// Everything it reaches was explored (no open state in its closure).
    pub closed: bool,
}

/// The hyperstate space graph of an [`Ssg`].
pub struct Hsg {
    /// Hyperstates in topological order: the start is 0, and every critical action goes from
    /// a smaller id to a larger.
    pub hyper: Vec<Hyperstate>,
    /// The hyperstate of every SSG node.
    pub of_state: Vec<u32>,
    /// SSG edges between hyperstates (critical) and inside one (reversible, self-loops too).
    pub critical: usize,
    pub reversible: usize,
    /// Hyperstate `h`'s states (sorted) are `members[member_start[h]..member_start[h + 1]]`,
    /// its critical actions likewise in `edge_list` (flat arrays: a strong graph has one
    /// hyperstate per state).
    member_start: Vec<u32>,
    members: Vec<u32>,
    edge_start: Vec<u32>,
    edge_list: Vec<(u32, u32)>,
}

/// One step of the ideal path: a hyperstate and the critical action taken from it.
#[derive(Clone, Debug, Serialize)]
pub struct PathStep {
    pub hyperstate: u32,
    pub states: usize,
    pub loss_distance: Option<u32>,
    /// Winnable share of the states it reaches (closure headroom).
    pub closure_headroom: f64,
    /// The action leaving it (`None` at the path's end).
    pub action: Option<String>,
}

impl Hsg {
    /// Builds the HSG of `ssg` with tags for the role of `opts`.
    pub fn build<S, Mv>(ssg: &Ssg<S, Mv>, opts: &HsgOptions) -> Hsg {
        let n = ssg.nodes.len();
        // Tarjan emits a component after all it reaches: reversed, a topological order, and the
        // start (which reaches everything) comes first.
        let (comp, h_count) = scc_ids_by(n, |v, i| ssg.edges(v).get(i).map(|&(_, t)| t as usize));
        let of_state: Vec<u32> = comp.iter().map(|&c| (h_count - 1) as u32 - c).collect();
        drop(comp);
        // The members, grouped by hyperstate (a counting sort keeps each group sorted).
        let mut member_start = vec![0u32; h_count + 1];
        for &h in &of_state {
            member_start[h as usize + 1] += 1;
        }
        for h in 0..h_count {
            member_start[h + 1] += member_start[h];
        }
        let mut members = vec![0u32; n];
        let mut fill = member_start.clone();
        for (s, &h) in of_state.iter().enumerate() {
            members[fill[h as usize] as usize] = s as u32;
            fill[h as usize] += 1;
        }
        drop(fill);
        let mut hyper = Vec::with_capacity(h_count);
        let mut edge_start = Vec::with_capacity(h_count + 1);
        edge_start.push(0u32);
        let mut edge_list: Vec<(u32, u32)> = Vec::new();
        // One hyperstate's critical actions, before sorting and deduplication (reused).
        let mut out: Vec<(u32, u32)> = Vec::new();
        let (mut critical, mut reversible) = (0, 0);
        for h in 0..h_count {
            let mut hs = Hyperstate {
                tag: Tag::Open,
                open: false,
                holds_win: false,
                loss_distance: None,
                win_distance: None,
                step_headroom: None,
                layer: 0,
                best: None,
                closed: true,
            };
            out.clear();
            for &s in &members[member_start[h] as usize..member_start[h + 1] as usize] {
                let node = &ssg.nodes[s as usize];
                hs.open |= node.open;
                hs.holds_win |= node.terminal && node.goal.is_some_and(|g| g >= opts.win);
                if node.terminal {
                    hs.best = hs.best.max(node.goal);
                }
                for &(label, t) in ssg.edges(s as usize) {
                    let th = of_state[t as usize];
                    if th as usize == h {
                        reversible += 1;
                    } else {
                        critical += 1;
                        out.push((label, th));
                    }
                }
            }
            out.sort_unstable();
            out.dedup();
            edge_list.extend_from_slice(&out);
            edge_start.push(edge_list.len() as u32);
            hyper.push(hs);
        }
        let edges = |h: usize| &edge_list[edge_start[h] as usize..edge_start[h + 1] as usize];
        // Successors have larger ids: tag from the last hyperstate back.
        for h in (0..h_count).rev() {
            let (tag, ld, wd, headroom, best, closed) = {
                let hs = &hyper[h];
                let out = edges(h);
                let targets = || out.iter().map(|&(_, t)| &hyper[t as usize]);
                let tag = if out.is_empty() && !hs.open {
                    if hs.holds_win {
                        Tag::Win
                    } else {
                        Tag::Fail
                    }
                } else if hs.holds_win || targets().any(|t| t.tag.winnable()) {
                    Tag::EventuallyWinnable
                } else if hs.open || targets().any(|t| t.tag == Tag::Open) {
                    Tag::Open
                } else {
                    Tag::ImplicitlyFailed
                };
                let ld =
                    if tag.lost() { Some(0) } else { targets().filter_map(|t| t.loss_distance).min().map(|d| d + 1) };
                let wd =
                    if hs.holds_win { Some(0) } else { targets().filter_map(|t| t.win_distance).min().map(|d| d + 1) };
                let headroom =
                    (!out.is_empty()).then(|| targets().filter(|t| t.tag.winnable()).count() as f64 / out.len() as f64);
                let best = targets().map(|t| t.best).fold(hs.best, Option::max);
                let closed = !hs.open && targets().all(|t| t.closed);
                (tag, ld, wd, headroom, best, closed)
            };
            let hs = &mut hyper[h];
            hs.tag = tag;
            hs.loss_distance = ld;
            hs.win_distance = wd;
            hs.step_headroom = headroom;
            hs.best = best;
            hs.closed = closed;
        }
        for h in 0..h_count {
            let layer = hyper[h].layer;
            for &(_, t) in edges(h) {
                let t = &mut hyper[t as usize];
                t.layer = t.layer.max(layer + 1);
            }
        }
        Hsg { hyper, of_state, critical, reversible, member_start, members, edge_start, edge_list }
    }

    /// Hyperstate `h`'s states (SSG node ids, sorted).
    pub fn states(&self, h: u32) -> &[u32] {
        &self.members[self.member_start[h as usize] as usize..self.member_start[h as usize + 1] as usize]
    }

    /// The critical actions leaving hyperstate `h`: (label, hyperstate), distinct, sorted.
    pub fn edges(&self, h: u32) -> &[(u32, u32)] {
        &self.edge_list[self.edge_start[h as usize] as usize..self.edge_start[h as usize + 1] as usize]
    }

    /// A leaf: no critical action, and not left open.
    pub fn is_leaf(&self, h: u32) -> bool {
        self.edges(h).is_empty() && !self.hyper[h as usize].open
    }

    /// The hyperstate of the start.
    pub fn start(&self) -> &Hyperstate {
        &self.hyper[0]
    }

    /// States in `h`'s closure a*(hs) (all it reaches, itself included), and how many of them
    /// lie in winnable hyperstates: the closure headroom is their ratio.
    pub fn closure(&self, h: u32) -> (usize, usize) {
        let mut seen = vec![false; self.hyper.len()];
        let mut stack = vec![h];
        seen[h as usize] = true;
        let (mut all, mut winnable) = (0, 0);
        while let Some(x) = stack.pop() {
            let size = self.states(x).len();
            all += size;
            if self.hyper[x as usize].tag.winnable() {
                winnable += size;
            }
            for &(_, t) in self.edges(x) {
                if !std::mem::replace(&mut seen[t as usize], true) {
                    stack.push(t);
                }
            }
        }
        (all, winnable)
    }

    /// The ideal path (section IV.B): from the start, while not at a win, the critical action
    /// to the winnable hyperstate of greatest loss distance (none reachable counts as the
    /// greatest; ties: the nearer win, then the smaller id). Empty when the start is not
    /// winnable. It ends, at a hyperstate holding a win, because the graph is acyclic.
    pub fn ideal_path(&self, labels: &[String]) -> Vec<PathStep> {
        let mut path = Vec::new();
        if !self.start().tag.winnable() {
            return path;
        }
        let mut h = 0u32;
        loop {
            let hs = &self.hyper[h as usize];
            let (all, winnable) = self.closure(h);
            let mut step = PathStep {
                hyperstate: h,
                states: self.states(h).len(),
                loss_distance: hs.loss_distance,
                closure_headroom: winnable as f64 / all as f64,
                action: None,
            };
            if hs.holds_win {
                path.push(step);
                return path;
            }
            let best =
                self.edges(h).iter().filter(|&&(_, t)| self.hyper[t as usize].tag.winnable()).max_by_key(|&&(_, t)| {
                    let th = &self.hyper[t as usize];
                    (
                        th.loss_distance.map_or(u64::MAX, u64::from),
                        std::cmp::Reverse(th.win_distance),
                        std::cmp::Reverse(t),
                    )
                });
            let &(label, t) = best.expect("a winnable hyperstate without a win has a winnable successor");
            step.action = Some(labels[label as usize].clone());
            path.push(step);
            h = t;
        }
    }
}

/// A game's figures (the table), for the role of the options.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub states: usize,
    pub terminal_states: usize,
    pub open_states: usize,
    pub complete: bool,
    pub hyperstates: usize,
    /// States per hyperstate.
    pub compression: f64,
    pub critical_actions: usize,
    pub reversible_actions: usize,
    pub win: usize,
    pub fail: usize,
    pub eventually_winnable: usize,
    pub implicitly_failed: usize,
    pub open: usize,
    /// Layers of the HSG: the longest chain of critical actions, plus one.
    pub layers: u32,
    pub start_tag: Tag,
    pub start_states: usize,
    /// Winnable share of the states the start reaches, and of its critical actions.
    pub start_closure_headroom: f64,
    pub start_step_headroom: Option<f64>,
    pub start_loss_distance: Option<u32>,
    /// The ideal path and the loss distances along it.
    pub ideal_path: Vec<PathStep>,
}

impl Summary {
    pub fn new<S, Mv>(ssg: &Ssg<S, Mv>, hsg: &Hsg) -> Summary {
        let count = |tag: Tag| hsg.hyper.iter().filter(|h| h.tag == tag).count();
        let (all, winnable) = hsg.closure(0);
        let start = hsg.start();
        Summary {
            states: ssg.nodes.len(),
            terminal_states: ssg.nodes.iter().filter(|n| n.terminal).count(),
            open_states: ssg.nodes.iter().filter(|n| n.open).count(),
            complete: ssg.complete(),
            hyperstates: hsg.hyper.len(),
            compression: ssg.nodes.len() as f64 / hsg.hyper.len() as f64,
            critical_actions: hsg.critical,
            reversible_actions: hsg.reversible,
            win: count(Tag::Win),
            fail: count(Tag::Fail),
            eventually_winnable: count(Tag::EventuallyWinnable),
            implicitly_failed: count(Tag::ImplicitlyFailed),
            open: count(Tag::Open),
            layers: hsg.hyper.iter().map(|h| h.layer + 1).max().unwrap_or(0),
            start_tag: start.tag,
            start_states: hsg.states(0).len(),
            start_closure_headroom: winnable as f64 / all as f64,
            start_step_headroom: start.step_headroom,
            start_loss_distance: start.loss_distance,
            ideal_path: hsg.ideal_path(&ssg.labels),
        }
    }
}

/// Weak state equivalence on propnet states (section VI.2): two states are equivalent when
/// they agree on every base but the ignored ones.
pub struct BaseMask {
    keep: Vec<u64>,
}

impl BaseMask {
    /// A mask for states of `words` 64-bit words that ignores the bases `ignored`.
    pub fn new(words: usize, ignored: &[u32]) -> BaseMask {
        let mut keep = vec![u64::MAX; words];
        for &b in ignored {
            keep[b as usize / 64] &= !(1u64 << (b % 64));
        }
        BaseMask { keep }
    }

    /// The state's bits outside the ignored bases.
    pub fn project(&self, s: &crate::propnet::PnState) -> Vec<u64> {
        s.bits.iter().zip(&self.keep).map(|(a, k)| a & k).collect()
    }

    /// The weak equivalence's mask for `net`'s states of `words` words: it ignores
    /// [`timer_bases`], returned too.
    pub fn weak(net: &crate::propnet::Net, words: usize) -> (BaseMask, Vec<u32>) {
        let ignored = timer_bases(net, &crate::factor::analyse(net));
        (BaseMask::new(words, &ignored), ignored)
    }

    /// A hash of [`BaseMask::project`], without making the projection: equal for states
    /// equal outside the ignored bases.
    pub fn key(&self, s: &crate::propnet::PnState) -> u64 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::default();
        for (a, k) in s.bits.iter().zip(&self.keep) {
            h.write_u64(a & k);
        }
        h.finish()
    }
}

/// The bases weak equivalence leaves out: the action-independent ones (factor analysis, Cox
/// et al. Lemma 3.12: a fixed function of time, like a step counter) that no legality reads,
/// and the ones nothing reads. Action-independent bases that legality reads (whose turn it is)
/// stay: merging positions with different players to move would let a role move twice.
pub fn timer_bases(net: &crate::propnet::Net, a: &crate::factor::Analysis) -> Vec<u32> {
    use crate::propnet::build::Kind;
    let mut read = vec![false; net.bases.len()];
    let mut seen = vec![false; net.nodes.len()];
    let mut stack: Vec<usize> = net.legal.iter().map(|r| r.node()).collect();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        if let Kind::Base(b) = net.nodes[n].kind {
            read[b as usize] = true;
        }
        stack.extend(net.nodes[n].inputs.iter().map(|r| r.node()));
    }
    let mut out: Vec<u32> =
        a.iid.iter().copied().filter(|&b| !read[b as usize]).chain(a.junk.iter().copied()).collect();
    out.sort_unstable();
    out.dedup();
    out
}
