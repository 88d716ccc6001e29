//! From ground rules to an optimized propositional network.
//!
//! The network is a graph of nodes: one constant (`FALSE`; `TRUE` is its negation), base
//! propositions (one per fact a state may hold), inputs (one per move a role may make) and
//! AND/OR gates. NOT gates are folded into edges: a [`Ref`] names a node and whether it is
//! negated. View propositions (`legal`, `goal`, `terminal`, `next`, and every other relation's
//! atoms) are not nodes of their own: each is a `Ref` to the gate that computes it.
//!
//! Optimization: constants are found by a three-valued analysis over the strongly connected
//! components of the graph (least fixpoint inside a cycle, as GDL's semantics asks); inputs
//! that are never legal and bases that can never change become constants too, and the
//! analysis runs again until nothing changes. The graph is then rebuilt with constants
//! folded, single-input gates collapsed and identical gates merged (hash-consing), and only
//! the nodes that can reach an output are kept.

use super::ground::{Budget, GroundError, Grounding};
use crate::gdl::kw;
use crate::interp::{fold32, table_hash, TermId};
use rustc_hash::FxHashMap;
use std::hash::BuildHasher;

/// A node and whether it is negated: `node << 1 | negated`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ref(pub u32);

impl Ref {
    pub const FALSE: Ref = Ref(0);
    pub const TRUE: Ref = Ref(1);
    #[inline]
    pub fn new(node: u32, neg: bool) -> Ref {
        Ref(node << 1 | neg as u32)
    }
    #[inline]
    pub fn node(self) -> usize {
        (self.0 >> 1) as usize
    }
    #[inline]
    pub fn neg(self) -> bool {
        self.0 & 1 == 1
    }
    #[inline]
    pub fn not(self) -> Ref {
        Ref(self.0 ^ 1)
    }
    pub fn is_const(self) -> bool {
        self.node() == 0
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Node 0 only.
    False,
    /// Base proposition: index into [`Net::bases`].
    Base(u32),
    /// Input proposition: index into [`Net::inputs`].
    Input(u32),
    And,
    Or,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: Kind,
    pub inputs: Vec<Ref>,
}

/// Counts of a network's parts, for reports.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    pub bases: usize,
    pub inputs: usize,
    pub ands: usize,
    pub ors: usize,
    /// Distinct negated sources (a NOT gate each in a classic propnet).
    pub nots: usize,
    /// Bases whose next value is not constant.
    pub transitions: usize,
    /// Nodes in all (constants, bases, inputs and gates).
    pub components: usize,
    pub edges: usize,
}

/// A propositional network with its outputs.
#[derive(Clone, Debug)]
pub struct Net {
    pub nodes: Vec<Node>,
    pub roles: Vec<String>,
    /// Every fact a state may hold, and its node (a constant if it never changes).
    pub bases: Vec<TermId>,
    pub base_ref: Vec<Ref>,
    /// For each base: whether it holds initially, and the ref computing its next value.
    pub init: Vec<bool>,
    pub next: Vec<Ref>,
    /// Every move a role may make: (role, move), its input node and its legal ref.
    pub inputs: Vec<(usize, TermId)>,
    pub input_ref: Vec<Ref>,
    pub legal: Vec<Ref>,
    /// Per role: the refs of its goal atoms and their values (`None`: not a number).
    pub goals: Vec<Vec<(Ref, Option<u32>)>>,
    pub terminal: Ref,
}

impl Net {
    pub fn stats(&self) -> Stats {
        let mut s = Stats { components: self.nodes.len(), ..Stats::default() };
        let mut negated = vec![false; self.nodes.len()];
        for n in &self.nodes {
            match n.kind {
                Kind::Base(_) => s.bases += 1,
                Kind::Input(_) => s.inputs += 1,
                Kind::And => s.ands += 1,
                Kind::Or => s.ors += 1,
                Kind::False => {}
            }
            s.edges += n.inputs.len();
            for r in &n.inputs {
                if r.neg() {
                    negated[r.node()] = true;
                }
            }
        }
        s.nots = negated.iter().filter(|&&b| b).count();
        s.transitions = self.next.iter().zip(&self.base_ref).filter(|(n, b)| !n.is_const() && !b.is_const()).count();
        s
    }
}

/// Three-valued truth: false, true, unknown (depends on the state or the moves).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum V {
    F,
    T,
    U,
}

fn flip(v: V, neg: bool) -> V {
    match (v, neg) {
        (V::F, true) => V::T,
        (V::T, true) => V::F,
        (v, _) => v,
    }
}

/// Builds the unoptimized network: one OR per atom over one AND per rule instance.
pub fn raw_net(g: &Grounding, budget: &Budget) -> Result<Net, GroundError> {
    let terms = &g.terms;
    // The ref of each atom a body may name, by term id: `(true b)` of a base, `(does r m)` of
    // an input, and each head.
    const NONE: Ref = Ref(u32::MAX);
    let mut ref_of: Vec<Ref> = vec![NONE; terms.len()];
    let mut nodes = vec![Node { kind: Kind::False, inputs: Vec::new() }];
    let mut base_ref = Vec::with_capacity(g.bases.len());
    for (i, &b) in g.bases.iter().enumerate() {
        let r = Ref::new(nodes.len() as u32, false);
        base_ref.push(r);
        if let Some(t) = terms.lookup(kw::TRUE, &[b]) {
            ref_of[t.0 as usize] = r;
        }
        nodes.push(Node { kind: Kind::Base(i as u32), inputs: Vec::new() });
    }
    let mut input_ref = Vec::with_capacity(g.inputs.len());
    for (i, &(r, m)) in g.inputs.iter().enumerate() {
        let x = Ref::new(nodes.len() as u32, false);
        input_ref.push(x);
        if let Some(t) = terms.lookup(kw::DOES, &[g.role_terms[r], m]) {
            ref_of[t.0 as usize] = x;
        }
        nodes.push(Node { kind: Kind::Input(i as u32), inputs: Vec::new() });
    }
    for r in &g.rules {
        if ref_of[r.head.0 as usize] == NONE {
            ref_of[r.head.0 as usize] = Ref::new(nodes.len() as u32, false);
            nodes.push(Node { kind: Kind::Or, inputs: Vec::new() });
        }
    }
    let lit_ref = |atom: TermId| -> Ref {
        match ref_of[atom.0 as usize] {
            NONE => Ref::FALSE,
            r => r,
        }
    };
    for (k, r) in g.rules.iter().enumerate() {
        if k % 65536 == 0 {
            budget.check_time("building the network")?;
        }
        let body: Vec<Ref> =
            g.body(r).iter().map(|l| if l.neg { lit_ref(l.atom).not() } else { lit_ref(l.atom) }).collect();
        let input = match body.len() {
            0 => Ref::TRUE,
            1 => body[0],
            _ => {
                nodes.push(Node { kind: Kind::And, inputs: body });
                Ref::new(nodes.len() as u32 - 1, false)
            }
        };
        let head = ref_of[r.head.0 as usize];
        nodes[head.node()].inputs.push(input);
    }
    let atom_of = |t: TermId| Some(ref_of[t.0 as usize]).filter(|&r| r != NONE);
    let lookup = |rel: crate::gdl::Sym, args: &[TermId]| -> Ref {
        terms.lookup(rel, args).and_then(atom_of).unwrap_or(Ref::FALSE)
    };
    let mut init = Vec::with_capacity(g.bases.len());
    let mut next = Vec::with_capacity(g.bases.len());
    for &b in &g.bases {
        next.push(lookup(kw::NEXT, &[b]));
        init.push(lookup(kw::INIT, &[b]));
    }
    let mut legal = Vec::with_capacity(g.inputs.len());
    for &(r, m) in &g.inputs {
        legal.push(lookup(kw::LEGAL, &[g.role_terms[r], m]));
    }
    let mut goals = vec![Vec::new(); g.roles.len()];
    let mut heads: Vec<TermId> = g.rules.iter().map(|r| r.head).filter(|&h| terms.functor(h) == kw::GOAL).collect();
    heads.sort_unstable();
    heads.dedup();
    for h in heads {
        let args = terms.args(h);
        if terms.functor(h) == kw::GOAL && args.len() == 2 {
            if let Some(ri) = g.role_terms.iter().position(|&x| x == args[0]) {
                let v = if terms.args(args[1]).is_empty() {
                    g.symbols.name(terms.functor(args[1])).parse().ok()
                } else {
                    None
                };
                goals[ri].push((atom_of(h).expect("a head"), v));
            }
        }
    }
    let terminal = lookup(kw::TERMINAL, &[]);
    // Init is evaluated on the raw network as constants; keep its refs as pseudo-bases'
    // "init" until optimization folds them.
    let mut net = Net {
        nodes,
        roles: g.roles.clone(),
        bases: g.bases.clone(),
        base_ref,
        init: Vec::new(),
        next,
        inputs: g.inputs.clone(),
        input_ref,
        legal,
        goals,
        terminal,
    };
    // Only the nodes `init` reads are evaluated (usually a few facts, not the whole net).
    let vals = analyse(&net.nodes, init.iter().map(|r| r.node()));
    for r in init {
        match flip(vals[r.node()], r.neg()) {
            V::T => net.init.push(true),
            V::F => net.init.push(false),
            V::U => return Err(GroundError::Invalid("an `init` fact depends on the state".into())),
        }
    }
    Ok(net)
}

/// Strongly connected components, dependencies first: the members of all of them in one
/// array, component `c` at `members[start[c]..start[c + 1]]` (a raw network has millions of
/// components, nearly all of one node: one allocation each would dominate).
pub(crate) struct Comps {
    members: Vec<u32>,
    start: Vec<u32>,
    /// Per component: whether it is a cycle (more than one member, or one that reads itself).
    cyclic: Vec<bool>,
}

impl Comps {
    pub(crate) fn len(&self) -> usize {
        self.start.len() - 1
    }

    pub(crate) fn get(&self, c: usize) -> &[u32] {
        &self.members[self.start[c] as usize..self.start[c + 1] as usize]
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
        (0..self.len()).map(|c| self.get(c))
    }

    /// Whether component `c` is a cycle (known from the search, so no node is read again).
    pub(crate) fn is_cyclic(&self, c: usize) -> bool {
        self.cyclic[c]
    }
}

/// Strongly connected components of the nodes `0..n` reachable from `roots`, where node `v`
/// depends on the nodes of `succ(v)`: Tarjan's algorithm, iterative (deep networks cannot
/// overflow the stack), dependencies first (as [`crate::graph::sccs`]).
pub(crate) fn node_sccs<'a>(
    n: usize,
    roots: impl IntoIterator<Item = usize>,
    succ: impl Fn(usize) -> &'a [Ref],
) -> Comps {
    // Per node, its index and low link side by side (one cache line for both, in networks
    // of millions of nodes); a node's low link is `DONE` once its component is listed, so a
    // node seen and not done is on the stack.
    const UNSEEN: u32 = u32::MAX;
    const DONE: u32 = u32::MAX;
    let mut link = vec![[UNSEEN, 0u32]; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, u32)> = Vec::new();
    let mut members: Vec<u32> = Vec::new();
    let mut start: Vec<u32> = vec![0];
    let mut cyclic: Vec<bool> = Vec::new();
    let mut reads_itself = vec![false; n];
    let mut counter = 0u32;
    for root in roots {
        if link[root][0] != UNSEEN {
            continue;
        }
        link[root] = [counter, counter];
        counter += 1;
        stack.push(root as u32);
        call.push((root as u32, 0));
        while let Some(&(v, i)) = call.last() {
            let v = v as usize;
            // The edges of `v` from `i` on, up to the first that leads to an unseen node
            // (visited first; `v`'s own edges are read once per descent, not once per edge).
            let s = succ(v);
            let mut j = i as usize;
            let mut unseen = None;
            while j < s.len() {
                let w = s[j].node();
                j += 1;
                if w == v {
                    reads_itself[v] = true;
                } else if link[w][0] == UNSEEN {
                    unseen = Some(w);
                    break;
                } else if link[w][1] != DONE {
                    link[v][1] = link[v][1].min(link[w][0]);
                }
            }
            if let Some(w) = unseen {
                call.last_mut().expect("the frame of v").1 = j as u32;
                link[w] = [counter, counter];
                counter += 1;
                stack.push(w as u32);
                call.push((w as u32, 0));
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    let p = parent as usize;
                    link[p][1] = link[p][1].min(link[v][1]);
                }
                if link[v][1] == link[v][0] {
                    let first = members.len();
                    loop {
                        let w = stack.pop().expect("tarjan stack");
                        link[w as usize][1] = DONE;
                        members.push(w);
                        if w as usize == v {
                            break;
                        }
                    }
                    cyclic.push(members.len() - first > 1 || reads_itself[v]);
                    start.push(members.len() as u32);
                }
            }
        }
    }
    Comps { members, start, cyclic }
}

/// Three-valued values of the nodes reachable from `roots` (others are left unknown) when
/// nothing is known of bases and inputs (what the static relations make constant).
fn analyse(nodes: &[Node], roots: impl IntoIterator<Item = usize>) -> Vec<V> {
    let comps = node_sccs(nodes.len(), roots, |v| &nodes[v].inputs);
    let mut val = vec![V::U; nodes.len()];
    let mut in_comp = vec![u32::MAX; nodes.len()];
    for (ci, comp) in comps.iter().enumerate() {
        if !comps.is_cyclic(ci) {
            val[comp[0] as usize] = eval(&nodes[comp[0] as usize], &val, &[]);
            continue;
        }
        for &n in comp {
            in_comp[n as usize] = ci as u32;
        }
        for (m, v) in comp.iter().zip(cycle_values(nodes, comp, &in_comp, ci, &val)) {
            val[*m as usize] = v;
        }
    }
    val
}

/// Three-valued values of the members of cycle `ci`: true where the least fixpoint holds
/// with only the surely true inputs from outside, false where it fails even with every
/// input that may be true, unknown otherwise.
fn cycle_values(nodes: &[Node], comp: &[u32], comp_of: &[u32], ci: usize, val: &[V]) -> Vec<V> {
    let can = least_fixpoint(nodes, comp, comp_of, ci as u32, &|r: Ref| flip(val[r.node()], r.neg()) != V::F);
    let must = least_fixpoint(nodes, comp, comp_of, ci as u32, &|r: Ref| flip(val[r.node()], r.neg()) == V::T);
    (0..comp.len())
        .map(|i| {
            if must[i] {
                V::T
            } else if !can[i] {
                V::F
            } else {
                V::U
            }
        })
        .collect()
}

/// The least fixpoint of a cycle of positive AND/OR nodes: which members turn on, given
/// which inputs from outside the cycle are on. A worklist over the cycle's internal edges,
/// linear in its size.
fn least_fixpoint(nodes: &[Node], comp: &[u32], in_comp: &[u32], ci: u32, ext: &dyn Fn(Ref) -> bool) -> Vec<bool> {
    let index: FxHashMap<usize, usize> = comp.iter().enumerate().map(|(i, &n)| (n as usize, i)).collect();
    let mut need = vec![0u32; comp.len()];
    let mut got = vec![0u32; comp.len()];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); comp.len()];
    for (i, &n) in comp.iter().enumerate() {
        let node = &nodes[n as usize];
        need[i] = if node.kind == Kind::And { node.inputs.len() as u32 } else { 1 };
        for &r in &node.inputs {
            if in_comp[r.node()] == ci {
                readers[index[&r.node()]].push(i);
            } else if ext(r) {
                got[i] += 1;
            }
        }
    }
    let mut on = vec![false; comp.len()];
    let mut work: Vec<usize> = (0..comp.len()).filter(|&i| got[i] >= need[i]).collect();
    for &i in &work {
        on[i] = true;
    }
    while let Some(j) = work.pop() {
        for &i in &readers[j] {
            got[i] += 1;
            if !on[i] && got[i] >= need[i] {
                on[i] = true;
                work.push(i);
            }
        }
    }
    on
}

/// A node's value from its inputs' values (inputs unknown; bases as `base_known` says).
fn eval(n: &Node, val: &[V], base_known: &[V]) -> V {
    match n.kind {
        Kind::False => V::F,
        Kind::Base(b) => base_known.get(b as usize).copied().unwrap_or(V::U),
        Kind::Input(_) => V::U,
        Kind::And | Kind::Or => {
            let and = n.kind == Kind::And;
            let (absorb, neutral) = if and { (V::F, V::T) } else { (V::T, V::F) };
            let mut all_neutral = true;
            for r in &n.inputs {
                let v = flip(val[r.node()], r.neg());
                if v == absorb {
                    return absorb;
                }
                all_neutral &= v == neutral;
            }
            if all_neutral {
                neutral
            } else {
                V::U
            }
        }
    }
}

/// Which nodes are constant in every reachable state, as a greatest fixpoint: suppose every
/// base keeps its initial value, and drop from the supposition each base whose next value is
/// not that constant under it, until the supposition is inductive. An input is false when its
/// `legal` is (a virtual edge from legal to input, acyclic since `legal` cannot read `does`).
/// Values only lose information as bases are dropped, so the analysis is incremental: each
/// node's value changes at most once, and only the readers of a changed node are revisited.
/// Returns the values, the components (dependencies first) and the number of rounds.
///
/// Without `reachable`, nothing is supposed of the bases: the nodes constant in every state,
/// in one round (on a network of millions of nodes the rounds cost as much as the first pass,
/// since nearly every node changes once the moving bases are dropped).
fn constants(net: &Net, budget: &Budget, reachable: bool) -> Result<(Vec<V>, Comps, usize), GroundError> {
    let nodes = &net.nodes;
    let n = nodes.len();
    let dep = |i: usize| -> &[Ref] {
        match nodes[i].kind {
            Kind::Input(k) => std::slice::from_ref(&net.legal[k as usize]),
            _ => &nodes[i].inputs,
        }
    };
    let t0 = std::time::Instant::now();
    let comps = node_sccs(n, 0..n, dep);
    let sccs_ms = t0.elapsed().as_secs_f64() * 1000.0;
    // Readers of each node (CSR): node `d` is read by `readers[reader_start[d]..reader_start[d + 1]]`.
    let mut reader_start = vec![0u32; n + 1];
    for i in 0..n {
        for r in dep(i) {
            reader_start[r.node() + 1] += 1;
        }
    }
    for i in 0..n {
        reader_start[i + 1] += reader_start[i];
    }
    let mut readers = vec![0u32; reader_start[n] as usize];
    {
        let mut fill: Vec<u32> = reader_start[..n].to_vec();
        for i in 0..n {
            for r in dep(i) {
                let d = r.node();
                readers[fill[d] as usize] = i as u32;
                fill[d] += 1;
            }
        }
    }
    let readers_of = |d: usize| &readers[reader_start[d] as usize..reader_start[d + 1] as usize];
    let mut comp_of = vec![u32::MAX; n];
    for (ci, comp) in comps.iter().enumerate() {
        for &m in comp {
            comp_of[m as usize] = ci as u32;
        }
        if comps.is_cyclic(ci) {
            for &m in comp {
                if nodes[m as usize].inputs.iter().any(|r| r.neg() && comp_of[r.node()] == ci as u32) {
                    return Err(GroundError::Invalid("negation inside a recursive cycle (not stratified)".into()));
                }
            }
        }
    }
    let mut base_known: Vec<V> = if reachable {
        net.init.iter().map(|&b| if b { V::T } else { V::F }).collect()
    } else {
        vec![V::U; net.init.len()]
    };
    let mut val = vec![V::U; n];
    let eval_node = |i: usize, val: &[V], base_known: &[V]| -> V {
        match nodes[i].kind {
            Kind::Input(k) => {
                let l = net.legal[k as usize];
                if flip(val[l.node()], l.neg()) == V::F {
                    V::F
                } else {
                    V::U
                }
            }
            _ => eval(&nodes[i], val, base_known),
        }
    };
    let eval_cycle = |ci: usize, val: &[V]| cycle_values(nodes, comps.get(ci), &comp_of, ci, val);
    for (ci, comp) in comps.iter().enumerate() {
        if comps.is_cyclic(ci) {
            for (m, v) in comp.iter().zip(eval_cycle(ci, &val)) {
                val[*m as usize] = v;
            }
        } else {
            val[comp[0] as usize] = eval_node(comp[0] as usize, &val, &base_known);
        }
    }
    let first_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let mut rounds = 1;
    let mut work: Vec<usize> = Vec::new();
    // Components to revisit, as a bitset: readers come after what they read (dependencies
    // first), so each round is one forward scan.
    let mut queued = vec![0u64; comps.len().div_ceil(64)];
    loop {
        budget.check_time("optimizing the network")?;
        for b in 0..net.bases.len() {
            let r = net.next[b];
            if base_known[b] != V::U && flip(val[r.node()], r.neg()) != base_known[b] {
                base_known[b] = V::U;
                let node = net.base_ref[b].node();
                if val[node] != V::U {
                    val[node] = V::U;
                    work.push(node);
                }
            }
        }
        if work.is_empty() {
            break;
        }
        rounds += 1;
        // Revisit the readers' components in dependency order, each at most once a round
        // (a cycle again when it changes a member it reads). A reader outside a cycle that
        // is unknown already stays so (values only lose information).
        let push_readers = |x: usize, val: &[V], queued: &mut [u64]| {
            for &rd in readers_of(x) {
                let ci = comp_of[rd as usize] as usize;
                if !comps.is_cyclic(ci) && val[rd as usize] == V::U {
                    continue;
                }
                queued[ci / 64] |= 1 << (ci % 64);
            }
        };
        let mut first = usize::MAX;
        for x in work.drain(..) {
            first = first.min(comp_of[x] as usize);
            push_readers(x, &val, &mut queued);
        }
        let mut w = first / 64;
        while w < queued.len() {
            let bits = queued[w];
            if bits == 0 {
                w += 1;
                continue;
            }
            let ci = w * 64 + bits.trailing_zeros() as usize;
            queued[w] &= bits - 1;
            if comps.is_cyclic(ci) {
                for (&m, v) in comps.get(ci).iter().zip(eval_cycle(ci, &val)) {
                    if val[m as usize] != v {
                        val[m as usize] = v;
                        push_readers(m as usize, &val, &mut queued);
                    }
                }
            } else {
                let rd = comps.get(ci)[0] as usize;
                let v = eval_node(rd, &val, &base_known);
                if v != val[rd] {
                    val[rd] = v;
                    push_readers(rd, &val, &mut queued);
                }
            }
        }
    }
    tracing::debug!(
        sccs_ms,
        first_ms,
        rounds_ms = t0.elapsed().as_secs_f64() * 1000.0 - first_ms,
        "constant analysis's phases"
    );
    Ok((val, comps, rounds))
}

/// Optimizes a network: constants, never-legal inputs and constant bases folded, identical
/// gates merged, single-input gates collapsed, nodes no output reaches dropped.
pub fn optimize(net: &Net, budget: &Budget) -> Result<Net, GroundError> {
    optimize_with(net, budget, true)
}

/// [`optimize`]; without `reachable`, only what is constant in every state (not just the
/// reachable ones) is folded, in one round of the constant analysis (see [`constants`]):
/// cheaper on a very large network, with the rest left to a later [`optimize`].
pub fn optimize_with(net: &Net, budget: &Budget, reachable: bool) -> Result<Net, GroundError> {
    let t0 = std::time::Instant::now();
    let (vals, comps, rounds) = constants(net, budget, reachable)?;
    tracing::debug!(rounds, nodes = net.nodes.len(), ms = t0.elapsed().as_secs_f64() * 1000.0, "constant analysis");

    // Rebuild, dependencies first, with constants folded and gates hash-consed. The table
    // holds node ids, each with its hash's 32 bits (no key of its own to allocate, and no
    // gate read again when the table grows; see `interp::terms::table_hash`).
    let mut nodes = vec![Node { kind: Kind::False, inputs: Vec::new() }];
    let mut map: Vec<Ref> = vec![Ref::FALSE; net.nodes.len()];
    let hash_of = |and: bool, ins: &[Ref]| fold32(rustc_hash::FxBuildHasher.hash_one((and, ins)));
    let mut consed: hashbrown::HashTable<(u32, u32)> = hashbrown::HashTable::new();
    let known = |n: usize| match vals[n] {
        // Inputs are never constant true; an input known false is one never legal.
        V::T => Some(Ref::TRUE),
        V::F => Some(Ref::FALSE),
        V::U => None,
    };
    let simplify = |inputs: &[Ref], and: bool, map: &[Ref], v: &mut Vec<Ref>| {
        let neutral = if and { Ref::TRUE } else { Ref::FALSE };
        v.clear();
        v.extend(
            inputs.iter().map(|r| if r.neg() { map[r.node()].not() } else { map[r.node()] }).filter(|&r| r != neutral),
        );
        v.sort_unstable();
        v.dedup();
    };
    let mut ins: Vec<Ref> = Vec::new();
    for (ci, comp) in comps.iter().enumerate() {
        if ci % 65536 == 0 {
            budget.check_time("optimizing the network")?;
        }
        if comps.is_cyclic(ci) {
            let live: Vec<usize> = comp.iter().map(|&n| n as usize).filter(|&n| known(n).is_none()).collect();
            for &n in comp {
                if let Some(c) = known(n as usize) {
                    map[n as usize] = c;
                }
            }
            for &n in &live {
                map[n] = Ref::new(nodes.len() as u32, false);
                nodes.push(Node { kind: net.nodes[n].kind.clone(), inputs: Vec::new() });
            }
            for &n in &live {
                let and = net.nodes[n].kind == Kind::And;
                simplify(&net.nodes[n].inputs, and, &map, &mut ins);
                nodes[map[n].node()].inputs = ins.clone();
            }
            continue;
        }
        let n = comp[0] as usize;
        if let Some(c) = known(n) {
            map[n] = c;
            continue;
        }
        let old = &net.nodes[n];
        map[n] = match old.kind {
            Kind::False => Ref::FALSE,
            Kind::Base(_) | Kind::Input(_) => {
                nodes.push(Node { kind: old.kind.clone(), inputs: Vec::new() });
                Ref::new(nodes.len() as u32 - 1, false)
            }
            Kind::And | Kind::Or => {
                let and = old.kind == Kind::And;
                simplify(&old.inputs, and, &map, &mut ins);
                let contradiction = ins.windows(2).any(|w| w[0].node() == w[1].node());
                if contradiction {
                    if and {
                        Ref::FALSE
                    } else {
                        Ref::TRUE
                    }
                } else if ins.len() == 1 {
                    ins[0]
                } else if ins.is_empty() {
                    if and {
                        Ref::TRUE
                    } else {
                        Ref::FALSE
                    }
                } else {
                    let h = hash_of(and, &ins);
                    let same = |&(k, hk): &(u32, u32)| {
                        hk == h && {
                            let nd = &nodes[k as usize];
                            (nd.kind == Kind::And) == and && nd.inputs == ins
                        }
                    };
                    match consed.entry(table_hash(h), same, |&(_, h)| table_hash(h)) {
                        hashbrown::hash_table::Entry::Occupied(e) => Ref::new(e.get().0, false),
                        hashbrown::hash_table::Entry::Vacant(e) => {
                            let k = nodes.len() as u32;
                            e.insert((k, h));
                            nodes.push(Node { kind: old.kind.clone(), inputs: ins.clone() });
                            Ref::new(k, false)
                        }
                    }
                }
            }
        };
    }
    drop(consed);
    let m = |r: Ref| if r.neg() { map[r.node()].not() } else { map[r.node()] };
    let mut out = Net {
        nodes,
        roles: net.roles.clone(),
        bases: net.bases.clone(),
        base_ref: net.base_ref.iter().map(|&r| m(r)).collect(),
        init: net.init.clone(),
        next: net.next.iter().map(|&r| m(r)).collect(),
        inputs: net.inputs.clone(),
        input_ref: net.input_ref.iter().map(|&r| m(r)).collect(),
        legal: net.legal.iter().map(|&r| m(r)).collect(),
        goals: net.goals.iter().map(|gs| gs.iter().map(|&(r, v)| (m(r), v)).collect()).collect(),
        terminal: m(net.terminal),
    };
    // A base whose node is constant needs no next; an input never legal needs no legal.
    for b in 0..out.bases.len() {
        if out.base_ref[b].is_const() {
            out.next[b] = out.base_ref[b];
        }
    }
    let tp = std::time::Instant::now();
    prune(&mut out);
    tracing::debug!(
        ms = t0.elapsed().as_secs_f64() * 1000.0,
        prune_ms = tp.elapsed().as_secs_f64() * 1000.0,
        "optimized"
    );
    Ok(out)
}

/// Keeps only the nodes some output depends on, renumbered in order.
fn prune(net: &mut Net) {
    let mut keep = vec![false; net.nodes.len()];
    keep[0] = true;
    let mut stack: Vec<usize> = Vec::new();
    let outputs = net
        .next
        .iter()
        .chain(&net.legal)
        .chain(net.goals.iter().flatten().map(|(r, _)| r))
        .chain(std::iter::once(&net.terminal))
        .chain(&net.base_ref)
        .chain(&net.input_ref);
    for r in outputs {
        stack.push(r.node());
    }
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut keep[n], true) {
            continue;
        }
        stack.extend(net.nodes[n].inputs.iter().map(|r| r.node()));
    }
    // Unused inputs and bases are kept only if they are outputs of some role (they are).
    let mut new_id = vec![u32::MAX; net.nodes.len()];
    let mut nodes = Vec::with_capacity(keep.iter().filter(|&&k| k).count());
    for (i, n) in std::mem::take(&mut net.nodes).into_iter().enumerate() {
        if keep[i] {
            new_id[i] = nodes.len() as u32;
            nodes.push(n);
        }
    }
    let m = |r: Ref| Ref::new(new_id[r.node()], r.neg());
    for n in &mut nodes {
        for r in &mut n.inputs {
            *r = m(*r);
        }
    }
    net.nodes = nodes;
    for r in net
        .next
        .iter_mut()
        .chain(&mut net.legal)
        .chain(net.goals.iter_mut().flatten().map(|(r, _)| r))
        .chain(std::iter::once(&mut net.terminal))
        .chain(&mut net.base_ref)
        .chain(&mut net.input_ref)
    {
        *r = m(*r);
    }
}

/// Rewrites that change the network's shape (run before a second [`optimize`], which folds
/// and merges what they leave behind):
///
/// - *Factoring*: an OR whose AND inputs share a literal, `(a ∧ x) ∨ (a ∧ y)`, becomes
///   `a ∧ (x ∨ y)`, greedily by the most shared literal. GDL's frame axioms (a cell keeps its
///   content unless some move touches it) otherwise give one AND per cell and move.
/// - *Move complements*: in a legal joint move each role makes exactly one move, so an OR
///   over more than half of a role's possible moves equals the negation of an OR over the
///   others. Nodes that read inputs are evaluated only when `next_state` has set exactly one
///   input per role, so the rewrite is exact where it is read. Not where the others hold an
///   *off-turn* move: in a game with a legal guard (see
///   [`legal_guards`](super::machine::legal_guards)), a move legal without its role's guard,
///   such as `noop` while the other side moves. It is played every other turn, and as an
///   input of every complement it would flip them all (breakthrough's 64 frame conditions).
/// - *Turn complements* (before move complements): the same across roles where the turn
///   provably alternates (see [`turn_complements`]).
pub fn restructure(mut net: Net) -> Net {
    // What the turn analysis reads of the network as it is (factoring adds nodes and rewires
    // ORs, but leaves the kinds and outputs it reads alone).
    let (guard, guarded) = super::machine::legal_guards(&net);
    let turn = turn_moves(&net, &guard, &guarded);
    let mut nodes = std::mem::take(&mut net.nodes);
    let mut fanout = vec![0u32; nodes.len()];
    for n in &nodes {
        for r in &n.inputs {
            fanout[r.node()] += 1;
        }
    }
    for r in net.outputs() {
        fanout[r.node()] += 1;
    }
    let cyclic: Vec<bool> = {
        let mut c = vec![false; nodes.len()];
        let comps = node_sccs(nodes.len(), 0..nodes.len(), |v| &nodes[v].inputs);
        for (ci, comp) in comps.iter().enumerate() {
            if comps.is_cyclic(ci) {
                for &n in comp {
                    c[n as usize] = true;
                }
            }
        }
        c
    };
    let t0 = std::time::Instant::now();
    let ors: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].kind == Kind::Or && !cyclic[i]).collect();
    for o in ors {
        let inputs = std::mem::take(&mut nodes[o].inputs);
        nodes[o].inputs = factor_or(&mut nodes, inputs, &fanout, &cyclic);
    }
    tracing::debug!(ms = t0.elapsed().as_secs_f64() * 1000.0, "factored");
    let mut complement: FxHashMap<Vec<Ref>, Ref> = FxHashMap::default();
    if let Some(moves) = turn {
        turn_complements(&moves, &mut nodes, &mut complement);
    }
    // Move complements.
    let mut live: Vec<Vec<Ref>> = vec![Vec::new(); net.roles.len()];
    let mut role_of_node: FxHashMap<usize, usize> = FxHashMap::default();
    for (k, &(r, _)) in net.inputs.iter().enumerate() {
        let i = net.input_ref[k];
        if !i.is_const() {
            live[r].push(i);
            role_of_node.insert(i.node(), r);
        }
    }
    let off_turn: rustc_hash::FxHashSet<Ref> = {
        (0..net.inputs.len())
            .filter(|&k| {
                let g = guard[net.inputs[k].0];
                g.is_some() && !guarded[k] && Some(net.legal[k]) != g && !net.input_ref[k].is_const()
            })
            .map(|k| net.input_ref[k])
            .collect()
    };
    for o in 0..nodes.len() {
        if nodes[o].kind != Kind::Or {
            continue;
        }
        let mut groups: Vec<Vec<Ref>> = vec![Vec::new(); live.len()];
        for r in &nodes[o].inputs {
            if !r.neg() {
                if let Some(&role) = role_of_node.get(&r.node()) {
                    groups[role].push(*r);
                }
            }
        }
        for (role, group) in groups.iter_mut().enumerate() {
            if group.len() < 2 || 2 * group.len() <= live[role].len() {
                continue;
            }
            group.sort_unstable();
            let mut others: Vec<Ref> = live[role].iter().copied().filter(|r| group.binary_search(r).is_err()).collect();
            others.sort_unstable();
            if others.iter().any(|r| off_turn.contains(r)) {
                continue;
            }
            let replacement = negated_or(&mut nodes, &mut complement, others);
            nodes[o].inputs.retain(|r| group.binary_search(r).is_err());
            nodes[o].inputs.push(replacement);
        }
    }
    // The ANDs factoring took apart are read by nothing now: dropped before the next pass.
    net.nodes = nodes;
    prune(&mut net);
    net
}

/// `¬(r₁ ∨ … ∨ rₙ)` for sorted `refs`, one shared node per set (`TRUE` for none).
fn negated_or(nodes: &mut Vec<Node>, made: &mut FxHashMap<Vec<Ref>, Ref>, refs: Vec<Ref>) -> Ref {
    match refs.len() {
        0 => Ref::TRUE,
        1 => refs[0].not(),
        _ => *made.entry(refs).or_insert_with_key(|refs| {
            nodes.push(Node { kind: Kind::Or, inputs: refs.clone() });
            Ref::new(nodes.len() as u32 - 1, true)
        }),
    }
}

/// The moves of a turn-taking game that only the role whose turn it is can play, if the
/// game is one: every role has a legal guard (see [`legal_guards`](super::machine::legal_guards))
/// that is a base; exactly one guard holds initially and the guards' next values are the
/// guards themselves, permuted (`(next (control white)) :- (true (control black))`), so
/// exactly one holds in every reachable state; and every move of a role is either guarded
/// or legal only under another role's guard (`(legal white noop) :- (true (control
/// black))`). Then in every legal joint move exactly one role plays a guarded move: the
/// role whose guard holds plays one of its guarded moves, the others their off-turn moves.
pub(crate) fn turn_moves(net: &Net, guard: &[Option<Ref>], guarded: &[bool]) -> Option<rustc_hash::FxHashSet<usize>> {
    let base_of = |r: Ref| match net.nodes[r.node()].kind {
        Kind::Base(b) if !r.neg() && !r.is_const() => Some(b as usize),
        _ => None,
    };
    let bases: Vec<usize> = guard.iter().map(|g| g.and_then(base_of)).collect::<Option<_>>()?;
    let mut sorted = bases.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != bases.len() || bases.iter().filter(|&&b| net.init[b]).count() != 1 {
        return None;
    }
    let mut next: Vec<usize> = bases.iter().map(|&b| base_of(net.next[b])).collect::<Option<_>>()?;
    next.sort_unstable();
    if next != sorted {
        return None;
    }
    let mut moves = rustc_hash::FxHashSet::default();
    for (k, &(role, _)) in net.inputs.iter().enumerate() {
        let i = net.input_ref[k];
        if i.is_const() || net.legal[k] == Ref::FALSE {
            continue;
        }
        if guarded[k] {
            moves.insert(i.node());
        } else if !base_of(net.legal[k]).is_some_and(|b| bases.contains(&b) && b != bases[role]) {
            return None;
        }
    }
    Some(moves)
}

/// *Turn complements*: in a turn-taking game (see [`turn_moves`]) an OR over the guarded
/// moves of all roles (through ORs of such moves) holds iff the one guarded move played is
/// among them, so it equals the negation of an OR over the other guarded moves. Where those
/// are fewer, it becomes that: breakthrough's frame condition for a cell, "some move that
/// touches neither this cell", becomes "no move touching this cell" (14 moves, not 290).
fn turn_complements(moves: &rustc_hash::FxHashSet<usize>, nodes: &mut Vec<Node>, made: &mut FxHashMap<Vec<Ref>, Ref>) {
    let all: Vec<Ref> = {
        let mut v: Vec<Ref> = moves.iter().map(|&n| Ref::new(n as u32, false)).collect();
        v.sort_unstable();
        v
    };
    // Per OR: the guarded moves it is the OR of, or None if it reads anything else.
    let n = nodes.len();
    let mut sets: Vec<Option<Option<Vec<Ref>>>> = vec![None; n];
    fn set_of(
        o: usize,
        nodes: &[Node],
        moves: &rustc_hash::FxHashSet<usize>,
        sets: &mut Vec<Option<Option<Vec<Ref>>>>,
    ) -> Option<Vec<Ref>> {
        if let Some(s) = &sets[o] {
            return s.clone();
        }
        sets[o] = Some(None); // cycles read as "anything else"
        let mut out = Vec::new();
        let mut ok = nodes[o].kind == Kind::Or;
        for &r in &nodes[o].inputs {
            if !ok {
                break;
            }
            if r.neg() {
                ok = false;
            } else if moves.contains(&r.node()) {
                out.push(r);
            } else if nodes[r.node()].kind == Kind::Or {
                match set_of(r.node(), nodes, moves, sets) {
                    Some(s) => out.extend(s),
                    None => ok = false,
                }
            } else {
                ok = false;
            }
        }
        let res = ok.then(|| {
            out.sort_unstable();
            out.dedup();
            out
        });
        sets[o] = Some(res.clone());
        res
    }
    for o in 0..n {
        if nodes[o].kind != Kind::Or {
            continue;
        }
        let Some(s) = set_of(o, nodes, moves, &mut sets) else { continue };
        if 2 * s.len() <= all.len() || s.len() < 2 {
            continue;
        }
        let rest: Vec<Ref> = all.iter().copied().filter(|r| s.binary_search(r).is_err()).collect();
        let replacement = negated_or(nodes, made, rest);
        nodes[o].inputs = vec![replacement];
    }
}

/// Factors the inputs of one OR; new nodes are appended to `nodes`. An AND input may be
/// taken apart if this OR is its only reader (one reader, outside any cycle).
fn factor_or(nodes: &mut Vec<Node>, inputs: Vec<Ref>, fanout: &[u32], cyclic: &[bool]) -> Vec<Ref> {
    let factorable = |r: &Ref, nodes: &[Node]| {
        let n = r.node();
        !r.neg() && nodes[n].kind == Kind::And && fanout[n] == 1 && !cyclic[n]
    };
    // Terms of the disjunction: each a conjunction of literals, with the node it came from
    // (whose inputs are moved out, and back if the term is kept as it is).
    let mut terms: Vec<(Vec<Ref>, Option<Ref>)> = Vec::new();
    let mut out: Vec<Ref> = Vec::new();
    for r in inputs {
        if factorable(&r, nodes) {
            terms.push((std::mem::take(&mut nodes[r.node()].inputs), Some(r)));
        } else {
            out.push(r);
        }
    }
    out.extend(factor_terms(nodes, terms));
    out
}

/// Factors a disjunction of conjunctions greedily by the most shared literal; returns the
/// disjuncts. Literals are taken in order of how many terms share them (counted once, up
/// front, from the (literal, term) pairs sorted), each taking the terms still free that hold
/// it. Unchanged terms keep their original node; only factored ones make new nodes.
fn factor_terms(nodes: &mut Vec<Node>, terms: Vec<(Vec<Ref>, Option<Ref>)>) -> Vec<Ref> {
    let mut pairs: Vec<(Ref, u32)> = Vec::new();
    if terms.len() >= 2 {
        pairs = terms.iter().enumerate().flat_map(|(i, (t, _))| t.iter().map(move |&l| (l, i as u32))).collect();
        pairs.sort_unstable();
    }
    factor_sorted(nodes, terms, pairs)
}

/// [`factor_terms`] given the (literal, term) pairs sorted. A group's terms keep their
/// order, so its pairs, taken from these in order, come sorted too: only the top level
/// sorts.
fn factor_sorted(nodes: &mut Vec<Node>, terms: Vec<(Vec<Ref>, Option<Ref>)>, pairs: Vec<(Ref, u32)>) -> Vec<Ref> {
    let keep = |nodes: &mut Vec<Node>, t: Vec<Ref>, orig: Option<Ref>| match orig {
        Some(r) => {
            nodes[r.node()].inputs = t;
            r
        }
        None => new_and(nodes, t),
    };
    let mut out = Vec::new();
    if terms.len() < 2 {
        for (t, orig) in terms {
            out.push(keep(nodes, t, orig));
        }
        return out;
    }
    // (terms holding it, literal, its pairs' start)
    let mut order: Vec<(usize, Ref, usize)> = Vec::new();
    let mut i = 0;
    while i < pairs.len() {
        let mut j = i + 1;
        while j < pairs.len() && pairs[j].0 == pairs[i].0 {
            j += 1;
        }
        if j - i >= 2 {
            order.push((j - i, pairs[i].0, i));
        }
        i = j;
    }
    order.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // The groups, each with the literal they share; each term's group and place in it.
    let mut groups: Vec<(Ref, Vec<u32>)> = Vec::new();
    let mut group_of = vec![u32::MAX; terms.len()];
    let mut place = vec![0u32; terms.len()];
    for (count, best, start) in order {
        let group: Vec<u32> =
            pairs[start..start + count].iter().map(|p| p.1).filter(|&i| group_of[i as usize] == u32::MAX).collect();
        if group.len() < 2 {
            continue;
        }
        for (k, &i) in group.iter().enumerate() {
            group_of[i as usize] = groups.len() as u32;
            place[i as usize] = k as u32;
        }
        groups.push((best, group));
    }
    let mut inner_pairs: Vec<Vec<(Ref, u32)>> = vec![Vec::new(); groups.len()];
    for &(l, i) in &pairs {
        let g = group_of[i as usize];
        if g != u32::MAX && l != groups[g as usize].0 {
            inner_pairs[g as usize].push((l, place[i as usize]));
        }
    }
    drop(pairs);
    for ((best, group), inner_pairs) in groups.into_iter().zip(inner_pairs) {
        let inner: Vec<(Vec<Ref>, Option<Ref>)> = group
            .iter()
            .map(|&i| (terms[i as usize].0.iter().copied().filter(|&l| l != best).collect::<Vec<_>>(), None))
            .collect();
        if inner.iter().any(|(t, _)| t.is_empty()) {
            // best ∧ (true ∨ ...) = best.
            out.push(best);
            continue;
        }
        let refs = factor_sorted(nodes, inner, inner_pairs);
        let inner_or = if refs.len() == 1 {
            refs[0]
        } else {
            nodes.push(Node { kind: Kind::Or, inputs: refs });
            Ref::new(nodes.len() as u32 - 1, false)
        };
        out.push(new_and(nodes, vec![best, inner_or]));
    }
    for (i, (t, orig)) in terms.into_iter().enumerate() {
        if group_of[i] == u32::MAX {
            out.push(keep(nodes, t, orig));
        }
    }
    out
}

fn new_and(nodes: &mut Vec<Node>, lits: Vec<Ref>) -> Ref {
    if lits.len() == 1 {
        return lits[0];
    }
    nodes.push(Node { kind: Kind::And, inputs: lits });
    Ref::new(nodes.len() as u32 - 1, false)
}

impl Net {
    /// Every ref the machine reads: bases, inputs, next, legal, goals, terminal.
    pub fn outputs(&self) -> impl Iterator<Item = Ref> + '_ {
        self.next
            .iter()
            .chain(&self.legal)
            .chain(self.goals.iter().flatten().map(|(r, _)| r))
            .chain(std::iter::once(&self.terminal))
            .chain(&self.base_ref)
            .chain(&self.input_ref)
            .copied()
    }
}
