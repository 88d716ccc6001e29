//! Tests of the factor analysis on our own games: verdicts, factors, move shapes, latches,
//! contingent factoring, and the product check (which must pass on every verdict and fail
//! on a corrupted one).

use super::*;
use crate::gdl::Game;
use crate::machine::StateMachine;
use crate::propnet::{build_net, Budget, Built, Compiled, PropnetMachine};
use std::path::Path;

fn built(file: &str) -> Built {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let g = Game::load(&p).unwrap_or_else(|e| panic!("{e}"));
    build_net(&g, &Budget::default()).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn inline(text: &str) -> Built {
    let g = Game::parse("inline.kif", text).unwrap_or_else(|e| panic!("{e}"));
    build_net(&g, &Budget::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn machine(b: &Built) -> PropnetMachine {
    PropnetMachine::new(Compiled::new(&b.net, b.grounding_terms.clone(), b.symbols.clone()))
}

fn base_name(b: &Built, i: u32) -> String {
    b.grounding_terms.to_string(b.net.bases[i as usize], &b.symbols)
}

fn check_product(b: &Built, a: &Analysis, playouts: usize) {
    let mut m = machine(b);
    let s = m.initial_state();
    product::check(&b.net, a, &mut m, &s, playouts, 100, 7, product::MAX_SCRAMBLED)
        .unwrap_or_else(|e| panic!("product check: {e}"));
}

/// Every base of the factor is on one board: its name starts as the first's (`( cell B`).
fn assert_one_board(b: &Built, f: &Factor) {
    let board: Vec<String> = f.bases.iter().map(|&x| base_name(b, x)[..8].to_string()).collect();
    assert!(board.iter().all(|x| *x == board[0]), "{board:?}");
}

/// Plays the moves (texts per role, in role order) from the initial state.
fn play(m: &mut PropnetMachine, moves: &[&[&str]]) -> crate::propnet::PnState {
    let mut s = m.initial_state();
    let mut legal = Vec::new();
    for joint in moves {
        let mut j = Vec::new();
        for (r, text) in joint.iter().enumerate() {
            m.legal_moves(&s, r, &mut legal);
            let mv = *legal.iter().find(|&&x| m.move_text(x) == *text).unwrap_or_else(|| panic!("{text} is not legal"));
            j.push(mv);
        }
        let mut next = s.clone();
        m.next_state(&s, &j, &mut next);
        s = next;
    }
    s
}

/// Past its deadline the analysis merges every factor (one factor, not factorable, the
/// deadline named as the coupling), and the product check holds for that verdict too; with
/// time to spare it finds what [`analyse`] finds. The same holds for a contingent analysis.
#[test]
fn an_analysis_past_its_deadline_ends_with_one_factor() {
    let b = built("parallel_tictactoe.kif");
    let free = analyse(&b.net);
    assert_eq!(free.verdict, Verdict::Factorable);
    let far = analyse_within(&b.net, Instant::now() + std::time::Duration::from_secs(600));
    assert_eq!(far.factors.len(), free.factors.len());
    assert!(far.couplings.iter().all(|c| c.by != CoupledBy::Deadline));
    let cut = analyse_within(&b.net, Instant::now());
    assert!(matches!(cut.verdict, Verdict::NotFactorable(_)), "{:?}", cut.verdict);
    assert_eq!(cut.factors.len(), 1);
    assert!(cut.couplings.iter().any(|c| c.by == CoupledBy::Deadline), "{:?}", cut.couplings);

    let j = built("joined_tictactoe_blocked.kif");
    let mut m = machine(&j);
    let s = play(&mut m, &[&["( mark 3 3 3 3 )", "noop"]]);
    let info = net_info::NetInfo::new(&j.net);
    let fixed = latch::fixed_from(&j.net, &info, &|x| s.get(x as usize), None);
    assert_eq!(analyse_until(&j.net, &info, &fixed, None).verdict, Verdict::Factorable);
    let late = analyse_until(&j.net, &info, &fixed, Some(Instant::now()));
    assert_eq!(late.factors.len(), 1);
}

#[test]
fn parallel_tictactoe_factors_into_two_boards_with_compound_moves() {
    let b = built("parallel_tictactoe.kif");
    let a = analyse(&b.net);
    assert_eq!(a.verdict, Verdict::Factorable);
    assert_eq!(a.factors.len(), 2);
    assert_eq!(a.shapes, vec![MoveShape::Compound, MoveShape::Compound]);
    for f in &a.factors {
        assert_eq!(f.bases.len(), 27);
        assert_one_board(&b, f);
        // Each board sees 9 cells marked (plus the noop): 10 classes per role.
        assert_eq!(f.classes[0].len(), 10);
        assert!(f.in_goals && f.in_terminal);
    }
    let iid: Vec<String> = a.iid.iter().map(|&x| base_name(&b, x)).collect();
    assert_eq!(iid, vec!["( control x )", "( control o )"]);
    assert_eq!(a.iid_trajectory.len(), 2);
    check_product(&b, &a, 60);
}

/// Pawns move from cell to cell, so a board's cells are coupled by its moves (no product of
/// per-cell parts), but the compound move is a product of the two boards' parts: two
/// factors, one board each. The boards' cells are 100 factors changed together by 2,704
/// moves per role at the first round, which the move check must look at closely (only the
/// pairs of cells some move changes together are compared).
#[test]
fn parallel_breakthrough_factors_into_two_boards_coupled_within() {
    let b = built("parallel_breakthrough.kif");
    let a = analyse(&b.net);
    assert_eq!(a.verdict, Verdict::Factorable, "{:?}", a.couplings.first());
    assert_eq!(a.factors.len(), 2);
    assert_eq!(a.shapes, vec![MoveShape::Compound, MoveShape::Compound]);
    for f in &a.factors {
        assert_eq!(f.bases.len(), 50);
        assert_one_board(&b, f);
        assert!(f.in_goals && f.in_terminal);
    }
    assert!(a.couplings.iter().any(|c| matches!(c.by, CoupledBy::Moves(_))), "{:?}", a.couplings);
    check_product(&b, &a, 40);
}

#[test]
fn tictactoe_is_one_game_because_lines_share_cells() {
    let b = built("tictactoe.kif");
    let a = analyse(&b.net);
    assert!(matches!(a.verdict, Verdict::NotFactorable(_)), "{:?}", a.verdict);
    assert_eq!(a.factors.len(), 1);
    assert!(a.couplings.iter().any(|c| matches!(c.by, CoupledBy::Goal(..))), "{:?}", a.couplings);
}

#[test]
fn joined_tictactoe_is_coupled_by_its_shared_centre() {
    let b = built("joined_tictactoe.kif");
    let a = analyse(&b.net);
    assert!(matches!(a.verdict, Verdict::NotFactorable(_)));
    assert_eq!(a.factors.len(), 1);
}

#[test]
fn joined_tictactoe_factors_once_the_shared_cell_is_marked() {
    let b = built("joined_tictactoe_blocked.kif");
    let a = analyse(&b.net);
    assert!(matches!(a.verdict, Verdict::NotFactorable(_)));
    let mut m = machine(&b);
    // x marks the shared corner (through board 1) and a corner of board 2.
    let s = play(&mut m, &[&["( mark 3 3 3 3 )", "noop"]]);
    let c = analyse_from(&b.net, &|x| s.get(x as usize));
    assert_eq!(c.verdict, Verdict::Factorable, "{:?}", c.couplings);
    assert_eq!(c.factors.len(), 2);
    let shared: Vec<String> =
        c.fixed.iter().map(|&(x, v)| format!("{}={v}", base_name(&b, x))).filter(|t| t.contains("shared")).collect();
    assert_eq!(shared.len(), 3, "the shared cell's three bases are fixed: {shared:?}");
    assert!(shared.contains(&"( shared x )=true".to_string()), "{shared:?}");
    for f in &c.factors {
        let names: Vec<String> = f.bases.iter().map(|&x| base_name(&b, x)).collect();
        assert!(names.iter().all(|n| n[..8] == names[0][..8]), "one board per factor: {names:?}");
    }
    // The product agrees from that state on.
    product::check(&b.net, &c, &mut m, &s, 40, 100, 3, product::MAX_SCRAMBLED).unwrap_or_else(|e| panic!("{e}"));
}

/// One robot, two lamps, one press per turn; the goal asks for both lamps lit: the paper's
/// degenerate case (single-lamp factors under a conjunctive goal), with a step counter.
const LAMPS: &str = "
(role robot)
(init (off a)) (init (off b)) (init (step 0))
(lamp a) (lamp b)
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal robot (press ?l)) (lamp ?l))
(<= (next (on ?l)) (does robot (press ?l)))
(<= (next (on ?l)) (true (on ?l)))
(<= (next (off ?l)) (true (off ?l)) (not (does robot (press ?l))))
(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
(<= (next (junk ?l)) (does robot (press ?l)) (not (true (junk ?l))))
(<= terminal (true (step 3)))
(<= (goal robot 100) (true (on a)) (true (on b)))
(<= (goal robot 0) (not (true (on a))))
(<= (goal robot 0) (true (on a)) (not (true (on b))))
";

#[test]
fn lamps_are_serial_factors_with_a_step_counter_and_junk_left_out() {
    let b = inline(LAMPS);
    let a = analyse(&b.net);
    assert_eq!(a.verdict, Verdict::Factorable);
    assert_eq!(a.factors.len(), 2);
    assert_eq!(a.shapes, vec![MoveShape::Serial], "each press changes its own lamp only");
    let iid: Vec<String> = a.iid.iter().map(|&x| base_name(&b, x)).collect();
    assert!(iid.iter().all(|n| n.contains("step")) && iid.len() == 4, "{iid:?}");
    let junk: Vec<String> = a.junk.iter().map(|&x| base_name(&b, x)).collect();
    assert_eq!(junk.len(), 4, "nothing reads (junk ?l) or (off ?l): {junk:?}");
    assert!(junk.iter().all(|n| n.contains("junk") || n.contains("off")), "{junk:?}");
    assert!(a.factors.iter().all(|f| f.bases.iter().all(|&x| !base_name(&b, x).contains("junk"))));
    assert_eq!(a.terminal_combination, Combination::ActionIndependent);
    check_product(&b, &a, 40);
}

#[test]
fn latches_are_proved_from_the_next_state_cone() {
    let b = built("tictactoe.kif");
    let ls = latch::latches(&b.net);
    let find =
        |name: &str, kind: LatchKind| ls.iter().find(|l| base_name(&b, l.base) == name && l.kind == kind).copied();
    let x = find("( cell 1 1 x )", LatchKind::Positive).expect("a mark stays");
    assert_eq!(x.proof, latch::LatchProof::SelfLoop);
    assert!(find("( cell 1 1 b )", LatchKind::Negative).is_some(), "a cell once marked is never blank again");
    assert!(find("( cell 1 1 b )", LatchKind::Positive).is_none());
    assert!(
        find("( control x )", LatchKind::Positive).is_none() && find("( control x )", LatchKind::Negative).is_none()
    );
    // From a state, the marked cells keep their values together; the blank ones do not.
    let mut m = machine(&b);
    let s = play(&mut m, &[&["( mark 1 1 )", "noop"], &["noop", "( mark 2 2 )"]]);
    let info = net_info::NetInfo::new(&b.net);
    let fixed: Vec<String> = latch::fixed_from(&b.net, &info, &|x| s.get(x as usize), None)
        .iter()
        .map(|&(x, v)| format!("{}={v}", base_name(&b, x)))
        .collect();
    for want in ["( cell 1 1 x )=true", "( cell 1 1 b )=false", "( cell 1 1 o )=false", "( cell 2 2 o )=true"] {
        assert!(fixed.contains(&want.to_string()), "{want} in {fixed:?}");
    }
    assert!(!fixed.iter().any(|f| f.starts_with("( cell 1 2")), "blank cells can change: {fixed:?}");
}

#[test]
fn the_product_check_finds_a_wrong_factoring() {
    let b = built("parallel_tictactoe.kif");
    let mut a = analyse(&b.net);
    // Claim a cell of board 1 for board 2: its next value reads board 1's cells.
    let moved = a.factors[0].bases[0];
    a.place[moved as usize] = Place::Factor(1);
    let mut m = machine(&b);
    let s = m.initial_state();
    assert!(product::check(&b.net, &a, &mut m, &s, 60, 100, 7, product::MAX_SCRAMBLED).is_err());
    // And a wrong move class: merge two classes of x in board 1.
    let mut a = analyse(&b.net);
    let f = &mut a.factors[0];
    let c0 = f.classes[0][0][0];
    for i in f.classes[0][1].clone() {
        f.class_of[i as usize] = f.class_of[c0 as usize];
    }
    assert!(product::check(&b.net, &a, &mut m, &s, 60, 100, 7, product::MAX_SCRAMBLED).is_err());
}

/// With one factor of two played on its own per state (the sampled check of games with
/// more than `MAX_SCRAMBLED` factors), a right factoring still passes and a wrong one is
/// still found.
#[test]
fn the_sampled_product_check_finds_a_wrong_factoring() {
    let b = built("parallel_tictactoe.kif");
    let a = analyse(&b.net);
    assert_eq!(a.factors.len(), 2);
    let mut m = machine(&b);
    let s = m.initial_state();
    let r = product::check(&b.net, &a, &mut m, &s, 20, 100, 7, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.factors_per_state, 1);
    let mut wrong = analyse(&b.net);
    let moved = wrong.factors[0].bases[0];
    wrong.place[moved as usize] = Place::Factor(1);
    assert!(product::check(&b.net, &wrong, &mut m, &s, 60, 100, 7, 1).is_err());
    assert_eq!(
        product::check(&b.net, &a, &mut m, &s, 5, 100, 7, product::MAX_SCRAMBLED).map(|r| r.factors_per_state),
        Ok(2)
    );
}

#[test]
fn every_gdl_game_passes_the_product_check_when_it_factors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".kif"))
        .collect();
    files.sort();
    assert!(files.len() >= 6);
    for file in &files {
        let b = built(file);
        let a = analyse(&b.net);
        if a.verdict == Verdict::Factorable {
            check_product(&b, &a, 30);
        }
    }
}

/// Two boards of two lamps; one compound move `(do ?kind ?l1 ?l2)` per turn, where the kind
/// names what happens on each board (`pq`: light `?l1` on board 1, switch off all but `?l2` on
/// board 2), and the rules read it through "the move's first (second) letter", as
/// blocksWorldParallel does: the per-board meaning comes from a static table, not from the
/// argument positions. Each board is one part of the move.
const KIND_TABLE_BOARDS: &str = "
(role robot)
(init (step 0))
(succ 0 1) (succ 1 2) (succ 2 3)
(lamp1 a1) (lamp1 b1) (lamp2 a2) (lamp2 b2)
(kind pp) (kind pq) (kind qp) (kind qq)
(first p pp) (first p pq) (first q qp) (first q qq)
(second p pp) (second q pq) (second p qp) (second q qq)
(<= (legal robot (do ?k ?x ?y)) (kind ?k) (lamp1 ?x) (lamp2 ?y))
(<= (next (on ?x)) (does robot (do ?k ?x ?y)) (first p ?k))
(<= (next (on ?x)) (lamp1 ?x) (true (on ?x)) (does robot (do ?k ?u ?y)) (first p ?k))
(<= (next (on ?x)) (lamp1 ?x) (true (on ?x)) (does robot (do ?k ?x ?y)) (first q ?k))
(<= (next (on ?y)) (does robot (do ?k ?x ?y)) (second p ?k))
(<= (next (on ?y)) (lamp2 ?y) (true (on ?y)) (does robot (do ?k ?x ?u)) (second p ?k))
(<= (next (on ?y)) (lamp2 ?y) (true (on ?y)) (does robot (do ?k ?x ?y)) (second q ?k))
(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
(<= terminal (true (step 3)))
(<= (goal robot 100) (true (on a1)) (true (on b1)) (true (on a2)) (true (on b2)))
(<= (goal robot 0) (not (true (on a1))))
(<= (goal robot 0) (not (true (on b1))))
(<= (goal robot 0) (not (true (on a2))))
(<= (goal robot 0) (not (true (on b2))))
";

#[test]
fn compound_moves_read_through_a_table_split_by_board() {
    let b = inline(KIND_TABLE_BOARDS);
    let a = analyse(&b.net);
    assert_eq!(a.verdict, Verdict::Factorable, "{:?}", a.couplings);
    assert_eq!(a.shapes, vec![MoveShape::Compound]);
    let boards: Vec<Vec<String>> =
        a.factors.iter().map(|f| f.bases.iter().map(|&x| base_name(&b, x)).collect()).collect();
    assert!(
        boards.iter().all(|f| f.iter().all(|n| n.contains('1')) || f.iter().all(|n| n.contains('2'))),
        "one factor per board: {boards:?}"
    );
    // On board 1, `(do pp a1 ?)` and `(do pq a1 ?)` do the same thing: one class.
    let k = a.factors.iter().position(|f| f.bases.iter().any(|&x| base_name(&b, x).contains("a1"))).unwrap();
    let input = |text: &str| {
        (0..b.net.inputs.len())
            .find(|&i| b.grounding_terms.to_string(b.net.inputs[i].1, &b.symbols).contains(text))
            .unwrap_or_else(|| panic!("no input {text}"))
    };
    let f = &a.factors[k];
    assert_eq!(f.class_of[input("do pp a1 a2")], f.class_of[input("do pq a1 b2")]);
    assert_ne!(f.class_of[input("do pp a1 a2")], f.class_of[input("do qp a1 a2")]);
    check_product(&b, &a, 40);
}

#[test]
fn move_sets_follow_de_morgan() {
    let set = |comp: bool, inputs: &[u32]| MoveSet { role: Some(0), comp, inputs: inputs.to_vec() };
    let and = |a: MoveSet, b: MoveSet| MoveSet::join(a, b, true).unwrap();
    let or = |a: MoveSet, b: MoveSet| MoveSet::join(a, b, false).unwrap();
    let holds = |s: &MoveSet, i: u32| s.inputs.contains(&i) != s.comp;
    let cases = [set(false, &[1, 2]), set(true, &[2, 3]), set(false, &[]), set(true, &[1])];
    for x in &cases {
        for y in &cases {
            let (a, o) = (and(x.clone(), y.clone()), or(x.clone(), y.clone()));
            for i in 0..5 {
                assert_eq!(holds(&a, i), holds(x, i) && holds(y, i), "{x:?} and {y:?} at {i}");
                assert_eq!(holds(&o, i), holds(x, i) || holds(y, i), "{x:?} or {y:?} at {i}");
            }
        }
    }
    let other = MoveSet { role: Some(1), comp: false, inputs: vec![7] };
    assert!(MoveSet::join(set(false, &[1]), other, true).is_none(), "two roles' moves are no one move set");
}

/// `MoveSets::fold` (one pass, membership by stamp) gives what `MoveSet::join` folded left to
/// right gives, failures included: on random gates of random sets, negated or not, with a
/// second role and with partial results past `MAX_MOVE_SET`.
#[test]
fn folded_move_sets_agree_with_pairwise_joins() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    let universe = MAX_MOVE_SET as u32 + 40;
    let mut sets = MoveSets::new(0, universe as usize);
    let (mut agreed, mut failed) = (0, 0);
    for case in 0..3000 {
        let big = case % 10 == 0;
        let kids: Vec<(std::rc::Rc<MoveSet>, bool)> = (0..rng.gen_range(1..6))
            .map(|_| {
                let n = if big { rng.gen_range(0..universe as usize / 2) } else { rng.gen_range(0..12) };
                let range = if big { universe } else { 16 };
                let mut inputs: Vec<u32> = (0..n).map(|_| rng.gen_range(0..range)).collect();
                inputs.sort_unstable();
                inputs.dedup();
                let role = match rng.gen_range(0..20) {
                    0 => Some(1),
                    1 => None,
                    _ => Some(0),
                };
                (std::rc::Rc::new(MoveSet { role, comp: rng.gen_bool(0.5), inputs }), rng.gen_bool(0.3))
            })
            .collect();
        let and = rng.gen_bool(0.5);
        let mut want: Option<MoveSet> = None;
        let mut ok = true;
        for (k, neg) in &kids {
            let k = if *neg { (**k).clone().not() } else { (**k).clone() };
            want = match want {
                None => Some(k),
                Some(a) => MoveSet::join(a, k, and),
            };
            if want.as_ref().is_none_or(|a| a.inputs.len() > MAX_MOVE_SET) {
                ok = false;
                break;
            }
        }
        let got = sets.fold(&kids, and, MAX_MOVE_SET);
        match (ok.then_some(want).flatten(), got) {
            (Some(w), Some(g)) => {
                assert_eq!((w.role, w.comp, &w.inputs), (g.role, g.comp, &g.inputs), "case {case}");
                agreed += 1;
            }
            (None, None) => failed += 1,
            (w, g) => panic!("case {case}: pairwise {w:?}, folded {g:?}"),
        }
    }
    assert!(agreed > 1000 && failed > 100, "both outcomes tested: {agreed} agreed, {failed} failed");
}

/// LAMPS, but a lamp pressed is lit for one step, then dim for one, then off: it changes by
/// itself while the robot presses the other one.
const DIMMING_LAMPS: &str = "
(role robot)
(init (step 0))
(lamp a) (lamp b)
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal robot (press ?l)) (lamp ?l))
(<= (next (lit ?l)) (does robot (press ?l)))
(<= (next (dim ?l)) (true (lit ?l)) (not (does robot (press ?l))))
(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
(<= (on ?l) (true (lit ?l)))
(<= (on ?l) (true (dim ?l)))
(<= terminal (true (step 3)))
(<= (goal robot 100) (on a) (on b))
(<= (goal robot 0) (not (on a)))
(<= (goal robot 0) (on a) (not (on b)))
";

#[test]
fn lamps_that_dim_by_themselves_are_not_idle_static() {
    let lamps = inline(LAMPS);
    let a = analyse(&lamps.net);
    assert_eq!(idle_static(&lamps.net, &NetInfo::new(&lamps.net), &a), vec![true, true], "a lit lamp stays lit");
    let dim = inline(DIMMING_LAMPS);
    let a = analyse(&dim.net);
    assert_eq!(a.verdict, Verdict::Factorable);
    assert_eq!(a.factors.len(), 2);
    assert_eq!(idle_static(&dim.net, &NetInfo::new(&dim.net), &a), vec![false, false]);
    // Boards under frame rules stay put while play is on the other board, whatever the
    // move shape: serial, compound, and simultaneous turns (doubletictactoe's).
    for g in ["serial_tictactoe.kif", "parallel_tictactoe.kif"] {
        let b = built(g);
        let a = analyse(&b.net);
        assert!(idle_static(&b.net, &NetInfo::new(&b.net), &a).iter().all(|&s| s), "{g}");
    }
}

/// Two counters, one per board; at turn 1 role a advances board 1 and role b board 2, at
/// turn 2 the other way round (as in doubletictactoe and chinook, where the turn sets each
/// role's board): no role ever chooses its board.
const BOARDS_SET_BY_THE_TURN: &str = "
(role a) (role b)
(init (turn 1)) (init (one 0)) (init (two 0))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (next (turn 2)) (true (turn 1)))
(<= (next (turn 1)) (true (turn 2)))
(<= (legal a (up1 ?x)) (true (turn 1)) (succ ?x ?y))
(<= (legal b (up2 ?x)) (true (turn 1)) (succ ?x ?y))
(<= (legal a (up2 ?x)) (true (turn 2)) (succ ?x ?y))
(<= (legal b (up1 ?x)) (true (turn 2)) (succ ?x ?y))
(<= (next (one ?y)) (does ?p (up1 ?x)) (true (one ?z)) (succ ?z ?y))
(<= (next (one ?z)) (not moved1) (true (one ?z)))
(<= moved1 (does ?p (up1 ?x)))
(<= (next (two ?y)) (does ?p (up2 ?x)) (true (two ?z)) (succ ?z ?y))
(<= (next (two ?z)) (not moved2) (true (two ?z)))
(<= moved2 (does ?p (up2 ?x)))
(<= terminal (true (one 3)))
(<= terminal (true (two 3)))
(<= (goal a 100) (true (one 3)))
(<= (goal a 0) (not (true (one 3))))
(<= (goal b 100) (true (two 3)))
(<= (goal b 0) (not (true (two 3))))
";

#[test]
fn roles_that_choose_their_board_make_a_sum_of_games() {
    // serial_tictactoe: the player on turn marks either board.
    let b = built("serial_tictactoe.kif");
    let a = analyse(&b.net);
    assert_eq!(a.verdict, Verdict::Factorable);
    assert_eq!(chooses_factor(&b.net, &a), vec![true, true]);
    // Compound moves play on every board at once: no choice.
    let b = built("parallel_connect4.kif");
    let a = analyse(&b.net);
    assert_eq!((a.factors.len(), &a.shapes), (2, &vec![MoveShape::Compound, MoveShape::Compound]));
    assert_eq!(chooses_factor(&b.net, &a), vec![false, false]);
    // Each role's board set by the turn: both boards' moves are the role's over the game,
    // never at one step.
    let b = inline(BOARDS_SET_BY_THE_TURN);
    let a = analyse(&b.net);
    assert_eq!((a.verdict.clone(), a.factors.len()), (Verdict::Factorable, 2));
    assert_eq!(a.shapes, vec![MoveShape::Serial, MoveShape::Serial]);
    assert_eq!(chooses_factor(&b.net, &a), vec![false, false]);
}

#[test]
fn forward_evaluation_agrees_with_the_cone() {
    // Every base at each value, and random sets of a few bases, asked of every next-state,
    // legality, goal and terminal ref: the forward evaluation (from the fixed bases, changes
    // only) must give the cone's answer, with and without a budget that cuts it short.
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for file in ["tictactoe.kif", "hex4.kif", "serial_tictactoe.kif", "joined_tictactoe_blocked.kif", "connect4.kif"] {
        let b = built(file);
        let net = &b.net;
        let info = net_info::NetInfo::new(net);
        let mut cone = net_info::ConeEval::new(net.nodes.len());
        let mut refs: Vec<Ref> = net.next.clone();
        refs.extend(&net.legal);
        refs.extend(net.goals.iter().flatten().map(|g| g.0));
        refs.push(net.terminal);
        let mut fw = net_info::Forward::new(net, &info, &refs);
        // Built for the next-state refs only, as the latch proofs use it.
        let mut fw_next = net_info::Forward::new(net, &info, &net.next);
        let nb = net.bases.len() as u64;
        let mut asked = 0;
        for q in 0..(2 * nb + 200) {
            let fixed: Vec<(u32, bool)> = if q < 2 * nb {
                vec![((q / 2) as u32, q % 2 == 0)]
            } else {
                (0..1 + next() % 4).map(|_| ((next() % nb) as u32, next() % 2 == 0)).collect()
            };
            // A base fixed twice keeps its last value in both evaluations.
            let value = |x: u32| fixed.iter().rev().find(|f| f.0 == x).map(|f| f.1);
            for (i, &r) in refs.iter().enumerate() {
                if q >= 2 * nb && i % 7 != 0 {
                    continue;
                }
                let want = cone.eval(net, &info, r, &value);
                let mut last: Vec<(u32, bool)> = Vec::new();
                for &(x, _) in &fixed {
                    if !last.iter().any(|l| l.0 == x) {
                        last.push((x, value(x).unwrap()));
                    }
                }
                assert_eq!(fw.eval(net, &info, &last, r, usize::MAX), Some(want), "{file}: {last:?} ref {i}");
                if i < net.next.len() {
                    assert_eq!(fw_next.eval(net, &info, &last, r, usize::MAX), Some(want), "{file}: next {i}");
                }
                if let Some(v) = fw.eval(net, &info, &last, r, 3) {
                    assert_eq!(v, want, "{file}: {last:?} ref {i}, budget 3");
                }
                asked += 1;
            }
            // Every target at once, from one propagation: as one by one (and as the cone).
            if q % 3 == 0 {
                let mut last: Vec<(u32, bool)> = Vec::new();
                for &(x, _) in &fixed {
                    if !last.iter().any(|l| l.0 == x) {
                        last.push((x, value(x).unwrap()));
                    }
                }
                let mut all = Vec::new();
                assert!(fw.eval_all(net, &info, &last, &refs, usize::MAX, &mut all));
                for (i, &r) in refs.iter().enumerate() {
                    assert_eq!(all[i], cone.eval(net, &info, r, &value), "{file}: {last:?} ref {i}, all at once");
                }
                // Past its budget it answers nothing and leaves the values as they were.
                let mut none = vec![V::U];
                if !fw.eval_all(net, &info, &last, &refs, 1, &mut none) {
                    assert_eq!(none, vec![V::U]);
                }
                assert_eq!(fw.eval(net, &info, &last, refs[0], usize::MAX), Some(all[0]), "{file}: restored");
            }
        }
        assert!(asked > 1000, "{file}: {asked}");
    }
}

/// The action-independent bases each node's cone reads, as interned per node
/// ([`IidReads`]), are those a walk of the cone finds (a base ends the walk), on games with
/// a step counter or a turn that no move changes.
#[test]
fn iid_reads_are_the_action_independent_bases_of_each_cone() {
    for file in ["vault.kif", "flag_race.kif", "switches.kif", "connect4.kif", "joined_tictactoe_blocked.kif"] {
        let b = built(file);
        let net = &b.net;
        let info = net_info::NetInfo::new(net);
        let a = analyse(net);
        let reads = IidReads::new(net, &info, &a.place);
        let walk = |v: usize| {
            let mut seen = vec![false; net.nodes.len()];
            let (mut stack, mut out) = (vec![v], Vec::new());
            while let Some(v) = stack.pop() {
                if std::mem::replace(&mut seen[v], true) {
                    continue;
                }
                match net.nodes[v].kind {
                    Kind::Base(b) if a.place[b as usize] == Place::Iid => out.push(b as usize),
                    _ => stack.extend(net.nodes[v].inputs.iter().map(|x| x.node())),
                }
            }
            out.sort_unstable();
            out
        };
        let mut nonempty = 0;
        for v in 0..net.nodes.len() {
            let want = walk(v);
            nonempty += usize::from(!want.is_empty());
            assert_eq!(reads.of(std::iter::once(v)), want, "{file}: node {v}");
        }
        let pair: Vec<usize> = {
            let mut u = walk(0);
            u.extend(walk(net.nodes.len() - 1));
            u.sort_unstable();
            u.dedup();
            u
        };
        assert_eq!(reads.of([0, net.nodes.len() - 1].into_iter()), pair, "{file}: a union");
        if file != "switches.kif" && file != "joined_tictactoe_blocked.kif" {
            assert!(nonempty > 0, "{file}: some cone reads the action-independent part");
        }
    }
}

/// A move legal through either of two counters, each under a condition on a three-step turn:
/// at turns 1 and 2 one disjunct is ruled out by the turn, at turn 3 neither is, so its
/// legality couples the counters. The turn is read inside each factor's atom (a counter's
/// cell and the turn in one conjunction), not through an action-independent atom of its own.
const LEGAL_THROUGH_EITHER_COUNTER: &str = "
(role r)
(init (turn 1)) (init (one 0)) (init (two 0))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(<= (next (turn 2)) (true (turn 1)))
(<= (next (turn 3)) (true (turn 2)))
(<= (next (turn 1)) (true (turn 3)))
(<= (legal r a) (true (one 0)) (not (true (turn 2))))
(<= (legal r a) (true (two 0)) (not (true (turn 1))))
(<= (legal r b) (true (turn 1)))
(<= (legal r b) (not (true (turn 1))))
(<= (next (one ?y)) (does r a) (true (one ?x)) (succ ?x ?y))
(<= (next (one ?x)) (not (does r a)) (true (one ?x)))
(<= (next (two ?y)) (does r b) (true (two ?x)) (succ ?x ?y))
(<= (next (two ?x)) (not (does r b)) (true (two ?x)))
(<= terminal (true (one 4)))
(<= terminal (true (two 4)))
(<= (goal r 100) (true (one 4)))
(<= (goal r 0) (not (true (one 4))))
";

#[test]
fn legality_per_step_sees_the_turn_inside_factor_atoms() {
    let b = inline(LEGAL_THROUGH_EITHER_COUNTER);
    let a = analyse(&b.net);
    let m = machine(&b);
    let input_a = (0..b.net.inputs.len()).find(|&i| m.move_text(i as u32) == "a").expect("input a");
    assert_eq!(a.iid_trajectory.len(), 3);
    assert!(
        a.couplings.iter().any(|c| c.by == CoupledBy::Legal(input_a as u32)),
        "a's legality couples the counters at turn 3: {:?} {:?}",
        a.legal_form[input_a],
        a.couplings
    );
    assert!(matches!(a.verdict, Verdict::NotFactorable(_)), "{:?}", a.verdict);
}

/// Factor sets as bit sets per formula node (where every factor is below 1024) and as lists
/// give the same sets, and the same goal and terminal term sets, on every root of games with
/// 2 to 4 factors.
#[test]
fn factor_sets_as_bit_sets_and_as_lists_agree() {
    for (file, factors) in [("parallel_tictactoe.kif", 2), ("parallel_breakthrough.kif", 2), ("switches.kif", 4)] {
        let b = built(file);
        let a = analyse(&b.net);
        assert_eq!(a.factors.len(), factors, "{file}");
        let f = &a.formulas;
        let (mut bits, mut lists) = (formula::FactorMemo::default(), formula::FactorMemo::lists());
        let roots: Vec<FRef> =
            a.legal.iter().copied().chain(a.goals.iter().flatten().map(|g| g.1)).chain([a.terminal]).collect();
        let mut spanning = 0;
        for &r in &roots {
            let x = f.factors_memo(r, &mut bits);
            assert_eq!(x, f.factors_memo(r, &mut lists), "{file}");
            spanning += usize::from(x.len() >= 2);
        }
        assert!(spanning > 0, "{file}: some root reads two factors");
        for &(_, r) in a.goals.iter().flatten().chain([&(None, a.terminal)]) {
            let mut tb = formula::TermMemo::new(formula::MAX_TERM_WORK);
            let mut tl = formula::TermMemo::new(formula::MAX_TERM_WORK);
            tl.factors = formula::FactorMemo::lists();
            let (mut sb, mut sl) = (Vec::new(), Vec::new());
            f.term_sets(r, &mut tb, &mut sb);
            f.term_sets(r, &mut tl, &mut sl);
            assert_eq!(sb, sl, "{file}");
        }
    }
}
