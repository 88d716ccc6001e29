//! Pictures of a hyperstate space graph: Graphviz DOT text, and a self-contained SVG drawn
//! here (the HSG is acyclic, so a layered drawing needs no layout engine). Shapes follow the
//! paper's figure 3: diamonds win, squares fail; implicitly failed hyperstates are squares
//! too ("functionally the same as fail"), eventually winnable ones circles, open ones dashed.

use super::{Hsg, Tag};
use std::fmt::Write;

/// The hyperstates drawn: at most `cap`, those of the lowest layers first (the start's
/// neighbourhood), in id order.
pub fn shown(hsg: &Hsg, cap: usize) -> Vec<bool> {
    let mut ids: Vec<u32> = (0..hsg.hyper.len() as u32).collect();
    ids.sort_by_key(|&h| (hsg.hyper[h as usize].layer, h));
    let mut keep = vec![false; hsg.hyper.len()];
    for &h in ids.iter().take(cap) {
        keep[h as usize] = true;
    }
    keep
}

/// The drawn hyperstates that `h`'s critical actions lead to, each once.
fn drawn_targets(hsg: &Hsg, h: usize, keep: &[bool]) -> Vec<u32> {
    let mut t: Vec<u32> = hsg.edges(h as u32).iter().map(|e| e.1).filter(|&t| keep[t as usize]).collect();
    t.sort_unstable();
    t.dedup();
    t
}

fn colour(tag: Tag) -> &'static str {
    match tag {
        Tag::Win => "#2e9e44",
        Tag::Fail => "#d0312d",
        Tag::EventuallyWinnable => "#a8dcb2",
        Tag::ImplicitlyFailed => "#f2a489",
        Tag::Open => "#dddddd",
    }
}

/// Up to two labels of the critical actions from `from` to `to`, and how many more.
fn edge_text(hsg: &Hsg, labels: &[String], from: u32, to: u32) -> String {
    let all: Vec<&str> = hsg.edges(from).iter().filter(|e| e.1 == to).map(|e| labels[e.0 as usize].as_str()).collect();
    let mut t = all.iter().take(2).copied().collect::<Vec<_>>().join(", ");
    if all.len() > 2 {
        let _ = write!(t, " +{}", all.len() - 2);
    }
    t
}

fn node_text(hsg: &Hsg, h: u32) -> String {
    let hs = &hsg.hyper[h as usize];
    let ld = hs.loss_distance.map_or("∞".to_string(), |d| d.to_string());
    let n = hsg.states(h).len();
    format!("h{h}: {n} state{}, ld {ld}", if n == 1 { "" } else { "s" })
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Graphviz DOT text of the hyperstates `keep` selects (edges between them).
pub fn dot(hsg: &Hsg, labels: &[String], keep: &[bool], title: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "digraph hsg {{\n  label=\"{}\";\n  rankdir=TB;\n  node [style=filled];",
        title.replace('"', "'")
    );
    for (h, hs) in hsg.hyper.iter().enumerate() {
        if !keep[h] {
            continue;
        }
        let shape = match hs.tag {
            Tag::Win => "diamond",
            Tag::Fail | Tag::ImplicitlyFailed => "box",
            Tag::EventuallyWinnable | Tag::Open => "ellipse",
        };
        let style = if hs.tag == Tag::Open { "filled,dashed" } else { "filled" };
        let _ = writeln!(
            out,
            "  h{h} [label=\"{}\\n{}\", shape={shape}, style=\"{style}\", fillcolor=\"{}\"];",
            node_text(hsg, h as u32),
            hs.tag.name(),
            colour(hs.tag)
        );
    }
    for h in (0..hsg.hyper.len()).filter(|&h| keep[h]) {
        for t in drawn_targets(hsg, h, keep) {
            let text = edge_text(hsg, labels, h as u32, t).replace('"', "'");
            let _ = writeln!(out, "  h{h} -> h{t} [label=\"{text}\"];");
        }
    }
    out.push_str("}\n");
    out
}

/// A layered SVG drawing of the hyperstates `keep` selects: one row per layer (longest chain
/// of critical actions from the start), nodes ordered in a row by the mean position of their
/// drawn predecessors, area growing with the number of states.
pub fn svg(hsg: &Hsg, labels: &[String], keep: &[bool], title: &str) -> String {
    const ROW: f64 = 110.0;
    const COL: f64 = 150.0;
    const MARGIN: f64 = 60.0;
    const LEGEND: f64 = 135.0;
    let layers = hsg.hyper.iter().enumerate().filter(|(h, _)| keep[*h]).map(|(_, hs)| hs.layer).max().unwrap_or(0);
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); layers as usize + 1];
    for (h, hs) in hsg.hyper.iter().enumerate() {
        if keep[h] {
            rows[hs.layer as usize].push(h as u32);
        }
    }
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); hsg.hyper.len()];
    for h in 0..hsg.hyper.len() {
        for &(_, t) in hsg.edges(h as u32) {
            if keep[h] && keep[t as usize] && preds[t as usize].last() != Some(&(h as u32)) {
                preds[t as usize].push(h as u32);
            }
        }
    }
    let mut x = vec![0.0f64; hsg.hyper.len()];
    for row in rows.iter_mut() {
        let key = |h: u32| {
            let p = &preds[h as usize];
            if p.is_empty() {
                f64::MAX
            } else {
                p.iter().map(|&q| x[q as usize]).sum::<f64>() / p.len() as f64
            }
        };
        let mut keyed: Vec<(f64, u32)> = row.iter().map(|&h| (key(h), h)).collect();
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        *row = keyed.into_iter().map(|(_, h)| h).collect();
        for (i, &h) in row.iter().enumerate() {
            x[h as usize] = i as f64;
        }
    }
    let widest = rows.iter().map(|r| r.len()).max().unwrap_or(1).max(1);
    // Wide enough for the legend's five entries too.
    let width = (MARGIN * 2.0 + COL * widest as f64).max(MARGIN * 2.0 + LEGEND * 5.0);
    let height = MARGIN * 2.0 + ROW * layers as f64 + 40.0;
    let pos = |h: u32| {
        let hs = &hsg.hyper[h as usize];
        let row = &rows[hs.layer as usize];
        let offset = (width - COL * row.len() as f64) / 2.0;
        (offset + COL * (x[h as usize] + 0.5), MARGIN + 20.0 + ROW * hs.layer as f64)
    };
    let radius = |h: u32| 10.0 + 6.0 * (hsg.states(h).len() as f64).ln().max(0.0);
    let small = keep.iter().filter(|&&k| k).count() <= 40;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    out.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n");
    let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(out, "<text x=\"{MARGIN}\" y=\"24\" font-size=\"14\">{}</text>", escape(title));
    for h in (0..hsg.hyper.len()).filter(|&h| keep[h]) {
        for t in drawn_targets(hsg, h, keep) {
            let ((x1, y1), (x2, y2)) = (pos(h as u32), pos(t));
            let (dx, dy) = (x2 - x1, y2 - y1);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (r1, r2) = (radius(h as u32), radius(t) + 2.0);
            let (ax, ay, bx, by) = (x1 + dx * r1 / len, y1 + dy * r1 / len, x2 - dx * r2 / len, y2 - dy * r2 / len);
            let _ = writeln!(
                out,
                "<line x1=\"{ax:.1}\" y1=\"{ay:.1}\" x2=\"{bx:.1}\" y2=\"{by:.1}\" stroke=\"#555\" marker-end=\"url(#arrow)\"/>"
            );
            if small {
                let _ = writeln!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#444\" text-anchor=\"middle\">{}</text>",
                    (ax + bx) / 2.0,
                    (ay + by) / 2.0,
                    escape(&edge_text(hsg, labels, h as u32, t))
                );
            }
        }
    }
    for (h, hs) in hsg.hyper.iter().enumerate() {
        if !keep[h] {
            continue;
        }
        let (cx, cy) = pos(h as u32);
        let r = radius(h as u32);
        let fill = colour(hs.tag);
        let dash = if hs.tag == Tag::Open { " stroke-dasharray=\"4,3\"" } else { "" };
        match hs.tag {
            Tag::Win => {
                let _ = writeln!(
                    out,
                    "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{fill}\" stroke=\"#222\"/>",
                    cx,
                    cy - r,
                    cx + r,
                    cy,
                    cx,
                    cy + r,
                    cx - r,
                    cy
                );
            }
            Tag::Fail | Tag::ImplicitlyFailed => {
                let _ = writeln!(
                    out,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\" stroke=\"#222\"/>",
                    cx - r * 0.8,
                    cy - r * 0.8,
                    r * 1.6,
                    r * 1.6
                );
            }
            Tag::EventuallyWinnable | Tag::Open => {
                let _ = writeln!(
                    out,
                    "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{r:.1}\" fill=\"{fill}\" stroke=\"#222\"{dash}/>"
                );
            }
        }
        let _ = writeln!(
            out,
            "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            cy + r + 13.0,
            escape(&node_text(hsg, h as u32))
        );
    }
    let legend = [
        ("win", Tag::Win),
        ("fail", Tag::Fail),
        ("eventually winnable", Tag::EventuallyWinnable),
        ("implicitly failed", Tag::ImplicitlyFailed),
        ("open", Tag::Open),
    ];
    for (i, (name, tag)) in legend.iter().enumerate() {
        let lx = MARGIN + LEGEND * i as f64;
        let ly = height - 18.0;
        let _ = writeln!(
            out,
            "<rect x=\"{lx}\" y=\"{:.0}\" width=\"12\" height=\"12\" fill=\"{}\" stroke=\"#222\"/><text x=\"{:.0}\" y=\"{ly:.0}\">{name}</text>",
            ly - 10.0,
            colour(*tag),
            lx + 16.0
        );
    }
    out.push_str("</svg>\n");
    out
}
