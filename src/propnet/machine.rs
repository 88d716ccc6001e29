//! The propnet state machine: change-driven, levelized propagation over compact arrays.
//!
//! Every node is a threshold gate: it holds a count, `offset + Σ ±value(input)` (a negated
//! input counts `-1` and adds one to the offset), and is true when the count is positive.
//! An AND of `n` inputs has offset `1 - n`, an OR offset 0; bases and inputs are set from
//! outside. When a node flips, its outgoing edges adjust their targets' counts and put the
//! targets in the bucket of their *level* (one more than the deepest input). Buckets are
//! emptied in level order, so a node is looked at once per wave, after all its inputs have
//! settled: transient flips (a gate that would go false and back while a joint move is half
//! set) never happen. No recursion, and no allocation after construction: a node is queued
//! at most once per wave, so each level's bucket is a fixed segment of one array, as long as
//! the level has nodes.
//!
//! Recursive GDL relations make cycles of positive edges, where counting alone would keep an
//! unsupported cycle true. Each cycle (a strongly connected component) is one unit at its
//! level: when anything feeding it changes, its members are all set false and those still
//! supported from outside are re-derived, which gives the least fixpoint GDL asks for; only
//! the members whose value changed are passed on.

use super::build::{Kind, Net, Ref};
use super::select::{one_hot_groups, selected_edges, sparse_edges, Profile};
use crate::gdl::SymbolTable;
use crate::graph::sccs;
use crate::interp::{TermId, TermStore};
use crate::machine::{Goal, PlayoutBuffers, PlayoutPolicy, PlayoutResult, StateMachine};
use rand::Rng;
use std::sync::Arc;
use std::time::Instant;

const NONE: u32 = u32::MAX;
/// Marks a family of selected edges in the edge lists under construction (`Compiled::compile`).
const FAMILY: u32 = 1 << 31;

/// Roles with at most this many possible moves find their legal moves by scanning.
const SCAN_MAX: usize = 48;

/// A random playout's move of a role that scans draws this many times among the role's
/// possible moves for a legal one before it scans them all.
const DRAWS: usize = 4;

/// The profile that chooses selected edges samples at most this many steps, and about
/// `PROFILE_WORK` node readings in all; a network too large for `PROFILE_MIN_STEPS` steps
/// within that is not profiled (nor given selected edges). The sample is a fixed number of
/// steps from a fixed seed, so a game always compiles to the same machine.
const PROFILE_MAX_STEPS: usize = 2000;
const PROFILE_MIN_STEPS: usize = 100;
const PROFILE_WORK: usize = 100_000_000;

/// The immutable part of a propnet machine, shared by its clones.
#[derive(Debug)]
pub struct Compiled {
    roles: Vec<String>,
    offset: Vec<i32>,
    /// Per node: where its edges lie in `out` ([`Span`]).
    span: Vec<Span>,
    /// Edges, per node in three runs ([`Span`]): plain edges as `target << 1 | target has
    /// hooks` (what a bucket holds), first those that count the node's value, then those
    /// that count its negation; then the special edges, as `target << 3 | target has hooks
    /// << 2 | negated << 1 | 1` for a target in a cycle and `(nodes + family) << 3 | 1` for a
    /// family of selected edges.
    out: Vec<u32>,
    /// Selected edges (see [`super::select`]), in families (one edge in `out` each): per
    /// family, a group and, per member of the group, the edges (encoded as in `out`) counted
    /// while that member holds, at `fam_edge_start[fam_pos[f] + member]..[.. + 1]`.
    fam_group: Vec<u32>,
    fam_pos: Vec<u32>,
    fam_edge_start: Vec<u32>,
    fam_edges: Vec<u32>,
    /// Per node: the groups it is a member of and its position in each (CSR); per selector
    /// node, the selected edges it gates (`y` node, edge encoded as in `out`).
    member_start: Vec<u32>,
    member: Vec<(u32, u32)>,
    group_len: Vec<u32>,
    sel_start: Vec<u32>,
    sel: Vec<(u32, u32)>,
    /// Per node: its cycle, or NONE.
    cycle: Vec<u32>,
    /// Per node: its level (0 for bases, inputs and the constant).
    level: Vec<u32>,
    levels: usize,
    /// Per level, where its bucket starts in the machine's `bucket` (the number of nodes of
    /// lower levels); `levels + 1` entries.
    level_start: Vec<u32>,
    cycles: Vec<Vec<u32>>,
    /// Per node: the legal ids whose value it gives, as `id << 1 | negated`.
    hook_start: Vec<u32>,
    hooks: Vec<u32>,
    base_ref: Vec<Ref>,
    /// The bits of bases whose next value is constantly true, and (base, ref) of the others
    /// whose next value is not constantly false.
    next_const: Vec<u64>,
    next_live: Vec<(u32, Ref)>,
    /// Per role: the legal ids and refs of its possible moves, and of those whose ref does
    /// not need the role's guard (all a scan reads while the guard is false).
    role_legal: Vec<Vec<(u32, Ref)>>,
    role_unguarded: Vec<Vec<(u32, Ref)>>,
    scanned: Vec<bool>,
    /// Per role: the literal taken out of its guarded legal ANDs (see [`legal_guards`]).
    guard: Vec<Option<Ref>>,
    /// Per legal id: whether its ref computes legality only together with its role's guard.
    guarded: Vec<bool>,
    /// Gates read only on the way to goals, in level order: they take no part in
    /// propagation and are evaluated when a goal is asked for, from `lazy_prog`: per gate in
    /// that order, `node << 1 | is an AND`, its number of inputs, and its inputs (as refs).
    lazy: Vec<u32>,
    lazy_prog: Vec<u32>,
    init: Vec<u64>,
    /// A move to a state that differs from the current one in at least this many bases is a
    /// *far jump*: restoring a snapshot is cheaper than propagating the difference (see
    /// [`Snapshot`]).
    far_bits: u32,
    /// Per legal id: its input node, or a constant if nothing reads it (never set).
    input_ref: Vec<Ref>,
    legal: Vec<Ref>,
    /// Per legal id: its role and move term.
    moves: Vec<(usize, TermId)>,
    goals: Vec<Vec<(Ref, Option<u32>)>>,
    terminal: Ref,
    bases: Vec<TermId>,
    terms: TermStore,
    symbols: SymbolTable,
    words: usize,
}

/// Where a node's edges lie in [`Compiled::out`]: `start..neg` count its value, `neg..special`
/// its negation (a plain edge is one into a gate outside every cycle), and `special..end`
/// are edges into cycles and families of selected edges. A change of the node thus counts
/// each plain edge one way known before the loop (up or down), with no test of the edge's
/// kind or sign per edge.
#[derive(Copy, Clone, Debug)]
struct Span {
    start: u32,
    neg: u32,
    special: u32,
    end: u32,
}

impl Span {
    fn len(&self) -> usize {
        (self.end - self.start) as usize
    }
}

/// A propnet state: one bit per base proposition.
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub struct PnState {
    pub bits: Vec<u64>,
}

impl Clone for PnState {
    fn clone(&self) -> PnState {
        PnState { bits: self.bits.clone() }
    }

    /// Reuses the allocation (playouts reset their state this way).
    fn clone_from(&mut self, source: &PnState) {
        self.bits.clone_from(&source.bits);
    }
}

impl PnState {
    #[inline]
    pub fn get(&self, b: usize) -> bool {
        self.bits[b / 64] >> (b % 64) & 1 == 1
    }
}

/// A propnet engine. Clone one per thread: clones share the network and copy only the
/// per-node counts.
#[derive(Clone, Debug)]
pub struct PropnetMachine {
    c: Arc<Compiled>,
    /// Per node: its count, value, level, and whether it is queued.
    slot: Vec<Slot>,
    /// Per level: the nodes queued (`node << 1 | has hooks`), in the level's segment
    /// `Compiled::level_start[l]..bucket_top[l]` of `bucket`, and the cycles queued.
    bucket: Vec<u32>,
    bucket_top: Vec<u32>,
    cycle_buckets: Vec<Vec<u32>>,
    cycle_queued: Vec<bool>,
    /// Per cycle: a member that was true lost support, so the cycle must be recomputed
    /// from scratch (otherwise only newly supported members are added).
    cycle_reset: Vec<bool>,
    /// Bit `l` set: level `l` has something queued.
    queued: Vec<u64>,
    /// Scratch for cycle recomputation: members' values before.
    old: Vec<bool>,
    work: Vec<u32>,
    cur: Vec<u64>,
    /// The next value of every base whose next value is not constant, kept up to date by
    /// hooks (valid once the joint move's inputs are set).
    next_bits: Vec<u64>,
    joint: Vec<u32>,
    /// Per role and guardedness (`2 * role + guarded`), the legal ids whose ref is currently
    /// true (unordered), and each id's slot in its set.
    legal_set: Vec<Vec<u32>>,
    legal_pos: Vec<u32>,
    /// Whether the lazy gates hold their values for the current bases and inputs.
    lazy_fresh: bool,
    /// Per group: the positions of its members that hold (one, in a reachable state).
    group_on: Vec<Vec<u32>>,
    /// The batch machine of the same network, where one was attached
    /// ([`PropnetMachine::attach_batch`]): [`StateMachine::batch_playouts`] runs on it.
    batch: Option<Box<super::batch::BatchMachine>>,
    /// Goal latches that end playouts early ([`PropnetMachine::set_goal_latches`]).
    settle: Arc<Settle>,
    /// The network settled on one state, and the candidate for the next (see [`Snapshot`]).
    snap: Box<Snapshot>,
}

/// A copy of the network settled on one state, for *far jumps*: callers that return again
/// and again to one state from far away (depth charges from one start, as `bench` runs them)
/// would otherwise undo a whole playout's changes by propagation, which costs as much as
/// several steps. A far jump ([`Compiled::far_bits`]) to the state of the snapshot copies the
/// snapshot back instead. The snapshot is taken when the target of a far jump is the target
/// of the previous far jump too (`candidate`), so it follows whatever state the caller keeps
/// coming back to; nothing is copied on jumps that are not far. MCTS's far jumps go to a
/// different tree node each time: it anchors its root ([`StateMachine::anchor`]), and a far
/// jump to a state at most half as far from the snapshot as from the current state restores
/// the snapshot and propagates the difference. Everything the network's settled values
/// determine is copied: slots, the next-state bits, the legal sets, the groups' members that
/// hold, and the inputs set (a settled network has no queued node, dirty flag or pending
/// cycle, so those need nothing). The copy costs one more of each per machine (a thread's).
#[derive(Clone, Debug, Default)]
struct Snapshot {
    /// The state of the snapshot (empty: none taken).
    bits: Vec<u64>,
    slot: Vec<Slot>,
    next_bits: Vec<u64>,
    joint: Vec<u32>,
    legal_set: Vec<Vec<u32>>,
    legal_pos: Vec<u32>,
    group_on: Vec<Vec<u32>>,
    /// The target of the last far jump.
    candidate: Vec<u64>,
    /// How many far jumps the snapshot served.
    restores: u64,
}

/// Goal latches as the playouts read them: per latch, its base's word and bit, the value it
/// keeps, and the roles whose goals it decides (a bit per role); `all`: every role's bit.
#[derive(Debug, Default)]
struct Settle {
    latches: Vec<(u32, u64, bool, u64)>,
    all: u64,
}

impl Compiled {
    /// Cycles of the network (from recursive relations over the state).
    pub fn cycle_count(&self) -> usize {
        self.cycles.len()
    }

    /// Nodes of the network.
    pub fn node_count(&self) -> usize {
        self.offset.len()
    }

    pub fn new(net: &Net, terms: TermStore, symbols: SymbolTable) -> Compiled {
        Compiled::with_scan_max(net, terms, symbols, SCAN_MAX)
    }

    /// Gates only goals read, evaluated on demand (see [`goal_only`]).
    pub fn lazy_count(&self) -> usize {
        self.lazy.len()
    }

    /// Selected edges (see [`super::select`]): how many, in how many families, over how many
    /// groups of bases.
    pub fn selected_counts(&self) -> (usize, usize, usize) {
        (self.fam_edges.len(), self.fam_group.len(), self.group_len.len())
    }

    /// The ref that gives legal id `id`'s legality (with its role's guard if guarded).
    pub fn legal_ref(&self, id: usize) -> Ref {
        self.legal[id]
    }

    /// Legal ids whose AND dropped their role's guard (see [`legal_guards`]).
    pub fn guarded_count(&self) -> usize {
        self.guarded.iter().filter(|&&g| g).count()
    }

    /// As [`Compiled::new`], with roles of more than `scan_max` possible moves keeping their
    /// legal sets through hooks (tests use 0 to put every role on hooks).
    ///
    /// Edges are selected (see [`super::select`]) by a profile of random playouts on the
    /// network compiled without them; a network too large to profile quickly has none.
    pub fn with_scan_max(net: &Net, terms: TermStore, symbols: SymbolTable, scan_max: usize) -> Compiled {
        Compiled::selected(net, terms, symbols, scan_max, None)
    }

    /// As [`Compiled::new`], profiling (and compiling a second time) only if that is likely
    /// to be over by `deadline`: a player's start clock covers the whole build.
    pub fn with_deadline(net: &Net, terms: TermStore, symbols: SymbolTable, deadline: Option<Instant>) -> Compiled {
        Compiled::selected(net, terms, symbols, SCAN_MAX, deadline)
    }

    fn selected(
        net: &Net,
        terms: TermStore,
        symbols: SymbolTable,
        scan_max: usize,
        deadline: Option<Instant>,
    ) -> Compiled {
        let t0 = Instant::now();
        let first = Compiled::compile(net, terms, symbols, scan_max, None);
        let steps = PROFILE_WORK / net.nodes.len().max(1);
        // The profile and the second compile take about as long as the first compile or two.
        let late = deadline.is_some_and(|d| Instant::now() + 4 * t0.elapsed() > d);
        if steps < PROFILE_MIN_STEPS || late {
            return first;
        }
        let mut m = PropnetMachine::new(first);
        let profile = m.profile(steps.min(PROFILE_MAX_STEPS), 0x5e1ec7);
        let Compiled { terms, symbols, .. } = Arc::try_unwrap(m.c).expect("the only machine");
        Compiled::compile(net, terms, symbols, scan_max, Some(&profile))
    }

    /// As [`Compiled::new`], with the edges selected by a given profile.
    #[cfg(test)]
    pub(crate) fn with_profile(net: &Net, terms: TermStore, symbols: SymbolTable, profile: &Profile) -> Compiled {
        Compiled::compile(net, terms, symbols, SCAN_MAX, Some(profile))
    }

    /// As [`Compiled::new`], with no selected edges (tests compare the two).
    pub fn without_selection(net: &Net, terms: TermStore, symbols: SymbolTable) -> Compiled {
        Compiled::compile(net, terms, symbols, SCAN_MAX, None)
    }

    fn compile(
        net: &Net,
        terms: TermStore,
        symbols: SymbolTable,
        scan_max: usize,
        profile: Option<&Profile>,
    ) -> Compiled {
        let n = net.nodes.len();
        let (guard, guarded) = legal_guards(net);
        // A guarded legal AND drops its role's guard from its inputs.
        let mut guarded_node = vec![NONE; n];
        for (id, &r) in net.legal.iter().enumerate() {
            if guarded[id] {
                guarded_node[r.node()] = net.inputs[id].0 as u32;
            }
        }
        let inputs = |i: usize| -> Vec<Ref> {
            let drop = if guarded_node[i] != NONE { guard[guarded_node[i] as usize] } else { None };
            net.nodes[i].inputs.iter().copied().filter(|&r| Some(r) != drop).collect()
        };
        let mut node_inputs: Vec<Vec<Ref>> = (0..n).map(inputs).collect();
        let lazy_gate = goal_only(net, &node_inputs, &guard);
        // A guarded AND left with one input is that input: the legal id reads it directly,
        // and the AND (read by nothing else) leaves the network. In nine-board tic-tac-toe a
        // cell's "empty and on the current board" then flips one node, not three.
        let mut legal = net.legal.clone();
        for (id, r) in legal.iter_mut().enumerate() {
            let i = r.node();
            if guarded[id] && node_inputs[i].len() == 1 {
                *r = node_inputs[i][0];
                node_inputs[i].clear();
            }
        }
        let mut offset = vec![0i32; n];
        let mut outs: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, node) in net.nodes.iter().enumerate() {
            let ins = &node_inputs[i];
            if lazy_gate[i] {
                continue;
            }
            let negs = ins.iter().filter(|r| r.neg()).count() as i32;
            offset[i] = match node.kind {
                Kind::And => 1 - ins.len() as i32 + negs,
                Kind::Or => negs,
                _ => 0,
            };
            for r in ins {
                outs[r.node()].push((i as u32) << 1 | r.neg() as u32);
            }
        }
        let succ: Vec<Vec<usize>> = node_inputs.iter().map(|ins| ins.iter().map(|r| r.node()).collect()).collect();
        let mut cycle = vec![NONE; n];
        let mut cycles = Vec::new();
        for comp in sccs(n, &succ) {
            if comp.len() > 1 || succ[comp[0]].contains(&comp[0]) {
                for &m in &comp {
                    cycle[m] = cycles.len() as u32;
                }
                cycles.push(comp.iter().map(|&m| m as u32).collect());
            }
        }
        // Levels: one more than the deepest input, a cycle's members sharing one level.
        let mut level = vec![0u32; n];
        for comp in sccs(n, &succ) {
            let l = comp
                .iter()
                .flat_map(|&m| succ[m].iter())
                .filter(|&&d| cycle[d] == NONE || cycle[d] != cycle[comp[0]])
                .map(|&d| level[d] + 1)
                .max()
                .unwrap_or(0);
            for &m in &comp {
                level[m] = l;
            }
        }
        let levels = level.iter().max().map_or(1, |&l| l as usize + 1);
        let mut level_start = vec![0u32; levels + 1];
        for &l in &level {
            level_start[l as usize + 1] += 1;
        }
        for l in 0..levels {
            level_start[l + 1] += level_start[l];
        }
        assert!(levels <= LEVEL as usize, "a level must fit in a slot's bits");
        drop(succ);
        // Selected edges leave the plain fan-out, and a negated one leaves the offset too: it
        // counts only while its selector holds (all bases start false).
        let (mut groups, mut selected) = (Vec::new(), Vec::new());
        if let Some(p) = profile {
            let live = |g: usize| !lazy_gate[g] && cycle[g] == NONE;
            groups = one_hot_groups(net);
            selected = selected_edges(net, &node_inputs, &live, &groups, p);
            let taken = selected.iter().map(|e| (e.y, e.g)).collect();
            let (more, edges) = sparse_edges(net, &node_inputs, &live, p, &taken, groups.len() as u32);
            groups.extend(more);
            selected.extend(edges);
        }
        for e in &selected {
            let enc = e.g << 1 | e.neg as u32;
            let o = &mut outs[e.y as usize];
            let k = o.iter().position(|&x| x == enc).expect("a selected edge is an edge");
            o.swap_remove(k);
            offset[e.g as usize] -= e.neg as i32;
        }
        let mut lazy: Vec<u32> = (0..n as u32).filter(|&i| lazy_gate[i as usize]).collect();
        lazy.sort_by_key(|&i| level[i as usize]);
        let mut lazy_prog = Vec::new();
        for &i in &lazy {
            let ins = &node_inputs[i as usize];
            lazy_prog.extend([i << 1 | (net.nodes[i as usize].kind == Kind::And) as u32, ins.len() as u32]);
            lazy_prog.extend(ins.iter().map(|r| r.0));
        }
        drop(node_inputs);
        // Roles with few possible moves scan their legal refs when asked; the others keep their
        // legal set up to date through hooks on the nodes that compute legality.
        let mut role_legal: Vec<Vec<(u32, Ref)>> = vec![Vec::new(); net.roles.len()];
        for (id, (&(role, _), &r)) in net.inputs.iter().zip(&legal).enumerate() {
            if r != Ref::FALSE {
                role_legal[role].push((id as u32, r));
            }
        }
        let scanned: Vec<bool> = role_legal.iter().map(|l| l.len() <= scan_max).collect();
        let role_unguarded: Vec<Vec<(u32, Ref)>> =
            role_legal.iter().map(|l| l.iter().copied().filter(|&(id, _)| !guarded[id as usize]).collect()).collect();
        // Hooks: `id << 2 | kind << 1 | negated`, kind 0 a legal id, 1 a base whose next
        // value the node gives.
        let mut hook_lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (id, r) in legal.iter().enumerate() {
            if !r.is_const() && !scanned[net.inputs[id].0] {
                hook_lists[r.node()].push((id as u32) << 2 | r.neg() as u32);
            }
        }
        for (b, r) in net.next.iter().enumerate() {
            if !r.is_const() {
                hook_lists[r.node()].push((b as u32) << 2 | 2 | r.neg() as u32);
            }
        }
        let mut hook_start = Vec::with_capacity(n + 1);
        let mut hooks = Vec::new();
        for h in &hook_lists {
            hook_start.push(hooks.len() as u32);
            hooks.extend_from_slice(h);
        }
        hook_start.push(hooks.len() as u32);
        let encode = |t: u32, neg: bool| {
            t << 3 | ((hook_start[t as usize] != hook_start[t as usize + 1]) as u32) << 2 | (neg as u32) << 1
        };
        // Per node: the groups it is a member of, and its position in each (CSR).
        let mut member_lists: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (gi, g) in groups.iter().enumerate() {
            for (p, &m) in g.iter().enumerate() {
                member_lists[m as usize].push((gi as u32, p as u32));
            }
        }
        let mut member_start = Vec::with_capacity(n + 1);
        let mut member = Vec::new();
        for l in &member_lists {
            member_start.push(member.len() as u32);
            member.extend_from_slice(l);
        }
        member_start.push(member.len() as u32);
        drop(member_lists);
        // Families: per (y, group), the edges of each member (CSR). Each family is one more
        // edge out of y, marked like an edge into a cycle, to the family's number past the
        // last node; nodes without families pay nothing for them.
        let mut fam_of: rustc_hash::FxHashMap<(u32, u32), usize> = Default::default();
        let mut fam_lists: Vec<(u32, Vec<Vec<u32>>)> = Vec::new();
        let mut sel_lists: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for e in &selected {
            let f = *fam_of.entry((e.y, e.group)).or_insert_with(|| {
                fam_lists.push((e.group, vec![Vec::new(); groups[e.group as usize].len()]));
                outs[e.y as usize].push(FAMILY | (n + fam_lists.len() - 1) as u32);
                fam_lists.len() - 1
            });
            fam_lists[f].1[e.pos as usize].push(encode(e.g, e.neg));
            let s = groups[e.group as usize][e.pos as usize];
            sel_lists[s as usize].push((e.y, encode(e.g, e.neg)));
        }
        drop(fam_of);
        let (mut fam_group, mut fam_pos, mut fam_edge_start, mut fam_edges) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (group, per_member) in &fam_lists {
            fam_group.push(*group);
            fam_pos.push(fam_edge_start.len() as u32);
            for es in per_member {
                fam_edge_start.push(fam_edges.len() as u32);
                fam_edges.extend_from_slice(es);
            }
        }
        fam_edge_start.push(fam_edges.len() as u32);
        drop(fam_lists);
        assert!(n + fam_group.len() < 1 << 29, "node and family numbers must fit in an edge");
        let mut sel_start = Vec::with_capacity(n + 1);
        let mut sel = Vec::new();
        for l in &sel_lists {
            sel_start.push(sel.len() as u32);
            sel.extend_from_slice(l);
        }
        sel_start.push(sel.len() as u32);
        drop(sel_lists);
        let mut span = Vec::with_capacity(n);
        let mut out = Vec::new();
        for o in &outs {
            let plain = |e: u32| e & FAMILY == 0 && cycle[(e >> 1) as usize] == NONE;
            let hooked = |t: usize| (hook_start[t] != hook_start[t + 1]) as u32;
            let start = out.len() as u32;
            for neg in [0, 1] {
                out.extend(
                    o.iter().filter(|&&e| plain(e) && e & 1 == neg).map(|&e| e & !1 | hooked((e >> 1) as usize)),
                );
            }
            let neg = start + o.iter().filter(|&&e| plain(e) && e & 1 == 0).count() as u32;
            let special = out.len() as u32;
            out.extend(o.iter().filter(|&&e| !plain(e)).map(|&e| {
                if e & FAMILY != 0 {
                    return (e & !FAMILY) << 3 | 1;
                }
                let t = (e >> 1) as usize;
                (t as u32) << 3 | hooked(t) << 2 | (e & 1) << 1 | 1
            }));
            span.push(Span { start, neg, special, end: out.len() as u32 });
        }
        drop(outs);
        let words = net.bases.len().div_ceil(64).max(1);
        let mut init = vec![0u64; words];
        for (b, &v) in net.init.iter().enumerate() {
            if v {
                init[b / 64] |= 1 << (b % 64);
            }
        }
        let mut next_const = vec![0u64; words];
        let mut next_live = Vec::new();
        for (b, &r) in net.next.iter().enumerate() {
            if r == Ref::TRUE {
                next_const[b / 64] |= 1 << (b % 64);
            } else if r != Ref::FALSE {
                next_live.push((b as u32, r));
            }
        }
        // An input nothing reads (a noop, usually) is never set.
        let read = |i: usize| span[i].len() != 0 || hook_start[i] != hook_start[i + 1];
        let far_bits = far_bits(&net.base_ref, &span, &hook_start);
        let input_ref = net.input_ref.iter().map(|&r| if read(r.node()) { r } else { Ref::FALSE }).collect();
        Compiled {
            lazy,
            lazy_prog,
            next_const,
            next_live,
            role_legal,
            role_unguarded,
            scanned,
            guard,
            guarded,
            roles: net.roles.clone(),
            offset,
            span,
            out,
            fam_group,
            fam_pos,
            fam_edge_start,
            fam_edges,
            member_start,
            member,
            group_len: groups.iter().map(|g| g.len() as u32).collect(),
            sel_start,
            sel,
            cycle,
            level,
            levels,
            level_start,
            cycles,
            hook_start,
            hooks,
            base_ref: net.base_ref.clone(),
            init,
            far_bits,
            input_ref,
            legal,
            moves: net.inputs.clone(),
            goals: net.goals.clone(),
            terminal: net.terminal,
            bases: net.bases.clone(),
            terms,
            symbols,
            words,
        }
    }
}

/// How many changed bases make a far jump ([`Compiled::far_bits`]). Restoring a snapshot
/// copies every node's slot (8 bytes, a few per cycle), while each changed base passes its
/// change along its edges (each an update of a count, a test and often a queued node, tens of
/// cycles) and on through the gates it flips; so a jump is far once the changed bases'
/// edges, at the bases' mean fan-out, reach one sixteenth of the nodes.
fn far_bits(base_ref: &[Ref], span: &[Span], hook_start: &[u32]) -> u32 {
    let nodes = span.len();
    let (mut live, mut edges) = (0usize, 0usize);
    for b in base_ref.iter().filter(|r| !r.is_const()).map(|r| r.node()) {
        live += 1;
        edges += span[b].len() + (hook_start[b + 1] - hook_start[b]) as usize;
    }
    let mean = (edges as f64 / live.max(1) as f64).max(1.0);
    ((nodes as f64 / (16.0 * mean)).ceil() as u32).max(2)
}

/// How many bits two states (of one network) differ in.
fn bits_apart(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Gates that only goals read, directly or through other such gates (in reversi, the disc
/// counts): nothing but a goal query needs their values, so they are left out of
/// propagation and evaluated on demand. Gates in cycles stay in propagation.
fn goal_only(net: &Net, node_inputs: &[Vec<Ref>], guard: &[Option<Ref>]) -> Vec<bool> {
    let n = net.nodes.len();
    let mut live = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let roots = net.next.iter().chain(&net.legal).chain([&net.terminal]).chain(guard.iter().flatten());
    for r in roots {
        stack.push(r.node());
    }
    while let Some(i) = stack.pop() {
        if !std::mem::replace(&mut live[i], true) {
            stack.extend(node_inputs[i].iter().map(|r| r.node()));
        }
    }
    // Cycles must be settled by propagation: a gate reading itself (through other gates)
    // keeps everything it reads live.
    let succ: Vec<Vec<usize>> = node_inputs.iter().map(|ins| ins.iter().map(|r| r.node()).collect()).collect();
    for comp in sccs(n, &succ) {
        if comp.len() > 1 || succ[comp[0]].contains(&comp[0]) {
            stack.extend(comp.iter().copied().filter(|&m| !live[m]));
        }
    }
    while let Some(i) = stack.pop() {
        if !std::mem::replace(&mut live[i], true) {
            stack.extend(node_inputs[i].iter().map(|r| r.node()));
        }
    }
    (0..n).map(|i| !live[i] && matches!(net.nodes[i].kind, Kind::And | Kind::Or)).collect()
}

/// Legal guards. In most turn-taking games every move of a role is legal only while some
/// literal holds, such as `(true (control white))`, and that literal flips every turn: as an
/// input of each of the role's legal ANDs it would reach all of them at every step. For each
/// role, the literal found in the most of its legal ANDs (at least two) becomes the role's
/// guard: those ANDs, where nothing else reads them, drop it from their inputs, and a query
/// for the role's legal moves reads the guard once. Returns the guard per role and, per
/// legal id, whether its AND dropped the guard.
pub(crate) fn legal_guards(net: &Net) -> (Vec<Option<Ref>>, Vec<bool>) {
    let mut readers = vec![0u32; net.nodes.len()];
    for node in &net.nodes {
        for r in &node.inputs {
            readers[r.node()] += 1;
        }
    }
    let outputs = net.next.iter().chain(&net.legal).chain([&net.terminal]);
    for r in outputs.chain(net.goals.iter().flatten().map(|(r, _)| r)) {
        readers[r.node()] += 1;
    }
    let candidate = |r: Ref| {
        !r.is_const()
            && !r.neg()
            && matches!(net.nodes[r.node()].kind, Kind::And)
            && readers[r.node()] == 1
            && net.nodes[r.node()].inputs.len() >= 2
    };
    let mut guard = vec![None; net.roles.len()];
    let mut guarded = vec![false; net.legal.len()];
    let mut freq: std::collections::BTreeMap<Ref, usize> = Default::default();
    for (role, g) in guard.iter_mut().enumerate() {
        freq.clear();
        let ids = || (0..net.legal.len()).filter(move |&id| net.inputs[id].0 == role && candidate(net.legal[id]));
        for id in ids() {
            for &r in &net.nodes[net.legal[id].node()].inputs {
                *freq.entry(r).or_default() += 1;
            }
        }
        // The most frequent literal; ties go to the smallest ref, so builds are repeatable.
        let Some((&best, &count)) = freq.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))) else { continue };
        if count < 2 {
            continue;
        }
        *g = Some(best);
        for id in ids() {
            if net.nodes[net.legal[id].node()].inputs.contains(&best) {
                guarded[id] = true;
            }
        }
    }
    (guard, guarded)
}

/// A node's state, kept together so that an edge touches one cache line.
#[derive(Copy, Clone, Debug)]
struct Slot {
    count: i32,
    /// `level | SELECTOR | VAL | DIRTY`.
    bits: u32,
}

/// Queued in its level's bucket this wave.
const DIRTY: u32 = 1 << 31;
/// The node's value.
const VAL: u32 = 1 << 30;
/// The node gates selected edges (a member of a group).
const SELECTOR: u32 = 1 << 29;
const LEVEL: u32 = SELECTOR - 1;

impl PropnetMachine {
    /// Attaches the batch machine of `net`, which must be the network this machine was
    /// compiled from (same bases, same move ids), for [`StateMachine::batch_playouts`].
    pub fn attach_batch(&mut self, net: &Net) {
        self.batch = Some(Box::new(super::batch::BatchMachine::new(net)));
    }

    pub fn new(c: Compiled) -> PropnetMachine {
        let c = Arc::new(c);
        let n = c.offset.len();
        let slot = (0..n)
            .map(|i| {
                // Members that gate no edge need not be tracked: no family looks them up.
                let selector = if c.sel_start[i] != c.sel_start[i + 1] { SELECTOR } else { 0 };
                Slot { count: c.offset[i], bits: c.level[i] | selector }
            })
            .collect();
        let mut m = PropnetMachine {
            slot,
            bucket: vec![0; n],
            bucket_top: c.level_start[..c.levels].to_vec(),
            cycle_buckets: vec![Vec::new(); c.levels],
            cycle_queued: vec![false; c.cycles.len()],
            cycle_reset: vec![false; c.cycles.len()],
            queued: vec![0; c.levels.div_ceil(64)],
            old: Vec::new(),
            work: Vec::new(),
            cur: vec![0; c.words],
            next_bits: vec![0; c.words],
            joint: Vec::new(),
            legal_set: vec![Vec::new(); 2 * c.roles.len()],
            legal_pos: vec![NONE; c.legal.len()],
            lazy_fresh: false,
            // Room for every member: playouts never grow them.
            group_on: c.group_len.iter().map(|&k| Vec::with_capacity(k as usize)).collect(),
            batch: None,
            settle: Arc::default(),
            snap: Box::default(),
            c,
        };
        // All bases and inputs false, every value false: queue every gate and cycle once.
        let lazy: Vec<bool> = {
            let mut v = vec![false; n];
            m.c.lazy.iter().for_each(|&i| v[i as usize] = true);
            v
        };
        for i in 0..n {
            if lazy[i] {
                continue;
            }
            if m.c.cycle[i] == NONE {
                let hooked = m.c.hook_start[i] != m.c.hook_start[i + 1];
                m.queue(i, hooked);
            } else {
                m.queue_cycle(i);
            }
        }
        m.propagate();
        for k in 0..m.c.next_live.len() {
            let (b, r) = m.c.next_live[k];
            if m.value(r) {
                m.next_bits[b as usize / 64] |= 1 << (b % 64);
            }
        }
        for id in 0..m.c.legal.len() {
            if !m.c.scanned[m.c.moves[id].0] && m.value(m.c.legal[id]) && m.legal_pos[id] == NONE {
                m.add_legal(id as u32);
            }
        }
        m
    }

    /// The network this machine runs.
    pub fn compiled(&self) -> &Compiled {
        &self.c
    }

    /// The shared network, borrowed independently of `self` so that the hot path need not
    /// touch the `Arc`'s reference count.
    #[inline]
    fn shared<'a>(&self) -> &'a Compiled {
        // SAFETY: `self.c` is set once at construction and never replaced, and `Compiled` is
        // never mutated; the allocation outlives every use made while `self` is alive, and
        // nothing hands the reference out beyond the method that took it.
        unsafe { &*Arc::as_ptr(&self.c) }
    }

    #[inline]
    fn val(&self, n: usize) -> bool {
        self.slot[n].bits & VAL != 0
    }

    #[inline]
    fn set_val(&mut self, n: usize, v: bool) {
        let b = &mut self.slot[n].bits;
        *b = if v { *b | VAL } else { *b & !VAL };
    }

    #[inline]
    fn value(&self, r: Ref) -> bool {
        self.val(r.node()) ^ r.neg()
    }

    /// The legal set holding `id` when its ref is true.
    #[inline]
    fn set_of(&self, id: u32) -> usize {
        2 * self.c.moves[id as usize].0 + self.c.guarded[id as usize] as usize
    }

    #[inline]
    fn add_legal(&mut self, id: u32) {
        let k = self.set_of(id);
        self.legal_pos[id as usize] = self.legal_set[k].len() as u32;
        self.legal_set[k].push(id);
    }

    #[inline]
    fn remove_legal(&mut self, id: u32) {
        let k = self.set_of(id);
        let p = self.legal_pos[id as usize];
        let set = &mut self.legal_set[k];
        let last = *set.last().expect("legal set holds the id");
        set.swap_remove(p as usize);
        if last != id {
            self.legal_pos[last as usize] = p;
        }
        self.legal_pos[id as usize] = NONE;
    }

    #[inline]
    fn on_hooks(&mut self, node: usize, v: bool) {
        let (lo, hi) = (self.c.hook_start[node] as usize, self.c.hook_start[node + 1] as usize);
        for k in lo..hi {
            let h = self.c.hooks[k];
            let id = h >> 2;
            let on = v ^ (h & 1 == 1);
            if h & 2 != 0 {
                let (w, bit) = (id as usize / 64, 1u64 << (id % 64));
                if on {
                    self.next_bits[w] |= bit;
                } else {
                    self.next_bits[w] &= !bit;
                }
                continue;
            }
            let legal = on;
            let present = self.legal_pos[id as usize] != NONE;
            if legal && !present {
                self.add_legal(id);
            } else if !legal && present {
                self.remove_legal(id);
            }
        }
    }

    /// Queues node `t` for a look in its level's bucket.
    #[inline]
    fn queue(&mut self, t: usize, hooked: bool) {
        let b = self.slot[t].bits;
        if b & DIRTY == 0 {
            self.push((t as u32) << 1 | hooked as u32);
        }
    }

    /// Queues the cycle of node `t`.
    #[cold]
    fn queue_cycle(&mut self, t: usize) {
        let cyc = self.c.cycle[t] as usize;
        if !self.cycle_queued[cyc] {
            self.cycle_queued[cyc] = true;
            let l = (self.slot[t].bits & LEVEL) as usize;
            self.cycle_buckets[l].push(cyc as u32);
            self.queued[l / 64] |= 1 << (l % 64);
        }
    }

    /// An input of `t`, a member of a cycle other than the one being settled, changed.
    #[cold]
    fn bump_cycle_member(&mut self, t: usize, up: bool) {
        let slot = &mut self.slot[t];
        slot.count += if up { 1 } else { -1 };
        let (on, val) = (slot.count > 0, slot.bits & VAL != 0);
        if !up && val {
            self.cycle_reset[self.c.cycle[t] as usize] = true;
            self.queue_cycle(t);
        } else if on != val {
            self.queue_cycle(t);
        }
    }

    /// Passes a change of node `n` to `v` along its edges, skipping targets in cycle `skip`.
    #[inline(always)]
    fn fan_out(&mut self, c: &Compiled, n: usize, v: bool, skip: u32) {
        let s = c.span[n];
        // One loop over both runs (a second loop's exit mispredicts per node): an edge counts
        // up where its run's sign agrees with `v`.
        for k in s.start..s.special {
            // SAFETY: `Compiled::compile` makes every span lie within `out`, and every plain
            // edge's target a node below `slot.len()`.
            let x = unsafe { *c.out.get_unchecked(k as usize) };
            self.count(x, (k < s.neg) == v);
        }
        for k in s.special..s.end {
            let e = c.out[k as usize];
            self.special_edge(c, (e >> 3) as usize, v ^ (e & 2 != 0), skip);
        }
    }

    /// An edge into a cycle, or (past the last node) to a family of selected edges.
    #[cold]
    fn special_edge(&mut self, c: &Compiled, t: usize, up: bool, skip: u32) {
        if t >= c.cycle.len() {
            self.fan_out_family(c, t - c.cycle.len(), up);
        } else if c.cycle[t] != skip {
            // Edges inside the cycle being settled are counted there.
            self.bump_cycle_member(t, up);
        }
    }

    /// Counts a change along an edge `e` encoded as a special edge's (`target << 3 | hooks
    /// << 2 | ...`) into a gate outside every cycle: up or down.
    #[inline]
    fn count_edge(&mut self, e: u32, up: bool) {
        self.count(e >> 2, up);
    }

    /// Counts one more (`up`) or one fewer true input into the plain edge's target `x`
    /// (`node << 1 | hooks`), queueing it if its value changes. A gate that is not queued
    /// holds the value of its count (true when positive), so its value changes exactly when
    /// the count reaches 1 going up or 0 going down; a queued gate is looked at once settled
    /// anyway.
    #[inline(always)]
    fn count(&mut self, x: u32, up: bool) {
        // SAFETY: `Compiled::compile` makes every edge's target a node below `slot.len()`.
        let slot = unsafe { self.slot.get_unchecked_mut((x >> 1) as usize) };
        let d = if up { 1 } else { -1 };
        slot.count += d;
        if slot.count == up as i32 && slot.bits & DIRTY == 0 {
            self.push(x);
        }
    }

    /// Queues the gate `x` (`node << 1 | hooks`), not queued yet, in its level's bucket.
    #[inline(always)]
    fn push(&mut self, x: u32) {
        // SAFETY: as in `count`.
        let slot = unsafe { self.slot.get_unchecked_mut((x >> 1) as usize) };
        let b = slot.bits;
        slot.bits = b | DIRTY;
        let l = (b & LEVEL) as usize;
        // SAFETY: levels are below `levels`, the length of `bucket_top` and `queued`'s bits;
        // a node is queued at most once until it is looked at (DIRTY), and nodes of level `l`
        // are looked at only once nothing below `l` is queued, so nothing queues them again
        // before the bucket is emptied: the level's segment, as long as its nodes, has room.
        unsafe {
            let top = self.bucket_top.get_unchecked_mut(l);
            *self.bucket.get_unchecked_mut(*top as usize) = x;
            *top += 1;
            *self.queued.get_unchecked_mut(l / 64) |= 1 << (l % 64);
        }
    }

    /// Passes a change of a family's source to `v` along its selected edges: only those of
    /// the members of the family's group that hold.
    fn fan_out_family(&mut self, c: &Compiled, f: usize, v: bool) {
        let g = c.fam_group[f] as usize;
        for i in 0..self.group_on[g].len() {
            let p = (c.fam_pos[f] + self.group_on[g][i]) as usize;
            for k in c.fam_edge_start[p] as usize..c.fam_edge_start[p + 1] as usize {
                let e = c.fam_edges[k];
                self.count_edge(e, v ^ (e & 2 != 0));
            }
        }
    }

    /// Member `s` of a group comes true (`v`) or goes false: the selected edges it gates
    /// start (stop) counting their sources' current values.
    #[cold]
    fn select(&mut self, c: &Compiled, s: usize, v: bool) {
        for &(g, pos) in &c.member[c.member_start[s] as usize..c.member_start[s + 1] as usize] {
            let on = &mut self.group_on[g as usize];
            if v {
                on.push(pos);
            } else if let Some(k) = on.iter().position(|&p| p == pos) {
                on.swap_remove(k);
            }
        }
        for k in c.sel_start[s] as usize..c.sel_start[s + 1] as usize {
            let (y, e) = c.sel[k];
            if self.val(y as usize) ^ (e & 2 != 0) {
                self.count_edge(e, v);
            }
        }
    }

    /// Sets a base or input node and passes the change on (propagated by the next
    /// [`propagate`](Self::propagate)).
    #[inline]
    fn set_source(&mut self, node: usize, v: bool) {
        if self.val(node) != v {
            self.set_val(node, v);
            self.slot[node].count = v as i32;
            let c = self.shared();
            if c.hook_start[node] != c.hook_start[node + 1] {
                self.on_hooks(node, v);
            }
            if self.slot[node].bits & SELECTOR != 0 {
                self.select(c, node, v);
            }
            self.fan_out(c, node, v, NONE);
        }
    }

    /// Settles every queued node and cycle, level by level (a node only queues nodes of
    /// higher levels, so the lowest queued level is always the next to settle).
    fn propagate(&mut self) {
        self.lazy_fresh = false;
        let c = self.shared();
        let mut w = 0;
        while w < self.queued.len() {
            let bits = self.queued[w];
            if bits == 0 {
                w += 1;
                continue;
            }
            let l = w * 64 + bits.trailing_zeros() as usize;
            self.queued[w] &= bits - 1;
            // Looking at a node of level `l` queues only nodes of higher levels, so the
            // level's top is read once and written back once.
            let (lo, start) = (c.level_start[l], self.bucket_top[l]);
            let mut top = start;
            while top > lo {
                top -= 1;
                // SAFETY: `lo..start` is level `l`'s segment of `bucket` (see `push`), and
                // every queued entry is a node below `slot.len()`.
                let x = unsafe { *self.bucket.get_unchecked(top as usize) };
                let n = (x >> 1) as usize;
                let slot = unsafe { self.slot.get_unchecked_mut(n) };
                slot.bits &= !DIRTY;
                let nv = slot.count > 0;
                if nv != (slot.bits & VAL != 0) {
                    slot.bits ^= VAL;
                    if x & 1 != 0 {
                        self.on_hooks(n, nv);
                    }
                    self.fan_out(c, n, nv, NONE);
                }
            }
            debug_assert_eq!(self.bucket_top[l], start, "a node queued a node of its own level");
            self.bucket_top[l] = lo;
            while let Some(cyc) = self.cycle_buckets[l].pop() {
                self.cycle_queued[cyc as usize] = false;
                self.settle_cycle(c, cyc as usize);
            }
        }
    }

    /// Brings a cycle to the least fixpoint of its support from outside, and passes on the
    /// members whose value changed. After a lost support, from scratch: all members false,
    /// then re-derived; otherwise by adding the members that gained support.
    fn settle_cycle(&mut self, c: &Compiled, cyc: usize) {
        let members = &c.cycles[cyc];
        let internal = |t: usize| c.cycle.get(t) == Some(&(cyc as u32));
        self.old.clear();
        self.old.extend(members.iter().map(|&m| self.slot[m as usize].bits & VAL != 0));
        if std::mem::take(&mut self.cycle_reset[cyc]) {
            for &m in members {
                let m = m as usize;
                if self.val(m) {
                    self.set_val(m, false);
                    for k in c.span[m].special as usize..c.span[m].end as usize {
                        let t = (c.out[k] >> 3) as usize;
                        if internal(t) {
                            self.slot[t].count -= 1;
                        }
                    }
                }
            }
        }
        self.work.clear();
        for &m in members {
            if self.slot[m as usize].count > 0 && !self.val(m as usize) {
                self.set_val(m as usize, true);
                self.work.push(m);
            }
        }
        while let Some(m) = self.work.pop() {
            let m = m as usize;
            for k in c.span[m].special as usize..c.span[m].end as usize {
                let t = (c.out[k] >> 3) as usize;
                if internal(t) {
                    self.slot[t].count += 1;
                    if self.slot[t].count > 0 && !self.val(t) {
                        self.set_val(t, true);
                        self.work.push(t as u32);
                    }
                }
            }
        }
        for (i, &m) in members.iter().enumerate() {
            let m = m as usize;
            let v = self.val(m);
            if v != self.old[i] {
                if c.hook_start[m] != c.hook_start[m + 1] {
                    self.on_hooks(m, v);
                }
                self.fan_out(c, m, v, cyc as u32);
            }
        }
    }

    fn set_state(&mut self, state: &PnState) {
        if self.cur == state.bits {
            return;
        }
        let changed = bits_apart(&self.cur, &state.bits);
        if changed < self.c.far_bits {
            self.set_bases(&state.bits);
            self.propagate();
            return;
        }
        if !self.snap.bits.is_empty() {
            let near = bits_apart(&self.snap.bits, &state.bits);
            // At the snapshot, or much nearer to it than to the current state (an MCTS tree
            // node near the anchored root, after a playout): from there.
            if 2 * near <= changed {
                self.restore();
                if near > 0 {
                    self.set_bases(&state.bits);
                    self.propagate();
                }
                return;
            }
        }
        self.set_bases(&state.bits);
        self.propagate();
        if self.snap.candidate == state.bits {
            self.take_snapshot();
        } else {
            self.snap.candidate.clone_from(&state.bits);
        }
    }

    /// Copies the settled network into the snapshot ([`Snapshot`]).
    fn take_snapshot(&mut self) {
        let s = &mut *self.snap;
        s.bits.clone_from(&self.cur);
        s.slot.clone_from(&self.slot);
        s.next_bits.clone_from(&self.next_bits);
        s.joint.clone_from(&self.joint);
        s.legal_set.clone_from(&self.legal_set);
        s.legal_pos.clone_from(&self.legal_pos);
        s.group_on.clone_from(&self.group_on);
    }

    /// Copies the snapshot back: the network is settled on the snapshot's state.
    fn restore(&mut self) {
        let s = &*self.snap;
        debug_assert!(self.queued.iter().all(|&w| w == 0), "restored while changes were pending");
        self.cur.copy_from_slice(&s.bits);
        self.slot.copy_from_slice(&s.slot);
        self.next_bits.copy_from_slice(&s.next_bits);
        self.joint.clone_from(&s.joint);
        for (a, b) in self.legal_set.iter_mut().zip(&s.legal_set) {
            a.clone_from(b);
        }
        self.legal_pos.copy_from_slice(&s.legal_pos);
        for (a, b) in self.group_on.iter_mut().zip(&s.group_on) {
            a.clone_from(b);
        }
        self.lazy_fresh = false;
        self.snap.restores += 1;
    }

    /// How many moves between states this machine made by restoring its snapshot instead of
    /// propagating (see [`Snapshot`]).
    pub fn snapshot_restores(&self) -> u64 {
        self.snap.restores
    }

    /// The state whose snapshot this machine holds (see [`Snapshot`]), if it took one.
    pub fn snapshot_state(&self) -> Option<&[u64]> {
        (!self.snap.bits.is_empty()).then_some(&self.snap.bits[..])
    }

    /// Sets the bases to the state `new` (to be propagated): first those that come true,
    /// then those that go false, so that an OR over both is not queued for nothing.
    #[inline]
    fn set_bases(&mut self, new: &[u64]) {
        let c = self.shared();
        for on in [true, false] {
            for w in 0..c.words {
                let mut diff = (new[w] ^ self.cur[w]) & if on { new[w] } else { !new[w] };
                while diff != 0 {
                    let b = w * 64 + diff.trailing_zeros() as usize;
                    diff &= diff - 1;
                    let r = c.base_ref[b];
                    if !r.is_const() {
                        self.set_source(r.node(), on);
                    }
                }
            }
        }
        self.cur.copy_from_slice(new);
    }

    /// The moves of a role as legal ids (for tests and tools).
    pub fn move_role(&self, m: u32) -> usize {
        self.c.moves[m as usize].0
    }

    /// Evaluates the lazy gates (those only goals read) for the current bases and inputs.
    fn settle_lazy(&mut self) {
        if self.lazy_fresh {
            return;
        }
        let prog = &self.shared().lazy_prog;
        let slot = &mut self.slot[..];
        // Branch-free per input: `miss` collects the inputs that do not settle the gate's
        // kind (a false input of an AND, a true input of an OR), so an AND holds when none
        // misses and an OR when one does.
        let mut p = 0;
        while p < prog.len() {
            // SAFETY: `Compiled::compile` writes each gate's head and length and then that
            // many inputs, and every node it names is below `slot.len()`.
            unsafe {
                let (head, len) = (*prog.get_unchecked(p), *prog.get_unchecked(p + 1) as usize);
                let and = head & 1;
                let mut miss = 0;
                for q in p + 2..p + 2 + len {
                    let r = *prog.get_unchecked(q);
                    let lit = (slot.get_unchecked((r >> 1) as usize).bits >> VAL.trailing_zeros() & 1) ^ (r & 1);
                    miss |= lit ^ and;
                }
                let v = (miss != 0) as u32 ^ and;
                let b = &mut slot.get_unchecked_mut((head >> 1) as usize).bits;
                *b = *b & !VAL | v * VAL;
                p += 2 + len;
            }
        }
        self.lazy_fresh = true;
    }

    /// A uniformly random legal move of `role` in the current state, or `None`.
    #[inline]
    fn random_legal<R: Rng>(&mut self, role: usize, rng: &mut R, scratch: &mut Vec<u32>) -> Option<u32> {
        let c = self.shared();
        if c.scanned[role] {
            // Draws among the role's possible moves until one is legal: each draw is uniform,
            // so the one kept is uniform among the legal moves. After a few misses (few moves
            // legal), the scan below, which is uniform among them too.
            let open = c.guard[role].is_none_or(|g| self.value(g));
            let refs = if open { &c.role_legal[role] } else { &c.role_unguarded[role] };
            if refs.len() == 1 {
                return self.value(refs[0].1).then_some(refs[0].0);
            }
            if !refs.is_empty() {
                for _ in 0..DRAWS {
                    let (id, r) = refs[rng.gen_range(0..refs.len())];
                    if self.value(r) {
                        return Some(id);
                    }
                }
            }
            let n = self.legal_into(role, scratch);
            // One legal move (the side not to move): no draw.
            return match n {
                0 => None,
                1 => Some(scratch[0]),
                _ => Some(scratch[rng.gen_range(0..n)]),
            };
        }
        let open = c.guard[role].is_none_or(|g| self.value(g));
        let (a, b) = (&self.legal_set[2 * role], &self.legal_set[2 * role + 1]);
        let n = a.len() + if open { b.len() } else { 0 };
        if n == 0 {
            return None;
        }
        let k = if n == 1 { 0 } else { rng.gen_range(0..n) };
        Some(if k < a.len() { a[k] } else { b[k - a.len()] })
    }

    /// Writes `role`'s legal moves into `scratch` (its first entries; it may be longer) and
    /// returns how many there are: the legal set of the current state, for playouts.
    #[inline]
    fn legal_into(&mut self, role: usize, scratch: &mut Vec<u32>) -> usize {
        let c = self.shared();
        let open = c.guard[role].is_none_or(|g| self.value(g));
        if c.scanned[role] {
            let refs = if open { &c.role_legal[role] } else { &c.role_unguarded[role] };
            if scratch.len() < refs.len() {
                scratch.resize(refs.len(), 0);
            }
            // Branch-free: every id is written, and kept when its ref holds.
            let mut n = 0;
            for &(id, r) in refs {
                scratch[n] = id;
                n += self.value(r) as usize;
            }
            return n;
        }
        scratch.clear();
        scratch.extend_from_slice(&self.legal_set[2 * role]);
        if open {
            scratch.extend_from_slice(&self.legal_set[2 * role + 1]);
        }
        scratch.len()
    }

    /// [`StateMachine::playout_policy`]: [`PropnetMachine::depth_charge`]'s loop with the
    /// moves chosen by `policy`.
    pub fn policy_charge<R: Rng, P: PlayoutPolicy<u32>>(
        &mut self,
        state: &mut PnState,
        rng: &mut R,
        max_depth: usize,
        bufs: &mut PlayoutBuffers<Self>,
        policy: &mut P,
    ) -> PlayoutResult {
        self.set_state(state);
        let c = self.shared();
        let roles = c.roles.len();
        let mut depth = 0;
        let settle = !self.settle.latches.is_empty();
        let terminal = loop {
            if self.value(c.terminal) || (settle && self.settled()) {
                break true;
            }
            if depth >= max_depth {
                break false;
            }
            bufs.joint.clear();
            for r in 0..roles {
                let n = self.legal_into(r, &mut bufs.legal);
                let i = match n {
                    0 => break,
                    1 => 0,
                    _ => policy.choose(r, &bufs.legal[..n], rng),
                };
                bufs.joint.push(bufs.legal[i]);
            }
            if bufs.joint.len() < roles {
                break false;
            }
            policy.seen(&bufs.joint);
            self.set_joint(&bufs.joint);
            self.propagate();
            let next = &mut bufs.next.bits;
            next.clear();
            next.extend(c.next_const.iter().zip(&self.next_bits).map(|(a, b)| a | b));
            self.set_bases(next);
            self.propagate();
            depth += 1;
        };
        state.bits.copy_from_slice(&self.cur);
        PlayoutResult { depth, terminal }
    }

    /// Sets the input nodes of the legal ids in `joint` (one per role) and clears the others.
    /// The new inputs are set before the old are cleared: an OR over moves (a frame
    /// condition) that holds both then only counts up and down, and is not queued.
    #[inline]
    fn set_joint(&mut self, joint: &[u32]) {
        let c = self.shared();
        let old = self.joint.len();
        for &m in joint {
            let r = c.input_ref[m as usize];
            if !r.is_const() {
                self.set_source(r.node(), true);
                self.joint.push(r.node() as u32);
            }
        }
        for i in 0..old {
            let n = self.joint[i];
            if !self.joint[old..].contains(&n) {
                self.set_source(n as usize, false);
            }
        }
        self.joint.drain(..old);
    }

    /// The depth charge behind [`StateMachine::playout`], showing each joint move played to
    /// `seen` (tests replay them). The network steps from state to state in place: the next
    /// values kept by the hooks become the new bases directly, with no state copied or
    /// compared, and moves are drawn from the legal sets as they stand.
    pub fn depth_charge<R: Rng>(
        &mut self,
        state: &mut PnState,
        rng: &mut R,
        max_depth: usize,
        bufs: &mut PlayoutBuffers<Self>,
        mut seen: impl FnMut(&[u32]),
    ) -> PlayoutResult {
        self.set_state(state);
        let c = self.shared();
        let roles = c.roles.len();
        let mut depth = 0;
        let settle = !self.settle.latches.is_empty();
        let terminal = loop {
            if self.value(c.terminal) || (settle && self.settled()) {
                break true;
            }
            if depth >= max_depth {
                break false;
            }
            bufs.joint.clear();
            for r in 0..roles {
                match self.random_legal(r, rng, &mut bufs.legal) {
                    Some(m) => bufs.joint.push(m),
                    None => break,
                }
            }
            if bufs.joint.len() < roles {
                break false;
            }
            seen(&bufs.joint);
            self.set_joint(&bufs.joint);
            self.propagate();
            // The next state, read before any base is set (a base may hook a next value).
            let next = &mut bufs.next.bits;
            next.clear();
            next.extend(c.next_const.iter().zip(&self.next_bits).map(|(a, b)| a | b));
            self.set_bases(next);
            self.propagate();
            depth += 1;
        };
        state.bits.copy_from_slice(&self.cur);
        PlayoutResult { depth, terminal }
    }
}

impl PropnetMachine {
    /// Ends random and policy playouts ([`StateMachine::playout`] and its kin) at the first
    /// state where every role's goal is decided by the goal latches holding there
    /// (`factor::outcome`: each `(base, value, roles)` is a latch that, once `base` has
    /// `value`, decides the goals of `roles` for the rest of the game). Such a state's goals
    /// are the goals the playout would end with, so the rewards read there are the same and
    /// the playout is shorter; the playout counts as ended (`terminal`). Clones share the
    /// table; an empty list (the default), or a game with more than 64 roles, turns it off.
    pub fn set_goal_latches(&mut self, latches: &[(u32, bool, Vec<usize>)]) {
        let roles = self.c.roles.len();
        let mut settle =
            Settle { latches: Vec::new(), all: if roles <= 64 { u64::MAX >> (64 - roles.max(1)) } else { 0 } };
        if roles <= 64 {
            for (b, v, rs) in latches {
                let mask = rs.iter().filter(|&&r| r < roles).fold(0u64, |m, &r| m | 1 << r);
                if mask != 0 && (*b as usize) < self.cur.len() * 64 {
                    settle.latches.push((b / 64, 1u64 << (b % 64), *v, mask));
                }
            }
        }
        // Only where the latches together can decide every role.
        if settle.latches.iter().fold(0, |m, l| m | l.3) != settle.all {
            settle.latches.clear();
        }
        self.settle = Arc::new(settle);
    }

    /// Whether the goal latches holding in the current state decide every role's goal.
    #[inline]
    fn settled(&self) -> bool {
        let mut got = 0u64;
        for &(w, bit, v, roles) in &self.settle.latches {
            if (self.cur[w as usize] & bit != 0) == v {
                got |= roles;
            }
        }
        got == self.settle.all
    }

    /// Samples `steps` steps of random playouts from the initial state, starting again at
    /// the end of each, and counts per node the phases it holds in and its changes; a phase
    /// is the network settled after a joint move's inputs are set, or after the next state's
    /// bases are. The profile chooses sparse selected edges (see [`super::select`]).
    pub(crate) fn profile(&mut self, steps: usize, seed: u64) -> Profile {
        use rand::SeedableRng;
        let c = self.shared();
        let (n, roles) = (c.offset.len(), c.roles.len());
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        let (mut on, mut flips) = (vec![0u32; n], vec![0u32; n]);
        let mut prev: Vec<bool> = (0..n).map(|i| self.val(i)).collect();
        let mut phases = 0u32;
        let mut record = |m: &PropnetMachine| {
            for i in 0..n {
                let v = m.val(i);
                on[i] += v as u32;
                flips[i] += (v != prev[i]) as u32;
                prev[i] = v;
            }
            phases += 1;
        };
        let init = PnState { bits: c.init.clone() };
        let (mut legal, mut joint, mut next) = (Vec::new(), Vec::new(), Vec::new());
        self.set_state(&init);
        let mut depth = 0;
        for _ in 0..steps {
            joint.clear();
            if !self.value(c.terminal) && depth < 1000 {
                for r in 0..roles {
                    match self.random_legal(r, &mut rng, &mut legal) {
                        Some(m) => joint.push(m),
                        None => break,
                    }
                }
            }
            if joint.len() < roles || joint.is_empty() {
                self.set_state(&init);
                depth = 0;
                continue;
            }
            self.set_joint(&joint);
            self.propagate();
            record(self);
            next.clear();
            next.extend(c.next_const.iter().zip(&self.next_bits).map(|(a, b)| a | b));
            self.set_bases(&next);
            self.propagate();
            record(self);
            depth += 1;
        }
        let per = |v: Vec<u32>| v.into_iter().map(|x| x as f32 / phases.max(1) as f32).collect();
        Profile { on: per(on), flips: per(flips) }
    }
}

impl StateMachine for PropnetMachine {
    type State = PnState;
    type Move = u32;

    fn roles(&self) -> &[String] {
        &self.c.roles
    }

    fn initial_state(&mut self) -> PnState {
        PnState { bits: self.c.init.clone() }
    }

    fn legal_moves(&mut self, state: &PnState, role: usize, out: &mut Vec<u32>) {
        self.set_state(state);
        out.clear();
        let c = self.shared();
        let open = c.guard[role].is_none_or(|g| self.value(g));
        if c.scanned[role] {
            let refs = if open { &c.role_legal[role] } else { &c.role_unguarded[role] };
            out.resize(refs.len(), 0);
            let mut n = 0;
            for &(id, r) in refs {
                out[n] = id;
                n += self.value(r) as usize;
            }
            out.truncate(n);
        } else {
            out.extend_from_slice(&self.legal_set[2 * role]);
            if open {
                out.extend_from_slice(&self.legal_set[2 * role + 1]);
            }
            out.sort_unstable();
        }
    }

    fn next_state(&mut self, state: &PnState, joint: &[u32], out: &mut PnState) {
        self.set_state(state);
        self.set_joint(joint);
        self.propagate();
        let c = self.shared();
        out.bits.clear();
        out.bits.extend(c.next_const.iter().zip(&self.next_bits).map(|(a, b)| a | b));
    }

    fn is_terminal(&mut self, state: &PnState) -> bool {
        self.set_state(state);
        self.value(self.c.terminal)
    }

    fn goal(&mut self, state: &PnState, role: usize) -> Goal {
        self.set_state(state);
        self.settle_lazy();
        let mut found: Option<Goal> = None;
        for &(r, v) in &self.c.goals[role] {
            if self.value(r) {
                if found.is_some() {
                    return None;
                }
                found = Some(v);
            }
        }
        found.flatten()
    }

    fn playout<R: Rng>(
        &mut self,
        state: &mut PnState,
        rng: &mut R,
        max_depth: usize,
        bufs: &mut PlayoutBuffers<Self>,
    ) -> PlayoutResult {
        self.depth_charge(state, rng, max_depth, bufs, |_| {})
    }

    fn playout_seen<R: Rng, F: FnMut(&[u32])>(
        &mut self,
        state: &mut PnState,
        rng: &mut R,
        max_depth: usize,
        bufs: &mut PlayoutBuffers<Self>,
        seen: F,
    ) -> PlayoutResult {
        self.depth_charge(state, rng, max_depth, bufs, seen)
    }

    fn playout_policy<R: Rng, P: PlayoutPolicy<u32>>(
        &mut self,
        state: &mut PnState,
        rng: &mut R,
        max_depth: usize,
        bufs: &mut PlayoutBuffers<Self>,
        policy: &mut P,
    ) -> PlayoutResult {
        self.policy_charge(state, rng, max_depth, bufs, policy)
    }

    /// Takes the snapshot at `state` (see [`Snapshot`]): far jumps to it, or to states much
    /// nearer to it than to where the network is, start from the copy.
    fn anchor(&mut self, state: &PnState) {
        if self.snap.bits != state.bits {
            self.set_state(state);
            self.take_snapshot();
        }
    }

    fn move_number(m: u32) -> Option<usize> {
        Some(m as usize)
    }

    fn move_number_bound(&self) -> usize {
        self.c.moves.len()
    }

    fn batch_lanes(&self) -> usize {
        if self.batch.is_some() {
            super::batch::BatchMachine::LANES
        } else {
            0
        }
    }

    fn batch_playouts<R: Rng>(
        &mut self,
        starts: &[PnState],
        max_depth: usize,
        rng: &mut R,
        sums: &mut [f64],
        until: Option<Instant>,
    ) -> Option<usize> {
        let b = self.batch.as_mut()?;
        let lanes = super::batch::BatchMachine::LANES;
        if starts.is_empty() || starts.len() > lanes {
            return None;
        }
        let (per, roles) = (lanes / starts.len(), self.c.roles.len());
        if b.run_groups(starts, per, max_depth.min(u32::MAX as usize) as u32, rng, until).is_none() {
            return Some(0);
        }
        let sums = &mut sums[..starts.len() * roles];
        sums.fill(0.0);
        for lane in 0..starts.len() * per {
            for (r, g) in b.goals(lane).iter().enumerate() {
                sums[lane / per * roles + r] += g.map_or(0.0, |g| g.min(100) as f64 / 100.0);
            }
        }
        Some(per)
    }

    fn move_text(&self, m: u32) -> String {
        self.c.terms.to_string(self.c.moves[m as usize].1, &self.c.symbols)
    }

    fn state_bits<'a>(&self, state: &'a PnState) -> Option<&'a [u64]> {
        Some(&state.bits)
    }

    fn base_texts(&self) -> Vec<String> {
        self.c.bases.iter().map(|&b| self.c.terms.to_string(b, &self.c.symbols)).collect()
    }

    fn state_facts(&self, state: &PnState) -> Vec<String> {
        let mut v: Vec<String> = (0..self.c.bases.len())
            .filter(|&b| state.get(b))
            .map(|b| self.c.terms.to_string(self.c.bases[b], &self.c.symbols))
            .collect();
        v.sort();
        v
    }
}
