//! The batched propnet evaluator: 64 × W independent playouts at once, one per bit of a word.
//!
//! Every node of the network holds `W` words; bit `l % 64` of word `l / 64` is its value in
//! lane `l`. A step is a full sweep, not change-driven: gates are laid out in dependency
//! order as a flat list of operand slices, and each gate folds its operands' words with `|`
//! (an AND is stored as the negated OR of its negated operands, so one loop serves both).
//! More words per node share the decoding of each operand among more lanes. The sweep has
//! two phases: the *state phase* (every gate that does not depend on an input: legality,
//! terminal, goals, and the state half of the next-state logic) after the bases are loaded,
//! and the *move phase* (the gates that read inputs) after one move per role per lane has
//! been chosen.
//!
//! Cycles (recursive relations over the state) are evaluated as a unit: their members start
//! from all zeros and are swept until no word changes. GDL's stratification keeps the edges
//! inside a cycle positive, so the sweep is monotone and stops at the least fixpoint in
//! every lane at once.
//!
//! States are the engine's [`PnState`]s at the edges (one per lane) and, inside, one word per
//! base (bit = lane). Move ids are the [`PropnetMachine`](super::PropnetMachine)'s.
//! Nothing allocates after construction.

use super::build::{Kind, Net, Ref};
use super::machine::PnState;
use crate::graph::sccs;
use crate::machine::Goal;
use rand::RngCore;

/// Lanes per word: one per bit.
pub const WORD_LANES: usize = 64;

/// Words per node in [`BatchMachine`]: its lanes are `64 × BATCH_WORDS`.
pub const BATCH_WORDS: usize = 4;

/// The batch machine at the default width: 256 lanes gave most of 512's throughput on small
/// games (ticTacToe, connectFour; reversi and hex gain more from 512) at half the batch.
pub type BatchMachine = Batch<BATCH_WORDS>;

/// Set in a gate's end offset: the gate's result is negated (an AND).
const NEG_OUT: u32 = 1 << 31;

/// A run of gates, evaluated once, or a cycle, swept to its least fixpoint.
#[derive(Clone, Debug)]
struct Segment {
    /// First and one past the last gate (gate `k` writes slot `first_gate + k`).
    lo: u32,
    hi: u32,
    cycle: bool,
}

/// How a lane's playout ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LaneEnd {
    /// Joint moves played from the lane's start state.
    pub depth: u32,
    /// Whether the final state is terminal (otherwise a role had no legal move or the depth
    /// limit was reached).
    pub terminal: bool,
}

/// The batched machine over `64 × W` lanes (`W` words per node, lane `l` in bit `l % 64` of
/// word `l / 64`). Build one per thread from the optimized [`Net`].
#[derive(Clone, Debug)]
pub struct Batch<const W: usize> {
    roles: usize,
    /// Node values, `W` words per slot: slot 0 is FALSE, then bases, inputs, gates (state,
    /// goal and move phase), and the sink.
    vals: Vec<[u64; W]>,
    /// Operands of every gate, `slot << 1 | negated` (already flipped for ANDs).
    ops: Vec<u32>,
    /// Per gate: the end of its operands in `ops`, `| NEG_OUT` for an AND.
    gate_end: Vec<u32>,
    /// Per gate: the start of its operands (`gate_end` of the previous gate, unmasked).
    gate_start: Vec<u32>,
    first_gate: usize,
    /// Input slots are `first_input..first_gate`.
    first_input: usize,
    state_phase: Vec<Segment>,
    /// Gates read only by goals: evaluated when lanes end, for the lanes parked since.
    goal_phase: Vec<Segment>,
    /// Lanes that ended and wait for their goals (their states stay in the base slots).
    parked: [u64; W],
    /// Parked lanes that trigger a goal sweep in [`playouts`](Self::playouts).
    park_max: u32,
    move_phase: Vec<Segment>,
    /// Per base: the slot its value is loaded into (0 for a constant base, never written).
    base_slot: Vec<u32>,
    /// Per base: the operand computing its next value.
    next: Vec<u32>,
    /// Per move id: the input's slot (the sink, a last slot nothing reads, when the input is
    /// read by nothing).
    input_slot: Vec<u32>,
    /// Per role: (move id, legal operand) of every move that is ever legal, by id.
    role_legal: Vec<Vec<(u32, u32)>>,
    /// Per role: (goal operand, value).
    goals: Vec<Vec<(u32, Option<u32>)>>,
    terminal: u32,
    /// Per base: its word of lane values.
    state: Vec<[u64; W]>,
    /// The initial state.
    init: PnState,
    /// Lanes holding a playout in progress.
    active: [u64; W],
    /// Per lane: the step at which its playout started (its depth is `step - start`).
    start: Vec<u64>,
    /// Random steps taken, and a step no active lane started before.
    step: u64,
    oldest: u64,
    /// Scratch: per lane, legal move counts.
    count: Vec<u32>,
    /// Per lane, the input slots of the legal moves of the role being chosen for (`cap`
    /// each).
    lists: Vec<u32>,
    cap: usize,
    /// Per lane: how its last playout ended, and its goals (lane × role).
    ends: Vec<LaneEnd>,
    goal_vals: Vec<Goal>,
    /// Lane-steps (one joint move applied in one lane) since construction.
    lane_steps: u64,
}

/// The mask of lanes `lo..hi`, a word per 64 lanes.
fn lane_mask<const W: usize>(lo: usize, hi: usize) -> [u64; W] {
    let mut m = [0u64; W];
    for lane in lo..hi {
        m[lane / WORD_LANES] |= 1 << (lane % WORD_LANES);
    }
    m
}

#[inline]
fn operand(r: Ref, slot_of: &[u32]) -> u32 {
    slot_of[r.node()] << 1 | r.neg() as u32
}

impl<const W: usize> Batch<W> {
    /// Lanes: playouts run at once.
    pub const LANES: usize = WORD_LANES * W;

    pub fn new(net: &Net) -> Batch<W> {
        let lanes = Self::LANES;
        let n = net.nodes.len();
        let succ: Vec<Vec<usize>> = net.nodes.iter().map(|nd| nd.inputs.iter().map(|r| r.node()).collect()).collect();
        let comps = sccs(n, &succ);
        // A node is in the move phase if it depends on an input.
        let mut moving = vec![false; n];
        for comp in &comps {
            let m =
                comp.iter().any(|&v| matches!(net.nodes[v].kind, Kind::Input(_)) || succ[v].iter().any(|&d| moving[d]));
            for &v in comp {
                moving[v] = m;
            }
        }
        // Slots: FALSE, bases, inputs, then the state phase's gates and the move phase's, each
        // in dependency order (components come out dependencies first).
        let mut slot_of = vec![u32::MAX; n];
        slot_of[0] = 0;
        let mut next_slot = 1u32;
        for (v, nd) in net.nodes.iter().enumerate() {
            if matches!(nd.kind, Kind::Base(_)) {
                slot_of[v] = next_slot;
                next_slot += 1;
            }
        }
        for (v, nd) in net.nodes.iter().enumerate() {
            if matches!(nd.kind, Kind::Input(_)) {
                slot_of[v] = next_slot;
                next_slot += 1;
            }
        }
        let first_gate = next_slot as usize;
        let first_input = first_gate - net.nodes.iter().filter(|nd| matches!(nd.kind, Kind::Input(_))).count();
        let is_gate = |v: usize| matches!(net.nodes[v].kind, Kind::And | Kind::Or);
        // Gates read (through others) by legal, terminal or next; the rest only by goals.
        let mut needed = vec![false; n];
        let mut stack: Vec<usize> =
            net.legal.iter().chain(&net.next).chain([&net.terminal]).map(|r| r.node()).collect();
        while let Some(v) = stack.pop() {
            if !std::mem::replace(&mut needed[v], true) {
                stack.extend(&succ[v]);
            }
        }
        // Phases: 0 state (needed), 1 goals only, 2 move. Dependencies point to earlier
        // phases only (a gate reading a move-phase gate is one; a gate a needed gate reads
        // is needed).
        let phase_of = |v: usize| {
            if moving[v] {
                2
            } else if needed[v] {
                0
            } else {
                1
            }
        };
        let mut order: Vec<usize> = Vec::new();
        let mut phases: [Vec<Segment>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        for phase in 0..3 {
            for comp in comps.iter().filter(|c| phase_of(c[0]) == phase && is_gate(c[0])) {
                let cycle = comp.len() > 1 || succ[comp[0]].contains(&comp[0]);
                let lo = order.len() as u32;
                for &v in comp {
                    slot_of[v] = (first_gate + order.len()) as u32;
                    order.push(v);
                }
                let hi = order.len() as u32;
                let segs = &mut phases[phase];
                match segs.last_mut() {
                    Some(s) if !cycle && !s.cycle && s.hi == lo => s.hi = hi,
                    _ => segs.push(Segment { lo, hi, cycle }),
                }
            }
        }
        let [state_phase, goal_phase, move_phase] = phases;
        let mut ops = Vec::new();
        let mut gate_end = Vec::with_capacity(order.len());
        let mut gate_start = Vec::with_capacity(order.len());
        for &v in &order {
            let and = matches!(net.nodes[v].kind, Kind::And);
            gate_start.push(ops.len() as u32);
            for &r in &net.nodes[v].inputs {
                ops.push(operand(r, &slot_of) ^ and as u32);
            }
            // At least two operands (the sweep reads two before looping): pad with FALSE,
            // neutral for the OR both gates are computed with.
            for _ in net.nodes[v].inputs.len()..2 {
                ops.push(0);
            }
            gate_end.push(ops.len() as u32 | if and { NEG_OUT } else { 0 });
        }
        assert!(ops.len() < NEG_OUT as usize, "network too large for the batch machine");
        // The sweep reads without bounds checks: every operand must name an existing slot.
        assert!(ops.iter().all(|&o| ((o >> 1) as usize) < first_gate + order.len()));
        let slot = |r: Ref| operand(r, &slot_of);
        let mut role_legal = vec![Vec::new(); net.roles.len()];
        for (id, (&(role, _), &r)) in net.inputs.iter().zip(&net.legal).enumerate() {
            if r != Ref::FALSE {
                role_legal[role].push((id as u32, slot(r)));
            }
        }
        let sink = (first_gate + order.len()) as u32;
        let input_slot = net.input_ref.iter().map(|&r| if r.is_const() { sink } else { slot_of[r.node()] }).collect();
        let roles = net.roles.len();
        let cap = role_legal.iter().map(Vec::len).max().unwrap_or(0);
        Batch {
            roles,
            vals: vec![[0; W]; first_gate + order.len() + 1],
            ops,
            gate_end,
            gate_start,
            first_gate,
            first_input,
            state_phase,
            goal_phase,
            parked: [0; W],
            park_max: 1,
            move_phase,
            base_slot: net.base_ref.iter().map(|&r| if r.is_const() { 0 } else { slot_of[r.node()] }).collect(),
            next: net.next.iter().map(|&r| slot(r)).collect(),
            input_slot,
            role_legal,
            goals: net.goals.iter().map(|g| g.iter().map(|&(r, v)| (slot(r), v)).collect()).collect(),
            terminal: slot(net.terminal),
            state: vec![[0; W]; net.bases.len()],
            init: {
                let mut bits = vec![0u64; net.bases.len().div_ceil(64).max(1)];
                for (b, _) in net.init.iter().enumerate().filter(|(_, &v)| v) {
                    bits[b / 64] |= 1 << (b % 64);
                }
                PnState { bits }
            },
            active: [0; W],
            start: vec![0; lanes],
            step: 0,
            oldest: 0,
            count: vec![0; lanes],
            lists: vec![0; lanes * cap],
            cap,
            ends: vec![LaneEnd { depth: 0, terminal: false }; lanes],
            goal_vals: vec![None; lanes * roles],
            lane_steps: 0,
        }
        .with_park_max()
    }

    /// Sets how many lanes [`playouts`](Self::playouts) parks before a goal sweep: one
    /// when goals cost little, a quarter of the lanes when gates read only by goals
    /// outnumber a quarter of the state phase's (reversi counts discs only for goals).
    fn with_park_max(mut self) -> Self {
        let (state, goals) = (count_gates(&self.state_phase), count_gates(&self.goal_phase));
        self.park_max = if goals * 4 > state { (Self::LANES / 4) as u32 } else { 1 };
        self
    }

    /// Parks up to `n` lanes before a goal sweep (tests).
    #[cfg(test)]
    fn set_park_max(&mut self, n: u32) {
        self.park_max = n;
    }

    /// The initial state (as the propnet machine's).
    pub fn initial_state(&self) -> PnState {
        self.init.clone()
    }

    pub fn roles(&self) -> usize {
        self.roles
    }

    /// Gates in the state phase, the goal phase (gates read only by goals, swept when lanes
    /// end) and the move phase.
    pub fn gate_counts(&self) -> (usize, usize, usize) {
        (count_gates(&self.state_phase), count_gates(&self.goal_phase), count_gates(&self.move_phase))
    }

    /// Cycles swept to a fixpoint per step.
    pub fn cycle_count(&self) -> usize {
        self.state_phase.iter().chain(&self.goal_phase).chain(&self.move_phase).filter(|s| s.cycle).count()
    }

    /// Lane-steps (a joint move applied in one lane) since construction.
    pub fn lane_steps(&self) -> u64 {
        self.lane_steps
    }

    /// An operand's word `g`.
    #[inline]
    fn word(&self, op: u32, g: usize) -> u64 {
        self.vals[(op >> 1) as usize][g] ^ 0u64.wrapping_sub((op & 1) as u64)
    }

    #[inline]
    fn lane_bit(&self, op: u32, lane: usize) -> bool {
        self.word(op, lane / WORD_LANES) >> (lane % WORD_LANES) & 1 == 1
    }

    /// Evaluates a phase's gates: 0 state, 1 goals, 2 move.
    #[inline]
    fn sweep(&mut self, phase: usize) {
        let segs = match phase {
            0 => &self.state_phase,
            1 => &self.goal_phase,
            _ => &self.move_phase,
        };
        for s in segs {
            if !s.cycle {
                eval_gates(&mut self.vals, &self.ops, &self.gate_start, &self.gate_end, self.first_gate, s.lo, s.hi);
                continue;
            }
            // A cycle: from all zeros, sweep until nothing changes (monotone: least fixpoint).
            let (lo, hi) = (self.first_gate + s.lo as usize, self.first_gate + s.hi as usize);
            self.vals[lo..hi].fill([0; W]);
            while eval_gates_changed(
                &mut self.vals,
                &self.ops,
                &self.gate_start,
                &self.gate_end,
                self.first_gate,
                s.lo,
                s.hi,
            ) {}
        }
    }

    /// Loads start states into lanes `0..starts.len()` (the others become inactive) and
    /// evaluates the state phase.
    pub fn load(&mut self, starts: &[PnState]) {
        self.load_groups(starts, 1);
    }

    /// Loads each start state into `per` lanes (lane `l` holds `starts[l / per]`; lanes from
    /// `starts.len() * per` on become inactive) and evaluates the state phase.
    pub fn load_groups(&mut self, starts: &[PnState], per: usize) {
        let lanes = starts.len() * per;
        assert!(lanes <= Self::LANES);
        self.state.fill([0; W]);
        for (k, s) in starts.iter().enumerate() {
            self.put_state_lanes(&lane_mask::<W>(k * per, (k + 1) * per), s);
        }
        self.active = lane_mask::<W>(0, lanes);
        self.start.fill(self.step);
        self.oldest = self.step;
        self.parked = [0; W];
        self.eval_state();
        self.sweep(1);
    }

    /// Writes a start state into every lane of `lanes` (a mask per word).
    fn put_state_lanes(&mut self, lanes: &[u64; W], s: &PnState) {
        for (b, w) in self.state.iter_mut().enumerate() {
            let on = s.get(b);
            for g in 0..W {
                w[g] = if on { w[g] | lanes[g] } else { w[g] & !lanes[g] };
            }
        }
    }

    /// Loads the state words into the bases and evaluates the state phase.
    fn eval_state(&mut self) {
        for (b, &s) in self.base_slot.iter().enumerate() {
            if s != 0 {
                self.vals[s as usize] = self.state[b];
            }
        }
        self.sweep(0);
    }

    /// Lane `lane`'s current state.
    pub fn state(&self, lane: usize, out: &mut PnState) {
        let words = self.state.len().div_ceil(64).max(1);
        let (g, l) = (lane / WORD_LANES, lane % WORD_LANES);
        out.bits.clear();
        out.bits.resize(words, 0);
        for (b, w) in self.state.iter().enumerate() {
            if w[g] >> l & 1 == 1 {
                out.bits[b / 64] |= 1 << (b % 64);
            }
        }
    }

    pub fn is_terminal(&self, lane: usize) -> bool {
        self.lane_bit(self.terminal, lane)
    }

    /// The legal move ids of `role` in lane `lane`, ascending.
    pub fn legal_moves(&self, lane: usize, role: usize, out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.role_legal[role].iter().filter(|&&(_, op)| self.lane_bit(op, lane)).map(|&(id, _)| id));
    }

    /// The goal of `role` in lane `lane`: `None` if no goal value or several hold.
    pub fn goal(&self, lane: usize, role: usize) -> Goal {
        let mut found: Option<Goal> = None;
        for &(op, v) in &self.goals[role] {
            if self.lane_bit(op, lane) {
                if found.is_some() {
                    return None;
                }
                found = Some(v);
            }
        }
        found.flatten()
    }

    /// Plays the given joint moves (`joint[lane * roles + role]`) in the lanes marked in
    /// `lanes`, then evaluates the state phase of the new states. Deterministic; for tests
    /// and callers that choose moves themselves.
    pub fn step_with(&mut self, lanes: &[bool], joint: &[u32]) {
        assert_eq!(joint.len(), Self::LANES * self.roles);
        let mut moving = [0u64; W];
        for (lane, _) in lanes.iter().enumerate().filter(|(_, &on)| on) {
            let (g, bit) = (lane / WORD_LANES, 1u64 << (lane % WORD_LANES));
            moving[g] |= bit;
            for &m in &joint[lane * self.roles..(lane + 1) * self.roles] {
                self.vals[self.input_slot[m as usize] as usize][g] |= bit;
            }
        }
        self.advance(&moving);
        self.eval_state();
        self.sweep(1);
    }

    /// With the chosen moves' input words set for `lanes`, evaluates the move phase, writes
    /// the next state of those lanes (the others keep theirs) and clears the inputs.
    fn advance(&mut self, lanes: &[u64; W]) {
        self.sweep(2);
        for b in 0..self.state.len() {
            let op = self.next[b];
            let (nw, m) = (self.vals[(op >> 1) as usize], 0u64.wrapping_sub((op & 1) as u64));
            let st = &mut self.state[b];
            for g in 0..W {
                st[g] = (st[g] & !lanes[g]) | ((nw[g] ^ m) & lanes[g]);
            }
        }
        self.clear_inputs();
        self.lane_steps += lanes.iter().map(|w| w.count_ones() as u64).sum::<u64>();
    }

    fn clear_inputs(&mut self) {
        self.vals[self.first_input..self.first_gate].fill([0; W]);
        let sink = self.vals.len() - 1;
        self.vals[sink] = [0; W];
    }

    /// Chooses one uniformly random legal move per role in each lane of `live` (of word
    /// `g`) and sets its input's bit; returns the lanes where every role has a legal move.
    /// Word operations find the lanes with one legal move (a waiting role), whose inputs are
    /// set a word at a time; one pass lists the legal moves of each other lane, which draws
    /// one number.
    fn choose_moves<R: RngCore>(&mut self, g: usize, live: u64, rng: &mut R) -> u64 {
        let mut ok = live;
        let cap = self.cap;
        for role in 0..self.roles {
            let legal = &self.role_legal[role];
            let (mut one, mut many) = (0u64, 0u64);
            for &(_, op) in legal {
                let w = self.vals[(op >> 1) as usize][g] ^ 0u64.wrapping_sub((op & 1) as u64);
                many |= one & w;
                one |= w;
            }
            let single = one & !many & ok;
            let multi = many & ok;
            ok = single | multi;
            for &(id, op) in legal {
                let w = self.vals[(op >> 1) as usize][g] ^ 0u64.wrapping_sub((op & 1) as u64);
                let slot = self.input_slot[id as usize] as usize;
                self.vals[slot][g] |= w & single;
                let mut w = w & multi;
                while w != 0 {
                    let lane = w.trailing_zeros() as usize;
                    w &= w - 1;
                    let c = self.count[lane] as usize;
                    // `c` counts the role's moves seen legal in the lane so far: below `cap`.
                    self.lists[lane * cap + c] = slot as u32;
                    self.count[lane] = c as u32 + 1;
                }
            }
            let mut w = multi;
            while w != 0 {
                let lane = w.trailing_zeros() as usize;
                w &= w - 1;
                let c = std::mem::take(&mut self.count[lane]);
                // Lemire's multiply-shift: uniform up to a bias of c / 2^64.
                let pick = ((rng.next_u64() as u128 * c as u128) >> 64) as usize;
                let slot = self.lists[lane * cap + pick] as usize;
                self.vals[slot][g] |= 1 << lane;
            }
        }
        ok
    }

    /// Records how the lanes in `lanes` of word `g` ended and parks them: they stay as
    /// they are (not moving, so their states stay in the base slots) until
    /// [`settle_goals`](Self::settle_goals).
    fn park(&mut self, g: usize, lanes: u64, terminal: u64) {
        let base = g * WORD_LANES;
        let mut w = lanes;
        while w != 0 {
            let lane = w.trailing_zeros() as usize;
            w &= w - 1;
            let depth = (self.step - self.start[base + lane]) as u32;
            self.ends[base + lane] = LaneEnd { depth, terminal: terminal >> lane & 1 == 1 };
        }
        self.active[g] &= !lanes;
        self.parked[g] |= lanes;
    }

    /// Sweeps the goal phase and records the goals of every parked lane (which stay parked
    /// until the caller takes them). The state phase must be current for their states: it
    /// is from the last evaluation of the state until the next, whatever moves in between.
    fn settle_goals(&mut self) {
        self.sweep(1);
        for g in 0..W {
            let lanes = self.parked[g];
            if lanes == 0 {
                continue;
            }
            let base = g * WORD_LANES;
            for role in 0..self.roles {
                let (mut one, mut many) = (0u64, 0u64);
                for &(op, v) in &self.goals[role] {
                    let hit = self.word(op, g) & lanes;
                    many |= one & hit;
                    one |= hit;
                    let mut w = hit;
                    while w != 0 {
                        let lane = w.trailing_zeros() as usize;
                        w &= w - 1;
                        self.goal_vals[(base + lane) * self.roles + role] = v;
                    }
                }
                let mut w = lanes & (many | !one);
                while w != 0 {
                    let lane = w.trailing_zeros() as usize;
                    w &= w - 1;
                    self.goal_vals[(base + lane) * self.roles + role] = None;
                }
            }
        }
    }

    /// One random step of every active lane: lanes in terminal states, at `max_depth`, or
    /// where a role has no legal move end (as [`random_playout`](crate::machine::random_playout)
    /// ends, and are parked); the others play a uniformly random joint move. Returns the lanes
    /// that ended.
    fn random_step<R: RngCore>(&mut self, max_depth: u32, rng: &mut R) -> [u64; W] {
        let check_depth = self.step - self.oldest >= max_depth as u64;
        if check_depth {
            self.oldest = self.step;
        }
        let (mut moving, mut ended) = ([0u64; W], [0u64; W]);
        for g in 0..W {
            let active = self.active[g];
            if active == 0 {
                continue;
            }
            let terminal = self.word(self.terminal, g) & active;
            let mut deep = 0u64;
            if check_depth {
                // Some lane may be at the limit: find them, and the oldest lane still going.
                let mut w = active;
                while w != 0 {
                    let lane = w.trailing_zeros() as usize;
                    w &= w - 1;
                    let start = self.start[g * WORD_LANES + lane];
                    if self.step - start >= max_depth as u64 {
                        deep |= 1 << lane;
                    } else {
                        self.oldest = self.oldest.min(start);
                    }
                }
            }
            moving[g] = self.choose_moves(g, active & !terminal & !deep, rng);
            ended[g] = active & !moving[g];
            if ended[g] != 0 {
                self.park(g, ended[g], terminal);
            }
        }
        if moving.iter().any(|&w| w != 0) {
            self.advance(&moving);
        } else {
            self.clear_inputs();
        }
        self.step += 1;
        ended
    }

    fn any_active(&self) -> bool {
        self.active.iter().any(|&w| w != 0)
    }

    /// Random playouts from `starts` (one lane each, at most [`Self::LANES`]) until every
    /// lane has ended. Returns how each lane ended; [`goals`](Self::goals) gives the final
    /// goals.
    pub fn run<R: RngCore>(&mut self, starts: &[PnState], max_depth: u32, rng: &mut R) -> &[LaneEnd] {
        self.run_groups(starts, 1, max_depth, rng, None).unwrap_or(&[])
    }

    /// `per` random playouts from each of `starts` (lane `l` plays from `starts[l / per]`; at
    /// most [`Self::LANES`] lanes in all) until every lane has ended: what search needs to
    /// sample several leaves at once. Returns how each lane ended; [`goals`](Self::goals)
    /// gives the final goals. `None` if `until` came first (checked at every step: a step
    /// of a large game's network costs far more than reading the clock): the lanes' goals
    /// are then not settled.
    pub fn run_groups<R: RngCore>(
        &mut self,
        starts: &[PnState],
        per: usize,
        max_depth: u32,
        rng: &mut R,
        until: Option<std::time::Instant>,
    ) -> Option<&[LaneEnd]> {
        self.load_groups(starts, per);
        while self.any_active() {
            if until.is_some_and(|t| std::time::Instant::now() >= t) {
                self.active = [0; W];
                self.parked = [0; W];
                return None;
            }
            self.random_step(max_depth, rng);
            self.eval_state();
        }
        // The parked lanes' states are loaded and evaluated (nothing moved since).
        self.settle_goals();
        self.parked = [0; W];
        Some(&self.ends[..starts.len() * per])
    }

    /// The goals (per role) with which lane `lane` ended its last playout.
    pub fn goals(&self, lane: usize) -> &[Goal] {
        &self.goal_vals[lane * self.roles..(lane + 1) * self.roles]
    }

    /// `n` random playouts from `start`, all lanes at once: a lane that ends starts the next
    /// playout (once its goals are known: lanes are parked until enough have ended to pay
    /// for a sweep of the gates only goals read, see `with_park_max`). `on_end(lane end,
    /// goals)` is called for each playout that ends. Returns the lane-steps played.
    pub fn playouts<R: RngCore>(
        &mut self,
        start: &PnState,
        n: u64,
        max_depth: u32,
        rng: &mut R,
        mut on_end: impl FnMut(&LaneEnd, &[Goal]),
    ) -> u64 {
        let steps0 = self.lane_steps;
        let first = n.min(Self::LANES as u64) as usize;
        let lanes = lane_mask::<W>(0, first);
        self.put_state_lanes(&lanes, start);
        self.active = lanes;
        self.parked = [0; W];
        self.start.fill(self.step);
        self.oldest = self.step;
        let mut started = first as u64;
        let mut parked = 0u32;
        self.eval_state();
        while self.any_active() {
            let ended = self.random_step(max_depth, rng);
            parked += ended.iter().map(|w| w.count_ones()).sum::<u32>();
            // The base slots still hold the states evaluated before the step: the parked
            // lanes' final states.
            if parked >= self.park_max || (parked > 0 && !self.any_active()) {
                self.settle_goals();
                let mut refill = [0u64; W];
                for g in 0..W {
                    let mut w = std::mem::take(&mut self.parked[g]);
                    while w != 0 {
                        let l = w.trailing_zeros() as usize;
                        w &= w - 1;
                        let lane = g * WORD_LANES + l;
                        on_end(&self.ends[lane], &self.goal_vals[lane * self.roles..(lane + 1) * self.roles]);
                        if started < n {
                            started += 1;
                            refill[g] |= 1 << l;
                            self.start[lane] = self.step;
                        }
                    }
                }
                parked = 0;
                if refill.iter().any(|&w| w != 0) {
                    self.put_state_lanes(&refill, start);
                    for g in 0..W {
                        self.active[g] |= refill[g];
                    }
                }
            }
            self.eval_state();
        }
        self.lane_steps - steps0
    }
}

fn count_gates(segs: &[Segment]) -> usize {
    segs.iter().map(|s| (s.hi - s.lo) as usize).sum()
}

#[inline(always)]
fn word<const W: usize>(vals: &[[u64; W]], o: u32) -> [u64; W] {
    // SAFETY: `Batch::new` checks that every operand names a slot below `vals.len()`.
    let v = unsafe { vals.get_unchecked((o >> 1) as usize) };
    let m = 0u64.wrapping_sub((o & 1) as u64);
    std::array::from_fn(|i| v[i] ^ m)
}

#[inline(always)]
fn or<const W: usize>(a: [u64; W], b: [u64; W]) -> [u64; W] {
    std::array::from_fn(|i| a[i] | b[i])
}

/// Evaluates gates `lo..hi` in order.
#[inline]
fn eval_gates<const W: usize>(
    vals: &mut [[u64; W]],
    ops: &[u32],
    start: &[u32],
    end: &[u32],
    first: usize,
    lo: u32,
    hi: u32,
) {
    for k in lo as usize..hi as usize {
        let e = end[k];
        let (a, b) = (start[k] as usize, (e & !NEG_OUT) as usize);
        let ops = &ops[a..b];
        // Every gate has at least two operands (padded at construction).
        let mut acc = or(word(vals, ops[0]), word(vals, ops[1]));
        for &o in &ops[2..] {
            acc = or(acc, word(vals, o));
        }
        let m = 0u64.wrapping_sub((e >> 31) as u64);
        vals[first + k] = std::array::from_fn(|i| acc[i] ^ m);
    }
}

/// As [`eval_gates`], and whether any gate's word changed.
fn eval_gates_changed<const W: usize>(
    vals: &mut [[u64; W]],
    ops: &[u32],
    start: &[u32],
    end: &[u32],
    first: usize,
    lo: u32,
    hi: u32,
) -> bool {
    let mut changed = false;
    for k in lo as usize..hi as usize {
        let e = end[k];
        let (a, b) = (start[k] as usize, (e & !NEG_OUT) as usize);
        let mut acc = [0u64; W];
        for &o in &ops[a..b] {
            acc = or(acc, word(vals, o));
        }
        let m = 0u64.wrapping_sub((e >> 31) as u64);
        let v = std::array::from_fn(|i| acc[i] ^ m);
        changed |= vals[first + k] != v;
        vals[first + k] = v;
    }
    changed
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
