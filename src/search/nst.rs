//! NST, the N-gram selection technique (Tak, Winands and Björnsson, "N-Grams and the
//! Last-Good-Reply Policy Applied in General Game Playing", IEEE TCIAIG 4(2), 2012), for
//! [`Playout::Nst`](super::Playout::Nst).
//!
//! MAST keeps, per move of a role, the mean reward the role got in the iterations that played
//! it (a *1-gram*). NST also keeps the means of *2-grams*: a move together with the move
//! played just before it, at the previous joint move, by the role before it in the role order
//! (cyclically). In a turn-taking game of two roles that is the opponent's last move, so a
//! 2-gram is a reply, which MAST cannot tell from the same move played anywhere else. A playout
//! move is scored by the mean of its 1-gram's mean and, when the 2-gram has been played at
//! least [`MIN_VISITS`] times (the paper's threshold *k*), the 2-gram's mean; the playout
//! plays the best with probability 1 − ε, as MAST does. The paper's NST also keeps 3-grams;
//! here only 2-grams are kept (one more lookup per legal move instead of two).
//!
//! The 2-grams live in a [`PairTable`]: a fixed table of `2^PAIR_BITS` slots indexed by a hash of
//! the pair, without keys. Two pairs that hash alike share their statistics: with 256K slots
//! and the few ten thousand pairs a board game plays, rare, and a shared slot is only a worse
//! guess of a playout move. The table never grows, so playouts and updates allocate nothing.
//! Its decay (at each new root, as MAST's) is one multiplication: the slots hold statistics
//! divided by a common scale, and only when the scale grows small are they rescaled.

/// The slots of a [`PairTable`]: 2^18 (2 MiB).
pub const PAIR_BITS: u32 = 18;

/// Plays a 2-gram needs before its mean counts (the paper's *k*).
pub const MIN_VISITS: f32 = 7.0;

/// A key standing for no move (a move without a number): never part of a pair.
const NONE: u32 = u32::MAX;

/// The scale below which a [`PairTable`]'s slots are rescaled (its inverse stays far from
/// `f32`'s limits).
const MIN_SCALE: f32 = 1e-6;

/// Per slot: the reward sum and the count of plays of the 2-grams hashed to it, both divided
/// by `scale` (decay multiplies the scale alone).
#[derive(Clone, Debug)]
pub struct PairTable {
    slots: Vec<(f32, f32)>,
    scale: f32,
}

impl Default for PairTable {
    fn default() -> PairTable {
        PairTable::new()
    }
}

impl PairTable {
    /// An empty table (no slots: every pair is unknown) until [`PairTable::ensure`].
    pub fn new() -> PairTable {
        PairTable { slots: Vec::new(), scale: 1.0 }
    }

    /// Makes the slots (once).
    pub fn ensure(&mut self) {
        if self.slots.is_empty() {
            self.slots = vec![(0.0, 0.0); 1 << PAIR_BITS];
        }
    }

    /// Whether the table has its slots (NST is on).
    pub fn is_on(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Copies `other`'s statistics, reusing this table's memory.
    pub fn copy_from(&mut self, other: &PairTable) {
        self.slots.clone_from(&other.slots);
        self.scale = other.scale;
    }

    /// Counts one play of `key` after `prev` that gave its role `reward`.
    #[inline]
    pub fn add(&mut self, prev: u32, key: u32, reward: f64) {
        if self.slots.is_empty() || prev == NONE || key == NONE {
            return;
        }
        let inv = 1.0 / self.scale;
        let s = &mut self.slots[slot(prev, key)];
        s.0 += reward as f32 * inv;
        s.1 += inv;
    }

    /// Multiplies every statistic by `g` (the root changed): the scale alone, the slots only
    /// when it falls below [`MIN_SCALE`].
    pub fn decay(&mut self, g: f64) {
        self.scale *= g as f32;
        if self.scale.is_nan() || self.scale < MIN_SCALE {
            let s = self.scale;
            self.slots.iter_mut().for_each(|e| *e = (e.0 * s, e.1 * s));
            self.scale = 1.0;
        }
    }

    /// The mean reward of `key` played after `prev`, when it has been played at least
    /// [`MIN_VISITS`] times.
    #[inline]
    pub fn mean(&self, prev: u32, key: u32) -> Option<f64> {
        if self.slots.is_empty() || prev == NONE || key == NONE {
            return None;
        }
        let (w, n) = self.slots[slot(prev, key)];
        (n * self.scale >= MIN_VISITS).then_some((w / n) as f64)
    }

    /// The plays counted over every slot (for tests and logs).
    pub fn plays(&self) -> f64 {
        self.slots.iter().map(|s| s.1 as f64).sum::<f64>() * self.scale as f64
    }
}

/// The slot of the pair (`prev`, `key`): Fibonacci hashing of the two keys side by side.
#[inline]
fn slot(prev: u32, key: u32) -> usize {
    let h = (((prev as u64) << 32) | key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - PAIR_BITS)) as usize
}

/// The role whose move at the previous joint move is the context of `role`'s move: the role
/// before it, cyclically (the opponent, in a game of two roles; itself, in a puzzle).
#[inline]
pub fn context_role(role: usize, roles: usize) -> usize {
    if role == 0 {
        roles - 1
    } else {
        role - 1
    }
}

/// Adds the 2-grams of one joint move `now` after the joint move `before` (both as keys,
/// one per role), each role's counted with its reward.
pub fn add_step(table: &mut PairTable, before: &[u32], now: &[u32], rewards: &[f64]) {
    let roles = now.len();
    for (r, &key) in now.iter().enumerate() {
        table.add(before[context_role(r, roles)], key, rewards[r]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_counts_after_k_plays_and_only_after_its_context() {
        let mut t = PairTable::new();
        assert_eq!(t.mean(3, 4), None);
        t.add(3, 4, 1.0);
        assert!(!t.is_on(), "no slots before ensure: nothing is kept");
        t.ensure();
        for i in 0..7 {
            assert_eq!(t.mean(3, 4), None, "{i} plays are fewer than k");
            t.add(3, 4, if i % 2 == 0 { 1.0 } else { 0.0 });
        }
        let m = t.mean(3, 4).expect("seven plays");
        assert!((m - 4.0 / 7.0).abs() < 1e-6, "{m}");
        assert_eq!(t.mean(4, 3), None, "the pair is ordered");
        assert_eq!(t.mean(5, 4), None, "another context");
        assert_eq!(t.mean(NONE, 4), None);
        t.add(NONE, 4, 1.0);
        assert!((t.plays() - 7.0).abs() < 1e-4);
        // Decay: the plays halve (below k: the pair no longer counts), the mean stays, and
        // plays added after the decay count whole.
        t.decay(0.5);
        assert!((t.plays() - 3.5).abs() < 1e-4, "{}", t.plays());
        assert_eq!(t.mean(3, 4), None);
        for _ in 0..4 {
            t.add(3, 4, 1.0);
        }
        let m = t.mean(3, 4).expect("7.5 plays");
        assert!((m - (2.0 + 4.0) / 7.5).abs() < 1e-5, "{m}");
        let mut c = PairTable::new();
        c.copy_from(&t);
        assert_eq!((c.mean(3, 4), c.plays()), (t.mean(3, 4), t.plays()));
    }

    /// Decay after decay: the slots are rescaled before the scale's inverse grows large, and
    /// the statistics stay what they are.
    #[test]
    fn many_decays_rescale_and_keep_the_statistics() {
        let mut t = PairTable::new();
        t.ensure();
        let mut plays = 0.0;
        for round in 0..200 {
            for _ in 0..40 {
                t.add(1, 2, 0.25);
            }
            t.decay(0.2);
            plays = (plays + 40.0) * 0.2;
            assert!(t.scale >= MIN_SCALE && t.scale <= 1.0, "round {round}: scale {}", t.scale);
            let m = t.mean(1, 2).expect("8 plays and more");
            assert!((m - 0.25).abs() < 1e-5, "round {round}: {m}");
            assert!((t.plays() - plays).abs() < 1e-3 * plays, "round {round}: {} for {plays}", t.plays());
        }
    }

    #[test]
    fn the_context_of_a_move_is_the_previous_role_s_last_move() {
        assert_eq!(context_role(0, 2), 1);
        assert_eq!(context_role(1, 2), 0);
        assert_eq!(context_role(0, 1), 0);
        assert_eq!(context_role(2, 3), 1);
        let mut t = PairTable::new();
        t.ensure();
        for _ in 0..7 {
            add_step(&mut t, &[10, 11], &[20, 21], &[1.0, 0.0]);
        }
        // Role 0's move 20 followed role 1's 11; role 1's 21 followed role 0's 10.
        assert_eq!(t.mean(11, 20), Some(1.0));
        assert_eq!(t.mean(10, 21), Some(0.0));
        assert_eq!(t.mean(10, 20), None);
    }
}
