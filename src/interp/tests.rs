//! Tests of the interpreter: golden tests on every game of `gdl/`, exhaustive state counts,
//! small inline games for recursion, `or`, negation and top-down evaluation, and random
//! playout properties.

use super::*;
use crate::gdl::Game;
use crate::machine::StateMachine;
use std::collections::{HashSet, VecDeque};
use std::path::Path;

fn game_path(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file)
}

fn load(file: &str) -> Interpreter {
    let game = Game::load(&game_path(file)).unwrap_or_else(|e| panic!("{e}"));
    Interpreter::new(&game).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn inline(text: &str) -> Interpreter {
    let game = Game::parse("inline.kif", text).unwrap_or_else(|e| panic!("{e}"));
    Interpreter::new(&game).unwrap_or_else(|e| panic!("inline game: {e}"))
}

const GAMES: [&str; 5] =
    ["tictactoe.kif", "connect4.kif", "parallel_tictactoe.kif", "joined_tictactoe.kif", "three_to_fifteen.kif"];

/// Sorted texts of the legal moves of `role` in `state`.
fn legal(m: &mut Interpreter, state: &InterpState, role: usize) -> Vec<String> {
    let mut out = Vec::new();
    m.legal_moves(state, role, &mut out);
    let mut v: Vec<String> = out.iter().map(|&mv| m.move_text(mv)).collect();
    v.sort();
    v
}

fn goals(m: &mut Interpreter, state: &InterpState) -> Vec<Goal> {
    (0..m.roles().len()).map(|r| m.goal(state, r)).collect()
}

/// Plays the joint move given as texts (one per role); each must be legal.
fn step(m: &mut Interpreter, state: &InterpState, joint: &[&str]) -> InterpState {
    assert_eq!(joint.len(), m.roles().len());
    let mut moves = Vec::new();
    let mut out = Vec::new();
    for (r, text) in joint.iter().enumerate() {
        m.legal_moves(state, r, &mut out);
        let found = out.iter().copied().find(|&mv| m.move_text(mv) == *text);
        let Some(mv) = found else {
            let role = m.roles()[r].clone();
            panic!("move {text} of role {role} not legal; legal: {:?}", legal(m, state, r))
        };
        moves.push(mv);
    }
    let mut next = InterpState::default();
    m.next_state(state, &moves, &mut next);
    next
}

/// Plays a turn-taking line: `moves[i]` is played by role `i % 2`, the other role plays noop.
/// Every state before the last must be non-terminal.
fn play_alternating(m: &mut Interpreter, moves: &[&str]) -> InterpState {
    let mut s = m.initial_state();
    for (i, mv) in moves.iter().enumerate() {
        assert!(!m.is_terminal(&s), "terminal too early, before move {i} ({mv})");
        let joint: Vec<&str> = if i % 2 == 0 { vec![mv, "noop"] } else { vec!["noop", mv] };
        s = step(m, &s, &joint);
    }
    s
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn cells_3x3(prefix: &str, mark: &str) -> Vec<String> {
    let mut v = Vec::new();
    for r in 1..=3 {
        for c in 1..=3 {
            v.push(format!("( {prefix}{r} {c} {mark} )"));
        }
    }
    v
}

// ---------------------------------------------------------------------------------------
// Tic-tac-toe
// ---------------------------------------------------------------------------------------

#[test]
fn tictactoe_initial_state_and_moves() {
    let mut m = load("tictactoe.kif");
    assert_eq!(m.roles(), &["x", "o"]);
    let s = m.initial_state();
    let mut expected = cells_3x3("cell ", "b");
    expected.push("( control x )".into());
    assert_eq!(m.state_facts(&s), expected);
    let marks: Vec<String> = (1..=3).flat_map(|r| (1..=3).map(move |c| format!("( mark {r} {c} )"))).collect();
    assert_eq!(legal(&mut m, &s, 0), marks);
    assert_eq!(legal(&mut m, &s, 1), vec!["noop"]);
    assert!(!m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(50), Some(50)]);
}

#[test]
fn tictactoe_next_state() {
    let mut m = load("tictactoe.kif");
    let s0 = m.initial_state();
    let s1 = step(&mut m, &s0, &["( mark 2 3 )", "noop"]);
    let facts = m.state_facts(&s1);
    assert!(facts.contains(&"( cell 2 3 x )".to_string()));
    assert!(!facts.contains(&"( cell 2 3 b )".to_string()));
    assert!(facts.contains(&"( control o )".to_string()));
    assert!(!facts.contains(&"( control x )".to_string()));
    assert_eq!(facts.len(), 10);
    assert_eq!(legal(&mut m, &s1, 0), vec!["noop"]);
    let o_moves = legal(&mut m, &s1, 1);
    assert_eq!(o_moves.len(), 8);
    assert!(!o_moves.contains(&"( mark 2 3 )".to_string()));
    // The earlier state is unchanged and still answers as before (caches follow the state).
    assert_eq!(legal(&mut m, &s0, 0).len(), 9);
    let s2 = step(&mut m, &s1, &["noop", "( mark 1 1 )"]);
    let facts = m.state_facts(&s2);
    assert!(facts.contains(&"( cell 1 1 o )".to_string()));
    assert!(facts.contains(&"( cell 2 3 x )".to_string()));
    assert!(facts.contains(&"( control x )".to_string()));
    assert_eq!(legal(&mut m, &s2, 0).len(), 7);
}

#[test]
fn tictactoe_x_wins_on_a_row() {
    let mut m = load("tictactoe.kif");
    let s = play_alternating(&mut m, &["( mark 1 1 )", "( mark 2 1 )", "( mark 1 2 )", "( mark 2 2 )", "( mark 1 3 )"]);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(100), Some(0)]);
    let facts = m.state_facts(&s);
    for f in ["( cell 1 1 x )", "( cell 1 2 x )", "( cell 1 3 x )", "( cell 2 1 o )", "( cell 2 2 o )", "( control o )"]
    {
        assert!(facts.contains(&f.to_string()), "{f} missing from {facts:?}");
    }
}

#[test]
fn tictactoe_o_wins_on_a_diagonal() {
    let mut m = load("tictactoe.kif");
    let s = play_alternating(
        &mut m,
        &["( mark 1 1 )", "( mark 1 3 )", "( mark 1 2 )", "( mark 2 2 )", "( mark 3 3 )", "( mark 3 1 )"],
    );
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(0), Some(100)]);
}

#[test]
fn tictactoe_draw_on_a_full_board() {
    let mut m = load("tictactoe.kif");
    // x o x / x o o / o x x
    let line = [
        "( mark 1 1 )",
        "( mark 1 2 )",
        "( mark 1 3 )",
        "( mark 2 2 )",
        "( mark 2 1 )",
        "( mark 3 1 )",
        "( mark 3 2 )",
        "( mark 2 3 )",
        "( mark 3 3 )",
    ];
    let s = play_alternating(&mut m, &line[..8]);
    assert!(!m.is_terminal(&s));
    assert_eq!(legal(&mut m, &s, 0), vec!["( mark 3 3 )"]);
    let s = step(&mut m, &s, &["( mark 3 3 )", "noop"]);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(50), Some(50)]);
    assert!(m.state_facts(&s).iter().all(|f| !f.ends_with(" b )")));
}

// ---------------------------------------------------------------------------------------
// Three to fifteen
// ---------------------------------------------------------------------------------------

#[test]
fn three_to_fifteen_initial_state_and_moves() {
    let mut m = load("three_to_fifteen.kif");
    assert_eq!(m.roles(), &["first", "second"]);
    let s = m.initial_state();
    let mut expected = vec!["( control first )".to_string()];
    expected.extend((1..=9).map(|n| format!("( free {n} )")));
    assert_eq!(m.state_facts(&s), expected);
    assert_eq!(legal(&mut m, &s, 0), (1..=9).map(|n| format!("( claim {n} )")).collect::<Vec<_>>());
    assert_eq!(legal(&mut m, &s, 1), vec!["noop"]);
    assert!(!m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(50), Some(50)]);
}

#[test]
fn three_to_fifteen_first_wins_with_2_7_6() {
    let mut m = load("three_to_fifteen.kif");
    let s = play_alternating(&mut m, &["( claim 2 )", "( claim 9 )", "( claim 7 )", "( claim 5 )"]);
    let facts = m.state_facts(&s);
    assert_eq!(
        facts,
        strings(&[
            "( control first )",
            "( free 1 )",
            "( free 3 )",
            "( free 4 )",
            "( free 6 )",
            "( free 8 )",
            "( holds first 2 )",
            "( holds first 7 )",
            "( holds second 5 )",
            "( holds second 9 )",
        ])
    );
    assert_eq!(
        legal(&mut m, &s, 0),
        strings(&["( claim 1 )", "( claim 3 )", "( claim 4 )", "( claim 6 )", "( claim 8 )"])
    );
    let s = step(&mut m, &s, &["( claim 6 )", "noop"]);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(100), Some(0)]);
}

#[test]
fn three_to_fifteen_second_wins_among_four_numbers() {
    let mut m = load("three_to_fifteen.kif");
    // first: 1, 2, 3 (sum 6, no triple); second: 5, 4, then 6 (6 5 4).
    let s = play_alternating(&mut m, &["( claim 1 )", "( claim 5 )", "( claim 2 )", "( claim 4 )", "( claim 3 )"]);
    assert!(!m.is_terminal(&s));
    let s = step(&mut m, &s, &["noop", "( claim 6 )"]);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(0), Some(100)]);
}

// ---------------------------------------------------------------------------------------
// Connect four
// ---------------------------------------------------------------------------------------

fn drops(cols: &[u32]) -> Vec<String> {
    cols.iter().map(|c| format!("( drop {c} )")).collect()
}

#[test]
fn connect4_initial_state_and_moves() {
    let mut m = load("connect4.kif");
    assert_eq!(m.roles(), &["red", "yellow"]);
    let s = m.initial_state();
    assert_eq!(m.state_facts(&s), vec!["( control red )"]);
    assert_eq!(legal(&mut m, &s, 0), drops(&[1, 2, 3, 4, 5, 6, 7]));
    assert_eq!(legal(&mut m, &s, 1), vec!["noop"]);
    assert!(!m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(50), Some(50)]);
}

#[test]
fn connect4_discs_stack_and_full_columns_close() {
    let mut m = load("connect4.kif");
    let s0 = m.initial_state();
    let s1 = step(&mut m, &s0, &["( drop 4 )", "noop"]);
    assert_eq!(m.state_facts(&s1), vec!["( cell 4 1 red )", "( control yellow )"]);
    let s2 = step(&mut m, &s1, &["noop", "( drop 4 )"]);
    assert_eq!(m.state_facts(&s2), vec!["( cell 4 1 red )", "( cell 4 2 yellow )", "( control red )"]);
    // Fill column 1 alternately (no four in a line): it closes.
    let d1 = "( drop 1 )";
    let s = play_alternating(&mut m, &[d1, d1, d1, d1, d1, d1]);
    assert!(!m.is_terminal(&s));
    let facts = m.state_facts(&s);
    assert_eq!(facts.len(), 7);
    assert!(facts.contains(&"( cell 1 6 yellow )".to_string()));
    assert!(facts.contains(&"( cell 1 5 red )".to_string()));
    assert_eq!(legal(&mut m, &s, 0), drops(&[2, 3, 4, 5, 6, 7]));
}

#[test]
fn connect4_vertical_win() {
    let mut m = load("connect4.kif");
    let line = drops(&[1, 2, 1, 2, 1, 2]);
    let line: Vec<&str> = line.iter().map(String::as_str).collect();
    let s = play_alternating(&mut m, &line);
    assert!(!m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(50), Some(50)]);
    let s = step(&mut m, &s, &["( drop 1 )", "noop"]);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(100), Some(0)]);
    let facts = m.state_facts(&s);
    for r in 1..=4 {
        assert!(facts.contains(&format!("( cell 1 {r} red )")), "{facts:?}");
    }
}

#[test]
fn connect4_horizontal_and_diagonal_wins() {
    let mut m = load("connect4.kif");
    // Yellow stacks on red's discs; red completes row 1 with columns 1..4.
    let line = drops(&[1, 1, 2, 2, 3, 3, 4]);
    let line: Vec<&str> = line.iter().map(String::as_str).collect();
    let s = play_alternating(&mut m, &line);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(100), Some(0)]);

    // Red builds the rising diagonal (1,1) (2,2) (3,3) (4,4); bottom to top the columns
    // end as 1: R, 2: Y R, 3: Y Y R, 4: R Y Y R, 5: R.
    let line = drops(&[1, 2, 2, 3, 4, 3, 3, 4, 5, 4, 4]);
    let line: Vec<&str> = line.iter().map(String::as_str).collect();
    let s = play_alternating(&mut m, &line);
    let facts = m.state_facts(&s);
    for f in ["( cell 1 1 red )", "( cell 2 2 red )", "( cell 3 3 red )", "( cell 4 4 red )"] {
        assert!(facts.contains(&f.to_string()), "{f} missing from {facts:?}");
    }
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(100), Some(0)]);
}

// ---------------------------------------------------------------------------------------
// Parallel and joined tic-tac-toe
// ---------------------------------------------------------------------------------------

#[test]
fn parallel_tictactoe_initial_state_and_moves() {
    let mut m = load("parallel_tictactoe.kif");
    assert_eq!(m.roles(), &["x", "o"]);
    let s = m.initial_state();
    let mut expected = cells_3x3("cell 1 ", "b");
    expected.extend(cells_3x3("cell 2 ", "b"));
    expected.push("( control x )".into());
    assert_eq!(m.state_facts(&s), expected);
    let mut moves = Vec::new();
    for r1 in 1..=3 {
        for c1 in 1..=3 {
            for r2 in 1..=3 {
                for c2 in 1..=3 {
                    moves.push(format!("( mark {r1} {c1} {r2} {c2} )"));
                }
            }
        }
    }
    assert_eq!(legal(&mut m, &s, 0), moves);
    assert_eq!(legal(&mut m, &s, 1), vec!["noop"]);
    assert_eq!(goals(&mut m, &s), vec![Some(50), Some(50)]);
}

#[test]
fn parallel_tictactoe_line_on_board_one() {
    let mut m = load("parallel_tictactoe.kif");
    let s0 = m.initial_state();
    let s1 = step(&mut m, &s0, &["( mark 1 1 3 3 )", "noop"]);
    let facts = m.state_facts(&s1);
    assert!(facts.contains(&"( cell 1 1 1 x )".to_string()));
    assert!(facts.contains(&"( cell 2 3 3 x )".to_string()));
    assert!(facts.contains(&"( cell 1 3 3 b )".to_string()));
    assert!(facts.contains(&"( cell 2 1 1 b )".to_string()));
    assert!(facts.contains(&"( control o )".to_string()));
    assert_eq!(facts.len(), 19);
    // o may not reuse either marked cell, on its own board.
    let o_moves = legal(&mut m, &s1, 1);
    assert_eq!(o_moves.len(), 64);
    assert!(!o_moves.iter().any(|mv| mv.starts_with("( mark 1 1 ")));
    assert!(!o_moves.iter().any(|mv| mv.ends_with(" 3 3 )")));
    assert!(o_moves.contains(&"( mark 3 3 1 1 )".to_string()));

    let s = play_alternating(&mut m, &["( mark 1 1 3 3 )", "( mark 2 1 2 1 )", "( mark 1 2 3 2 )", "( mark 2 2 2 2 )"]);
    assert!(!m.is_terminal(&s));
    let s = step(&mut m, &s, &["( mark 1 3 1 1 )", "noop"]);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(100), Some(0)]);
}

#[test]
fn joined_tictactoe_initial_state_and_moves() {
    let mut m = load("joined_tictactoe.kif");
    assert_eq!(m.roles(), &["x", "o"]);
    let s = m.initial_state();
    let mut expected: Vec<String> = cells_3x3("cell 1 ", "b").into_iter().filter(|f| f != "( cell 1 2 2 b )").collect();
    expected.extend(cells_3x3("cell 2 ", "b").into_iter().filter(|f| f != "( cell 2 2 2 b )"));
    expected.push("( centre b )".into());
    expected.push("( control x )".into());
    assert_eq!(m.state_facts(&s), expected);
    let x_moves = legal(&mut m, &s, 0);
    // 8 edge cells of board 1 x 9 cells of board 2, plus the centre x 8 edge cells of board 2.
    assert_eq!(x_moves.len(), 80);
    assert!(!x_moves.contains(&"( mark 2 2 2 2 )".to_string()));
    assert!(x_moves.contains(&"( mark 2 2 1 1 )".to_string()));
    assert!(x_moves.contains(&"( mark 1 1 2 2 )".to_string()));
    assert!(x_moves.contains(&"( mark 3 3 3 3 )".to_string()));
    assert_eq!(legal(&mut m, &s, 1), vec!["noop"]);
}

#[test]
fn joined_tictactoe_centre_is_shared() {
    let mut m = load("joined_tictactoe.kif");
    let s0 = m.initial_state();
    let s1 = step(&mut m, &s0, &["( mark 2 2 1 1 )", "noop"]);
    let facts = m.state_facts(&s1);
    assert!(facts.contains(&"( centre x )".to_string()), "{facts:?}");
    assert!(facts.contains(&"( cell 2 1 1 x )".to_string()));
    assert!(facts.contains(&"( cell 1 1 1 b )".to_string()));
    // The centre is taken on both boards now.
    let o_moves = legal(&mut m, &s1, 1);
    assert!(!o_moves.iter().any(|mv| mv.starts_with("( mark 2 2 ") || mv.ends_with(" 2 2 )")), "{o_moves:?}");
    assert_eq!(o_moves.len(), 8 * 7);
    // x completes the diagonal of board 2 through the shared centre: (1,1) (2,2) (3,3).
    let s = play_alternating(&mut m, &["( mark 2 2 1 1 )", "( mark 1 1 3 1 )"]);
    let s = step(&mut m, &s, &["( mark 3 3 3 3 )", "noop"]);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(100), Some(0)]);
}

#[test]
fn joined_tictactoe_ends_when_only_the_centre_is_left() {
    let mut m = load("joined_tictactoe.kif");
    // Both boards: x o x / x . o / o x o, centre left blank, no line anywhere.
    let line = [
        "( mark 1 1 1 1 )",
        "( mark 1 2 1 2 )",
        "( mark 1 3 1 3 )",
        "( mark 2 3 2 3 )",
        "( mark 2 1 2 1 )",
        "( mark 3 1 3 1 )",
        "( mark 3 2 3 2 )",
        "( mark 3 3 3 3 )",
    ];
    let s = play_alternating(&mut m, &line[..7]);
    assert!(!m.is_terminal(&s));
    let s = step(&mut m, &s, &["noop", line[7]]);
    assert!(m.state_facts(&s).contains(&"( centre b )".to_string()));
    assert!(m.is_terminal(&s), "no compound move is possible: terminal");
    assert_eq!(legal(&mut m, &s, 0), Vec::<String>::new());
    assert_eq!(goals(&mut m, &s), vec![Some(50), Some(50)]);
}

// ---------------------------------------------------------------------------------------
// Exhaustive enumeration: tic-tac-toe and 3-to-15 are the same game.
// ---------------------------------------------------------------------------------------

/// (reachable states, terminal states) by breadth-first search from the initial state.
fn count_states(m: &mut Interpreter) -> (usize, usize) {
    let roles = m.roles().len();
    let s0 = m.initial_state();
    let mut seen: HashSet<InterpState> = HashSet::new();
    let mut queue = VecDeque::new();
    seen.insert(s0.clone());
    queue.push_back(s0);
    let mut terminal = 0;
    let mut legal_sets: Vec<Vec<TermId>> = vec![Vec::new(); roles];
    let mut next = InterpState::default();
    while let Some(s) = queue.pop_front() {
        if m.is_terminal(&s) {
            terminal += 1;
            continue;
        }
        for (r, l) in legal_sets.iter_mut().enumerate() {
            m.legal_moves(&s, r, l);
            assert!(!l.is_empty());
        }
        // Every joint move (the cartesian product of the roles' legal moves).
        let mut idx = vec![0usize; roles];
        loop {
            let joint: Vec<TermId> = (0..roles).map(|r| legal_sets[r][idx[r]]).collect();
            m.next_state(&s, &joint, &mut next);
            if !seen.contains(&next) {
                seen.insert(next.clone());
                queue.push_back(next.clone());
            }
            let mut r = 0;
            while r < roles {
                idx[r] += 1;
                if idx[r] < legal_sets[r].len() {
                    break;
                }
                idx[r] = 0;
                r += 1;
            }
            if r == roles {
                break;
            }
        }
    }
    (seen.len(), terminal)
}

#[test]
fn tictactoe_and_three_to_fifteen_have_the_same_state_space() {
    let ttt = count_states(&mut load("tictactoe.kif"));
    assert_eq!(ttt, (5478, 958));
    let ttf = count_states(&mut load("three_to_fifteen.kif"));
    assert_eq!(ttf, ttt);
}

// ---------------------------------------------------------------------------------------
// Inline games: recursion, or, negation, nested terms, on-demand relations.
// ---------------------------------------------------------------------------------------

/// A walk along a chain 1 -> 2 -> 3 -> 4 -> 5; `lt` is the transitive closure of `succ`
/// (recursive, static, defined by rules).
const WALK: &str = "
    (role r)
    (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
    (<= (lt ?a ?b) (succ ?a ?b))
    (<= (lt ?a ?c) (succ ?a ?b) (lt ?b ?c))
    (init (at 1))
    (<= (legal r (go ?y)) (true (at ?x)) (lt ?x ?y))
    (<= (next (at ?y)) (does r (go ?y)))
    (<= terminal (true (at 5)))
    (<= (goal r 100) (true (at 5)))
    (<= (goal r 10) (true (at ?x)) (lt ?x 3))
";

#[test]
fn recursive_transitive_closure() {
    let mut m = inline(WALK);
    let s = m.initial_state();
    assert_eq!(m.state_facts(&s), vec!["( at 1 )"]);
    assert_eq!(legal(&mut m, &s, 0), strings(&["( go 2 )", "( go 3 )", "( go 4 )", "( go 5 )"]));
    assert_eq!(m.goal(&s, 0), Some(10));
    let s = step(&mut m, &s, &["( go 3 )"]);
    assert_eq!(m.state_facts(&s), vec!["( at 3 )"]);
    assert_eq!(legal(&mut m, &s, 0), strings(&["( go 4 )", "( go 5 )"]));
    // Goal undefined: neither rule applies at 3.
    assert_eq!(m.goal(&s, 0), None);
    assert!(!m.is_terminal(&s));
    let s = step(&mut m, &s, &["( go 5 )"]);
    assert!(m.is_terminal(&s));
    assert_eq!(m.goal(&s, 0), Some(100));
    assert_eq!(legal(&mut m, &s, 0), Vec::<String>::new());
}

#[test]
fn recursion_through_the_state() {
    // Reachability over edges held in the state (recursive and dynamic), read by goal.
    let mut m = inline(
        "
        (role r)
        (init (edge a b)) (init (edge b c)) (init (edge d e))
        (<= (reach ?x ?y) (true (edge ?x ?y)))
        (<= (reach ?x ?z) (true (edge ?x ?y)) (reach ?y ?z))
        (<= (legal r (link ?x ?y)) (true (edge ?x ?w)) (true (edge ?y ?v)) (not (reach ?x ?y)) (distinct ?x ?y))
        (<= (next (edge ?x ?y)) (true (edge ?x ?y)))
        (<= (next (edge ?x ?y)) (does r (link ?x ?y)))
        (<= terminal (reach a e))
        (<= (goal r 100) (reach a e))
        (<= (goal r 0) (not (reach a e)))
    ",
    );
    let s = m.initial_state();
    assert_eq!(
        legal(&mut m, &s, 0),
        strings(&["( link a d )", "( link b a )", "( link b d )", "( link d a )", "( link d b )"])
    );
    assert_eq!(m.goal(&s, 0), Some(0));
    let s = step(&mut m, &s, &["( link b d )"]);
    assert!(m.is_terminal(&s), "a -> b -> d -> e");
    assert_eq!(m.goal(&s, 0), Some(100));
}

#[test]
fn or_literal() {
    let mut m = inline(
        "
        (role r)
        (num 1) (num 2) (num 3) (num 4) (num 5) (num 6)
        (odd 1) (odd 3) (odd 5)
        (big 5) (big 6)
        (init s)
        (<= (legal r (pick ?x)) (num ?x) (or (odd ?x) (big ?x) (true (fav ?x))))
        (<= (next (fav 2)) (true s))
        (<= terminal (true (fav 2)))
        (goal r 50)
    ",
    );
    let s = m.initial_state();
    assert_eq!(legal(&mut m, &s, 0), strings(&["( pick 1 )", "( pick 3 )", "( pick 5 )", "( pick 6 )"]));
    let s = step(&mut m, &s, &["( pick 1 )"]);
    assert_eq!(legal(&mut m, &s, 0), strings(&["( pick 1 )", "( pick 2 )", "( pick 3 )", "( pick 5 )", "( pick 6 )"]));
    assert!(m.is_terminal(&s));
}

#[test]
fn not_distinct_and_distinct() {
    let mut m = inline(
        "
        (role r)
        (num 1) (num 2) (num 3)
        (<= (legal r (same ?x ?y)) (num ?x) (num ?y) (not (distinct ?x ?y)))
        (<= (legal r (diff ?x ?y)) (num ?x) (num ?y) (distinct ?x ?y) (distinct ?y 3))
        (<= (legal r (one ?x ?y)) (num ?x) (num ?y) (not (distinct (f ?x) (f 2))) (distinct ?y 1))
        (<= (legal r (two ?x ?y)) (num ?x) (num ?y) (distinct (f ?x) (f ?y)) (not (distinct ?y 2)))
        terminal
        (goal r 0)
    ",
    );
    let s = m.initial_state();
    assert_eq!(
        legal(&mut m, &s, 0),
        strings(&[
            "( diff 1 2 )",
            "( diff 2 1 )",
            "( diff 3 1 )",
            "( diff 3 2 )",
            "( one 2 2 )",
            "( one 2 3 )",
            "( same 1 1 )",
            "( same 2 2 )",
            "( same 3 3 )",
            "( two 1 2 )",
            "( two 3 2 )",
        ])
    );
}

/// Regression: `(not (distinct (f ?x) (f ?y)))` binds `?y` from a term, `(f 2)`, that no rule
/// ever built; it must be matched structurally, not looked up.
#[test]
fn not_distinct_of_function_terms_never_built() {
    for extra in ["", "(q (f 1))"] {
        let mut m = inline(&format!(
            "
            (role r)
            (num 1) (num 2) (num 3)
            {extra}
            (<= (legal r (pair ?x ?y)) (num ?x) (num ?y) (not (distinct (f ?x) (f ?y))))
            terminal
            (goal r 0)
        "
        ));
        let s = m.initial_state();
        assert_eq!(legal(&mut m, &s, 0), strings(&["( pair 1 1 )", "( pair 2 2 )", "( pair 3 3 )"]), "with `{extra}`");
    }
}

#[test]
fn function_terms_nested_two_deep() {
    let mut m = inline(
        "
        (role r)
        (init (pos (pt (c 1) (c 2))))
        (<= (legal r (jump (pt (c ?y) (c ?x)))) (true (pos (pt (c ?x) (c ?y)))))
        (<= (next (pos ?p)) (does r (jump ?p)))
        (<= (next (was ?p)) (true (pos ?p)))
        (<= terminal (true (was (pt (c 2) (c 1)))))
        (<= (goal r 100) (true (pos (pt (c 1) ?any))))
        (<= (goal r 0) (true (pos (pt (c 2) ?any))))
    ",
    );
    let s = m.initial_state();
    assert_eq!(m.state_facts(&s), vec!["( pos ( pt ( c 1 ) ( c 2 ) ) )"]);
    assert_eq!(legal(&mut m, &s, 0), vec!["( jump ( pt ( c 2 ) ( c 1 ) ) )"]);
    assert_eq!(m.goal(&s, 0), Some(100));
    let s = step(&mut m, &s, &["( jump ( pt ( c 2 ) ( c 1 ) ) )"]);
    assert_eq!(m.state_facts(&s), vec!["( pos ( pt ( c 2 ) ( c 1 ) ) )", "( was ( pt ( c 1 ) ( c 2 ) ) )"]);
    assert!(!m.is_terminal(&s));
    assert_eq!(m.goal(&s, 0), Some(0));
    let s = step(&mut m, &s, &["( jump ( pt ( c 1 ) ( c 2 ) ) )"]);
    assert!(m.is_terminal(&s));
    // find_move reads any spelling of a known move.
    let mv = m.find_move("(jump (pt (c 2) (c 1)))").expect("known move");
    assert_eq!(m.move_text(mv), "( jump ( pt ( c 2 ) ( c 1 ) ) )");
}

/// A relation used only in negation with all its variables bound: the interpreter proves it
/// per tuple on demand instead of listing it. `threatened` joins the state with a static
/// relation through a variable (`?y`) that is not in its head; `blocked` depends on the
/// state directly; `taken` depends on the moves (as tic-tac-toe's `marked`).
const ON_DEMAND: &str = "
    (role r)
    (role e)
    (sq 1) (sq 2) (sq 3) (sq 4) (sq 5)
    (adj 1 2) (adj 2 3) (adj 3 4) (adj 4 5)
    (<= (near ?a ?b) (adj ?a ?b))
    (<= (near ?a ?b) (adj ?b ?a))
    (init (enemy 5))
    (init (wall 1))
    (<= (threatened ?x) (true (enemy ?y)) (near ?y ?x))
    (<= (blocked ?x) (true (wall ?x)))
    (<= (legal r (go ?x)) (sq ?x) (not (threatened ?x)) (not (blocked ?x)))
    (<= (legal e (move ?x)) (true (enemy ?y)) (near ?y ?x))
    (<= (taken ?x) (does r (go ?x)))
    (<= (next (wall ?x)) (does r (go ?x)))
    (<= (next (wall ?x)) (true (wall ?x)) (not (taken ?x)))
    (<= (next (enemy ?x)) (does e (move ?x)))
    (<= terminal (true (wall 3)))
    (<= (goal r 100) (true (wall 3)))
    (<= (goal r 0) (not (true (wall 3))))
    (<= (goal e 0) (role e))
";

#[test]
fn relation_used_only_in_negation_is_evaluated_on_demand() {
    let mut m = inline(ON_DEMAND);
    assert_eq!(m.roles(), &["r", "e"]);
    let s = m.initial_state();
    assert_eq!(m.state_facts(&s), vec!["( enemy 5 )", "( wall 1 )"]);
    // 1 is blocked, 4 is threatened by the enemy at 5; 5 itself is not adjacent to 5.
    assert_eq!(legal(&mut m, &s, 0), strings(&["( go 2 )", "( go 3 )", "( go 5 )"]));
    assert_eq!(legal(&mut m, &s, 1), strings(&["( move 4 )"]));
    let s = step(&mut m, &s, &["( go 2 )", "( move 4 )"]);
    // The wall moved from 1 to 2 (taken only holds for the move's square), enemy now at 4.
    assert_eq!(m.state_facts(&s), vec!["( enemy 4 )", "( wall 1 )", "( wall 2 )"]);
    assert_eq!(legal(&mut m, &s, 0), strings(&["( go 4 )"]));
    assert_eq!(legal(&mut m, &s, 1), strings(&["( move 3 )", "( move 5 )"]));
    assert!(!m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(0), Some(0)]);
    let s = step(&mut m, &s, &["( go 4 )", "( move 5 )"]);
    assert_eq!(m.state_facts(&s), vec!["( enemy 5 )", "( wall 1 )", "( wall 2 )", "( wall 4 )"]);
    assert_eq!(legal(&mut m, &s, 0), strings(&["( go 3 )", "( go 5 )"]));
    let s = step(&mut m, &s, &["( go 3 )", "( move 4 )"]);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&mut m, &s), vec![Some(100), Some(0)]);
}

/// Regression: an on-demand relation asked about `(p (f ?y))` where `(f ?y)` was never built
/// must still run `p`'s rules (the head matches the argument structurally).
#[test]
fn on_demand_relation_with_function_term_argument() {
    for (body, expected) in [("(not (p (f ?y)))", "( go 2 )"), ("(p (f ?y))", "( go 1 )")] {
        let mut m = inline(&format!(
            "
            (role r)
            (num 1) (num 2)
            (init (c 1))
            (<= (p (f ?x)) (true (c ?x)))
            (<= (legal r (go ?y)) (num ?y) {body})
            (<= (next (c 2)) (true (c 1)))
            terminal
            (goal r 0)
        "
        ));
        let s = m.initial_state();
        assert_eq!(legal(&mut m, &s, 0), vec![expected], "with {body}");
    }
}

#[test]
fn static_relation_defined_by_rules() {
    let mut m = inline(
        "
        (role r)
        (num 1) (num 2) (num 3) (num 4)
        (<= (even 2) (num 2))
        (<= (even 4) (num 4))
        (<= (odd ?x) (num ?x) (not (even ?x)))
        (<= (pair ?x ?y) (odd ?x) (even ?y))
        (init (count 0))
        (<= (legal r (take ?x ?y)) (pair ?x ?y))
        (<= (next (count 1)) (true (count 0)))
        (<= terminal (true (count 1)))
        (<= (goal r 100) (true (count 1)))
        (<= (goal r 50) (true (count 0)) (odd 3))
    ",
    );
    let s = m.initial_state();
    assert_eq!(legal(&mut m, &s, 0), strings(&["( take 1 2 )", "( take 1 4 )", "( take 3 2 )", "( take 3 4 )"]));
    assert_eq!(m.goal(&s, 0), Some(50));
    let s = step(&mut m, &s, &["( take 3 4 )"]);
    assert_eq!(m.state_facts(&s), vec!["( count 1 )"]);
    assert!(m.is_terminal(&s));
    assert_eq!(m.goal(&s, 0), Some(100));
    // Static relations stay correct after many state changes.
    let s0 = m.initial_state();
    assert_eq!(legal(&mut m, &s0, 0).len(), 4);
}

/// Size of a relation: tuples, or for a relation evaluated top-down, answers in its tables.
fn relation_size(m: &Interpreter, name: &str) -> u32 {
    m.relation_sizes().iter().filter(|(n, _, _)| n == name).map(|&(_, _, k)| k).sum()
}

/// A count with accumulators, as merrills counts its stones: `count_loop` walks the cells
/// with the counts so far bound. Listed bottom-up it would hold every pair of counts at
/// every cell; asked top-down it holds one answer per cell.
const ACCUMULATOR: &str = "
    (role p)
    (init (cell a x)) (init (cell b o)) (init (cell c x)) (init (cell d x))
    (next_cell a b) (next_cell b c) (next_cell c d) (last d)
    (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8)
    (succ 8 9) (succ 9 10) (succ 10 11) (succ 11 12) (succ 12 13) (succ 13 14) (succ 14 15)
    (<= (number ?n) (succ ?n ?m))
    (<= (count_one ?c ?x0 ?o ?x ?o) (true (cell ?c x)) (succ ?x0 ?x) (number ?o))
    (<= (count_one ?c ?x ?o0 ?x ?o) (true (cell ?c o)) (succ ?o0 ?o) (number ?x))
    (<= (count_loop ?c ?x0 ?o0 ?x ?o) (last ?c) (count_one ?c ?x0 ?o0 ?x ?o))
    (<= (count_loop ?c ?x0 ?o0 ?x ?o)
        (count_one ?c ?x0 ?o0 ?x1 ?o1) (next_cell ?c ?d) (count_loop ?d ?x1 ?o1 ?x ?o))
    (<= (count ?x ?o) (count_loop a 0 0 ?x ?o))
    (<= (legal p (flip ?c)) (true (cell ?c x)))
    (<= (next (cell ?c o)) (does p (flip ?c)))
    (<= (next (cell ?c ?m)) (true (cell ?c ?m)) (not (does p (flip ?c))))
    (<= (goal p ?x) (count ?x ?o))
    (<= terminal (count 0 ?o))
";

#[test]
fn accumulator_recursion_is_answered_top_down() {
    let mut m = inline(ACCUMULATOR);
    let s = m.initial_state();
    assert_eq!(m.goal(&s, 0), Some(3));
    assert!(!m.is_terminal(&s));
    assert!(relation_size(&m, "count_loop") <= 4, "count_loop listed: {}", relation_size(&m, "count_loop"));
    let s = step(&mut m, &s, &["( flip c )"]);
    assert_eq!(m.goal(&s, 0), Some(2));
    let s = step(&mut m, &s, &["( flip a )"]);
    assert_eq!(legal(&mut m, &s, 0), vec!["( flip d )"]);
    let s = step(&mut m, &s, &["( flip d )"]);
    assert!(m.is_terminal(&s));
    assert_eq!(m.goal(&s, 0), Some(0));
    assert!(!m.overflowed());
}

/// A path search that carries the list of cells visited, as laikLee_hex's `connection`:
/// `ok_list` and `member` build lists (bottom-up they would never end), `path` is called
/// with its list bound.
const LIST_PATH: &str = "
    (role p)
    (node s) (node a) (node b) (node c) (node t)
    (edge s a) (edge a t) (edge s b) (edge b c) (edge c t) (edge a b)
    (init (on s)) (init (on a)) (init (on b)) (init (on c)) (init (on t))
    (<= (adj ?x ?y) (edge ?x ?y))
    (<= (adj ?x ?y) (edge ?y ?x))
    (ok_list nil)
    (<= (ok_list (cons ?x ?t)) (node ?x) (ok_list ?t))
    (<= (member ?x (cons ?x ?t)) (node ?x) (ok_list ?t))
    (<= (member ?x (cons ?y ?t)) (node ?y) (member ?x ?t))
    (<= (path ?x ?y ?vis) (adj ?x ?y) (true (on ?x)) (true (on ?y)) (ok_list ?vis))
    (<= (path ?x ?y ?vis)
        (adj ?x ?z) (true (on ?x)) (not (member ?z ?vis)) (path ?z ?y (cons ?x ?vis)))
    (<= connected (path s t nil))
    (<= (legal p (cut ?x)) (true (on ?x)) (distinct ?x s) (distinct ?x t))
    (<= (next (on ?x)) (true (on ?x)) (not (does p (cut ?x))))
    (<= (goal p 100) connected)
    (<= (goal p 0) (not connected))
    (<= terminal (not connected))
";

#[test]
fn list_building_recursion_is_answered_top_down() {
    let mut m = inline(LIST_PATH);
    let s = m.initial_state();
    assert!(!m.overflowed());
    assert_eq!(m.goal(&s, 0), Some(100));
    assert_eq!(legal(&mut m, &s, 0), strings(&["( cut a )", "( cut b )", "( cut c )"]));
    // Without a: s-b-c-t. Without a and c: b is a dead end.
    let s1 = step(&mut m, &s, &["( cut a )"]);
    assert!(!m.is_terminal(&s1));
    assert_eq!(m.goal(&s1, 0), Some(100));
    let s2 = step(&mut m, &s1, &["( cut c )"]);
    assert!(m.is_terminal(&s2));
    assert_eq!(m.goal(&s2, 0), Some(0));
    // Without b: s-a-t still; without c too: s-a-t.
    let s3 = step(&mut m, &s, &["( cut b )"]);
    let s4 = step(&mut m, &s3, &["( cut c )"]);
    assert_eq!(m.goal(&s4, 0), Some(100));
    assert!(!m.overflowed());
}

/// Recursion through a cycle of subgoals: `reach` called with its first argument bound
/// (legal) and with both bound (goal), on a graph with a cycle.
#[test]
fn recursion_through_a_cycle_of_subgoals() {
    let mut m = inline(
        "
        (role p)
        (init (edge a b)) (init (edge b c)) (init (edge c a)) (init (edge c d)) (init (edge e a))
        (<= (reach ?x ?y) (true (edge ?x ?y)))
        (<= (reach ?x ?y) (true (edge ?x ?z)) (reach ?z ?y))
        (<= (legal p (go ?y)) (reach a ?y))
        (<= (next (edge ?x ?y)) (true (edge ?x ?y)) (does p (go ?z)) (distinct ?y ?z))
        (<= (goal p 100) (reach b a) (not (reach d a)))
        (<= (goal p 0) (not (reach b a)))
        (<= terminal (not (reach b a)))
    ",
    );
    let s = m.initial_state();
    assert_eq!(legal(&mut m, &s, 0), strings(&["( go a )", "( go b )", "( go c )", "( go d )"]));
    assert_eq!(m.goal(&s, 0), Some(100));
    // Dropping the edges into d leaves the cycle.
    let s1 = step(&mut m, &s, &["( go d )"]);
    assert_eq!(legal(&mut m, &s1, 0), strings(&["( go a )", "( go b )", "( go c )"]));
    assert_eq!(m.goal(&s1, 0), Some(100));
    // Dropping the edge into a breaks it: from a, b and c remain reachable.
    let s2 = step(&mut m, &s1, &["( go a )"]);
    assert_eq!(legal(&mut m, &s2, 0), strings(&["( go b )", "( go c )"]));
    assert!(m.is_terminal(&s2));
    assert_eq!(m.goal(&s2, 0), Some(0));
}

/// `clear ?u ?x`: the cells between u and x are blank, as in slaughter's `clear_row`.
/// `clear` is called with all arguments bound and, its two calls being ordered as written,
/// its recursion calls its siblings in a cycle (the cells are listed right to left, so they
/// are tried left to right).
#[test]
fn cyclic_subgoals_not_reached_in_the_last_pass_are_evaluated_again() {
    let mut m = inline(
        "
        (role p)
        (next_file 1 2) (next_file 2 3) (next_file 3 4) (next_file 4 5)
        (init (cell 5 q)) (init (cell 4 b)) (init (cell 3 b)) (init (cell 2 b)) (init (cell 1 b))
        (<= (nf ?u ?w) (next_file ?u ?w) (true (cell ?u ?c)))
        (<= (clear ?u ?x) (next_file ?u ?x))
        (<= (clear ?u ?x) (true (cell ?w b)) (clear ?w ?x) (nf ?u ?w))
        (<= (legal p (to ?u ?x)) (true (cell ?u ?c)) (true (cell ?x ?d)) (clear ?u ?x))
        (<= (next (cell ?u ?c)) (true (cell ?u ?c)))
        (goal p 0)
        (<= terminal (true (cell 5 b)))
    ",
    );
    let s = m.initial_state();
    let mut expected = Vec::new();
    for u in 1..=5 {
        for x in u + 1..=5 {
            expected.push(format!("( to {u} {x} )"));
        }
    }
    assert_eq!(legal(&mut m, &s, 0), expected);
}

/// A join of seven 30-value relations (30^7 bindings) with no solution: the deadline stops
/// it at once.
const EXPLOSIVE: &str = "
    (role p)
    (n 1) (n 2) (n 3) (n 4) (n 5) (n 6) (n 7) (n 8) (n 9) (n 10) (n 11) (n 12) (n 13) (n 14)
    (n 15) (n 16) (n 17) (n 18) (n 19) (n 20) (n 21) (n 22) (n 23) (n 24) (n 25) (n 26)
    (n 27) (n 28) (n 29) (n 30)
    (init on)
    (<= (legal p go) (true on))
    (<= (next on) (true on))
    (goal p 0)
    (<= (all ?a ?b ?c ?d ?e ?f ?g) (true on) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e) (n ?f) (n ?g))
    (<= terminal (true on) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e) (n ?f) (n ?g) (not (all ?a ?b ?c ?d ?e ?f ?g)))
";

#[test]
fn deadline_stops_an_explosive_evaluation() {
    let mut m = inline(EXPLOSIVE);
    let s = m.initial_state();
    assert!(!m.timed_out());
    let start = std::time::Instant::now();
    m.set_deadline(Some(start + std::time::Duration::from_millis(100)));
    m.is_terminal(&s);
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "took {:?}", start.elapsed());
    assert!(m.timed_out());
    assert!(m.overflowed());
    // A new deadline starts afresh: what does not explode answers correctly again.
    m.set_deadline(None);
    assert!(!m.timed_out() && !m.overflowed());
    assert_eq!(legal(&mut m, &s, 0), vec!["go"]);
}

#[test]
fn goal_undefined_or_ambiguous_is_none() {
    let mut m = inline(
        "
        (role a) (role b)
        (init (t 0))
        (<= (legal ?p go) (role ?p))
        (<= (next (t 1)) (true (t 0)))
        (<= (next (t 2)) (true (t 1)))
        (<= terminal (true (t 2)))
        (<= (goal a 100) (true (t 1)))
        (<= (goal a 0) (true (t 1)))
        (<= (goal b 70) (true (t 1)))
        (<= (goal b 70) (true (t ?n)) (distinct ?n 0))
        (<= (goal a 30) (true (t 2)))
        (<= (goal b high) (true (t 2)))
    ",
    );
    let s0 = m.initial_state();
    assert_eq!(goals(&mut m, &s0), vec![None, None], "no goal rule applies");
    let s1 = step(&mut m, &s0, &["go", "go"]);
    // a: two values (ambiguous); b: the same value derived twice is one value.
    assert_eq!(goals(&mut m, &s1), vec![None, Some(70)]);
    let s2 = step(&mut m, &s1, &["go", "go"]);
    assert!(m.is_terminal(&s2));
    // b: a goal value that is not a number, plus 70 again: ambiguous.
    assert_eq!(goals(&mut m, &s2), vec![Some(30), None]);
}

#[test]
fn simultaneous_moves() {
    let mut m = inline(
        "
        (role a) (role b)
        (init (round 0))
        (<= (legal ?p (show ?x)) (role ?p) (side ?x))
        (side heads) (side tails)
        (<= (next (shown ?p ?x)) (does ?p (show ?x)))
        (<= (next (round 1)) (true (round 0)))
        (<= terminal (true (round 1)))
        (<= match (true (shown a ?x)) (true (shown b ?x)))
        (<= (goal a 100) match)
        (<= (goal a 0) (not match))
        (<= (goal b 0) match)
        (<= (goal b 100) (not match))
    ",
    );
    let s = m.initial_state();
    assert_eq!(legal(&mut m, &s, 0), strings(&["( show heads )", "( show tails )"]));
    assert_eq!(legal(&mut m, &s, 1), strings(&["( show heads )", "( show tails )"]));
    let t = step(&mut m, &s, &["( show heads )", "( show heads )"]);
    assert_eq!(m.state_facts(&t), vec!["( round 1 )", "( shown a heads )", "( shown b heads )"]);
    assert_eq!(goals(&mut m, &t), vec![Some(100), Some(0)]);
    let t = step(&mut m, &s, &["( show heads )", "( show tails )"]);
    assert_eq!(goals(&mut m, &t), vec![Some(0), Some(100)]);
    assert!(m.is_terminal(&t));
}

#[test]
fn invalid_games_are_refused() {
    let g = Game::parse("bad.kif", "(role r) (<= (p ?x) (q a)) (q a) (legal r a) terminal (goal r 0)").unwrap();
    match Interpreter::new(&g) {
        Err(InterpError::Invalid(msgs)) => assert!(msgs.iter().any(|m| m.contains("unsafe")), "{msgs:?}"),
        other => panic!("expected Invalid, got {:?}", other.map(|_| ())),
    }
    let g = Game::parse("gdl2.kif", "(role r) (<= (sees r x) (true s)) (legal r a) terminal (goal r 0)").unwrap();
    assert!(Interpreter::new(&g).is_err());
}

// ---------------------------------------------------------------------------------------
// Random playouts
// ---------------------------------------------------------------------------------------

/// Plays one random game from the initial state; checks that every non-terminal state gives
/// every role a legal move, that the game ends within `max_depth` joint moves and that the
/// terminal state gives every role a goal in 0..=100. Returns the depth.
fn checked_playout(m: &mut Interpreter, seed: u64, max_depth: usize) -> Result<usize, String> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let roles = m.roles().len();
    let mut s = m.initial_state();
    let mut legal_moves = Vec::new();
    let mut joint = Vec::new();
    let mut next = InterpState::default();
    for depth in 0..=max_depth {
        if m.is_terminal(&s) {
            for r in 0..roles {
                match m.goal(&s, r) {
                    Some(g) if g <= 100 => {}
                    other => {
                        return Err(format!(
                            "terminal state {:?}: goal of {} is {other:?}",
                            m.state_facts(&s),
                            m.roles()[r]
                        ))
                    }
                }
            }
            return Ok(depth);
        }
        if depth == max_depth {
            break;
        }
        joint.clear();
        for r in 0..roles {
            m.legal_moves(&s, r, &mut legal_moves);
            if legal_moves.is_empty() {
                return Err(format!("non-terminal state {:?}: {} has no legal move", m.state_facts(&s), m.roles()[r]));
            }
            joint.push(legal_moves[rng.gen_range(0..legal_moves.len())]);
        }
        m.next_state(&s, &joint, &mut next);
        std::mem::swap(&mut s, &mut next);
    }
    Err(format!("no terminal state within {max_depth} joint moves"))
}

#[test]
fn checked_playout_detects_a_stuck_game() {
    // The checker itself must be able to fail: a game where r has no move in the second state.
    let mut m = inline(
        "
        (role r)
        (init (t 0))
        (<= (legal r go) (true (t 0)))
        (<= (next (t 1)) (true (t 0)))
        (<= terminal (true (t 5)))
        (goal r 0)
    ",
    );
    let e = checked_playout(&mut m, 1, 100).unwrap_err();
    assert!(e.contains("no legal move"), "{e}");
}

mod playouts {
    use super::*;
    use proptest::prelude::*;

    thread_local! {
        /// One compiled interpreter per game, shared by the cases of a test.
        static MACHINES: Vec<(String, Interpreter)> = GAMES.iter().map(|g| (g.to_string(), load(g))).collect();
    }

    fn interpreters() -> Vec<(String, Interpreter)> {
        MACHINES.with(|v| v.clone())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn random_playouts_are_well_formed(seed in any::<u64>()) {
            for (name, mut m) in interpreters() {
                let depth = checked_playout(&mut m, seed, 100).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
                prop_assert!(depth >= 1, "{}: terminal at the start", name);
            }
        }

        #[test]
        fn library_playout_agrees(seed in any::<u64>()) {
            use rand::SeedableRng;
            for (name, mut m) in interpreters() {
                let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
                let mut bufs = crate::machine::PlayoutBuffers::new(&mut m);
                let mut s = m.initial_state();
                let r = crate::machine::random_playout(&mut m, &mut s, &mut rng, 100, &mut bufs);
                prop_assert!(r.terminal, "{}: playout stopped at depth {} without a terminal state", name, r.depth);
                prop_assert!(m.is_terminal(&s));
                prop_assert!(r.depth >= 1 && r.depth <= 100);
            }
        }
    }
}

/// A chain of `n` steps read top-down from its far end: `(reachable n)` asks for
/// `(reachable n-1)`, and so on down to the state.
fn chain(n: usize) -> Interpreter {
    let mut text = String::from(
        "(role r) (init (at 0))
         (<= (reachable ?x) (true (at ?x)))
         (<= (reachable ?y) (succ ?x ?y) (reachable ?x))\n",
    );
    text.push_str(&format!("(<= (legal r go) (reachable {n}))\n(legal r wait)\n"));
    text.push_str("(<= (next (at ?x)) (true (at ?x))) (<= terminal (true (at 1))) (goal r 0)\n");
    for i in 0..n {
        text.push_str(&format!("(succ {i} {})\n", i + 1));
    }
    inline(&text)
}

#[test]
fn deep_top_down_recursion_stops_at_the_call_depth_guard() {
    // Shallow: answered.
    let mut m = chain(100);
    let s = m.initial_state();
    assert_eq!(legal(&mut m, &s, 0), ["go", "wait"]);
    assert!(!m.overflowed());
    // Past the guard: no stack overflow; the answer is flagged as cut short.
    let mut m = chain(3 * table::MAX_CALL_DEPTH as usize);
    let s = m.initial_state();
    let _ = legal(&mut m, &s, 0);
    assert!(m.overflowed(), "evaluation past the call-depth guard must say so");
}

/// The grounder's joins look a partly bound function term up by the bound leaves inside it:
/// `(mv p (move ?x ?f ?t))` with `?x ?t` bound goes through the moves of that piece to that
/// square, not every move.
#[test]
fn a_partly_bound_function_term_is_looked_up_by_its_bound_leaves() {
    let text = "
(role p)
(piece a) (piece b) (piece c)
(sq 1) (sq 2) (sq 3) (sq 4)
(<= (mv p (move ?x ?f ?t)) (piece ?x) (sq ?f) (sq ?t) (distinct ?f ?t))
(<= (want ?x ?t) (piece ?x) (sq ?t) (distinct ?x c))
(<= (hit ?x ?f ?t) (want ?x ?t) (mv p (move ?x ?f ?t)))
(<= (legal p noop) (sq 1))
(<= terminal (sq 1))
(<= (goal p 100) (sq 1))
";
    let game = Game::parse("inline.kif", text).unwrap_or_else(|e| panic!("{e}"));
    let mut m = Interpreter::materialized(&game, None).unwrap();
    assert!(m.eval_static());
    let hit = game.symbols.get("hit").unwrap();
    let mut tuples = Vec::new();
    m.for_each_tuple(hit, 3, |t| tuples.push(t.to_vec())).unwrap();
    // Two pieces, four squares to, three from.
    assert_eq!(tuples.len(), 2 * 4 * 3);
    let id = m.plan.rel_names.iter().position(|&k| k == (hit, 3)).unwrap();
    let rule = m.plan.rules.iter().find(|r| r.head_rel == id).unwrap();
    let inner = rule.body.iter().any(|l| {
        matches!(l, compile::Lit::Pos { access: compile::Access::Multi { cols, .. }, .. } if cols.iter().any(|&c| c > 0xff))
    });
    assert!(inner, "{:?}", rule.body);
}

/// A rule with a positive literal over an empty relation has no instance, and is not joined:
/// here `gate` (empty, in `quad`'s recursive component, so planned with a guessed size) is
/// ordered after `num` literals, whose 10,000 or more matches a join would enumerate first.
#[test]
fn a_rule_reading_an_empty_relation_is_not_joined() {
    let mut text = String::from("(role p)\n");
    for i in 1..=100 {
        text += &format!("(num {i})\n");
    }
    text += "
(<= (quad ?a ?b ?c) (num ?a) (num ?b) (num ?c) (gate ?a ?b ?c))
(<= (gate ?a ?b ?c) (quad ?a ?b ?c) (num ?a))
(<= (legal p noop) (num 1))
(<= terminal (num 1))
(<= (goal p 100) (num 1))
";
    let game = Game::parse("inline.kif", &text).unwrap_or_else(|e| panic!("{e}"));
    let mut m = Interpreter::materialized(&game, None).unwrap();
    let before = m.db.steps();
    assert!(m.eval_static());
    let quad = game.symbols.get("quad").unwrap();
    let mut n = 0;
    m.for_each_tuple(quad, 3, |_| n += 1).unwrap();
    assert_eq!(n, 0);
    let steps = m.db.steps().wrapping_sub(before);
    assert!(steps < 1_000, "{steps} join steps");
}

#[test]
fn index_columns_reach_into_function_terms() {
    use relation::{col, col_value, sub_col};
    let mut terms = TermStore::new();
    let (f, g) = (crate::gdl::Sym(9001), crate::gdl::Sym(9002));
    let a = terms.intern(crate::gdl::Sym(9003), &[]);
    let b = terms.intern(crate::gdl::Sym(9004), &[]);
    let inner = terms.intern(g, &[a, b]);
    let t = terms.intern(f, &[b, inner]);
    let tuple = [a, t];
    let c = sub_col(col(1), 1).unwrap();
    assert_eq!(col_value(&tuple, col(0), &terms), Some(a));
    assert_eq!(col_value(&tuple, c, &terms), Some(inner));
    assert_eq!(col_value(&tuple, sub_col(c, 0).unwrap(), &terms), Some(a));
    assert_eq!(col_value(&tuple, sub_col(c, 1).unwrap(), &terms), Some(b));
    // No such subterm: a constant has no arguments.
    assert_eq!(col_value(&tuple, sub_col(col(0), 0).unwrap(), &terms), None);
}
