//! Approvals (issue #40, APPROVALS.md): the confirmation gate the engine asks before running a
//! version that needs a human's confirmation, its records, the page a human decides on, and
//! CHEQ's URIs.
//!
//! The engine hands the gate a validated call ([`toolhost_core::confirm::GateCall`]). The gate
//! binds it (caller, tool and version, the SHA-256 of the RFC 8785 form of the effective input,
//! the policy revision, the protocol, OTC's `call_id`) and looks at what the call presents:
//!
//! - nothing, or an id that is unknown, lapsed or bound to another call: a fresh pending
//!   record, refused with [`Error::Confirmation`] (each adapter says it its own way);
//! - a pending or declined one: refused, saying so;
//! - an approved one: `approved → consuming` in one store step (a Lua script in Redis), so of
//!   racing retries on any replicas exactly one runs; its outcome is stored
//!   ([`Gate::settle`]) and every later identical retry gets it back.

mod audit;
mod flood;
mod human;
pub mod page;
mod record;
mod store;
mod vault;

pub mod cheq;
pub mod webhook;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use toolhost_core::confirm::{self, Admission, Answer, Gate, GateCall, HumanValues, Presented, Stored};
use toolhost_core::{BoxFuture, Error, ToolFailure};

pub use audit::{JWKS_PATH, Signer};
pub use record::{Entry, Record, Status};
pub use store::{Memory, Redis, Shift, Store};
pub use vault::Vault;

use crate::shared::Unavailable;

/// The confirmation settings (`[approvals]`).
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a request waits for a decision (10 min by default).
    pub pending: Duration,
    /// How long an approval waits to be used (5 min by default).
    pub approved: Duration,
    /// How long a used confirmation's outcome is kept for identical retries (1 h by default).
    pub keep: Duration,
    /// Answer N-ACT's confirmation request as `403` problem instead of `202` (for executors
    /// that mishandle a 202).
    pub nact_403: bool,
    /// An external confirmation service's URI, given as `confirmation uri` instead of
    /// toolhost's own page.
    pub service: Option<String>,
    /// The seed of the Ed25519 key audit records are signed with; replicas share it. A random
    /// key per process when not set.
    pub audit_key: Option<toolhost_core::Secret>,
    /// Where each new request is posted, signed (`webhook_url`; [`webhook`]).
    pub webhook: Option<webhook::Target>,
    /// New requests one caller may make for one tool in any minute (20 by default; 0: no cap).
    pub max_requests_per_minute: u32,
    /// The secret the values humans type for `source: human` inputs are sealed with while they
    /// wait in the store; replicas of one store share it. A random key per process when not set.
    pub inputs_key: Option<toolhost_core::Secret>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            pending: Duration::from_secs(600),
            approved: Duration::from_secs(300),
            keep: Duration::from_secs(3600),
            nact_403: false,
            service: None,
            audit_key: None,
            webhook: None,
            max_requests_per_minute: 20,
            inputs_key: None,
        }
    }
}

/// The confirmation service: records in a [`Store`], URIs under the public base.
#[derive(Debug)]
pub struct Approvals {
    store: Arc<dyn Store>,
    settings: Settings,
    base: String,
    signer: Signer,
    webhook: Option<webhook::Webhook>,
    flood: flood::Flood,
    vault: Vault,
}

impl Approvals {
    /// A service keeping records in `store`, its URIs under `base` (the public URL).
    pub fn new(store: Arc<dyn Store>, settings: Settings, base: String) -> Self {
        let signer = Signer::new(settings.audit_key.as_ref().map(|k| k.expose().as_bytes()));
        let webhook = settings.webhook.clone().and_then(webhook::Webhook::new);
        let flood = flood::Flood::new(settings.max_requests_per_minute);
        let vault = Vault::new(settings.inputs_key.as_ref().map(|k| k.expose().as_bytes()));
        Self {
            store,
            settings,
            base,
            signer,
            webhook,
            flood,
            vault,
        }
    }

    /// The signer of audit records (its keys at [`JWKS_PATH`]).
    pub fn signer(&self) -> &Signer {
        &self.signer
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The record store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The answer telling a caller about `entry`.
    pub fn answer(&self, entry: &Entry, status: confirm::Status, note: Option<String>) -> Answer {
        let id = &entry.record.id;
        let resource_uri = format!("{}/cheq/{id}", self.base);
        Answer {
            status,
            id: id.clone(),
            confirmation_uri: match &self.settings.service {
                Some(service) => service_link(service, &resource_uri),
                None => format!("{}/confirm/{id}", self.base),
            },
            resource_uri,
            result_uri: format!("{}/cheq/{id}/result", self.base),
            expires_ms: entry.expires_ms,
            note,
        }
    }

    /// Makes a pending record for `call` and refuses it.
    async fn mint(&self, call: &GateCall<'_>, binding: &Binding, note: Option<String>) -> Result<Admission, Error> {
        let now = toolhost_core::unix_ms();
        if let Err(wait) = self.flood.admit(&binding.principal, &call.tool.name, now) {
            count("flooded");
            return Err(flooded(call, self.settings.max_requests_per_minute, wait));
        }
        let record = binding.record(call, now);
        let expires_ms = now + self.settings.pending.as_millis() as u64;
        let keep = self.settings.pending + self.settings.approved + self.settings.keep;
        self.store
            .create(&record, expires_ms, keep)
            .await
            .map_err(|Unavailable| unavailable(call))?;
        count("requested");
        tracing::info!(
            confirmation = %record.id,
            tool = %record.tool,
            version = %record.version,
            principal = %record.principal,
            args_sha256 = %record.args_sha256,
            "confirmation requested"
        );
        let entry = Entry::pending(record, expires_ms);
        let answer = self.answer(&entry, confirm::Status::Required, note);
        if let Some(webhook) = &self.webhook {
            webhook.notify(&webhook::Notice {
                id: &entry.record.id,
                tool: &entry.record.tool,
                version: &entry.record.version,
                link: &answer.confirmation_uri,
                expires: rfc3339(expires_ms),
            });
        }
        Err(refusal(call, answer))
    }

    /// Admits or refuses `call`, which presents confirmation `id`.
    async fn presented(&self, call: &GateCall<'_>, binding: &Binding, id: &str) -> Result<Admission, Error> {
        // A racing retry that lost `approved → consuming` reads again, at most a few times.
        for _ in 0..3 {
            let entry = self.store.get(id).await.map_err(|Unavailable| unavailable(call))?;
            let Some(entry) = entry else {
                let note = format!("the confirmation `{}` is unknown here or has lapsed", short(id));
                return self.mint(call, binding, Some(note)).await;
            };
            if entry.record.binding != binding.key {
                let note = format!(
                    "the confirmation `{}` was given for a different call (other arguments, version, caller or protocol) and does not authorize this one",
                    short(id)
                );
                return self.mint(call, binding, Some(note)).await;
            }
            match entry.status {
                Status::Pending => return Err(refusal(call, self.answer(&entry, confirm::Status::Pending, None))),
                Status::Declined => return Err(refusal(call, self.answer(&entry, confirm::Status::Declined, None))),
                Status::Expired => {
                    let note = format!(
                        "the earlier confirmation lapsed at {} before it was used",
                        rfc3339(entry.expires_ms)
                    );
                    count("expired");
                    return self.mint(call, binding, Some(note)).await;
                }
                Status::Approved => {
                    let now = toolhost_core::unix_ms();
                    let evidence = self.signer.record(&entry, "consumed", &self.base);
                    let change = store::Change {
                        evidence: Some(("evidence_consumed", evidence.clone())),
                        ..store::Change::default()
                    };
                    let shift = self
                        .store
                        .shift(id, Status::Approved, Status::Consuming, change, now)
                        .await
                        .map_err(|Unavailable| unavailable(call))?;
                    if let Shift::Moved { released } = shift {
                        count("consumed");
                        tracing::info!(target: "toolhost::audit", confirmation = %id, tool = %entry.record.tool, args_sha256 = %entry.record.args_sha256, jws = %evidence, "confirmation consumed; the call runs");
                        let human = released
                            .and_then(|sealed| self.vault.open(id, &sealed))
                            .unwrap_or_default();
                        return self.with_human(call, id, human).await;
                    }
                }
                Status::Consuming => return self.outcome_of(call, id).await,
                Status::Consumed => return Ok(Admission::Replay(stored(&entry))),
            }
        }
        Err(unavailable(call))
    }

    /// Runs the consumed confirmation `id` with the values the human typed, unless a required
    /// one is missing (they lapsed, or this replica cannot open them): then nothing runs, and
    /// that is the stored outcome.
    async fn with_human(&self, call: &GateCall<'_>, id: &str, human: HumanValues) -> Result<Admission, Error> {
        let missing: Vec<&str> = call
            .version
            .human_inputs
            .iter()
            .filter(|p| p.required && !human.expose().contains_key(&p.name))
            .map(|p| p.name.as_str())
            .collect();
        if missing.is_empty() {
            return Ok(Admission::Run {
                id: id.to_owned(),
                human,
            });
        }
        tracing::warn!(confirmation = %id, missing = ?missing, "the values typed on the confirmation page are not there (lapsed, or sealed under another `inputs_key_secret`); nothing runs");
        let failure = ToolFailure::permanent(format!(
            "the values the person confirming was to type ({}) could not be read, so nothing was done; call again to ask for a fresh confirmation",
            missing.join(", ")
        ));
        self.settle(id, Stored::failure(&failure)).await;
        Err(Error::Failed {
            tool: call.tool.name.clone(),
            failure: Box::new(failure),
        })
    }

    /// Waits (bounded) for the outcome of a call another retry is running.
    async fn outcome_of(&self, call: &GateCall<'_>, id: &str) -> Result<Admission, Error> {
        let deadline = tokio::time::Instant::now() + call.version.timeout + Duration::from_secs(5);
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if let Ok(Some(entry)) = self.store.get(id).await
                && entry.status == Status::Consumed
            {
                return Ok(Admission::Replay(stored(&entry)));
            }
        }
        let failure = ToolFailure::outcome_unknown(
            "the confirmed call is running elsewhere and its outcome is not known yet; check the result URI before retrying",
        );
        Err(Error::Failed {
            tool: call.tool.name.clone(),
            failure: Box::new(failure),
        })
    }

    /// Records a decision on a pending request: whether it was pending (and now is decided).
    pub async fn decide(&self, id: &str, approve: bool, approver: &str) -> Result<bool, Unavailable> {
        self.decide_with(id, approve, approver, &HumanValues::default()).await
    }

    /// [`Approvals::decide`], approving with the values the human typed for the version's
    /// `source: human` inputs (checked by the page): sealed until the call uses them, hashed
    /// into the audit records.
    pub async fn decide_with(
        &self,
        id: &str,
        approve: bool,
        approver: &str,
        human: &HumanValues,
    ) -> Result<bool, Unavailable> {
        let Some(mut entry) = self.store.get(id).await? else {
            return Ok(false);
        };
        let typed = approve && !human.is_empty();
        let sealed = match typed {
            true => Some(self.vault.seal(id, human).ok_or(Unavailable)?),
            false => None,
        };
        if typed {
            entry.fingerprints = Some(self.vault.fingerprints(id, human));
        }
        let now = toolhost_core::unix_ms();
        let (to, expires_ms) = if approve {
            (Status::Approved, Some(now + self.settings.approved.as_millis() as u64))
        } else {
            (Status::Declined, None)
        };
        // The record as the decision leaves it, signed before it is written.
        entry.status = to;
        entry.decided_by = Some(approver.to_owned());
        entry.decided_ms = Some(now);
        let evidence = self.signer.record(&entry, to.as_str(), &self.base);
        let change = store::Change {
            expires_ms,
            decided_by: Some(approver.to_owned()),
            decided_ms: Some(now),
            outcome: None,
            evidence: Some(("evidence_decided", evidence.clone())),
            human: sealed,
            fingerprints: entry
                .fingerprints
                .as_ref()
                .map(|f| serde_json::to_string(f).unwrap_or_default()),
        };
        let moved = self.store.transition(id, Status::Pending, to, change, now).await?;
        if moved {
            count(if approve { "approved" } else { "declined" });
            tracing::info!(target: "toolhost::audit", confirmation = %id, decision = to.as_str(), approver = %approver, jws = %evidence, "confirmation decided");
        }
        Ok(moved)
    }
}

impl Gate for Approvals {
    fn admit<'a>(&'a self, call: GateCall<'a>) -> BoxFuture<'a, Result<Admission, Error>> {
        Box::pin(async move {
            let binding = Binding::of(&call);
            match &call.context.confirmation {
                Some(Presented::Id(id)) => self.presented(&call, &binding, id).await,
                Some(Presented::ByBinding) => {
                    let found = self
                        .store
                        .by_binding(&binding.key)
                        .await
                        .map_err(|Unavailable| unavailable(&call))?;
                    match found {
                        Some(id) => self.presented(&call, &binding, &id).await,
                        None => self.mint(&call, &binding, None).await,
                    }
                }
                None => self.mint(&call, &binding, None).await,
            }
        })
    }

    fn settle<'a>(&'a self, id: &'a str, outcome: Stored) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let change = store::Change {
                outcome: Some(serde_json::to_string(&outcome).unwrap_or_default()),
                ..store::Change::default()
            };
            let now = toolhost_core::unix_ms();
            if self
                .store
                .transition(id, Status::Consuming, Status::Consumed, change, now)
                .await
                .is_err()
            {
                tracing::warn!(confirmation = %id, "the outcome of a confirmed call could not be stored; a retry will not see it");
            }
        })
    }
}

/// What a confirmation is bound to (APPROVALS.md §5.2.3).
#[derive(Debug)]
struct Binding {
    principal: String,
    effective: Map<String, Value>,
    digest: String,
    policy_rev: String,
    /// The hash of the whole tuple.
    key: String,
}

impl Binding {
    fn of(call: &GateCall<'_>) -> Self {
        let context = call.context;
        let principal = context.principal.clone().unwrap_or_else(|| "anonymous".to_owned());
        let effective = confirm::effective_input(call.version, call.input);
        let digest = confirm::digest(&effective);
        let policy_rev = call.policy.revision(call.tool, call.version);
        let mut hash = Sha256::new();
        for part in [
            principal.as_str(),
            &call.tool.id.to_string(),
            &call.version.semver.to_string(),
            &digest,
            &policy_rev,
            context.protocol.unwrap_or(""),
            context.call_id.as_deref().unwrap_or(""),
        ] {
            hash.update(part.len().to_be_bytes());
            hash.update(part.as_bytes());
        }
        Self {
            principal,
            effective,
            digest,
            policy_rev,
            key: toolhost_core::hex(&hash.finalize()),
        }
    }

    fn record(&self, call: &GateCall<'_>, now: u64) -> Record {
        let version = call.version;
        let parameters = version
            .inputs
            .iter()
            .filter_map(|p| {
                self.effective.get(&p.name).map(|value| record::Quoted {
                    name: p.name.clone(),
                    description: p.description.clone(),
                    value: value.clone(),
                    default: !call.input.contains_key(&p.name),
                })
            })
            .collect();
        Record {
            id: uuid::Uuid::new_v4().simple().to_string(),
            binding: self.key.clone(),
            principal: self.principal.clone(),
            protocol: call.context.protocol.unwrap_or("").to_owned(),
            call_id: call.context.call_id.clone(),
            tool_id: call.tool.id.to_string(),
            tool: call.tool.name.clone(),
            title: call.tool.title.clone(),
            version: version.semver.to_string(),
            description: version.description.clone(),
            upstreams: version.backend.dependencies(),
            policy_rev: self.policy_rev.clone(),
            approvers: call.policy.approvers.clone(),
            args_sha256: self.digest.clone(),
            parameters,
            human: version.human_inputs.iter().map(human::asked).collect(),
            created_ms: now,
            nonce: uuid::Uuid::new_v4().simple().to_string(),
        }
    }
}

/// The external confirmation service's link for one request: its URI with the request's
/// resource URI as the query parameter `resource` (CHEQ has the user's app tell the service the
/// resource URI and leaves the syntax open; a link carrying it needs no app).
fn service_link(service: &str, resource_uri: &str) -> String {
    match url::Url::parse(service) {
        Ok(mut link) => {
            link.query_pairs_mut().append_pair("resource", resource_uri);
            link.to_string()
        }
        Err(_) => service.to_owned(),
    }
}

fn refusal(call: &GateCall<'_>, answer: Answer) -> Error {
    Error::Confirmation {
        tool: call.tool.name.clone(),
        answer: Box::new(answer),
    }
}

/// The store did not answer: nothing runs (fails closed), retryable.
fn unavailable(call: &GateCall<'_>) -> Error {
    let failure = ToolFailure::temporary(
        "this tool needs a confirmation, and the confirmation store is not reachable right now; nothing was done, try again shortly",
        Some(Duration::from_secs(1)),
    )
    .with_code(crate::limits::BUSY_CODE);
    Error::Failed {
        tool: call.tool.name.clone(),
        failure: Box::new(failure),
    }
}

/// A caller past the cap on new requests: nobody is asked, nothing runs, retryable later.
fn flooded(call: &GateCall<'_>, per_minute: u32, wait: Duration) -> Error {
    let failure = ToolFailure::temporary(
        format!(
            "too many confirmation requests for `{}` from this caller (at most {per_minute} a minute): nothing was done and nobody was asked; try again in {} s, or use a confirmation already asked for",
            call.tool.name,
            wait.as_secs().max(1)
        ),
        Some(wait),
    )
    .with_code(crate::limits::BUSY_CODE);
    Error::Failed {
        tool: call.tool.name.clone(),
        failure: Box::new(failure),
    }
}

fn stored(entry: &Entry) -> Stored {
    entry
        .outcome
        .as_deref()
        .and_then(|o| serde_json::from_str(o).ok())
        .unwrap_or_else(|| Stored::Failure {
            message: "the confirmed call ran, but its outcome was not kept".to_owned(),
            code: Some(toolhost_core::backend::OUTCOME_UNKNOWN_CODE.to_owned()),
        })
}

/// The first 8 characters of an id, for messages.
fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

fn count(event: &'static str) {
    metrics::counter!("toolhost_confirmations_total", "event" => event).increment(1);
}

/// `2026-11-26T20:36:05Z` for ms since the epoch.
pub fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// HTML-escapes text from the record (arguments are the agent's values: shown, never markup).
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_service_link_carries_the_resource_uri() {
        assert_eq!(
            super::service_link("https://confirm.example/c?tenant=a", "https://t.example/cheq/1"),
            "https://confirm.example/c?tenant=a&resource=https%3A%2F%2Ft.example%2Fcheq%2F1"
        );
    }

    #[test]
    fn rfc3339_writes_utc() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_552_565_000), "2026-11-24T20:36:05Z");
        assert_eq!(super::rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
    }
}
