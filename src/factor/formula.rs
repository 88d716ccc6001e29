//! Legal, goal and terminal as Boolean formulas over per-factor conditions.
//!
//! A *factor atom* is a node of the network whose support (the bases it reads, through
//! gates) lies within one factor and the action-independent part (or within the latter
//! alone). Above the atoms, the network's multi-factor gates are kept as they are, so a
//! formula computes exactly the function its root computes; what it shows is how the root
//! combines the factors (Cox et al., Definitions 3.13 and 3.14, legal and goal
//! partitionability, generalized from conjunctions to any combination).

use super::net_info::{NONE, V};
use crate::propnet::Ref;
use serde::Serialize;

/// A factor id, `IID` for the action-independent part, `MANY` for several factors.
pub(crate) const IID: u32 = NONE;
pub(crate) const MANY: u32 = NONE - 1;

/// A node of a formula DAG.
#[derive(Clone, Debug)]
pub enum FNode {
    Const(bool),
    /// A network node whose value depends on one factor only (`factor`), or on the
    /// action-independent part only (`factor == None`); `bare` if it is a base itself.
    Atom {
        factor: Option<u32>,
        node: u32,
        bare: bool,
    },
    /// AND (or OR) of other formula nodes, each possibly negated.
    Gate {
        and: bool,
        kids: Vec<(u32, bool)>,
    },
}

/// A formula DAG shared by every root (legal, goals, terminal).
#[derive(Clone, Debug, Default)]
pub struct Formulas {
    pub nodes: Vec<FNode>,
}

/// How a root combines its factors.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Combination {
    /// Constant.
    Constant,
    /// Reads the action-independent part only.
    ActionIndependent,
    /// Reads one factor (and perhaps the action-independent part).
    OneFactor,
    /// A conjunction of per-factor conditions (the paper's partitionability).
    Conjunction,
    /// A disjunction of per-factor conditions (terminal "any board ends", races).
    Disjunction,
    /// Any other Boolean combination (sums, "won more boards", ...).
    Boolean,
}

impl Combination {
    pub fn name(self) -> &'static str {
        match self {
            Combination::Constant => "constant",
            Combination::ActionIndependent => "action-independent",
            Combination::OneFactor => "one factor",
            Combination::Conjunction => "conjunction",
            Combination::Disjunction => "disjunction",
            Combination::Boolean => "boolean combination",
        }
    }
}

/// A formula root: a node and whether it is negated.
pub type FRef = (u32, bool);

impl Formulas {
    /// Evaluates a root, with `atom(factor, node)` giving each atom's node value.
    pub fn eval(&self, root: FRef, atom: &mut dyn FnMut(Option<u32>, u32) -> bool) -> bool {
        fn go(
            f: &Formulas,
            i: u32,
            atom: &mut dyn FnMut(Option<u32>, u32) -> bool,
            memo: &mut Vec<Option<bool>>,
        ) -> bool {
            if let Some(b) = memo[i as usize] {
                return b;
            }
            let b = match &f.nodes[i as usize] {
                FNode::Const(b) => *b,
                FNode::Atom { factor, node, .. } => atom(*factor, *node),
                FNode::Gate { and, kids } => {
                    if *and {
                        kids.iter().all(|&(k, neg)| go(f, k, atom, memo) != neg)
                    } else {
                        kids.iter().any(|&(k, neg)| go(f, k, atom, memo) != neg)
                    }
                }
            };
            memo[i as usize] = Some(b);
            b
        }
        let mut memo = vec![None; self.nodes.len()];
        go(self, root.0, atom, &mut memo) != root.1
    }

    /// The factors whose atoms a root reads (sorted, without the action-independent part).
    pub fn factors(&self, root: FRef) -> Vec<u32> {
        let mut out: Vec<u32> = self.atoms(root).into_iter().filter_map(|(k, _)| k).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The network nodes of the atoms under `root`.
    pub(crate) fn atom_nodes(&self, root: FRef) -> Vec<u32> {
        self.atoms(root).into_iter().map(|a| a.1).collect()
    }

    /// The atoms under `root`, each once: (factor, or `None` for the action-independent
    /// part; network node).
    fn atoms(&self, root: FRef) -> Vec<(Option<u32>, u32)> {
        let mut seen: rustc_hash::FxHashSet<u32> = Default::default();
        let mut out = Vec::new();
        let mut stack = vec![root.0];
        while let Some(i) = stack.pop() {
            if !seen.insert(i) {
                continue;
            }
            match &self.nodes[i as usize] {
                FNode::Atom { factor, node, .. } => out.push((*factor, *node)),
                FNode::Gate { kids, .. } => stack.extend(kids.iter().map(|k| k.0)),
                _ => {}
            }
        }
        out
    }

    /// How `root` combines its factors.
    pub fn combination(&self, root: FRef) -> Combination {
        match &self.nodes[root.0 as usize] {
            FNode::Const(_) => return Combination::Constant,
            FNode::Atom { factor: None, .. } => return Combination::ActionIndependent,
            FNode::Atom { .. } => return Combination::OneFactor,
            FNode::Gate { .. } => {}
        }
        if self.factors(root).len() <= 1 {
            return Combination::OneFactor;
        }
        // Pure: every gate below the root is of the root's effective kind.
        let kind = self.effective_and(root);
        let mut stack = vec![root];
        while let Some(r) = stack.pop() {
            if let FNode::Gate { kids, .. } = &self.nodes[r.0 as usize] {
                if self.effective_and(r) != kind {
                    return Combination::Boolean;
                }
                stack.extend(kids.iter().map(|&(k, n)| (k, n != r.1)));
            }
        }
        if kind == Some(true) {
            Combination::Conjunction
        } else {
            Combination::Disjunction
        }
    }

    /// Whether a ref to a gate acts as an AND (an AND, or a negated OR).
    fn effective_and(&self, r: FRef) -> Option<bool> {
        match &self.nodes[r.0 as usize] {
            FNode::Gate { and, .. } => Some(*and != r.1),
            _ => None,
        }
    }

    /// The conjuncts of `root`, if it is a conjunction of atoms (through ANDs and negated
    /// ORs), with `iid(node)` deciding action-independent atoms where given (`None`: leave
    /// them as conjuncts) and disjunctions allowed where all but one disjunct is decided
    /// false. `Ok(None)` if decided false; `Err(node)` if it is no conjunction, with the
    /// first disjunction over several factors found (its factors are [`Formulas::factors`]).
    /// `memo` keeps the decided values of gates for one `iid` (a memo per `iid`).
    #[allow(clippy::type_complexity)]
    pub(crate) fn conjuncts(
        &self,
        root: FRef,
        iid: &mut dyn FnMut(Option<u32>, u32) -> V,
        memo: &mut Vec<Option<V>>,
    ) -> Result<Option<Vec<(Option<u32>, u32, bool)>>, u32> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some((i, neg)) = stack.pop() {
            match &self.nodes[i as usize] {
                FNode::Const(b) => {
                    if *b == neg {
                        return Ok(None);
                    }
                }
                FNode::Atom { factor, node, .. } => match iid(*factor, *node).flip(neg) {
                    V::F => return Ok(None),
                    V::T => continue,
                    V::U => out.push((*factor, *node, neg)),
                },
                FNode::Gate { and, kids } => {
                    if *and != neg {
                        stack.extend(kids.iter().map(|&(k, n)| (k, n != neg)));
                    } else {
                        // A disjunction: keep it only if all disjuncts but one are decided
                        // false by the action-independent part.
                        let mut live = Vec::new();
                        for &(k, n) in kids {
                            match self.decided(k, n != neg, iid, memo) {
                                V::T => {
                                    live.clear();
                                    live.push(None);
                                    break;
                                }
                                V::F => {}
                                V::U => live.push(Some((k, n != neg))),
                            }
                        }
                        match live.as_slice() {
                            [] => return Ok(None),
                            [None] => {}
                            [Some(x)] => stack.push(*x),
                            _ => return Err(i),
                        }
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(Some(out))
    }

    /// The value of a formula node when only action-independent atoms are known (gates'
    /// values kept in `memo`, indexed by node).
    pub(crate) fn decided(
        &self,
        i: u32,
        neg: bool,
        iid: &mut dyn FnMut(Option<u32>, u32) -> V,
        memo: &mut Vec<Option<V>>,
    ) -> V {
        let v = match &self.nodes[i as usize] {
            FNode::Const(b) => V::of(*b),
            FNode::Atom { factor, node, .. } => iid(*factor, *node),
            FNode::Gate { and, kids } => {
                if memo.len() < self.nodes.len() {
                    memo.resize(self.nodes.len(), None);
                }
                match memo[i as usize] {
                    Some(v) => v,
                    None => {
                        let v = super::net_info::gate(kids.iter().map(|&(k, n)| self.decided(k, n, iid, memo)), *and);
                        memo[i as usize] = Some(v);
                        v
                    }
                }
            }
        };
        v.flip(neg)
    }

    /// The factor sets of the conjunctive terms of `root` (its formula multiplied out, as
    /// in a disjunctive normal form, but over factor sets only, and polarity-blind),
    /// unless the root is a pure conjunction or disjunction of per-factor conditions. An AND
    /// is multiplied out only where at most one of its inputs spans several factors and the
    /// others are single bases (which undoes the factoring of shared literals, `a ∧ (x ∨
    /// y)`: a cell beside the lines through it); otherwise, or past [`MAX_TERMS`] term sets, a node stands for one term
    /// over all its factors. Single-factor terms are left out.
    pub fn term_sets(&self, root: FRef, memo: &mut Vec<Option<std::rc::Rc<Vec<Vec<u32>>>>>, out: &mut Vec<Vec<u32>>) {
        if matches!(self.combination(root), Combination::Conjunction | Combination::Disjunction) {
            return;
        }
        memo.resize(self.nodes.len(), None);
        let t = self.terms(root, memo);
        out.extend(t.iter().filter(|x| x.len() >= 2).cloned());
    }

    fn terms(&self, r: FRef, memo: &mut Vec<Option<std::rc::Rc<Vec<Vec<u32>>>>>) -> std::rc::Rc<Vec<Vec<u32>>> {
        // Polarity-blind: a negated formula couples what the formula couples.
        let r = (r.0, false);
        let and = self.effective_and(r);
        if let Some(t) = &memo[r.0 as usize] {
            return t.clone();
        }
        let t: Vec<Vec<u32>> = match &self.nodes[r.0 as usize] {
            FNode::Const(_) | FNode::Atom { factor: None, .. } => vec![Vec::new()],
            FNode::Atom { factor: Some(k), .. } => vec![vec![*k]],
            FNode::Gate { kids, .. } => {
                let and = and.unwrap_or(false);
                let kid_terms: Vec<std::rc::Rc<Vec<Vec<u32>>>> =
                    kids.iter().map(|&(k, _)| self.terms((k, false), memo)).collect();
                let spans = |t: &Vec<Vec<u32>>| t.iter().any(|x| x.len() >= 2);
                let plain = |k: u32| {
                    matches!(
                        self.nodes[k as usize],
                        FNode::Atom { bare: true, .. } | FNode::Atom { factor: None, .. } | FNode::Const(_)
                    )
                };
                let multi = kid_terms.iter().filter(|t| spans(t)).count();
                let others_plain = kids.iter().zip(&kid_terms).all(|(&(k, _), t)| spans(t) || plain(k));
                if and && (multi >= 2 || (multi == 1 && !others_plain)) {
                    // A conjunction of several multi-factor conditions ("no line for x and
                    // none for o"), or of one with conditions that are no single base ("x
                    // has won board 1 and some line is open"), is one term: multiplying it
                    // out would pair conditions that are judged apart.
                    vec![self.factors(r)]
                } else {
                    let mut acc: Vec<Vec<u32>> = if and { vec![Vec::new()] } else { Vec::new() };
                    for kt in &kid_terms {
                        if and {
                            let mut next = Vec::with_capacity(acc.len() * kt.len());
                            for a in &acc {
                                for b in kt.iter() {
                                    let mut u: Vec<u32> = a.iter().chain(b).copied().collect();
                                    u.sort_unstable();
                                    u.dedup();
                                    next.push(u);
                                }
                            }
                            next.sort();
                            next.dedup();
                            acc = next;
                        } else {
                            acc.extend(kt.iter().cloned());
                            acc.sort();
                            acc.dedup();
                        }
                        if acc.len() > MAX_TERMS {
                            acc = vec![self.factors(r)];
                            break;
                        }
                    }
                    acc
                }
            }
        };
        let t = std::rc::Rc::new(t);
        if !r.1 {
            memo[r.0 as usize] = Some(t.clone());
        }
        t
    }
}

/// Term sets kept per formula node before it is taken as one term over its factors.
pub const MAX_TERMS: usize = 4096;

/// Pairs of factor sets that *cross* (meet, and neither holds the other): as two lines of
/// tic-tac-toe share a cell, each couples its factors with the other's, so that no factor's
/// outcome can be judged apart. Nested or disjoint sets (a sum over boards whose boards are
/// judged inside) couple nothing. Returns the unions to merge.
pub fn crossings(mut sets: Vec<Vec<u32>>) -> Vec<Vec<u32>> {
    sets.sort();
    sets.dedup();
    let meet = |a: &[u32], b: &[u32]| a.iter().any(|x| b.binary_search(x).is_ok());
    let within = |a: &[u32], b: &[u32]| a.iter().all(|x| b.binary_search(x).is_ok());
    let mut out = Vec::new();
    for i in 0..sets.len() {
        for j in i + 1..sets.len() {
            let (a, b) = (&sets[i], &sets[j]);
            if meet(a, b) && !within(a, b) && !within(b, a) {
                let mut u: Vec<u32> = a.iter().chain(b).copied().collect();
                u.sort_unstable();
                u.dedup();
                out.push(u);
            }
        }
    }
    out
}

/// Builds formulas over a network given each node's factor (`IID`, a factor, or `MANY`) and
/// three-valued constant values.
pub(crate) struct Builder<'a> {
    pub net: &'a crate::propnet::Net,
    pub fs: &'a [u32],
    pub val: &'a [V],
    pub cyclic: &'a [bool],
    pub f: Formulas,
    pub memo: Vec<u32>,
    /// Multi-factor nodes on cycles met (they cannot be written as a formula).
    pub cyclic_many: bool,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(net: &'a crate::propnet::Net, fs: &'a [u32], val: &'a [V], cyclic: &'a [bool]) -> Builder<'a> {
        Builder { net, fs, val, cyclic, f: Formulas::default(), memo: vec![NONE; net.nodes.len()], cyclic_many: false }
    }

    fn push(&mut self, n: FNode) -> u32 {
        self.f.nodes.push(n);
        self.f.nodes.len() as u32 - 1
    }

    /// The formula of a ref.
    pub(crate) fn root(&mut self, r: Ref) -> FRef {
        // Iterative post-order over multi-factor gates.
        let mut stack = vec![(r.node() as u32, false)];
        while let Some((v, expanded)) = stack.pop() {
            let vi = v as usize;
            if self.memo[vi] != NONE {
                continue;
            }
            let val = self.val[vi];
            if val != V::U {
                let id = self.push(FNode::Const(val == V::T));
                self.memo[vi] = id;
                continue;
            }
            let fs = self.fs[vi];
            if fs != MANY || self.cyclic[vi] {
                if fs == MANY {
                    self.cyclic_many = true;
                }
                let factor = if fs == IID || fs == MANY { None } else { Some(fs) };
                let bare = matches!(self.net.nodes[vi].kind, crate::propnet::build::Kind::Base(_));
                let id = self.push(FNode::Atom { factor, node: v, bare });
                self.memo[vi] = id;
                continue;
            }
            let nd = &self.net.nodes[vi];
            if !expanded {
                stack.push((v, true));
                for x in &nd.inputs {
                    if self.memo[x.node()] == NONE {
                        stack.push((x.node() as u32, false));
                    }
                }
                continue;
            }
            let and = nd.kind == crate::propnet::build::Kind::And;
            let mut kids = Vec::new();
            for x in &nd.inputs {
                if self.val[x.node()] != V::U {
                    continue; // the gate is not constant, so constant inputs are units
                }
                kids.push((self.memo[x.node()], x.neg()));
            }
            let id = self.push(FNode::Gate { and, kids });
            self.memo[vi] = id;
        }
        (self.memo[r.node()], r.neg())
    }
}
