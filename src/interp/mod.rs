//! The GDL interpreter: bottom-up, semi-naive evaluation of the rules for each state, on
//! demand, with top-down tabled evaluation of the relations its callers ask about with
//! bound arguments. The fallback engine for games too big to ground, and the oracle the
//! propnet is tested against.
//!
//! At construction the rules are put in flat normal form, split into strongly connected
//! components of the relation dependency graph and compiled into join plans. Each component
//! has a phase: *static* (depends on neither `true` nor `does`: computed once and kept),
//! *state* (depends on `true`: recomputed per state) or *move* (depends on `does`: recomputed
//! per joint move). A query (legal, terminal, goal, next) evaluates only the components it
//! needs, and only once per state. Relations evaluated top-down (`table.rs`) are never
//! listed: joins call them with their bound arguments, and their answers are kept per
//! phase like materialized relations.

mod compile;
mod eval;
mod export;
mod relation;
mod table;
mod terms;

pub(crate) use terms::{fold32, table_hash};
pub use terms::{TermId, TermStore};

use crate::gdl::{flatten, kw, rule_deps, validate, Atom, FlatLit, FlatRule, Game, RuleDeps, Sym, SymbolTable};
use crate::machine::{Goal, StateMachine};
use compile::{CRule, Compiler, RelId, Stats};
use eval::Db;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;
use std::time::Instant;
use table::Mode;
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

#[derive(Clone, Debug)]
struct Plan {
    rules: Vec<CRule>,
    /// The flat rules, and for each compiled rule the flat rule it comes from and, for a
    /// semi-naive variant, its delta literal (to plan a rule's join again: see
    /// [`Interpreter::replan`]).
    flats: Vec<FlatRule>,
    rule_src: Vec<(usize, Option<usize>)>,
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
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub struct InterpState {
    pub facts: Vec<TermId>,
}

impl Clone for InterpState {
    fn clone(&self) -> InterpState {
        InterpState { facts: self.facts.clone() }
    }

    /// Reuses the allocation (playouts reset their state this way).
    fn clone_from(&mut self, source: &InterpState) {
        self.facts.clone_from(&source.facts);
    }
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
    /// Plan each static component's joins again just before evaluating it (see
    /// [`Interpreter::materialized`]).
    replan: bool,
    /// Sizes and argument domains of the relations of evaluated components, for `replan`.
    rel_stats: Vec<Option<(f64, Vec<f64>)>>,
    /// Relations whose literals `replan` joins first (see [`Interpreter::lead_with`]).
    lead: FxHashSet<(Sym, usize)>,
}

impl Interpreter {
    /// Validates and compiles a game.
    pub fn new(game: &Game) -> Result<Interpreter, InterpError> {
        Interpreter::with_deadline(game, None)
    }

    /// [`Interpreter::new`], with a deadline for the evaluation of static relations done at
    /// construction; the deadline stays set (see [`Interpreter::set_deadline`]).
    pub fn with_deadline(game: &Game, deadline: Option<Instant>) -> Result<Interpreter, InterpError> {
        Interpreter::with_options(game, deadline, true)
    }

    /// [`Interpreter::with_deadline`] with every relation materialized (no top-down
    /// evaluation): for the grounder, which lists every relation of a relaxed game with
    /// [`Interpreter::eval_static`]. Nothing is evaluated here; each component's joins are
    /// planned again just before it is evaluated (see `replan` in `export.rs`), and
    /// recursive components are evaluated eagerly (`eval_recursive_eager`).
    pub fn materialized(game: &Game, deadline: Option<Instant>) -> Result<Interpreter, InterpError> {
        Interpreter::with_options(game, deadline, false)
    }

    fn with_options(game: &Game, deadline: Option<Instant>, top_down: bool) -> Result<Interpreter, InterpError> {
        let report = validate(game);
        if game.is_gdl2() {
            return Err(InterpError::Unsupported("GDL-II (`sees`) games are not supported".into()));
        }
        if !report.is_ok() {
            return Err(InterpError::Invalid(report.errors().map(|d| d.to_string()).collect()));
        }
        let flats = flatten(&game.rules).map_err(|e| InterpError::Invalid(vec![e.to_string()]))?;
        let deps = rule_deps(&flats);
        // Static relations too large to materialize are moved to top-down evaluation, one at
        // a time, until the static part fits.
        let mut forced = FxHashSet::default();
        let no_stats = Stats::default();
        loop {
            let moded = if top_down { moded_relations(&flats, &deps, &forced) } else { FxHashSet::default() };
            if tracing::enabled!(tracing::Level::DEBUG) {
                let names: Vec<&str> = moded.iter().map(|k| game.symbols.name(k.0)).collect();
                tracing::debug!(game = %game.name, top_down = ?names, "relations evaluated top-down");
            }
            let mut m = Interpreter::build(game, &flats, &deps, &moded, &no_stats, TermStore::new())?;
            m.db.deadline = deadline;
            if !top_down {
                // Everything is listed; each component's joins are planned just before it
                // is evaluated, with the sizes of the relations it reads then known.
                m.replan = true;
                return Ok(m);
            }
            let Some(key) = m.prime_static() else {
                if m.overflowed() {
                    return Ok(m);
                }
                // Compile again, ordering joins with the sizes of the static relations and of
                // the initial state now known; keep the static relations computed.
                let stats = m.stats();
                let mut m2 = Interpreter::build(game, &flats, &deps, &moded, &stats, m.db.terms.clone())?;
                m2.db.deadline = deadline;
                for (c, comp) in m.plan.comps.iter().enumerate() {
                    if comp.phase != Phase::Static || !m.computed[c] {
                        continue;
                    }
                    for &r in &comp.rels {
                        let (from, to) = (&m.db.rels[r], &mut m2.db.rels[r]);
                        for i in 0..from.len {
                            to.insert(from.tuple(i), &m2.db.terms);
                        }
                        to.limit = to.len;
                    }
                    m2.computed[c] = true;
                }
                return Ok(m2);
            };
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
            if !top_down || forced.len() == before || forced.len() > 64 || m.db.timed_out {
                return Ok(m);
            }
            tracing::debug!(relation = m.symbols.name(key.0), "static relation too large; evaluating top-down");
        }
    }

    /// Evaluates every static component; on overflow, names the relation that overflowed.
    fn prime_static(&mut self) -> Option<(Sym, usize)> {
        let plan = Arc::clone(&self.plan);
        for list in [&plan.for_init, &plan.for_legal, &plan.for_terminal, &plan.for_goal, &plan.for_next] {
            for &c in list {
                if plan.comps[c].phase == Phase::Static && !self.computed[c] {
                    let t = Instant::now();
                    self.eval_component(c);
                    let ms = t.elapsed().as_secs_f64() * 1000.0;
                    if ms > 100.0 || self.db.overflow || self.overflow {
                        let names: Vec<(&str, u32)> = plan.comps[c]
                            .rels
                            .iter()
                            .map(|&r| (self.symbols.name(plan.rel_names[r].0), self.db.rels[r].len))
                            .collect();
                        tracing::debug!(relations = ?names, ms, overflow = self.db.overflow || self.overflow, "slow static component");
                    }
                    self.computed[c] = true;
                    if self.db.overflow || self.overflow {
                        return plan.comps[c].rels.first().map(|&r| plan.rel_names[r]);
                    }
                    if self.db.timed_out {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// Sizes of the static relations evaluated so far, and of the initial state by functor.
    fn stats(&self) -> Stats {
        let mut st = Stats::default();
        let plan = &self.plan;
        for c in &plan.comps {
            if c.phase != Phase::Static {
                continue;
            }
            for &r in &c.rels {
                let rel = &self.db.rels[r];
                let doms = rel.distinct_counts().into_iter().map(f64::from).collect();
                st.rels.insert(plan.rel_names[r], (rel.len as f64, doms));
            }
        }
        // Facts of the same functor in the initial state, and their arguments' domains.
        let init = &self.db.rels[plan.rel_init];
        let mut by_functor: FxHashMap<(Sym, usize), Vec<FxHashSet<TermId>>> = FxHashMap::default();
        let mut counts: FxHashMap<(Sym, usize), u32> = FxHashMap::default();
        for i in 0..init.len {
            let f = init.tuple(i)[0];
            let args = self.db.terms.args(f);
            let key = (self.db.terms.functor(f), args.len());
            let doms = by_functor.entry(key).or_insert_with(|| vec![FxHashSet::default(); args.len()]);
            for (d, &a) in doms.iter_mut().zip(args) {
                d.insert(a);
            }
            *counts.entry(key).or_default() += 1;
        }
        for (key, doms) in by_functor {
            st.state.insert(key, (counts[&key] as f64, doms.iter().map(|d| d.len() as f64).collect()));
        }
        let nroles = self.roles.len() as f64;
        st.rels.insert((kw::DOES, 2), (nroles, vec![nroles, 1.0]));
        st
    }

    fn build(
        game: &Game,
        flats: &[FlatRule],
        deps: &RuleDeps,
        moded: &FxHashSet<(Sym, usize)>,
        stats: &Stats,
        mut terms: TermStore,
    ) -> Result<Interpreter, InterpError> {
        let mut rels = Vec::new();
        let mut rel_ids = FxHashMap::default();
        let mut c = Compiler {
            terms: &mut terms,
            rels: &mut rels,
            rel_ids: &mut rel_ids,
            rel_keys: Vec::new(),
            symbols: &game.symbols,
            moded,
            modes: Vec::new(),
            mode_ids: FxHashMap::default(),
            stats,
            lead: &FxHashSet::default(),
            multi_index: false,
        };
        let rel_true = c.rel(kw::TRUE, 1);
        let rel_does = c.rel(kw::DOES, 2);
        let rel_init = c.rel(kw::INIT, 1);
        let rel_legal = c.rel(kw::LEGAL, 2);
        let rel_goal = c.rel(kw::GOAL, 2);
        let rel_terminal = c.rel(kw::TERMINAL, 0);
        let rel_next = c.rel(kw::NEXT, 1);
        // Relation ids of each rule's head and body atoms.
        let heads: Vec<RelId> = flats.iter().map(|fr| c.rel(fr.head.rel, fr.head.args.len())).collect();
        let bodies: Vec<Vec<RelId>> = flats
            .iter()
            .map(|fr| {
                fr.body
                    .iter()
                    .filter_map(|l| match l {
                        FlatLit::Pos(a) | FlatLit::Neg(a) => Some(c.rel(a.rel, a.args.len())),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let is_moded: Vec<bool> = flats.iter().map(|fr| moded.contains(&(fr.head.rel, fr.head.args.len()))).collect();
        let mut errors = Vec::new();
        // Rules of materialized relations, by rule index (`None` for top-down relations).
        let mut rules: Vec<CRule> = Vec::new();
        let mut rule_of: Vec<Option<usize>> = vec![None; flats.len()];
        for (i, fr) in flats.iter().enumerate() {
            if is_moded[i] {
                continue;
            }
            match c.rule(fr, None) {
                Ok(cr) => {
                    rule_of[i] = Some(rules.len());
                    rules.push(cr);
                }
                Err(e) => errors.push(format!("{}:{}: {e}", fr.pos.line, fr.pos.col)),
            }
        }
        // Semi-naive variants of recursive rules: one per body literal that reads a rule of
        // the same component, compiled with that literal joined first. (Compiled before the
        // top-down modes are closed below, as compiling them may request modes.)
        let mut delta_variants: Vec<(usize, usize, CRule)> = Vec::new();
        for (ri, fr) in flats.iter().enumerate() {
            let ci = deps.comp_of[ri];
            if rule_of[ri].is_none() || !deps.is_recursive(ci) {
                continue;
            }
            let recursive: FxHashSet<(Sym, usize)> = deps.edges[ri]
                .iter()
                .filter(|&&(j, _)| deps.comp_of[j] == ci)
                .map(|&(j, _)| (flats[j].head.rel, flats[j].head.args.len()))
                .collect();
            for (j, l) in fr.body.iter().enumerate() {
                if matches!(l, FlatLit::Pos(a) if recursive.contains(&(a.rel, a.args.len()))) {
                    match c.delta_rule(fr, j) {
                        Ok((cr, _)) => delta_variants.push((ri, j, cr)),
                        Err(e) => errors.push(format!("{}:{}: {e}", fr.pos.line, fr.pos.col)),
                    }
                }
            }
        }
        // Rules of top-down relations, once per mode they are called in (compiling them
        // may request further modes).
        let mut mode_rules: Vec<Vec<CRule>> = Vec::new();
        while mode_rules.len() < c.modes.len() {
            let (rel, mask) = c.modes[mode_rules.len()].clone();
            let mut v = Vec::new();
            for (i, fr) in flats.iter().enumerate() {
                if heads[i] == rel {
                    match c.rule(fr, Some(&mask)) {
                        Ok(cr) => v.push(cr),
                        Err(e) => errors.push(format!("{}:{}: {e}", fr.pos.line, fr.pos.col)),
                    }
                }
            }
            mode_rules.push(v);
        }
        if !errors.is_empty() {
            return Err(InterpError::Invalid(errors));
        }
        let mode_keys = std::mem::take(&mut c.modes);
        drop(c);
        let role_syms = game.roles();
        let role_terms: Vec<TermId> = role_syms.iter().map(|&s| terms.intern(s, &[])).collect();

        // A relation's phase is the highest phase of any rule defining it (a fixpoint, since
        // rules read relations).
        let mut rel_phase = vec![Phase::Static; rels.len()];
        rel_phase[rel_true] = Phase::State;
        rel_phase[rel_does] = Phase::Move;
        loop {
            let mut changed = false;
            for (h, body) in heads.iter().zip(&bodies) {
                let p = body.iter().map(|&b| rel_phase[b]).max().unwrap_or(Phase::Static);
                if p > rel_phase[*h] {
                    rel_phase[*h] = p;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let modes: Vec<Mode> = mode_keys
            .into_iter()
            .zip(mode_rules)
            .map(|((rel, bound), rules)| Mode {
                rel,
                free: (0..bound.len()).filter(|&i| !bound[i]).collect(),
                bound,
                rules,
                on_state: rel_phase[rel] >= Phase::State,
                on_move: rel_phase[rel] >= Phase::Move,
            })
            .collect();

        // Components of the rule dependency graph, dependencies first.
        let mut comps: Vec<Component> = Vec::with_capacity(deps.comps.len());
        for (ci, comp) in deps.comps.iter().enumerate() {
            let mut comp_heads: Vec<RelId> = comp.iter().map(|&r| heads[r]).collect();
            comp_heads.sort_unstable();
            comp_heads.dedup();
            let phase = comp_heads.iter().map(|&h| rel_phase[h]).max().unwrap_or(Phase::Static);
            let recursive = deps.is_recursive(ci);
            // Rules of top-down relations are run by calls, never materialized.
            let comp_rules: Vec<usize> = comp.iter().filter_map(|&r| rule_of[r]).collect();
            let comp_heads = if comp_rules.is_empty() { Vec::new() } else { comp_heads };
            comps.push(Component { rels: comp_heads, rules: comp_rules, delta_rules: Vec::new(), recursive, phase });
        }
        let mut rule_src: Vec<(usize, Option<usize>)> = vec![(0, None); rules.len()];
        for (i, r) in rule_of.iter().enumerate() {
            if let Some(r) = *r {
                rule_src[r] = (i, None);
            }
        }
        for (ri, j, cr) in delta_variants {
            rules.push(cr);
            rule_src.push((ri, Some(j)));
            comps[deps.comp_of[ri]].delta_rules.push(rules.len() - 1);
        }
        let needed = |rel: RelId| -> Vec<usize> {
            let mut seen = vec![false; comps.len()];
            let mut stack: Vec<usize> =
                (0..flats.len()).filter(|&r| heads[r] == rel).map(|r| deps.comp_of[r]).collect();
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
            flats: flats.to_vec(),
            rule_src,
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
            db: Db::new(terms, rels, modes),
            computed: vec![false; ncomps],
            cur_state: None,
            cur_joint: None,
            binds: Vec::new(),
            out: Vec::new(),
            tuple: Vec::new(),
            overflow: false,
            replan: false,
            rel_stats: Vec::new(),
            lead: FxHashSet::default(),
        })
    }

    pub fn symbols(&self) -> &SymbolTable {
        &self.symbols
    }

    pub fn terms(&self) -> &TermStore {
        &self.db.terms
    }

    /// Whether some evaluation was cut short, by the memory guard ([`MAX_TUPLES`]) or the
    /// deadline; answers are then incomplete.
    pub fn overflowed(&self) -> bool {
        self.overflow || self.db.interrupted()
    }

    /// Sets (or with `None` removes) a deadline for evaluation. Past it, evaluation stops
    /// early (the clock is read every few thousand join steps), and [`Interpreter::timed_out`]
    /// and [`Interpreter::overflowed`] report that answers are incomplete. Setting a deadline
    /// after a time-out forgets everything computed so far, so evaluation can start afresh.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.db.deadline = deadline;
        if self.db.timed_out {
            self.db.timed_out = false;
            for c in 0..self.computed.len() {
                self.computed[c] = false;
                for &r in &self.plan.comps[c].rels {
                    self.db.rels[r].clear();
                }
            }
            self.db.reset_tables();
            self.cur_state = None;
            self.cur_joint = None;
        }
    }

    /// Whether evaluation ran past the deadline and was cut short.
    pub fn timed_out(&self) -> bool {
        self.db.timed_out
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
        let t0 = self.replan.then(Instant::now);
        let proved = !self.db.has_empty_literal(rule) && self.db.join(rule, 0, &mut binds, &mut out);
        if let Some(ms) = t0.map(|t| t.elapsed().as_secs_f64() * 1000.0).filter(|&ms| ms > 50.0) {
            let lits: Vec<String> = rule
                .body
                .iter()
                .map(|l| match l {
                    compile::Lit::Pos { rel, access, .. } => {
                        format!("{}/{} {access:?}", self.symbols.name(plan.rel_names[*rel].0), self.db.rels[*rel].len)
                    }
                    compile::Lit::Neg { rel, .. } => format!("not {}", self.symbols.name(plan.rel_names[*rel].0)),
                    l => format!("{l:?}"),
                })
                .collect();
            tracing::debug!(rule = ri, head = self.symbols.name(plan.rel_names[rule.head_rel].0), delta = ?rule.delta, ms, values = out.len(), ?lits, "slow join");
        }
        if self.db.interrupted() {
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
        if comp.recursive && self.replan {
            return self.eval_recursive_eager(ci);
        }
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
                if !grew || self.db.interrupted() {
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

    /// Semi-naive evaluation of a recursive component in which each rule sees every tuple
    /// derived so far, not only those of earlier rounds: each semi-naive variant keeps its
    /// own cursor into the relation of its delta literal and joins the tuples past it with
    /// everything else present. A combination of tuples is found by the variant of the one
    /// added last, run after it was added. In a component with long chains of relations (a
    /// relaxed game: state, moves, next state, state...) a round carries facts down the
    /// whole chain instead of one step.
    fn eval_recursive_eager(&mut self, ci: usize) {
        let plan = Arc::clone(&self.plan);
        let comp = &plan.comps[ci];
        let delta_rel = |ri: usize| -> RelId {
            let r = &plan.rules[ri];
            match r.delta.map(|k| &r.body[k]) {
                Some(compile::Lit::Pos { rel, .. }) => *rel,
                _ => unreachable!("a semi-naive variant reads a positive literal's delta"),
            }
        };
        let mut variants: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
        for &d in &comp.delta_rules {
            variants.entry(plan.rule_src[d].0).or_default().push(d);
        }
        let show_all = |db: &mut Db| {
            for &r in &comp.rels {
                let rel = &mut db.rels[r];
                rel.limit = rel.len;
                rel.delta_lo = 0;
            }
        };
        let mut cursor: FxHashMap<usize, u32> = FxHashMap::default();
        for &ri in &comp.rules {
            show_all(&mut self.db);
            for &d in variants.get(&plan.rule_src[ri].0).into_iter().flatten() {
                cursor.insert(d, self.db.rels[delta_rel(d)].len);
            }
            self.run_rule(ri);
        }
        'rounds: loop {
            let mut grew = false;
            for &d in &comp.delta_rules {
                let r = delta_rel(d);
                let (from, len) = (cursor[&d], self.db.rels[r].len);
                if from >= len {
                    continue;
                }
                grew = true;
                show_all(&mut self.db);
                self.db.rels[r].delta_lo = from;
                cursor.insert(d, len);
                self.run_rule(d);
                if self.db.interrupted() {
                    break 'rounds;
                }
                if comp.rels.iter().any(|&r| self.db.rels[r].len > MAX_TUPLES) {
                    self.overflow = true;
                    break 'rounds;
                }
            }
            if !grew {
                break;
            }
        }
        show_all(&mut self.db);
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
        self.db.clear_tables(|m| m.on_state);
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
        self.db.clear_tables(|m| m.on_move);
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

    /// Every relation's name, arity and current number of tuples (for diagnostics); for a
    /// relation evaluated top-down, the answers in its tables.
    pub fn relation_sizes(&self) -> Vec<(String, usize, u32)> {
        let mut sizes: Vec<u32> = self.db.rels.iter().map(|r| r.len).collect();
        for (m, t) in self.db.modes.iter().zip(&self.db.tables) {
            sizes[m.rel] += t.len();
        }
        self.plan.rel_names.iter().zip(sizes).map(|(&(s, a), n)| (self.symbols.name(s).to_string(), a, n)).collect()
    }
}

/// Chooses the relations to evaluate top-down (see `table.rs`) instead of materializing
/// them: non-keyword relations that depend on the state, plus `forced` static ones (too
/// large to list), wherever each use of them binds some of their arguments (for a
/// non-recursive relation: all of them), by literals that are materialized or by the head of
/// a rule itself evaluated top-down. A recursive component is evaluated top-down as a whole
/// or not at all. A relation that only serves as a test, such as chess's
/// `threatened_with_capture`, or a recursion called with bound inputs, such as an
/// accumulator loop or a path search carrying the list of visited cells, is far cheaper to
/// answer for the arguments asked than to list.
fn moded_relations(flats: &[FlatRule], deps: &RuleDeps, forced: &FxHashSet<(Sym, usize)>) -> FxHashSet<(Sym, usize)> {
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
    // Recursive relations, and those whose recursion builds terms (a head with a function
    // term holding a variable, such as a list's tail): listing those may never end.
    let mut building: FxHashSet<(Sym, usize)> = FxHashSet::default();
    for (i, fr) in flats.iter().enumerate() {
        if deps.is_recursive(deps.comp_of[i]) {
            if fr.head.args.iter().any(|t| matches!(t, crate::gdl::Term::Func(..)) && !t.is_ground()) {
                for &r in &deps.comps[deps.comp_of[i]] {
                    building.insert(key(&flats[r].head));
                }
            }
        }
    }
    let mut cand: FxHashSet<(Sym, usize)> = FxHashSet::default();
    let mut excluded: FxHashSet<(Sym, usize)> = FxHashSet::default();
    for fr in flats {
        let k = key(&fr.head);
        if keywords.contains(&k.0) {
            excluded.insert(k);
        } else if dynamic.contains(&k) || forced.contains(&k) || building.contains(&k) {
            cand.insert(k);
        }
    }
    cand.retain(|k| !excluded.contains(k));
    // Drop candidates used somewhere without enough bound arguments. Positive uses that
    // must generate bindings are dropped first: once they enumerate, the tests that depend
    // on their bindings may stay top-down.
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
                    let arg_bound = |t: &crate::gdl::Term| {
                        let mut ok = true;
                        t.for_each_var(&mut |v| ok &= bound.contains(&v));
                        ok
                    };
                    let ok = a.args.iter().any(arg_bound);
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
        let mut drop = if drop_pos.is_empty() { drop_neg } else { drop_pos };
        // A recursive component goes top-down as a whole or not at all.
        for comp in &deps.comps {
            let heads: Vec<(Sym, usize)> = comp.iter().map(|&r| key(&flats[r].head)).collect();
            if heads.iter().any(|k| cand.contains(k)) && heads.iter().any(|k| !cand.contains(k) || drop.contains(k)) {
                drop.extend(heads.iter().filter(|k| cand.contains(k)));
            }
        }
        drop.retain(|k| cand.contains(k));
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

    /// No: states and moves are ids into this interpreter's term store, and a clone extends
    /// its copy of the store on its own (the same id comes to name different terms).
    fn clones_share_states(&self) -> bool {
        false
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

    fn move_number(m: TermId) -> Option<usize> {
        Some(m.0 as usize)
    }

    fn move_number_bound(&self) -> usize {
        self.db.terms.len()
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
