//! The KIF/GDL parser: text to [`Rule`]s.
//!
//! Two phases: nom recognises tokens (comments, parentheses, words) and an explicit stack
//! builds S-expressions (so deeply nested input cannot overflow the call stack), then the
//! S-expressions are read as GDL rules. Every error names the line, column and the offending
//! text.

use super::ast::{Atom, Literal, Pos, Rule, Term};
use super::symbol::{kw, SymbolTable};
use super::GdlError;
use nom::{
    branch::alt,
    bytes::complete::{is_not, take_while1},
    character::complete::{char, multispace1},
    combinator::{recognize, value},
    sequence::pair,
    IResult,
};

/// Deepest nesting of parentheses accepted.
pub const MAX_DEPTH: usize = 200;

#[derive(Debug, Clone)]
pub(crate) enum Sexp<'a> {
    Word(&'a str, Pos),
    List(Vec<Sexp<'a>>, Pos),
}

impl Sexp<'_> {
    fn pos(&self) -> Pos {
        match self {
            Sexp::Word(_, p) | Sexp::List(_, p) => *p,
        }
    }
}

#[derive(Clone, Copy)]
enum Tok<'a> {
    Open,
    Close,
    Word(&'a str),
    Skip,
}

fn is_word_char(c: char) -> bool {
    !c.is_whitespace() && c != '(' && c != ')' && c != ';'
}

fn token(input: &str) -> IResult<&str, Tok<'_>> {
    alt((
        value(Tok::Skip, multispace1),
        value(Tok::Skip, recognize(pair(char(';'), nom::combinator::opt(is_not("\n"))))),
        value(Tok::Open, char('(')),
        value(Tok::Close, char(')')),
        nom::combinator::map(take_while1(is_word_char), Tok::Word),
    ))(input)
}

/// Maps byte offsets to line/column positions (columns in characters).
///
/// Tokens are asked for in increasing offset order, so the cursor remembers the last
/// position and counts characters only from there (or from the start of a later line): the
/// whole file costs one pass, however long its lines. Game managers send rules on a single
/// line; counting from the line's start for every token made that quadratic. An offset
/// behind the cursor (an error that points back) is counted from its line's start.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// The last offset asked for, its line (1-based) and column.
    at: std::cell::Cell<(usize, usize, usize)>,
    /// Bytes scanned to count characters, over all calls (kept linear in the text's size).
    scanned: std::cell::Cell<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { text, starts, at: std::cell::Cell::new((0, 1, 1)), scanned: std::cell::Cell::new(0) }
    }
    fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        let (at, at_line, at_col) = self.at.get();
        // On the cursor's line and ahead of it: count on from the cursor. Else (a later line,
        // whose start is past the cursor, or an offset behind the cursor) from the line's start.
        let (from, base) = if offset >= at && line == at_line { (at, at_col) } else { (start, 1) };
        self.scanned.set(self.scanned.get() + (offset - from));
        let col = base + self.text[from..offset].chars().count();
        if offset >= at {
            self.at.set((offset, line, col));
        }
        Pos { line: line as u32, col: col as u32 }
    }
}

fn snippet(text: &str, offset: usize) -> String {
    text[offset..].chars().take_while(|&c| c != '\n').take(40).collect()
}

/// Reads the S-expressions of a whole file.
pub(crate) fn sexps<'a>(file: &str, text: &'a str) -> Result<Vec<Sexp<'a>>, GdlError> {
    let lines = Lines::new(text);
    let err = |offset: usize, msg: String| {
        let p = lines.pos(offset);
        GdlError::new(file, p, msg, snippet(text, offset))
    };
    let mut rest = text;
    let mut stack: Vec<(Vec<Sexp<'a>>, Pos, usize)> = Vec::new();
    let mut top = Vec::new();
    while !rest.is_empty() {
        let offset = text.len() - rest.len();
        let (next, tok) = match token(rest) {
            Ok(x) => x,
            Err(_) => return Err(err(offset, "unreadable input".into())),
        };
        rest = next;
        match tok {
            Tok::Skip => {}
            Tok::Open => {
                if stack.len() >= MAX_DEPTH {
                    return Err(err(offset, format!("parentheses nested deeper than {MAX_DEPTH}")));
                }
                stack.push((Vec::new(), lines.pos(offset), offset));
            }
            Tok::Close => {
                let Some((items, pos, _)) = stack.pop() else {
                    return Err(err(offset, "unbalanced ')': no matching '('".into()));
                };
                let list = Sexp::List(items, pos);
                match stack.last_mut() {
                    Some((parent, _, _)) => parent.push(list),
                    None => top.push(list),
                }
            }
            Tok::Word(w) => {
                let word = Sexp::Word(w, lines.pos(offset));
                match stack.last_mut() {
                    Some((parent, _, _)) => parent.push(word),
                    None => top.push(word),
                }
            }
        }
    }
    if let Some((_, _, offset)) = stack.first() {
        return Err(err(*offset, "unbalanced '(': not closed before the end of the file".into()));
    }
    Ok(top)
}

/// Turns S-expressions into GDL rules.
pub(crate) struct Reader<'s> {
    pub file: &'s str,
    pub symbols: &'s mut SymbolTable,
}

impl Reader<'_> {
    fn err(&self, pos: Pos, msg: impl Into<String>, near: &Sexp) -> GdlError {
        GdlError::new(self.file, pos, msg.into(), show(near))
    }

    pub fn rule(&mut self, s: &Sexp) -> Result<Rule, GdlError> {
        if let Sexp::List(items, pos) = s {
            if let Some(Sexp::Word(w, _)) = items.first() {
                if *w == "<=" {
                    let Some(head) = items.get(1) else {
                        return Err(self.err(*pos, "rule `<=` without a head", s));
                    };
                    let head = self.atom(head)?;
                    let body = items[2..].iter().map(|l| self.literal(l)).collect::<Result<_, _>>()?;
                    return Ok(Rule { head, body, pos: *pos });
                }
            }
        }
        let head = self.atom(s)?;
        Ok(Rule { head, body: Vec::new(), pos: s.pos() })
    }

    fn name(&mut self, s: &Sexp, what: &str) -> Result<super::Sym, GdlError> {
        match s {
            Sexp::Word(w, p) => {
                if w.starts_with('?') {
                    return Err(self.err(*p, format!("a variable cannot be {what}"), s));
                }
                if *w == "<=" {
                    return Err(self.err(*p, format!("`<=` cannot be {what} (nested rule?)"), s));
                }
                Ok(self.symbols.intern(w))
            }
            Sexp::List(_, p) => Err(self.err(*p, format!("expected a name as {what}, found a list"), s)),
        }
    }

    fn atom(&mut self, s: &Sexp) -> Result<Atom, GdlError> {
        match s {
            Sexp::Word(..) => Ok(Atom { rel: self.name(s, "a sentence")?, args: Vec::new() }),
            Sexp::List(items, p) => {
                let Some(first) = items.first() else {
                    return Err(self.err(*p, "empty list `()` where a sentence was expected", s));
                };
                let rel = self.name(first, "a relation name")?;
                if matches!(rel, kw::NOT | kw::OR | kw::DISTINCT | kw::IMPLIES) {
                    return Err(self.err(
                        *p,
                        format!("`{}` cannot be used as a sentence here", self.symbols.name(rel)),
                        s,
                    ));
                }
                let args = items[1..].iter().map(|t| self.term(t)).collect::<Result<_, _>>()?;
                Ok(Atom { rel, args })
            }
        }
    }

    fn term(&mut self, s: &Sexp) -> Result<Term, GdlError> {
        match s {
            Sexp::Word(w, p) => {
                if let Some(v) = w.strip_prefix('?') {
                    if v.is_empty() {
                        return Err(self.err(*p, "a variable needs a name after `?`", s));
                    }
                    Ok(Term::Var(self.symbols.intern(w)))
                } else if *w == "<=" {
                    Err(self.err(*p, "`<=` cannot be used as a term (nested rule?)", s))
                } else {
                    Ok(Term::Const(self.symbols.intern(w)))
                }
            }
            Sexp::List(items, p) => {
                let Some(first) = items.first() else {
                    return Err(self.err(*p, "empty list `()` where a term was expected", s));
                };
                let f = self.name(first, "a function name")?;
                if items.len() == 1 {
                    return Ok(Term::Const(f));
                }
                let args = items[1..].iter().map(|t| self.term(t)).collect::<Result<Vec<_>, _>>()?;
                Ok(Term::Func(f, args.into()))
            }
        }
    }

    fn literal(&mut self, s: &Sexp) -> Result<Literal, GdlError> {
        if let Sexp::List(items, p) = s {
            if let Some(Sexp::Word(w, _)) = items.first() {
                let args = &items[1..];
                match self.symbols.get(w) {
                    Some(kw::NOT) => {
                        if args.len() != 1 {
                            return Err(self.err(*p, format!("`not` takes one argument, found {}", args.len()), s));
                        }
                        return Ok(Literal::Not(Box::new(self.literal(&args[0])?)));
                    }
                    Some(kw::OR) => {
                        let ls = args.iter().map(|l| self.literal(l)).collect::<Result<_, _>>()?;
                        return Ok(Literal::Or(ls));
                    }
                    Some(kw::DISTINCT) => {
                        if args.len() != 2 {
                            return Err(self.err(
                                *p,
                                format!("`distinct` takes two arguments, found {}", args.len()),
                                s,
                            ));
                        }
                        return Ok(Literal::Distinct(self.term(&args[0])?, self.term(&args[1])?));
                    }
                    _ => {}
                }
            }
        }
        Ok(Literal::Atom(self.atom(s)?))
    }
}

/// A short rendering of an S-expression for error messages.
fn show(s: &Sexp) -> String {
    fn go(s: &Sexp, out: &mut String) {
        if out.len() > 60 {
            return;
        }
        match s {
            Sexp::Word(w, _) => out.push_str(w),
            Sexp::List(items, _) => {
                out.push('(');
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    go(it, out);
                }
                out.push(')');
            }
        }
    }
    let mut out = String::new();
    go(s, &mut out);
    if out.len() > 60 {
        let cut = (0..=60).rev().find(|&i| out.is_char_boundary(i)).unwrap_or(0);
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Line and column by counting from the line's start, as the cursor must agree with.
    fn naive(text: &str, offset: usize) -> Pos {
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        Pos { line: line as u32, col: (text[start..offset].chars().count() + 1) as u32 }
    }

    #[test]
    fn positions_on_one_long_line_cost_one_pass() {
        // What a game manager sends: every rule on one line.
        let text: String = (0..20_000).map(|i| format!("(f{i} a{i} é) ")).collect();
        let lines = Lines::new(&text);
        let mut words = 0;
        for (i, _) in text.match_indices('(') {
            assert_eq!(lines.pos(i).line, 1);
            words += 1;
        }
        assert_eq!(words, 20_000);
        // Counting each token from the line's start scans ~n²/2 bytes (4·10⁹ here).
        assert!(lines.scanned.get() <= text.len(), "scanned {} bytes of {}", lines.scanned.get(), text.len());
        assert_eq!(lines.pos(text.len() - 1), naive(&text, text.len() - 1));
    }

    proptest! {
        #[test]
        fn cursor_agrees_with_counting_from_the_line_start(
            text in "[a(é)\n ;]{0,200}",
            mut picks in proptest::collection::vec(0usize..400, 0..40),
            back in proptest::collection::vec(0usize..400, 0..5),
        ) {
            let bounds: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
            picks.sort_unstable();
            let lines = Lines::new(&text);
            for p in picks {
                let o = bounds[p % bounds.len()];
                prop_assert_eq!(lines.pos(o), naive(&text, o));
            }
            // Errors may point back behind the cursor.
            for p in back {
                let o = bounds[p % bounds.len()];
                prop_assert_eq!(lines.pos(o), naive(&text, o));
            }
        }
    }
}
