//! Pieces of a breadth-first exploration of a game's reachable states, shared by the analyses
//! that enumerate a state graph (`equilibrium`'s `StateGraph`, `equiv`'s `GameGraph`, `hsg`'s
//! `Ssg`): a table that keeps each state once and numbers states in order of discovery, and
//! the joint moves of a state one after another.

use super::StateMachine;
use rustc_hash::FxBuildHasher;
use std::hash::{BuildHasher, Hash};

/// Each state once, numbered from 0 in order of discovery. The table holds ids hashed by
/// their states, so a state is stored only in `states`.
pub struct StateIndex<S> {
    states: Vec<S>,
    table: hashbrown::HashTable<u32>,
}

impl<S: Hash + Eq + Clone> StateIndex<S> {
    /// The index holding `start` as state 0.
    pub fn new(start: &S) -> Self {
        let mut index = StateIndex { states: Vec::new(), table: hashbrown::HashTable::new() };
        index.intern(start, 1);
        index
    }

    pub fn len(&self) -> usize {
        self.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    pub fn state(&self, id: u32) -> &S {
        &self.states[id as usize]
    }

    /// The id of `s` and whether it is new: added (cloned) when it was not held and fewer
    /// than `max` states are; `None` when it was not held and the index is full.
    pub fn intern(&mut self, s: &S, max: usize) -> Option<(u32, bool)> {
        let hasher = FxBuildHasher;
        let hash = hasher.hash_one(s);
        if let Some(&id) = self.table.find(hash, |&id| self.states[id as usize] == *s) {
            return Some((id, false));
        }
        if self.states.len() >= max {
            return None;
        }
        let id = self.states.len() as u32;
        self.states.push(s.clone());
        let states = &self.states;
        self.table.insert_unique(hash, id, |&i| hasher.hash_one(&states[i as usize]));
        Some((id, true))
    }

    /// The states, by id.
    pub fn into_states(self) -> Vec<S> {
        self.states
    }
}

/// The joint moves of one state, in lexicographic order of the roles' move indices (the last
/// role's move varies fastest): joint `k` picks role `r`'s move `k / (product of the later
/// roles' counts) mod (role r's count)`.
pub struct JointMoves<Mv> {
    legal: Vec<Vec<Mv>>,
    pick: Vec<usize>,
    joint: Vec<Mv>,
    /// No joint move given since the load; every joint move given.
    fresh: bool,
    done: bool,
}

impl<Mv: Copy> JointMoves<Mv> {
    pub fn new(roles: usize) -> Self {
        JointMoves {
            legal: vec![Vec::new(); roles],
            pick: vec![0; roles],
            joint: Vec::with_capacity(roles),
            fresh: false,
            done: true,
        }
    }

    /// Loads every role's legal moves in `s` and starts over at the first joint move.
    /// `Err(r)`: role `r` has no legal move.
    pub fn load<M: StateMachine<Move = Mv>>(&mut self, m: &mut M, s: &M::State) -> Result<(), usize> {
        self.done = true;
        for (r, l) in self.legal.iter_mut().enumerate() {
            m.legal_moves(s, r, l);
            if l.is_empty() {
                return Err(r);
            }
        }
        self.pick.iter_mut().for_each(|p| *p = 0);
        self.fresh = true;
        self.done = false;
        Ok(())
    }

    /// Each role's legal moves, as loaded.
    pub fn legal(&self) -> &[Vec<Mv>] {
        &self.legal
    }

    /// The number of joint moves.
    pub fn count(&self) -> usize {
        self.legal.iter().map(Vec::len).product()
    }

    /// The next joint move; `None` after the last.
    pub fn next_joint(&mut self) -> Option<&[Mv]> {
        if self.done {
            return None;
        }
        if !self.fresh {
            let mut r = self.pick.len();
            loop {
                if r == 0 {
                    self.done = true;
                    return None;
                }
                r -= 1;
                self.pick[r] += 1;
                if self.pick[r] < self.legal[r].len() {
                    break;
                }
                self.pick[r] = 0;
            }
        }
        self.fresh = false;
        self.joint.clear();
        self.joint.extend(self.pick.iter().zip(&self.legal).map(|(&i, l)| l[i]));
        Some(&self.joint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdl::Game;
    use crate::interp::Interpreter;
    use std::path::Path;

    fn game(file: &str) -> Interpreter {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
        Interpreter::new(&Game::load(&p).unwrap()).unwrap()
    }

    #[test]
    fn joint_moves_are_lexicographic_and_complete() {
        let mut m = game("rock_paper_scissors.kif");
        let s = m.initial_state();
        let mut j = JointMoves::new(2);
        j.load(&mut m, &s).unwrap();
        let legal = j.legal().to_vec();
        assert_eq!(j.count(), 9);
        let mut all = Vec::new();
        while let Some(joint) = j.next_joint() {
            all.push(joint.to_vec());
        }
        let expected: Vec<Vec<_>> = legal[0].iter().flat_map(|&a| legal[1].iter().map(move |&b| vec![a, b])).collect();
        assert_eq!(all, expected);
        assert!(j.next_joint().is_none(), "stays finished");
    }

    #[test]
    fn the_index_keeps_each_state_once_within_its_bound() {
        let mut m = game("tictactoe.kif");
        let s = m.initial_state();
        let mut index = StateIndex::new(&s);
        assert_eq!(index.intern(&s, 10), Some((0, false)));
        let mut j = JointMoves::new(2);
        j.load(&mut m, &s).unwrap();
        let mut next = s.clone();
        let mut ids = Vec::new();
        while let Some(joint) = j.next_joint() {
            let joint = joint.to_vec();
            m.next_state(&s, &joint, &mut next);
            ids.push(index.intern(&next, 5));
        }
        // Nine first moves; the bound of five states leaves room for four of them.
        assert_eq!(ids.len(), 9);
        assert_eq!(ids[..4], [Some((1, true)), Some((2, true)), Some((3, true)), Some((4, true))]);
        assert!(ids[4..].iter().all(Option::is_none));
        assert_eq!(index.len(), 5);
        let first = index.state(1).clone();
        assert_eq!(index.intern(&first, 5), Some((1, false)), "a held state is found when full");
    }
}
