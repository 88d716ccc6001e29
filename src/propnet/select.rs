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
//! even in a state where several members hold: a group's at-most-one property only makes
//! it cheap, and so do *sparse* groups ([`sparse_edges`]), bases that merely rarely hold.
//!
//! Whether a family of edges (one `y`, one group) is worth selecting depends on how often
//! `y` and the selectors change and hold: a turn flips every step, and selecting by it the
//! many ANDs of pieces that rarely move would cost more than it saves (alexChess ran 20%
//! slower so). So the machine is first compiled plain, profiled on random playouts
//! ([`Profile`]), and compiled again with the families the profile says [`worth`] it.

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
    for (b, &r) in net.next.iter().enumerate() {
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
/// with a positive input from a group, its other inputs, kept in families (from one node
/// under one group) that are [`worth`] selecting by the profile.
pub(crate) fn selected_edges(
    net: &Net,
    node_inputs: &[Vec<Ref>],
    live: &dyn Fn(usize) -> bool,
    groups: &[Vec<u32>],
    profile: &Profile,
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
    // Per (y, group): its edges per selector.
    let mut family: FxHashMap<(u32, u32), FxHashMap<u32, usize>> = FxHashMap::default();
    for e in &cands {
        *family.entry((e.y, e.group)).or_default().entry(groups[e.group as usize][e.pos as usize]).or_default() += 1;
    }
    let keep: rustc_hash::FxHashSet<(u32, u32)> =
        family.iter().filter(|&(&(y, _), per_sel)| worth(profile, y, per_sel)).map(|(&k, _)| k).collect();
    cands.retain(|e| keep.contains(&(e.y, e.group)));
    cands
}

/// Whether selecting a family of edges from `y` pays, by the profile: per change of `y`, the
/// edges it would touch (those of the selectors that hold, and a look at each of them), with
/// the selectors' own extra work (each change of a selector passes its edges' current
/// values), must come to less than half the family's edges.
fn worth(profile: &Profile, y: u32, per_sel: &FxHashMap<u32, usize>) -> bool {
    let m: usize = per_sel.values().sum();
    let fy = profile.flips[y as usize];
    if m < MIN_FAMILY || fy <= 0.0 {
        return false;
    }
    let (mut touched, mut extra) = (0.0f32, 0.0f32);
    for (&s, &e) in per_sel {
        let (p, f) = (profile.on[s as usize], profile.flips[s as usize]);
        touched += p * (e as f32 + 1.0);
        extra += f * e as f32 / fy;
    }
    touched + extra + 1.0 < 0.5 * m as f32
}

/// How often nodes hold and change in sampled random playouts (see
/// [`super::machine::PropnetMachine::profile`]): per node, the fraction of sampled phases
/// in which it holds, and its changes per phase.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    pub on: Vec<f32>,
    pub flips: Vec<f32>,
}

/// Selected edges under *sparse* selectors, chosen from a profile. A base that rarely holds
/// (hex's `(connected k m n)`: a cell in the group numbered `k`) gates the ANDs it feeds:
/// for each node `y` the selectors of its AND edges form a group of their own, so a change
/// of `y` (hex's `(transfer k)`, read by 162 ANDs) touches only the edges of the selectors
/// that hold. A family is selected when, by the profile, the edges it would touch per change
/// of `y`, with its selectors' own extra work, come to less than half its edges. The
/// groups are returned after `first_group` (the one-hot groups' count); edges in `taken`
/// (already selected) are left alone.
pub(crate) fn sparse_edges(
    net: &Net,
    node_inputs: &[Vec<Ref>],
    live: &dyn Fn(usize) -> bool,
    profile: &Profile,
    taken: &rustc_hash::FxHashSet<(u32, u32)>,
    first_group: u32,
) -> (Vec<Vec<u32>>, Vec<SelEdge>) {
    /// Selectors holding more often than this are not sparse.
    const MAX_ON: f32 = 0.25;
    let is_base = |n: usize| matches!(net.nodes[n].kind, Kind::Base(_));
    // Per y: its candidate edges (g, selector, negated).
    let mut by_y: FxHashMap<u32, Vec<(u32, u32, bool)>> = FxHashMap::default();
    for (g, ins) in node_inputs.iter().enumerate() {
        if net.nodes[g].kind != Kind::And || !live(g) {
            continue;
        }
        let Some(s) = ins
            .iter()
            .filter(|r| !r.neg() && is_base(r.node()) && profile.on[r.node()] <= MAX_ON)
            .min_by(|a, b| profile.on[a.node()].total_cmp(&profile.on[b.node()]).then(a.node().cmp(&b.node())))
        else {
            continue;
        };
        for r in ins {
            if r.node() != s.node() && !taken.contains(&(r.node() as u32, g as u32)) {
                by_y.entry(r.node() as u32).or_default().push((g as u32, s.node() as u32, r.neg()));
            }
        }
    }
    let mut ys: Vec<u32> = by_y.keys().copied().collect();
    ys.sort_unstable();
    let (mut groups, mut edges) = (Vec::new(), Vec::new());
    for y in ys {
        let cands = &by_y[&y];
        let mut per_sel: FxHashMap<u32, usize> = FxHashMap::default();
        for &(_, s, _) in cands {
            *per_sel.entry(s).or_default() += 1;
        }
        if !worth(profile, y, &per_sel) {
            continue;
        }
        let mut members: Vec<u32> = per_sel.keys().copied().collect();
        members.sort_unstable();
        let group = first_group + groups.len() as u32;
        for &(g, s, neg) in cands {
            let pos = members.binary_search(&s).expect("a member") as u32;
            edges.push(SelEdge { y, g, neg, group, pos });
        }
        groups.push(members);
    }
    (groups, edges)
}
