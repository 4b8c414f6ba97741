//! Catalog problems: each names its place (file, tool, version, field) and says what to change.

use std::fmt;

/// How bad a catalog problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Advice; the catalog still loads.
    Warning,
    /// The catalog does not load.
    Error,
}

/// Where in the catalog a problem is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// The source file, as given to the loader.
    pub file: String,
    /// The tool's name, when the problem is inside one.
    pub tool: Option<String>,
    /// The agent's name, when the problem is inside an agent file.
    pub agent: Option<String>,
    /// The version (as written), when the problem is inside one.
    pub version: Option<String>,
    /// The field, e.g. "input `city`" or "backend".
    pub field: Option<String>,
}

/// One thing wrong (or worth changing) in a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// Where it is.
    pub place: Place,
    /// What is wrong and what to change.
    pub message: String,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        let mut sep = ": ";
        if let Some(tool) = &self.tool {
            write!(f, "{sep}tool `{tool}`")?;
            sep = " ";
        }
        if let Some(agent) = &self.agent {
            write!(f, "{sep}agent `{agent}`")?;
            sep = ", ";
        }
        if let Some(version) = &self.version {
            write!(f, "{sep}version {version}")?;
            sep = ", ";
        }
        if let Some(field) = &self.field {
            write!(f, "{sep}{field}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{level}: {}: {}", self.place, self.message)
    }
}
