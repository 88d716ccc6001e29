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
mod relation;
mod terms;

pub use terms::{TermId, TermStore};

use crate::gdl::{expand_rule, kw, validate, Game, Sym, SymbolTable};
use crate::graph::sccs;
use crate::machine::{Goal, StateMachine};
use compile::{CRule, Compiler, Lit, RelId};
use eval::Db;
use rustc_hash::FxHashMap;
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
    rels: Vec<RelId>,
    /// Every rule whose head is in the component.
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
        let mut terms = TermStore::new();
        let mut rels = Vec::new();
        let mut rel_ids = FxHashMap::default();
        let mut rules = Vec::new();
        let mut c = Compiler { terms: &mut terms, rels: &mut rels, rel_ids: &mut rel_ids, symbols: &game.symbols };
        let rel_true = c.rel(kw::TRUE, 1);
        let rel_does = c.rel(kw::DOES, 2);
        let rel_init = c.rel(kw::INIT, 1);
        let rel_legal = c.rel(kw::LEGAL, 2);
        let rel_goal = c.rel(kw::GOAL, 2);
        let rel_terminal = c.rel(kw::TERMINAL, 0);
        let rel_next = c.rel(kw::NEXT, 1);
        let mut errors = Vec::new();
        for r in &game.rules {
            let flats = expand_rule(r).map_err(|e| InterpError::Invalid(vec![e]))?;
            for fr in &flats {
                match c.rule(fr) {
                    Ok(cr) => rules.push(cr),
                    Err(e) => errors.push(format!("{}:{}: {e}", r.pos.line, r.pos.col)),
                }
            }
        }
        if !errors.is_empty() {
            return Err(InterpError::Invalid(errors));
        }
        let role_syms = game.roles();
        let role_terms: Vec<TermId> = role_syms.iter().map(|&s| terms.intern(s, &[])).collect();

        // Components of the relation dependency graph, dependencies first.
        let n = rels.len();
        let mut succ = vec![Vec::new(); n];
        for r in &rules {
            for (b, _) in r.body_rels() {
                succ[r.head_rel].push(b);
            }
        }
        let comp_list = sccs(n, &succ);
        let mut comp_of = vec![0; n];
        for (i, comp) in comp_list.iter().enumerate() {
            for &r in comp {
                comp_of[r] = i;
            }
        }
        let mut comps: Vec<Component> = comp_list
            .iter()
            .map(|rs| Component { rels: rs.clone(), rules: Vec::new(), delta_rules: Vec::new(), recursive: false, phase: Phase::Static })
            .collect();
        let base_count = rules.len();
        for ri in 0..base_count {
            let ci = comp_of[rules[ri].head_rel];
            comps[ci].rules.push(ri);
            let recursive_lits: Vec<usize> = rules[ri]
                .body
                .iter()
                .enumerate()
                .filter_map(|(k, l)| match l {
                    Lit::Pos { rel, .. } if comp_of[*rel] == ci => Some(k),
                    _ => None,
                })
                .collect();
            for k in recursive_lits {
                let mut v = rules[ri].clone();
                v.delta = Some(k);
                rules.push(v);
                comps[ci].delta_rules.push(rules.len() - 1);
                comps[ci].recursive = true;
            }
        }
        for (i, comp) in comp_list.iter().enumerate() {
            let mut phase = Phase::Static;
            for &r in comp {
                if r == rel_true {
                    phase = phase.max(Phase::State);
                }
                if r == rel_does {
                    phase = phase.max(Phase::Move);
                }
                for &b in &succ[r] {
                    if comp_of[b] != i {
                        phase = phase.max(comps[comp_of[b]].phase);
                    }
                }
            }
            comps[i].phase = phase;
        }
        let needed = |rel: RelId| -> Vec<usize> {
            let mut seen = vec![false; comps.len()];
            let mut stack = vec![comp_of[rel]];
            while let Some(c) = stack.pop() {
                if std::mem::replace(&mut seen[c], true) {
                    continue;
                }
                for &r in &comps[c].rels {
                    stack.extend(succ[r].iter().map(|&b| comp_of[b]));
                }
            }
            (0..comps.len()).filter(|&c| seen[c] && !comps[c].rules.is_empty()).collect()
        };
        let plan = Plan {
            for_init: needed(rel_init),
            for_legal: needed(rel_legal),
            for_terminal: needed(rel_terminal),
            for_goal: needed(rel_goal),
            for_next: needed(rel_next),
            dynamic: (0..comps.len()).filter(|&c| comps[c].phase != Phase::Static).collect(),
            moving: (0..comps.len()).filter(|&c| comps[c].phase == Phase::Move).collect(),
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
            db: Db { terms, rels },
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
        self.overflow
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
        let hv = rule.head_vars.len();
        let emit = |db: &mut Db, binds: &[TermId], tuple: &mut Vec<TermId>| {
            tuple.clear();
            for p in rule.head.iter() {
                let t = db.build(p, binds);
                tuple.push(t);
            }
            let Db { terms, rels } = db;
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
        let Db { terms, rels } = &mut self.db;
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
        let Db { terms, rels } = &mut self.db;
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

    /// Name of a symbol (for diagnostics).
    pub fn symbol_name(&self, s: Sym) -> &str {
        self.symbols.name(s)
    }
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

    fn state_facts(&self, state: &InterpState) -> Vec<String> {
        let mut v: Vec<String> = state.facts.iter().map(|&f| self.db.terms.to_string(f, &self.symbols)).collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests;
