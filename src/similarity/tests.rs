//! The paper's worked numbers, on Figure 1's two trees rebuilt from the text, and Table 1's
//! properties on tic-tac-toe.

use super::*;
use rand::Rng;

/// Figure 1 (the picture was lost in extraction), rebuilt from what section 2 states:
/// M₁² = {a,b,c,d,e,f}, M₂² = {a,b,c,d,e,g,h}; T′₁ = {ac², ad, ae, af, bc², bd},
/// T′₂ = {ac, ad, ae, ag, bc, bd, ch}; 11 and 10 moves; children's depth-1 continuation
/// similarities to their roots 1/6, 1/4, 2/3 and 1/5, 1/5, 0. These pin the trees down:
/// T₁'s root moves must be {a,b,c} with a → {c,d,e,f}, b → {c,d}, c → {a,b}; T₂'s must be
/// {a,c,d} (each of ch, bd, ae needs one of its moves at the root, and two root pairs must
/// be sequences) with a → {d,e,g}, c → {a,b,h}, d → {b}.
pub fn figure1(labels: &mut Labels) -> (LocalTree, LocalTree) {
    let leaves = |s: &str| s.chars().map(|c| n(&c.to_string(), vec![])).collect::<Vec<_>>();
    let t1 = LocalTree::from_nested(&[n("a", leaves("cdef")), n("b", leaves("cd")), n("c", leaves("ab"))], labels);
    let t2 = LocalTree::from_nested(&[n("a", leaves("deg")), n("c", leaves("abh")), n("d", leaves("b"))], labels);
    (t1, t2)
}

fn close(x: f64, y: f64) -> bool {
    (x - y).abs() < 1e-9
}

#[test]
fn figure1_matches_the_text() {
    let mut l = Labels::new();
    let (t1, t2) = figure1(&mut l);
    assert_eq!(t1.root().moves(), 11);
    assert_eq!(t2.root().moves(), 10);
    let s1 = simplified(t1.root());
    let seq = |s: &str| s.chars().map(|c| l.get(&c.to_string()).unwrap()).collect::<Vec<u32>>();
    let mut expect1: Vec<(Vec<u32>, u32)> =
        vec![(seq("ac"), 2), (seq("ad"), 1), (seq("ae"), 1), (seq("af"), 1), (seq("bc"), 2), (seq("bd"), 1)];
    for e in &mut expect1 {
        e.0.sort_unstable();
    }
    let mut got1: Vec<(Vec<u32>, u32)> = s1.into_iter().collect();
    got1.sort();
    expect1.sort();
    assert_eq!(got1, expect1);
    assert_eq!(simplified(t2.root()).values().sum::<u32>(), 7);
    assert_eq!(ted::edit_distance(t1.root(), t2.root(), &l), Some(6));
}

#[test]
fn worked_numbers_of_section_2() {
    let mut l = Labels::new();
    let (t1, t2) = figure1(&mut l);
    let (a, b) = (t1.root(), t2.root());
    // 5/8, 12/15 and 15/27, as printed: 0.625, 0.800, 0.556.
    assert!(close(continuations(a, b), 5.0 / 8.0));
    assert!(close(sequences(a, b), 0.8));
    assert!(close(tree_edit(a, b, &l).unwrap(), 15.0 / 27.0));
    assert_eq!(format!("{:.3}", continuations(a, b)), "0.625");
    assert_eq!(format!("{:.3}", sequences(a, b)), "0.800");
    assert_eq!(format!("{:.3}", tree_edit(a, b, &l).unwrap()), "0.556");
}

#[test]
fn structural_similarity_of_section_3() {
    let mut l = Labels::new();
    let (t1, t2) = figure1(&mut l);
    let s = structural(t1.root(), t2.root(), Base::Continuations(1), &l).unwrap();
    let want1 = [1.0 / 6.0, 1.0 / 4.0, 2.0 / 3.0];
    let want2 = [1.0 / 5.0, 1.0 / 5.0, 0.0];
    for (g, w) in s.first.iter().zip(want1) {
        assert!(close(*g, w), "{:?}", s.first);
    }
    for (g, w) in s.second.iter().zip(want2) {
        assert!(close(*g, w), "{:?}", s.second);
    }
    // Total distance 1/6 + 1/20 + 7/15 = 0.683; S = 1 − 0.683/3 = 0.772.
    let total: f64 = s.pairs.iter().map(|p| p.2).sum();
    assert!(close(total, 1.0 / 6.0 + 1.0 / 20.0 + 7.0 / 15.0));
    assert_eq!(format!("{:.3}", s.similarity), "0.772");
    // T₁.₁ goes to T₂.₃ in both minimum matchings.
    assert!(s.pairs.contains(&(0, 2, 1.0 / 6.0)));
    let m = move_matching(t1.root(), t2.root(), Base::Continuations(1), &l).unwrap();
    assert_eq!(m.len(), 3);
    // Two matchings are optimal: b goes to a or to c (distance 1/20 either way).
    assert_eq!(m[0].first, "b");
    assert!(m[0].second == "a" || m[0].second == "c");
    assert!(m.iter().any(|p| p.first == "a" && p.second == "d"));
    assert_eq!(
        Measure::Structural(Base::Continuations(1)).similarity(t1.root(), t2.root(), &l).map(|x| (x * 1000.0).round()),
        Some(772.0)
    );
}

#[test]
fn match_counts_pair_moves_over_two_plies() {
    let mut l = Labels::new();
    let (t1, t2) = figure1(&mut l);
    let m = match_counts(t1.root(), t2.root(), Base::Continuations(1), &l).unwrap();
    // Three root pairs, then the children of each matched pair: a (4 moves) with d (1):
    // one pair; b (2) with a or c (3): two; c (2) with the other (3): two.
    assert_eq!(m.iter().map(|c| c.count).sum::<usize>(), 3 + 1 + 2 + 2);
    // a ~ d is the root pair the text fixes; it may recur one ply down (c's children {a, b}
    // against a's {d, e, g}), as ties in the assignment fall.
    assert!(m.iter().any(|c| c.first == "a" && c.second == "d" && c.count >= 1), "{m:?}");
    assert!(m.iter().all(|c| !c.first_ends && !c.second_ends));
    // Against itself each root move (similarities 1/6, 1/4, 2/3: no ties) is matched with
    // itself, and every child with some child of the same move.
    let same = match_counts(t1.root(), t1.root(), Base::Continuations(1), &l).unwrap();
    assert_eq!(same.iter().map(|c| c.count).sum::<usize>(), 3 + 4 + 2 + 2);
    for x in ["a", "b", "c"] {
        assert!(same.iter().any(|c| c.first == x && c.second == x), "{same:?}");
    }
}

#[test]
fn measures_are_one_on_identity_and_symmetric() {
    let mut l = Labels::new();
    let (t1, t2) = figure1(&mut l);
    for m in [
        Measure::Continuations(2),
        Measure::Sequences(2),
        Measure::TreeEdit(2),
        Measure::Structural(Base::Continuations(1)),
        Measure::Structural(Base::Sequences(1)),
    ] {
        for t in [&t1, &t2] {
            assert!(close(m.similarity(t.root(), t.root(), &l).unwrap(), 1.0), "{}", m.name());
        }
        let ab = m.similarity(t1.root(), t2.root(), &l).unwrap();
        let ba = m.similarity(t2.root(), t1.root(), &l).unwrap();
        assert!(close(ab, ba), "{}: {ab} {ba}", m.name());
        assert!((0.0..=1.0).contains(&ab));
    }
}

#[test]
fn terminal_similarity_of_section_2_4() {
    assert!(close(terminal(Some(1.0), Some(1.0)), 1.0));
    assert!(close(terminal(Some(1.0), Some(0.0)), 0.0));
    assert!(close(terminal(Some(0.5), Some(1.0)), 0.5));
    assert!(close(terminal(Some(0.5), None), 0.0));
}

#[test]
fn edit_distance_counts_unit_operations() {
    let mut l = Labels::new();
    let a = LocalTree::from_nested(&[n("a", vec![n("b", vec![])])], &mut l);
    let b = LocalTree::from_nested(&[n("a", vec![])], &mut l);
    let c = LocalTree::from_nested(&[n("x", vec![n("b", vec![])])], &mut l);
    assert_eq!(ted::edit_distance(a.root(), b.root(), &l), Some(1));
    assert_eq!(ted::edit_distance(a.root(), c.root(), &l), Some(1));
    assert_eq!(ted::edit_distance(b.root(), c.root(), &l), Some(2));
    // The order children are given in does not matter (canonical order).
    let d = LocalTree::from_nested(&[n("b", vec![n("c", vec![])]), n("a", vec![])], &mut l);
    let e = LocalTree::from_nested(&[n("a", vec![]), n("b", vec![n("c", vec![])])], &mut l);
    assert_eq!(ted::edit_distance(d.root(), e.root(), &l), Some(0));
}

/// Table 1's properties on a tic-tac-toe position O (figure 2 was lost; this one has the
/// same four moves): o to move on
///
/// ```text
///     A B C
///   1 x . o
///   2 . x .
///   3 x . o
/// ```
///
/// B1 and B3 mirror each other, C2 wins at once (terminal), A2 blocks x's column. Under
/// structural similarity over depth-1 continuations the mirrored branches score 1 and the
/// terminal branch 0 against the others, as in the paper's table.
#[test]
fn tictactoe_table1_properties() {
    use crate::machine::{play_texts, split_moves, StateMachine};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl/tictactoe.kif");
    let game = crate::gdl::Game::load(&path).unwrap();
    let (mut m, _) = crate::propnet::build(&game, &crate::propnet::Budget::default()).unwrap();
    let init = m.initial_state();
    // (mark row col): x A1, o C1, x B2, o C3, x A3.
    let moves = split_moves("(mark 1 1) (mark 1 3) (mark 2 2) (mark 3 3) (mark 3 1)").unwrap();
    let o_pos = play_texts(&mut m, &init, &moves).unwrap();
    let mut labels = Labels::new();
    let mut view = machine::MachineView::new(&mut m, 1);
    let tree = LocalTree::expand(&mut view, &o_pos, 3, &mut labels);
    let branch = |text: &str| -> Sub {
        let id = labels.get(text).unwrap_or_else(|| panic!("{text} not a move"));
        tree.root().children().find(|c| c.label() == id).unwrap()
    };
    let (b1, a2, c2, b3) =
        (branch("( mark 1 2 )"), branch("( mark 2 1 )"), branch("( mark 2 3 )"), branch("( mark 3 2 )"));
    assert_eq!(c2.reward(), Some(1.0), "C2 wins for o");
    let s = |x: Sub, y: Sub| Measure::Structural(Base::Continuations(1)).similarity(x, y, &labels).unwrap();
    assert!(close(s(b1, b3), 1.0));
    for x in [b1, a2, b3] {
        assert!(close(s(x, c2), 0.0));
        assert!(close(s(c2, x), 0.0));
        assert!(close(s(x, x), 1.0));
    }
    assert!(close(s(c2, c2), 1.0));
    // Outcomes: after B1 or B3 the same x reply, A2, wins at once; after A2 nothing ends
    // the game within one ply.
    let o1 = |x: Sub, y: Sub| Measure::Outcomes(1).similarity(x, y, &labels).unwrap();
    assert!(close(o1(b1, b3), 1.0));
    assert!(close(o1(b1, a2), 0.0));
    assert!(close(o1(a2, a2), 1.0));
    assert!(close(o1(c2, c2), 1.0) && close(o1(c2, b1), 0.0));
    // Shapes ignore which move ends the game: B1 and B3 have one loss at depth 1 each.
    let shape = |x: Sub, y: Sub| Measure::OutcomeShapes(1).similarity(x, y, &labels).unwrap();
    assert!(close(shape(b1, b3), 1.0) && close(shape(b1, a2), 0.0) && close(shape(a2, a2), 1.0));
    assert_eq!(outcome_shape(b1.to_depth(1)).into_iter().collect::<Vec<_>>(), vec![((1, 0), 1)]);
    let tac = |x: Sub, y: Sub| Measure::Tactics(1).similarity(x, y, &labels).unwrap();
    assert!(close(tac(b1, b3), 1.0) && close(tac(b1, a2), 0.0));
    let seqs = outcome_sequences(b1.to_depth(1));
    assert_eq!(seqs.len(), 1);
    assert_eq!(seqs.values().sum::<u32>(), 1);
    // A2 is like B1 but not the same: every x reply to A2 leaves o two moves, while after
    // B1 one x reply (A2) wins at once.
    let ab = s(a2, b1);
    assert!(ab > 0.5 && ab < 1.0, "{ab}");
    assert!(close(ab, s(a2, b3)));
}

/// The textbook recursion on ordered forests (delete or insert the rightmost root, or map
/// the two rightmost roots), memoised: the reference the keyroot programme must agree with.
fn naive_forest(f: &[Nested], g: &[Nested], memo: &mut HashMap<(String, String), usize>) -> usize {
    fn size(f: &[Nested]) -> usize {
        f.iter().map(|t| 1 + size(&t.1)).sum()
    }
    fn key(f: &[Nested]) -> String {
        f.iter().map(|t| format!("{}({})", t.0, key(&t.1))).collect::<Vec<_>>().join(",")
    }
    if f.is_empty() {
        return size(g);
    }
    if g.is_empty() {
        return size(f);
    }
    let k = (key(f), key(g));
    if let Some(&v) = memo.get(&k) {
        return v;
    }
    let (fl, gl) = (f.last().unwrap(), g.last().unwrap());
    let mut f_del: Vec<Nested> = f[..f.len() - 1].to_vec();
    f_del.extend(fl.1.iter().cloned());
    let mut g_del: Vec<Nested> = g[..g.len() - 1].to_vec();
    g_del.extend(gl.1.iter().cloned());
    let a = naive_forest(&f_del, g, memo) + 1;
    let b = naive_forest(f, &g_del, memo) + 1;
    let c = naive_forest(&f[..f.len() - 1], &g[..g.len() - 1], memo)
        + naive_forest(&fl.1, &gl.1, memo)
        + usize::from(fl.0 != gl.0);
    let v = a.min(b).min(c);
    memo.insert(k, v);
    v
}

/// Sorts a nested tree into the canonical order of [`ted`]: children by (their children's
/// keys, their label), where labels compare by text.
fn canonical_nested(t: &[Nested]) -> (Vec<Nested>, Vec<String>) {
    let mut kids: Vec<(Vec<String>, Nested)> = t
        .iter()
        .map(|k| {
            let (sorted, key) = canonical_nested(&k.1);
            // Tokens ordered as in `ted`: a label < CLOSE < OPEN, labels by text.
            let mut full = vec!["\u{3}".to_string()];
            full.extend(key);
            full.push("\u{2}".into());
            full.push(format!("\u{1}{}", k.0));
            (full, Nested(k.0.clone(), sorted))
        })
        .collect();
    kids.sort_by(|x, y| x.0.cmp(&y.0));
    let key: Vec<String> = kids.iter().flat_map(|k| k.0.clone()).collect();
    (kids.into_iter().map(|k| k.1).collect(), key)
}

fn random_forest(rng: &mut impl rand::Rng, depth: u32) -> Vec<Nested> {
    let width = rng.gen_range(0..4);
    (0..width)
        .map(|_| {
            let label = ["a", "b", "c"][rng.gen_range(0..3)];
            let kids = if depth > 1 { random_forest(rng, depth - 1) } else { vec![] };
            n(label, kids)
        })
        .collect()
}

#[test]
fn keyroot_programme_agrees_with_the_recursion() {
    use rand::SeedableRng;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    for _ in 0..300 {
        let depth = rng.gen_range(1..4);
        let (f, g) = (random_forest(&mut rng, depth), random_forest(&mut rng, depth));
        let mut l = Labels::new();
        let (ta, tb) = (LocalTree::from_nested(&f, &mut l), LocalTree::from_nested(&g, &mut l));
        let got = ted::edit_distance(ta.root(), tb.root(), &l).unwrap();
        let (cf, cg) = (canonical_nested(&f).0, canonical_nested(&g).0);
        let want = naive_forest(&cf, &cg, &mut HashMap::new());
        assert_eq!(got, want, "{f:?} vs {g:?}");
    }
}
