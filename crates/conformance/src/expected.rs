//! An expected-failures file (`--expected-failures FILE`): the checks a server is known to fail,
//! so its own CI can run the checker without failing on them while still catching regressions
//! (as the MCP conformance suite's baselines do).
//!
//! ```yaml
//! # Why each is here, and the issue that will remove it.
//! - nact-6.1-name-snake-case   # our legacy tools keep their camelCase names
//! - woa-7-conditional
//! ```
//!
//! A listed check that fails (or warns) does not fail the run; an unlisted failure does; a
//! listed check that passes fails the run too (exit 4: the fix landed, remove the entry); a
//! listed check that is skipped is tolerated (it could not be observed this time). An id that
//! is no check of the checker is an error, so a typo cannot excuse nothing in silence.

use crate::checks;

/// The check ids of an expected-failures file (a YAML sequence of strings, or an object with
/// such a sequence under `expected_failures`), each a check of some requirement set.
pub fn parse(text: &str) -> Result<Vec<String>, String> {
    let value: serde_json::Value =
        serde_saphyr::from_str(text).map_err(|e| format!("not a YAML list of check ids ({e})"))?;
    let list = match &value {
        serde_json::Value::Null => return Ok(Vec::new()),
        serde_json::Value::Array(list) => list,
        serde_json::Value::Object(map) => match map.get("expected_failures") {
            Some(serde_json::Value::Array(list)) => list,
            _ => return Err("expected a YAML list of check ids (or `expected_failures:` with one)".to_owned()),
        },
        _ => return Err("expected a YAML list of check ids".to_owned()),
    };
    let mut ids = Vec::new();
    for item in list {
        let Some(id) = item.as_str().map(str::trim) else {
            return Err(format!(
                "every entry is a check id (a string), but one is {}",
                crate::safe::text(&item.to_string())
            ));
        };
        if checks::by_id(id).is_none() {
            return Err(format!(
                "`{}` is no check of the checker; the ids are those of `--format json` (`checks[].id`) and docs/conformance.md",
                crate::safe::text(id)
            ));
        }
        if !ids.iter().any(|known| known == id) {
            ids.push(id.to_owned());
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_known_ids_is_read_and_a_typo_is_refused() {
        let ids = parse("# known\n- nact-6.1-name-snake-case  # legacy names\n- woa-7-conditional\n").unwrap();
        assert_eq!(ids, ["nact-6.1-name-snake-case", "woa-7-conditional"]);
        let ids = parse("expected_failures: [otc-health, otc-health]").unwrap();
        assert_eq!(ids, ["otc-health"]);
        assert_eq!(parse("").unwrap(), Vec::<String>::new());
        let typo = parse("- nact-6.1-name-snakecase").unwrap_err();
        assert!(typo.contains("`nact-6.1-name-snakecase` is no check"), "{typo}");
        assert!(parse("- {id: x}").is_err());
        assert!(parse("just text").is_err());
    }
}
