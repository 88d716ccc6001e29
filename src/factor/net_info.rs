//! What the factor analysis needs to know of a [`Net`] once: evaluation order (strongly
//! connected components, dependencies first), which node is which base or input, and
//! three-valued evaluation under fixed bases.

use crate::propnet::build::Kind;
use crate::propnet::{Net, Ref};

pub(crate) const NONE: u32 = u32::MAX;

/// Three-valued truth: false, true, unknown.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum V {
    F,
    T,
    U,
}

impl V {
    pub(crate) fn of(b: bool) -> V {
        if b {
            V::T
        } else {
            V::F
        }
    }
    pub(crate) fn flip(self, neg: bool) -> V {
        match (self, neg) {
            (V::F, true) => V::T,
            (V::T, true) => V::F,
            (v, _) => v,
        }
    }
}

/// Facts about a network's graph that every pass of the analysis reads.
pub(crate) struct NetInfo {
    /// Strongly connected components of the gate graph (edges from a gate to its inputs), in
    /// evaluation order: a component comes after every component it reads.
    pub sccs: Vec<Vec<u32>>,
    /// Per node: whether it lies on a cycle (a component of several nodes, or a self-loop).
    pub cyclic: Vec<bool>,
}

impl NetInfo {
    pub(crate) fn new(net: &Net) -> NetInfo {
        let n = net.nodes.len();
        let succ: Vec<Vec<usize>> = net.nodes.iter().map(|nd| nd.inputs.iter().map(|r| r.node()).collect()).collect();
        let comps = crate::graph::sccs(n, &succ);
        let mut cyclic = vec![false; n];
        for c in &comps {
            if c.len() > 1 {
                for &v in c {
                    cyclic[v] = true;
                }
            } else if succ[c[0]].contains(&c[0]) {
                cyclic[c[0]] = true;
            }
        }
        let sccs = comps.into_iter().map(|c| c.into_iter().map(|v| v as u32).collect()).collect();
        NetInfo { sccs, cyclic }
    }

    /// Three-valued values of every node when the bases in `fixed` hold the given values and
    /// everything else (other bases, inputs) is unknown. Nodes on cycles are unknown unless
    /// every input from outside their component is false and the component is all ORs and
    /// positive ANDs reading them (then false: GDL's least fixpoint); this only loses
    /// precision, never soundness.
    pub(crate) fn values(&self, net: &Net, fixed: &[Option<bool>]) -> Vec<V> {
        self.values_with(net, fixed, &[])
    }

    /// As [`NetInfo::values`], with the inputs in `never` false.
    fn values_with(&self, net: &Net, fixed: &[Option<bool>], never: &[bool]) -> Vec<V> {
        let mut val = vec![V::U; net.nodes.len()];
        for comp in &self.sccs {
            if comp.len() == 1 && !self.cyclic[comp[0] as usize] {
                let v = comp[0] as usize;
                val[v] = match net.nodes[v].kind {
                    Kind::Input(i) if never.get(i as usize).copied().unwrap_or(false) => V::F,
                    _ => eval_node(net, v, fixed, &val),
                };
            }
            // Cycles stay unknown.
        }
        val
    }

    /// As [`NetInfo::values`], and then again with every input whose legality is false
    /// there taken as false: play only ever makes legal moves, so once the fixed bases
    /// forbid a move, it is never made (a finished board's marks).
    pub(crate) fn values_legal(&self, net: &Net, fixed: &[Option<bool>]) -> Vec<V> {
        let val = self.values(net, fixed);
        let never: Vec<bool> = net.legal.iter().map(|&l| ref_value(&val, l) == V::F).collect();
        if !never.iter().any(|&b| b) {
            return val;
        }
        self.values_with(net, fixed, &never)
    }
}

/// One node's three-valued value from its inputs' values.
fn eval_node(net: &Net, v: usize, fixed: &[Option<bool>], val: &[V]) -> V {
    let nd = &net.nodes[v];
    match nd.kind {
        Kind::False => V::F,
        Kind::Base(b) => fixed.get(b as usize).copied().flatten().map_or(V::U, V::of),
        Kind::Input(_) => V::U,
        Kind::And => gate(nd.inputs.iter().map(|r| val[r.node()].flip(r.neg())), true),
        Kind::Or => gate(nd.inputs.iter().map(|r| val[r.node()].flip(r.neg())), false),
    }
}

/// AND (`and`) or OR of three-valued inputs.
pub(crate) fn gate(inputs: impl Iterator<Item = V>, and: bool) -> V {
    let (absorb, unit) = if and { (V::F, V::T) } else { (V::T, V::F) };
    let mut out = unit;
    for x in inputs {
        if x == absorb {
            return absorb;
        }
        if x == V::U {
            out = V::U;
        }
    }
    out
}

/// The value of a ref from node values.
pub(crate) fn ref_value(val: &[V], r: Ref) -> V {
    val[r.node()].flip(r.neg())
}

/// Three-valued evaluation of one ref over its cone only, memoized by `stamp` (a fresh
/// stamp per question), with `fixed` bases known and all else unknown. Cycles are unknown.
pub(crate) struct ConeEval {
    stamp: Vec<u32>,
    memo: Vec<V>,
    cur: u32,
    stack: Vec<(u32, bool)>,
}

impl ConeEval {
    pub(crate) fn new(n: usize) -> ConeEval {
        ConeEval { stamp: vec![0; n], memo: vec![V::U; n], cur: 0, stack: Vec::new() }
    }

    /// The value of `r` when `base` holds `value` (and `extra` bases hold theirs).
    pub(crate) fn eval(&mut self, net: &Net, info: &NetInfo, r: Ref, fixed: &dyn Fn(u32) -> Option<bool>) -> V {
        self.eval_moves(net, info, r, fixed, &|_| None)
    }

    /// [`ConeEval::eval`] with some inputs known too (`moves(input)`).
    pub(crate) fn eval_moves(
        &mut self,
        net: &Net,
        info: &NetInfo,
        r: Ref,
        fixed: &dyn Fn(u32) -> Option<bool>,
        moves: &dyn Fn(u32) -> Option<bool>,
    ) -> V {
        self.cur += 1;
        let cur = self.cur;
        self.stack.clear();
        self.stack.push((r.node() as u32, false));
        while let Some((v, expanded)) = self.stack.pop() {
            let vi = v as usize;
            if self.stamp[vi] == cur && !expanded {
                continue;
            }
            let nd = &net.nodes[vi];
            match nd.kind {
                Kind::False => {
                    self.stamp[vi] = cur;
                    self.memo[vi] = V::F;
                }
                Kind::Base(b) => {
                    self.stamp[vi] = cur;
                    self.memo[vi] = fixed(b).map_or(V::U, V::of);
                }
                Kind::Input(i) => {
                    self.stamp[vi] = cur;
                    self.memo[vi] = moves(i).map_or(V::U, V::of);
                }
                Kind::And | Kind::Or => {
                    if info.cyclic[vi] {
                        self.stamp[vi] = cur;
                        self.memo[vi] = V::U;
                    } else if expanded {
                        let and = nd.kind == Kind::And;
                        let memo = &self.memo;
                        self.memo[vi] = gate(nd.inputs.iter().map(|x| memo[x.node()].flip(x.neg())), and);
                        self.stamp[vi] = cur;
                    } else {
                        // Mark as in progress so a revisit through a shared input waits.
                        self.stack.push((v, true));
                        for x in &nd.inputs {
                            if self.stamp[x.node()] != cur {
                                self.stack.push((x.node() as u32, false));
                            }
                        }
                    }
                }
            }
        }
        self.memo[r.node()].flip(r.neg())
    }
}

/// Three-valued values of every node with every base and input unknown, which a question
/// changes by fixing a few bases and propagating forward through the nodes that read them
/// (in evaluation order), then undoes: a question costs the region whose value it changes,
/// not the whole cone of the node asked about ([`ConeEval`] walks the cone). Cycles stay
/// unknown, as in [`ConeEval`], so both give the same answers. Only the nodes in the cones of
/// the refs it is built for are followed (a change that reaches none of them is not spread).
pub(crate) struct Forward {
    val: Vec<V>,
    /// Per base: its node (`NONE` if it has none).
    base_node: Vec<u32>,
    /// Per node: the nodes that read it.
    readers: Vec<Vec<u32>>,
    /// Per node: its position in evaluation order.
    order: Vec<u32>,
    queued: Vec<bool>,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u32, u32)>>,
    undo: Vec<(u32, V)>,
    /// Nodes after this one in evaluation order cannot change the answer: not queued.
    limit: u32,
}

impl Forward {
    /// For questions about `targets` (and nothing else).
    pub(crate) fn new(net: &Net, info: &NetInfo, targets: &[Ref]) -> Forward {
        let n = net.nodes.len();
        let mut relevant = vec![false; n];
        let mut stack: Vec<usize> = targets.iter().map(|r| r.node()).collect();
        while let Some(v) = stack.pop() {
            if !std::mem::replace(&mut relevant[v], true) {
                stack.extend(net.nodes[v].inputs.iter().map(|r| r.node()));
            }
        }
        let mut readers: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut base_node = vec![NONE; net.bases.len()];
        for (v, nd) in net.nodes.iter().enumerate() {
            if let Kind::Base(b) = nd.kind {
                base_node[b as usize] = v as u32;
            }
            if relevant[v] {
                for r in &nd.inputs {
                    readers[r.node()].push(v as u32);
                }
            }
        }
        for r in readers.iter_mut() {
            r.sort_unstable();
            r.dedup();
        }
        let mut order = vec![0u32; n];
        let mut k = 0u32;
        for comp in &info.sccs {
            for &v in comp {
                order[v as usize] = k;
                k += 1;
            }
        }
        Forward {
            val: info.values(net, &[]),
            base_node,
            readers,
            order,
            queued: vec![false; n],
            heap: Default::default(),
            undo: Vec::new(),
            limit: u32::MAX,
        }
    }

    /// The value of `r` (one of the targets) when the bases in `fixed` hold their values
    /// (all else unknown), or `None` if more than `budget` nodes would have to be evaluated
    /// (a question whose change spreads far: [`ConeEval`] may be cheaper then).
    pub(crate) fn eval(
        &mut self,
        net: &Net,
        info: &NetInfo,
        fixed: &[(u32, bool)],
        r: Ref,
        budget: usize,
    ) -> Option<V> {
        let mut out = None;
        self.propagate(net, info, fixed, self.order[r.node()], budget, |val| out = Some(val[r.node()].flip(r.neg())));
        out
    }

    /// The values of all of `targets` (each one of the targets this was made for) when the
    /// bases in `fixed` hold their values, as [`Forward::eval`] gives them one by one, from
    /// one propagation (up to the last of them in evaluation order), into `out`; `false` (and
    /// `out` as it was) if more than `budget` nodes would have to be evaluated.
    pub(crate) fn eval_all(
        &mut self,
        net: &Net,
        info: &NetInfo,
        fixed: &[(u32, bool)],
        targets: &[Ref],
        budget: usize,
        out: &mut Vec<V>,
    ) -> bool {
        let limit = targets.iter().map(|r| self.order[r.node()]).max().unwrap_or(0);
        let mut done = false;
        self.propagate(net, info, fixed, limit, budget, |val| {
            out.clear();
            out.extend(targets.iter().map(|r| val[r.node()].flip(r.neg())));
            done = true;
        });
        done
    }

    /// Sets the bases of `fixed`, evaluates the nodes their change reaches up to `limit` in
    /// evaluation order (a node's inputs come before it, so the nodes up to `limit` get
    /// their final values), calls `read` with the values unless more than `budget` nodes
    /// would be evaluated, and restores the values as they were.
    fn propagate(
        &mut self,
        net: &Net,
        info: &NetInfo,
        fixed: &[(u32, bool)],
        limit: u32,
        budget: usize,
        read: impl FnOnce(&[V]),
    ) {
        self.limit = limit;
        for &(b, value) in fixed {
            let v = self.base_node[b as usize];
            if v != NONE {
                self.set(v, V::of(value));
            }
        }
        let mut work = 0;
        while let Some(std::cmp::Reverse((_, v))) = self.heap.pop() {
            let vi = v as usize;
            self.queued[vi] = false;
            work += 1;
            if work > budget {
                break;
            }
            let nd = &net.nodes[vi];
            if info.cyclic[vi] || !matches!(nd.kind, Kind::And | Kind::Or) {
                continue;
            }
            let val = &self.val;
            let now = gate(nd.inputs.iter().map(|x| val[x.node()].flip(x.neg())), nd.kind == Kind::And);
            self.set(v, now);
        }
        if work <= budget {
            read(&self.val);
        }
        for std::cmp::Reverse((_, v)) in self.heap.drain() {
            self.queued[v as usize] = false;
        }
        for (v, old) in self.undo.drain(..).rev() {
            self.val[v as usize] = old;
        }
    }

    /// Sets a node's value; if it changed, remembers the old one and queues its readers.
    fn set(&mut self, v: u32, now: V) {
        let old = self.val[v as usize];
        if old == now {
            return;
        }
        self.undo.push((v, old));
        self.val[v as usize] = now;
        for &w in &self.readers[v as usize] {
            if !self.queued[w as usize] && self.order[w as usize] <= self.limit {
                self.queued[w as usize] = true;
                self.heap.push(std::cmp::Reverse((self.order[w as usize], w)));
            }
        }
    }
}
