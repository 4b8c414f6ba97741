//! The fixture catalog (`examples/conformance-fixture`, docs/conformance.md "The fixture
//! catalog"): tools any server can implement so that the checker knows inputs that tell
//! behaviours apart instead of guessing them from schemas. When a server lists them, the
//! checker invokes them with these inputs (they are read-only and return their input).

use serde_json::{Value, json};

/// The fixture's tools by name, with the input the checker sends each: one every version
/// accepts where the tool has versions that differ (`conformance_versions`'s `V1`), so a
/// pinned invocation of any version must succeed too.
const TOOLS: [(&str, &str); 2] = [
    ("conformance_echo", r#"{"text": "conformance fixture"}"#),
    ("conformance_versions", r#"{"marker": "V1"}"#),
];

/// The fixture tool among `names` (a tool's names in its protocol: N-ACT `name`, OTC `name`
/// such as `Conformance_conformance_echo` or the tool part of its id, WoA agent `id`), if any.
pub(crate) fn tool(names: &[&str]) -> Option<(&'static str, Value)> {
    TOOLS.iter().find_map(|(tool, input)| {
        names
            .iter()
            .any(|n| *n == *tool || n.strip_prefix("Conformance_") == Some(tool))
            .then(|| (*tool, serde_json::from_str(input).unwrap_or_default()))
    })
}

/// The markers of `conformance_versions`, oldest first: version 1.0.0 accepts `V1`, 1.2.0 also
/// `V1_2`, 2.0.0 also `V2` (examples/conformance-fixture/tools.yaml).
const MARKERS: [&str; 3] = ["V1", "V1_2", "V2"];

/// Inputs that tell the versions of the fixture tool among `names` apart (each version of
/// `conformance_versions` accepts one more marker), for OTC's version resolution: an input only
/// some versions take shows which one a request resolved to. None for any other tool.
pub(crate) fn telling_inputs(names: &[&str]) -> Vec<Value> {
    match tool(names) {
        Some(("conformance_versions", _)) => MARKERS.iter().map(|m| json!({"marker": m})).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_tools_are_known_by_every_protocol_name() {
        assert_eq!(tool(&["conformance_echo"]).unwrap().0, "conformance_echo");
        assert_eq!(
            tool(&["Conformance_conformance_versions", "conformance_versions"])
                .unwrap()
                .1,
            json!({"marker": "V1"})
        );
        assert!(tool(&["echo", "Other_conformance_echo"]).is_none());
        assert_eq!(telling_inputs(&["Conformance_conformance_versions"]).len(), 3);
        assert!(telling_inputs(&["conformance_echo"]).is_empty());
    }
}
