//! Ordered tree-edit distance (Zhang and Shasha 1989) on canonically ordered local trees.
//!
//! Edit distance on unordered trees is NP-hard, so (as the paper does) the children of every
//! node are first put in a canonical order, and the ordered distance is computed with unit
//! costs (delete 1, insert 1, relabel 1 when the moves differ).
//!
//! **Canonical order.** Children are sorted by the key `(keys of their own children in
//! canonical order, their move)`, compared lexicographically: what follows a move comes
//! before the move's name. The order is a function of the subtree alone (invariant under any
//! permutation of children), and it lines up moves by what they lead to rather than by how
//! they are spelt, which is what an edit distance over positions should compare. It is the
//! order under which the two trees of the paper's Figure 1 are at distance 6.

use super::tree::{Labels, Sub, ROOT};
use std::cmp::Ordering;
use std::collections::HashMap;

const OPEN: u32 = u32::MAX - 1;
const CLOSE: u32 = u32::MAX - 2;

/// A tree in postorder: each node's label rank and leftmost leaf.
struct Post {
    label: Vec<u32>,
    leftmost: Vec<usize>,
}

/// The largest table (nodes × nodes) the distance is computed for: 16 M cells, 64 MB.
pub const MAX_CELLS: usize = 16 << 20;

/// The ordered tree-edit distance between two subtrees in canonical order, or `None` when
/// the table would pass [`MAX_CELLS`].
pub fn edit_distance(a: Sub, b: Sub, labels: &Labels) -> Option<usize> {
    let (na, nb) = (a.moves() + 1, b.moves() + 1);
    if na.saturating_mul(nb) > MAX_CELLS {
        return None;
    }
    // Label ranks by text, so that the order does not depend on interning order.
    let mut used: Vec<u32> = Vec::new();
    for s in [a, b] {
        s.for_each_below(|v, _| used.push(s.tree.label(v)));
    }
    used.sort_unstable();
    used.dedup();
    used.sort_by(|&x, &y| labels.text(x).cmp(labels.text(y)));
    let ranks: HashMap<u32, u32> = used.iter().enumerate().map(|(r, &l)| (l, r as u32)).collect();
    let pa = postorder(a, &ranks);
    let pb = postorder(b, &ranks);
    Some(zhang_shasha(&pa, &pb))
}

/// A node's canonical key and its postorder (children first, canonically ordered).
fn canonical(s: Sub, node: u32, depth: u32, ranks: &HashMap<u32, u32>) -> (Vec<u32>, Vec<(u32, usize)>) {
    let label = s.tree.label(node);
    let rank = if label == ROOT { ROOT } else { ranks[&label] };
    let mut kids: Vec<(Vec<u32>, Vec<(u32, usize)>)> = if depth == 0 {
        Vec::new()
    } else {
        s.tree.children(node).map(|c| canonical(s, c, depth - 1, ranks)).collect()
    };
    kids.sort_by(|x, y| cmp_keys(&x.0, &y.0));
    let mut key = vec![OPEN];
    let mut post: Vec<(u32, usize)> = Vec::new();
    for (k, p) in kids {
        key.extend_from_slice(&k);
        // Children's postorders are concatenated; leftmost leaves shift by the offset.
        let off = post.len();
        post.extend(p.into_iter().map(|(l, lm)| (l, lm + off)));
    }
    key.push(CLOSE);
    key.push(rank);
    // In the subtree's own numbering its leftmost leaf is its first node.
    post.push((rank, 0));
    (key, post)
}

fn cmp_keys(a: &[u32], b: &[u32]) -> Ordering {
    a.cmp(b)
}

fn postorder(s: Sub, ranks: &HashMap<u32, u32>) -> Post {
    let (_, post) = canonical(s, s.node, s.depth, ranks);
    Post { label: post.iter().map(|p| p.0).collect(), leftmost: post.iter().map(|p| p.1).collect() }
}

/// Zhang and Shasha's dynamic programme over keyroots, unit costs.
fn zhang_shasha(a: &Post, b: &Post) -> usize {
    let (n, m) = (a.label.len(), b.label.len());
    let keyroots = |p: &Post| -> Vec<usize> {
        let len = p.label.len();
        let mut seen = vec![false; len];
        let mut kr = Vec::new();
        for i in (0..len).rev() {
            if !seen[p.leftmost[i]] {
                seen[p.leftmost[i]] = true;
                kr.push(i);
            }
        }
        kr.reverse();
        kr
    };
    let (ka, kb) = (keyroots(a), keyroots(b));
    let mut td = vec![0u32; n * m];
    // A single node against a subtree T costs |T| − 1 if T holds its label (map it there,
    // insert the rest), else |T|: the rows and columns of keyroots that are leaves are
    // filled directly, and the dynamic programme runs only over pairs of inner keyroots.
    // In shallow, wide game trees almost every keyroot is a leaf.
    let leaf_lines = |x: &Post, leaves: &[usize], y: &Post, td: &mut [u32], x_is_a: bool| {
        let (nx, ny) = (x.label.len(), y.label.len());
        let mut counts = vec![0u32; ny + 1];
        let mut by_label: HashMap<u32, Vec<u32>> = HashMap::new();
        for &i in leaves {
            let label = x.label[i];
            let line = by_label.entry(label).or_insert_with(|| {
                // counts[k] = nodes of y before k with this label.
                for k in 0..ny {
                    counts[k + 1] = counts[k] + u32::from(y.label[k] == label);
                }
                (0..ny)
                    .map(|j1| {
                        let size = (j1 - y.leftmost[j1] + 1) as u32;
                        size - u32::from(counts[j1 + 1] > counts[y.leftmost[j1]])
                    })
                    .collect()
            });
            for (j1, &v) in line.iter().enumerate() {
                if x_is_a {
                    td[i * ny + j1] = v;
                } else {
                    td[j1 * nx + i] = v;
                }
            }
        }
    };
    let (leaves_a, ka): (Vec<usize>, Vec<usize>) = ka.into_iter().partition(|&i| a.leftmost[i] == i);
    let (leaves_b, kb): (Vec<usize>, Vec<usize>) = kb.into_iter().partition(|&j| b.leftmost[j] == j);
    leaf_lines(a, &leaves_a, b, &mut td, true);
    leaf_lines(b, &leaves_b, a, &mut td, false);
    let mut fd: Vec<u32> = Vec::new();
    for &i in &ka {
        for &j in &kb {
            let (li, lj) = (a.leftmost[i], b.leftmost[j]);
            let (rows, cols) = (i - li + 2, j - lj + 2);
            fd.clear();
            fd.resize(rows * cols, 0);
            for x in 1..rows {
                fd[x * cols] = fd[(x - 1) * cols] + 1;
            }
            for y in 1..cols {
                fd[y] = fd[y - 1] + 1;
            }
            for x in 1..rows {
                let i1 = li + x - 1;
                for y in 1..cols {
                    let j1 = lj + y - 1;
                    let del = fd[(x - 1) * cols + y] + 1;
                    let ins = fd[x * cols + y - 1] + 1;
                    if a.leftmost[i1] == li && b.leftmost[j1] == lj {
                        let sub = fd[(x - 1) * cols + y - 1] + u32::from(a.label[i1] != b.label[j1]);
                        let v = del.min(ins).min(sub);
                        fd[x * cols + y] = v;
                        td[i1 * m + j1] = v;
                    } else {
                        let (p, q) = (a.leftmost[i1] - li, b.leftmost[j1] - lj);
                        let v = del.min(ins).min(fd[p * cols + q] + td[i1 * m + j1]);
                        fd[x * cols + y] = v;
                    }
                }
            }
        }
    }
    td[(n - 1) * m + (m - 1)] as usize
}
