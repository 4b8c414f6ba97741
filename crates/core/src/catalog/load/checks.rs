//! The problems a load collects, where they are, and the checks every name and description passes.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use crate::catalog::problem::{Place, Problem, Severity};

/// Longest name of a tool, toolkit or parameter (docs/protocols.md §1; also keeps OTC ids short).
pub(super) const MAX_NAME: usize = 64;
/// N-ACT §6.1: descriptions MUST be less than 2000 characters.
const MAX_DESCRIPTION: usize = 1999;

/// Everything a load has found so far, and what it has seen across files.
pub(super) struct Context {
    pub problems: Vec<Problem>,
    /// Tool names and the file of each.
    pub names: HashMap<String, String>,
    /// Tool ids and the tool of each.
    pub ids: HashMap<Uuid, String>,
    /// OTC names (`{toolkit}_{name}`) and the `Toolkit.name` that has each.
    pub otc_names: HashMap<String, String>,
}

impl Context {
    pub fn errors(&self) -> usize {
        self.problems.iter().filter(|p| p.severity == Severity::Error).count()
    }
    pub fn error(&mut self, place: &Place, message: String) {
        self.problems.push(Problem {
            severity: Severity::Error,
            place: place.clone(),
            message,
        });
    }
    pub fn warn(&mut self, place: &Place, message: String) {
        self.problems.push(Problem {
            severity: Severity::Warning,
            place: place.clone(),
            message,
        });
    }
}

/// `place` with `field` as its field.
pub(super) fn at(place: &Place, field: &str) -> Place {
    Place {
        field: Some(field.to_owned()),
        ..place.clone()
    }
}

/// `^[A-Za-z][A-Za-z0-9_]{0,63}$` (docs/protocols.md §1).
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= MAX_NAME
}

pub(super) fn check_name(name: &str, what: &str, place: &Place, problems: &mut Vec<Problem>) {
    if !is_name(name) {
        problems.push(Problem {
            severity: Severity::Error,
            place: place.clone(),
            message: format!(
                "the {what} `{name}` is not allowed; use a letter followed by up to 63 letters, digits or underscores"
            ),
        });
    }
}

pub(super) fn check_description(text: &str, place: &Place, problems: &mut Vec<Problem>) {
    let message = if text.trim().is_empty() {
        "the description is empty; say what this is for, since a model reads it to decide".to_owned()
    } else if text.chars().count() > MAX_DESCRIPTION {
        format!(
            "the description has {} characters; N-ACT §6.1 allows fewer than 2000",
            text.chars().count()
        )
    } else {
        return;
    };
    problems.push(Problem {
        severity: Severity::Error,
        place: place.clone(),
        message,
    });
}

pub(super) fn check_unique<'a>(
    items: impl Iterator<Item = (&'a String, &'a String)>,
    what: &str,
    place: &Place,
    ctx: &mut Context,
) {
    let mut names = HashSet::new();
    let mut ids = HashSet::new();
    for (name, id) in items {
        let new_name = names.insert(name);
        if !new_name {
            ctx.error(
                place,
                format!("two {what}s are named `{name}`; names must be unique within a tool"),
            );
        }
        // A repeated name is reported once, not again as a repeated id.
        if !ids.insert(id) && new_name {
            ctx.error(
                place,
                format!("two {what}s have the id `{id}`; ids must be unique within a tool"),
            );
        }
    }
}
