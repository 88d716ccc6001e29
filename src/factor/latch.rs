//! Latches: base propositions that keep a value once they have it.
//!
//! Cox et al., Lemma 4.2 (a proposition `p` with `m(p) = 1 → m'(p) = 1`) and Lemma 4.3 (a
//! base whose transition reads itself, `w(t) = p`). Here a latch is proved, never sampled:
//! the base's next value is evaluated in three-valued logic with the base at its value and
//! every other base and every input unknown (forward from the base where its change dies out
//! soon, else over the next value's cone: both give the same answer). A result equal to the value
//! proves it stays (by induction on steps). The self-loop of Lemma 4.3 is the special case
//! where the next value is an OR with the base itself as an input.
//!
//! [`fixed_from`] proves, for a given state, the largest set of bases that keep their
//! current values together (a greatest fixpoint: assume all keep them, drop every base whose
//! next value is not then forced, repeat; moves that the assumed values make illegal are
//! never played, so they count as false), which is what latch modification (Definition
//! 4.4) may fix as constants in that state and every state after it.

use super::net_info::{ref_value, ConeEval, Forward, NetInfo, V};
use crate::propnet::build::Kind;
use crate::propnet::Net;
use serde::Serialize;

/// Which value a latch keeps.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LatchKind {
    /// Once true, always true.
    Positive,
    /// Once false, always false.
    Negative,
}

/// How it was proved.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LatchProof {
    /// Lemma 4.3: the next value is an OR reading the base itself (positive latches).
    SelfLoop,
    /// Three-valued evaluation of the next-state cone.
    Cone,
}

/// A latch (Cox et al., Lemma 4.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Latch {
    pub base: u32,
    pub kind: LatchKind,
    pub proof: LatchProof,
}

/// Nodes a forward evaluation may visit before the cone is walked instead.
const FORWARD_BUDGET: usize = 64;

/// Every latch of the network (a base may be both kinds: then it never changes once set,
/// either way).
pub fn latches(net: &Net) -> Vec<Latch> {
    latches_with(net, &NetInfo::new(net))
}

/// [`latches`] with the network's [`NetInfo`] made once by the caller.
pub(crate) fn latches_with(net: &Net, info: &NetInfo) -> Vec<Latch> {
    let mut fw = Forward::new(net, info, &net.next);
    let mut ev = ConeEval::new(net.nodes.len());
    // Forward from the base where its change dies out soon (hex's connectivity: large cones),
    // else over the cone (chess's frame rules: small cones, changes that spread far).
    let mut value = |b: u32, v: bool, nx| {
        fw.eval(net, info, &[(b, v)], nx, FORWARD_BUDGET)
            .unwrap_or_else(|| ev.eval(net, info, nx, &|x| (x == b).then_some(v)))
    };
    let mut out = Vec::new();
    for b in 0..net.bases.len() as u32 {
        let (br, nx) = (net.base_ref[b as usize], net.next[b as usize]);
        if br.is_const() {
            continue;
        }
        if nx == br || (!nx.neg() && net.nodes[nx.node()].kind == Kind::Or && net.nodes[nx.node()].inputs.contains(&br))
        {
            out.push(Latch { base: b, kind: LatchKind::Positive, proof: LatchProof::SelfLoop });
        } else if value(b, true, nx) == V::T {
            out.push(Latch { base: b, kind: LatchKind::Positive, proof: LatchProof::Cone });
        }
        if value(b, false, nx) == V::F {
            out.push(Latch { base: b, kind: LatchKind::Negative, proof: LatchProof::Cone });
        }
    }
    out
}

/// The bases that keep their values in `state` and every state reachable from it, with
/// those values (see the module docs). Action-independent bases are left out (their course
/// is known anyway), which loses precision only.
/// `iid`: the action-independent bases, if known (else found by a static analysis).
pub(crate) fn fixed_from(
    net: &Net,
    info: &NetInfo,
    state: &dyn Fn(u32) -> bool,
    iid: Option<&[u32]>,
) -> Vec<(u32, bool)> {
    let nb = net.bases.len();
    let iid = match iid {
        Some(i) => i.to_vec(),
        None => super::analyse_with(net, info, &[]).iid,
    };
    let mut claim: Vec<Option<bool>> =
        (0..nb as u32).map(|b| (!net.base_ref[b as usize].is_const()).then(|| state(b))).collect();
    for b in iid {
        claim[b as usize] = None;
    }
    loop {
        let val = info.values_legal(net, &claim);
        let mut dropped = false;
        for b in 0..nb {
            if let Some(c) = claim[b] {
                if ref_value(&val, net.next[b]) != V::of(c) {
                    claim[b] = None;
                    dropped = true;
                }
            }
        }
        if !dropped {
            break;
        }
    }
    claim.iter().enumerate().filter_map(|(b, c)| c.map(|c| (b as u32, c))).collect()
}
