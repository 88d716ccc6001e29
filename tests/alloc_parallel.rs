//! Tree-parallel MCTS allocates nothing per iteration, on any thread: the main thread's
//! descents and back-ups and the helper's playouts reuse their buffers, and jobs go back and
//! forth on bounded channels. Counted with a global allocator that tallies calls from every
//! thread (the helper's included), so this binary holds this one test alone.

use factotum::gdl::Game;
use factotum::machine::StateMachine;
use factotum::propnet::{self, Budget};
use factotum::search::mcts::{Amaf, MctsConfig, Playout};
use factotum::search::{Limit, Search, TreeParallelMcts};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn tree_parallel_iterations_allocate_nothing_on_any_thread() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let game = Game::load(&root.join("gdl").join("connect4.kif")).unwrap();
    let (mut m, _) = propnet::build_with(&game, &Budget::default(), true).unwrap();
    let s = m.initial_state();
    for (playout, decisive, amaf) in [
        (Playout::Random, false, Amaf::Off),
        (Playout::Mast, false, Amaf::Off),
        (Playout::Nst, false, Amaf::Off),
        (Playout::Batch, false, Amaf::Off),
        (Playout::Random, true, Amaf::Off),
        // The helper records its playouts' moves for GRAVE, the main thread counts them.
        (Playout::Random, false, Amaf::Grave),
    ] {
        // A one-node tree: every descent ends at the root's child, and nothing is added.
        let cfg = MctsConfig { node_budget: 1, playout, decisive, amaf, ..MctsConfig::default() };
        let mut t = TreeParallelMcts::new(cfg, 2);
        // Warm-up: buffers reach their sizes, and the channels' waiting is set up on both
        // threads (a thread's first wait on a channel allocates once; MAST's search has once
        // needed a third call for its last one-time allocation).
        for _ in 0..3 {
            t.select(&mut m, &s, 0, Limit::iterations(8000)).unwrap();
        }
        // The fewest allocations of three calls at each size: how often a thread parks on a
        // channel depends on timing, and a rare park may allocate once (CI once saw 8 and 9),
        // so one-off allocations are tolerated, never ones that grow with the iterations: one
        // per iteration would be tens of thousands more at 32,000 than at 400, one per
        // hundred iterations over 300 more.
        let mut fewest = |n| {
            (0..3)
                .map(|_| {
                    let before = ALLOCS.load(Ordering::SeqCst);
                    t.select(&mut m, &s, 0, Limit::iterations(n)).unwrap();
                    ALLOCS.load(Ordering::SeqCst) - before
                })
                .min()
                .unwrap()
        };
        let small = fewest(400);
        let large = fewest(32000);
        assert!(t.tree().helper_playouts() > 0, "{playout:?} {amaf:?}: the helper played");
        assert_eq!(t.tree().tree_size(), 1);
        assert!(
            large <= small + 2,
            "{playout:?} decisive {decisive} {amaf:?}: {small} allocations per call at 400 iterations, \
             {large} at 32000"
        );
    }
}
