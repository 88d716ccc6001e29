//! The product of the factor machines, checked against the original machine.
//!
//! Each factor is played on its own: its bases and the action-independent ones come from
//! the state, every other base is *scrambled* (random), and each role's move is replaced by
//! the first input of its class in that factor. A factor's next values, and the per-factor
//! atoms of the legal, goal and terminal formulas, are read from that factor's evaluation
//! alone and recombined by the formulas. If the analysis is right this equals the original
//! machine whatever the scrambled bits are; [`check`] plays random playouts and compares
//! legal sets, next states (factors and IID; junk bases are not played), goals and
//! terminal at every step. A wrong "factorable" shows up as a difference.

use super::{Analysis, Place};
use crate::machine::StateMachine;
use crate::propnet::build::Kind;
use crate::propnet::{Net, PnState, PropnetMachine};
use rand::{Rng, SeedableRng};

/// Two-valued evaluation of a whole network (cycles by iteration from false, GDL's least
/// fixpoint), for checks: slow and simple.
pub struct NetEval {
    sccs: Vec<Vec<u32>>,
}

impl NetEval {
    pub fn new(net: &Net) -> NetEval {
        NetEval { sccs: super::net_info::NetInfo::new(net).sccs }
    }

    /// Every node's value when base `b` holds `bases[b]` and input `i` holds `inputs[i]`.
    pub fn eval(&self, net: &Net, bases: &[bool], inputs: &[bool], out: &mut Vec<bool>) {
        out.clear();
        out.resize(net.nodes.len(), false);
        let one = |v: usize, out: &[bool]| -> bool {
            let nd = &net.nodes[v];
            match nd.kind {
                Kind::False => false,
                Kind::Base(b) => bases[b as usize],
                Kind::Input(i) => inputs[i as usize],
                Kind::And => nd.inputs.iter().all(|x| out[x.node()] != x.neg()),
                Kind::Or => nd.inputs.iter().any(|x| out[x.node()] != x.neg()),
            }
        };
        for comp in &self.sccs {
            if comp.len() == 1 {
                let v = comp[0] as usize;
                out[v] = one(v, out);
                if !net.nodes[v].inputs.iter().any(|x| x.node() == v) {
                    continue;
                }
            }
            for _ in 0..=comp.len() {
                let mut changed = false;
                for &v in comp {
                    let b = one(v as usize, out);
                    if b != out[v as usize] {
                        out[v as usize] = b;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
        }
    }
}

/// What a check compared.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    pub states: usize,
    pub playouts: usize,
    /// Factors played on their own (the others scrambled) at each state: all of them, or a
    /// random sample of [`MAX_SCRAMBLED`] where there are more.
    pub factors_per_state: usize,
}

/// Most factors played on their own at one state: each costs an evaluation of the whole
/// network, so a game with a factor per cell (queens31lg: 1,923) would take minutes. Where
/// there are more, each state checks a fresh random sample, and the others' atoms and next
/// values are read from the state's own evaluation (exact, so the formulas still compute
/// the machine's values); every factor is checked at some states, each state less
/// thoroughly.
pub const MAX_SCRAMBLED: usize = 64;

/// Plays `playouts` random playouts of at most `max_depth` steps on `machine` (the
/// original, built from `net`) from `start` and compares the product of the factors with it
/// at every state, at most `most` factors played on their own per state (see
/// [`MAX_SCRAMBLED`], the value for checks). Returns the first difference.
#[allow(clippy::too_many_arguments)]
pub fn check(
    net: &Net,
    a: &Analysis,
    machine: &mut PropnetMachine,
    start: &PnState,
    playouts: usize,
    max_depth: usize,
    seed: u64,
    most: usize,
) -> Result<CheckReport, String> {
    let ev = NetEval::new(net);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let nb = net.bases.len();
    let roles = net.roles.len();
    let nfac = a.factors.len();
    let most = most.max(1);
    let mut report = CheckReport { factors_per_state: nfac.min(most), ..CheckReport::default() };
    let (mut legal, mut joint, mut next) = (Vec::new(), Vec::new(), start.clone());
    // Per factor its evaluation, the action-independent part's at `nfac`, the state's own at
    // `nfac + 1`; `src[k]` says which one factor `k`'s atoms and next values are read from.
    let mut vals: Vec<Vec<bool>> = vec![Vec::new(); nfac + 2];
    let mut src: Vec<usize> = (0..=nfac).collect();
    let mut order: Vec<usize> = (0..nfac).collect();
    let mut scrambled = vec![true; nfac];
    for _ in 0..playouts {
        report.playouts += 1;
        let mut state = start.clone();
        for _depth in 0..=max_depth {
            report.states += 1;
            let terminal = machine.is_terminal(&state);
            if nfac > most {
                // A fresh sample of the factors (a partial shuffle).
                scrambled.iter_mut().for_each(|x| *x = false);
                for i in 0..most {
                    let j = rng.gen_range(i..nfac);
                    order.swap(i, j);
                    scrambled[order[i]] = true;
                }
            }
            for k in 0..nfac {
                src[k] = if scrambled[k] { k } else { nfac + 1 };
            }
            // Per factor: its bases and IID from the state, the rest scrambled.
            let bits: Vec<bool> = (0..nb).map(|b| state.get(b)).collect();
            let project = |k: Option<u32>, rng: &mut rand_pcg::Pcg64Mcg| -> Vec<bool> {
                (0..nb)
                    .map(|b| match a.place[b] {
                        Place::Factor(f) if Some(f) != k => rng.gen(),
                        Place::Junk => rng.gen(),
                        _ => bits[b],
                    })
                    .collect()
            };
            // Legal, goals, terminal read no input: evaluate each factor with no move.
            let none = vec![false; net.inputs.len()];
            if nfac > most {
                ev.eval(net, &bits, &none, &mut vals[nfac + 1]);
            }
            for k in 0..=nfac {
                if k < nfac && !scrambled[k] {
                    continue;
                }
                let f = (k < nfac).then_some(k as u32);
                let p = project(f, &mut rng);
                ev.eval(net, &p, &none, &mut vals[k]);
            }
            let mut atom = |f: Option<u32>, node: u32| vals[src[f.map_or(nfac, |k| k as usize)]][node as usize];
            let pt = a.formulas.eval(a.terminal, &mut atom);
            if pt != terminal {
                return Err(format!("terminal: machine {terminal}, product {pt} in {}", facts(machine, &state)));
            }
            for role in 0..roles {
                let g = machine.goal(&state, role);
                let mut pg = None;
                let mut several = false;
                for &(v, root) in &a.goals[role] {
                    if a.formulas.eval(root, &mut atom) {
                        several |= pg.is_some();
                        pg = Some(v);
                    }
                }
                let pg = if several { None } else { pg.flatten() };
                if g != pg {
                    return Err(format!(
                        "goal of {}: machine {g:?}, product {pg:?} in {}",
                        net.roles[role],
                        facts(machine, &state)
                    ));
                }
            }
            joint.clear();
            for role in 0..roles {
                machine.legal_moves(&state, role, &mut legal);
                let mut want: Vec<u32> = legal.clone();
                want.sort_unstable();
                let mut got: Vec<u32> = (0..net.inputs.len() as u32)
                    .filter(|&i| net.inputs[i as usize].0 == role && a.formulas.eval(a.legal[i as usize], &mut atom))
                    .collect();
                got.sort_unstable();
                if want != got {
                    let name = |v: &[u32]| v.iter().map(|&m| machine.move_text(m)).collect::<Vec<_>>().join(" ");
                    return Err(format!(
                        "legal moves of {}: machine [{}], product [{}] in {}",
                        net.roles[role],
                        name(&want),
                        name(&got),
                        facts(machine, &state)
                    ));
                }
                if legal.is_empty() {
                    break;
                }
                joint.push(legal[rng.gen_range(0..legal.len())]);
            }
            if terminal || joint.len() < roles {
                break;
            }
            machine.next_state(&state, &joint, &mut next);
            // The product's next state: each factor from its own evaluation with its classes'
            // representative inputs (factors left out of the sample: from the state's own).
            if nfac > most {
                let mut inputs = vec![false; net.inputs.len()];
                for &m in &joint {
                    inputs[m as usize] = true;
                }
                ev.eval(net, &bits, &inputs, &mut vals[nfac + 1]);
            }
            for k in 0..=nfac {
                if k < nfac && !scrambled[k] {
                    continue;
                }
                let f = (k < nfac).then_some(k as u32);
                let p = project(f, &mut rng);
                let mut inputs = vec![false; net.inputs.len()];
                if let Some(fk) = f {
                    let fac = &a.factors[fk as usize];
                    for &m in &joint {
                        let role = net.inputs[m as usize].0;
                        let rep = fac.classes[role][fac.class_of[m as usize] as usize][0];
                        inputs[rep as usize] = true;
                    }
                } else {
                    for &m in &joint {
                        inputs[m as usize] = true;
                    }
                }
                ev.eval(net, &p, &inputs, &mut vals[k]);
            }
            for b in 0..nb {
                let k = match a.place[b] {
                    Place::Factor(k) => k as usize,
                    Place::Iid => nfac,
                    _ => continue,
                };
                let r = net.next[b];
                let pb = vals[src[k]][r.node()] != r.neg();
                if pb != next.get(b) {
                    let moves: Vec<String> = joint.iter().map(|&m| machine.move_text(m)).collect();
                    return Err(format!(
                        "next value of base #{b} (factor {k}): machine {}, product {pb} after [{}] in {}",
                        next.get(b),
                        moves.join(" "),
                        facts(machine, &state)
                    ));
                }
            }
            std::mem::swap(&mut state, &mut next);
        }
    }
    Ok(report)
}

fn facts(m: &PropnetMachine, s: &PnState) -> String {
    m.state_facts(s).join(" ")
}
