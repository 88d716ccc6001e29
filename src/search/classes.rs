//! Position classes ([`super::mcts::MctsConfig::position_classes`]): statistics pooled over
//! the states a machine gives one key ([`crate::machine::StateMachine::position_key`]).
//!
//! A tree node of a keyed state belongs to its key's class; every descent through the node
//! adds its reward to the class, so a class counts the descents through all of its states,
//! whichever nodes and paths they were reached by. Selection ranks a move into a node of a
//! class by the class's mean when the class has seen more descents than the move (its own
//! included), and explores by the move's own count. With `hsg::prune`'s key (states equal
//! but for their step counters, the weak equivalence of the hyperstate paper) this shares
//! what was learned of a position between the times it is reached, as through a reversible
//! detour.

use rustc_hash::FxHashMap;

/// Index of a class (`u32::MAX`: none).
pub(super) const NO_CLASS: u32 = u32::MAX;

/// The classes' statistics: per class its descents and, per role, their reward sum.
pub(super) struct PositionClasses {
    roles: usize,
    index: FxHashMap<u64, u32>,
    keys: Vec<u64>,
    n: Vec<u32>,
    w: Vec<f64>,
}

impl PositionClasses {
    pub(super) fn new(roles: usize) -> PositionClasses {
        PositionClasses { roles, index: FxHashMap::default(), keys: Vec::new(), n: Vec::new(), w: Vec::new() }
    }

    /// The class of `key`, made on first sight.
    pub(super) fn class_of(&mut self, key: u64) -> u32 {
        let next = self.keys.len() as u32;
        let c = *self.index.entry(key).or_insert(next);
        if c == next {
            self.keys.push(key);
            self.n.push(0);
            self.w.resize(self.w.len() + self.roles, 0.0);
        }
        c
    }

    /// Adds `visits` descents whose rewards sum to `sums` (per role) to class `c`.
    pub(super) fn add(&mut self, c: u32, visits: u32, sums: &[f64]) {
        if c == NO_CLASS {
            return;
        }
        let c = c as usize;
        self.n[c] += visits;
        for (w, s) in self.w[c * self.roles..(c + 1) * self.roles].iter_mut().zip(sums) {
            *w += s;
        }
    }

    /// Class `c`'s descents and `role`'s reward sum over them.
    pub(super) fn stats(&self, c: u32, role: usize) -> (u32, f64) {
        if c == NO_CLASS {
            return (0, 0.0);
        }
        (self.n[c as usize], self.w[c as usize * self.roles + role])
    }

    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Keeps only the classes `live` holds (the classes of the nodes left after a
    /// compaction), with their statistics; returns the new index of each old class
    /// (`NO_CLASS` for one dropped).
    pub(super) fn retain(&mut self, live: impl Iterator<Item = u32>) -> Vec<u32> {
        let mut map = vec![NO_CLASS; self.keys.len()];
        let mut order: Vec<u32> = live.filter(|&c| c != NO_CLASS).collect();
        order.sort_unstable();
        order.dedup();
        let mut next = PositionClasses::new(self.roles);
        for &c in &order {
            let key = self.keys[c as usize];
            let k = next.class_of(key);
            map[c as usize] = k;
            let (a, b) = (c as usize * self.roles, (c as usize + 1) * self.roles);
            next.n[k as usize] = self.n[c as usize];
            next.w[k as usize * self.roles..(k as usize + 1) * self.roles].copy_from_slice(&self.w[a..b]);
        }
        *self = next;
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_pool_and_survive_retain() {
        let mut c = PositionClasses::new(2);
        let a = c.class_of(7);
        let b = c.class_of(9);
        assert_eq!(c.class_of(7), a);
        c.add(a, 2, &[1.5, 0.5]);
        c.add(b, 1, &[0.0, 1.0]);
        c.add(a, 1, &[1.0, 0.0]);
        c.add(NO_CLASS, 1, &[1.0, 1.0]);
        assert_eq!(c.stats(a, 0), (3, 2.5));
        assert_eq!(c.stats(a, 1), (3, 0.5));
        let map = c.retain([a, NO_CLASS, a].into_iter());
        assert_eq!(c.len(), 1);
        assert_eq!(map[b as usize], NO_CLASS);
        let a2 = map[a as usize];
        assert_eq!(c.stats(a2, 0), (3, 2.5));
        assert_eq!(c.class_of(7), a2, "the key still finds its class");
    }
}
