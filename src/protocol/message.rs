//! GGP messages: a small S-expression reader (iterative, with byte spans so the rules of a
//! `start` are handed to the GDL parser as the text that was sent) and the message grammar
//! of ggp-base's request factory. Command words are case-insensitive.

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

    fn atom(&self) -> Option<&str> {
        match self {
            Sx::Atom(a) => Some(a),
            Sx::List(..) => None,
        }
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

fn clock(s: &Sx) -> Result<f64, String> {
    let a = s.atom().ok_or("a clock must be a number")?;
    match a.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v.min(1e7)),
        _ => Err(format!("bad clock `{a}`")),
    }
}

fn id(s: &Sx) -> Result<String, String> {
    s.atom().map(str::to_string).ok_or_else(|| "a match id must be an atom".into())
}

fn moves(s: &Sx) -> Result<Option<Vec<String>>, String> {
    match s {
        Sx::Atom(a) if a.eq_ignore_ascii_case("nil") => Ok(None),
        Sx::Atom(a) => Err(format!("expected nil or a list of moves, got `{a}`")),
        Sx::List(items, _) => Ok(Some(items.iter().map(Sx::printed).collect())),
    }
}

/// The text inside a list's parentheses.
fn inner<'a>(text: &'a str, s: &Sx) -> Result<&'a str, String> {
    match s {
        Sx::List(_, (a, b)) => Ok(&text[a + 1..b - 1]),
        Sx::Atom(_) => Err("expected a list of rules".into()),
    }
}

/// Parses a message.
pub fn parse(text: &str) -> Result<Message, String> {
    let mut top = read(text)?;
    if top.len() != 1 {
        return Err(format!("expected one message, got {} expressions", top.len()));
    }
    let Sx::List(items, _) = top.pop().unwrap_or(Sx::Atom(String::new())) else {
        return Err("a message is a list".into());
    };
    let Some(head) = items.first().and_then(Sx::atom) else {
        return Err("a message starts with its command".into());
    };
    let n = items.len();
    let want =
        |k: usize| if n == k { Ok(()) } else { Err(format!("`{head}` takes {} argument(s), got {}", k - 1, n - 1)) };
    match head.to_ascii_lowercase().as_str() {
        "info" => want(1).map(|_| Message::Info),
        "ping" => want(1).map(|_| Message::Ping),
        "preview" => {
            want(3)?;
            Ok(Message::Preview { rules: inner(text, &items[1])?.to_string(), clock: clock(&items[2])? })
        }
        "start" => {
            if n < 6 {
                return Err(format!("`start` takes 5 arguments, got {}", n - 1));
            }
            if n > 6 {
                // ggp-base's request factory ignores them too; said, not silent.
                tracing::warn!(extra = n - 6, "start: arguments after the play clock ignored");
            }
            Ok(Message::Start {
                id: id(&items[1])?,
                role: items[2].atom().ok_or("a role must be an atom")?.to_string(),
                rules: inner(text, &items[3])?.to_string(),
                start_clock: clock(&items[4])?,
                play_clock: clock(&items[5])?,
            })
        }
        "play" => {
            want(3)?;
            Ok(Message::Play { id: id(&items[1])?, moves: moves(&items[2])? })
        }
        "stop" => {
            want(3)?;
            Ok(Message::Stop { id: id(&items[1])?, moves: moves(&items[2])? })
        }
        "abort" => {
            want(2)?;
            Ok(Message::Abort { id: id(&items[1])? })
        }
        // Debug-escaped: a NUL or control character in the word is shown, not hidden.
        other => Err(format!("unknown command {:?}", other.chars().take(40).collect::<String>())),
    }
}

/// Decodes a URL path as Java's `URLDecoder` does (`%XX` bytes, `+` as space).
pub fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
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
    String::from_utf8_lossy(&out).replace('\r', " ")
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
    fn urls_decode() {
        assert_eq!(url_decode("%28info%29"), "(info)");
        assert_eq!(url_decode("(play+m1+nil)"), "(play m1 nil)");
        assert_eq!(url_decode("%2"), "%2");
        assert_eq!(url_decode("%zz"), "%zz");
    }
}
