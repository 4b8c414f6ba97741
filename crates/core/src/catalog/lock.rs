//! A served version never changes (N-ACT §6.1 "the signature is completely locked", §5.4;
//! issue #22.1): not between a catalog and its reload, and not across restarts and replicas.
//!
//! A version's **signature** is what a designer pinned: the tool's name, the version's
//! description, and its inputs and outputs (each with its id, name, description, whether it
//! is required, its type and every constraint, and an input's header). Tool-level metadata
//! outside it (tags, `img`, title, annotations, scopes, the backend) may change.
//!
//! - [`changed`] compares a catalog with the one it replaces: a served version whose signature
//!   changed, that moved to another N-ACT number, or that disappeared is a problem, and the
//!   reload is refused whole.
//! - [`VersionLock`] is the same rule across restarts and replicas: a `versions.lock` file kept
//!   beside the catalog (written or extended by `toolhost check --lock`, committed with the
//!   catalog) with each version's signature hash; `check` and `serve` refuse a catalog that
//!   contradicts it, so CI catches an in-place edit before it is deployed.
//!
//! Clients pin a tool by more than its name: N-ACT by `toolId` (the tool's UUID, which a
//! catalog may set with `id:`), OTC by its name `{toolkit}_{name}`. Each, once served, names
//! that tool for good: a catalog that gives one to another tool (a tool renamed but keeping its
//! `id:`, say) would have pinned clients call another tool under the same version numbers, and
//! is refused like an in-place edit (issue #37.13). The lock records both (format 2).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::{Catalog, Place, Problem, Severity, Tool, Version};

/// The lockfile's name, in the catalog's directory.
pub const FILE_NAME: &str = "versions.lock";
/// The lockfile's `format` this toolhost writes: 2 records the tools' identities
/// ([`VersionLock::tool_ids`], [`VersionLock::otc_names`]).
pub const FORMAT: u32 = 2;
/// The formats it reads: 1 (no identities recorded yet; the next write adds them) and 2.
const READS: [u32; 2] = [1, 2];

/// The signature of one version, as canonical JSON (object keys sorted, no white space).
pub fn signature(tool: &Tool, version: &Version) -> Value {
    // Enum values by name, as before wire values were shown: the wire values are the `wire`
    // member, so a version's hash stays what it was when the catalog showed names everywhere.
    let (input, output) = (super::schema::input_property, super::schema::output_property);
    let names = super::schema::Spelling::Names;
    let inputs: Vec<Value> = version
        .inputs
        .iter()
        .map(|p| {
            let mut signature = json!({
                "id": p.id, "name": p.name, "description": p.description, "required": p.required,
                "header": p.header, "schema": input(p, names),
            });
            // What each name sends is part of the contract, though no schema shows it; only
            // written when there are wire values, so older versions keep their hashes.
            if let super::InputType::Enum { values } = &p.kind
                && super::has_wire_values(values)
            {
                signature["wire"] = values.iter().map(|v| json!([v.name, v.wire()])).collect();
            }
            signature
        })
        .collect();
    let outputs: Vec<Value> = version
        .outputs
        .iter()
        .map(|o| {
            let mut signature = json!({
                "id": o.id, "name": o.name, "description": o.description, "required": o.required,
                "schema": output(o, names),
            });
            if let super::OutputType::Enum { values } = &o.kind
                && super::has_wire_values(values)
            {
                signature["wire"] = values.iter().map(|v| json!([v.name, v.wire()])).collect();
            }
            signature
        })
        .collect();
    let mut signature = json!({
        "name": tool.name,
        "version": version.semver.to_string(),
        "description": version.description,
        "inputs": inputs,
        "outputs": outputs,
    });
    // Only written when given, so versions without them keep their hashes.
    if !version.input_rules.is_empty() {
        signature["input_rules"] = Value::Object(version.input_rules.clone());
    }
    canonical(signature)
}

/// `sha256:` and the hex digest of a version's canonical signature.
pub fn hash(tool: &Tool, version: &Version) -> String {
    let mut hasher = Sha256::new();
    // Written straight into the digest, as `to_string` would print it.
    serde_json::to_writer(Digesting(&mut hasher), &signature(tool, version)).unwrap_or_default();
    let digest = hasher.finalize();
    let hex = crate::hex(&digest);
    format!("sha256:{hex}")
}

/// Feeds what is written to a digest.
struct Digesting<'a>(&'a mut Sha256);

impl std::io::Write for Digesting<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `value` with every object's keys sorted, so equal signatures print equal. Taken by value and
/// sorted in place: serde_json's map is sorted already (without its `preserve_order` feature),
/// and a copy of every signature was a large part of starting on a large catalog (issue #42.1).
fn canonical(value: Value) -> Value {
    match value {
        Value::Object(members) => {
            let sorted: BTreeMap<String, Value> = members.into_iter().map(|(k, v)| (k, canonical(v))).collect();
            Value::Object(sorted.into_iter().collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

/// What differs between two signatures of the same version, in words.
fn difference(before: &Value, after: &Value) -> String {
    let mut parts = Vec::new();
    if before["description"] != after["description"] {
        parts.push("its description".to_owned());
    }
    if before.get("input_rules") != after.get("input_rules") {
        parts.push("its `input_rules`".to_owned());
    }
    for (kind, key) in [("input", "inputs"), ("output", "outputs")] {
        let by_name = |v: &Value| -> BTreeMap<String, Value> {
            v[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| (p["name"].as_str().unwrap_or_default().to_owned(), p.clone()))
                .collect()
        };
        let (old, new) = (by_name(before), by_name(after));
        for (name, p) in &old {
            match new.get(name) {
                None => parts.push(format!("{kind} `{name}` was removed")),
                Some(q) if q != p => parts.push(format!("{kind} `{name}` changed")),
                Some(_) => {}
            }
        }
        for name in new.keys().filter(|n| !old.contains_key(*n)) {
            parts.push(format!("{kind} `{name}` was added"));
        }
        let order = |m: &Value| -> Vec<String> {
            m[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| p["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        };
        if old.keys().eq(new.keys()) && order(before) != order(after) {
            parts.push(format!("the order of its {key} changed"));
        }
    }
    if parts.is_empty() {
        parts.push("its signature".to_owned());
    }
    parts.join(", ")
}

fn problem(tool: &str, version: &str, field: &str, message: String) -> Problem {
    Problem {
        severity: Severity::Error,
        place: Place {
            file: "the new catalog".to_owned(),
            tool: Some(tool.to_owned()),
            version: Some(version.to_owned()),
            field: Some(field.to_owned()),
            agent: None,
        },
        message,
    }
}

const ADVICE: &str = "a served version never changes (N-ACT §6.1): restore it, and publish the change as a new version";

/// The identities a client pins that `tool` carries and that were served as another tool, by
/// `was(kind, key)`: the name of the tool served under that `toolId` or OTC name, if any.
fn reassigned<'a>(tool: &Tool, was: impl Fn(Identity, &str) -> Option<&'a str>, served_in: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let id = tool.id.to_string();
    if let Some(other) = was(Identity::ToolId, &id).filter(|other| *other != tool.name) {
        problems.push(problem(
            &tool.name,
            "",
            "id",
            format!(
                "its N-ACT toolId {id} was served as tool `{other}` ({served_in}): clients that pinned it would call another tool under the same version numbers. A renamed tool is a new tool: give it another `id:` (or none, for the default), and keep or retire `{other}`"
            ),
        ));
    }
    let otc = tool.otc_name();
    if let Some(other) = was(Identity::OtcName, &otc).filter(|other| *other != tool.name) {
        problems.push(problem(
            &tool.name,
            "",
            "name",
            format!(
                "its OTC name `{otc}` ({{toolkit}}_{{name}}) was served as tool `{other}` ({served_in}): OTC clients would call another tool under the same versions. Rename the tool or its toolkit"
            ),
        ));
    }
    for p in &mut problems {
        p.place.version = None;
    }
    problems
}

/// An identity a client pins a tool by, besides its name.
#[derive(Debug, Clone, Copy)]
enum Identity {
    /// N-ACT `toolId`: the tool's UUID.
    ToolId,
    /// OTC `name`: `{toolkit}_{name}`.
    OtcName,
}

/// The served versions of `old` that `new` changes: each an error naming the tool, the version
/// and what changed; and the tools of `new` that take a `toolId` or OTC name `old` served as
/// another tool.
pub fn changed(old: &Catalog, new: &Catalog) -> Vec<Problem> {
    let mut problems = Vec::new();
    // Each identity of the old catalog once, not once per new tool: this runs on every reload.
    let by_id: HashMap<String, &str> = old
        .tools()
        .iter()
        .map(|t| (t.id.to_string(), t.name.as_str()))
        .collect();
    let by_otc: HashMap<String, &str> = old.tools().iter().map(|t| (t.otc_name(), t.name.as_str())).collect();
    let was = |identity, key: &str| {
        match identity {
            Identity::ToolId => &by_id,
            Identity::OtcName => &by_otc,
        }
        .get(key)
        .copied()
    };
    for tool in new.tools() {
        problems.extend(reassigned(tool, was, "by the catalog served now"));
    }
    for before in old.tools() {
        let Some(after) = new.find(&before.name) else {
            continue; // A tool may be withdrawn whole; its versions are then not served at all.
        };
        for version in &before.versions {
            let semver = version.semver.to_string();
            match after.versions.iter().find(|v| v.semver == version.semver) {
                None => problems.push(problem(
                    &before.name,
                    &semver,
                    "versions",
                    format!("version {semver} is served and the new catalog removes it; mark it `retired: true` instead ({ADVICE})"),
                )),
                Some(now) if now.number != version.number => problems.push(problem(
                    &before.name,
                    &semver,
                    "versions",
                    format!(
                        "version {semver} is served as N-ACT version {} and would become version {}; add new versions after the last one ({ADVICE})",
                        version.number, now.number
                    ),
                )),
                Some(now) => {
                    let (was, is) = (signature(before, version), signature(after, now));
                    if was != is {
                        problems.push(problem(
                            &before.name,
                            &semver,
                            "signature",
                            format!("version {semver} is served, and {}; {ADVICE}", difference(&was, &is)),
                        ));
                    }
                }
            }
        }
    }
    problems
}

/// The versions.lock file: each tool's versions and their signature hashes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionLock {
    /// The format of this file.
    pub format: u32,
    /// By tool name, by version: `sha256:…` of the version's canonical signature.
    pub tools: BTreeMap<String, BTreeMap<String, String>>,
    /// By tool name: the newest version served as current. N-ACT's `currentVersion` never goes
    /// down (issue #31.1), so retiring it is refused until a newer version is served.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub current: BTreeMap<String, String>,
    /// By N-ACT `toolId` (a tool's UUID): the name of the tool it was served as.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_ids: BTreeMap<String, String>,
    /// By OTC name (`{toolkit}_{name}`): the name of the tool it was served as.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub otc_names: BTreeMap<String, String>,
}

impl VersionLock {
    /// Where the lock of the catalog at `path` (a directory or one file) is kept.
    pub fn path_for(catalog: &Path) -> PathBuf {
        if catalog.is_file() {
            catalog.parent().unwrap_or(Path::new(".")).join(FILE_NAME)
        } else {
            catalog.join(FILE_NAME)
        }
    }

    /// Reads the lock at `path`; `Ok(None)` when there is none.
    pub fn read(path: &Path) -> Result<Option<Self>, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        Self::parse(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads a lock's text. A `format` other than [`FORMAT`] is refused, whatever else the file
    /// holds: a newer toolhost wrote it, and rewriting it in this format would drop what that
    /// one records (issue #37.14).
    pub fn parse(text: &str) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct Format {
            format: Option<Value>,
        }
        let not_a_lock =
            |e: serde_json::Error| format!("not a versions lock ({e}); regenerate it with `toolhost check --lock`");
        let format = serde_json::from_str::<Format>(text).map_err(not_a_lock)?.format;
        if let Some(format) = format.filter(|f| !READS.iter().any(|known| *f == json!(known))) {
            return Err(format!(
                "the versions lock has format {format}, and this toolhost reads formats {} only; \
                 upgrade toolhost to the version that wrote it (the file is left as it is)",
                READS.map(|f| f.to_string()).join(" and ")
            ));
        }
        serde_json::from_str(text).map_err(not_a_lock)
    }

    /// The lock as it is written: pretty JSON, keys sorted, a trailing newline.
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// This lock with every version of `catalog` it does not have yet added.
    pub fn extended(&self, catalog: &Catalog) -> Self {
        let mut lock = self.clone();
        lock.format = FORMAT;
        for tool in catalog.tools() {
            lock.tool_ids
                .entry(tool.id.to_string())
                .or_insert_with(|| tool.name.clone());
            lock.otc_names
                .entry(tool.otc_name())
                .or_insert_with(|| tool.name.clone());
            let entry = lock.tools.entry(tool.name.clone()).or_default();
            for version in &tool.versions {
                entry
                    .entry(version.semver.to_string())
                    .or_insert_with(|| hash(tool, version));
            }
            let latest = &tool.latest().semver;
            let current = lock
                .current
                .entry(tool.name.clone())
                .or_insert_with(|| latest.to_string());
            if semver::Version::parse(current).is_ok_and(|c| c < *latest) {
                *current = latest.to_string();
            }
        }
        lock
    }

    /// How many versions this lock holds.
    pub fn len(&self) -> usize {
        self.tools.values().map(BTreeMap::len).sum()
    }

    /// Whether this lock holds no version.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tools of `catalog` with changes this lock does not hold (issue #41.3): a version
    /// not locked yet, or one that differs from its locked signature. While designing
    /// (`serve --dev`) these are the unpublished changes; `toolhost check --lock` publishes
    /// the new versions, and a changed one needs a new version number first. Sorted by name.
    pub fn unpublished(&self, catalog: &Catalog) -> Vec<String> {
        catalog
            .tools()
            .iter()
            .filter(|tool| {
                let locked = self.tools.get(&tool.name);
                tool.versions
                    .iter()
                    .any(|v| locked.and_then(|l| l.get(&v.semver.to_string())) != Some(&hash(tool, v)))
            })
            .map(|tool| tool.name.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// The versions of `catalog` that contradict this lock (an error each): changed in place,
    /// removed, or slipped in before a locked one (which would renumber it); and those it does
    /// not lock yet (a warning each: run `toolhost check --lock`).
    pub fn verify(&self, catalog: &Catalog, file: &str) -> Vec<Problem> {
        let mut problems = Vec::new();
        for tool in catalog.tools() {
            let was = |identity, key: &str| {
                match identity {
                    Identity::ToolId => self.tool_ids.get(key),
                    Identity::OtcName => self.otc_names.get(key),
                }
                .map(String::as_str)
            };
            problems.extend(reassigned(tool, was, &format!("in {file}")).into_iter().map(|mut p| {
                p.place.file = file.to_owned();
                p
            }));
            let locked = self.tools.get(&tool.name);
            // The newest locked version: a version not locked yet must come after it, else the
            // locked ones after it would move to other N-ACT numbers (issue #31.1).
            let newest = locked.and_then(|l| l.keys().filter_map(|s| semver::Version::parse(s).ok()).max());
            for version in &tool.versions {
                let semver = version.semver.to_string();
                if let Some(newest) = &newest
                    && version.semver < *newest
                    && !locked.is_some_and(|l| l.contains_key(&semver))
                {
                    let mut p = problem(
                        &tool.name,
                        &semver,
                        "versions",
                        format!(
                            "version {semver} is not in {file} and comes before the locked {newest}: it would give served versions other N-ACT numbers; add new versions after the last one ({ADVICE})"
                        ),
                    );
                    p.place.file = file.to_owned();
                    problems.push(p);
                    continue;
                }
                match locked.and_then(|l| l.get(&semver)) {
                    Some(expected) if *expected != hash(tool, version) => {
                        let mut p = problem(
                            &tool.name,
                            &semver,
                            "signature",
                            format!(
                                "version {semver} does not match its locked signature in {file}: it was changed in place; {ADVICE}"
                            ),
                        );
                        p.place.file = file.to_owned();
                        problems.push(p);
                    }
                    Some(_) => {}
                    None => {
                        let mut p = problem(
                            &tool.name,
                            &semver,
                            "signature",
                            format!(
                                "version {semver} is not in {file} yet; run `toolhost check --lock` and commit the file"
                            ),
                        );
                        p.severity = Severity::Warning;
                        p.place.file = file.to_owned();
                        problems.push(p);
                    }
                }
            }
            let current = self
                .current
                .get(&tool.name)
                .and_then(|s| semver::Version::parse(s).ok());
            if let Some(current) = current
                && tool.latest().semver < current
            {
                let latest = tool.latest().semver.to_string();
                let mut p = problem(
                    &tool.name,
                    &current.to_string(),
                    "retired",
                    format!(
                        "version {current} was served as the current version (in {file}) and the catalog's current one would be {latest}: N-ACT's currentVersion never goes down. To withdraw {current}, publish a newer version first (a copy of {latest}, say), then retire it"
                    ),
                );
                p.place.file = file.to_owned();
                problems.push(p);
            }
            if let Some(locked) = locked {
                for semver in locked.keys() {
                    if !tool.versions.iter().any(|v| v.semver.to_string() == *semver) {
                        let mut p = problem(
                            &tool.name,
                            semver,
                            "versions",
                            format!(
                                "version {semver} is locked in {file} but the catalog no longer has it; mark it `retired: true` instead of removing it"
                            ),
                        );
                        p.place.file = file.to_owned();
                        problems.push(p);
                    }
                }
            }
        }
        problems
    }
}
