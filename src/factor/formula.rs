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
use std::rc::Rc;

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

/// Pushes the elements of sorted `a` that sorted `b` lacks: by binary search where `a` is
/// much the smaller, else in one pass over both.
fn push_missing(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    if a.len() * 16 < b.len() {
        out.extend(a.iter().filter(|x| b.binary_search(x).is_err()));
        return;
    }
    let mut j = 0;
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j == b.len() || b[j] != x {
            out.push(x);
        }
    }
}

/// The union of two sorted lists, sorted.
fn merge_union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len() + b.len()));
    while i < a.len() || j < b.len() {
        let x = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                i += 1;
                j += 1;
                x
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                x
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (None, None) => unreachable!("the loop's condition"),
        };
        out.push(x);
    }
    out
}

/// Per formula node, the factors it reads ([`Formulas::factors_memo`]). Where every factor
/// is below [`MASK_FACTORS`], as bit sets of `words` words per node (gt_two_thirds_6p's goals,
/// sums over 606 factors on 294K formula nodes: 102K distinct sets of 156 factors on
/// average, 0.26 s as interned lists); otherwise as lists, equal sets one allocation
/// (interned), so that a gate skips by pointer every kid that reads what its largest kid
/// reads. [`Formulas::union_memo`]'s other unions are lists.
#[derive(Default)]
pub struct FactorMemo {
    sets: Vec<Option<std::rc::Rc<[u32]>>>,
    interned: rustc_hash::FxHashSet<std::rc::Rc<[u32]>>,
    /// Words per node's bit set: `None` until the first factor set is asked for, then 0
    /// where some factor is too large for bit sets.
    words: Option<usize>,
    masks: Vec<u64>,
    masked: Vec<bool>,
}

/// Factor sets are bit sets (at most 16 words per formula node) where every factor is below
/// this,
pub const MASK_FACTORS: usize = 1024;

/// and where the bit sets of all the formula nodes take at most this many words (64 MB).
pub const MASK_WORDS: usize = 8 << 20;

impl FactorMemo {
    /// A memo that keeps factor sets as lists even where bit sets would do (for tests that
    /// compare the two).
    #[cfg(test)]
    pub(crate) fn lists() -> FactorMemo {
        FactorMemo { words: Some(0), ..FactorMemo::default() }
    }

    fn intern(&mut self, set: Vec<u32>) -> std::rc::Rc<[u32]> {
        if let Some(s) = self.interned.get(&set[..]) {
            return s.clone();
        }
        let s: std::rc::Rc<[u32]> = std::rc::Rc::from(set);
        self.interned.insert(s.clone());
        s
    }
}

/// What [`Formulas::term_sets`] keeps per node over many roots of one DAG: the term sets
/// (as lists, or as bit sets of 1 to 16 words where the root reads factors below 1024 only),
/// and the factors read.
#[derive(Default)]
pub struct TermMemo {
    lists: Vec<Option<Rc<Vec<Vec<u32>>>>>,
    m1: Vec<Option<Rc<Vec<[u64; 1]>>>>,
    m2: Vec<Option<Rc<Vec<[u64; 2]>>>>,
    m4: Vec<Option<Rc<Vec<[u64; 4]>>>>,
    m8: Vec<Option<Rc<Vec<[u64; 8]>>>>,
    m16: Vec<Option<Rc<Vec<[u64; 16]>>>>,
    pub factors: FactorMemo,
    /// Term sets that may still be made (products and unions) before every node not yet
    /// multiplied out stands for one term over its factors.
    pub work_left: usize,
}

impl TermMemo {
    /// A memo for one DAG, allowed `work` term sets.
    pub fn new(work: usize) -> TermMemo {
        TermMemo { work_left: work, ..TermMemo::default() }
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

    /// The factors whose atoms a root reads (sorted, without the action-independent part),
    /// kept per node in `memo` (for many roots over one DAG).
    pub fn factors_memo(&self, root: FRef, memo: &mut FactorMemo) -> std::rc::Rc<[u32]> {
        let Some(at) = self.mask(root, memo) else {
            return self.union_memo(root, memo, &|factor, _| factor.into_iter().collect());
        };
        if let Some(s) = memo.sets.get(root.0 as usize).and_then(|s| s.clone()) {
            return s;
        }
        let w = memo.words.unwrap_or(0);
        let s: std::rc::Rc<[u32]> = std::rc::Rc::from(<Vec<u32> as TermSet>::of_words(&memo.masks[at..at + w]));
        if memo.sets.len() < self.nodes.len() {
            memo.sets.resize(self.nodes.len(), None);
        }
        memo.sets[root.0 as usize] = Some(s.clone());
        s
    }

    /// The factors under `root` as a term set (from the node's bit set where there is one).
    fn factor_term<T: TermSet>(&self, root: FRef, memo: &mut FactorMemo) -> T {
        match self.mask(root, memo) {
            Some(at) => T::of_words(&memo.masks[at..at + memo.words.unwrap_or(0)]),
            None => T::of(&self.factors_memo(root, memo)),
        }
    }

    /// Where `root`'s factor set starts in `memo.masks` (`None`: lists, some factor too large
    /// for bit sets). The first call sizes the memo for this DAG.
    fn mask(&self, root: FRef, memo: &mut FactorMemo) -> Option<usize> {
        let words = *memo.words.get_or_insert_with(|| {
            let top = self
                .nodes
                .iter()
                .filter_map(|n| match n {
                    FNode::Atom { factor: Some(k), .. } => Some(*k as usize + 1),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            let words = top.div_ceil(64);
            if top <= MASK_FACTORS && self.nodes.len() * words <= MASK_WORDS {
                words
            } else {
                0
            }
        });
        if words == 0 {
            return None;
        }
        if memo.masked.len() < self.nodes.len() {
            memo.masked.resize(self.nodes.len(), false);
            memo.masks.resize(self.nodes.len() * words, 0);
        }
        self.mask_set(root.0, words, memo);
        Some(root.0 as usize * words)
    }

    fn mask_set(&self, i: u32, words: usize, memo: &mut FactorMemo) {
        if memo.masked[i as usize] {
            return;
        }
        // The node's words are zero until now, and no kid reaches it (a DAG): its kids' sets
        // are or-ed in in place, so a frame of this recursion holds no set.
        let at = i as usize * words;
        match &self.nodes[i as usize] {
            FNode::Atom { factor: Some(k), .. } => memo.masks[at + *k as usize / 64] |= 1 << (k % 64),
            FNode::Atom { factor: None, .. } | FNode::Const(_) => {}
            FNode::Gate { kids, .. } => {
                for &(k, _) in kids {
                    self.mask_set(k, words, memo);
                    let from = k as usize * words;
                    for j in 0..words {
                        memo.masks[at + j] |= memo.masks[from + j];
                    }
                }
            }
        }
        memo.masked[i as usize] = true;
    }

    /// Per node, the union over the atoms under it of `leaf(factor, network node)` (a sorted
    /// set), kept in `memo` (for many roots over one DAG; one `leaf` per memo).
    pub(crate) fn union_memo(
        &self,
        root: FRef,
        memo: &mut FactorMemo,
        leaf: &dyn Fn(Option<u32>, u32) -> Vec<u32>,
    ) -> std::rc::Rc<[u32]> {
        if memo.sets.len() < self.nodes.len() {
            memo.sets.resize(self.nodes.len(), None);
        }
        self.union_set(root.0, memo, leaf)
    }

    fn union_set(
        &self,
        i: u32,
        memo: &mut FactorMemo,
        leaf: &dyn Fn(Option<u32>, u32) -> Vec<u32>,
    ) -> std::rc::Rc<[u32]> {
        if let Some(s) = &memo.sets[i as usize] {
            return s.clone();
        }
        let s: std::rc::Rc<[u32]> = match &self.nodes[i as usize] {
            FNode::Atom { factor, node, .. } => memo.intern(leaf(*factor, *node)),
            FNode::Const(_) => memo.intern(Vec::new()),
            FNode::Gate { kids, .. } => {
                let sets: Vec<std::rc::Rc<[u32]>> = kids.iter().map(|&(k, _)| self.union_set(k, memo, leaf)).collect();
                // Most gates read what their largest kid reads: that kid's set is shared;
                // the others' factors not in it are gathered, sorted once and merged in
                // once (a gate over many small kids costs their sizes, not kids × its size).
                let acc = sets.iter().max_by_key(|s| s.len()).cloned().unwrap_or_else(|| std::rc::Rc::from([]));
                let mut extra: Vec<u32> = Vec::new();
                for s in sets.iter().filter(|s| !std::rc::Rc::ptr_eq(s, &acc)) {
                    push_missing(s, &acc, &mut extra);
                }
                if extra.is_empty() {
                    acc
                } else {
                    extra.sort_unstable();
                    extra.dedup();
                    memo.intern(merge_union(&acc, &extra))
                }
            }
        };
        memo.sets[i as usize] = Some(s.clone());
        s
    }

    /// How `root` combines its factors (the factors of nodes kept in `memo`).
    pub fn combination(&self, root: FRef, memo: &mut FactorMemo) -> Combination {
        match &self.nodes[root.0 as usize] {
            FNode::Const(_) => return Combination::Constant,
            FNode::Atom { factor: None, .. } => return Combination::ActionIndependent,
            FNode::Atom { .. } => return Combination::OneFactor,
            FNode::Gate { .. } => {}
        }
        if self.factors_memo(root, memo).len() <= 1 {
            return Combination::OneFactor;
        }
        // Pure: every gate below the root is of the root's effective kind (each node met
        // once per polarity).
        let kind = self.effective_and(root);
        let mut stack = vec![root];
        let mut seen: rustc_hash::FxHashSet<FRef> = Default::default();
        while let Some(r) = stack.pop() {
            if !seen.insert(r) {
                continue;
            }
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
    /// first disjunction over several factors found (its factors are [`Formulas::factors_memo`]).
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
    pub fn term_sets(&self, root: FRef, memo: &mut TermMemo, out: &mut Vec<Vec<u32>>) {
        if matches!(self.combination(root, &mut memo.factors), Combination::Conjunction | Combination::Disjunction) {
            return;
        }
        // Over factors below 1024 (every node's are among the root's), a term set is a bit
        // set of 1 to 16 words (no allocation per term set).
        let top = self.factors_memo(root, &mut memo.factors).last().map_or(0, |&k| k as usize + 1);
        match top.div_ceil(64) {
            0 | 1 => self.masked(root, &mut memo.m1, &mut memo.factors, &mut memo.work_left, out),
            2 => self.masked(root, &mut memo.m2, &mut memo.factors, &mut memo.work_left, out),
            3 | 4 => self.masked(root, &mut memo.m4, &mut memo.factors, &mut memo.work_left, out),
            5..=8 => self.masked(root, &mut memo.m8, &mut memo.factors, &mut memo.work_left, out),
            9..=16 => self.masked(root, &mut memo.m16, &mut memo.factors, &mut memo.work_left, out),
            _ => {
                memo.lists.resize(self.nodes.len(), None);
                let t = self.terms(root, &mut memo.lists, &mut memo.factors, &mut memo.work_left);
                out.extend(t.iter().filter(|x| x.size() >= 2).cloned());
            }
        }
    }

    /// [`Formulas::term_sets`] with term sets as bit sets of `W` words.
    fn masked<const W: usize>(
        &self,
        root: FRef,
        memo: &mut Vec<Option<Rc<Vec<[u64; W]>>>>,
        fmemo: &mut FactorMemo,
        work: &mut usize,
        out: &mut Vec<Vec<u32>>,
    ) {
        memo.resize(self.nodes.len(), None);
        let t = self.terms(root, memo, fmemo, work);
        out.extend(t.iter().filter(|x| x.size() >= 2).map(|x| <Vec<u32> as TermSet>::of_words(x)));
    }

    fn terms<T: TermSet>(
        &self,
        r: FRef,
        memo: &mut Vec<Option<Rc<Vec<T>>>>,
        fmemo: &mut FactorMemo,
        work: &mut usize,
    ) -> Rc<Vec<T>> {
        // Polarity-blind: a negated formula couples what the formula couples.
        let r = (r.0, false);
        let and = self.effective_and(r);
        if let Some(t) = &memo[r.0 as usize] {
            return t.clone();
        }
        let t: Vec<T> = match &self.nodes[r.0 as usize] {
            FNode::Const(_) | FNode::Atom { factor: None, .. } => vec![T::empty()],
            FNode::Atom { factor: Some(k), .. } => vec![T::of(&[*k])],
            FNode::Gate { kids, .. } => {
                let and = and.unwrap_or(false);
                let kid_terms: Vec<Rc<Vec<T>>> =
                    kids.iter().map(|&(k, _)| self.terms((k, false), memo, fmemo, work)).collect();
                let spans = |t: &Vec<T>| t.iter().any(|x| x.size() >= 2);
                let plain = |k: u32| {
                    matches!(
                        self.nodes[k as usize],
                        FNode::Atom { bare: true, .. } | FNode::Atom { factor: None, .. } | FNode::Const(_)
                    )
                };
                let multi = kid_terms.iter().filter(|t| spans(t)).count();
                let others_plain = kids.iter().zip(&kid_terms).all(|(&(k, _), t)| spans(t) || plain(k));
                let one_term = and && (multi >= 2 || (multi == 1 && !others_plain));
                // The term sets multiplying out would make, at most (partial products past
                // MAX_TERMS end it), within what is left of the work bound.
                let affordable = one_term || {
                    let (mut bound, mut cost) = (1usize, 0usize);
                    for t in &kid_terms {
                        let n = t.len().max(1);
                        cost += if and { bound * n } else { n };
                        bound = (bound * n).min(MAX_TERMS + 1);
                    }
                    let ok = cost <= *work;
                    // Spent: once a node is cut, the bound is reached for good (the caller
                    // sees `work_left == 0`).
                    *work = if ok { *work - cost } else { 0 };
                    ok
                };
                if one_term || !affordable {
                    // A conjunction of several multi-factor conditions ("no line for x and
                    // none for o"), or of one with conditions that are no single base ("x
                    // has won board 1 and some line is open"), is one term: multiplying it
                    // out would pair conditions that are judged apart. Past the work bound
                    // (MAX_TERM_WORK), a node is one term too, and the caller merges every
                    // factor (the term sets found are incomplete).
                    vec![self.factor_term::<T>(r, fmemo)]
                } else {
                    let mut acc: Vec<T> = if and { vec![T::empty()] } else { Vec::new() };
                    for kt in &kid_terms {
                        if and {
                            let mut next = Vec::with_capacity(acc.len() * kt.len());
                            for a in &acc {
                                for b in kt.iter() {
                                    next.push(a.union(b));
                                }
                            }
                            next.sort_unstable();
                            next.dedup();
                            acc = next;
                        } else {
                            // A disjunction's terms are its kids' (sorted once, below).
                            acc.extend(kt.iter().cloned());
                            continue;
                        }
                        if acc.len() > MAX_TERMS {
                            acc = vec![self.factor_term::<T>(r, fmemo)];
                            break;
                        }
                    }
                    if !and {
                        acc.sort_unstable();
                        acc.dedup();
                        // The union only grows: past the bound at the end as at some kid.
                        if acc.len() > MAX_TERMS {
                            acc = vec![self.factor_term::<T>(r, fmemo)];
                        }
                    }
                    acc
                }
            }
        };
        let t = Rc::new(t);
        memo[r.0 as usize] = Some(t.clone());
        t
    }
}

/// A set of factors, as [`Formulas::terms`] multiplies them out: a sorted list, or a bit
/// set where every factor is below 1024 (the same sets, found much faster).
trait TermSet: Clone + Ord {
    fn empty() -> Self;
    fn of(factors: &[u32]) -> Self;
    /// From a bit set (factor `k` is bit `k % 64` of word `k / 64`), whose bits beyond the
    /// term set's own words are zero.
    fn of_words(words: &[u64]) -> Self;
    fn union(&self, other: &Self) -> Self;
    fn size(&self) -> usize;
}

impl TermSet for Vec<u32> {
    fn empty() -> Self {
        Vec::new()
    }
    fn of(factors: &[u32]) -> Self {
        factors.to_vec()
    }
    fn of_words(words: &[u64]) -> Self {
        (0..64 * words.len() as u32).filter(|&k| words[k as usize / 64] >> (k % 64) & 1 == 1).collect()
    }
    fn union(&self, other: &Self) -> Self {
        let mut u: Vec<u32> = self.iter().chain(other).copied().collect();
        u.sort_unstable();
        u.dedup();
        u
    }
    fn size(&self) -> usize {
        self.len()
    }
}

impl<const W: usize> TermSet for [u64; W] {
    fn empty() -> Self {
        [0; W]
    }
    fn of(factors: &[u32]) -> Self {
        let mut m = [0; W];
        for &k in factors {
            m[k as usize / 64] |= 1 << (k % 64);
        }
        m
    }
    fn of_words(words: &[u64]) -> Self {
        debug_assert!(words.iter().skip(W).all(|&w| w == 0), "a factor beyond the term set's words");
        let mut m = [0; W];
        for (a, &w) in m.iter_mut().zip(words) {
            *a = w;
        }
        m
    }
    fn union(&self, other: &Self) -> Self {
        std::array::from_fn(|i| self[i] | other[i])
    }
    fn size(&self) -> usize {
        self.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// Term sets kept per formula node before it is taken as one term over its factors.
pub const MAX_TERMS: usize = 4096;

/// Term sets made (products and unions) per round of the analysis, over all goal and
/// terminal roots. Past it the term sets are incomplete, and the analysis merges every
/// factor (gt_two_thirds: a one-shot guess whose goals compare sums of all the guesses,
/// 7M term sets per round and 14 rounds, 49 s, before this bound; 1M is 0.2-0.8 s on its
/// 2-6 player versions, and no other game of the corpus reaches it).
pub const MAX_TERM_WORK: usize = 1_000_000;

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

#[cfg(test)]
mod tests {
    use super::*;

    /// `b ∧ (x ∨ y ∨ z)` with `b` a bare base of factor `base + 3` and `x, y, z` atoms of
    /// factors `base .. base + 3` (gates no bare base), or'ed with `c ∧ x` (`c` of factor
    /// `base + 4`): the terms {b, x}, {b, y}, {b, z}, {c, x}.
    fn formulas(base: u32) -> (Formulas, FRef) {
        let atom = |k: u32, bare: bool| FNode::Atom { factor: Some(base + k), node: k, bare };
        let nodes = vec![
            atom(0, false),
            atom(1, false),
            atom(2, false),
            atom(3, true),
            atom(4, true),
            FNode::Gate { and: false, kids: vec![(0, false), (1, true), (2, false)] },
            FNode::Gate { and: true, kids: vec![(3, false), (5, false)] },
            FNode::Gate { and: true, kids: vec![(4, false), (0, true)] },
            FNode::Gate { and: false, kids: vec![(6, false), (7, false)] },
        ];
        (Formulas { nodes }, (8, false))
    }

    fn terms(base: u32, work: usize) -> (Vec<Vec<u32>>, usize) {
        let (f, root) = formulas(base);
        let mut memo = TermMemo::new(work);
        let mut out = Vec::new();
        f.term_sets(root, &mut memo, &mut out);
        out.sort();
        let out = out.into_iter().map(|t| t.into_iter().map(|k| k - base).collect()).collect();
        (out, memo.work_left)
    }

    /// The term sets are the same as bit sets (factors below 1024) and as lists; the work
    /// bound, once passed, is spent, and every node not yet multiplied out stands for one
    /// term over its factors.
    #[test]
    fn term_sets_as_bit_sets_or_lists_and_the_work_bound() {
        assert_eq!(merge_union(&[1, 3, 9], &[2, 3, 5]), [1, 2, 3, 5, 9]);
        let missing = |a: &[u32], b: &[u32]| {
            let mut out = Vec::new();
            push_missing(a, b, &mut out);
            out
        };
        assert_eq!(missing(&[2, 5, 7], &[1, 2, 5]), [7]);
        assert_eq!(missing(&[0, 40], &(1..40).collect::<Vec<u32>>()), [0, 40]);
        assert!(missing(&[], &[1]).is_empty() && missing(&[3], &(0..40).collect::<Vec<u32>>()).is_empty());
        let want = vec![vec![0, 3], vec![0, 4], vec![1, 3], vec![2, 3]];
        for base in [0, 60, 100, 300, 600, 1000, 1100] {
            let (got, left) = terms(base, 1000);
            assert_eq!(got, want, "factors from {base}");
            assert!(left > 0 && left < 1000, "work spent: {left} left");
        }
        for base in [0, 600] {
            let (got, left) = terms(base, 4);
            assert_eq!(left, 0, "the bound is reached");
            assert_eq!(got, vec![vec![0, 1, 2, 3, 4]], "cut short: the root is one term over its factors");
        }
    }
}
