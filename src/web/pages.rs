//! The pages, rendered on the server: whole pages, and the fragments the pages' script
//! swaps in as a match goes on (the script only fetches fragments and posts moves; every
//! piece of HTML is made here).

use super::board::{esc, Board, Layout};
use super::live::LiveMatch;
use super::records::{state_facts, Entry, Folder};
use crate::manager::record::MatchRecord;
use std::fmt::Write as _;

/// A whole page: `kind` tells the script what to do with it (`index`, `match`, `replay`,
/// `play`, `folder`), `data` goes to `data-*` attributes of the body.
pub fn page(title: &str, kind: &str, data: &[(&str, &str)], body: &str) -> String {
    let mut attrs = String::new();
    for (k, v) in data {
        let _ = write!(attrs, " data-{k}=\"{}\"", esc(v));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{tt}</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"stylesheet\" href=\"/style.css\"></head>\
         <body data-page=\"{kind}\"{attrs}><header><a href=\"/\">Factotum</a></header><main>\
         <h1>{t}</h1>{body}</main><script src=\"/app.js\"></script></body></html>\n",
        t = esc(title),
        tt = if title == "Factotum" { title.to_string() } else { format!("{} · Factotum", esc(title)) }
    )
}

/// Milliseconds since the epoch as `HH:MM:SS` UTC.
fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{:02}:{:02}:{:02}", (s / 3600) % 24, (s / 60) % 60, s % 60)
}

/// Where a match stands, in words.
fn status(m: &LiveMatch) -> &'static str {
    if m.over {
        "over"
    } else if m.waiting {
        "your move"
    } else {
        "playing"
    }
}

/// The list of matches being played (and recently over).
pub fn live_list(ms: &[LiveMatch]) -> String {
    if ms.is_empty() {
        return "<p class=\"none\">No match is being played.</p>".into();
    }
    let mut out = String::from(
        "<table class=\"list\" id=\"live-table\"><tr><th>match</th><th>game</th><th>seat</th><th>step</th><th>state</th><th>started (UTC)</th></tr>",
    );
    for m in ms {
        let state = status(m);
        let _ = write!(
            out,
            "<tr class=\"live\"><td><a href=\"/match/{id}\">{id}</a></td><td>{}</td><td>{}{}</td><td>{}</td><td>{state}</td><td>{}</td></tr>",
            esc(&m.game),
            esc(&m.role),
            if m.human { " (person)" } else { "" },
            m.step,
            clock(m.started_ms),
            id = esc(&m.id),
        );
    }
    out.push_str("</table>");
    out
}

/// The parts of a live match's page, by element id.
pub fn match_parts(m: &LiveMatch) -> Vec<(&'static str, String)> {
    let mut info = String::new();
    let status = status(m);
    let _ = write!(
        info,
        "<p>Game <b>{}</b>; seat <b>{}</b> of {}; step <b id=\"step\">{}</b>; <span id=\"status\">{status}</span>.</p>",
        esc(&m.game),
        esc(&m.role),
        esc(&m.roles.join(", ")),
        m.step
    );
    if let Some(last) = &m.last_moves {
        let _ = write!(info, "<p>Last joint move: <code id=\"last\">{}</code></p>", esc(&last.join(" ")));
    }
    if let Some(c) = &m.chosen {
        let _ = write!(info, "<p>This seat's last move: <code>{}</code></p>", esc(c));
    }
    if m.over && !m.goals.is_empty() {
        let goals: Vec<String> = m
            .roles
            .iter()
            .zip(&m.goals)
            .map(|(r, g)| format!("{} {}", esc(r), g.map_or("?".into(), |g| g.to_string())))
            .collect();
        let _ = write!(info, "<p id=\"goals\">Goals: {}</p>", goals.join(", "));
    }
    if let Some(n) = &m.note {
        let _ = write!(info, "<p class=\"note\">{}</p>", esc(n));
    }
    let mut moves = String::new();
    if m.waiting && !m.legal.is_empty() {
        moves.push_str("<p>Your move:</p><div class=\"legal\">");
        for l in &m.legal {
            let _ = write!(moves, "<button class=\"move\" data-move=\"{0}\">{0}</button>", esc(l));
        }
        moves.push_str("</div><p id=\"move-error\" class=\"note\"></p>");
    }
    let mut best = String::new();
    if !m.best.is_empty() {
        best.push_str(
            "<h2>Search</h2><table class=\"list\" id=\"best-table\"><tr><th>move</th><th>visits</th><th>value</th></tr>",
        );
        for b in &m.best {
            let _ = write!(
                best,
                "<tr><td><code>{}</code></td><td>{}</td><td>{:.1}</td></tr>",
                esc(&b.text),
                b.visits,
                100.0 * b.value
            );
        }
        best.push_str("</table>");
    }
    let mut traps = String::new();
    if !m.traps.is_empty() {
        traps.push_str("<h2>Traps detected</h2><table class=\"list\" id=\"trap-table\"><tr><th>step</th><th>role</th><th>trap move</th><th>depth</th><th>chosen</th><th>found by</th></tr>");
        for t in m.traps.iter().rev() {
            let _ = write!(
                traps,
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td><code>{}</code>{}</td><td>{}</td></tr>",
                t.step,
                esc(&t.role),
                esc(&t.trap_move),
                t.depth,
                esc(&t.chosen),
                if t.avoided { " (avoided)" } else { "" },
                esc(&t.found_by)
            );
        }
        traps.push_str("</table>");
    }
    vec![
        ("info", info),
        ("board", Board::from_facts(&m.state).html()),
        ("moves", moves),
        ("best", best),
        ("traps", traps),
    ]
}

/// A live match's page.
pub fn match_page(m: &LiveMatch) -> String {
    let mut body = String::new();
    for (id, html) in match_parts(m) {
        let _ = write!(body, "<section id=\"{id}\">{html}</section>");
    }
    page(&m.id, "match", &[("id", &m.id), ("version", &m.version.to_string())], &body)
}

/// A recorded match, every step drawn, one shown at a time (a slider and buttons).
pub fn replay_page(rel: &str, rec: &MatchRecord, game: &str) -> String {
    let mut body = String::new();
    let roles = &rec.factotum.roles;
    let _ = write!(body, "<p>Game <b>{}</b>; ", esc(game));
    let seats: Vec<String> = rec
        .player_names_from_host
        .iter()
        .enumerate()
        .map(|(r, p)| match roles.get(r) {
            Some(role) => format!("{} as {}", esc(p), esc(role)),
            None => esc(p),
        })
        .collect();
    let _ = write!(body, "players {}; clocks {} s / {} s; ", seats.join(", "), rec.start_clock, rec.play_clock);
    if rec.is_completed {
        let goals: Vec<String> = rec.goal_values.iter().map(u32::to_string).collect();
        let _ = write!(body, "goals <b>{}</b>.</p>", goals.join(" – "));
    } else if rec.is_aborted {
        let _ = write!(
            body,
            "aborted{}.</p>",
            rec.factotum.abort_reason.as_deref().map(|r| format!(": {}", esc(r))).unwrap_or_default()
        );
    } else {
        body.push_str("not finished.</p>");
    }
    let last = rec.states.len().saturating_sub(1);
    let states: Vec<Vec<String>> = rec.states.iter().map(|s| state_facts(s)).collect();
    let layout = Layout::of(states.iter().flatten());
    let _ = write!(
        body,
        "<div class=\"controls\"><button id=\"prev\">◀ previous</button>\
         <input id=\"slider\" type=\"range\" min=\"0\" max=\"{last}\" value=\"0\">\
         <button id=\"next\">next ▶</button> step <b id=\"step\">0</b> of {last}</div>"
    );
    for (i, state) in states.iter().enumerate() {
        let _ = write!(body, "<section class=\"step\" data-step=\"{i}\"{}>", if i == 0 { "" } else { " hidden" });
        if i == 0 {
            body.push_str("<p>Initial state.</p>");
        } else if let Some(moves) = rec.moves.get(i - 1) {
            let _ = write!(body, "<p>Joint move {i}: <code class=\"joint\">{}</code></p>", esc(&moves.join(" ")));
        }
        if let Some(errs) = rec.errors.get(i).filter(|e| e.iter().any(|x| !x.is_empty())) {
            let _ = write!(body, "<p class=\"note\">Errors: {}</p>", esc(&errs.join(" | ")));
        }
        body.push_str(&Board::draw(state, layout.as_ref()).html());
        body.push_str("</section>");
    }
    let _ = write!(body, "<p><a href=\"/raw/{0}\">the record (JSON)</a></p>", esc(rel));
    page(&rec.match_id, "replay", &[("last", &last.to_string())], &body)
}

/// The folders of recorded matches.
pub fn folders(fs: &[Folder]) -> String {
    if fs.is_empty() {
        return "<p class=\"none\">No recorded matches.</p>".into();
    }
    let mut out = String::from("<table class=\"list\"><tr><th>folder</th><th>records</th><th>report</th></tr>");
    for f in fs {
        let name = if f.rel.is_empty() { "." } else { &f.rel };
        let _ = write!(
            out,
            "<tr><td><a href=\"/records/{}\">{}</a></td><td>{}</td><td>{}</td></tr>",
            esc(&f.rel),
            esc(name),
            f.records,
            if f.report { "tournament report" } else { "" }
        );
    }
    out.push_str("</table>");
    out
}

/// A folder: its tournament report (ratings chart and tables), then its records.
pub fn folder_page(rel: &str, report: Option<&str>, chart: bool, entries: &[Entry]) -> String {
    let mut body = String::new();
    if chart {
        let _ = write!(body, "<img class=\"chart\" alt=\"ratings\" src=\"/raw/{}/report.svg\">", esc(rel));
    }
    if let Some(md) = report {
        body.push_str("<div class=\"report\">");
        body.push_str(&markdown(md));
        body.push_str("</div>");
    }
    let _ = write!(body, "<h2>Matches ({})</h2>", entries.len());
    body.push_str(
        "<table class=\"list\" id=\"records\"><tr><th>match</th><th>game</th><th>players</th><th>goals</th><th>moves</th></tr>",
    );
    for e in entries {
        let goals: Vec<String> = e.goals.iter().map(u32::to_string).collect();
        let _ = write!(
            body,
            "<tr><td><a href=\"/record/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&e.rel),
            esc(&e.id),
            esc(&e.game),
            esc(&e.players.join(", ")),
            if e.completed { goals.join(" – ") } else { "unfinished".into() },
            e.steps
        );
    }
    body.push_str("</table>");
    page(if rel.is_empty() { "Recorded matches" } else { rel }, "folder", &[], &body)
}

/// The kiosk's form: a game of the folder, a role (filled in when a game is picked), clocks.
pub fn play_page(games: &[String], agent: &str) -> String {
    let mut body = format!("<p>Play a match against <b>{}</b>.</p><form id=\"kiosk\">", esc(agent));
    body.push_str("<label>Game <select id=\"game\" name=\"game\"><option value=\"\">pick a game</option>");
    for g in games {
        let _ = write!(body, "<option value=\"{0}\">{0}</option>", esc(g));
    }
    body.push_str(
        "</select></label> <label>Role <select id=\"role\" name=\"role\"></select></label> \
         <label>Start clock <input id=\"startclock\" type=\"number\" min=\"1\" max=\"3600\" value=\"10\"> s</label> \
         <label>Play clock <input id=\"playclock\" type=\"number\" min=\"1\" max=\"3600\" value=\"60\"> s</label> \
         <label>Your name <input id=\"name\" value=\"human\"></label> \
         <button id=\"start\" type=\"submit\">Start</button></form><p id=\"kiosk-error\" class=\"note\"></p>",
    );
    page("Play", "play", &[], &body)
}

/// The index: matches being played, the kiosk, recorded matches.
pub fn index(live: &[LiveMatch], serving: Option<&str>, kiosk: bool, fs: Option<&[Folder]>) -> String {
    let mut body = String::new();
    if let Some(name) = serving {
        let _ = write!(body, "<p>Agent <b>{}</b> plays here over the GGP protocol (POST).</p>", esc(name));
    }
    let _ = write!(body, "<h2>Matches being played</h2><section id=\"live\">{}</section>", live_list(live));
    if kiosk {
        body.push_str("<h2>Play</h2><p><a id=\"play-link\" href=\"/play\">Play a match against the agent</a></p>");
    }
    if let Some(fs) = fs {
        let _ = write!(body, "<h2>Recorded matches</h2>{}", folders(fs));
    }
    page("Factotum", "index", &[], &body)
}

/// The Markdown our reports use, as HTML: headings, pipe tables, paragraphs, `code`.
pub fn markdown(md: &str) -> String {
    let mut out = String::new();
    let mut table = false;
    let mut para = String::new();
    let flush = |para: &mut String, out: &mut String| {
        if !para.trim().is_empty() {
            let _ = write!(out, "<p>{}</p>", inline(para.trim()));
        }
        para.clear();
    };
    for line in md.lines() {
        let l = line.trim();
        if l.starts_with('|') {
            flush(&mut para, &mut out);
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            if cells.iter().all(|c| !c.is_empty() && c.chars().all(|ch| ch == '-' || ch == ':')) {
                continue;
            }
            let tag = if table { "td" } else { "th" };
            if !table {
                out.push_str("<table class=\"list\">");
                table = true;
            }
            out.push_str("<tr>");
            for c in cells {
                let _ = write!(out, "<{tag}>{}</{tag}>", inline(c));
            }
            out.push_str("</tr>");
            continue;
        }
        if table {
            out.push_str("</table>");
            table = false;
        }
        if let Some(h) = l.strip_prefix('#') {
            flush(&mut para, &mut out);
            let level = 1 + h.chars().take_while(|&c| c == '#').count();
            let text = h.trim_start_matches('#').trim();
            let level = (level + 1).min(6);
            let _ = write!(out, "<h{level}>{}</h{level}>", inline(text));
        } else if l.is_empty() {
            flush(&mut para, &mut out);
        } else {
            para.push_str(l);
            para.push(' ');
        }
    }
    if table {
        out.push_str("</table>");
    }
    flush(&mut para, &mut out);
    out
}

/// Escapes text, then marks up `code` spans.
fn inline(s: &str) -> String {
    let e = esc(s);
    let mut out = String::new();
    for (i, part) in e.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

pub const STYLE: &str = r#"
body { font: 15px/1.4 system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }
header { background: #24323f; padding: 8px 16px; }
header a { color: #fff; font-weight: bold; text-decoration: none; }
main { padding: 8px 24px 32px; max-width: 1100px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 24px; }
table.list { border-collapse: collapse; margin: 8px 0; }
table.list td, table.list th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
table.list th { background: #eef1f4; }
table.board { border-collapse: collapse; margin: 12px 0; }
table.board td { border: 1px solid #555; width: 44px; height: 44px; text-align: center; font-weight: bold; font-size: 13px; background: #fff; }
table.board th { font-weight: normal; color: #777; padding: 2px 6px; }
ul.facts { columns: 3; font-size: 13px; }
.note { color: #a33; } .none { color: #777; }
.controls { margin: 12px 0; } .controls input { width: 320px; vertical-align: middle; }
button { font: inherit; padding: 3px 10px; margin: 2px; cursor: pointer; }
button.move { background: #dfeee0; border: 1px solid #6a6; border-radius: 4px; }
img.chart { max-width: 100%; background: #fff; border: 1px solid #ddd; }
form label { margin-right: 12px; }
"#;

/// The pages' script: fetches fragments, posts moves and kiosk requests, steps replays.
pub const SCRIPT: &str = r#"
(function () {
  const body = document.body, kind = body.dataset.page;
  const $ = (id) => document.getElementById(id);
  async function json(url, opts) {
    const r = await fetch(url, opts);
    const t = await r.text();
    if (!r.ok) throw new Error(t);
    return JSON.parse(t);
  }
  if (kind === 'index') {
    setInterval(async () => {
      try { $('live').innerHTML = (await json('/api/matches')).html; } catch (e) {}
    }, 1000);
  }
  if (kind === 'match') {
    const id = body.dataset.id;
    let version = body.dataset.version;
    document.addEventListener('click', async (ev) => {
      const b = ev.target.closest('button.move');
      if (!b) return;
      document.querySelectorAll('button.move').forEach((x) => x.disabled = true);
      const r = await fetch('/api/match/' + encodeURIComponent(id) + '/move', { method: 'POST', body: b.dataset.move });
      if (!r.ok) {
        const e = $('move-error'); if (e) e.textContent = await r.text();
        document.querySelectorAll('button.move').forEach((x) => x.disabled = false);
      }
    });
    const poll = async () => {
      try {
        const m = await json('/api/match/' + encodeURIComponent(id));
        if (String(m.version) !== String(version)) {
          version = m.version;
          body.dataset.version = version;
          for (const [part, html] of Object.entries(m.parts)) { const el = $(part); if (el) el.innerHTML = html; }
        }
      } catch (e) {}
      setTimeout(poll, 400);
    };
    poll();
  }
  if (kind === 'replay') {
    const last = Number(body.dataset.last), slider = $('slider');
    const show = (i) => {
      i = Math.max(0, Math.min(last, i));
      slider.value = i; $('step').textContent = i;
      document.querySelectorAll('section.step').forEach((s) => s.hidden = Number(s.dataset.step) !== i);
    };
    slider.addEventListener('input', () => show(Number(slider.value)));
    $('prev').addEventListener('click', () => show(Number(slider.value) - 1));
    $('next').addEventListener('click', () => show(Number(slider.value) + 1));
    document.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowLeft') show(Number(slider.value) - 1);
      if (e.key === 'ArrowRight') show(Number(slider.value) + 1);
    });
  }
  if (kind === 'play') {
    $('game').addEventListener('change', async () => {
      const sel = $('role'); sel.innerHTML = '';
      if (!$('game').value) return;
      try {
        for (const r of await json('/api/roles?game=' + encodeURIComponent($('game').value))) {
          const o = document.createElement('option'); o.value = r; o.textContent = r; sel.appendChild(o);
        }
      } catch (e) { $('kiosk-error').textContent = e.message; }
    });
    $('kiosk').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const req = { game: $('game').value, role: $('role').value, name: $('name').value,
        startclock: Number($('startclock').value), playclock: Number($('playclock').value) };
      try {
        const r = await json('/api/kiosk', { method: 'POST', body: JSON.stringify(req) });
        location.href = '/match/' + encodeURIComponent(r.id);
      } catch (e) { $('kiosk-error').textContent = e.message; }
    });
  }
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_render_headings_tables_and_code() {
        let html = markdown("# Tournament `demo`\n\nSome text\nmore.\n\n| a | b |\n|---|---|\n| 1 | <2> |\n\nafter");
        assert!(html.starts_with("<h2>Tournament <code>demo</code></h2>"), "{html}");
        assert!(html.contains("<p>Some text more.</p>"), "{html}");
        assert!(html.contains("<tr><th>a</th><th>b</th></tr><tr><td>1</td><td>&lt;2&gt;</td></tr></table>"), "{html}");
        assert!(html.ends_with("<p>after</p>"), "{html}");
    }

    #[test]
    fn a_waiting_seat_shows_its_legal_moves_as_buttons() {
        let m = LiveMatch {
            id: "k.1".into(),
            game: "ttt".into(),
            role: "x".into(),
            roles: vec!["x".into(), "o".into()],
            human: true,
            waiting: true,
            legal: vec!["( mark 1 1 )".into()],
            state: vec!["( cell 1 1 b )".into()],
            ..LiveMatch::default()
        };
        let parts = match_parts(&m);
        let moves = &parts.iter().find(|p| p.0 == "moves").unwrap().1;
        assert!(moves.contains("<button class=\"move\" data-move=\"( mark 1 1 )\">"), "{moves}");
        assert!(match_page(&m).contains("data-page=\"match\" data-id=\"k.1\""));
    }
}
