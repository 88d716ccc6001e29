//! The tournament report: Markdown tables (per game, overall, head to head) and a
//! hand-written SVG chart (ratings with error bars; mean score per game with confidence
//! intervals).

use super::tournament::{Summary, Table};
use std::fmt::Write;

fn num(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "–".into()
    }
}

fn pm(x: f64, e: f64, digits: usize) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    if e.is_finite() {
        format!("{} ± {}", num(x, digits), num(e, digits))
    } else {
        num(x, digits)
    }
}

fn table_md(t: &Table, out: &mut String) {
    let _ = writeln!(out, "### {} ({} matches)\n", t.title, t.matches);
    let _ = writeln!(out, "| player | matches | mean score (95% CI) | wins | draws | losses | Elo (95%) | errors |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for r in &t.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.player,
            r.matches,
            pm(r.mean, r.ci, 1),
            r.wins,
            r.draws,
            r.losses,
            pm(r.elo, r.elo_err, 0),
            r.errors
        );
    }
    out.push('\n');
}

/// The report in Markdown.
pub fn markdown(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Tournament `{}`\n", s.name);
    let _ = writeln!(
        out,
        "{} of {} scheduled matches finished ({} aborted); start clock {} s, play clock {} s. \
         Players: {}.\n",
        s.completed + s.aborted,
        s.scheduled,
        s.aborted,
        s.start_clock,
        s.play_clock,
        s.players.join(", ")
    );
    let anchor = match &s.anchor {
        Some(a) => format!("{a} = 0"),
        None => "mean 0".into(),
    };
    let _ = writeln!(
        out,
        "Mean score: the player's goal (0-100; a player in several roles of a match counts their \
         mean), 95% CI by normal approximation. Win/draw/loss: strictly higher/equal/lower score \
         than the opponent in the match. Elo: Bradley-Terry fitted by MM iterations (draws half \
         a win, one virtual draw per pair), 400·log10 scale, anchored at {anchor}; ± is 1.96 \
         standard deviations over bootstrap resamples of the matches. Errors: turns on which the \
         manager recorded TO (late), IL (illegal or unparseable) or CE (connection error). \
         Caveats: a player with no loss (or no win) against an opponent is held finite only by \
         the virtual draw, and resampling cannot show uncertainty that the sample lacks, so such \
         ratings and their error bars are lower bounds; likewise a CI of ± 0 means every score \
         was equal, not that the mean is exact.\n"
    );
    out.push_str("## Overall\n\n");
    table_md(&s.overall, &mut out);
    if !s.heads.is_empty() {
        out.push_str("### Head to head (all games)\n\n");
        out.push_str(
            "| A | B | matches | A's mean score (95% CI) | A wins | draws | B wins |\n|---|---|---|---|---|---|---|\n",
        );
        for h in &s.heads {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                h.a,
                h.b,
                h.matches,
                pm(h.a_mean, h.a_ci, 1),
                h.wins,
                h.draws,
                h.losses
            );
        }
        out.push('\n');
    }
    out.push_str("## Per game\n\n");
    for t in &s.per_game {
        table_md(t, &mut out);
    }
    out.push_str("![ratings and scores](report.svg)\n");
    out
}

const COLORS: [&str; 8] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];

/// An error bar's length for the axis range: 0 when unknown, at most 2000.
fn bar(e: f64) -> f64 {
    if e.is_finite() && e > 0.0 {
        e.min(2000.0)
    } else {
        0.0
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A bar chart in SVG: overall Elo with error bars (left), mean score per game and player
/// with confidence intervals (right).
pub fn svg(s: &Summary) -> String {
    let players = &s.players;
    let color = |name: &str| COLORS[players.iter().position(|p| p == name).unwrap_or(0) % COLORS.len()];
    let (w, h) = (980.0f64, 420.0f64);
    let (top, bottom) = (50.0, 360.0);
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(o, r#"<text x="10" y="20" font-size="15">Tournament {}</text>"#, esc(&s.name));

    // Left panel: Elo.
    let rows: Vec<_> = s.overall.rows.iter().filter(|r| r.elo.is_finite()).collect();
    let (x0, x1) = (60.0, 330.0);
    let lo = rows.iter().map(|r| r.elo - bar(r.elo_err)).fold(0.0f64, f64::min);
    let hi = rows.iter().map(|r| r.elo + bar(r.elo_err)).fold(0.0f64, f64::max);
    let (lo, hi) = if hi - lo < 1.0 { (lo - 50.0, hi + 50.0) } else { (lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)) };
    let y = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - top);
    let _ = writeln!(o, r#"<text x="{x0}" y="40">Elo (95% bootstrap), all games</text>"#);
    let _ = writeln!(o, r##"<line x1="{x0}" y1="{:.1}" x2="{x1}" y2="{:.1}" stroke="#999"/>"##, y(0.0), y(0.0));
    for k in 0..=4 {
        let v = lo + (hi - lo) * k as f64 / 4.0;
        let _ = writeln!(
            o,
            r##"<text x="{}" y="{:.1}" text-anchor="end" fill="#555">{v:.0}</text>"##,
            x0 - 4.0,
            y(v) + 4.0
        );
    }
    let n = rows.len().max(1) as f64;
    let bw = (x1 - x0) / n;
    for (i, r) in rows.iter().enumerate() {
        let cx = x0 + bw * (i as f64 + 0.5);
        let (ya, yb) = (y(r.elo.max(0.0)), y(r.elo.min(0.0)));
        let _ = writeln!(
            o,
            r#"<rect x="{:.1}" y="{ya:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
            cx - bw * 0.3,
            bw * 0.6,
            (yb - ya).max(1.0),
            color(&r.player)
        );
        if r.elo_err.is_finite() && r.elo_err > 0.0 {
            let (e0, e1) = (y(r.elo - r.elo_err), y(r.elo + r.elo_err));
            let _ = writeln!(o, r#"<line x1="{cx:.1}" y1="{e0:.1}" x2="{cx:.1}" y2="{e1:.1}" stroke="black"/>"#);
            for e in [e0, e1] {
                let _ = writeln!(
                    o,
                    r#"<line x1="{:.1}" y1="{e:.1}" x2="{:.1}" y2="{e:.1}" stroke="black"/>"#,
                    cx - 6.0,
                    cx + 6.0
                );
            }
        }
        let _ =
            writeln!(o, r#"<text x="{cx:.1}" y="{}" text-anchor="middle">{}</text>"#, bottom + 16.0, esc(&r.player));
        let _ = writeln!(o, r#"<text x="{cx:.1}" y="{}" text-anchor="middle">{:.0}</text>"#, bottom + 30.0, r.elo);
    }

    // Right panel: mean score per game.
    let (x0, x1) = (410.0, w - 20.0);
    let ys = |v: f64| bottom - v.clamp(0.0, 100.0) / 100.0 * (bottom - top);
    let _ = writeln!(o, r#"<text x="{x0}" y="40">Mean score per game (95% CI)</text>"#);
    for v in [0.0, 25.0, 50.0, 75.0, 100.0] {
        let _ = writeln!(
            o,
            r##"<line x1="{x0}" y1="{:.1}" x2="{x1}" y2="{:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end" fill="#555">{v:.0}</text>"##,
            ys(v),
            ys(v),
            x0 - 4.0,
            ys(v) + 4.0
        );
    }
    let mut groups: Vec<&Table> = s.per_game.iter().filter(|t| !t.rows.is_empty()).collect();
    if s.per_game.len() > 1 {
        groups.push(&s.overall);
    }
    let gw = (x1 - x0) / groups.len().max(1) as f64;
    for (gi, t) in groups.iter().enumerate() {
        let gx = x0 + gw * gi as f64;
        let k = players.len().max(1) as f64;
        let bw = gw * 0.8 / k;
        for r in &t.rows {
            let pi = players.iter().position(|p| *p == r.player).unwrap_or(0) as f64;
            let bx = gx + gw * 0.1 + bw * pi;
            let cx = bx + bw / 2.0;
            if r.mean.is_finite() {
                let _ = writeln!(
                    o,
                    r#"<rect x="{bx:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
                    ys(r.mean),
                    bw * 0.9,
                    bottom - ys(r.mean),
                    color(&r.player)
                );
            }
            if r.ci.is_finite() && r.ci > 0.0 {
                let (e0, e1) = (ys(r.mean - r.ci), ys(r.mean + r.ci));
                let _ = writeln!(o, r#"<line x1="{cx:.1}" y1="{e0:.1}" x2="{cx:.1}" y2="{e1:.1}" stroke="black"/>"#);
            }
        }
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            gx + gw / 2.0,
            bottom + 16.0,
            esc(&t.title)
        );
    }
    // Legend.
    for (i, p) in players.iter().enumerate() {
        let lx = x0 + 110.0 * i as f64;
        let _ = writeln!(
            o,
            r#"<rect x="{lx}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            h - 22.0,
            color(p),
            lx + 14.0,
            h - 13.0,
            esc(p)
        );
    }
    o.push_str("</svg>\n");
    o
}
