//! Static checks of a game description: arities, where keywords may stand, safety,
//! stratified negation, required relations. Problems are collected, never panicked on.

use super::ast::{Atom, Literal, Pos, Term};
use super::deps::rule_deps;
use super::normal::{expand_rule, FlatLit};
use super::symbol::{kw, Sym};
use super::Game;
use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One problem found in a game description.
#[derive(Clone, Debug)]
pub struct Diag {
    pub severity: Severity,
    pub pos: Pos,
    pub msg: String,
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{}:{}: {s}: {}", self.pos.line, self.pos.col, self.msg)
    }
}

/// One stratum: relations that may be evaluated together once the lower strata are known.
#[derive(Clone, Debug)]
pub struct StratumInfo {
    pub level: usize,
    pub relations: Vec<String>,
}

/// What validation found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub roles: Vec<String>,
    /// Relation name, arity, number of rules (facts included) defining it.
    pub relations: Vec<(String, usize, usize)>,
    pub strata: Vec<StratumInfo>,
    pub diags: Vec<Diag>,
}

impl Report {
    pub fn errors(&self) -> impl Iterator<Item = &Diag> {
        self.diags.iter().filter(|d| d.severity == Severity::Error)
    }
    pub fn is_ok(&self) -> bool {
        self.errors().next().is_none()
    }
}

fn keyword_arity(s: Sym) -> Option<usize> {
    Some(match s {
        kw::ROLE | kw::INIT | kw::TRUE | kw::NEXT | kw::BASE => 1,
        kw::DOES | kw::LEGAL | kw::GOAL | kw::INPUT | kw::SEES => 2,
        kw::TERMINAL => 0,
        _ => return None,
    })
}

struct Checker<'g> {
    game: &'g Game,
    diags: Vec<Diag>,
    rel_arity: FxHashMap<Sym, (usize, Pos)>,
    fun_arity: FxHashMap<Sym, (usize, Pos)>,
}

impl Checker<'_> {
    fn error(&mut self, pos: Pos, msg: String) {
        self.diags.push(Diag { severity: Severity::Error, pos, msg });
    }
    fn warn(&mut self, pos: Pos, msg: String) {
        self.diags.push(Diag { severity: Severity::Warning, pos, msg });
    }
    fn name(&self, s: Sym) -> &str {
        self.game.symbols.name(s)
    }

    fn atom_arity(&mut self, a: &Atom, pos: Pos) {
        let n = a.args.len();
        if let Some(k) = keyword_arity(a.rel) {
            if k != n {
                self.error(pos, format!("`{}` takes {k} argument(s), found {n}", self.name(a.rel)));
            }
        } else if let Some(&(m, p)) = self.rel_arity.get(&a.rel) {
            if m != n {
                self.error(
                    pos,
                    format!(
                        "relation `{}` used with {n} argument(s) here but with {m} at {}:{}",
                        self.name(a.rel),
                        p.line,
                        p.col
                    ),
                );
            }
        } else {
            self.rel_arity.insert(a.rel, (n, pos));
        }
        for t in &a.args {
            self.term_arity(t, pos);
        }
    }

    fn term_arity(&mut self, t: &Term, pos: Pos) {
        if let Term::Func(f, args) = t {
            let n = args.len();
            if let Some(&(m, p)) = self.fun_arity.get(f) {
                if m != n {
                    self.warn(
                        pos,
                        format!(
                            "function `{}` used with {n} argument(s) here but with {m} at {}:{}",
                            self.name(*f),
                            p.line,
                            p.col
                        ),
                    );
                }
            } else {
                self.fun_arity.insert(*f, (n, pos));
            }
            for a in args.iter() {
                self.term_arity(a, pos);
            }
        }
    }

    fn literal_arity(&mut self, l: &Literal, pos: Pos) {
        match l {
            Literal::Atom(a) => {
                if matches!(a.rel, kw::INIT | kw::NEXT) {
                    self.error(pos, format!("`{}` may only stand in a rule head, not in a body", self.name(a.rel)));
                }
                self.atom_arity(a, pos)
            }
            Literal::Not(l) => self.literal_arity(l, pos),
            Literal::Or(ls) => ls.iter().for_each(|l| self.literal_arity(l, pos)),
            Literal::Distinct(a, b) => {
                self.term_arity(a, pos);
                self.term_arity(b, pos);
            }
        }
    }
}

/// Checks a game and describes its structure.
pub fn validate(game: &Game) -> Report {
    let mut c = Checker { game, diags: Vec::new(), rel_arity: FxHashMap::default(), fun_arity: FxHashMap::default() };
    let mut rule_count: FxHashMap<(Sym, usize), usize> = FxHashMap::default();

    for rule in &game.rules {
        let pos = rule.pos;
        let h = &rule.head;
        match h.rel {
            kw::TRUE | kw::DOES => {
                c.error(pos, format!("`{}` may only stand in a rule body, not as a head", c.name(h.rel)))
            }
            kw::ROLE if !rule.body.is_empty() => c.error(pos, "`role` must be a fact, not a rule".into()),
            kw::ROLE if !h.args.first().is_some_and(Term::is_ground) => {
                c.error(pos, "`role` must name a constant".into())
            }
            _ => {}
        }
        c.atom_arity(h, pos);
        for l in &rule.body {
            c.literal_arity(l, pos);
        }
        *rule_count.entry((h.rel, h.args.len())).or_default() += 1;
    }

    // Safety, per rule in disjunctive normal form, and the dependency graph.
    let mut rels: Vec<Sym> = Vec::new();
    let mut rel_index: FxHashMap<Sym, usize> = FxHashMap::default();
    let mut idx = |s: Sym, rels: &mut Vec<Sym>| {
        *rel_index.entry(s).or_insert_with(|| {
            rels.push(s);
            rels.len() - 1
        })
    };
    let mut edges: Vec<(usize, usize, bool, Pos)> = Vec::new();
    let mut all_flats = Vec::new();
    for rule in &game.rules {
        let flats = match expand_rule(rule) {
            Ok(f) => f,
            Err(e) => {
                c.error(rule.pos, e);
                continue;
            }
        };
        let h = idx(rule.head.rel, &mut rels);
        let mut reported = false;
        for fr in &flats {
            let mut bound: FxHashSet<Sym> = FxHashSet::default();
            for l in &fr.body {
                if let FlatLit::Pos(a) = l {
                    a.for_each_var(&mut |v| {
                        bound.insert(v);
                    });
                }
            }
            let mut unsafe_vars: Vec<(Sym, &str)> = Vec::new();
            let mut need = |v: Sym, place: &'static str| {
                if !bound.contains(&v) && !unsafe_vars.iter().any(|(u, _)| *u == v) {
                    unsafe_vars.push((v, place));
                }
            };
            fr.head.for_each_var(&mut |v| need(v, "the head"));
            for l in &fr.body {
                match l {
                    FlatLit::Pos(a) => {
                        let b = idx(a.rel, &mut rels);
                        edges.push((h, b, false, rule.pos));
                    }
                    FlatLit::Neg(a) => {
                        let b = idx(a.rel, &mut rels);
                        edges.push((h, b, true, rule.pos));
                        a.for_each_var(&mut |v| need(v, "a negation"));
                    }
                    FlatLit::Distinct(x, y) | FlatLit::Same(x, y) => {
                        x.for_each_var(&mut |v| need(v, "a `distinct`"));
                        y.for_each_var(&mut |v| need(v, "a `distinct`"));
                    }
                }
            }
            if !unsafe_vars.is_empty() && !reported {
                reported = true;
                let list: Vec<String> = unsafe_vars.iter().map(|(v, p)| format!("{} (in {p})", c.name(*v))).collect();
                c.error(
                    rule.pos,
                    format!(
                        "unsafe rule for `{}`: variable(s) {} not bound by any positive body literal",
                        c.name(rule.head.rel),
                        list.join(", ")
                    ),
                );
            }
        }
        all_flats.extend(flats);
    }

    // Stratification, at the grain of rules (see `deps`).
    let n = rels.len();
    let mut succ = vec![Vec::new(); n];
    for &(h, b, _, _) in &edges {
        succ[h].push(b);
    }
    let deps = rule_deps(&all_flats);
    let mut level = vec![0usize; deps.comps.len()];
    let mut rel_level: FxHashMap<Sym, usize> = FxHashMap::default();
    for (ci, comp) in deps.comps.iter().enumerate() {
        let mut lv = 0;
        for &r in comp {
            for &(j, neg) in &deps.edges[r] {
                if deps.comp_of[j] == ci {
                    if neg {
                        let names: Vec<&str> = comp
                            .iter()
                            .map(|&r| c.name(all_flats[r].head.rel))
                            .collect::<std::collections::BTreeSet<_>>()
                            .into_iter()
                            .collect();
                        c.error(
                            all_flats[r].pos,
                            format!(
                                "negation is not stratified: a rule for `{}` depends negatively on itself through {}",
                                c.name(all_flats[r].head.rel),
                                names.join(", ")
                            ),
                        );
                    }
                } else {
                    lv = lv.max(level[deps.comp_of[j]] + usize::from(neg));
                }
            }
        }
        level[ci] = lv;
        for &r in comp {
            let e = rel_level.entry(all_flats[r].head.rel).or_default();
            *e = (*e).max(lv);
        }
    }

    // Keyword dependencies: legal, goal and terminal may not depend on does; init on state.
    let reach = |from: Sym, to: Sym| -> bool {
        let pos_of = |s: Sym| rels.iter().position(|&r| r == s);
        let (Some(f), Some(t)) = (pos_of(from), pos_of(to)) else { return false };
        let mut seen = vec![false; n];
        let mut stack = vec![f];
        while let Some(v) = stack.pop() {
            if v == t {
                return true;
            }
            if !std::mem::replace(&mut seen[v], true) {
                stack.extend(succ[v].iter().copied());
            }
        }
        false
    };
    for k in [kw::LEGAL, kw::GOAL, kw::TERMINAL] {
        if reach(k, kw::DOES) {
            c.error(Pos::default(), format!("`{}` depends on `does`, which GDL forbids", c.name(k)));
        }
    }
    for k in [kw::TRUE, kw::DOES] {
        if reach(kw::INIT, k) {
            c.error(Pos::default(), format!("`init` depends on `{}`, which GDL forbids", c.name(k)));
        }
    }

    let roles = game.roles();
    if roles.is_empty() {
        c.error(Pos::default(), "no `(role ...)` facts: a game needs at least one role".into());
    }
    for k in [kw::LEGAL, kw::GOAL, kw::TERMINAL] {
        if !game.rules.iter().any(|r| r.head.rel == k) {
            c.error(Pos::default(), format!("no rule defines `{}`", c.name(k)));
        }
    }
    for k in [kw::INIT, kw::NEXT] {
        if !game.rules.iter().any(|r| r.head.rel == k) {
            c.warn(Pos::default(), format!("no rule defines `{}`", c.name(k)));
        }
    }
    if game.is_gdl2() {
        c.error(Pos::default(), "GDL-II (`sees`) games of imperfect information are not supported".into());
    }
    for r in &roles {
        if c.name(*r) == "random" && !game.is_gdl2() {
            c.warn(Pos::default(), "role `random` is played as an ordinary role (GDL-I, as ggp-base does)".into());
        }
    }
    let mut seen_roles = FxHashSet::default();
    for r in &roles {
        if !seen_roles.insert(*r) {
            c.error(Pos::default(), format!("role `{}` declared twice", c.name(*r)));
        }
    }

    let mut relations: Vec<(String, usize, usize)> =
        rule_count.iter().map(|(&(s, a), &k)| (c.name(s).to_string(), a, k)).collect();
    relations.sort();
    let max_level = rel_level.values().copied().max().unwrap_or(0);
    let mut strata: Vec<StratumInfo> =
        (0..=max_level).map(|l| StratumInfo { level: l, relations: Vec::new() }).collect();
    for (&r, &l) in &rel_level {
        strata[l].relations.push(c.name(r).to_string());
    }
    for s in &mut strata {
        s.relations.sort();
    }
    strata.retain(|s| !s.relations.is_empty());
    let mut diags = c.diags;
    diags.sort_by_key(|d| (d.severity == Severity::Warning, d.pos.line, d.pos.col));
    Report { roles: roles.iter().map(|r| game.symbols.name(*r).to_string()).collect(), relations, strata, diags }
}
