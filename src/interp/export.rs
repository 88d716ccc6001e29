//! Whole-relation access for the grounder: evaluate every static component of a game and
//! read a relation's tuples. The grounder runs the interpreter on a relaxed copy of a game
//! (no `true`, no `does`, no negation), where every relation is static.

use super::compile::{Compiler, Lit, RelId, Stats};
use super::{Interpreter, Phase, TermId, TermStore};
use crate::gdl::Sym;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

impl Interpreter {
    /// Evaluates every static component, in dependency order. Returns false if evaluation
    /// overflowed the memory guard (results are then incomplete).
    pub fn eval_static(&mut self) -> bool {
        self.eval_static_limited(&[], usize::MAX).unwrap_or(false)
    }

    /// [`Interpreter::eval_static`], stopping with `Err(total)` as soon as the relations
    /// `watch` hold more than `limit` tuples together (checked after each component).
    pub fn eval_static_limited(&mut self, watch: &[(Sym, usize)], limit: usize) -> Result<bool, usize> {
        // No clone of the plan is held across the loop: `replan` changes it in place
        // (`Arc::make_mut` would copy the whole plan once per component).
        let watched: Vec<usize> =
            watch.iter().filter_map(|k| self.plan.rel_names.iter().position(|r| r == k)).collect();
        for c in 0..self.plan.comps.len() {
            if self.plan.comps[c].phase == Phase::Static && !self.computed[c] {
                let t = std::time::Instant::now();
                // Joins look at the deadline as they go; planning does not, so it is looked
                // at per component too (many small components add up).
                if self.db.deadline.is_some_and(|d| t >= d) {
                    self.db.timed_out = true;
                    return Ok(false);
                }
                let plan = &self.plan;
                tracing::trace!(rels = ?plan.comps[c].rels.iter().map(|&r| self.symbols.name(plan.rel_names[r].0)).collect::<Vec<_>>(), "evaluating");
                // A component whose rules have one body literal at most (facts) has no join
                // to order: replanning it costs a map and a list of every relation, so a game
                // of many fact relations went quadratic (100k facts: minutes).
                let comp = &plan.comps[c];
                let joins = comp.rules.iter().chain(&comp.delta_rules).any(|&ri| plan.rules[ri].body.len() > 1);
                if self.replan && joins {
                    self.replan(c);
                }
                let plan = Arc::clone(&self.plan);
                self.eval_component(c);
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                if ms > 100.0 {
                    let names: Vec<&str> =
                        plan.comps[c].rels.iter().map(|&r| self.symbols.name(plan.rel_names[r].0)).collect();
                    tracing::debug!(relations = ?names, ms, "slow static component");
                }
                self.computed[c] = true;
                if self.overflowed() {
                    return Ok(false);
                }
                if !watched.is_empty() && plan.comps[c].rels.iter().any(|r| watched.contains(r)) {
                    let total: usize = watched.iter().map(|&r| self.db.rels[r].len as usize).sum();
                    if total > limit {
                        return Err(total);
                    }
                }
            }
        }
        Ok(true)
    }

    /// Has the joins planned from now on start with a literal of one of these relations
    /// when they have one (the grounder's demand relations: they bind the head).
    pub fn lead_with(&mut self, rels: impl IntoIterator<Item = (Sym, usize)>) {
        self.lead.extend(rels);
    }

    /// Compiles the rules of component `c` again, ordering their joins by the sizes and
    /// argument domains of the relations they read (those of earlier components are final
    /// by now). Built with a default guess of every size, a plan can be very wrong: a join
    /// that starts from a large relation when a small one would bind the same variables.
    fn replan(&mut self, c: usize) {
        let plan = Arc::make_mut(&mut self.plan);
        let comp = &plan.comps[c];
        self.rel_stats.resize(plan.rel_names.len(), None);
        let mut stats = Stats::default();
        for &ri in comp.rules.iter().chain(&comp.delta_rules) {
            for l in plan.rules[ri].body.iter() {
                let (Lit::Pos { rel, .. } | Lit::Neg { rel, .. }) = l else { continue };
                if comp.rels.contains(rel) {
                    continue;
                }
                let st = self.rel_stats[*rel].get_or_insert_with(|| {
                    let r = &self.db.rels[*rel];
                    (r.len as f64, r.distinct_counts().into_iter().map(f64::from).collect())
                });
                stats.rels.insert(plan.rel_names[*rel], st.clone());
            }
        }
        let mut rel_ids: FxHashMap<(Sym, usize), RelId> =
            plan.rel_names.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let moded = FxHashSet::default();
        let mut compiler = Compiler {
            terms: &mut self.db.terms,
            rels: &mut self.db.rels,
            rel_ids: &mut rel_ids,
            rel_keys: plan.rel_names.clone(),
            symbols: &self.symbols,
            moded: &moded,
            modes: Vec::new(),
            mode_ids: FxHashMap::default(),
            stats: &stats,
            lead: &self.lead,
            multi_index: true,
        };
        for &ri in comp.rules.iter().chain(&comp.delta_rules) {
            let (fi, delta) = plan.rule_src[ri];
            let fr = &plan.flats[fi];
            let cr = match delta {
                None => compiler.rule(fr, None),
                Some(j) => compiler.delta_rule(fr, j).map(|(cr, _)| cr),
            };
            // It compiled once already; keep the old plan should it somehow not now.
            if let Ok(cr) = cr {
                plan.rules[ri] = cr;
            }
        }
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

    /// The number of tuples of relation `rel/arity` computed so far (0 for an unknown
    /// relation).
    pub fn tuple_count(&self, rel: Sym, arity: usize) -> usize {
        self.plan.rel_names.iter().position(|&k| k == (rel, arity)).map_or(0, |id| self.db.rels[id].len as usize)
    }

    /// The term store, to build further terms over the same ids.
    pub fn into_terms(self) -> TermStore {
        self.db.terms
    }
}
