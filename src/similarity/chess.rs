//! Chess from the `shakmaty` crate as a [`StateMachine`], for the paper's benchmark only:
//! mate searches over a thousand positions are too slow through a GDL propnet of chess.
//!
//! Roles `white` and `black`; the role not on turn plays `noop` (as in GDL chess). A move's
//! label is its SAN without check marks or disambiguation (`Bxf2`, `exf7`, `e8=Q`, `O-O`),
//! which is what the paper compares (captures included). Terminal: checkmate, stalemate or
//! insufficient material; goals 100/0 for a mate, 50/50 otherwise.

use crate::machine::{Goal, StateMachine};
use shakmaty::san::San;
use shakmaty::{Chess, Color, Move, Outcome, Position, Role, Square};

/// Chess as a state machine. A move is `None` for the waiting role's `noop`.
#[derive(Debug, Default)]
pub struct ChessMachine {
    roles: Vec<String>,
}

impl ChessMachine {
    pub fn new() -> Self {
        ChessMachine { roles: vec!["white".into(), "black".into()] }
    }
}

fn color_role(c: Color) -> usize {
    match c {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// A move's label: SAN without check marks and without disambiguation.
pub fn label(m: &Move) -> String {
    match *m {
        Move::Castle { king, rook } => {
            if rook.file() > king.file() {
                "O-O".into()
            } else {
                "O-O-O".into()
            }
        }
        Move::Normal { role, from, capture, to, promotion } => {
            let mut s = String::new();
            if role == Role::Pawn {
                if capture.is_some() {
                    s.push(from.file().char());
                }
            } else {
                s.push(role.upper_char());
            }
            if capture.is_some() {
                s.push('x');
            }
            s.push_str(&to.to_string());
            if let Some(p) = promotion {
                s.push('=');
                s.push(p.upper_char());
            }
            s
        }
        Move::EnPassant { from, to } => format!("{}x{}", from.file().char(), to),
        Move::Put { role, to } => format!("{}@{}", role.upper_char(), to),
    }
}

/// Plays a game given in SAN (`1.d4 Nf6 2.c4 e5`; move numbers and check marks ignored)
/// from the initial position.
pub fn play_san(text: &str) -> Result<Chess, String> {
    let mut pos = Chess::default();
    for tok in text.split_whitespace() {
        // Strip a move number ("3." or "3...") glued to the move or standing alone.
        let tok = tok.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches('.');
        if tok.is_empty() {
            continue;
        }
        let san: San = tok.parse().map_err(|e| format!("{tok}: {e}"))?;
        let m = san.to_move(&pos).map_err(|e| format!("{tok}: {e}"))?;
        pos = pos.play(m).map_err(|e| format!("{tok}: {e}"))?;
    }
    Ok(pos)
}

/// The paper's control: one minus the share of the 64 squares whose contents differ.
pub fn board_similarity(a: &Chess, b: &Chess) -> f64 {
    let differ =
        (0..64u32).filter(|&i| a.board().piece_at(Square::new(i)) != b.board().piece_at(Square::new(i))).count();
    1.0 - differ as f64 / 64.0
}

impl StateMachine for ChessMachine {
    type State = Chess;
    type Move = Option<Move>;

    fn roles(&self) -> &[String] {
        &self.roles
    }

    fn initial_state(&mut self) -> Chess {
        Chess::default()
    }

    fn legal_moves(&mut self, state: &Chess, role: usize, out: &mut Vec<Option<Move>>) {
        out.clear();
        if role == color_role(state.turn()) {
            out.extend(state.legal_moves().into_iter().map(Some));
        } else {
            out.push(None);
        }
    }

    fn next_state(&mut self, state: &Chess, joint: &[Option<Move>], out: &mut Chess) {
        let mover = color_role(state.turn());
        *out = state.clone();
        if let Some(m) = joint[mover] {
            out.play_unchecked(m);
        }
    }

    fn is_terminal(&mut self, state: &Chess) -> bool {
        state.is_game_over()
    }

    fn goal(&mut self, state: &Chess, role: usize) -> Goal {
        match state.outcome() {
            Outcome::Known(k) => Some(match k.winner() {
                Some(c) if color_role(c) == role => 100,
                Some(_) => 0,
                None => 50,
            }),
            Outcome::Unknown => None,
        }
    }

    fn move_text(&self, m: Option<Move>) -> String {
        m.map(|m| label(&m)).unwrap_or_else(|| "noop".into())
    }

    fn state_facts(&self, state: &Chess) -> Vec<String> {
        let mut v: Vec<String> =
            state.board().iter().map(|(sq, p)| format!("(cell {} {}{})", sq, p.color.char(), p.role.char())).collect();
        v.push(format!("(control {})", self.roles[color_role(state.turn())]));
        v.sort();
        v
    }
}
