//! Grounding: instantiates a game's rules into ground rules.
//!
//! Domain analysis runs the interpreter on a *relaxed* copy of the game: `(true x)` reads
//! `#base`, every fact that `init` or `next` can ever name; `(does r m)` reads `#does`, every
//! move `legal` can ever name; negations are dropped. Every relation of that copy is static
//! and over-approximates the original (a superset of every atom true in any reachable state),
//! so one bottom-up fixpoint gives all the ground atoms the propnet needs. Each rule `i` is
//! given `(#inst_i vars...) :- relaxed body` beside `head :- relaxed body`, so the tuples
//! of `#inst_i` are exactly the rule's ground instances. Nothing reads `#inst_i`: it is
//! listed once, after the fixpoint. The head rule needs no instance, only its head's atoms:
//! its local variables are eliminated (see [`eliminate_locals`]; the relaxed game has no
//! negation, so the relation is the same), so that a rule with many instances per head
//! costs the recursive fixpoint only its heads.
//!
//! Rewrites that keep the meaning and shrink the instances: `project_locals`,
//! `split_components`, exclusion chains (`super::exclude`) and, when the grounding is too
//! large as written and that shrinks its largest rules, `eliminate_locals`. Guards
//! (`super::guard`) restrict relations read positively to the atoms their readers can name.
//!
//! Demand: a relation read only under negation (never by a positive literal) matters only
//! at the atoms those negative literals name in some instance. Its rules in the relaxed game
//! get a leading `(#demand_k head-args)` literal, where `#demand_k` holds exactly those
//! atoms (one rule per negative literal: `(#demand_k args) :- relaxed body of rule j`, with
//! rule j's guard and its other variables eliminated). The instances dropped have heads no
//! ground rule reads, so the network is unchanged where it is read; soundness still rests
//! on the relaxed game being a superset, as every instance kept is one of the unrestricted
//! relaxed game's.

use crate::gdl::{flatten, kw, Atom, FlatLit, Game, Literal, Rule, Sym, SymbolTable, Term};
use crate::interp::{Interpreter, TermId, TermStore};
use std::hash::Hasher;
use std::time::Instant;

/// Limits on grounding, set by the caller.
#[derive(Clone, Debug)]
pub struct Budget {
    /// Give up past this moment.
    pub deadline: Option<Instant>,
    /// Most ground rule instances (each costs its body literals in memory).
    pub max_instances: usize,
    /// Most ground body literals in all instances together.
    pub max_literals: usize,
    /// Give up once this is raised (a build in the background whose match is over).
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget { deadline: None, max_instances: 20_000_000, max_literals: 100_000_000, cancel: None }
    }
}

impl Budget {
    /// `Timeout` once the deadline has passed or the cancel flag is raised.
    pub fn check_time(&self, what: &str) -> Result<(), GroundError> {
        if self.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
            return Err(GroundError::Timeout(format!("{what} (cancelled)")));
        }
        match self.deadline {
            Some(d) if Instant::now() > d => Err(GroundError::Timeout(what.to_string())),
            _ => Ok(()),
        }
    }
}

/// Why a game could not be grounded.
#[derive(Debug, thiserror::Error)]
pub enum GroundError {
    #[error("{0}")]
    Invalid(String),
    #[error("too large to ground: {0}")]
    TooLarge(String),
    #[error("time budget ran out while {0}")]
    Timeout(String),
}

/// A ground body literal: an atom term, possibly negated.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct GLit {
    pub atom: TermId,
    pub neg: bool,
}

/// A ground rule: `head :- body`, with the body as a range of [`Grounding::lits`].
#[derive(Copy, Clone, Debug)]
pub struct GRule {
    pub head: TermId,
    pub start: u32,
    pub len: u32,
}

/// A game's rules, instantiated. Atoms are terms whose functor is the relation: `(true x)`
/// is the term `true(x)`, the proposition `terminal` the constant `terminal`.
#[derive(Debug)]
pub struct Grounding {
    pub terms: TermStore,
    pub symbols: SymbolTable,
    /// Role names and their terms, in order.
    pub roles: Vec<String>,
    pub role_terms: Vec<TermId>,
    pub rules: Vec<GRule>,
    pub lits: Vec<GLit>,
    /// Every fact that can be true in some state (the fact term, not `true(..)`).
    pub bases: Vec<TermId>,
    /// Every move each role may make in some state: (role index, move term).
    pub inputs: Vec<(usize, TermId)>,
}

impl Grounding {
    pub fn body(&self, r: &GRule) -> &[GLit] {
        &self.lits[r.start as usize..(r.start + r.len) as usize]
    }
}

const BASE: &str = "#base";
const DOES: &str = "#does";
const INIT: &str = "#init";
const NEXT: &str = "#next";

/// Instances past which the rules as written are put aside for their eliminated form.
const FIRST_TRY_INSTANCES: usize = 3_500_000;

/// Grounds a game within `budget`. If the rules as written have too many instances (more
/// than [`FIRST_TRY_INSTANCES`]) and eliminating local variables would shrink the rules that
/// have most of them, tries with every rule's local variables eliminated one by one (see
/// [`eliminate_locals`]), and if that is too large too, the rules as written with the whole
/// budget; if it would not shrink them (chess: their locals occur under negation), the
/// analysis as written goes on where it stopped.
pub fn ground(game: &Game, budget: &Budget) -> Result<Grounding, GroundError> {
    ground_first(game, budget, FIRST_TRY_INSTANCES).map(|(g, _)| g)
}

/// [`ground`], putting the rules as written aside past `first_try` instances if eliminating
/// local variables would shrink them; says whether it did.
pub(crate) fn ground_first(game: &Game, budget: &Budget, first_try: usize) -> Result<(Grounding, bool), GroundError> {
    let first = budget.max_instances.min(first_try);
    let mut plain = Domains::new(game, budget, false)?;
    let why = match plain.analyse(budget, first) {
        Ok(()) => return Ok((plain.instantiate(game, budget)?, false)),
        Err(Stop::Failed(GroundError::TooLarge(why))) => why,
        Err(Stop::Failed(e)) => return Err(e),
        Err(Stop::Listed(n)) => {
            // Elimination pays only if it shrinks the rules with the most instances (as in
            // chess, where those rules' locals occur under negation, it may not): if not,
            // the analysis goes on where it stopped.
            let (before, after) = plain.elimination_estimate();
            tracing::debug!(game = %game.name, listed = n, before, after, "too many instances as written");
            if 2 * after > before {
                return match plain.analyse(budget, budget.max_instances) {
                    Ok(()) => Ok((plain.instantiate(game, budget)?, false)),
                    Err(Stop::Listed(n)) => Err(GroundError::TooLarge(format!(
                        "more than {} rule instances ({n} listed)",
                        budget.max_instances
                    ))),
                    Err(Stop::Failed(e)) => Err(e),
                };
            }
            format!("more than {first} rule instances ({n} listed)")
        }
    };
    drop(plain);
    tracing::debug!(game = %game.name, why, "too large; grounding again with local variables eliminated");
    match ground_with(game, budget, true) {
        Err(GroundError::TooLarge(_)) if first < budget.max_instances => Ok((ground_with(game, budget, false)?, false)),
        r => Ok((r?, true)),
    }
}

/// Grounds a game's rules as written (`eliminate` false) or with their local variables
/// eliminated, within `budget`.
pub(crate) fn ground_with(game: &Game, budget: &Budget, eliminate: bool) -> Result<Grounding, GroundError> {
    let mut d = Domains::new(game, budget, eliminate)?;
    match d.analyse(budget, budget.max_instances) {
        Ok(()) => d.instantiate(game, budget),
        Err(Stop::Listed(n)) => {
            Err(GroundError::TooLarge(format!("more than {} rule instances ({n} listed)", budget.max_instances)))
        }
        Err(Stop::Failed(e)) => Err(e),
    }
}

/// Why a domain analysis stopped.
enum Stop {
    /// More instances than the limit were listed (this many so far); a larger limit resumes
    /// the analysis where it stopped.
    Listed(usize),
    Failed(GroundError),
}

/// A game's rules rewritten for grounding, and the domain analysis of their relaxed game
/// (see the module doc), which may be stopped and resumed.
struct Domains {
    symbols: SymbolTable,
    flats: Vec<crate::gdl::FlatRule>,
    excls: Vec<super::exclude::Exclusion>,
    excl_of: rustc_hash::FxHashMap<Sym, usize>,
    /// Per flat rule with a body: its instance relation and the variables that are its
    /// columns.
    inst: Vec<Option<(Sym, Vec<Sym>)>>,
    exact: rustc_hash::FxHashSet<(Sym, usize)>,
    unread: rustc_hash::FxHashSet<(Sym, usize)>,
    /// The instance relations that are listed (to keep to the budget).
    watch: Vec<(Sym, usize)>,
    interp: Interpreter,
    base: Sym,
    does: Sym,
}

impl Domains {
    /// Rewrites the rules and sets up their relaxed game (nothing is evaluated yet).
    fn new(game: &Game, budget: &Budget, eliminate: bool) -> Result<Domains, GroundError> {
        let flats = flatten(&game.rules).map_err(|e| GroundError::Invalid(e.to_string()))?;
        let mut symbols = game.symbols.clone();
        let flats = if eliminate { eliminate_locals(flats, &mut symbols) } else { flats };
        let flats = project_locals(flats, &mut symbols);
        let flats = split_components(flats, &mut symbols);
        let (flats, excls) = super::exclude::exclude_chains(flats, &mut symbols);
        // The relaxed stand-in (`any`) of each exclusion relation (`ne`), and its index.
        let excl_of: rustc_hash::FxHashMap<Sym, usize> = excls.iter().enumerate().map(|(e, x)| (x.ne, e)).collect();
        if tracing::enabled!(tracing::Level::TRACE) {
            for (i, fr) in flats.iter().enumerate() {
                tracing::trace!(i, rule = %show_rule(fr, &symbols), "rewritten rule");
            }
        }
        let base = symbols.intern(BASE);
        let does = symbols.intern(DOES);
        let init = symbols.intern(INIT);
        let next = symbols.intern(NEXT);
        let (vx, vr, vm) = (symbols.intern("?#x"), symbols.intern("?#r"), symbols.intern("?#m"));
        let relax_rel = |s: Sym| match s {
            kw::TRUE => base,
            kw::DOES => does,
            kw::INIT => init,
            kw::NEXT => next,
            s => s,
        };
        let relax_atom = |a: &Atom| match excl_of.get(&a.rel) {
            // "a candidate other than this one" is over-approximated by "a candidate".
            Some(&e) => Atom { rel: excls[e].any, args: a.args[..excls[e].key_len].to_vec() },
            None => Atom { rel: relax_rel(a.rel), args: a.args.clone() },
        };

        // Relations read only under negation: their rules are instantiated only for the head
        // atoms some instance's negative literal names (listed in `#demand_k`).
        let demand: rustc_hash::FxHashMap<(Sym, usize), Sym> = {
            let key = |a: &Atom| (a.rel, a.args.len());
            let mut pos_read = rustc_hash::FxHashSet::default();
            let mut neg_read = Vec::new();
            for fr in &flats {
                for l in &fr.body {
                    match l {
                        FlatLit::Pos(a) => {
                            pos_read.insert(key(a));
                        }
                        FlatLit::Neg(a) if !neg_read.contains(&key(a)) => neg_read.push(key(a)),
                        _ => {}
                    }
                }
            }
            neg_read
                .into_iter()
                .filter(|k| k.0 .0 as usize >= kw::NAMES.len() && !pos_read.contains(k))
                .enumerate()
                .map(|(n, k)| (k, symbols.intern(&format!("#demand{n}"))))
                .collect()
        };
        // The relaxed game, and for each flat rule its variables (the columns of `#inst_i`).
        let mut rules: Vec<Rule> = Vec::new();
        let mut inst: Vec<Option<(Sym, Vec<Sym>)>> = Vec::with_capacity(flats.len());
        // Rules that list a flat rule's instances or the atoms its negative literals name
        // (`#inst_i`, `#demand_k`), and the head rule whose guard they read.
        let mut twins: Vec<(usize, usize)> = Vec::new();
        // Head rules and demand rules, whose local variables are eliminated once they have their
        // guards (see below).
        let mut to_eliminate: Vec<usize> = Vec::new();
        for (i, fr) in flats.iter().enumerate() {
            if fr.body.is_empty() {
                rules.push(Rule { head: relax_atom(&fr.head), body: Vec::new(), pos: fr.pos });
                inst.push(None);
                continue;
            }
            let mut vars: Vec<Sym> = Vec::new();
            let mut flat_body: Vec<FlatLit> = Vec::new();
            if let Some(&d) = demand.get(&(fr.head.rel, fr.head.args.len())) {
                flat_body.push(FlatLit::Pos(Atom { rel: d, args: fr.head.args.clone() }));
            }
            for l in &fr.body {
                match l {
                    FlatLit::Pos(a) => {
                        a.for_each_var(&mut |v| {
                            if !vars.contains(&v) {
                                vars.push(v)
                            }
                        });
                        flat_body.push(FlatLit::Pos(relax_atom(a)));
                    }
                    FlatLit::Neg(_) => {}
                    l => flat_body.push(l.clone()),
                }
            }
            let body: Vec<Literal> = flat_body.iter().map(relaxed_literal).collect();
            let name = symbols.intern(&format!("#inst{i}"));
            let row = Atom { rel: name, args: vars.iter().map(|&v| Term::Var(v)).collect() };
            // The head's rule and the instances' rule have the same body: nothing reads
            // `#inst_i`, so the instances are listed once, after the fixpoint the head is part
            // of (a recursive component would list them again in every round).
            let h = rules.len();
            to_eliminate.push(h);
            rules.push(Rule { head: relax_atom(&fr.head), body: body.clone(), pos: fr.pos });
            twins.push((h, rules.len()));
            rules.push(Rule { head: row, body: body.clone(), pos: fr.pos });
            for l in &fr.body {
                if let FlatLit::Neg(a) = l {
                    if let Some(&d) = demand.get(&(a.rel, a.args.len())) {
                        let head = Atom { rel: d, args: a.args.clone() };
                        twins.push((h, rules.len()));
                        to_eliminate.push(rules.len());
                        rules.push(Rule { head, body: body.clone(), pos: fr.pos });
                    }
                }
            }
            inst.push(Some((name, vars)));
        }
        let var = Term::Var;
        rules.push(Rule {
            head: Atom { rel: base, args: vec![var(vx)] },
            body: vec![Literal::Atom(Atom { rel: init, args: vec![var(vx)] })],
            pos: Default::default(),
        });
        rules.push(Rule {
            head: Atom { rel: base, args: vec![var(vx)] },
            body: vec![Literal::Atom(Atom { rel: next, args: vec![var(vx)] })],
            pos: Default::default(),
        });
        rules.push(Rule {
            head: Atom { rel: does, args: vec![var(vr), var(vm)] },
            body: vec![Literal::Atom(Atom { rel: kw::LEGAL, args: vec![var(vr), var(vm)] })],
            pos: Default::default(),
        });
        for ex in &excls {
            let vs: Vec<Term> = (0..ex.key_len + ex.width).map(|i| var(symbols.intern(&format!("?#e{i}")))).collect();
            rules.push(Rule {
                head: Atom { rel: ex.any, args: vs[..ex.key_len].to_vec() },
                body: vec![Literal::Atom(Atom { rel: ex.cand, args: vs })],
                pos: Default::default(),
            });
        }
        // Demand for relations read positively (see `guard`): not for keywords, the relaxed
        // game's own relations, or relations some rule reads under negation.
        let guards = {
            let mut is_inst = vec![false; rules.len()];
            let mut twin: Vec<Vec<usize>> = vec![Vec::new(); rules.len()];
            for &(h, i) in &twins {
                is_inst[i] = true;
                twin[h].push(i);
            }
            let neg_read: rustc_hash::FxHashSet<(Sym, usize)> = flats
                .iter()
                .flat_map(|fr| fr.body.iter())
                .filter_map(|l| if let FlatLit::Neg(a) = l { Some((a.rel, a.args.len())) } else { None })
                .collect();
            let own: rustc_hash::FxHashSet<Sym> = [base, does, init, next]
                .into_iter()
                .chain(demand.values().copied())
                .chain(inst.iter().flatten().map(|(s, _)| *s))
                .collect();
            let eligible =
                |k: (Sym, usize)| k.0 .0 as usize >= kw::NAMES.len() && !own.contains(&k.0) && !neg_read.contains(&k);
            super::guard::add_guards(&mut rules, &is_inst, &twin, eligible, &mut symbols)
        };
        // Head rules compute only which atoms hold, and demand rules which atoms their negative
        // literal names: neither needs every instance. Their local variables are eliminated (in
        // the relaxed game, which has no negation, each rule's relation is kept), so that a rule
        // with many instances per head does not list them all in every round of the fixpoint.
        // After the guards, which are then those of the rules as written, and so are the
        // relations (the instances are unchanged). The parts made are named `#relax_k`.
        {
            let mut relax_elim = Eliminator::new("#relax");
            let mut parts = Vec::new();
            for &d in &to_eliminate {
                let r = &rules[d];
                let body = r.body.iter().map(flat_literal).collect();
                let at = parts.len();
                relax_elim.eliminate(
                    crate::gdl::FlatRule { head: r.head.clone(), body, pos: r.pos },
                    &mut symbols,
                    &mut parts,
                );
                rules[d] = to_rule(parts.remove(at));
            }
            rules.extend(parts.into_iter().map(to_rule));
        }
        let relaxed = Game { name: game.name.clone(), rules, symbols: symbols.clone() };
        let mut interp =
            Interpreter::materialized(&relaxed, budget.deadline).map_err(|e| GroundError::Invalid(e.to_string()))?;
        interp.lead_with(demand.iter().map(|(k, &d)| (d, k.1)));
        interp.lead_with(guards);
        // Relations whose relaxed tuples are atoms true in every state: no rule in their cone
        // reads the state, the moves, an exclusion, or anything under negation (the relaxed
        // rules are then the rules, restricted by demand or guards at most). A positive literal
        // of one holds in every instance (the relaxed join found its atom), so it is left out of
        // the ground bodies; and such a relation no ground body reads (never negated, not a
        // keyword, no exclusion's candidates) needs no instances at all.
        let exact: rustc_hash::FxHashSet<(Sym, usize)> = {
            let key = |a: &Atom| (a.rel, a.args.len());
            let mut exact: rustc_hash::FxHashSet<(Sym, usize)> = flats.iter().map(|fr| key(&fr.head)).collect();
            loop {
                let before = exact.len();
                for fr in &flats {
                    if !exact.contains(&key(&fr.head)) {
                        continue;
                    }
                    let inexact = fr.body.iter().any(|l| match l {
                        FlatLit::Neg(_) => true,
                        FlatLit::Pos(a) => {
                            a.rel == kw::TRUE || a.rel == kw::DOES || excl_of.contains_key(&a.rel) || {
                                let k = key(a);
                                !exact.contains(&k) && flats.iter().any(|g| key(&g.head) == k)
                            }
                        }
                        _ => false,
                    });
                    if inexact {
                        exact.remove(&key(&fr.head));
                    }
                }
                if exact.len() == before {
                    break;
                }
            }
            exact
        };
        let unread: rustc_hash::FxHashSet<(Sym, usize)> = {
            let neg_read: rustc_hash::FxHashSet<(Sym, usize)> = flats
                .iter()
                .flat_map(|fr| fr.body.iter())
                .filter_map(|l| if let FlatLit::Neg(a) = l { Some((a.rel, a.args.len())) } else { None })
                .collect();
            let cands: rustc_hash::FxHashSet<Sym> = excls.iter().map(|x| x.cand).collect();
            exact
                .iter()
                .copied()
                .filter(|k| k.0 .0 as usize >= kw::NAMES.len() && !neg_read.contains(k) && !cands.contains(&k.0))
                .collect()
        };

        // Instance relations past the budget end the analysis early (a first try as written
        // that is too large then costs less).
        let watch: Vec<(Sym, usize)> = flats
            .iter()
            .zip(&inst)
            .filter(|(fr, _)| !unread.contains(&(fr.head.rel, fr.head.args.len())))
            .filter_map(|(_, i)| i.as_ref().map(|(name, vars)| (*name, vars.len())))
            .collect();
        Ok(Domains { symbols, flats, excls, excl_of, inst, exact, unread, watch, interp, base, does })
    }

    /// Runs the domain analysis, or resumes it, until it is complete or more than `limit`
    /// instances are listed.
    fn analyse(&mut self, budget: &Budget, limit: usize) -> Result<(), Stop> {
        let t_domains = Instant::now();
        let interp = &mut self.interp;
        let complete = interp.eval_static_limited(&self.watch, limit).map_err(Stop::Listed)?;
        let failed = |e| Err(Stop::Failed(e));
        if interp.timed_out() {
            return failed(GroundError::Timeout("computing domains".into()));
        }
        if !complete || interp.overflowed() {
            return failed(GroundError::TooLarge("the domain analysis exceeded the interpreter's limits".into()));
        }
        budget.check_time("computing domains").map_err(Stop::Failed)?;
        tracing::debug!(ms = t_domains.elapsed().as_secs_f64() * 1000.0, "domains computed");
        let listed = self.listed();
        if listed > limit {
            return Err(Stop::Listed(listed));
        }
        Ok(())
    }

    /// The instances listed so far.
    fn listed(&self) -> usize {
        self.watch.iter().map(|&(rel, arity)| self.interp.tuple_count(rel, arity)).sum()
    }

    /// What eliminating local variables would do to the rules with the most instances listed
    /// so far (those that hold most of them): their instances, and how many their residual
    /// rules (with the locals eliminated, see [`eliminate_locals`]) would have. The latter
    /// are exactly the distinct values, among the rows listed, of the variables a residual
    /// rule keeps (not counting the rules of the parts eliminated).
    fn elimination_estimate(&self) -> (usize, usize) {
        let mut sizes: Vec<(usize, usize)> = (0..self.flats.len())
            .filter_map(|i| {
                let (name, vars) = self.inst[i].as_ref()?;
                let fr = &self.flats[i];
                if self.unread.contains(&(fr.head.rel, fr.head.args.len())) {
                    return None;
                }
                Some((self.interp.tuple_count(*name, vars.len()), i))
            })
            .collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        let listed: usize = sizes.iter().map(|s| s.0).sum();
        let (mut before, mut after) = (0, 0);
        let mut symbols = self.symbols.clone();
        let mut elim = Eliminator::new("#probe");
        for &(n, i) in sizes.iter().take(16) {
            if 5 * before >= 4 * listed {
                break;
            }
            before += n;
            let (name, vars) = self.inst[i].as_ref().expect("listed");
            let mut out = Vec::new();
            elim.eliminate(self.flats[i].clone(), &mut symbols, &mut out);
            let mut kept: Vec<usize> = Vec::new();
            for l in &out[0].body {
                if let FlatLit::Pos(a) = l {
                    a.for_each_var(&mut |v| {
                        if let Some(k) = vars.iter().position(|&x| x == v) {
                            if !kept.contains(&k) {
                                kept.push(k);
                            }
                        }
                    });
                }
            }
            if kept.len() == vars.len() {
                after += n;
                continue;
            }
            let mut seen: rustc_hash::FxHashSet<u64> = Default::default();
            let _ = self.interp.for_each_tuple(*name, vars.len(), |t| {
                let mut h = rustc_hash::FxHasher::default();
                for &k in &kept {
                    h.write_u32(t[k].0);
                }
                seen.insert(h.finish());
            });
            after += seen.len();
        }
        (before, after)
    }

    /// Instantiates the rules from a complete domain analysis.
    fn instantiate(self, game: &Game, budget: &Budget) -> Result<Grounding, GroundError> {
        let Domains { symbols, flats, excls, excl_of, inst, exact, unread, interp, base, does, .. } = self;
        let roles: Vec<Sym> = game.roles();
        let mut bases = Vec::new();
        interp.for_each_tuple(base, 1, |t| bases.push(t[0])).map_err(GroundError::TooLarge)?;
        let mut does_tuples = Vec::new();
        interp.for_each_tuple(does, 2, |t| does_tuples.push((t[0], t[1]))).map_err(GroundError::TooLarge)?;
        // Each rule's instances: the number, and the variables' values row by row.
        let mut rows: Vec<(usize, Vec<TermId>)> = Vec::with_capacity(flats.len());
        let mut total = 0usize;
        for (i, fr) in flats.iter().enumerate() {
            let mut row = Vec::new();
            let mut n = 1;
            if unread.contains(&(fr.head.rel, fr.head.args.len())) {
                n = 0;
            } else if let Some((name, vars)) = &inst[i] {
                n = 0;
                interp
                    .for_each_tuple(*name, vars.len(), |t| {
                        n += 1;
                        row.extend_from_slice(t)
                    })
                    .map_err(GroundError::TooLarge)?;
            }
            total += n;
            if n >= 10_000 && tracing::enabled!(tracing::Level::DEBUG) {
                tracing::debug!(instances = n, rule = %show_rule(fr, &symbols), "large rule");
            }
            if total > budget.max_instances {
                return Err(GroundError::TooLarge(format!(
                    "more than {} rule instances (at the rule on line {})",
                    budget.max_instances, fr.pos.line
                )));
            }
            rows.push((n, row));
        }
        let mut cands: Vec<Vec<TermId>> = Vec::with_capacity(excls.len());
        for ex in &excls {
            let mut c = Vec::new();
            interp
                .for_each_tuple(ex.cand, ex.key_len + ex.width, |t| c.extend_from_slice(t))
                .map_err(GroundError::TooLarge)?;
            cands.push(c);
        }
        let mut terms = interp.into_terms();
        let role_terms: Vec<TermId> = roles.iter().map(|&r| terms.intern(r, &[])).collect();
        let inputs: Vec<(usize, TermId)> = does_tuples
            .iter()
            .filter_map(|&(r, m)| role_terms.iter().position(|&x| x == r).map(|ri| (ri, m)))
            .collect();

        // Instantiate: head and body atoms of every instance, as terms of the original relations.
        let mut out_rules = Vec::with_capacity(total);
        let mut lits: Vec<GLit> = Vec::new();
        let mut scratch = Vec::new();
        // The exclusion atoms the instances read, per exclusion relation.
        let mut needed: Vec<rustc_hash::FxHashSet<TermId>> = vec![Default::default(); excls.len()];
        for (i, fr) in flats.iter().enumerate() {
            budget.check_time("instantiating rules")?;
            let vars: &[Sym] = inst[i].as_ref().map_or(&[], |(_, v)| v);
            let (n, row) = &rows[i];
            let excl_at: Vec<Option<usize>> = fr
                .body
                .iter()
                .map(|l| match l {
                    FlatLit::Pos(a) => excl_of.get(&a.rel).copied(),
                    _ => None,
                })
                .collect();
            let always: Vec<bool> = fr
                .body
                .iter()
                .map(|l| matches!(l, FlatLit::Pos(a) if exact.contains(&(a.rel, a.args.len()))))
                .collect();
            if *n == 0 {
                continue;
            }
            let mut head = GAtom::new(&fr.head, vars, *n, &mut terms);
            // The body literals the ground rules keep: (compiled atom, negated, exclusion).
            let mut body: Vec<(GAtom, bool, Option<usize>)> = Vec::new();
            for (j, l) in fr.body.iter().enumerate() {
                let (a, neg) = match l {
                    FlatLit::Pos(_) if always[j] => continue,
                    FlatLit::Pos(a) => (a, false),
                    FlatLit::Neg(a) => (a, true),
                    // Held in the relaxed join, and ground: already true.
                    FlatLit::Distinct(..) | FlatLit::Same(..) => continue,
                };
                body.push((GAtom::new(a, vars, *n, &mut terms), neg, excl_at[j]));
            }
            for k in 0..*n {
                let vals = &row[k * vars.len()..(k + 1) * vars.len()];
                let head = head.ground(vals, &mut terms, &mut scratch);
                let start = lits.len() as u32;
                for (a, neg, excl) in &mut body {
                    let atom = a.ground(vals, &mut terms, &mut scratch);
                    if let Some(e) = *excl {
                        needed[e].insert(atom);
                    }
                    lits.push(GLit { atom, neg: *neg });
                }
                if lits.len() > budget.max_literals {
                    return Err(GroundError::TooLarge(format!(
                        "more than {} ground body literals",
                        budget.max_literals
                    )));
                }
                out_rules.push(GRule { head, start, len: lits.len() as u32 - start });
            }
        }
        super::exclude::build_chains(&excls, &cands, &needed, &mut terms, &mut out_rules, &mut lits);
        if out_rules.len() > budget.max_instances {
            return Err(GroundError::TooLarge(format!("more than {} rule instances", budget.max_instances)));
        }
        Ok(Grounding {
            terms,
            symbols: game.symbols.clone(),
            roles: roles.iter().map(|&r| game.symbols.name(r).to_string()).collect(),
            role_terms,
            rules: out_rules,
            lits,
            bases,
            inputs,
        })
    }
}

/// Projects out variables that only one positive body literal uses: in
/// `(<= (next (cell ?x ?y ?p)) (true (cell ?x ?y ?p)) (does ?r (move ?x1 ?y1 ?x2 ?y2)) ...)`
/// where `?x2 ?y2` appear nowhere else, the literal becomes `(#proj_k ?r ?x1 ?y1)` with a
/// new rule `(<= (#proj_k ?r ?x1 ?y1) (does ?r (move ?x1 ?y1 ?x2 ?y2)))`. The meaning is the
/// same (those variables are existential), but the rule's instances no longer multiply by
/// their values: a frame axiom gets one instance per cell and moved-from square, not per
/// cell and move.
fn project_locals(flats: Vec<crate::gdl::FlatRule>, symbols: &mut SymbolTable) -> Vec<crate::gdl::FlatRule> {
    use crate::gdl::FlatRule;
    let mut out = Vec::with_capacity(flats.len());
    let mut made: rustc_hash::FxHashMap<(Atom, Vec<Sym>), Sym> = rustc_hash::FxHashMap::default();
    let mut extra = Vec::new();
    for mut fr in flats {
        for j in 0..fr.body.len() {
            let FlatLit::Pos(a) = &fr.body[j] else { continue };
            let mut elsewhere: Vec<Sym> = Vec::new();
            fr.head.for_each_var(&mut |x| elsewhere.push(x));
            for (k, l) in fr.body.iter().enumerate() {
                if k != j {
                    l.for_each_var(&mut |x| elsewhere.push(x));
                }
            }
            let mut mine: Vec<Sym> = Vec::new();
            a.for_each_var(&mut |x| {
                if !mine.contains(&x) {
                    mine.push(x)
                }
            });
            let kept: Vec<Sym> = mine.iter().copied().filter(|x| elsewhere.contains(x)).collect();
            if kept.len() == mine.len() || fr.body.len() == 1 {
                continue;
            }
            // One projection per literal shape, shared by every rule that needs it.
            let key = (a.clone(), kept.clone());
            let name = *made.entry(key).or_insert_with(|| {
                let name = symbols.intern(&format!("#proj{}", extra.len()));
                extra.push(FlatRule {
                    head: Atom { rel: name, args: kept.iter().map(|&v| Term::Var(v)).collect() },
                    body: vec![FlatLit::Pos(a.clone())],
                    pos: fr.pos,
                });
                name
            });
            fr.body[j] = FlatLit::Pos(Atom { rel: name, args: kept.iter().map(|&v| Term::Var(v)).collect() });
        }
        out.push(fr);
    }
    out.extend(extra);
    out
}

/// Eliminates local variables (those not in the head) one at a time, as in bucket
/// elimination: the literals that use the variable become a new relation over their other
/// variables that are used elsewhere. In
/// `(<= (total ?t) (true (g a ?n1)) (true (g b ?n2)) (sum ?n1 ?n2 ?s1) (true (g c ?n3)) (sum ?s1 ?n3 ?t))`
/// eliminating `?n1` gives `(#elim_k ?n2 ?s1)`, then `?n2` gives `(#elim_j ?s1)`, and the
/// instances number guesses squared, not guesses cubed. Each step picks the variable whose
/// literals have the fewest variables, and only when those literals' positive ones bind all
/// of them (so the new rule is safe); literals over the new relation's variables alone are
/// copied into it as filters. The meaning is unchanged: the eliminated variable is
/// existential and occurs nowhere else.
fn eliminate_locals(flats: Vec<crate::gdl::FlatRule>, symbols: &mut SymbolTable) -> Vec<crate::gdl::FlatRule> {
    let mut elim = Eliminator::new("#elim");
    let mut out = Vec::with_capacity(flats.len());
    for fr in flats {
        elim.eliminate(fr, symbols, &mut out);
    }
    out
}

/// [`eliminate_locals`] one rule at a time, its parts shared by every rule that has them and
/// named `prefix` and a number.
struct Eliminator {
    prefix: &'static str,
    made: rustc_hash::FxHashMap<(Vec<FlatLit>, Vec<Term>), Sym>,
}

impl Eliminator {
    fn new(prefix: &'static str) -> Eliminator {
        Eliminator { prefix, made: Default::default() }
    }

    /// Appends `fr` with its locals eliminated to `out`, then the rules of the parts that
    /// made (themselves eliminated).
    fn eliminate(&mut self, fr: crate::gdl::FlatRule, symbols: &mut SymbolTable, out: &mut Vec<crate::gdl::FlatRule>) {
        use crate::gdl::FlatRule;
        let vars_of = |l: &FlatLit| {
            let mut v = Vec::new();
            l.for_each_var(&mut |x| {
                if !v.contains(&x) {
                    v.push(x)
                }
            });
            v
        };
        let mut work: Vec<FlatRule> = vec![fr];
        while let Some(mut fr) = work.pop() {
            loop {
                let mut head_vars = Vec::new();
                fr.head.for_each_var(&mut |x| head_vars.push(x));
                let lit_vars: Vec<Vec<Sym>> = fr.body.iter().map(vars_of).collect();
                let n = fr.body.len();
                // (group, its variables, interface)
                let mut best: Option<(Vec<usize>, Vec<Sym>, Vec<Sym>)> = None;
                let mut tried: Vec<Sym> = Vec::new();
                for v in lit_vars.iter().flatten().copied() {
                    if head_vars.contains(&v) || tried.contains(&v) {
                        continue;
                    }
                    tried.push(v);
                    let group: Vec<usize> = (0..n).filter(|&i| lit_vars[i].contains(&v)).collect();
                    if group.len() < 2 || group.len() == n {
                        continue;
                    }
                    let mut gvars: Vec<Sym> = Vec::new();
                    for &i in &group {
                        for &x in &lit_vars[i] {
                            if !gvars.contains(&x) {
                                gvars.push(x);
                            }
                        }
                    }
                    let safe = gvars.iter().all(|x| {
                        group.iter().any(|&i| matches!(&fr.body[i], FlatLit::Pos(_)) && lit_vars[i].contains(x))
                    });
                    if !safe {
                        continue;
                    }
                    let iface: Vec<Sym> = gvars
                        .iter()
                        .copied()
                        .filter(|x| {
                            head_vars.contains(x) || (0..n).any(|i| !group.contains(&i) && lit_vars[i].contains(x))
                        })
                        .collect();
                    // A part that would take in the whole body (with its filters) is the rule
                    // itself: nothing to gain, and it would name itself.
                    let takes_all = (0..n).all(|i| {
                        group.contains(&i) || (!lit_vars[i].is_empty() && lit_vars[i].iter().all(|x| iface.contains(x)))
                    });
                    if takes_all {
                        continue;
                    }
                    if best.as_ref().is_none_or(|(_, bv, _)| gvars.len() < bv.len()) {
                        best = Some((group, gvars, iface));
                    }
                }
                let Some((group, _, iface)) = best else { break };
                let part = part_with_filters(&fr.body, &lit_vars, &group, &iface, |_| true);
                let args: Vec<Term> = iface.iter().map(|&v| Term::Var(v)).collect();
                let key = (part.clone(), args.clone());
                let name = match self.made.get(&key) {
                    Some(&name) => name,
                    None => {
                        let name = symbols.intern(&format!("{}{}", self.prefix, self.made.len()));
                        self.made.insert(key, name);
                        // The new rule may have locals of its own to eliminate.
                        work.push(FlatRule { head: Atom { rel: name, args: args.clone() }, body: part, pos: fr.pos });
                        name
                    }
                };
                let mut body: Vec<FlatLit> =
                    (0..n).filter(|i| !group.contains(i)).map(|i| fr.body[i].clone()).collect();
                body.push(FlatLit::Pos(Atom { rel: name, args }));
                fr.body = body;
            }
            out.push(fr);
        }
    }
}

/// Splits rule bodies into parts that share only head variables. In chess's
/// `(<= (next (cell ?x ?y ?p)) (does ?r (move ...)) (true (cell ?x ?y ?p)) (not ...) ...)`
/// the move's literals and `(true (cell ?x ?y ?p))` meet only in `?x ?y`: the move part
/// becomes `(#split_k ?x ?y)` with a rule of its own, and the instances number cells times
/// moves plus cells times contents, not cells times contents times moves. A part is split
/// off only if it has a variable outside the head and its own positive literals bind every
/// head variable it uses (so the new rule is safe).
fn split_components(flats: Vec<crate::gdl::FlatRule>, symbols: &mut SymbolTable) -> Vec<crate::gdl::FlatRule> {
    // Relations that depend on the state or the moves.
    let mut dynamic: rustc_hash::FxHashSet<Sym> = [kw::TRUE, kw::DOES].into_iter().collect();
    loop {
        let before = dynamic.len();
        for fr in &flats {
            let reads_dynamic = fr.body.iter().any(|l| match l {
                FlatLit::Pos(a) | FlatLit::Neg(a) => dynamic.contains(&a.rel),
                _ => false,
            });
            if reads_dynamic {
                dynamic.insert(fr.head.rel);
            }
        }
        if dynamic.len() == before {
            break;
        }
    }
    use crate::gdl::FlatRule;
    let mut out = Vec::with_capacity(flats.len());
    let mut extra = Vec::new();
    let mut next_id = 0usize;
    let mut made: rustc_hash::FxHashMap<(Vec<FlatLit>, Vec<Term>), Sym> = rustc_hash::FxHashMap::default();
    for fr in flats {
        let mut head_vars = Vec::new();
        fr.head.for_each_var(&mut |x| head_vars.push(x));
        let lit_vars: Vec<Vec<Sym>> = fr
            .body
            .iter()
            .map(|l| {
                let mut v = Vec::new();
                l.for_each_var(&mut |x| v.push(x));
                v
            })
            .collect();
        // Union-find over literals joined by a shared variable outside the head.
        let n = fr.body.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], i: usize) -> usize {
            let mut r = i;
            while p[r] != r {
                r = p[r];
            }
            p[i] = r;
            r
        }
        let mut owner: rustc_hash::FxHashMap<Sym, usize> = rustc_hash::FxHashMap::default();
        for (i, vs) in lit_vars.iter().enumerate() {
            for v in vs.iter().filter(|v| !head_vars.contains(v)) {
                match owner.get(v) {
                    Some(&j) => {
                        let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                        parent[a] = b;
                    }
                    None => {
                        owner.insert(*v, i);
                    }
                }
            }
        }
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut group_of: rustc_hash::FxHashMap<usize, usize> = rustc_hash::FxHashMap::default();
        for i in 0..n {
            let r = find(&mut parent, i);
            let g = *group_of.entry(r).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(i);
        }
        if groups.len() < 2 {
            out.push(fr);
            continue;
        }
        let mut body = Vec::new();
        let mut split_any = false;
        for g in &groups {
            let has_local = g.iter().any(|&i| lit_vars[i].iter().any(|v| !head_vars.contains(v)));
            let mut bound: Vec<Sym> = Vec::new();
            for &i in g {
                if let FlatLit::Pos(a) = &fr.body[i] {
                    a.for_each_var(&mut |x| bound.push(x));
                }
            }
            let mut iface: Vec<Sym> = Vec::new();
            for &i in g {
                for v in &lit_vars[i] {
                    if head_vars.contains(v) && !iface.contains(v) {
                        iface.push(*v);
                    }
                }
            }
            let safe = iface.iter().all(|v| bound.contains(v));
            // Splitting the only part that has locals off a rule with nothing else gains
            // nothing; so does a part of one literal (projection handled those).
            if !has_local || !safe || g.len() == n {
                body.extend(g.iter().map(|&i| fr.body[i].clone()));
                continue;
            }
            split_any = true;
            // The part, and a copy of each other static literal over the interface alone (a
            // filter like `(istype ?piece king)`: without it the part lists values the rule
            // rejects). Literals over the state are not copied: they would only add inputs
            // to the part's gates, which the rule reads anyway.
            let part = part_with_filters(&fr.body, &lit_vars, g, &iface, |l| match l {
                FlatLit::Pos(a) | FlatLit::Neg(a) => !dynamic.contains(&a.rel),
                FlatLit::Distinct(..) | FlatLit::Same(..) => true,
            });
            let args: Vec<Term> = iface.iter().map(|&v| Term::Var(v)).collect();
            // One relation per part, shared by every rule that has it (the disjuncts of an
            // `or` often repeat one).
            let key = (part.clone(), args.clone());
            let name = match made.get(&key) {
                Some(&name) => name,
                None => {
                    let name = symbols.intern(&format!("#split{next_id}"));
                    next_id += 1;
                    made.insert(key, name);
                    extra.push(FlatRule { head: Atom { rel: name, args: args.clone() }, body: part, pos: fr.pos });
                    name
                }
            };
            body.push(FlatLit::Pos(Atom { rel: name, args }));
        }
        if split_any {
            out.push(FlatRule { head: fr.head, body, pos: fr.pos });
        } else {
            out.push(fr);
        }
    }
    out.extend(extra);
    out
}

/// The literals `group` of `body`, and a copy of each other literal over `iface` alone that
/// `copy` accepts (a filter, so the part does not list values the whole rule rejects).
/// `lit_vars[i]` are the variables of `body[i]`.
fn part_with_filters(
    body: &[FlatLit],
    lit_vars: &[Vec<Sym>],
    group: &[usize],
    iface: &[Sym],
    copy: impl Fn(&FlatLit) -> bool,
) -> Vec<FlatLit> {
    let mut part: Vec<FlatLit> = group.iter().map(|&i| body[i].clone()).collect();
    for (i, vs) in lit_vars.iter().enumerate() {
        if !group.contains(&i) && !vs.is_empty() && vs.iter().all(|v| iface.contains(v)) && copy(&body[i]) {
            part.push(body[i].clone());
        }
    }
    part
}

/// A relaxed game's literal (positive, or a disequality or equality) as a rule's literal.
fn relaxed_literal(l: &FlatLit) -> Literal {
    match l {
        FlatLit::Pos(a) => Literal::Atom(a.clone()),
        FlatLit::Distinct(a, b) => Literal::Distinct(a.clone(), b.clone()),
        FlatLit::Same(a, b) => Literal::Not(Box::new(Literal::Distinct(a.clone(), b.clone()))),
        FlatLit::Neg(_) => unreachable!("the relaxed game has no negation"),
    }
}

/// The inverse of [`relaxed_literal`].
fn flat_literal(l: &Literal) -> FlatLit {
    match l {
        Literal::Atom(a) => FlatLit::Pos(a.clone()),
        Literal::Distinct(a, b) => FlatLit::Distinct(a.clone(), b.clone()),
        Literal::Not(inner) => match &**inner {
            Literal::Distinct(a, b) => FlatLit::Same(a.clone(), b.clone()),
            _ => unreachable!("the relaxed game has no negation"),
        },
        _ => unreachable!("the relaxed game's rules are flat"),
    }
}

fn to_rule(fr: crate::gdl::FlatRule) -> Rule {
    Rule { body: fr.body.iter().map(relaxed_literal).collect(), head: fr.head, pos: fr.pos }
}

/// A flat rule as text, for logs.
fn show_rule(fr: &crate::gdl::FlatRule, symbols: &SymbolTable) -> String {
    use crate::gdl::write_atom;
    let mut s = String::from("(<= ");
    write_atom(&fr.head, symbols, &mut s);
    for l in &fr.body {
        s.push(' ');
        match l {
            FlatLit::Pos(a) => write_atom(a, symbols, &mut s),
            FlatLit::Neg(a) => {
                s.push_str("(not ");
                write_atom(a, symbols, &mut s);
                s.push(')');
            }
            FlatLit::Distinct(a, b) | FlatLit::Same(a, b) => {
                s.push_str(if matches!(l, FlatLit::Distinct(..)) { "(distinct " } else { "(= " });
                crate::gdl::write_term(a, symbols, &mut s);
                s.push(' ');
                crate::gdl::write_term(b, symbols, &mut s);
                s.push(')');
            }
        }
    }
    s.push(')');
    s
}

/// A rule's atom compiled against the rule's variables (the columns of its instance rows),
/// with the atom of the last row it was grounded for (consecutive rows, listed in join order,
/// often agree on its variables) and a small direct-mapped memo of earlier ones (an atom
/// over the inner variables of a join recurs with each outer row). Either saves a probe of
/// the term store, whose table of millions of terms misses the cache.
struct GAtom {
    rel: Sym,
    args: Vec<GPat>,
    /// The columns it reads, their values in the last row, and its atom then.
    vars: Vec<usize>,
    last: Vec<TermId>,
    atom: Option<TermId>,
    memo: AtomMemo,
}

/// [`GAtom`]'s memo: `SLOTS` entries of the values of its columns followed by the atom, each
/// at the slot its values hash to, allocated at the first miss of the last-row check. Only a
/// rule with at least `MIN_ROWS` instances has one (a smaller one would spend more filling
/// the slots than it saves), and it is dropped when fewer than one probe in eight hit after
/// the first `TRIAL` (a head whose every instance is a new atom).
struct AtomMemo {
    slots: Vec<u32>,
    probes: u32,
    hits: u32,
    off: bool,
}

impl AtomMemo {
    const SLOTS: usize = 4096;
    const TRIAL: u32 = 4096;
    const MIN_ROWS: usize = 4 * Self::SLOTS;
    const EMPTY: u32 = u32::MAX;

    /// The memo of an atom of a rule with `rows` instances (off if too few).
    fn for_rows(rows: usize) -> AtomMemo {
        AtomMemo { slots: Vec::new(), probes: 0, hits: 0, off: rows < Self::MIN_ROWS }
    }

    /// The slot's offset in `slots` for the values `key` (the memo allocated if not yet).
    #[inline]
    fn slot(&mut self, key: impl Iterator<Item = u32>, width: usize) -> usize {
        if self.slots.is_empty() {
            self.slots = vec![Self::EMPTY; Self::SLOTS * (width + 1)];
        }
        let mut h = rustc_hash::FxHasher::default();
        for v in key {
            h.write_u32(v);
        }
        (crate::interp::fold32(h.finish()) as usize & (Self::SLOTS - 1)) * (width + 1)
    }

    /// Counts a probe, and turns the memo off if it does not pay.
    #[inline]
    fn count(&mut self, hit: bool) {
        self.probes += 1;
        self.hits += hit as u32;
        if self.probes == Self::TRIAL && self.hits < Self::TRIAL / 8 {
            self.off = true;
            self.slots = Vec::new();
        }
    }
}

/// A term pattern over a row: a column, a ground term, or a function of patterns.
enum GPat {
    Var(usize),
    Term(TermId),
    Func(Sym, Vec<GPat>),
}

impl GAtom {
    /// The atom `a` of a rule over `vars` with `rows` instances.
    fn new(a: &Atom, vars: &[Sym], rows: usize, terms: &mut TermStore) -> GAtom {
        fn pat(t: &Term, vars: &[Sym], terms: &mut TermStore, cols: &mut Vec<usize>) -> GPat {
            match t {
                Term::Var(v) => {
                    let c = vars.iter().position(|x| x == v).expect("safe rule: every variable is bound");
                    if !cols.contains(&c) {
                        cols.push(c);
                    }
                    GPat::Var(c)
                }
                Term::Const(c) => GPat::Term(terms.intern(*c, &[])),
                Term::Func(f, args) => GPat::Func(*f, args.iter().map(|a| pat(a, vars, terms, cols)).collect()),
            }
        }
        let mut cols = Vec::new();
        let args = a.args.iter().map(|t| pat(t, vars, terms, &mut cols)).collect();
        GAtom {
            rel: a.rel,
            args,
            last: Vec::with_capacity(cols.len()),
            vars: cols,
            atom: None,
            memo: AtomMemo::for_rows(rows),
        }
    }

    /// The atom for the row `vals`.
    fn ground(&mut self, vals: &[TermId], terms: &mut TermStore, scratch: &mut Vec<TermId>) -> TermId {
        if let Some(atom) = self.atom {
            if self.vars.iter().zip(&self.last).all(|(&c, &v)| vals[c] == v) {
                return atom;
            }
        }
        self.last.clear();
        self.last.extend(self.vars.iter().map(|&c| vals[c]));
        let width = self.vars.len();
        let slot = if width > 0 && !self.memo.off {
            let at = self.memo.slot(self.last.iter().map(|t| t.0), width);
            let entry = &self.memo.slots[at..at + width + 1];
            let hit = entry[width] != AtomMemo::EMPTY && entry[..width].iter().zip(&self.last).all(|(&m, v)| m == v.0);
            if hit {
                let atom = TermId(entry[width]);
                self.memo.count(true);
                self.atom = Some(atom);
                return atom;
            }
            self.memo.count(false);
            (!self.memo.off).then_some(at)
        } else {
            None
        };
        fn build(p: &GPat, vals: &[TermId], terms: &mut TermStore, scratch: &mut Vec<TermId>) -> TermId {
            match p {
                GPat::Var(c) => vals[*c],
                GPat::Term(t) => *t,
                GPat::Func(f, args) => {
                    let base = scratch.len();
                    for a in args {
                        let g = build(a, vals, terms, scratch);
                        scratch.push(g);
                    }
                    let id = terms.intern(*f, &scratch[base..]);
                    scratch.truncate(base);
                    id
                }
            }
        }
        let base = scratch.len();
        for a in &self.args {
            let g = build(a, vals, terms, scratch);
            scratch.push(g);
        }
        let atom = terms.intern(self.rel, &scratch[base..]);
        scratch.truncate(base);
        if let Some(at) = slot {
            let entry = &mut self.memo.slots[at..at + width + 1];
            for (m, v) in entry.iter_mut().zip(&self.last) {
                *m = v.0;
            }
            entry[width] = atom.0;
        }
        self.atom = Some(atom);
        atom
    }
}
