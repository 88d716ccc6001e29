//! Selected edges: inputs of ANDs counted only while the AND's *selector* holds.
//!
//! Many games keep a one-hot counter: `(step k)`, or whose turn it is. Hex keeps a group
//! number per cell for every step, so the rule for "cell (m,n) joins a group" grounds to an
//! AND with `(step k)` for each of 82 values of `k`. A count-based network updates all 82
//! counts whenever the cell's OR changes, and at most one of them (the step that holds)
//! can flip.
//!
//! A *group* is a set of bases of which at most one ever holds (see [`one_hot_groups`]). An
//! edge `y → g`, where `g` is an AND with a positive input `s` from a group (its selector),
//! may be *selected*: `g`'s count includes `y`'s contribution only while `s` is true. When `y`
//! changes, only the ANDs of the group's true members are updated; when `s` comes true (goes
//! false), `y`'s current contribution is added to (taken from) `g`. While `s` is false, `g` is
//! false whatever `y` is, so nothing is lost. The invariant holds whatever the bases are,
//! even in a state where several members hold; the group's at-most-one property only makes
//! it cheap. Edges are selected per (`y`, group) family, and only families of at least
//! [`MIN_FAMILY`] edges: a smaller one saves too little for the selector's extra work.

use super::build::{Kind, Net, Ref};
use rustc_hash::FxHashMap;

/// Families of fewer selected edges are left as plain edges.
pub(crate) const MIN_FAMILY: usize = 4;

/// Groups of base nodes of which at most one holds in every reachable state, each of at
/// least two members. A group is a connected set of bases each of whose next value is
/// another member's value (a copy, not negated) or constantly false, no member being copied
/// twice, with at most one member holding initially: `(step k)` driven by `succ`, or
/// `(control r)` passed round the roles. By induction at most one member holds in every
/// state reachable from the initial one.
pub(crate) fn one_hot_groups(net: &Net) -> Vec<Vec<u32>> {
    let nb = net.bases.len();
    let mut base_at = vec![u32::MAX; net.nodes.len()];
    for (b, r) in net.base_ref.iter().enumerate() {
        if !r.is_const() && !r.neg() {
            base_at[r.node()] = b as u32;
        }
    }
    let node_of = |b: usize| {
        let r = net.base_ref[b];
        (!r.is_const() && !r.neg()).then(|| r.node())
    };
    // The copy edges b <- pred[b], and whether each base may be in a group at all.
    let mut ok: Vec<bool> = (0..nb).map(|b| node_of(b).is_some()).collect();
    let mut copied = vec![0u32; nb];
    let mut parent: Vec<usize> = (0..nb).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for b in 0..nb {
        let r = net.next[b];
        if r == Ref::FALSE {
            continue;
        }
        let from = if r.is_const() || r.neg() { u32::MAX } else { base_at[r.node()] };
        if from == u32::MAX {
            ok[b] = false;
            continue;
        }
        copied[from as usize] += 1;
        let (x, y) = (find(&mut parent, b), find(&mut parent, from as usize));
        parent[x] = y;
    }
    let mut members: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
    for b in 0..nb {
        let root = find(&mut parent, b);
        members.entry(root).or_default().push(b);
    }
    let mut groups: Vec<Vec<u32>> = members
        .into_values()
        .filter(|m| {
            m.len() >= 2
                && m.iter().all(|&b| ok[b] && copied[b] <= 1)
                && m.iter().filter(|&&b| net.init[b]).count() <= 1
        })
        .map(|m| m.iter().map(|&b| node_of(b).expect("checked above") as u32).collect())
        .collect();
    groups.sort();
    groups
}

/// A selected edge: `y → g` counted while member `pos` of `group` (an input of `g`) holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SelEdge {
    pub y: u32,
    pub g: u32,
    pub neg: bool,
    pub group: u32,
    pub pos: u32,
}

/// The edges to select: for every AND taking part in propagation (`live`, outside cycles)
/// with a positive input from a group, its other inputs, kept in families of at least
/// [`MIN_FAMILY`] edges from one node under one group.
pub(crate) fn selected_edges(
    net: &Net,
    node_inputs: &[Vec<Ref>],
    live: &dyn Fn(usize) -> bool,
    groups: &[Vec<u32>],
) -> Vec<SelEdge> {
    let mut member = vec![(u32::MAX, 0u32); net.nodes.len()];
    for (gi, g) in groups.iter().enumerate() {
        for (p, &m) in g.iter().enumerate() {
            member[m as usize] = (gi as u32, p as u32);
        }
    }
    let mut cands = Vec::new();
    for (g, ins) in node_inputs.iter().enumerate() {
        if net.nodes[g].kind != Kind::And || !live(g) {
            continue;
        }
        // The selector: a positive input from the largest group (the most selective).
        let Some(s) = ins
            .iter()
            .filter(|r| !r.neg() && member[r.node()].0 != u32::MAX)
            .max_by_key(|r| (groups[member[r.node()].0 as usize].len(), std::cmp::Reverse(r.node())))
        else {
            continue;
        };
        let (group, pos) = member[s.node()];
        for r in ins {
            // Members of the same group stay plain (an AND of two members is rare and cheap).
            if r.node() != s.node() && member[r.node()].0 != group {
                cands.push(SelEdge { y: r.node() as u32, g: g as u32, neg: r.neg(), group, pos });
            }
        }
    }
    let mut family: FxHashMap<(u32, u32), usize> = FxHashMap::default();
    for e in &cands {
        *family.entry((e.y, e.group)).or_default() += 1;
    }
    cands.retain(|e| family[&(e.y, e.group)] >= MIN_FAMILY);
    cands
}
