//! Similarity hints for traps (Evans and Turrini, `../shared/papers/positional-similarity-
//! traps.txt`, section 3's *move matching* and section 5.1): a trap proven once in a match
//! is remembered with its position's tactical signature, and when a later position is
//! similar to it, the move that move matching pairs with the trap move is checked first,
//! by the exact trap finder, starting from the reply that move matching pairs with the
//! refutation's killer move.
//!
//! What is remembered ([`TrapMemo`]): the position, its [`TacticsSig`], the role, the trap
//! move, the killer move (the others' first reply in the refutation) and the least depth
//! within which the loss is forced (found by the exact finder). What a check does ([`TrapMemory::check`]), for a root where
//! the role alone chooses:
//! 1. the memos of the role whose position's tactical similarity to the root is at least ρ,
//!    most similar first, three at most;
//! 2. move matching (structural similarity over continuations at depth 1, the assignment of
//!    [`crate::similarity::move_matching`]) between the memo's position and the root, on
//!    local trees of depth 2: the root move paired with the trap move;
//! 3. move matching between the two positions after those moves: the reply paired with the
//!    killer move;
//! 4. the exact trap finder ([`crate::traps::TrapSearch`]) on the root after the paired move
//!    and the paired killer, for the remaining depth (only where the role has no choice at
//!    the killer's ply, so that the killer is the others' move alone); if that fails, on the
//!    root after the paired move alone, for the whole depth. Either proves the paired move
//!    lost.
//!
//! All of it runs once per root, before the search: each exact search within a state budget,
//! move matching only where the role has at most [`MAX_MOVES`] moves, and no new memo is
//! checked past the time the caller gives. Nothing here is on the search's hot path.

use super::Hint;
use crate::machine::StateMachine;
use crate::similarity::machine::{joint_moves, MachineView};
use crate::similarity::{move_matching, Base, Labels, LocalTree, Sub, TacticsSig};
use crate::traps::TrapSearch;

/// The name of the measure the hints compare positions by, as the trap log writes it.
pub const MEASURE: &str = "tactics";

/// A trap proven earlier in the match.
pub struct TrapMemo<M: StateMachine> {
    state: M::State,
    facts: Vec<String>,
    sig: TacticsSig,
    role: usize,
    mv_text: String,
    /// The label of the refutation's first reply (the choosing roles' moves), if the loss
    /// was not on the board at once.
    killer: Option<String>,
    /// Joint moves after the trap move within which the loss is forced.
    depth: u32,
}

/// A trap proven by a hint.
pub struct HintCheck<Mv> {
    pub mv: Mv,
    /// The trap move's joint move, then the matched killer's when it was the refutation.
    pub line: Vec<Vec<Mv>>,
    pub complete: bool,
    pub hint: Hint,
}

/// The traps of a match, most recent last.
pub struct TrapMemory<M: StateMachine> {
    memos: Vec<TrapMemo<M>>,
    labels: Labels,
    legal: Vec<Vec<M::Move>>,
}

/// Memos kept (the oldest go first).
const CAP: usize = 32;
/// Memos checked per root.
const CHECKS: usize = 3;
/// Traps remembered per position (a root may have dozens; they share one signature, so the
/// most similar memos would all be one position's).
pub const PER_POSITION: usize = 4;
/// Deepest trap remembered (the exact finder's cost grows with it).
const MAX_DEPTH: u32 = 5;
/// States the exact finder may expand, over all the traps of a position remembered at once,
/// to find their depths: remembering runs after the search and before the reply.
const REMEMBER_BUDGET: u64 = 2_000;
/// Most moves of the role at a position hints compare: move matching expands local trees of
/// depth 2 (about the square of it in states, with printed labels), so wider games (pentago's
/// 288 moves, amazons') go without hints.
const MAX_MOVES: usize = 128;

impl<M: StateMachine> Default for TrapMemory<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: StateMachine> TrapMemory<M> {
    pub fn new() -> Self {
        TrapMemory { memos: Vec::new(), labels: Labels::new(), legal: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.memos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.memos.is_empty()
    }

    /// Remembers the traps of `role` in `state` (signature `sig`, computed once by the
    /// caller): each refutation `line` (joint moves, the trap's first) that is complete and
    /// not too deep, [`PER_POSITION`] at most.
    pub fn remember(&mut self, m: &mut M, sig: &TacticsSig, state: &M::State, role: usize, lines: &[&[Vec<M::Move>]]) {
        if !sole_chooser(m, state, role, &mut self.legal) {
            return;
        }
        let facts = m.state_facts(state);
        let mut kept = 0;
        let mut budget = REMEMBER_BUDGET;
        for line in lines {
            if kept == PER_POSITION {
                break;
            }
            kept += usize::from(self.remember_one(m, sig, state, &facts, role, line, &mut budget));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn remember_one(
        &mut self,
        m: &mut M,
        sig: &TacticsSig,
        state: &M::State,
        facts: &[String],
        role: usize,
        line: &[Vec<M::Move>],
        budget: &mut u64,
    ) -> bool {
        let Some(first) = line.first() else { return false };
        let mv_text = m.move_text(first[role]);
        if self.memos.iter().any(|t| t.role == role && t.mv_text == mv_text && t.facts == facts) {
            return false;
        }
        let mut after = state.clone();
        m.next_state(state, first, &mut after);
        // The depth a hint's exact search will need: the least within which the loss is
        // forced. The solver's line follows any losing reply of the role, not its longest
        // defence, so its length may fall short of it (and a hint asked for too little depth
        // misses); a search bounded by what is left of the position's `budget` settles it,
        // the line's length standing in when the budget runs out.
        let mut finder = TrapSearch::new(m, role, 0, *budget);
        let least = finder.least_depth(&after, MAX_DEPTH);
        *budget = budget.saturating_sub(finder.nodes);
        let depth = match least {
            Some(Some(d)) => d,
            Some(None) => return false,
            None => line.len() as u32 - 1,
        };
        if depth > MAX_DEPTH {
            return false;
        }
        let killer = line.get(1).and_then(|reply| {
            joint_moves(m, &after, &mut self.legal).into_iter().find(|(_, j)| j == reply).map(|(label, _)| label)
        });
        if self.memos.len() == CAP {
            self.memos.remove(0);
        }
        let (sig, facts) = (sig.clone(), facts.to_vec());
        self.memos.push(TrapMemo { state: state.clone(), facts, sig, role, mv_text, killer, depth });
        true
    }

    /// Checks `root` (signature `sig`, of depth `sig_depth`) for the traps of similar
    /// remembered positions, as the module says; `skip`: moves already known lost. `bounds`:
    /// the least similarity ρ, the states each exact search may expand, and the time after
    /// which no new memo is checked.
    pub fn check(
        &mut self,
        m: &mut M,
        root: &M::State,
        sig: &TacticsSig,
        sig_depth: u32,
        role: usize,
        bounds: (f64, u64, std::time::Instant),
        skip: &[M::Move],
    ) -> Vec<HintCheck<M::Move>> {
        let (rho, budget, until) = bounds;
        let mut out: Vec<HintCheck<M::Move>> = Vec::new();
        if !sole_chooser(m, root, role, &mut self.legal) {
            return out;
        }
        let root_joint: Vec<M::Move> = self.legal.iter().map(|l| l[0]).collect();
        let mut similar: Vec<(f64, usize)> = (0..self.memos.len())
            .filter(|&i| self.memos[i].role == role)
            .map(|i| (self.memos[i].sig.similarity(sig), i))
            .collect();
        tracing::debug!(memos = self.memos.len(), similarities = ?similar.iter().map(|x| x.0).collect::<Vec<_>>(), "trap hints");
        similar.retain(|&(s, _)| s >= rho);
        similar.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        let labels = &mut self.labels;
        let mut root_tree: Option<LocalTree> = None;
        for &(s, i) in similar.iter().take(CHECKS) {
            if std::time::Instant::now() >= until {
                break;
            }
            let memo = &self.memos[i];
            let tb =
                root_tree.get_or_insert_with(|| LocalTree::expand(&mut MachineView::new(m, role), root, 2, labels));
            let ta = LocalTree::expand(&mut MachineView::new(m, role), &memo.state, 2, labels);
            let Some(text) = paired(ta.root(), tb.root(), &memo.mv_text, labels) else {
                tracing::debug!(similarity = s, source_move = %memo.mv_text, "trap hint: no move paired");
                continue;
            };
            m.legal_moves(root, role, &mut self.legal[role]);
            let Some(&mv) = self.legal[role].iter().find(|&&x| m.move_text(x) == text) else { continue };
            if skip.contains(&mv) || out.iter().any(|h| h.mv == mv) {
                continue;
            }
            let mut joint = root_joint.clone();
            joint[role] = mv;
            let mut after = root.clone();
            m.next_state(root, &joint, &mut after);
            // The reply paired with the killer, after the two moves.
            fn child<'t>(t: &'t LocalTree, label: &str, labels: &Labels) -> Option<Sub<'t>> {
                let id = labels.get(label);
                t.root().children().find(|c| Some(c.label()) == id)
            }
            let killer_text = memo.killer.as_ref().and_then(|k| {
                let (sa, sb) = (child(&ta, &memo.mv_text, labels)?, child(tb, &text, labels)?);
                paired(sa, sb, k, labels)
            });
            // The shortcut proves the move lost only where the role has no choice at the
            // killer's ply (the killer is then the others' move alone).
            m.legal_moves(&after, role, &mut self.legal[role]);
            let forced_reply = self.legal[role].len() == 1;
            let killer_joint = killer_text.as_ref().filter(|_| forced_reply).and_then(|k| {
                joint_moves(m, &after, &mut self.legal).into_iter().find(|(l, _)| l == k).map(|(_, j)| j)
            });
            let twice = killer_joint.as_ref().map(|kj| {
                let mut twice = after.clone();
                m.next_state(&after, kj, &mut twice);
                let ended = m.is_terminal(&twice);
                (kj.clone(), twice, ended)
            });
            let ended = m.is_terminal(&after);
            let depth = memo.depth;
            let (source, source_move, killer) = (memo.facts.clone(), memo.mv_text.clone(), memo.killer.clone());
            let mut finder = TrapSearch::new(m, role, 0, budget);
            let mut line = None;
            if let Some((kj, twice, twice_ended)) = twice {
                if finder.forced(&twice, depth.saturating_sub(1)) == Some(true) {
                    line = Some((vec![joint.clone(), kj], twice_ended, true));
                }
            }
            if line.is_none() {
                finder.reset_budget();
                if finder.forced(&after, depth) == Some(true) {
                    line = Some((vec![joint.clone()], ended, false));
                }
            }
            tracing::debug!(
                similarity = s,
                source_move = %memo.mv_text,
                paired = %text,
                killer = ?memo.killer,
                matched_killer = ?killer_text,
                proven = line.is_some(),
                "trap hint checked"
            );
            let Some((line, complete, by_killer)) = line else { continue };
            out.push(HintCheck {
                mv,
                line,
                complete,
                hint: Hint {
                    measure: format!("{MEASURE} d={sig_depth}"),
                    similarity: s,
                    source,
                    source_move,
                    killer,
                    matched_killer: if by_killer { killer_text } else { None },
                },
            });
        }
        out
    }
}

/// The label that move matching pairs with `label` (a move of `a`) among `b`'s moves.
fn paired(a: Sub, b: Sub, label: &str, labels: &Labels) -> Option<String> {
    let pairs = move_matching(a, b, Base::Continuations(1), labels)?;
    pairs.into_iter().find(|p| p.first == label).map(|p| p.second)
}

/// Whether `role` is the only role with more than one legal move in `state` (and every
/// role has one), with at most [`MAX_MOVES`]; leaves the legal moves in `legal`.
fn sole_chooser<M: StateMachine>(m: &mut M, state: &M::State, role: usize, legal: &mut Vec<Vec<M::Move>>) -> bool {
    if m.is_terminal(state) {
        return false;
    }
    let roles = m.roles().len();
    legal.resize_with(roles, Vec::new);
    for (r, l) in legal.iter_mut().enumerate() {
        m.legal_moves(state, r, l);
        if l.is_empty() || (r != role && l.len() > 1) {
            return false;
        }
    }
    legal[role].len() > 1 && legal[role].len() <= MAX_MOVES
}

#[cfg(test)]
#[path = "trap_memory_tests.rs"]
mod tests;
