//! The propnet's hot path allocates nothing: after a warm-up playout, random playouts
//! (legal moves, next state, terminal, goals, and the propnet's own depth charges) make no
//! heap allocation at all. Counted with a
//! global allocator that tallies calls per thread (its own test binary, so nothing else runs
//! in it). The batch machine's playouts allocate nothing either.

use factotum::gdl::Game;
use factotum::machine::{random_playout, PlayoutBuffers, StateMachine};
use factotum::propnet::{self, Budget};
use rand::SeedableRng;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

struct Counting;

thread_local! {
    /// This thread's allocations: tests read these, so that the harness's work on other
    /// threads (reporting another test's end) is not counted.
    static MINE: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    MINE.with(|c| c.set(c.get() + 1));
}

fn allocs() -> u64 {
    MINE.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn propnet_playouts_allocate_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in [
        "tictactoe.kif",
        "connect4.kif",
        "parallel_tictactoe.kif",
        "joined_tictactoe.kif",
        "three_to_fifteen.kif",
        "hex4.kif",
    ] {
        let game = Game::load(&root.join("gdl").join(file)).unwrap();
        let (mut m, _) = propnet::build(&game, &Budget::default()).unwrap();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let initial = m.initial_state();
        let mut bufs = PlayoutBuffers::new(&mut m);
        let mut state = initial.clone();
        // Warm-up: buffers grow to their working size.
        for _ in 0..20 {
            state.clone_from(&initial);
            random_playout(&mut m, &mut state, &mut rng, 1000, &mut bufs);
            state.clone_from(&initial);
            m.playout(&mut state, &mut rng, 1000, &mut bufs);
        }
        let before = allocs();
        let mut steps = 0;
        for i in 0..1000 {
            state.clone_from(&initial);
            // Both the generic loop (legal moves, next state: what the tree phase uses) and
            // the propnet's own depth charge.
            steps += if i % 2 == 0 {
                random_playout(&mut m, &mut state, &mut rng, 1000, &mut bufs).depth
            } else {
                m.playout(&mut state, &mut rng, 1000, &mut bufs).depth
            };
            for r in 0..m.roles().len() {
                std::hint::black_box(m.goal(&state, r));
            }
        }
        let allocs = allocs() - before;
        assert!(steps > 1000, "{file}: {steps} steps");
        assert_eq!(allocs, 0, "{file}: {allocs} allocations in {steps} steps");
    }
}

#[test]
fn batched_playouts_allocate_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in ["tictactoe.kif", "connect4.kif", "parallel_tictactoe.kif", "three_to_fifteen.kif"] {
        let game = Game::load(&root.join("gdl").join(file)).unwrap();
        let built = propnet::build_net(&game, &Budget::default()).unwrap();
        let mut m = propnet::BatchMachine::new(&built.net);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let initial = m.initial_state();
        let starts = vec![initial.clone(); propnet::BatchMachine::LANES];
        // Warm-up.
        m.playouts(&initial, 200, 1000, &mut rng, |_, _| {});
        m.run(&starts, 1000, &mut rng);
        let before = allocs();
        let mut ended = 0;
        let steps = m.playouts(&initial, 2000, 1000, &mut rng, |_, goals| {
            ended += 1;
            std::hint::black_box(goals);
        });
        let ends = m.run(&starts, 1000, &mut rng);
        std::hint::black_box(ends);
        let allocs = allocs() - before;
        assert_eq!(ended, 2000, "{file}");
        assert!(steps > 5000, "{file}: {steps} lane-steps");
        assert_eq!(allocs, 0, "{file}: {allocs} allocations in {steps} lane-steps");
    }
}

/// An MCTS iteration allocates nothing but the node it adds: with a node budget of one (the
/// root), iterations select at the root, play out and back up, and (after a warm-up) make no
/// allocation, for plain UCT and every AMAF variant (their marks, reference indexes and
/// recorded playouts are reused buffers; similarity-guided AMAF allocates a signature once
/// per node, here the root's during the warm-up, and its comparisons allocate nothing), with
/// random and with MAST playouts (MAST's table is sized once per root), and with batched
/// playouts (the leaves' states are a reused pool), with decisive moves (their buffers
/// are made once), and with transpositions.
#[test]
fn mcts_iterations_allocate_nothing_beyond_their_nodes() {
    use factotum::search::mcts::{Amaf, Mcts, MctsConfig, Playout};
    use factotum::search::{Limit, Search};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in ["connect4.kif", "tictactoe.kif"] {
        let game = Game::load(&root.join("gdl").join(file)).unwrap();
        let (mut m, _) = propnet::build_with(&game, &Budget::default(), true).unwrap();
        let s = m.initial_state();
        let plain = [Amaf::Off, Amaf::Rave, Amaf::Grave, Amaf::Killer, Amaf::Similar].map(|a| (a, Playout::Random));
        let mast = [(Amaf::Off, Playout::Mast), (Amaf::Grave, Playout::Mast), (Amaf::Off, Playout::Nst)];
        let batch = [(Amaf::Off, Playout::Batch)];
        let variants = plain.into_iter().chain(mast).chain(batch).map(|(a, p)| (a, p, false));
        // Decisive moves, with random, MAST and NST playouts, with and without AMAF.
        let decisive = [
            (Amaf::Off, Playout::Random),
            (Amaf::Grave, Playout::Random),
            (Amaf::Off, Playout::Mast),
            (Amaf::Off, Playout::Nst),
        ];
        // Transpositions (the table is looked up at each expansion), with random and MAST.
        let graph = [(Amaf::Off, Playout::Random), (Amaf::Off, Playout::Mast)];
        let variants = variants.chain(decisive.map(|(a, p)| (a, p, true))).map(|(a, p, d)| (a, p, d, false));
        for (amaf, playout, decisive, transpositions) in variants.chain(graph.map(|(a, p)| (a, p, false, true))) {
            let cfg = MctsConfig {
                node_budget: 1,
                grave_ref: 10,
                amaf,
                playout,
                decisive,
                transpositions,
                ..MctsConfig::default()
            };
            let mut t = Mcts::new(cfg);
            t.select(&mut m, &s, 0, Limit::iterations(200)).unwrap();
            // (Batched playouts count 16 descents per batch: both are multiples of 16.)
            let per_call = allocations_per_call(&mut t, &mut m, &s, [192, 4000]);
            assert_eq!(t.tree_size(), 1);
            assert_eq!(
                per_call[0], per_call[1],
                "{file} {amaf:?} {playout:?} decisive {decisive} transpositions {transpositions}: allocations per call at 192 and 4000 iterations"
            );
        }
    }
}

/// Playouts cut after a few joint moves and scored by a heuristic (counts of base
/// propositions and a goal value, read off the state's bits) allocate nothing per iteration,
/// with random, MAST and NST playouts.
#[test]
fn cut_playouts_scored_by_a_heuristic_allocate_nothing() {
    use factotum::heuristic::{count_features, Feature, Heuristic};
    use factotum::search::mcts::{Mcts, MctsConfig, Playout};
    use factotum::search::{Limit, Search};
    use std::sync::Arc;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let game = Game::load(&root.join("gdl").join("connect4.kif")).unwrap();
    let (mut m, _) = propnet::build_with(&game, &Budget::default(), true).unwrap();
    let s = m.initial_state();
    let mut features = count_features(&m.base_texts());
    features.truncate(3);
    assert!(!features.is_empty(), "connect four has pieces to count");
    features.push(Feature::Goal { role: 0 });
    let k = features.len();
    let mut w = vec![0.01; k + 1];
    w[0] = 0.5;
    let weights = vec![w.clone(), w];
    let h = Arc::new(Heuristic { features, weights, quality: vec![1.0, 1.0], playouts: 0 });
    for playout in [Playout::Random, Playout::Mast, Playout::Nst] {
        let cfg = MctsConfig { node_budget: 1, playout, cutoff: 2, ..MctsConfig::default() };
        let mut t = Mcts::new(cfg);
        t.set_heuristic(Some(h.clone()));
        t.select(&mut m, &s, 0, Limit::iterations(200)).unwrap();
        let per_call = allocations_per_call(&mut t, &mut m, &s, [200, 4000]);
        assert_eq!(per_call[0], per_call[1], "{playout:?}: allocations per call at 200 and 4000 iterations");
    }
}

/// The allocations of one search of each budget in `budgets` (its iterations checked): choosing
/// the move at the end allocates a little, once per call, so an allocation-free iteration
/// gives the same count for a small budget as for a large one.
fn allocations_per_call<S: factotum::search::Search<propnet::PropnetMachine>>(
    t: &mut S,
    m: &mut propnet::PropnetMachine,
    s: &<propnet::PropnetMachine as StateMachine>::State,
    budgets: [u64; 2],
) -> [u64; 2] {
    budgets.map(|n| {
        let before = allocs();
        let c = t.select(m, s, 0, factotum::search::Limit::iterations(n)).unwrap();
        let spent = allocs() - before;
        assert_eq!(c.iterations, n);
        spent
    })
}
