//! N-ACT's reads of one tool (§6.2, §6.3): its current version, its versions list (order,
//! numbers, completeness) and single versions, each compared with the others: a version's
//! signature is locked (§6.1).

use std::collections::HashSet;

use serde_json::Value;
use url::Url;

use super::{Listed, MAX_VERSION_PAGES, Stop, number, walk};
use crate::checks::nact::*;
use crate::probe::{Exchange, excerpt};
use crate::report::Evidence;
use crate::schema::Shape;
use crate::{Ctx, join};

/// The signature without `currentVersion`, which alone may change under one version.
fn locked_part(signature: &Value) -> Value {
    let mut s = signature.clone();
    if let Some(map) = s.as_object_mut() {
        map.remove("currentVersion");
    }
    s
}

pub(super) async fn details(ctx: &mut Ctx, root: &Url, tool: &Listed, id: &str, current: u64) {
    let answer = match ctx.probe.get(&join(root, &["tools", id]), &[]).await {
        Ok(answer) => answer,
        Err(failure) => return ctx.no_answer(&DETAILS, &failure),
    };
    let body = answer.json().filter(|_| answer.status == 200);
    if let Some(body) = &body {
        ctx.shape(&SIGNATURE, Shape::NactSignature, body, &answer);
    }
    let version = body.as_ref().and_then(|b| number(&b["version"]));
    ctx.rec.judge(&DETAILS, version == Some(current), || {
        answer.evidence(format!(
            "`{}`'s current version is {current}; this answer is version {}",
            tool.name(),
            body.as_ref().map_or(Value::Null, |b| b["version"].clone())
        ))
    });
    if let Some(body) = body.filter(|_| version == Some(current)) {
        ctx.rec
            .judge(&LOCKED, locked_part(&body) == locked_part(&tool.signature), || {
                answer.evidence(format!(
                    "`{}` version {current} here differs from the same version in the listing",
                    tool.name()
                ))
            });
    }
}

/// The versions list (order, numbers, completeness), and two reads of the current version and
/// one of the oldest, compared with the listing and the versions list. The versions listed.
pub(super) async fn versions(ctx: &mut Ctx, root: &Url, tool: &Listed, id: &str, current: u64) -> Vec<Value> {
    let list_url = join(root, &["tools", id, "versions"]);
    let (items, answer) = match walk(ctx, &list_url, &[], MAX_VERSION_PAGES, "version", &VERSIONS_ORDER).await {
        Ok(walked) => walked,
        Err(Stop::NoAnswer) => return Vec::new(),
        Err(Stop::Bad(answer, found)) => {
            ctx.rec.fail(&VERSIONS_ORDER, answer.evidence(found));
            return Vec::new();
        }
    };
    let numbers: Vec<Option<u64>> = items.iter().map(|v| number(&v["version"])).collect();
    let newest_first = numbers.first() == Some(&Some(current))
        && numbers.iter().all(Option::is_some)
        && numbers.windows(2).all(|w| w[0] > w[1]);
    let shown: Vec<String> = numbers
        .iter()
        .map(|n| n.map_or("?".to_owned(), |n| n.to_string()))
        .collect();
    ctx.rec.judge(&VERSIONS_ORDER, newest_first, || {
        answer.evidence(format!(
            "`{}` (current version {current}): versions come as {shown:?}, not from {current} down",
            tool.name(),
        ))
    });
    ctx.rec
        .judge(&VERSION_INTEGER, numbers.iter().all(Option::is_some), || {
            answer.evidence(format!(
                "`{}` lists a version that is not a positive integer",
                tool.name()
            ))
        });
    if let Some(entry) = items.iter().find(|v| number(&v["version"]) == Some(current)) {
        ctx.rec
            .judge(&LOCKED, locked_part(entry) == locked_part(&tool.signature), || {
                answer.evidence(format!(
                    "`{}` version {current} in the versions list differs from the same version in the listing",
                    tool.name()
                ))
            });
    }
    complete(ctx, root, tool, id, current, &numbers, &answer).await;
    let mut reads = vec![(current, locked_part(&tool.signature)), (current, Value::Null)];
    if let Some(oldest) = items
        .last()
        .filter(|v| number(&v["version"]).is_some_and(|n| n < current))
    {
        reads.push((number(&oldest["version"]).unwrap_or(1), locked_part(oldest)));
    }
    let mut previous: Option<Value> = None;
    for (version, expected) in reads {
        let Some((answer, body)) = read_version(ctx, root, tool, id, version).await else {
            return items;
        };
        let read = locked_part(&body);
        // The second read of the current version is compared with the first.
        let expected = if expected.is_null() {
            previous.clone().unwrap_or_default()
        } else {
            expected
        };
        ctx.rec.judge(&LOCKED, read == expected, || {
            answer.evidence(format!(
                "`{}` version {version} changed between two reads without a new version: was {}",
                tool.name(),
                excerpt(expected.to_string().as_bytes())
            ))
        });
        previous = Some(read);
    }
    items
}

/// `GET …/versions/{version}`: the answer and its body when it is that version (VERSION_READ
/// judged); `None` when not.
async fn read_version(ctx: &mut Ctx, root: &Url, tool: &Listed, id: &str, version: u64) -> Option<(Exchange, Value)> {
    let url = join(root, &["tools", id, "versions", &version.to_string()]);
    let answer = match ctx.probe.get(&url, &[]).await {
        Ok(answer) => answer,
        Err(failure) => {
            ctx.no_answer(&VERSION_READ, &failure);
            return None;
        }
    };
    let Some(body) = answer
        .json()
        .filter(|b| answer.status == 200 && number(&b["version"]) == Some(version))
    else {
        ctx.rec.fail(
            &VERSION_READ,
            answer.evidence(format!("not `{}`'s version {version}", tool.name())),
        );
        return None;
    };
    ctx.rec.pass(&VERSION_READ);
    Some((answer, body))
}

/// The versions list holds every version that can be read (§6.3 "all versions"): a few of the
/// numbers below the current one that the list leaves out are read; one that answers fails.
/// (A version a server no longer serves is neither listed nor read.)
async fn complete(
    ctx: &mut Ctx,
    root: &Url,
    tool: &Listed,
    id: &str,
    current: u64,
    numbers: &[Option<u64>],
    list: &Exchange,
) {
    let listed: HashSet<u64> = numbers.iter().flatten().copied().collect();
    let left_out: Vec<u64> = (1..current).rev().filter(|n| !listed.contains(n)).take(3).collect();
    for version in left_out {
        let url = join(root, &["tools", id, "versions", &version.to_string()]);
        let answer = match ctx.probe.get(&url, &[]).await {
            Ok(answer) => answer,
            Err(failure) => return ctx.no_answer(&VERSIONS_ALL, &failure),
        };
        let read = answer
            .json()
            .filter(|b| answer.status == 200 && number(&b["version"]) == Some(version));
        if read.is_some() {
            return ctx.rec.fail(
                &VERSIONS_ALL,
                Evidence {
                    found: format!(
                        "`{}` version {version} answers at {}, but the versions list holds only {:?}",
                        tool.name(),
                        answer.request,
                        numbers.iter().flatten().collect::<Vec<_>>()
                    ),
                    ..list.evidence("")
                },
            );
        }
    }
    ctx.rec.pass(&VERSIONS_ALL);
}
