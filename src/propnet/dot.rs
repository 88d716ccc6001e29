//! Graphviz output of a network, for looking at small games.

use super::build::{Kind, Net, Ref};
use crate::gdl::SymbolTable;
use crate::interp::TermStore;
use std::io::{self, Write};

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Writes `net` in Graphviz dot syntax: bases as boxes, inputs as diamonds, gates as circles,
/// negated edges dashed with an open arrowhead, outputs as labelled plaintext nodes.
pub fn write_dot(net: &Net, terms: &TermStore, symbols: &SymbolTable, w: &mut impl Write) -> io::Result<()> {
    writeln!(w, "digraph propnet {{\n  rankdir=LR;\n  node [fontsize=10];")?;
    for (i, n) in net.nodes.iter().enumerate() {
        let (label, shape) = match n.kind {
            Kind::False => ("FALSE".to_string(), "plaintext"),
            Kind::Base(b) => (terms.to_string(net.bases[b as usize], symbols), "box"),
            Kind::Input(k) => {
                let (r, m) = net.inputs[k as usize];
                (format!("does {} {}", net.roles[r], terms.to_string(m, symbols)), "diamond")
            }
            Kind::And => ("AND".to_string(), "circle"),
            Kind::Or => ("OR".to_string(), "circle"),
        };
        writeln!(w, "  n{i} [label=\"{}\", shape={shape}];", esc(&label))?;
        for r in &n.inputs {
            edge(w, *r, &format!("n{i}"))?;
        }
    }
    let mut out = 0;
    let mut output = |w: &mut dyn Write, label: String, r: Ref| -> io::Result<()> {
        writeln!(w, "  o{out} [label=\"{}\", shape=plaintext];", esc(&label))?;
        edge(w, r, &format!("o{out}"))?;
        out += 1;
        Ok(())
    };
    for (k, &(r, m)) in net.inputs.iter().enumerate() {
        output(w, format!("legal {} {}", net.roles[r], terms.to_string(m, symbols)), net.legal[k])?;
    }
    for (r, gs) in net.goals.iter().enumerate() {
        for &(g, v) in gs {
            let v = v.map_or("?".to_string(), |v| v.to_string());
            output(w, format!("goal {} {v}", net.roles[r]), g)?;
        }
    }
    output(w, "terminal".into(), net.terminal)?;
    for (b, &r) in net.next.iter().enumerate() {
        if !net.base_ref[b].is_const() {
            output(w, format!("next {}", terms.to_string(net.bases[b], symbols)), r)?;
        }
    }
    writeln!(w, "}}")
}

fn edge(w: &mut dyn Write, from: Ref, to: &str) -> io::Result<()> {
    if from.neg() {
        writeln!(w, "  n{} -> {to} [style=dashed, arrowhead=odot];", from.node())
    } else {
        writeln!(w, "  n{} -> {to};", from.node())
    }
}
