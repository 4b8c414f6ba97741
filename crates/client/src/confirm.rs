//! A call the server holds until a human confirms it (issue #40; CHEQ, docs/approvals.md):
//! each protocol's confirmation answer read into one [`Confirmation`], the bounded wait on its
//! result URI, and what the retry presents ([`Presented`]).
//!
//! Every protocol says it its own way (N-ACT `202` with the URI pack, or a `403` problem; OTC
//! `400` with the extension member `confirmation`; WoA `403` `confirmation-required`; MCP before
//! 2026-07-28 `-32042` with a URL elicitation), and the retry carries the id as each says
//! (N-ACT invocation member `confirmation`, OTC `request.context.confirmation` with the same
//! `call_id`, WoA envelope member `confirmation`, MCP `_meta["toolhost/confirmation"]`: the
//! client's MCP sessions open with `initialize`, so they speak 2025-11-25 and never meet
//! 2026-07-28's `requestState`; toolhost reads the id in `_meta` on every version). The result URI is polled only on the origin the call went to: a
//! server cannot make the client poll (with its credentials) anywhere else.

use std::time::Duration;

use serde_json::Value;
use url::Url;

use crate::error::Error;
use crate::http::Reply;
use crate::model::Protocol;
use crate::text;

/// toolhost's key for a confirmation over MCP: the `_meta` member a retry presents the id in,
/// and the `data` member of `-32042` holding the URI pack.
pub(crate) const MCP_KEY: &str = "toolhost/confirmation";

/// The poll interval when the server names none (`Retry-After`).
const DEFAULT_INTERVAL: Duration = Duration::from_secs(2);
/// The bounds on a poll interval the server names: not faster than this…
const MIN_INTERVAL: Duration = Duration::from_millis(250);
/// …nor slower, so a decision is seen soon after it is made.
const MAX_INTERVAL: Duration = Duration::from_secs(30);

/// Where a confirmation request stands, as the server answered the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// A fresh request: nobody decided yet.
    Required,
    /// The request presented is still waiting for a decision.
    Pending,
    /// A human declined it: the call will not run.
    Declined,
}

/// A call the server refused to run until a human confirms it: nothing ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    /// The tool.
    pub tool: String,
    /// The confirmation's id (cleaned).
    pub id: String,
    /// Where it stands.
    pub standing: Standing,
    /// The page a human opens to decide (CHEQ `confirmation uri`), cleaned.
    pub link: String,
    /// Where the decision can be polled (CHEQ `result uri`), when the server gave one.
    pub result_uri: Option<String>,
    /// When the request lapses (RFC 3339), when the server said.
    pub expires: Option<String>,
    /// Why a confirmation presented did not authorize the call, when the server said.
    pub note: Option<String>,
    /// How long the server asks a poller to wait between polls (`Retry-After`).
    pub retry_after: Option<Duration>,
    /// What the retry presents.
    pub presented: Presented,
    /// The origin of the server that answered: the only one the result URI is polled on.
    pub(crate) origin: Option<url::Origin>,
    /// The protocol it answered over.
    pub(crate) protocol: Protocol,
}

/// What a retry presents to the server ([`crate::CallContext::confirmation`]): the id, and
/// what else the protocol binds the confirmation to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Presented {
    /// The confirmation's id.
    pub id: String,
    /// OTC: the `call_id` of the call that was asked about (the confirmation is bound to it).
    pub call_id: Option<String>,
}

/// Why waiting for a confirmation ended without one: nothing ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unconfirmed {
    /// A human declined the call.
    Declined,
    /// The request lapsed before anyone decided (or before the approval was used).
    Expired,
    /// Nobody decided within the wait the caller allowed.
    NotInTime(Duration),
    /// The caller did not wait (a wait of zero).
    NotWaited,
    /// The server named no result URI to wait on.
    NoResultUri,
}

impl std::fmt::Display for Unconfirmed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Declined => f.write_str("the user declined it"),
            Self::Expired => f.write_str("the request lapsed before it was approved and used"),
            Self::NotInTime(wait) => write!(
                f,
                "nobody decided within {} s (raise --confirm-wait to wait longer)",
                wait.as_secs()
            ),
            Self::NotWaited => f.write_str("it was not confirmed yet, and the client did not wait"),
            Self::NoResultUri => f.write_str("the server gave no result URI to wait on; call it again once confirmed"),
        }
    }
}

impl Confirmation {
    /// The confirmation in `members` (the URI pack and its companions: N-ACT's `202` body, a
    /// WoA or N-ACT problem, OTC's extension member), both CHEQ spellings read; `None` when
    /// there is no id and link.
    pub(crate) fn from_members(tool: &str, protocol: Protocol, members: &Value, reply: &Reply) -> Option<Self> {
        let read = |spaced: &str| {
            let underscored = spaced.replace(' ', "_");
            members
                .get(spaced)
                .or_else(|| members.get(&underscored))
                .and_then(Value::as_str)
                .map(|s| text::one_line(s, 2000))
        };
        let id = read("confirmation")?;
        let link = read("confirmation uri")?;
        let declined = read("status").as_deref() == Some("declined")
            || read("type").is_some_and(|t| t.ends_with("confirmation-declined"));
        let standing = match read("status").as_deref() {
            _ if declined => Standing::Declined,
            Some("pending") => Standing::Pending,
            _ => Standing::Required,
        };
        Some(Self {
            tool: tool.to_owned(),
            presented: Presented {
                id: id.clone(),
                ..Presented::default()
            },
            id,
            standing,
            link,
            result_uri: read("result uri"),
            expires: read("expires"),
            note: read("note"),
            retry_after: reply.retry_after(),
            origin: Some(reply.url.origin()),
            protocol,
        })
    }

    /// The confirmation an N-ACT or WoA answer is: `202` with the URI pack (N-ACT), or a `403`
    /// problem `confirmation-required` / `confirmation-declined`.
    pub(crate) fn from_reply(tool: &str, protocol: Protocol, reply: &Reply) -> Option<Self> {
        if !matches!(reply.status, 202 | 403) {
            return None;
        }
        let body = reply.json().ok()?;
        if reply.status == 403 && !body["type"].as_str().is_some_and(|t| t.contains("confirmation-")) {
            return None;
        }
        Self::from_members(tool, protocol, &body, reply)
    }

    /// MCP's `-32042` (URL elicitation required, 2025-11-25): its first URL elicitation is the
    /// link, its `elicitationId` the id; toolhost adds the URI pack under `data` `MCP_KEY`.
    pub(crate) fn from_mcp(tool: &str, server: Option<&Url>, data: &Value) -> Option<Self> {
        let elicitation = data["elicitations"].as_array()?.iter().find(|e| e["mode"] == "url")?;
        let read = |v: &Value| v.as_str().map(|s| text::one_line(s, 2000));
        let id = read(&elicitation["elicitationId"]).filter(|id| !id.is_empty())?;
        let pack = &data[MCP_KEY];
        let from_pack = |key: &str| read(&pack[key]).or_else(|| read(&pack[key.replace(' ', "_")]));
        Some(Self {
            tool: tool.to_owned(),
            presented: Presented {
                id: id.clone(),
                ..Presented::default()
            },
            standing: match from_pack("status").as_deref() {
                Some("pending") => Standing::Pending,
                _ => Standing::Required,
            },
            link: read(&elicitation["url"])?,
            result_uri: from_pack("result uri"),
            expires: from_pack("expires"),
            note: from_pack("note"),
            retry_after: None,
            id,
            origin: server.map(Url::origin),
            protocol: Protocol::Mcp,
        })
    }

    /// The result URI, when it is on the origin of the server that answered; the refusal
    /// otherwise (the client polls, with the caller's credentials, only the server it called).
    pub(crate) fn result_url(&self) -> Result<Option<Url>, Error> {
        let Some(uri) = &self.result_uri else {
            return Ok(None);
        };
        // Not a URL: nothing to wait on, said as such.
        let Ok(url) = Url::parse(uri) else {
            return Ok(None);
        };
        match &self.origin {
            Some(origin) if *origin == url.origin() => Ok(Some(url)),
            _ => Err(Error::ForeignResult {
                tool: self.tool.clone(),
                url: url.to_string(),
                link: self.link.clone(),
            }),
        }
    }

    /// The wait before the next poll: the server's `Retry-After`, bounded.
    pub(crate) fn interval(&self, asked: Option<Duration>) -> Duration {
        asked
            .or(self.retry_after)
            .unwrap_or(DEFAULT_INTERVAL)
            .clamp(MIN_INTERVAL, MAX_INTERVAL)
    }
}

impl std::fmt::Display for Confirmation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.standing {
            Standing::Declined => write!(
                f,
                "the user declined this call of `{}`, so it did not run and nothing was done",
                self.tool
            )?,
            Standing::Required | Standing::Pending => write!(
                f,
                "`{}` needs the user's confirmation of this exact call before it runs; nothing was done. Confirm at {} and call it again with the confirmation {}",
                self.tool, self.link, self.id
            )?,
        }
        if let Some(note) = &self.note {
            write!(f, " ({note})")?;
        }
        Ok(())
    }
}

/// What a poll of the result URI says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Polled {
    /// Nobody decided yet.
    Pending,
    /// Approved (or already used): the retry runs it, or gets its stored outcome.
    Approved,
    /// It ended without an approval.
    Ended(Standing),
    /// The request is gone: unknown here, or lapsed.
    Lapsed,
}

/// The result URI's `status` member read.
pub(crate) fn polled(body: &Value) -> Option<Polled> {
    Some(match body["status"].as_str()? {
        "pending" => Polled::Pending,
        "approved" | "consuming" | "consumed" => Polled::Approved,
        "declined" | "cancelled" => Polled::Ended(Standing::Declined),
        "expired" => Polled::Lapsed,
        _ => return None,
    })
}

/// How many times one call is asked about before the client gives up: the first answer, and
/// a fresh request on the retry (the approval lapsed meanwhile, say) once more.
const MAX_ROUNDS: usize = 3;

impl crate::Client {
    /// Waits until a human decided on `confirmation`, for at most `within`: polls its result
    /// URI (only on the origin of the server that answered, through the SSRF guard, with the
    /// call's credentials and `bearer`) at the server's `Retry-After`, bounded. `Ok` when it is
    /// approved (the retry runs it, or gets the outcome already stored); an
    /// [`Error::Unconfirmed`] saying why nothing ran otherwise.
    pub async fn wait_for_confirmation(
        &self,
        confirmation: &Confirmation,
        within: Duration,
        bearer: Option<&toolhost_core::Secret>,
    ) -> Result<(), Error> {
        let unconfirmed = |why| Error::Unconfirmed {
            tool: confirmation.tool.clone(),
            link: confirmation.link.clone(),
            why,
        };
        if confirmation.standing == Standing::Declined {
            return Err(unconfirmed(Unconfirmed::Declined));
        }
        if within.is_zero() {
            return Err(unconfirmed(Unconfirmed::NotWaited));
        }
        let Some(url) = confirmation.result_url()? else {
            return Err(unconfirmed(Unconfirmed::NoResultUri));
        };
        let deadline = tokio::time::Instant::now() + within;
        let ctx = self.ctx(crate::http::Freshness::Revalidate);
        loop {
            let mut asked = None;
            match ctx.http.get_fresh(&url, bearer).await {
                Ok(reply) if reply.status == 200 => {
                    asked = reply.retry_after();
                    match reply.json().ok().as_ref().and_then(polled) {
                        Some(Polled::Approved) => return Ok(()),
                        Some(Polled::Pending) => {}
                        Some(Polled::Ended(_)) => return Err(unconfirmed(Unconfirmed::Declined)),
                        Some(Polled::Lapsed) => return Err(unconfirmed(Unconfirmed::Expired)),
                        None => {
                            return Err(Error::Protocol {
                                url: url.to_string(),
                                protocol: confirmation.protocol,
                                detail: "the confirmation's result URI answered without a status CHEQ names (pending, approved, declined, expired, consumed)".to_owned(),
                            });
                        }
                    }
                }
                // Unknown there: it lapsed and was forgotten.
                Ok(reply) if matches!(reply.status, 404 | 410) => return Err(unconfirmed(Unconfirmed::Expired)),
                // Busy or restarting: the decision is still to come, ask again.
                Ok(reply) if reply.status == 429 || reply.status >= 500 => asked = reply.retry_after(),
                Ok(reply) => {
                    let problem = crate::problem::Read::from_body(&reply.body);
                    return Err(crate::nact::status_error(&reply, problem));
                }
                Err(Error::Transport { .. }) => {}
                Err(error) => return Err(error),
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Err(unconfirmed(Unconfirmed::NotInTime(within)));
            }
            tokio::time::sleep(confirmation.interval(asked).min(left)).await;
        }
    }

    /// [`crate::Client::call_with`], and when the server holds the call for a human's
    /// confirmation: `asked` is told (to show the link), the client waits for the decision
    /// ([`crate::Client::wait_for_confirmation`], `within` in all) and, once approved, calls
    /// again presenting the confirmation as the protocol says. Declined, lapsed or undecided in
    /// time is an [`Error::Unconfirmed`]: nothing ran.
    pub async fn call_confirming<F>(
        &self,
        tool: &crate::Tool,
        arguments: Value,
        context: &crate::CallContext,
        within: Duration,
        mut asked: F,
    ) -> Result<Value, Error>
    where
        F: FnMut(&Confirmation),
    {
        let deadline = tokio::time::Instant::now() + within;
        let mut context = context.clone();
        let mut last = None;
        for _ in 0..MAX_ROUNDS {
            match self.call_with(tool, arguments.clone(), &context).await {
                Err(Error::Confirmation(confirmation)) => {
                    if confirmation.standing != Standing::Declined {
                        asked(&confirmation);
                    }
                    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                    let waited = match (left.is_zero(), within.is_zero()) {
                        (true, false) => Err(Error::Unconfirmed {
                            tool: confirmation.tool.clone(),
                            link: confirmation.link.clone(),
                            why: Unconfirmed::NotInTime(within),
                        }),
                        _ => {
                            self.wait_for_confirmation(&confirmation, left, context.bearer.as_ref())
                                .await
                        }
                    };
                    waited.map_err(|e| match e {
                        Error::Unconfirmed {
                            tool,
                            link,
                            why: Unconfirmed::NotInTime(_),
                        } => Error::Unconfirmed {
                            tool,
                            link,
                            why: Unconfirmed::NotInTime(within),
                        },
                        other => other,
                    })?;
                    context.confirmation = Some(confirmation.presented.clone());
                    last = Some(confirmation);
                }
                other => return other,
            }
        }
        Err(match last {
            Some(confirmation) => Error::Confirmation(confirmation),
            None => Error::Setup("no call was made".to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(url: &str, status: u16, body: &Value) -> Reply {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "5".parse().unwrap());
        Reply {
            url: Url::parse(url).unwrap(),
            status,
            headers,
            body: serde_json::to_vec(body).unwrap(),
        }
    }

    #[test]
    fn reads_every_spelling_of_the_uri_pack_and_polls_only_its_own_origin() {
        let spaced = json!({"status": "confirmation_required", "confirmation": "c1", "confirmation uri": "http://h/confirm/c1", "result uri": "http://h/cheq/c1/result"});
        let c = Confirmation::from_reply(
            "pay",
            Protocol::Nact,
            &reply("http://h/nact/tools/pay:invoke", 202, &spaced),
        )
        .unwrap();
        assert_eq!((c.id.as_str(), c.standing), ("c1", Standing::Required));
        assert_eq!(c.retry_after, Some(Duration::from_secs(5)));
        assert_eq!(c.result_url().unwrap().unwrap().as_str(), "http://h/cheq/c1/result");
        let underscored = json!({"type": "https://x/problems/confirmation-declined", "confirmation": "c2", "confirmation_uri": "http://h/confirm/c2", "result_uri": "http://evil/r"});
        let c = Confirmation::from_reply(
            "pay",
            Protocol::Nact,
            &reply("http://h/woa/agents/pay/invoke", 403, &underscored),
        )
        .unwrap();
        assert_eq!(c.standing, Standing::Declined);
        assert!(
            matches!(c.result_url(), Err(Error::ForeignResult { .. })),
            "another origin is refused"
        );
        let other =
            json!({"type": "https://x/problems/forbidden", "confirmation": "c3", "confirmation uri": "http://h/"});
        assert_eq!(
            Confirmation::from_reply("pay", Protocol::Nact, &reply("http://h/", 403, &other)),
            None
        );
        assert_eq!(
            Confirmation::from_reply("pay", Protocol::Nact, &reply("http://h/", 202, &json!({"a": 1}))),
            None
        );
    }

    #[test]
    fn reads_mcp_url_elicitation_required() {
        let data = json!({"elicitations": [{"mode": "url", "elicitationId": "e1", "url": "http://h/confirm/e1", "message": "m"}],
            MCP_KEY: {"result uri": "http://h/cheq/e1/result", "status": "pending"}});
        let server = Url::parse("http://h/mcp").unwrap();
        let c = Confirmation::from_mcp("pay", Some(&server), &data).unwrap();
        assert_eq!((c.id.as_str(), c.standing), ("e1", Standing::Pending));
        assert_eq!(c.link, "http://h/confirm/e1");
        assert!(c.result_url().unwrap().is_some());
        assert_eq!(Confirmation::from_mcp("pay", None, &json!({"elicitations": []})), None);
    }

    #[test]
    fn the_interval_honours_retry_after_within_bounds() {
        let body = json!({"confirmation": "c", "confirmation uri": "http://h/c"});
        let c = Confirmation::from_reply("t", Protocol::Nact, &reply("http://h/", 202, &body)).unwrap();
        assert_eq!(c.interval(None), Duration::from_secs(5));
        assert_eq!(c.interval(Some(Duration::from_secs(3600))), MAX_INTERVAL);
        assert_eq!(c.interval(Some(Duration::ZERO)), MIN_INTERVAL);
        assert_eq!(polled(&json!({"status": "consumed"})), Some(Polled::Approved));
        assert_eq!(polled(&json!({"status": "expired"})), Some(Polled::Lapsed));
        assert_eq!(polled(&json!({"status": "what"})), None);
    }
}
