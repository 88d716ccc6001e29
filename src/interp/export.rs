//! Whole-relation access for the grounder: evaluate every static component of a game and
//! read a relation's tuples. The grounder runs the interpreter on a relaxed copy of a game
//! (no `true`, no `does`, no negation), where every relation is static.

use super::{Interpreter, Phase, TermId, TermStore};
use crate::gdl::Sym;
use std::sync::Arc;

impl Interpreter {
    /// Evaluates every static component, in dependency order. Returns false if evaluation
    /// overflowed the memory guard (results are then incomplete).
    pub fn eval_static(&mut self) -> bool {
        let plan = Arc::clone(&self.plan);
        for c in 0..plan.comps.len() {
            if plan.comps[c].phase == Phase::Static && !self.computed[c] {
                let t = std::time::Instant::now();
                tracing::trace!(rels = ?plan.comps[c].rels.iter().map(|&r| self.symbols.name(plan.rel_names[r].0)).collect::<Vec<_>>(), "evaluating");
                self.eval_component(c);
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                if ms > 100.0 {
                    let names: Vec<&str> =
                        plan.comps[c].rels.iter().map(|&r| self.symbols.name(plan.rel_names[r].0)).collect();
                    tracing::debug!(relations = ?names, ms, "slow static component");
                }
                self.computed[c] = true;
                if self.overflowed() {
                    return false;
                }
            }
        }
        true
    }

    /// Calls `f` on every tuple of relation `rel/arity` computed so far. Errors if the
    /// relation is evaluated on demand (so never listed) and has rules.
    pub fn for_each_tuple(&self, rel: Sym, arity: usize, mut f: impl FnMut(&[TermId])) -> Result<(), String> {
        let Some(id) = self.plan.rel_names.iter().position(|&k| k == (rel, arity)) else { return Ok(()) };
        if self.db.modes.iter().any(|m| m.rel == id) {
            return Err(format!("relation {}/{arity} is evaluated top-down, not listed", self.symbols.name(rel)));
        }
        let r = &self.db.rels[id];
        for i in 0..r.len {
            f(r.tuple(i));
        }
        Ok(())
    }

    /// The term store, to build further terms over the same ids.
    pub fn into_terms(self) -> TermStore {
        self.db.terms
    }
}
