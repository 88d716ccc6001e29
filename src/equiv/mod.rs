//! Agency equivalence of games (issue 18, item 2; `../shared/papers/game-systems-agency-equivalence.txt`).
//!
//! A GDL game is a complete game system without chance (Definition 1); its game tree
//! (Definition 2, Algorithm 2) is the unfolding of its reachable state graph, so every state
//! has one subtree and the subtrees are computed once per state. Each state gets a canonical
//! [`Form`] of its subtree *after the reductions* of Definition 3, interned so that two
//! subtrees are equivalent up to relabeling (Definition 11) exactly when their ids are equal:
//!
//! - a terminal node is its outcome (a goal vector, or its image under an outcome bijection,
//!   Definition 7);
//! - a node where every role has one move is a *bookkeeping* node (Definition 12, case 1, no
//!   chance in GDL): it is its only child;
//! - a node where one role chooses is that role and the *set* of its children's forms: sibling
//!   subtrees equivalent up to relabeling merge (symmetry-redundant subtrees, Definition 14),
//!   and choices that lead to one merged edge are redundant (Definition 15); a child that is
//!   the same role's choice is flattened into it (single-player deterministic subtrees,
//!   Definition 13: the decisions could be made at once); one distinct child left makes it a
//!   bookkeeping node again;
//! - a node where several roles choose at once is its decision matrix (Definition 8) with
//!   duplicate rows and columns removed (Definition 15), canonical up to permutations of each
//!   role's choices (Definition 9: decision labels may be relabeled per node), its roles under
//!   one global correspondence π (Definition 10).
//!
//! Two games are agency equivalent when their roots' forms are equal under some role
//! correspondence π and outcome bijection o; with o the identity after π, the games are
//! equivalent with identical outcomes. The *distance* between two games is the Jaccard
//! distance between the sets of forms in their reduced trees (0 exactly when equivalent).

use crate::machine::explore::{JointMoves, StateIndex};
use crate::machine::StateMachine;
use rustc_hash::{FxHashMap, FxHashSet};
use std::time::Instant;

#[cfg(test)]
mod tests;

/// Bounds of one exploration.
#[derive(Clone, Debug)]
pub struct EquivOptions {
    pub max_states: usize,
    pub deadline: Option<Instant>,
}

impl Default for EquivOptions {
    fn default() -> Self {
        EquivOptions { max_states: 200_000, deadline: None }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EquivError {
    #[error("more than {0} states: too large to compare within the bound")]
    TooLarge(usize),
    #[error("the state graph has a cycle: the game can go on forever, so its game tree is infinite")]
    Cycle,
    #[error("role {role} has no legal move in a state that is not terminal")]
    NoMoves { role: String },
    #[error("the reasoner hit a resource limit, so its answers may be incomplete")]
    Overflow,
    #[error("out of time")]
    Timeout,
}

/// One state of a game's graph.
#[derive(Clone, Debug)]
pub struct GNode {
    /// Every role's goal, for a terminal state.
    pub goals: Option<Vec<Option<u32>>>,
    /// Each role's legal moves (ids into [`GameGraph::texts`]).
    pub moves: Vec<Vec<u32>>,
    /// Successors by joint move, the last role's move varying fastest.
    pub children: Vec<u32>,
}

/// A game's reachable states, engine-independent: node 0 the start.
pub struct GameGraph {
    pub roles: Vec<String>,
    pub nodes: Vec<GNode>,
    /// Move texts (canonical spelling).
    pub texts: Vec<String>,
    /// Children before parents.
    pub order: Vec<u32>,
}

impl GameGraph {
    /// Explores the game of `m` from its initial state, breadth first.
    pub fn explore<M: StateMachine>(m: &mut M, opts: &EquivOptions) -> Result<GameGraph, EquivError> {
        let roles = m.roles().to_vec();
        let n = roles.len();
        let start = m.initial_state();
        let mut index = StateIndex::new(&start);
        let mut nodes = Vec::new();
        let mut text_id: FxHashMap<M::Move, u32> = FxHashMap::default();
        let mut texts = Vec::new();
        let mut joints = JointMoves::new(n);
        let mut next = start.clone();
        let mut at = 0;
        while at < index.len() {
            if at % 1024 == 0 && opts.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(EquivError::Timeout);
            }
            let s = index.state(at as u32).clone();
            at += 1;
            if m.is_terminal(&s) {
                let goals = (0..n).map(|r| m.goal(&s, r)).collect();
                nodes.push(GNode { goals: Some(goals), moves: vec![Vec::new(); n], children: Vec::new() });
                continue;
            }
            joints.load(m, &s).map_err(|r| EquivError::NoMoves { role: roles[r].clone() })?;
            let moves: Vec<Vec<u32>> = joints
                .legal()
                .iter()
                .map(|l| {
                    l.iter()
                        .map(|&mv| {
                            *text_id.entry(mv).or_insert_with(|| {
                                texts.push(crate::machine::canonical_move_text(&m.move_text(mv)));
                                texts.len() as u32 - 1
                            })
                        })
                        .collect()
                })
                .collect();
            // Children in the joints' order: the last role's move varies fastest.
            let mut children = Vec::with_capacity(joints.count());
            while let Some(joint) = joints.next_joint() {
                m.next_state(&s, joint, &mut next);
                let (id, _) = index.intern(&next, opts.max_states).ok_or(EquivError::TooLarge(opts.max_states))?;
                children.push(id);
            }
            if m.overflowed() {
                return Err(EquivError::Overflow);
            }
            nodes.push(GNode { goals: None, moves, children });
        }
        let order =
            crate::graph::post_order(nodes.len(), 0, |v| &nodes[v as usize].children).map_err(|_| EquivError::Cycle)?;
        Ok(GameGraph { roles, nodes, texts, order })
    }

    /// The joint move of child `k` of node `v`, as texts ("a | b" for several roles).
    pub fn joint_text(&self, v: u32, k: usize) -> String {
        let node = &self.nodes[v as usize];
        let mut rest = k;
        let mut picks = vec![0; node.moves.len()];
        for r in (0..node.moves.len()).rev() {
            picks[r] = rest % node.moves[r].len();
            rest /= node.moves[r].len();
        }
        let parts: Vec<&str> =
            picks.iter().enumerate().map(|(r, &i)| self.texts[node.moves[r][i] as usize].as_str()).collect();
        parts.join(" | ")
    }

    /// Distinct goal vectors of the terminal states, in order of first appearance.
    pub fn outcomes(&self) -> Vec<Vec<Option<u32>>> {
        let mut seen = FxHashSet::default();
        let mut out = Vec::new();
        for n in &self.nodes {
            if let Some(g) = &n.goals {
                if seen.insert(g.clone()) {
                    out.push(g.clone());
                }
            }
        }
        out
    }
}

/// The canonical form of a reduced subtree (module docs); children are form ids.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// A terminal node's outcome label.
    Outcome(u32),
    /// One role chooses among distinct subtrees (sorted ids, two or more).
    Choice { role: u32, children: Vec<u32> },
    /// Several roles choose at once: roles in label order, each one's number of (distinct)
    /// choices, and the cells, the last role's choice varying fastest, in the least order
    /// over permutations of each role's choices.
    Matrix { roles: Vec<u32>, dims: Vec<u32>, cells: Vec<u32> },
}

/// Interned forms, shared by the games compared (so their ids compare).
#[derive(Default)]
pub struct Forms {
    index: FxHashMap<Form, u32>,
    pub forms: Vec<Form>,
    /// Some matrix was too large to canonicalize by permutations: its form is a sorted
    /// invariant, so two different matrices may share it (equivalence then overstated).
    pub approximate: bool,
}

/// Rows (the smaller side of a two-role matrix) permuted at most this many: 7! orders.
const MAX_PERMUTED: usize = 7;

impl Forms {
    pub fn intern(&mut self, f: Form) -> u32 {
        if let Some(&id) = self.index.get(&f) {
            return id;
        }
        let id = self.forms.len() as u32;
        self.forms.push(f.clone());
        self.index.insert(f, id);
        id
    }

    /// A choice of role label `role` among `children` (form ids): flattened, merged, and
    /// collapsed to the lone child when one is left.
    fn choice(&mut self, role: u32, children: impl IntoIterator<Item = u32>) -> u32 {
        let mut set = Vec::new();
        for c in children {
            match &self.forms[c as usize] {
                Form::Choice { role: r, children } if *r == role => set.extend_from_slice(children),
                _ => set.push(c),
            }
        }
        set.sort_unstable();
        set.dedup();
        if set.len() == 1 {
            set[0]
        } else {
            self.intern(Form::Choice { role, children: set })
        }
    }

    /// A simultaneous node: `labels` the choosing roles' labels, `dims` their numbers of
    /// choices, `cells` the children's forms (the last role's choice fastest).
    fn matrix(&mut self, labels: &[u32], dims: &[usize], cells: &[u32]) -> u32 {
        let (mut dims, mut cells) = (dims.to_vec(), cells.to_vec());
        remove_redundant(&mut dims, &mut cells);
        let live: Vec<usize> = (0..dims.len()).filter(|&a| dims[a] > 1).collect();
        match live.len() {
            0 => cells[0],
            1 => {
                let role = labels[live[0]];
                self.choice(role, cells)
            }
            _ => {
                // Drop the axes of one choice (their index is always 0), order axes by label.
                let (cells, dims, labels) = drop_single_axes(&dims, &cells, labels);
                let (cells, dims, labels) = sort_axes(&dims, &cells, &labels);
                let cells = if dims.len() == 2 && dims[0].min(dims[1]) <= MAX_PERMUTED {
                    canonical_2d(&cells, dims[0], dims[1])
                } else {
                    self.approximate = true;
                    let mut c = cells;
                    c.sort_unstable();
                    c
                };
                self.intern(Form::Matrix { roles: labels, dims: dims.iter().map(|&d| d as u32).collect(), cells })
            }
        }
    }

    /// Every form reachable from `root` (itself included): the reduced tree's subtrees.
    pub fn reachable(&self, root: u32) -> FxHashSet<u32> {
        let mut seen = FxHashSet::default();
        let mut stack = vec![root];
        while let Some(f) = stack.pop() {
            if !seen.insert(f) {
                continue;
            }
            match &self.forms[f as usize] {
                Form::Outcome(_) => {}
                Form::Choice { children, .. } => stack.extend(children),
                Form::Matrix { cells, .. } => stack.extend(cells),
            }
        }
        seen
    }
}

/// The cell index of `picks` (one choice per axis, the last fastest).
fn cell_index(dims: &[usize], picks: &[usize]) -> usize {
    picks.iter().zip(dims).fold(0, |acc, (&p, &d)| acc * d + p)
}

/// Every choice vector of a matrix, in cell order.
fn all_picks(dims: &[usize]) -> Vec<Vec<usize>> {
    let total: usize = dims.iter().product();
    (0..total)
        .map(|mut k| {
            let mut p = vec![0; dims.len()];
            for a in (0..dims.len()).rev() {
                p[a] = k % dims[a];
                k /= dims[a];
            }
            p
        })
        .collect()
}

/// Definition 15: removes a role's choice whose slice equals another's, until none is left.
fn remove_redundant(dims: &mut Vec<usize>, cells: &mut Vec<u32>) {
    loop {
        let mut changed = false;
        for axis in 0..dims.len() {
            if dims[axis] < 2 {
                continue;
            }
            let picks = all_picks(dims);
            let slice = |c: usize| -> Vec<u32> {
                picks.iter().filter(|p| p[axis] == c).map(|p| cells[cell_index(dims, p)]).collect()
            };
            let slices: Vec<Vec<u32>> = (0..dims[axis]).map(slice).collect();
            let keep: Vec<usize> = (0..dims[axis]).filter(|&c| !slices[..c].contains(&slices[c])).collect();
            if keep.len() < dims[axis] {
                let mut nd = dims.clone();
                nd[axis] = keep.len();
                let new_cells = all_picks(&nd)
                    .iter()
                    .map(|p| {
                        let mut q = p.clone();
                        q[axis] = keep[p[axis]];
                        cells[cell_index(dims, &q)]
                    })
                    .collect();
                *dims = nd;
                *cells = new_cells;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

fn drop_single_axes(dims: &[usize], cells: &[u32], labels: &[u32]) -> (Vec<u32>, Vec<usize>, Vec<u32>) {
    let keep: Vec<usize> = (0..dims.len()).filter(|&a| dims[a] > 1).collect();
    // With single axes fixed at 0, the cell order over the kept axes is unchanged.
    (cells.to_vec(), keep.iter().map(|&a| dims[a]).collect(), keep.iter().map(|&a| labels[a]).collect())
}

/// Reorders the axes by role label (a transposition of the cells).
fn sort_axes(dims: &[usize], cells: &[u32], labels: &[u32]) -> (Vec<u32>, Vec<usize>, Vec<u32>) {
    let mut axes: Vec<usize> = (0..dims.len()).collect();
    axes.sort_by_key(|&a| labels[a]);
    let nd: Vec<usize> = axes.iter().map(|&a| dims[a]).collect();
    let cells = all_picks(&nd)
        .iter()
        .map(|p| {
            let mut q = vec![0; dims.len()];
            for (i, &a) in axes.iter().enumerate() {
                q[a] = p[i];
            }
            cells[cell_index(dims, &q)]
        })
        .collect();
    (cells, nd, axes.iter().map(|&a| labels[a]).collect())
}

/// The least cell sequence of a rows × cols matrix over permutations of its rows and of its
/// columns: every order of the smaller side, the other side sorted for it.
fn canonical_2d(cells: &[u32], rows: usize, cols: usize) -> Vec<u32> {
    // Work with the smaller side as "lines"; transpose back at the end so the cell order is
    // always row-major over (role 0 label, role 1 label).
    let transpose = cols < rows;
    let (lines, width) = if transpose { (cols, rows) } else { (rows, cols) };
    let at = |l: usize, w: usize| if transpose { cells[w * cols + l] } else { cells[l * cols + w] };
    let mut best: Option<Vec<u32>> = None;
    let mut perm: Vec<usize> = (0..lines).collect();
    permutations(&mut perm, 0, &mut |p| {
        // Columns (along `width`) as tuples over the lines in order p, sorted.
        let mut columns: Vec<Vec<u32>> = (0..width).map(|w| p.iter().map(|&l| at(l, w)).collect()).collect();
        columns.sort();
        // Back to row-major over (line, column).
        let mut out = vec![0; lines * width];
        for (w, col) in columns.iter().enumerate() {
            for (l, &v) in col.iter().enumerate() {
                let k = if transpose { w * lines + l } else { l * width + w };
                out[k] = v;
            }
        }
        if best.as_ref().is_none_or(|b| out < *b) {
            best = Some(out);
        }
    });
    best.expect("a permutation")
}

fn permutations(p: &mut Vec<usize>, k: usize, f: &mut impl FnMut(&[usize])) {
    if k == p.len() {
        f(p);
        return;
    }
    for i in k..p.len() {
        p.swap(k, i);
        permutations(p, k + 1, f);
        p.swap(k, i);
    }
}

/// The reduced form of every node of `g`: roles relabeled by `label` (role index → label),
/// terminal goal vectors by `outcome`.
pub fn canonize(g: &GameGraph, label: &[u32], outcome: &dyn Fn(&[Option<u32>]) -> u32, forms: &mut Forms) -> Vec<u32> {
    let mut canon = vec![u32::MAX; g.nodes.len()];
    for &v in &g.order {
        let node = &g.nodes[v as usize];
        canon[v as usize] = match &node.goals {
            Some(goals) => forms.intern(Form::Outcome(outcome(goals))),
            None => {
                let dims: Vec<usize> = node.moves.iter().map(Vec::len).collect();
                let choosers: Vec<usize> = (0..dims.len()).filter(|&r| dims[r] > 1).collect();
                let cells: Vec<u32> = node.children.iter().map(|&c| canon[c as usize]).collect();
                match choosers.len() {
                    0 => cells[0],
                    1 => forms.choice(label[choosers[0]], cells),
                    _ => {
                        let labels: Vec<u32> = choosers.iter().map(|&r| label[r]).collect();
                        let cdims: Vec<usize> = choosers.iter().map(|&r| dims[r]).collect();
                        forms.matrix(&labels, &cdims, &cells)
                    }
                }
            }
        };
    }
    canon
}

/// How B's roles and outcomes were matched to A's.
#[derive(Clone, Debug)]
pub struct Correspondence {
    /// For each role of B, the role of A it plays.
    pub roles: Vec<usize>,
    /// For each of B's outcomes (goal vectors, in B's order of [`GameGraph::outcomes`]), the
    /// outcome of A it is; identical outcomes when each equals its image after the roles'
    /// correspondence.
    pub outcomes: Vec<usize>,
    pub identical_outcomes: bool,
}

/// The comparison of two games.
pub struct Comparison {
    /// The correspondence under which the reduced trees are equal, if any.
    pub equivalent: Option<Correspondence>,
    /// Jaccard distance between the reduced trees' sets of forms, under the role
    /// correspondence (identical outcomes) that makes it least; 0 when equivalent.
    pub distance: f64,
    /// The role correspondence of `distance` (and of `difference`).
    pub nearest_roles: Vec<usize>,
    pub forms: Forms,
    /// Each node's form, per game, under `equivalent` (or `nearest_roles`).
    pub canon_a: Vec<u32>,
    pub canon_b: Vec<u32>,
    /// Correspondences tried.
    pub tried: usize,
}

/// Most outcome bijections tried (5! = 120), beyond identical outcomes.
const MAX_OUTCOME_PERMUTATIONS: usize = 5;

/// Compares two explored games.
pub fn compare(a: &GameGraph, b: &GameGraph) -> Comparison {
    let mut forms = Forms::default();
    let outcomes_a = a.outcomes();
    let index_a: FxHashMap<Vec<Option<u32>>, u32> =
        outcomes_a.iter().enumerate().map(|(i, o)| (o.clone(), i as u32)).collect();
    let label_a: Vec<u32> = (0..a.roles.len() as u32).collect();
    let canon_a = canonize(a, &label_a, &|g| index_a[g], &mut forms);
    let root_a = canon_a[0];
    let outcomes_b = b.outcomes();
    let mut tried = 0;
    let mut best: Option<(f64, Vec<usize>, Vec<u32>)> = None;
    let set_a = forms.reachable(root_a);
    let mut found = None;
    if a.roles.len() == b.roles.len() {
        let mut perms = Vec::new();
        let mut p: Vec<usize> = (0..b.roles.len()).collect();
        permutations(&mut p, 0, &mut |q| perms.push(q.to_vec()));
        // Identical outcomes first, under each role correspondence.
        for roles in &perms {
            tried += 1;
            let label: Vec<u32> = roles.iter().map(|&r| r as u32).collect();
            let unmatched = outcomes_a.len() as u32;
            let to_a = |g: &[Option<u32>]| {
                let mut v = vec![None; g.len()];
                for (rb, &ra) in roles.iter().enumerate() {
                    v[ra] = g[rb];
                }
                index_a.get(&v).copied().unwrap_or(unmatched + b_outcome(&outcomes_b, g))
            };
            let canon_b = canonize(b, &label, &to_a, &mut forms);
            let root_b = canon_b[0];
            let set_b = forms.reachable(root_b);
            let d = jaccard(&set_a, &set_b);
            if best.as_ref().is_none_or(|(bd, _, _)| d < *bd) {
                best = Some((d, roles.clone(), canon_b.clone()));
            }
            if root_b == root_a {
                let outcomes = outcomes_b.iter().map(|g| to_a(g) as usize).collect();
                found = Some((Correspondence { roles: roles.clone(), outcomes, identical_outcomes: true }, canon_b));
                break;
            }
        }
        // Then outcome bijections, when the numbers of outcomes agree.
        if found.is_none() && outcomes_a.len() == outcomes_b.len() && outcomes_b.len() <= MAX_OUTCOME_PERMUTATIONS {
            let mut op: Vec<usize> = (0..outcomes_b.len()).collect();
            let mut bijections = Vec::new();
            permutations(&mut op, 0, &mut |q| bijections.push(q.to_vec()));
            'outer: for roles in &perms {
                let label: Vec<u32> = roles.iter().map(|&r| r as u32).collect();
                for o in &bijections {
                    tried += 1;
                    let to_a = |g: &[Option<u32>]| o[b_outcome(&outcomes_b, g) as usize] as u32;
                    let canon_b = canonize(b, &label, &to_a, &mut forms);
                    if canon_b[0] == root_a {
                        let c = Correspondence { roles: roles.clone(), outcomes: o.clone(), identical_outcomes: false };
                        found = Some((c, canon_b));
                        break 'outer;
                    }
                }
            }
        }
    }
    match found {
        Some((c, canon_b)) => Comparison {
            nearest_roles: c.roles.clone(),
            equivalent: Some(c),
            distance: 0.0,
            forms,
            canon_a,
            canon_b,
            tried,
        },
        None => {
            let (distance, nearest_roles, canon_b) = best.unwrap_or((1.0, Vec::new(), vec![u32::MAX; b.nodes.len()]));
            Comparison { equivalent: None, distance, nearest_roles, forms, canon_a, canon_b, tried }
        }
    }
}

/// The index of goal vector `g` among B's outcomes.
fn b_outcome(outcomes: &[Vec<Option<u32>>], g: &[Option<u32>]) -> u32 {
    outcomes.iter().position(|o| o == g).expect("an outcome of the game") as u32
}

fn jaccard(a: &FxHashSet<u32>, b: &FxHashSet<u32>) -> f64 {
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        1.0 - inter as f64 / union as f64
    }
}

/// The first move sequences from node `v` (at most `max`, each at most `depth` joint moves)
/// that reach a node whose form is `target`, and the node reached.
pub fn paths_to(
    g: &GameGraph,
    canon: &[u32],
    v: u32,
    target: u32,
    depth: usize,
    max: usize,
) -> Vec<(Vec<String>, u32)> {
    let mut w = PathWalk { g, canon, target, max, path: Vec::new(), out: Vec::new() };
    w.walk(v, depth);
    w.out
}

/// The state of [`paths_to`]'s depth-first walk.
struct PathWalk<'a> {
    g: &'a GameGraph,
    canon: &'a [u32],
    target: u32,
    max: usize,
    path: Vec<String>,
    out: Vec<(Vec<String>, u32)>,
}

impl PathWalk<'_> {
    fn walk(&mut self, v: u32, depth: usize) {
        for (k, &c) in self.g.nodes[v as usize].children.iter().enumerate() {
            if self.out.len() >= self.max {
                return;
            }
            self.path.push(self.g.joint_text(v, k));
            if self.canon[c as usize] == self.target {
                self.out.push((self.path.clone(), c));
            } else if depth > 1 {
                self.walk(c, depth - 1);
            }
            self.path.pop();
        }
    }
}

/// Where two games first differ, found by descending from the starts.
#[derive(Clone, Debug)]
pub struct Difference {
    /// Joint moves from A's start and from B's.
    pub path_a: Vec<String>,
    pub path_b: Vec<String>,
    pub what: String,
}

/// Descends from the starts while one differing child can be followed: first along moves
/// with the same text in both games (variants of one game), then along the one subtree each
/// game has that the other lacks; stops where the nodes themselves differ.
pub fn first_difference(a: &GameGraph, b: &GameGraph, cmp: &Comparison) -> Option<Difference> {
    if cmp.equivalent.is_some() {
        return None;
    }
    let (ca, cb, forms) = (&cmp.canon_a, &cmp.canon_b, &cmp.forms);
    let (mut va, mut vb) = (0u32, 0u32);
    let (mut path_a, mut path_b) = (Vec::new(), Vec::new());
    for _ in 0..1000 {
        let (fa, fb) = (&forms.forms[ca[va as usize] as usize], &forms.forms[cb[vb as usize] as usize]);
        let describe = |f: &Form| describe(f, a);
        // Along moves of the same text whose subtrees differ.
        let mut next = None;
        if !a.nodes[va as usize].children.is_empty() && !b.nodes[vb as usize].children.is_empty() {
            let texts_b: FxHashMap<String, usize> =
                (0..b.nodes[vb as usize].children.len()).map(|k| (b.joint_text(vb, k), k)).collect();
            for (k, &c) in a.nodes[va as usize].children.iter().enumerate() {
                let t = a.joint_text(va, k);
                if let Some(&kb) = texts_b.get(&t) {
                    let cb_node = b.nodes[vb as usize].children[kb];
                    if ca[c as usize] != cb[cb_node as usize] {
                        next = Some((vec![t.clone()], c, vec![t], cb_node));
                        break;
                    }
                }
            }
        }
        if next.is_none() {
            if let (Form::Choice { role: ra, children: xa }, Form::Choice { role: rb, children: xb }) = (fa, fb) {
                let only_a: Vec<u32> = xa.iter().copied().filter(|x| !xb.contains(x)).collect();
                let only_b: Vec<u32> = xb.iter().copied().filter(|x| !xa.contains(x)).collect();
                if ra == rb && only_a.len() == 1 && only_b.len() == 1 {
                    let pa = paths_to(a, ca, va, only_a[0], 8, 1);
                    let pb = paths_to(b, cb, vb, only_b[0], 8, 1);
                    if let (Some((ma, na)), Some((mb, nb))) = (pa.into_iter().next(), pb.into_iter().next()) {
                        next = Some((ma, na, mb, nb));
                    }
                }
            }
        }
        match next {
            Some((ma, na, mb, nb)) => {
                path_a.extend(ma);
                path_b.extend(mb);
                va = na;
                vb = nb;
            }
            None => {
                let what = match (fa, fb) {
                    (Form::Choice { role: ra, children: xa }, Form::Choice { role: rb, children: xb }) if ra == rb => {
                        let only_a = xa.iter().filter(|x| !xb.contains(x)).count();
                        let only_b = xb.iter().filter(|x| !xa.contains(x)).count();
                        format!(
                            "{} chooses among {} distinct continuations in A and {} in B; {} of A's have no equivalent in B, {} of B's none in A",
                            a.roles[*ra as usize],
                            xa.len(),
                            xb.len(),
                            only_a,
                            only_b
                        )
                    }
                    _ => format!("A: {}; B: {}", describe(fa), describe(fb)),
                };
                return Some(Difference { path_a, path_b, what });
            }
        }
    }
    None
}

/// A form in words, with A's role names.
pub fn describe(f: &Form, a: &GameGraph) -> String {
    match f {
        Form::Outcome(o) => match a.outcomes().get(*o as usize) {
            Some(g) => format!(
                "the game is over with goals {}",
                g.iter().map(|x| x.map_or("-".to_string(), |v| v.to_string())).collect::<Vec<_>>().join(" ")
            ),
            None => "the game is over with an outcome A never has".to_string(),
        },
        Form::Choice { role, children } => {
            format!("{} chooses among {} distinct continuations", a.roles[*role as usize], children.len())
        }
        Form::Matrix { roles, dims, .. } => format!(
            "{} choose at once ({} distinct choices)",
            roles.iter().map(|&r| a.roles[r as usize].as_str()).collect::<Vec<_>>().join(" and "),
            dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" × ")
        ),
    }
}
