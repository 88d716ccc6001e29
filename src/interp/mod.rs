//! The GDL interpreter: bottom-up, semi-naive evaluation of the rules for each state, on
//! demand. The fallback engine for games too big to ground, and the oracle the propnet is
//! tested against.
//!
//! At construction the rules are put in flat normal form, split into strongly connected
//! components of the relation dependency graph and compiled into join plans. Each component
//! has a phase: *static* (depends on neither `true` nor `does`: computed once and kept),
//! *state* (depends on `true`: recomputed per state) or *move* (depends on `does`: recomputed
//! per joint move). A query (legal, terminal, goal, next) evaluates only the components it
//! needs, and only once per state.

mod compile;
mod eval;
mod export;
mod relation;
mod terms;

pub use terms::{TermId, TermStore};

use crate::gdl::{flatten, kw, rule_deps, validate, Atom, FlatLit, FlatRule, Game, RuleDeps, Sym, SymbolTable};
use crate::machine::{Goal, StateMachine};
use compile::{CRule, Compiler, Lit, RelId};
use eval::Db;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;
use terms::UNBOUND;

/// Why a game cannot be run by the interpreter.
#[derive(Debug, thiserror::Error)]
pub enum InterpError {
    #[error("invalid game description:\n  {}", .0.join("\n  "))]
    Invalid(Vec<String>),
    #[error("{0}")]
    Unsupported(String),
}

/// Most tuples a single relation may hold before evaluation gives up (a guard against
/// descriptions whose recursion never ends).
pub const MAX_TUPLES: u32 = 20_000_000;

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Static,
    State,
    Move,
}

#[derive(Clone, Debug)]
struct Component {
    /// Relations the component's rules write.
    rels: Vec<RelId>,
    /// The rules of the component.
    rules: Vec<usize>,
    /// Semi-naive variants of the recursive rules.
    delta_rules: Vec<usize>,
    recursive: bool,
    phase: Phase,
}

#[derive(Debug)]
struct Plan {
    rules: Vec<CRule>,
    comps: Vec<Component>,
    /// Components to evaluate, in order, for each query.
    for_init: Vec<usize>,
    for_legal: Vec<usize>,
    for_terminal: Vec<usize>,
    for_goal: Vec<usize>,
    for_next: Vec<usize>,
    dynamic: Vec<usize>,
    moving: Vec<usize>,
    rel_names: Vec<(Sym, usize)>,
    rel_true: RelId,
    rel_does: RelId,
    rel_init: RelId,
    rel_legal: RelId,
    rel_goal: RelId,
    rel_terminal: RelId,
    rel_next: RelId,
}

/// A state of the interpreter: its true facts, as sorted term ids.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct InterpState {
    pub facts: Vec<TermId>,
}

/// The GDL interpreter. Clone one per thread.
#[derive(Clone, Debug)]
pub struct Interpreter {
    symbols: Arc<SymbolTable>,
    roles: Vec<String>,
    role_terms: Vec<TermId>,
    plan: Arc<Plan>,
    db: Db,
    computed: Vec<bool>,
    cur_state: Option<Vec<TermId>>,
    cur_joint: Option<Vec<TermId>>,
    binds: Vec<TermId>,
    out: Vec<TermId>,
    tuple: Vec<TermId>,
    overflow: bool,
}

impl Interpreter {
    /// Validates and compiles a game.
    pub fn new(game: &Game) -> Result<Interpreter, InterpError> {
        let report = validate(game);
        if game.is_gdl2() {
            return Err(InterpError::Unsupported("GDL-II (`sees`) games are not supported".into()));
        }
        if !report.is_ok() {
            return Err(InterpError::Invalid(report.errors().map(|d| d.to_string()).collect()));
        }
        let flats = flatten(&game.rules).map_err(|e| InterpError::Invalid(vec![e.to_string()]))?;
        let deps = rule_deps(&flats);
        // Static relations too large to materialize are moved to on-demand evaluation, one at
        // a time, until the static part fits.
        let mut forced = FxHashSet::default();
        loop {
            let checked = on_demand_relations(&flats, &deps, &forced);
            if tracing::enabled!(tracing::Level::DEBUG) {
                let names: Vec<&str> = checked.iter().map(|k| game.symbols.name(k.0)).collect();
                tracing::debug!(game = %game.name, on_demand = ?names, "relations evaluated on demand");
            }
            let mut m = Interpreter::build(game, &flats, &deps, &checked)?;
            let Some(key) = m.prime_static() else { return Ok(m) };
            // Force the relation, or if it was forced already (and could not be evaluated on
            // demand because its users enumerate it), the relations that use it.
            let before = forced.len();
            if !forced.insert(key) {
                for fr in &flats {
                    if fr
                        .body
                        .iter()
                        .any(|l| matches!(l, FlatLit::Pos(a) | FlatLit::Neg(a) if (a.rel, a.args.len()) == key))
                    {
                        forced.insert((fr.head.rel, fr.head.args.len()));
                    }
                }
            }
            if forced.len() == before || forced.len() > 64 {
                return Ok(m);
            }
            tracing::debug!(relation = m.symbols.name(key.0), "static relation too large; evaluating on demand");
        }
    }

    /// Evaluates every static component; on overflow, names the relation that overflowed.
    fn prime_static(&mut self) -> Option<(Sym, usize)> {
        let plan = Arc::clone(&self.plan);
        for list in [&plan.for_init, &plan.for_legal, &plan.for_terminal, &plan.for_goal, &plan.for_next] {
            for &c in list {
                if plan.comps[c].phase == Phase::Static && !self.computed[c] {
                    self.eval_component(c);
                    self.computed[c] = true;
                    if self.overflowed() {
                        return plan.comps[c].rels.first().map(|&r| plan.rel_names[r]);
                    }
                }
            }
        }
        None
    }

    fn build(
        game: &Game,
        flats: &[FlatRule],
        deps: &RuleDeps,
        checked: &FxHashSet<(Sym, usize)>,
    ) -> Result<Interpreter, InterpError> {
        let mut terms = TermStore::new();
        let mut rels = Vec::new();
        let mut rel_ids = FxHashMap::default();
        let mut rules = Vec::new();
        let mut c =
            Compiler { terms: &mut terms, rels: &mut rels, rel_ids: &mut rel_ids, symbols: &game.symbols, checked };
        let rel_true = c.rel(kw::TRUE, 1);
        let rel_does = c.rel(kw::DOES, 2);
        let rel_init = c.rel(kw::INIT, 1);
        let rel_legal = c.rel(kw::LEGAL, 2);
        let rel_goal = c.rel(kw::GOAL, 2);
        let rel_terminal = c.rel(kw::TERMINAL, 0);
        let rel_next = c.rel(kw::NEXT, 1);
        let mut errors = Vec::new();
        let mut check_rules: Vec<Vec<CRule>> = Vec::new();
        let mut is_checked = Vec::new();
        for fr in flats {
            // Rules of on-demand relations are compiled to check a given head tuple; they stay
            // in `rules` too, so that rule indices match `flats`, but are never materialized.
            let on_demand = checked.contains(&(fr.head.rel, fr.head.args.len()));
            is_checked.push(on_demand);
            match c.rule(fr, on_demand) {
                Ok(cr) => {
                    if on_demand {
                        if check_rules.len() <= cr.head_rel {
                            check_rules.resize(cr.head_rel + 1, Vec::new());
                        }
                        check_rules[cr.head_rel].push(cr.clone());
                    }
                    rules.push(cr);
                }
                Err(e) => errors.push(format!("{}:{}: {e}", fr.pos.line, fr.pos.col)),
            }
        }
        if !errors.is_empty() {
            return Err(InterpError::Invalid(errors));
        }
        let role_syms = game.roles();
        let role_terms: Vec<TermId> = role_syms.iter().map(|&s| terms.intern(s, &[])).collect();

        // A relation's phase is the highest phase of any rule defining it (a fixpoint, since
        // rules read relations).
        let mut rel_phase = vec![Phase::Static; rels.len()];
        rel_phase[rel_true] = Phase::State;
        rel_phase[rel_does] = Phase::Move;
        loop {
            let mut changed = false;
            for r in &rules {
                let p = r.body_rels().map(|(b, _)| rel_phase[b]).max().unwrap_or(Phase::Static);
                if p > rel_phase[r.head_rel] {
                    rel_phase[r.head_rel] = p;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }

        // Components of the rule dependency graph, dependencies first.
        let mut comps: Vec<Component> = Vec::with_capacity(deps.comps.len());
        for (ci, comp) in deps.comps.iter().enumerate() {
            let mut heads: Vec<RelId> = comp.iter().map(|&r| rules[r].head_rel).collect();
            heads.sort_unstable();
            heads.dedup();
            let phase = heads.iter().map(|&h| rel_phase[h]).max().unwrap_or(Phase::Static);
            let recursive = deps.is_recursive(ci);
            // Rules of on-demand relations are run by `Db::check`, never materialized.
            let comp_rules: Vec<usize> = comp.iter().copied().filter(|&r| !is_checked[r]).collect();
            let heads = if comp_rules.is_empty() { Vec::new() } else { heads };
            comps.push(Component { rels: heads, rules: comp_rules, delta_rules: Vec::new(), recursive, phase });
        }
        // Semi-naive variants: one per body literal that reads a rule of the same component.
        for ri in 0..flats.len() {
            let ci = deps.comp_of[ri];
            if !comps[ci].recursive || is_checked[ri] {
                continue;
            }
            let recursive_rels: Vec<RelId> = deps.edges[ri]
                .iter()
                .filter(|&&(j, _)| deps.comp_of[j] == ci)
                .map(|&(j, _)| rules[j].head_rel)
                .collect();
            for k in 0..rules[ri].body.len() {
                if matches!(&rules[ri].body[k], Lit::Pos { rel, .. } if recursive_rels.contains(rel)) {
                    let mut v = rules[ri].clone();
                    v.delta = Some(k);
                    rules.push(v);
                    comps[ci].delta_rules.push(rules.len() - 1);
                }
            }
        }
        let needed = |rel: RelId| -> Vec<usize> {
            let mut seen = vec![false; comps.len()];
            let mut stack: Vec<usize> =
                (0..flats.len()).filter(|&r| rules[r].head_rel == rel).map(|r| deps.comp_of[r]).collect();
            while let Some(c) = stack.pop() {
                if std::mem::replace(&mut seen[c], true) {
                    continue;
                }
                for &r in &deps.comps[c] {
                    stack.extend(deps.edges[r].iter().map(|&(j, _)| deps.comp_of[j]));
                }
            }
            (0..comps.len()).filter(|&c| seen[c]).collect()
        };
        let plan = Plan {
            for_init: needed(rel_init),
            for_legal: needed(rel_legal),
            for_terminal: needed(rel_terminal),
            for_goal: needed(rel_goal),
            for_next: needed(rel_next),
            dynamic: (0..comps.len()).filter(|&c| comps[c].phase != Phase::Static).collect(),
            moving: (0..comps.len()).filter(|&c| comps[c].phase == Phase::Move).collect(),
            rel_names: {
                let mut v = vec![(kw::TRUE, 0); rel_ids.len()];
                for (&k, &r) in &rel_ids {
                    v[r] = k;
                }
                v
            },
            rules,
            comps,
            rel_true,
            rel_does,
            rel_init,
            rel_legal,
            rel_goal,
            rel_terminal,
            rel_next,
        };
        let ncomps = plan.comps.len();
        Ok(Interpreter {
            symbols: Arc::new(game.symbols.clone()),
            roles: role_syms.iter().map(|&s| game.symbols.name(s).to_string()).collect(),
            role_terms,
            plan: Arc::new(plan),
            db: Db { terms, rels, check_rules: Arc::new(check_rules), overflow: Default::default() },
            computed: vec![false; ncomps],
            cur_state: None,
            cur_joint: None,
            binds: Vec::new(),
            out: Vec::new(),
            tuple: Vec::new(),
            overflow: false,
        })
    }

    pub fn symbols(&self) -> &SymbolTable {
        &self.symbols
    }

    pub fn terms(&self) -> &TermStore {
        &self.db.terms
    }

    /// Whether some evaluation was cut short by [`MAX_TUPLES`]; results are then incomplete.
    pub fn overflowed(&self) -> bool {
        self.overflow || self.db.overflow.get()
    }

    fn run_rule(&mut self, ri: usize) {
        let plan = Arc::clone(&self.plan);
        let rule = &plan.rules[ri];
        let mut binds = std::mem::take(&mut self.binds);
        let mut out = std::mem::take(&mut self.out);
        let mut tuple = std::mem::take(&mut self.tuple);
        binds.clear();
        binds.resize(rule.nvars, UNBOUND);
        out.clear();
        let proved = self.db.join(rule, 0, &mut binds, &mut out);
        if self.db.overflow.get() {
            out.clear();
        }
        let hv = rule.head_vars.len();
        let emit = |db: &mut Db, binds: &[TermId], tuple: &mut Vec<TermId>| {
            tuple.clear();
            for p in rule.head.iter() {
                let t = db.build(p, binds);
                tuple.push(t);
            }
            let Db { terms, rels, .. } = db;
            rels[rule.head_rel].insert(tuple, terms);
        };
        if hv == 0 {
            if proved {
                emit(&mut self.db, &binds, &mut tuple);
            }
        } else {
            for chunk in out.chunks_exact(hv) {
                for (j, &v) in rule.head_vars.iter().enumerate() {
                    binds[v as usize] = chunk[j];
                }
                emit(&mut self.db, &binds, &mut tuple);
            }
        }
        self.binds = binds;
        self.out = out;
        self.tuple = tuple;
    }

    fn eval_component(&mut self, ci: usize) {
        let plan = Arc::clone(&self.plan);
        let comp = &plan.comps[ci];
        for &r in &comp.rels {
            let rel = &mut self.db.rels[r];
            rel.limit = rel.len;
            rel.delta_lo = 0;
        }
        for &ri in &comp.rules {
            self.run_rule(ri);
        }
        if comp.recursive {
            loop {
                let mut grew = false;
                for &r in &comp.rels {
                    let rel = &mut self.db.rels[r];
                    rel.delta_lo = rel.limit;
                    rel.limit = rel.len;
                    grew |= rel.delta_lo < rel.limit;
                    if rel.len > MAX_TUPLES {
                        self.overflow = true;
                        grew = false;
                        break;
                    }
                }
                if !grew {
                    break;
                }
                for &ri in &comp.delta_rules {
                    self.run_rule(ri);
                }
            }
        }
        for &r in &comp.rels {
            let rel = &mut self.db.rels[r];
            rel.limit = rel.len;
            rel.delta_lo = 0;
        }
    }

    fn ensure(&mut self, which: fn(&Plan) -> &Vec<usize>) {
        let plan = Arc::clone(&self.plan);
        for &c in which(&plan) {
            if !self.computed[c] {
                self.eval_component(c);
                self.computed[c] = true;
            }
        }
    }

    fn clear_components(&mut self, list: fn(&Plan) -> &Vec<usize>) {
        let plan = Arc::clone(&self.plan);
        for &c in list(&plan) {
            if self.computed[c] {
                for &r in &plan.comps[c].rels {
                    self.db.rels[r].clear();
                }
                self.computed[c] = false;
            }
        }
    }

    fn set_state(&mut self, state: &InterpState) {
        if self.cur_state.as_deref() == Some(&state.facts[..]) {
            return;
        }
        self.clear_components(|p| &p.dynamic);
        let (rt, rd) = (self.plan.rel_true, self.plan.rel_does);
        let Db { terms, rels, .. } = &mut self.db;
        rels[rt].clear();
        rels[rd].clear();
        for &f in &state.facts {
            rels[rt].insert(&[f], terms);
        }
        rels[rt].limit = rels[rt].len;
        let cur = self.cur_state.get_or_insert_with(Vec::new);
        cur.clear();
        cur.extend_from_slice(&state.facts);
        self.cur_joint = None;
    }

    fn set_joint(&mut self, joint: &[TermId]) {
        if self.cur_joint.as_deref() == Some(joint) {
            return;
        }
        self.clear_components(|p| &p.moving);
        let rd = self.plan.rel_does;
        let Db { terms, rels, .. } = &mut self.db;
        rels[rd].clear();
        for (&r, &m) in self.role_terms.iter().zip(joint) {
            rels[rd].insert(&[r, m], terms);
        }
        rels[rd].limit = rels[rd].len;
        let cur = self.cur_joint.get_or_insert_with(Vec::new);
        cur.clear();
        cur.extend_from_slice(joint);
    }

    /// Parses a move in ggp-base's printed form (or any KIF spelling) to a move id, if the
    /// game has ever mentioned that term.
    pub fn find_move(&self, text: &str) -> Option<TermId> {
        let mut syms = (*self.symbols).clone();
        let t = crate::gdl::parse_ground_term(text, &mut syms).ok()?;
        self.db.terms.lookup_ast(&t)
    }

    fn goal_number(&self, t: TermId) -> Option<u32> {
        if !self.db.terms.args(t).is_empty() {
            return None;
        }
        self.symbols.name(self.db.terms.functor(t)).parse().ok()
    }

    /// Every relation's name, arity and current number of tuples (for diagnostics).
    pub fn relation_sizes(&self) -> Vec<(String, usize, u32)> {
        self.plan
            .rel_names
            .iter()
            .zip(&self.db.rels)
            .map(|(&(s, a), r)| (self.symbols.name(s).to_string(), a, r.len))
            .collect()
    }
}

/// Chooses the relations to evaluate on demand (top-down, per tuple) instead of
/// materializing them: non-recursive, non-keyword relations defined by rules that depend on
/// the state, plus `forced` static ones, wherever every use of them can be placed after all
/// of its variables are bound. A relation that only ever serves as a test, such as chess's
/// `threatened_with_capture`, is far cheaper to prove for the few tuples asked than to list.
fn on_demand_relations(
    flats: &[FlatRule],
    deps: &RuleDeps,
    forced: &FxHashSet<(Sym, usize)>,
) -> FxHashSet<(Sym, usize)> {
    let key = |a: &Atom| (a.rel, a.args.len());
    let keywords = [
        kw::ROLE,
        kw::INIT,
        kw::TRUE,
        kw::DOES,
        kw::NEXT,
        kw::LEGAL,
        kw::GOAL,
        kw::TERMINAL,
        kw::BASE,
        kw::INPUT,
        kw::SEES,
    ];
    // Which relations depend on the state (a fixpoint over rules).
    let mut dynamic: FxHashSet<(Sym, usize)> = FxHashSet::default();
    loop {
        let before = dynamic.len();
        for fr in flats {
            let dep = fr.body.iter().any(|l| match l {
                FlatLit::Pos(a) | FlatLit::Neg(a) => {
                    a.rel == kw::TRUE || a.rel == kw::DOES || dynamic.contains(&key(a))
                }
                _ => false,
            });
            if dep {
                dynamic.insert(key(&fr.head));
            }
        }
        if dynamic.len() == before {
            break;
        }
    }
    let mut cand: FxHashSet<(Sym, usize)> = FxHashSet::default();
    let mut excluded: FxHashSet<(Sym, usize)> = FxHashSet::default();
    for (i, fr) in flats.iter().enumerate() {
        let k = key(&fr.head);
        if keywords.contains(&k.0) || deps.is_recursive(deps.comp_of[i]) || fr.body.is_empty() {
            excluded.insert(k);
        } else if dynamic.contains(&k) || forced.contains(&k) {
            cand.insert(k);
        }
    }
    cand.retain(|k| !excluded.contains(k));
    // Drop candidates used somewhere with a variable that nothing else binds. Positive uses
    // that must generate bindings are dropped first: once they enumerate, the tests that
    // depend on their bindings may stay on demand.
    loop {
        let mut drop_pos = Vec::new();
        let mut drop_neg = Vec::new();
        for fr in flats {
            let mut bound: FxHashSet<Sym> = FxHashSet::default();
            if cand.contains(&key(&fr.head)) {
                fr.head.for_each_var(&mut |v| {
                    bound.insert(v);
                });
            }
            for l in &fr.body {
                if let FlatLit::Pos(a) = l {
                    if !cand.contains(&key(a)) {
                        a.for_each_var(&mut |v| {
                            bound.insert(v);
                        });
                    }
                }
            }
            for l in &fr.body {
                let (a, pos) = match l {
                    FlatLit::Pos(a) => (a, true),
                    FlatLit::Neg(a) => (a, false),
                    _ => continue,
                };
                if cand.contains(&key(a)) {
                    let mut ok = true;
                    a.for_each_var(&mut |v| ok &= bound.contains(&v));
                    if !ok {
                        if pos {
                            drop_pos.push(key(a))
                        } else {
                            drop_neg.push(key(a))
                        }
                    }
                }
            }
        }
        let drop = if drop_pos.is_empty() { drop_neg } else { drop_pos };
        if drop.is_empty() {
            break;
        }
        for k in drop {
            cand.remove(&k);
        }
    }
    cand
}

impl StateMachine for Interpreter {
    type State = InterpState;
    type Move = TermId;

    fn roles(&self) -> &[String] {
        &self.roles
    }

    fn initial_state(&mut self) -> InterpState {
        self.ensure(|p| &p.for_init);
        let r = &self.db.rels[self.plan.rel_init];
        let mut facts: Vec<TermId> = (0..r.len).map(|i| r.tuple(i)[0]).collect();
        facts.sort_unstable();
        facts.dedup();
        InterpState { facts }
    }

    fn legal_moves(&mut self, state: &InterpState, role: usize, out: &mut Vec<TermId>) {
        self.set_state(state);
        self.ensure(|p| &p.for_legal);
        out.clear();
        let rt = self.role_terms[role];
        let r = &self.db.rels[self.plan.rel_legal];
        for i in 0..r.len {
            let t = r.tuple(i);
            if t[0] == rt {
                out.push(t[1]);
            }
        }
    }

    fn next_state(&mut self, state: &InterpState, joint: &[TermId], out: &mut InterpState) {
        self.set_state(state);
        self.set_joint(joint);
        self.ensure(|p| &p.for_next);
        let r = &self.db.rels[self.plan.rel_next];
        out.facts.clear();
        out.facts.extend((0..r.len).map(|i| r.tuple(i)[0]));
        out.facts.sort_unstable();
        out.facts.dedup();
    }

    fn is_terminal(&mut self, state: &InterpState) -> bool {
        self.set_state(state);
        self.ensure(|p| &p.for_terminal);
        self.db.rels[self.plan.rel_terminal].len > 0
    }

    fn goal(&mut self, state: &InterpState, role: usize) -> Goal {
        self.set_state(state);
        self.ensure(|p| &p.for_goal);
        let rt = self.role_terms[role];
        let r = &self.db.rels[self.plan.rel_goal];
        let mut value = None;
        for i in 0..r.len {
            let t = r.tuple(i);
            if t[0] == rt {
                if value.is_some() {
                    return None;
                }
                value = Some(t[1]);
            }
        }
        value.and_then(|v| self.goal_number(v))
    }

    fn move_text(&self, m: TermId) -> String {
        self.db.terms.to_string(m, &self.symbols)
    }

    fn overflowed(&self) -> bool {
        Interpreter::overflowed(self)
    }

    fn state_facts(&self, state: &InterpState) -> Vec<String> {
        let mut v: Vec<String> = state.facts.iter().map(|&f| self.db.terms.to_string(f, &self.symbols)).collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests;
