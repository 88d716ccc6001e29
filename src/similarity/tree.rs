//! Local game trees: a position expanded to a fixed depth, with interned move labels.

use super::Positions;
use std::collections::HashMap;

/// Interned move labels, shared by every tree that is compared with another so that one move
/// text has one id everywhere.
#[derive(Debug, Default, Clone)]
pub struct Labels {
    ids: HashMap<String, u32>,
    texts: Vec<String>,
}

impl Labels {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = self.texts.len() as u32;
        self.ids.insert(text.to_string(), id);
        self.texts.push(text.to_string());
        id
    }

    pub fn text(&self, id: u32) -> &str {
        &self.texts[id as usize]
    }

    pub fn get(&self, text: &str) -> Option<u32> {
        self.ids.get(text).copied()
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

/// The label of a tree's root, which stands for the position itself and carries no move.
pub const ROOT: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Node {
    label: u32,
    depth: u32,
    /// Children are contiguous (the tree is built breadth first): `first..first + count`.
    first: u32,
    count: u32,
    /// The view role's reward in [0, 1] where the position is terminal.
    reward: Option<f64>,
}

/// A position's local game tree to depth `depth` (the paper's T_i with its continuations):
/// node 0 is the position, every other node is a move (its label) and the position it leads
/// to. Terminal positions have no children and carry their reward.
#[derive(Debug, Clone)]
pub struct LocalTree {
    nodes: Vec<Node>,
    depth: u32,
}

impl LocalTree {
    /// Expands `pos` breadth first to `depth` plies.
    pub fn expand<G: Positions>(game: &mut G, pos: &G::Pos, depth: u32, labels: &mut Labels) -> LocalTree {
        let mut nodes = vec![Node { label: ROOT, depth: 0, first: 0, count: 0, reward: game.reward(pos) }];
        let mut frontier: Vec<G::Pos> = vec![pos.clone()];
        let mut i = 0;
        while i < nodes.len() {
            let pos = frontier[i].clone();
            if nodes[i].depth < depth && nodes[i].reward.is_none() {
                let kids = game.children(&pos);
                nodes[i].first = nodes.len() as u32;
                nodes[i].count = kids.len() as u32;
                let d = nodes[i].depth + 1;
                for (text, child) in kids {
                    let reward = game.reward(&child);
                    nodes.push(Node { label: labels.intern(&text), depth: d, first: 0, count: 0, reward });
                    frontier.push(child);
                }
            }
            i += 1;
        }
        LocalTree { nodes, depth }
    }

    /// Builds a tree from nested `(label, children)` lists under an unlabelled root (test
    /// data and hand-made examples). Leaves are taken as not terminal.
    pub fn from_nested(kids: &[Nested], labels: &mut Labels) -> LocalTree {
        let mut nodes = vec![Node { label: ROOT, depth: 0, first: 0, count: 0, reward: None }];
        let mut queue: Vec<&[Nested]> = vec![kids];
        let mut i = 0;
        let mut depth = 0;
        while i < nodes.len() {
            let kids = queue[i];
            nodes[i].first = nodes.len() as u32;
            nodes[i].count = kids.len() as u32;
            let d = nodes[i].depth + 1;
            for k in kids {
                depth = depth.max(d);
                nodes.push(Node { label: labels.intern(&k.0), depth: d, first: 0, count: 0, reward: None });
                queue.push(&k.1);
            }
            i += 1;
        }
        LocalTree { nodes, depth }
    }

    /// The depth the tree was expanded to.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Nodes, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn root(&self) -> Sub<'_> {
        Sub { tree: self, node: 0, depth: self.depth }
    }

    /// Whether a node is terminal (it carries a reward).
    pub fn reward(&self, node: u32) -> Option<f64> {
        self.nodes[node as usize].reward
    }

    pub fn label(&self, node: u32) -> u32 {
        self.nodes[node as usize].label
    }

    pub fn children(&self, node: u32) -> std::ops::Range<u32> {
        let n = &self.nodes[node as usize];
        n.first..n.first + n.count
    }
}

/// A nested tree literal: a move label and the moves that follow it.
#[derive(Debug, Clone)]
pub struct Nested(pub String, pub Vec<Nested>);

/// Shorthand for [`Nested`]: `n("a", vec![n("c", vec![])])`.
pub fn n(label: &str, kids: Vec<Nested>) -> Nested {
    Nested(label.to_string(), kids)
}

/// A subtree of a [`LocalTree`]: the position at `node`, seen to `depth` further plies.
#[derive(Debug, Clone, Copy)]
pub struct Sub<'t> {
    pub tree: &'t LocalTree,
    pub node: u32,
    pub depth: u32,
}

impl<'t> Sub<'t> {
    /// The same position seen to another depth.
    pub fn to_depth(self, depth: u32) -> Sub<'t> {
        Sub { depth, ..self }
    }

    /// The children, each seen to one ply less.
    pub fn children(self) -> impl Iterator<Item = Sub<'t>> {
        let depth = self.depth.saturating_sub(1);
        let range = if self.depth == 0 { 0..0 } else { self.tree.children(self.node) };
        range.map(move |node| Sub { tree: self.tree, node, depth })
    }

    pub fn child_count(self) -> usize {
        if self.depth == 0 {
            0
        } else {
            self.tree.children(self.node).len()
        }
    }

    pub fn label(self) -> u32 {
        self.tree.label(self.node)
    }

    pub fn reward(self) -> Option<f64> {
        self.tree.reward(self.node)
    }

    /// Calls `f(node, depth below self)` for every node below `self` (not `self`) in
    /// breadth-first order, down to `self.depth`.
    pub fn for_each_below(self, mut f: impl FnMut(u32, u32)) {
        let mut layer = vec![self.node];
        for d in 1..=self.depth {
            let mut next = Vec::new();
            for &v in &layer {
                for c in self.tree.children(v) {
                    f(c, d);
                    next.push(c);
                }
            }
            if next.is_empty() {
                break;
            }
            layer = next;
        }
    }

    /// Moves in the subtree (its nodes but the root): the |T| of the tree-edit similarity.
    pub fn moves(self) -> usize {
        let mut k = 0;
        self.for_each_below(|_, _| k += 1);
        k
    }
}
