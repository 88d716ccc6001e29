//! Unit tests of the GDL front end: parser, printer, error reporting and validation.

use super::*;

fn parse(text: &str) -> Game {
    Game::parse("test.kif", text).unwrap_or_else(|e| panic!("parse failed: {e}"))
}

fn sym(g: &Game, name: &str) -> Sym {
    g.symbols.get(name).unwrap_or_else(|| panic!("symbol {name} not interned"))
}

fn c(g: &Game, name: &str) -> Term {
    Term::Const(sym(g, name))
}

fn v(g: &Game, name: &str) -> Term {
    Term::Var(sym(g, name))
}

fn atom_text(g: &Game, a: &Atom) -> String {
    let mut s = String::new();
    write_atom(a, &g.symbols, &mut s);
    s
}

fn term_text(g: &Game, t: &Term) -> String {
    let mut s = String::new();
    write_term(t, &g.symbols, &mut s);
    s
}

// ---------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------

#[test]
fn comments_are_skipped() {
    let g = parse(
        "; a comment with (unbalanced parens\n\
         ;;; and another one )))\n\
         (role x) ; trailing comment (role y)\n\
         (init (cell 1)) ;; last line without newline",
    );
    assert_eq!(g.rules.len(), 2);
    assert_eq!(g.rules[0].head.rel, kw::ROLE);
    assert_eq!(g.rules[0].head.args, vec![c(&g, "x")]);
    assert_eq!(g.rules[0].pos, Pos { line: 3, col: 1 });
    assert_eq!(g.rules[1].head.rel, kw::INIT);
    assert_eq!(g.rules[1].pos, Pos { line: 4, col: 1 });
    assert!(g.symbols.get("y").is_none(), "text inside a comment must not be read");
}

#[test]
fn facts_and_rules() {
    let g = parse("(role robot)\n(<= (legal robot (move ?x)) (true (at ?x)) (adjacent ?x ?y))\nterminal");
    assert_eq!(g.rules.len(), 3);
    assert!(g.rules[0].body.is_empty());
    let r = &g.rules[1];
    assert_eq!(r.pos, Pos { line: 2, col: 1 });
    assert_eq!(r.head.rel, kw::LEGAL);
    assert_eq!(r.head.args[0], c(&g, "robot"));
    assert_eq!(r.head.args[1], Term::Func(sym(&g, "move"), vec![v(&g, "?x")].into()));
    assert_eq!(r.body.len(), 2);
    let Literal::Atom(a) = &r.body[0] else { panic!("expected an atom, got {:?}", r.body[0]) };
    assert_eq!(a.rel, kw::TRUE);
    assert_eq!(a.args, vec![Term::Func(sym(&g, "at"), vec![v(&g, "?x")].into())]);
    let Literal::Atom(a) = &r.body[1] else { panic!("expected an atom") };
    assert_eq!(a.rel, sym(&g, "adjacent"));
    assert_eq!(a.args, vec![v(&g, "?x"), v(&g, "?y")]);
    // A bare word at top level is a proposition.
    assert_eq!(g.rules[2].head, Atom { rel: kw::TERMINAL, args: vec![] });
}

#[test]
fn variables_are_distinct_from_constants() {
    let g = parse("(p ?x x ?X)");
    let args = &g.rules[0].head.args;
    assert_eq!(args.len(), 3);
    assert!(matches!(args[0], Term::Var(_)));
    assert!(matches!(args[1], Term::Const(_)));
    assert!(matches!(args[2], Term::Var(_)));
    assert_ne!(args[0], args[2], "variable names are case-sensitive");
    assert!(!g.rules[0].head.args[0].is_ground());
}

#[test]
fn nested_function_terms() {
    let g = parse("(init (cell (coord 1 (f a b)) (g (h ?z))))");
    let a = &g.rules[0].head;
    assert_eq!(a.rel, kw::INIT);
    let f = |n: &str, args: Vec<Term>| Term::Func(sym(&g, n), args.into());
    let expected = f(
        "cell",
        vec![
            f("coord", vec![c(&g, "1"), f("f", vec![c(&g, "a"), c(&g, "b")])]),
            f("g", vec![f("h", vec![v(&g, "?z")])]),
        ],
    );
    assert_eq!(a.args, vec![expected]);
    let mut vars = Vec::new();
    a.for_each_var(&mut |s| vars.push(g.symbols.name(s).to_string()));
    assert_eq!(vars, vec!["?z"]);
}

#[test]
fn not_or_distinct_literals() {
    let g = parse("(<= (p ?x) (q ?x) (not (r ?x)) (or (s ?x) (not (t ?x)) (u)) (distinct ?x a))");
    let body = &g.rules[0].body;
    assert_eq!(body.len(), 4);
    assert!(matches!(&body[0], Literal::Atom(a) if a.rel == sym(&g, "q")));
    match &body[1] {
        Literal::Not(inner) => assert!(matches!(&**inner, Literal::Atom(a) if a.rel == sym(&g, "r"))),
        other => panic!("expected not, got {other:?}"),
    }
    match &body[2] {
        Literal::Or(ls) => {
            assert_eq!(ls.len(), 3);
            assert!(matches!(&ls[0], Literal::Atom(a) if a.rel == sym(&g, "s")));
            assert!(matches!(&ls[1], Literal::Not(_)));
            assert!(matches!(&ls[2], Literal::Atom(a) if a.rel == sym(&g, "u") && a.args.is_empty()));
        }
        other => panic!("expected or, got {other:?}"),
    }
    assert_eq!(body[3], Literal::Distinct(v(&g, "?x"), c(&g, "a")));
}

#[test]
fn numbers_are_constants() {
    let g = parse("(goal x 100)\n(succ 9 10)");
    assert_eq!(g.rules[0].head.rel, kw::GOAL);
    assert_eq!(g.rules[0].head.args, vec![c(&g, "x"), c(&g, "100")]);
    assert_eq!(g.symbols.name(sym(&g, "10")), "10");
    assert_ne!(sym(&g, "9"), sym(&g, "10"));
}

#[test]
fn keywords_are_case_insensitive() {
    let g = parse(
        "(ROLE x)\n(Role y)\n(INIT (Cell 1))\n(<= TERMINAL (TRUE (Cell 1)))\n\
         (<= (LEGAL x a) (NOT (p)) (Or (q) (r)) (DISTINCT x y))\n(<= (Goal x 100) (True done))",
    );
    assert_eq!(g.roles().iter().map(|&s| g.symbols.name(s)).collect::<Vec<_>>(), vec!["x", "y"]);
    assert_eq!(g.rules[2].head.rel, kw::INIT);
    assert_eq!(g.rules[3].head.rel, kw::TERMINAL);
    assert!(g.rules[3].head.args.is_empty());
    assert!(matches!(&g.rules[3].body[0], Literal::Atom(a) if a.rel == kw::TRUE));
    let body = &g.rules[4].body;
    assert_eq!(g.rules[4].head.rel, kw::LEGAL);
    assert!(matches!(body[0], Literal::Not(_)), "NOT must be read as negation: {:?}", body[0]);
    assert!(matches!(body[1], Literal::Or(_)), "Or must be read as disjunction: {:?}", body[1]);
    assert!(matches!(body[2], Literal::Distinct(..)), "DISTINCT must be read as distinct: {:?}", body[2]);
    assert_eq!(g.rules[5].head.rel, kw::GOAL);
    // Keywords print in lower case.
    assert_eq!(atom_text(&g, &g.rules[3].head), "terminal");
}

#[test]
fn constants_keep_their_case() {
    let g = parse("(p canSwap)\n(p canswap)\n(p CANSWAP)");
    let a = &g.rules[0].head.args[0];
    let b = &g.rules[1].head.args[0];
    let d = &g.rules[2].head.args[0];
    assert_ne!(a, b);
    assert_ne!(a, d);
    assert_ne!(b, d);
    assert_eq!(term_text(&g, a), "canSwap");
    assert_eq!(term_text(&g, b), "canswap");
    assert_eq!(term_text(&g, d), "CANSWAP");
}

#[test]
fn printer_canonical_form() {
    let g = parse("(cell 1 1 b)\n(init   (cell\n  (coord 1   2)  x))\nterminal\n(control xplayer)");
    assert_eq!(atom_text(&g, &g.rules[0].head), "( cell 1 1 b )");
    assert_eq!(atom_text(&g, &g.rules[1].head), "( init ( cell ( coord 1 2 ) x ) )");
    assert_eq!(term_text(&g, &g.rules[1].head.args[0]), "( cell ( coord 1 2 ) x )");
    assert_eq!(atom_text(&g, &g.rules[2].head), "terminal");
    assert_eq!(term_text(&g, &g.rules[3].head.args[0]), "xplayer");
}

#[test]
fn parse_ground_term_reads_moves() {
    let mut syms = SymbolTable::new();
    let t = parse_ground_term("( mark 1 1 )", &mut syms).unwrap();
    let mark = syms.get("mark").unwrap();
    let one = syms.get("1").unwrap();
    assert_eq!(t, Term::Func(mark, vec![Term::Const(one), Term::Const(one)].into()));
    let mut s = String::new();
    write_term(&t, &syms, &mut s);
    assert_eq!(s, "( mark 1 1 )");

    let t = parse_ground_term("noop", &mut syms).unwrap();
    assert_eq!(t, Term::Const(syms.get("noop").unwrap()));

    // Any spelling of the same term gives the same term.
    let t2 = parse_ground_term("(mark 1\n 1)", &mut syms).unwrap();
    assert_eq!(t2, Term::Func(mark, vec![Term::Const(one), Term::Const(one)].into()));

    let t = parse_ground_term("( move ( pt 1 2 ) )", &mut syms).unwrap();
    let mut s = String::new();
    write_term(&t, &syms, &mut s);
    assert_eq!(s, "( move ( pt 1 2 ) )");
}

#[test]
fn parse_ground_term_rejects_bad_input() {
    let mut syms = SymbolTable::new();
    let e = parse_ground_term("(mark ?r 1)", &mut syms).unwrap_err();
    assert!(e.msg.contains("variable"), "{e}");
    assert!(parse_ground_term("(mark 1 1) (mark 2 2)", &mut syms).is_err());
    assert!(parse_ground_term("", &mut syms).is_err());
    assert!(parse_ground_term("(mark 1", &mut syms).is_err());
    assert!(parse_ground_term("(<= (p) (q))", &mut syms).is_err());
}

// ---------------------------------------------------------------------------------------
// Parse errors: each names file, line and column, and says what is wrong.
// ---------------------------------------------------------------------------------------

/// Parses `text`, expecting an error at `line:col` whose message contains `needle`.
fn expect_error(text: &str, line: u32, col: u32, needle: &str) -> GdlError {
    let e = match Game::parse("bad.kif", text) {
        Ok(g) => panic!("expected a parse error, got {} rules", g.rules.len()),
        Err(e) => e,
    };
    check_error(&e, line, col, needle);
    e
}

fn check_error(e: &GdlError, line: u32, col: u32, needle: &str) {
    assert_eq!(e.pos, Pos { line, col }, "wrong position in `{e}`");
    assert!(e.msg.contains(needle), "message `{}` should mention `{needle}`", e.msg);
    let shown = e.to_string();
    let prefix = format!("{}:{line}:{col}: ", e.file);
    assert!(shown.starts_with(&prefix), "`{shown}` should start with `{prefix}`");
    assert!(shown.len() > prefix.len() + 5, "`{shown}` should carry a message");
}

#[test]
fn error_truncated_file() {
    let e = expect_error("(role x)\n(role o)\n  (init (cell 1 1", 3, 3, "not closed");
    assert_eq!(e.file, "bad.kif");
    assert!(e.near.starts_with("(init (cell 1 1"), "near: {}", e.near);
}

#[test]
fn error_extra_close_paren() {
    expect_error("(role x)\n(init (cell 1 1 b)))\n(role o)", 2, 20, "unbalanced ')'");
}

#[test]
fn error_empty_list_as_sentence() {
    expect_error("(role x)\n  ()", 2, 3, "empty list");
    // Also inside a rule body.
    expect_error("(<= (p) (q)\n      ())", 2, 7, "empty list");
}

#[test]
fn error_variable_as_relation_name() {
    let e = expect_error("(role x)\n(<= (p ?x) (?r ?x))", 2, 13, "variable");
    assert!(e.msg.contains("relation name"), "{e}");
    expect_error("(?x a)", 1, 2, "variable");
}

#[test]
fn error_binary_garbage() {
    let bytes: &[u8] = b"(role x)\n(ro\xffle o)\n";
    let e = match Game::parse_bytes("bin.kif", bytes) {
        Ok(_) => panic!("invalid UTF-8 must not parse"),
        Err(e) => e,
    };
    check_error(&e, 2, 4, "UTF-8");
    assert!(e.msg.contains("0xff"), "{e}");
    let e = Game::parse_bytes("bin.kif", &[0xff, 0xfe, 0x00, 0x01, 0x80]).unwrap_err();
    check_error(&e, 1, 1, "UTF-8");
}

#[test]
fn error_nesting_too_deep_does_not_overflow_the_stack() {
    let text = "(".repeat(10_000);
    let e = Game::parse("deep.kif", &text).unwrap_err();
    assert_eq!(e.pos.line, 1);
    assert!(e.pos.col > 1 && e.pos.col <= 10_000, "{e}");
    assert!(e.msg.contains("nested deeper"), "{e}");
    assert!(e.to_string().starts_with(&format!("deep.kif:1:{}: ", e.pos.col)));
    // Balanced but too deep, too.
    let text = format!("(p {}a{})", "(f ".repeat(5_000), ")".repeat(5_000));
    let e = Game::parse("deep.kif", &text).unwrap_err();
    assert!(e.msg.contains("nested deeper"), "{e}");
    // A nesting depth well within the limit parses.
    let text = format!("(p {}a{})", "(f ".repeat(50), ")".repeat(50));
    assert!(Game::parse("ok.kif", &text).is_ok());
}

#[test]
fn error_other_malformed_sentences() {
    expect_error("(not (p))", 1, 1, "not");
    expect_error("(<= (p) (not (q) (r)))", 1, 9, "`not` takes one argument");
    expect_error("(<= (p) (distinct a))", 1, 9, "`distinct` takes two arguments");
    expect_error("(<=)", 1, 1, "without a head");
    expect_error("(p (<= a))", 1, 5, "<=");
    expect_error("(p ?)", 1, 4, "variable needs a name");
}

#[test]
fn load_missing_file_is_an_error() {
    let e = Game::load(std::path::Path::new("/nonexistent/dir/none.kif")).unwrap_err();
    assert!(e.msg.contains("cannot read"), "{e}");
    assert!(e.to_string().starts_with("/nonexistent/dir/none.kif:"), "{e}");
}

#[test]
fn game_name_and_tictactoe_file() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/tictactoe.kif");
    let g = Game::load(&path).unwrap();
    assert_eq!(g.name, "tictactoe");
    assert_eq!(g.rules.len(), 45);
    assert!(!g.is_gdl2());
    assert!(validate(&g).is_ok());
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

/// A minimal valid game; tests add or remove lines to break one rule at a time.
const BASE: &[&str] = &[
    "(role r)",
    "(init s)",
    "(q a)",
    "(<= (legal r go) (true s))",
    "(<= (next s) (does r go))",
    "(<= terminal (true s))",
    "(goal r 100)",
];

fn game_with(extra: &[&str], without: &[&str]) -> Game {
    let mut lines: Vec<&str> = BASE.iter().copied().filter(|l| !without.contains(l)).collect();
    lines.extend_from_slice(extra);
    parse(&lines.join("\n"))
}

fn errors_of(g: &Game) -> Vec<String> {
    validate(g).errors().map(|d| d.msg.clone()).collect()
}

/// Validates and expects an error whose message contains all of `needles`.
fn expect_invalid(extra: &[&str], without: &[&str], needles: &[&str]) -> Report {
    let g = game_with(extra, without);
    let report = validate(&g);
    assert!(!report.is_ok(), "expected validation errors for {extra:?} without {without:?}");
    let errs = errors_of(&g);
    assert!(
        errs.iter().any(|m| needles.iter().all(|n| m.contains(n))),
        "no error mentions all of {needles:?}: {errs:?}"
    );
    report
}

#[test]
fn base_game_is_valid() {
    let g = game_with(&[], &[]);
    let report = validate(&g);
    assert!(report.is_ok(), "{:?}", report.diags);
    assert_eq!(report.roles, vec!["r"]);
    assert!(report.relations.contains(&("q".to_string(), 1, 1)));
    assert!(report.relations.contains(&("legal".to_string(), 2, 1)));
}

#[test]
fn unsafe_head_variable() {
    let r = expect_invalid(&["(<= (p ?x) (q a))"], &[], &["unsafe", "`p`", "?x", "head"]);
    // The diagnostic points at the rule (line 8: after the 7 base lines).
    let d = r.errors().next().unwrap();
    assert_eq!(d.pos, Pos { line: 8, col: 1 });
    assert!(d.to_string().starts_with("8:1: error: "), "{d}");
}

#[test]
fn unsafe_variable_only_in_negation() {
    expect_invalid(&["(<= (p ?x) (q ?x) (not (q ?y)))"], &[], &["unsafe", "?y", "negation"]);
}

#[test]
fn unsafe_variable_only_in_distinct() {
    expect_invalid(&["(<= (p ?x) (q ?x) (distinct ?x ?z))"], &[], &["unsafe", "?z", "distinct"]);
}

#[test]
fn unsafe_variable_in_one_branch_of_or() {
    expect_invalid(&["(<= (p ?x) (or (q ?x) (true s)))"], &[], &["unsafe", "?x"]);
}

#[test]
fn safe_rules_pass() {
    let g = game_with(
        &[
            "(<= (p ?x) (q ?x) (not (q ?x)) (distinct ?x b))",
            "(<= (p2 ?x) (or (q ?x) (p ?x)))",
            "(<= (p3 ?x) (q ?x) (not (distinct ?x a)))",
        ],
        &[],
    );
    let report = validate(&g);
    assert!(report.is_ok(), "{:?}", report.diags);
}

#[test]
fn unstratified_negation() {
    let r = expect_invalid(&["(<= (p) (not (q)))", "(<= (q) (not (p)))"], &[], &["not stratified"]);
    let msgs: Vec<&str> = r.errors().map(|d| d.msg.as_str()).collect();
    assert!(msgs.iter().any(|m| m.contains("`p`") || m.contains("`q`")), "{msgs:?}");
    // Through a positive cycle, too.
    expect_invalid(&["(<= (p) (t))", "(<= (t) (not (p)))"], &[], &["not stratified"]);
    // A relation negating itself.
    expect_invalid(&["(<= (p ?x) (q ?x) (not (p ?x)))"], &[], &["not stratified", "`p`"]);
}

#[test]
fn stratified_negation_passes_and_has_levels() {
    let g = game_with(&["(<= (p) (not (t)))", "(<= (t) (q a))"], &[]);
    let report = validate(&g);
    assert!(report.is_ok(), "{:?}", report.diags);
    let level_of = |name: &str| report.strata.iter().find(|s| s.relations.iter().any(|r| r == name)).map(|s| s.level);
    assert!(level_of("p").unwrap() > level_of("t").unwrap(), "{:?}", report.strata);
}

#[test]
fn arity_clash() {
    expect_invalid(&["(q a b)"], &[], &["`q`", "2 argument(s)", "1"]);
    // Keywords have fixed arities.
    expect_invalid(&["(<= (legal r) (true s))"], &[], &["`legal` takes 2"]);
}

#[test]
fn true_as_head() {
    expect_invalid(&["(true s)"], &[], &["`true`", "head"]);
    expect_invalid(&["(<= (does r go) (q a))"], &[], &["`does`", "head"]);
}

#[test]
fn init_in_body() {
    expect_invalid(&["(<= (p) (init s))"], &[], &["`init`", "body"]);
    expect_invalid(&["(<= (p) (not (next s)))"], &[], &["`next`", "body"]);
}

#[test]
fn missing_required_relations() {
    expect_invalid(&[], &["(<= terminal (true s))"], &["no rule defines `terminal`"]);
    expect_invalid(&[], &["(goal r 100)"], &["no rule defines `goal`"]);
    expect_invalid(&[], &["(<= (legal r go) (true s))"], &["no rule defines `legal`"]);
    expect_invalid(&[], &["(role r)"], &["no `(role"]);
}

#[test]
fn legal_depending_on_does() {
    expect_invalid(&["(<= (legal r stop) (moved))", "(<= (moved) (does r go))"], &[], &["`legal`", "`does`"]);
    expect_invalid(&["(<= (goal r 0) (does r go))"], &[], &["`goal`", "`does`"]);
    expect_invalid(&["(<= terminal (does r go))"], &[], &["`terminal`", "`does`"]);
}

#[test]
fn rule_level_stratification_of_goal() {
    // goal depends negatively on goal, but on a different rule: stratified at rule grain.
    let g = game_with(&["(<= (goal r 100) (not (goal r 0)))", "(<= (goal r 0) (true finished))"], &["(goal r 100)"]);
    let report = validate(&g);
    assert!(report.is_ok(), "{:?}", report.diags);
    // The same shape where the negated literal unifies with its own rule's head is not.
    let g = game_with(&["(<= (goal r 100) (not (goal r 100)))"], &["(goal r 100)"]);
    let report = validate(&g);
    assert!(!report.is_ok());
    assert!(errors_of(&g).iter().any(|m| m.contains("not stratified") && m.contains("`goal`")), "{:?}", errors_of(&g));
}

#[test]
fn duplicate_role_and_gdl2_are_rejected() {
    expect_invalid(&["(role r)"], &[], &["declared twice"]);
    expect_invalid(&["(<= (sees r s) (true s))"], &[], &["GDL-II"]);
}

#[test]
fn every_test_game_is_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "kif") {
            let g = Game::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let report = validate(&g);
            assert!(report.is_ok(), "{}: {:?}", path.display(), report.diags);
            assert!((1..=2).contains(&report.roles.len()), "{}", path.display());
            n += 1;
        }
    }
    assert_eq!(n, 26);
}
