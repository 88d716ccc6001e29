//! GGP messages: the message grammar of ggp-base's request factory, read by byte spans
//! (the items a command takes are located by counting parentheses, no tree is built, so a
//! message costs its text; a `start`'s rules are handed to the GDL parser as the text that
//! was sent), and a small iterative S-expression reader for replies. Command words are
//! case-insensitive.

/// Deepest nesting accepted in a message (rules are sliced, not walked, so this bounds only
/// moves and garbage).
const MAX_DEPTH: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sx {
    Atom(String),
    /// Items and the byte span of the list, parentheses included.
    List(Vec<Sx>, (usize, usize)),
}

impl Sx {
    /// ggp-base's printed form: `( mark 1 1 )`, atoms as they are.
    pub fn print(&self, out: &mut String) {
        match self {
            Sx::Atom(a) => out.push_str(a),
            Sx::List(items, _) => {
                out.push('(');
                for i in items {
                    out.push(' ');
                    i.print(out);
                }
                out.push_str(" )");
            }
        }
    }

    pub fn printed(&self) -> String {
        let mut s = String::new();
        self.print(&mut s);
        s
    }
}

/// Reads every S-expression of `text` (`;` starts a comment to the end of the line).
pub fn read(text: &str) -> Result<Vec<Sx>, String> {
    let bytes = text.as_bytes();
    let mut stack: Vec<(Vec<Sx>, usize)> = Vec::new();
    let mut top: Vec<Sx> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'(' => {
                if stack.len() >= MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH}"));
                }
                stack.push((Vec::new(), i));
                i += 1;
            }
            b')' => {
                let Some((items, start)) = stack.pop() else {
                    return Err(format!("unbalanced `)` at byte {i}"));
                };
                let list = Sx::List(items, (start, i + 1));
                match stack.last_mut() {
                    Some((parent, _)) => parent.push(list),
                    None => top.push(list),
                }
                i += 1;
            }
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            _ if b.is_ascii_whitespace() => i += 1,
            _ => {
                let start = i;
                while i < bytes.len() && !matches!(bytes[i], b'(' | b')' | b';') && !bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                // Boundaries are ASCII bytes, so the slice is on char boundaries.
                let atom = Sx::Atom(text[start..i].to_string());
                match stack.last_mut() {
                    Some((parent, _)) => parent.push(atom),
                    None => top.push(atom),
                }
            }
        }
    }
    if !stack.is_empty() {
        return Err("unbalanced `(`: the message ends inside a list".into());
    }
    Ok(top)
}

/// A request from a game manager.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Info,
    Ping,
    Preview {
        rules: String,
        clock: f64,
    },
    Start {
        id: String,
        role: String,
        rules: String,
        start_clock: f64,
        play_clock: f64,
    },
    /// `moves` is `None` for `nil` (the first turn); else each role's move, printed.
    Play {
        id: String,
        moves: Option<Vec<String>>,
    },
    Stop {
        id: String,
        moves: Option<Vec<String>>,
    },
    Abort {
        id: String,
    },
}

fn clock(text: &str, span: (usize, usize)) -> Result<f64, String> {
    let a = atom(text, span).ok_or("a clock must be a number")?;
    match a.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v.min(1e7)),
        _ => Err(format!("bad clock `{}`", a.chars().take(40).collect::<String>())),
    }
}

fn id(text: &str, span: (usize, usize)) -> Result<String, String> {
    atom(text, span).map(str::to_string).ok_or_else(|| "a match id must be an atom".into())
}

/// The item's text if it is an atom.
fn atom(text: &str, (a, b): (usize, usize)) -> Option<&str> {
    (text.as_bytes()[a] != b'(').then(|| &text[a..b])
}

fn moves(text: &str, span: (usize, usize)) -> Result<Option<Vec<String>>, String> {
    match atom(text, span) {
        Some(a) if a.eq_ignore_ascii_case("nil") => Ok(None),
        Some(a) => Err(format!("expected nil or a list of moves, got `{}`", a.chars().take(40).collect::<String>())),
        None => {
            let (items, _) = items(text, span, MAX_MOVES, MAX_MOVES)?;
            Ok(Some(items.iter().map(|&sp| printed(text, sp)).collect()))
        }
    }
}

/// Most moves in a joint move (roles of a game).
const MAX_MOVES: usize = 10_000;

/// The text inside a list's parentheses.
fn inner(text: &str, (a, b): (usize, usize)) -> Result<&str, String> {
    match atom(text, (a, b)) {
        None => Ok(&text[a + 1..b - 1]),
        Some(_) => Err("expected a list of rules".into()),
    }
}

fn is_delim(b: u8) -> bool {
    matches!(b, b'(' | b')' | b';') || b.is_ascii_whitespace()
}

/// Skips white space and comments from `i`.
fn skip(bytes: &[u8], mut i: usize, end: usize) -> usize {
    while i < end {
        match bytes[i] {
            b';' => {
                while i < end && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => break,
        }
    }
    i
}

/// The end of the item starting at `i` (an atom, or a list to its matching parenthesis,
/// nested at most [`MAX_DEPTH`] deep).
fn item_end(bytes: &[u8], mut i: usize, end: usize) -> Result<usize, String> {
    if bytes[i] == b')' {
        return Err(format!("unbalanced `)` at byte {i}"));
    }
    if bytes[i] != b'(' {
        while i < end && !is_delim(bytes[i]) {
            i += 1;
        }
        return Ok(i);
    }
    let mut depth = 0usize;
    while i < end {
        match bytes[i] {
            b'(' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH}"));
                }
            }
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            b';' => {
                while i < end && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Err("unbalanced `(`: the message ends inside a list".into())
}

/// The byte spans of the first `keep` items of the list at `span`, and how many items it
/// has; an error past `max` items (the rest of a message too long for its command is not
/// read, and nothing past `keep` is kept).
fn items(text: &str, (a, b): (usize, usize), keep: usize, max: usize) -> Result<(Vec<(usize, usize)>, usize), String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut count = 0;
    let mut i = skip(bytes, a + 1, b - 1);
    while i < b - 1 {
        if count == max {
            return Err(format!("more than {max} items in a list"));
        }
        let e = item_end(bytes, i, b - 1)?;
        if out.len() < keep {
            out.push((i, e));
        }
        count += 1;
        i = skip(bytes, e, b - 1);
    }
    Ok((out, count))
}

/// ggp-base's printed form of the item at `span` (`( mark 1 1 )`), written straight from
/// the text.
fn printed(text: &str, (a, b): (usize, usize)) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(b - a + 8);
    let mut i = a;
    while i < b {
        match bytes[i] {
            b'(' => {
                if i != a {
                    out.push(' ');
                }
                out.push('(');
                i += 1;
            }
            b')' => {
                out.push_str(" )");
                i += 1;
            }
            _ => {
                let j = skip(bytes, i, b);
                if j != i {
                    i = j;
                    continue;
                }
                let e = item_end(bytes, i, b).unwrap_or(b);
                if i != a {
                    out.push(' ');
                }
                out.push_str(&text[i..e]);
                i = e;
            }
        }
    }
    out
}

/// Parses a message. Only the items the command takes are looked at, by their spans in the
/// text (no tree is built): a message's memory is its text and a few spans, and one too
/// long for its command is refused after reading its first items.
pub fn parse(text: &str) -> Result<Message, String> {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let start = skip(bytes, 0, n);
    if start == n {
        return Err("expected one message, got 0 expressions".into());
    }
    if bytes[start] != b'(' {
        return Err("a message is a list".into());
    }
    let end = item_end(bytes, start, n)?;
    if skip(bytes, end, n) != n {
        return Err("expected one message, got more than one expression".into());
    }
    // The command decides how many items may follow: START's extra arguments are counted
    // (and ignored), every other command takes three at most.
    let first = skip(bytes, start + 1, end - 1);
    let head_end = if first < end - 1 { item_end(bytes, first, end - 1)? } else { first };
    let head_text = &text[first..head_end];
    let max = if head_text.eq_ignore_ascii_case("start") { usize::MAX } else { 8 };
    let (items, total) = items(text, (start, end), 6, max).map_err(|e| {
        if e.starts_with("more than") {
            format!("`{}` has too many arguments", head_text.chars().take(40).collect::<String>())
        } else {
            e
        }
    })?;
    let Some(&head) = items.first() else {
        return Err("a message starts with its command".into());
    };
    let Some(head) = atom(text, head) else {
        return Err("a message starts with its command".into());
    };
    let count = |k: usize| -> Result<(), String> {
        if total == k {
            Ok(())
        } else {
            Err(format!(
                "`{}` takes {} argument(s), got {}",
                head.chars().take(40).collect::<String>(),
                k - 1,
                total - 1
            ))
        }
    };
    match head.to_ascii_lowercase().as_str() {
        "info" => count(1).map(|_| Message::Info),
        "ping" => count(1).map(|_| Message::Ping),
        "preview" => {
            count(3)?;
            Ok(Message::Preview { rules: inner(text, items[1])?.to_string(), clock: clock(text, items[2])? })
        }
        "start" => {
            if total < 6 {
                return Err(format!("`start` takes 5 arguments, got {}", total - 1));
            }
            if total > 6 {
                // ggp-base's request factory ignores them too; said, not silent.
                tracing::warn!(extra = total - 6, "start: arguments after the play clock ignored");
            }
            Ok(Message::Start {
                id: id(text, items[1])?,
                role: atom(text, items[2]).ok_or("a role must be an atom")?.to_string(),
                rules: inner(text, items[3])?.to_string(),
                start_clock: clock(text, items[4])?,
                play_clock: clock(text, items[5])?,
            })
        }
        "play" => {
            count(3)?;
            Ok(Message::Play { id: id(text, items[1])?, moves: moves(text, items[2])? })
        }
        "stop" => {
            count(3)?;
            Ok(Message::Stop { id: id(text, items[1])?, moves: moves(text, items[2])? })
        }
        "abort" => {
            count(2)?;
            Ok(Message::Abort { id: id(text, items[1])? })
        }
        // Debug-escaped: a NUL or control character in the word is shown, not hidden.
        other => Err(format!("unknown command {:?}", other.chars().take(40).collect::<String>())),
    }
}

/// Decodes a URL path as Java's `URLDecoder` does (`%XX` bytes, `+` as space).
pub fn url_decode(s: &str) -> String {
    percent_decode(&s.replace('+', " ")).replace('\r', " ")
}

/// `%XX` escapes decoded (invalid ones kept as they are); `+` stays `+` (a URL's path).
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The reply to `( INFO )` as ggp-base's `InfoResponse` writes it (read by
/// `manager::client::info_name`).
pub fn info_reply(name: &str, available: bool) -> String {
    format!("((name {name}) (status {}))", if available { "available" } else { "busy" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_parse() {
        assert_eq!(parse("(info)"), Ok(Message::Info));
        assert_eq!(parse("  (PING) "), Ok(Message::Ping));
        assert_eq!(
            parse("(play m1 ((mark 1 1) noop))"),
            Ok(Message::Play { id: "m1".into(), moves: Some(vec!["( mark 1 1 )".into(), "noop".into()]) })
        );
        assert_eq!(parse("(Play m1 NIL)"), Ok(Message::Play { id: "m1".into(), moves: None }));
        assert_eq!(parse("(stop m1 nil)"), Ok(Message::Stop { id: "m1".into(), moves: None }));
        assert_eq!(parse("(abort m1)"), Ok(Message::Abort { id: "m1".into() }));
        let Ok(Message::Start { id, role, rules, start_clock, play_clock }) =
            parse("(start m2 white ((role white) (<= (legal white noop) (true (x)))) 30 10)")
        else {
            panic!("start")
        };
        assert_eq!((id.as_str(), role.as_str(), start_clock, play_clock), ("m2", "white", 30.0, 10.0));
        assert_eq!(rules, "(role white) (<= (legal white noop) (true (x)))");
        assert!(matches!(parse("(preview ((role a)) 5)"), Ok(Message::Preview { clock, .. }) if clock == 5.0));
    }

    #[test]
    fn garbage_is_an_error() {
        for bad in [
            "",
            "info",
            "()",
            "(info",
            "info)",
            "(info) (info)",
            "(play m1)",
            "(play (m1) nil)",
            "(play m1 foo)",
            "(start m1 r (rules) x 10)",
            "(start m1 r rules 10 10)",
            "(frobnicate)",
            "((info))",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
        let deep = "(".repeat(100_000);
        assert!(parse(&deep).is_err());
        // A control character in the command word is shown in the error.
        assert_eq!(parse("(info\0)"), Err("unknown command \"info\\0\"".into()));
    }

    #[test]
    fn long_messages_are_refused_from_their_first_items() {
        let long = format!("(info{})", " a".repeat(1_000_000));
        assert_eq!(parse(&long), Err("`info` has too many arguments".into()));
        // START's extra arguments are skipped, not kept.
        let start = format!("(start m r ((role r)) 1 2{})", " x".repeat(100_000));
        assert!(matches!(parse(&start), Ok(Message::Start { play_clock, .. }) if play_clock == 2.0));
        // Moves with comments and nesting print as ggp-base prints them.
        assert_eq!(
            parse("(play m ((move (a ; c\n b) 1) noop))"),
            Ok(Message::Play { id: "m".into(), moves: Some(vec!["( move ( a b ) 1 )".into(), "noop".into()]) })
        );
    }

    proptest::proptest! {
        /// Moves printed straight from the text agree with the tree reader's printing.
        #[test]
        fn moves_print_as_the_tree_reader_prints_them(moves in "[a-c1-2 ()\n;]{0,60}") {
            let msg = format!("(play m ({moves}))");
            if let Ok(trees) = read(&msg) {
                if let [Sx::List(items, _)] = trees.as_slice() {
                    if let Some(Sx::List(ms, _)) = items.get(2) {
                        let want: Vec<String> = ms.iter().map(Sx::printed).collect();
                        if items.len() == 3 {
                            proptest::prop_assert_eq!(parse(&msg), Ok(Message::Play { id: "m".into(), moves: Some(want) }));
                        }
                    }
                }
            } else {
                proptest::prop_assert!(parse(&msg).is_err());
            }
        }
    }

    #[test]
    fn urls_decode() {
        assert_eq!(url_decode("%28info%29"), "(info)");
        assert_eq!(url_decode("(play+m1+nil)"), "(play m1 nil)");
        assert_eq!(url_decode("%2"), "%2");
        assert_eq!(url_decode("%zz"), "%zz");
    }
}
