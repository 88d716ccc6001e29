//! Small graph algorithms shared by validation, the engines and analysis.

/// Strongly connected components of a directed graph with nodes `0..n`, by Tarjan's
/// algorithm (iterative, so deep graphs cannot overflow the stack). Components come out in
/// reverse topological order of the edges: a component is emitted after every component it
/// has an edge to. With edges pointing from a rule's head to its body's relations, that is
/// evaluation order (dependencies first).
pub fn sccs(n: usize, succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    sccs_by(n, |v, i| succ[v].get(i).copied())
}

/// [`sccs`] over successors given by `next(v, i)`: node `v`'s `i`-th successor, `None` past
/// the last (so a caller's own edge lists serve without a copy).
pub fn sccs_by(n: usize, next: impl Fn(usize, usize) -> Option<usize>) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    tarjan(n, next, |comp| out.push(comp.iter().rev().copied().collect()));
    out
}

/// [`sccs_by`] as each node's component id (ids in [`sccs`]' order) and the number of
/// components: no list per component (a graph of a million one-node components is one array).
pub fn scc_ids_by(n: usize, next: impl Fn(usize, usize) -> Option<usize>) -> (Vec<u32>, usize) {
    let mut id = vec![0u32; n];
    let mut count = 0usize;
    tarjan(n, next, |comp| {
        for &w in comp {
            id[w] = count as u32;
        }
        count += 1;
    });
    (id, count)
}

/// Tarjan's algorithm (iterative): `emit` gets each component (in the order its nodes were
/// pushed on Tarjan's stack) after every component it has an edge to.
fn tarjan(n: usize, next: impl Fn(usize, usize) -> Option<usize>, mut emit: impl FnMut(&[usize])) {
    const UNSEEN: usize = usize::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut counter = 0;
    let mut call: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        call.push((root, 0));
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            if let Some(w) = next(v, *i) {
                *i += 1;
                if index[w] == UNSEEN {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let at = stack.iter().rposition(|&w| w == v).expect("tarjan stack");
                    for &w in &stack[at..] {
                        on_stack[w] = false;
                    }
                    emit(&stack[at..]);
                    stack.truncate(at);
                }
            }
        }
    }
}

/// A post-order of the nodes (ids below `n`) reachable from `root` (iterative depth-first
/// search): each node comes after all its successors. `Err(())` when a successor is still on
/// the search's path: the graph has a cycle.
#[allow(clippy::result_unit_err)]
pub fn post_order<'a>(n: usize, root: u32, succ: impl Fn(u32) -> &'a [u32]) -> Result<Vec<u32>, ()> {
    // 0: unseen, 1: on the path, 2: done.
    let mut mark = vec![0u8; n];
    let mut order = Vec::new();
    let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
    mark[root as usize] = 1;
    while let Some(top) = stack.last_mut() {
        let (v, k) = *top;
        let kids = succ(v);
        if k < kids.len() {
            top.1 += 1;
            let c = kids[k];
            match mark[c as usize] {
                0 => {
                    mark[c as usize] = 1;
                    stack.push((c, 0));
                }
                1 => return Err(()),
                _ => {}
            }
        } else {
            mark[v as usize] = 2;
            order.push(v);
            stack.pop();
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::{post_order, sccs};

    #[test]
    fn post_order_puts_successors_first_and_finds_cycles() {
        let g: Vec<Vec<u32>> = vec![vec![1, 2], vec![2], vec![]];
        assert_eq!(post_order(3, 0, |v| &g[v as usize]), Ok(vec![2, 1, 0]));
        let cyclic: Vec<Vec<u32>> = vec![vec![1], vec![0]];
        assert_eq!(post_order(2, 0, |v| &cyclic[v as usize]), Err(()));
    }

    #[test]
    fn finds_cycles_in_dependency_order() {
        // 0 -> 1 -> 2 -> 1, 2 -> 3
        let g = vec![vec![1], vec![2], vec![1, 3], vec![]];
        let c = sccs(4, &g);
        assert_eq!(c.len(), 3);
        assert_eq!(c[0], vec![3]);
        let mut mid = c[1].clone();
        mid.sort();
        assert_eq!(mid, vec![1, 2]);
        assert_eq!(c[2], vec![0]);
    }
}
