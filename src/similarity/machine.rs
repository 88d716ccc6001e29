//! Any [`StateMachine`] seen as [`Positions`] from one role's view.

use super::Positions;
use crate::machine::StateMachine;

/// A state machine's states as positions with labelled moves, rewards from `role`'s view.
///
/// A child's label is the printed move of the role that has a choice (the role on turn in a
/// turn-taking game, as a chess move is written without its colour); where several roles
/// have a choice (simultaneous moves) it is their joint move, `m₁ | m₂ | …` in role order;
/// where none has, the joint move of all roles.
pub struct MachineView<'m, M: StateMachine> {
    pub machine: &'m mut M,
    pub role: usize,
    legal: Vec<Vec<M::Move>>,
}

impl<'m, M: StateMachine> MachineView<'m, M> {
    pub fn new(machine: &'m mut M, role: usize) -> Self {
        MachineView { machine, role, legal: Vec::new() }
    }
}

/// The joint moves of a state: the product of the roles' legal moves (empty when some role
/// has none), with each joint move's label as [`MachineView`] writes it.
pub fn joint_moves<M: StateMachine>(
    m: &mut M,
    state: &M::State,
    legal: &mut Vec<Vec<M::Move>>,
) -> Vec<(String, Vec<M::Move>)> {
    let roles = m.roles().len();
    legal.resize_with(roles, Vec::new);
    for (r, l) in legal.iter_mut().enumerate() {
        m.legal_moves(state, r, l);
        if l.is_empty() {
            return Vec::new();
        }
    }
    let choosers: Vec<usize> = (0..roles).filter(|&r| legal[r].len() > 1).collect();
    let shown: Vec<usize> = if choosers.is_empty() { (0..roles).collect() } else { choosers };
    let mut out = Vec::new();
    let mut idx = vec![0usize; roles];
    loop {
        let joint: Vec<M::Move> = (0..roles).map(|r| legal[r][idx[r]]).collect();
        let label = shown.iter().map(|&r| m.move_text(joint[r])).collect::<Vec<_>>().join(" | ");
        out.push((label, joint));
        // Odometer over the roles' choices.
        let mut r = roles;
        loop {
            if r == 0 {
                return out;
            }
            r -= 1;
            idx[r] += 1;
            if idx[r] < legal[r].len() {
                break;
            }
            idx[r] = 0;
        }
    }
}

impl<M: StateMachine> Positions for MachineView<'_, M> {
    type Pos = M::State;

    fn children(&mut self, p: &M::State) -> Vec<(String, M::State)> {
        if self.machine.is_terminal(p) {
            return Vec::new();
        }
        let moves = joint_moves(self.machine, p, &mut self.legal);
        moves
            .into_iter()
            .map(|(label, joint)| {
                let mut next = p.clone();
                self.machine.next_state(p, &joint, &mut next);
                (label, next)
            })
            .collect()
    }

    fn reward(&mut self, p: &M::State) -> Option<f64> {
        if self.machine.is_terminal(p) {
            Some(self.machine.goal(p, self.role).unwrap_or(0) as f64 / 100.0)
        } else {
            None
        }
    }
}
