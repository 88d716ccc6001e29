//! The GDL front end: parser, AST, symbol interner, printer, normal form and validation.
//!
//! This module knows the syntax of GDL and its static rules (arity, safety, stratification,
//! where keywords may stand), but nothing about how a game is played.

mod ast;
mod deps;
mod normal;
mod parser;
mod printer;
mod symbol;
mod validate;

pub use ast::{Atom, Literal, Pos, Rule, Term};
pub use deps::{may_unify, rule_deps, RuleDeps};
pub use normal::{expand_rule, FlatLit, FlatRule, MAX_EXPANSION};
pub use printer::{write_atom, write_term};
pub use symbol::{kw, Sym, SymbolTable};
pub use validate::{validate, Diag, Report, Severity, StratumInfo};

use std::fmt;
use std::path::Path;

/// A located error in a GDL file: file, line, column, message and the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GdlError {
    pub file: String,
    pub pos: Pos,
    pub msg: String,
    pub near: String,
}

impl GdlError {
    pub fn new(file: &str, pos: Pos, msg: String, near: String) -> GdlError {
        GdlError { file: file.to_string(), pos, msg, near }
    }
}

impl fmt::Display for GdlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.pos.line, self.pos.col, self.msg)?;
        if !self.near.is_empty() {
            write!(f, " (near `{}`)", self.near)?;
        }
        Ok(())
    }
}

impl std::error::Error for GdlError {}

/// A parsed game description: its rules in file order and the symbols they use.
#[derive(Clone, Debug)]
pub struct Game {
    pub name: String,
    pub rules: Vec<Rule>,
    pub symbols: SymbolTable,
}

impl Game {
    /// Parses GDL text. `file` names the source in error messages.
    pub fn parse(file: &str, text: &str) -> Result<Game, GdlError> {
        let mut symbols = SymbolTable::new();
        let rules = parse_rules(file, text, &mut symbols)?;
        let name = Path::new(file).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(Game { name, rules, symbols })
    }

    /// Parses GDL bytes, rejecting text that is not UTF-8 with the position of the first bad byte.
    pub fn parse_bytes(file: &str, bytes: &[u8]) -> Result<Game, GdlError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Game::parse(file, text),
            Err(e) => {
                let good = &bytes[..e.valid_up_to()];
                let line = good.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
                let col = good.iter().rev().take_while(|&&b| b != b'\n').count() as u32 + 1;
                Err(GdlError::new(
                    file,
                    Pos { line, col },
                    format!("not UTF-8 text: invalid byte 0x{:02x} (binary file?)", bytes[e.valid_up_to()]),
                    String::new(),
                ))
            }
        }
    }

    /// Reads and parses a file.
    pub fn load(path: &Path) -> Result<Game, GdlError> {
        let file = path.display().to_string();
        match std::fs::read(path) {
            Ok(bytes) => Game::parse_bytes(&file, &bytes),
            Err(e) => Err(GdlError::new(&file, Pos::default(), format!("cannot read file: {e}"), String::new())),
        }
    }

    /// The role names in the order of their `(role ...)` facts.
    pub fn roles(&self) -> Vec<Sym> {
        self.rules
            .iter()
            .filter(|r| r.head.rel == kw::ROLE && r.body.is_empty() && r.head.args.len() == 1)
            .filter_map(|r| match &r.head.args[0] {
                Term::Const(s) => Some(*s),
                _ => None,
            })
            .collect()
    }

    /// Whether the game uses GDL-II's `sees` (games of imperfect information).
    pub fn is_gdl2(&self) -> bool {
        fn lit_uses(l: &Literal) -> bool {
            match l {
                Literal::Atom(a) => a.rel == kw::SEES,
                Literal::Not(l) => lit_uses(l),
                Literal::Or(ls) => ls.iter().any(lit_uses),
                Literal::Distinct(..) => false,
            }
        }
        self.rules.iter().any(|r| r.head.rel == kw::SEES || r.body.iter().any(lit_uses))
    }
}

/// Every rule of a game in flat normal form, in order, with the position of the rule each
/// came from.
pub fn flatten(rules: &[Rule]) -> Result<Vec<FlatRule>, GdlError> {
    let mut out = Vec::new();
    for r in rules {
        out.extend(expand_rule(r).map_err(|e| GdlError::new("", r.pos, e, String::new()))?);
    }
    Ok(out)
}

/// Parses the text of a game into rules, interning into `symbols`.
pub fn parse_rules(file: &str, text: &str, symbols: &mut SymbolTable) -> Result<Vec<Rule>, GdlError> {
    let sexps = parser::sexps(file, text)?;
    let mut reader = parser::Reader { file, symbols };
    sexps.iter().map(|s| reader.rule(s)).collect()
}

/// Parses a single term such as a move `( mark 1 1 )`; variables are rejected.
pub fn parse_ground_term(text: &str, symbols: &mut SymbolTable) -> Result<Term, GdlError> {
    let rules = parse_rules("<term>", text, symbols)?;
    if rules.len() != 1 || !rules[0].body.is_empty() {
        return Err(GdlError::new(
            "<term>",
            Pos { line: 1, col: 1 },
            "expected exactly one term".into(),
            text.chars().take(40).collect(),
        ));
    }
    let a = &rules[0].head;
    let t = if a.args.is_empty() { Term::Const(a.rel) } else { Term::Func(a.rel, a.args.clone().into()) };
    if !t.is_ground() {
        return Err(GdlError::new(
            "<term>",
            Pos { line: 1, col: 1 },
            "a move or fact cannot contain variables".into(),
            text.chars().take(40).collect(),
        ));
    }
    Ok(t)
}

#[cfg(test)]
mod tests;
