//! A board drawn from a state's facts, for any game: the relation shaped like
//! `(cell X Y PIECE...)` (two coordinate arguments, small integers or single letters, and
//! more facts than any other such relation) becomes a grid, the other facts a sorted list.
//! Games without such a relation get the sorted list alone.
//!
//! Orientation follows the convention most of the public repository's games share, x then y:
//! the first coordinate is the column, the second the row, the highest row on top (chess's
//! `(cell a 1 wr)`, connect four's `(cell 4 1 red)` dropped to the bottom, breakthrough's
//! `(cellholder x y white)` with white at the bottom). A game that writes row then column
//! (tic-tac-toe's `(cell 1 3 x)`) is drawn transposed, which its labels make readable.

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Pieces that mean an empty square.
const BLANKS: [&str; 6] = ["b", "blank", "empty", "none", "_", "e"];

/// A fact split into its relation and arguments (nested terms printed whole).
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    pub name: String,
    pub args: Vec<String>,
}

/// Splits a printed fact (`( cell 1 1 b )`, `(control x)`, `step3`) into relation and
/// top-level arguments; `None` when it is not a term.
pub fn parse_fact(text: &str) -> Option<Fact> {
    let t = text.trim();
    let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
        return (!t.is_empty() && !t.contains(['(', ')', ' '])).then(|| Fact { name: t.into(), args: Vec::new() });
    };
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
                cur.push(c);
            }
            c if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    items.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if depth != 0 {
        return None;
    }
    if !cur.is_empty() {
        items.push(cur);
    }
    let mut it = items.into_iter();
    let name = it.next()?;
    if name.starts_with('(') {
        return None;
    }
    Some(Fact { name, args: it.collect() })
}

/// A coordinate value: a small integer or a single letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Coord {
    Num(i64),
    Letter(char),
}

fn coord(s: &str) -> Option<Coord> {
    if let Ok(n) = s.parse::<i64>() {
        return (-1000..=1000).contains(&n).then_some(Coord::Num(n));
    }
    let mut cs = s.chars();
    match (cs.next(), cs.next()) {
        (Some(c), None) if c.is_ascii_alphabetic() => Some(Coord::Letter(c.to_ascii_lowercase())),
        _ => None,
    }
}

/// A state drawn: the grid (if the state has a board relation) and the other facts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Board {
    /// The board relation's name.
    pub relation: String,
    /// Row and column labels, top to bottom and left to right.
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// `cells[r][c]`: the piece there (`""` when empty or absent).
    pub cells: Vec<Vec<String>>,
    /// Every fact not drawn on the grid, sorted.
    pub rest: Vec<String>,
}

/// Where a board is: its relation and arity, and its rows and columns in drawing order.
/// Found from one state, or from every state of a match (so that a replay's grid keeps its
/// size while pieces come and go).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    relation: String,
    arity: usize,
    rows: Vec<Coord>,
    cols: Vec<Coord>,
}

impl Layout {
    /// The layout of the facts of one or more states: the relation with two coordinate
    /// arguments and a third, with the most facts; `None` when there is none.
    pub fn of<'a>(facts: impl IntoIterator<Item = &'a String>) -> Option<Layout> {
        let parsed: Vec<Fact> = facts.into_iter().filter_map(|f| parse_fact(f)).collect();
        // Candidates: (relation, arity) whose first two arguments are coordinates in every
        // fact, with a third argument (the piece).
        let mut best: Option<(String, usize, usize)> = None;
        let names: BTreeSet<(&str, usize)> = parsed.iter().map(|f| (f.name.as_str(), f.args.len())).collect();
        for (name, arity) in names {
            if arity < 3 {
                continue;
            }
            let of: Vec<&Fact> = parsed.iter().filter(|f| f.name == name && f.args.len() == arity).collect();
            let ok = of.iter().all(|f| coord(&f.args[0]).is_some() && coord(&f.args[1]).is_some());
            if ok && best.as_ref().is_none_or(|b| of.len() > b.2) {
                best = Some((name.to_string(), arity, of.len()));
            }
        }
        let (relation, arity, _) = best?;
        let at: Vec<(Coord, Coord)> = parsed
            .iter()
            .filter(|f| f.name == relation && f.args.len() == arity)
            .filter_map(|f| Some((coord(&f.args[0])?, coord(&f.args[1])?)))
            .collect();
        let cols: BTreeSet<Coord> = at.iter().map(|c| c.0).collect();
        let rows: BTreeSet<Coord> = at.iter().map(|c| c.1).collect();
        Some(Layout { relation, arity, rows: rows.into_iter().rev().collect(), cols: cols.into_iter().collect() })
    }
}

impl Board {
    /// Draws `facts` (printed as the state machine prints them) on their own layout.
    pub fn from_facts(facts: &[String]) -> Board {
        Board::draw(facts, Layout::of(facts).as_ref())
    }

    /// Draws `facts` on `layout` (facts of its relation off its grid are listed).
    pub fn draw(facts: &[String], layout: Option<&Layout>) -> Board {
        let mut board = Board::default();
        let mut drawn = vec![false; facts.len()];
        if let Some(l) = layout {
            let label = |c: &Coord| match c {
                Coord::Num(n) => n.to_string(),
                Coord::Letter(l) => l.to_string(),
            };
            board.relation = l.relation.clone();
            board.rows = l.rows.iter().map(label).collect();
            board.cols = l.cols.iter().map(label).collect();
            board.cells = vec![vec![String::new(); l.cols.len()]; l.rows.len()];
            let cells = facts.iter().enumerate().filter_map(|(i, text)| {
                let f = parse_fact(text)?;
                if f.name != l.relation || f.args.len() != l.arity {
                    return None;
                }
                Some((coord(&f.args[0])?, coord(&f.args[1])?, f.args[2..].join(" "), i))
            });
            for (a, b, piece, i) in cells {
                let (r, c) = (b, a);
                let (Some(ri), Some(ci)) = (l.rows.iter().position(|x| *x == r), l.cols.iter().position(|x| *x == c))
                else {
                    continue;
                };
                drawn[i] = true;
                if BLANKS.contains(&piece.to_ascii_lowercase().as_str()) {
                    continue;
                }
                let cell = &mut board.cells[ri][ci];
                if !cell.is_empty() {
                    cell.push(' ');
                }
                cell.push_str(&piece);
            }
        }
        board.rest = facts.iter().zip(&drawn).filter(|(_, d)| !**d).map(|(f, _)| f.clone()).collect();
        board.rest.sort();
        board
    }

    /// The board as HTML: a table for the grid (pieces coloured by name), then the other
    /// facts as a list.
    pub fn html(&self) -> String {
        let mut out = String::new();
        if !self.cells.is_empty() {
            let _ = write!(out, "<table class=\"board\" data-relation=\"{}\"><tr><th></th>", esc(&self.relation));
            for c in &self.cols {
                let _ = write!(out, "<th>{}</th>", esc(c));
            }
            out.push_str("</tr>");
            for (r, row) in self.rows.iter().zip(&self.cells) {
                let _ = write!(out, "<tr><th>{}</th>", esc(r));
                for piece in row {
                    if piece.is_empty() {
                        out.push_str("<td></td>");
                    } else {
                        let _ = write!(out, "<td style=\"background:{}\">{}</td>", colour(piece), esc(piece));
                    }
                }
                out.push_str("</tr>");
            }
            out.push_str("</table>");
        }
        if !self.rest.is_empty() {
            out.push_str("<ul class=\"facts\">");
            for f in &self.rest {
                let _ = write!(out, "<li><code>{}</code></li>", esc(f));
            }
            out.push_str("</ul>");
        }
        out
    }
}

/// A light colour per piece name (the same piece always the same colour).
fn colour(piece: &str) -> String {
    let h = piece.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193));
    format!("hsl({}, 70%, 80%)", h % 360)
}

/// Escapes text for HTML (element content and quoted attributes).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn facts_split_into_relation_and_arguments() {
        assert_eq!(
            parse_fact("( cell 1 ( f a ) x )"),
            Some(Fact { name: "cell".into(), args: vec!["1".into(), "( f a )".into(), "x".into()] })
        );
        assert_eq!(parse_fact("terminal"), Some(Fact { name: "terminal".into(), args: vec![] }));
        assert_eq!(parse_fact("( ( a ) b )"), None);
        assert_eq!(parse_fact("( a ( b )"), None);
        assert_eq!(parse_fact(""), None);
    }

    #[test]
    fn a_cell_relation_is_drawn_as_a_grid_x_then_y_highest_row_on_top() {
        let mut f = Vec::new();
        for x in 1..=3 {
            for y in 1..=3 {
                f.push(format!("( cell {x} {y} {} )", if (x, y) == (3, 1) { "x" } else { "b" }));
            }
        }
        f.push("( control oplayer )".into());
        let b = Board::from_facts(&f);
        assert_eq!(
            (b.relation.as_str(), b.rows.clone(), b.cols.len()),
            ("cell", vec!["3".into(), "2".into(), "1".into()], 3)
        );
        assert_eq!(b.cells[2][2], "x", "column 3, bottom row");
        assert_eq!(b.cells.iter().flatten().filter(|c| !c.is_empty()).count(), 1, "blanks are empty");
        assert_eq!(b.rest, ["( control oplayer )"]);
        let html = b.html();
        assert!(html.contains("<table class=\"board\" data-relation=\"cell\">"), "{html}");
        assert!(html.contains(">x</td>") && html.contains("<code>( control oplayer )</code>"), "{html}");
    }

    #[test]
    fn chess_like_coordinates_put_files_in_columns_and_pieces_dropped_to_the_bottom_row() {
        let f = facts(&["( cell a 1 wr )", "( cell b 1 wk )", "( cell a 2 bp )", "( cell b 2 b )", "( step 1 )"]);
        let b = Board::from_facts(&f);
        assert_eq!((b.rows.clone(), b.cols.clone()), (vec!["2".to_string(), "1".into()], vec!["a".into(), "b".into()]));
        assert_eq!(b.cells, vec![vec!["bp".to_string(), String::new()], vec!["wr".into(), "wk".into()]]);
        // Connect four: a piece dropped in column 4 lies on the bottom row; the replay's
        // layout (from every state) keeps the grid whole while the first state is empty.
        let later = facts(&["( cell 4 1 red )", "( cell 4 2 yellow )", "( cell 1 6 red )"]);
        let l = Layout::of(&later).unwrap();
        let first = Board::draw(&facts(&["( cell 4 1 red )", "( control yellow )"]), Some(&l));
        assert_eq!((first.rows.len(), first.cols.len()), (3, 2));
        assert_eq!(first.cells.last().unwrap(), &vec![String::new(), "red".to_string()]);
        assert_eq!(first.rest, ["( control yellow )"]);
    }

    #[test]
    fn the_most_common_coordinate_relation_wins_and_others_are_listed() {
        let f = facts(&[
            "( mark 1 1 x )",
            "( mark 1 2 o )",
            "( mark 2 1 x )",
            "( mark 2 2 o )",
            "( mark 3 3 x )",
            "( score 1 2 3 )",
            "( score 2 2 3 )",
            "( score 3 2 3 )",
            "( score 4 2 3 )",
        ]);
        let b = Board::from_facts(&f);
        assert_eq!(b.relation, "mark");
        assert_eq!(b.rest.len(), 4);
    }

    #[test]
    fn states_without_a_board_are_a_sorted_list_and_text_is_escaped() {
        let f = facts(&["( step 3 )", "( at <script> )", "( control white )"]);
        let b = Board::from_facts(&f);
        assert!(b.cells.is_empty());
        assert_eq!(b.rest, ["( at <script> )", "( control white )", "( step 3 )"]);
        let html = b.html();
        assert!(!html.contains("<table") && html.contains("&lt;script&gt;"), "{html}");
    }
}
