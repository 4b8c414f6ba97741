//! The server's secrets: the `[secrets]` table of the config file, each read from an
//! environment variable or a file when the server starts.
//!
//! ```toml
//! [secrets]
//! WEATHER_API_KEY = { env = "WEATHER_API_KEY" }
//! CLIENT_SECRET = { file = "/run/secrets/client_secret" }   # relative to the config file
//! ```
//!
//! Errors name the secret and where it was looked for, never a value.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toolhost_core::Secret;

/// Where one secret is read from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum SecretSource {
    /// An environment variable of the server process.
    Env(String),
    /// A file (one trailing newline is dropped); relative paths are relative to the config file.
    File(PathBuf),
}

/// The fewest bytes a secret may have (issue #30.16). Every secret is scrubbed from upstream
/// text before it reaches a caller; a two-letter secret would be scrubbed from every word that
/// holds those letters, and where `<redacted>` appears tells the secret. Refused at load, not
/// warned about: a warning leaves the oracle open, and no real key, token or password is
/// this short.
pub const MIN_SECRET_BYTES: usize = 8;

/// Why the server's secrets could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The variable is not set, or not valid Unicode.
    #[error("secret `{name}`: environment variable `{variable}` is not set (or not valid UTF-8)")]
    Env { name: String, variable: String },
    /// The file cannot be read.
    #[error("secret `{name}` in [secrets]: failed to read the file {}: {reason}; create it, or point `{name} = {{ file = \"...\" }}` at the right one", .path.display())]
    File {
        name: String,
        path: PathBuf,
        reason: String,
    },
    /// The value is empty, which is never meant.
    #[error("secret `{name}` is empty")]
    Empty { name: String },
    /// The value is shorter than [`MIN_SECRET_BYTES`]: scrubbing it from answers would turn
    /// `<redacted>` into an oracle (every occurrence of a short string is a guess confirmed).
    #[error(
        "secret `{name}` in [secrets] has {length} bytes; a secret needs at least {MIN_SECRET_BYTES} (a shorter one cannot be told from ordinary text, so redacting it from answers would reveal it): use a longer value"
    )]
    Short { name: String, length: usize },
    /// The name cannot be written in a template.
    #[error("secret name `{name}` is not allowed; use letters, digits and underscores")]
    Name { name: String },
}

/// Reads every secret; relative file paths are taken from `base` (the config file's directory).
pub fn resolve(sources: &BTreeMap<String, SecretSource>, base: &Path) -> Result<HashMap<String, Secret>, Error> {
    let mut secrets = HashMap::with_capacity(sources.len());
    for (name, source) in sources {
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(Error::Name { name: name.clone() });
        }
        let value = match source {
            SecretSource::Env(variable) => std::env::var(variable).map_err(|_| Error::Env {
                name: name.clone(),
                variable: variable.clone(),
            })?,
            SecretSource::File(path) => {
                let path = if path.is_relative() {
                    base.join(path)
                } else {
                    path.clone()
                };
                let mut text = std::fs::read_to_string(&path).map_err(|e| Error::File {
                    name: name.clone(),
                    path: path.clone(),
                    reason: match e.kind() {
                        std::io::ErrorKind::NotFound => "there is no such file".to_owned(),
                        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
                        std::io::ErrorKind::IsADirectory => "it is a directory".to_owned(),
                        _ => e.to_string(),
                    },
                })?;
                // Files written by editors and `echo` end in a newline that is not part of it.
                if text.ends_with('\n') {
                    text.pop();
                    if text.ends_with('\r') {
                        text.pop();
                    }
                }
                text
            }
        };
        if value.is_empty() {
            return Err(Error::Empty { name: name.clone() });
        }
        if value.len() < MIN_SECRET_BYTES {
            return Err(Error::Short {
                name: name.clone(),
                length: value.len(),
            });
        }
        secrets.insert(name.clone(), Secret::new(value));
    }
    Ok(secrets)
}

/// The `{{secret.NAME}}` names anywhere in `values` (strings at any depth), as templates
/// write them.
pub fn referenced<'a>(values: impl IntoIterator<Item = &'a serde_json::Value>) -> BTreeSet<String> {
    fn scan(value: &serde_json::Value, out: &mut BTreeSet<String>) {
        match value {
            serde_json::Value::String(text) => {
                let mut rest = text.as_str();
                while let Some(start) = rest.find("{{") {
                    let after = &rest[start + 2..];
                    let Some(end) = after.find("}}") else { break };
                    if let Some(name) = after[..end].trim().strip_prefix("secret.") {
                        out.insert(name.trim().to_owned());
                    }
                    rest = &after[end + 2..];
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| scan(v, out)),
            serde_json::Value::Object(members) => members.values().for_each(|v| scan(v, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for value in values {
        scan(value, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_come_from_files_relative_to_the_config() {
        let dir = std::env::temp_dir().join(format!("toolhost-sculpt-secrets-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join("key"), "s3cret-value\n");
        let sources = BTreeMap::from([("KEY".to_owned(), SecretSource::File("key".into()))]);
        let secrets = resolve(&sources, &dir).unwrap_or_default();
        assert_eq!(secrets.get("KEY").map(Secret::expose), Some("s3cret-value"));
        let missing = BTreeMap::from([("NOPE".to_owned(), SecretSource::File("missing".into()))]);
        let error = resolve(&missing, &dir).map(|_| ()).unwrap_err().to_string();
        assert!(error.contains("secret `NOPE`") && error.contains("missing"), "{error}");
        assert!(
            error.contains("there is no such file") && !error.contains("entity"),
            "{error}"
        );
        let unset = BTreeMap::from([(
            "UNSET".to_owned(),
            SecretSource::Env("TOOLHOST_SCULPT_TEST_SURELY_UNSET".into()),
        )]);
        assert!(matches!(resolve(&unset, &dir), Err(Error::Env { .. })));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Issue #30.16: a secret under 8 bytes is refused, naming it and never its value.
    #[test]
    fn a_short_secret_is_refused_by_name_without_its_value() {
        let dir = std::env::temp_dir().join(format!("toolhost-sculpt-short-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join("pin"), "x7Qz9\n");
        let _ = std::fs::write(dir.join("eight"), "x7Qz9abc\n");
        let short = BTreeMap::from([("PIN".to_owned(), SecretSource::File("pin".into()))]);
        let error = resolve(&short, &dir).map(|_| ()).unwrap_err().to_string();
        assert!(
            error.contains("secret `PIN`") && error.contains("5 bytes") && error.contains("at least 8"),
            "{error}"
        );
        assert!(!error.contains("x7Qz9"), "never the value: {error}");
        let eight = BTreeMap::from([("EIGHT".to_owned(), SecretSource::File("eight".into()))]);
        assert!(resolve(&eight, &dir).is_ok(), "8 bytes are enough");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
