//! The checks: one per normative statement that can be observed from outside the server
//! (docs/conformance.md lists the ones that cannot). Each quotes the spec it comes from.
//!
//! Statements that define what the API *is* ("the body … includes an element called items",
//! "all of the APIs support a pageCursor and pageLimit") carry no RFC 2119 keyword in the
//! drafts; they are checked as MUST, since a server without them does not speak the protocol.

use std::fmt;

/// Which specification a check comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Spec {
    /// draft-rosenberg-aiproto-nact-00.
    Nact,
    /// Open Tool Calling 1.0.
    Otc,
    /// draft-gaikwad-woa-00.
    Woa,
}

impl Spec {
    /// The short name ("N-ACT", "OTC 1.0", "WoA").
    pub fn name(self) -> &'static str {
        match self {
            Spec::Nact => "N-ACT",
            Spec::Otc => "OTC 1.0",
            Spec::Woa => "WoA",
        }
    }

    /// The document checked against.
    pub fn document(self) -> &'static str {
        match self {
            Spec::Nact => "draft-rosenberg-aiproto-nact-00",
            Spec::Otc => "Open Tool Calling 1.0 (openapi.json and its pages)",
            Spec::Woa => "draft-gaikwad-woa-00",
        }
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One revision of a spec, and with it a frozen requirement set: the checks written from that
/// text. A later draft gets a revision of its own, with its own set; a server is checked
/// against one (`--spec-version`, the latest of its spec by default), and the report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    /// draft-rosenberg-aiproto-nact-00.
    Nact00,
    /// Open Tool Calling 1.0.
    Otc10,
    /// draft-gaikwad-woa-00.
    Woa00,
}

impl Revision {
    /// Every revision, oldest first within each spec.
    pub const ALL: [Revision; 3] = [Revision::Nact00, Revision::Otc10, Revision::Woa00];

    /// The name `--spec-version` takes ("nact-00", "otc-1.0", "woa-00").
    pub fn name(self) -> &'static str {
        match self {
            Revision::Nact00 => "nact-00",
            Revision::Otc10 => "otc-1.0",
            Revision::Woa00 => "woa-00",
        }
    }

    /// The spec it is a revision of.
    pub const fn spec(self) -> Spec {
        match self {
            Revision::Nact00 => Spec::Nact,
            Revision::Otc10 => Spec::Otc,
            Revision::Woa00 => Spec::Woa,
        }
    }

    /// The latest revision of `spec`: the default requirement set.
    pub const fn latest(spec: Spec) -> Self {
        match spec {
            Spec::Nact => Revision::Nact00,
            Spec::Otc => Revision::Otc10,
            Spec::Woa => Revision::Woa00,
        }
    }

    /// The revision named `name`; the error lists the names.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|r| r.name()).collect();
                format!(
                    "--spec-version {name}: no such requirement set; the checker has {}",
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The requirement level of a statement (RFC 2119).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Keyword {
    /// MUST, MUST NOT, REQUIRED (and statements of what the API is).
    Must,
    /// SHOULD, SHOULD NOT, RECOMMENDED.
    Should,
}

impl fmt::Display for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Keyword::Must => "MUST",
            Keyword::Should => "SHOULD",
        })
    }
}

/// One normative statement checked from outside.
#[derive(Debug, PartialEq, Eq)]
pub struct Check {
    /// A stable id, `<protocol>-<section>-<what>`.
    pub id: &'static str,
    /// The spec.
    pub spec: Spec,
    /// The section (N-ACT, WoA) or page (OTC).
    pub section: &'static str,
    /// MUST or SHOULD.
    pub keyword: Keyword,
    /// What the spec says, in its own words where they fit on a line.
    pub text: &'static str,
    /// The revision whose requirement set holds it.
    pub revision: Revision,
}

/// A check of the latest revision of `spec` (each spec has one so far; a check of a later one
/// will name its revision).
const fn check(id: &'static str, spec: Spec, section: &'static str, keyword: Keyword, text: &'static str) -> Check {
    Check {
        id,
        spec,
        section,
        keyword,
        text,
        revision: Revision::latest(spec),
    }
}

use Keyword::{Must, Should};
use Spec::{Nact, Otc, Woa};

pub(crate) mod nact {
    use super::*;
    pub const ENUMERATION: Check = check(
        "nact-6.1-enumeration",
        Nact,
        "6.1",
        Must,
        "Servers MUST implement the enumeration API: GET {platform-root}/tools answers a JSON body with `items` (an array of ToolSignature objects) and `paging`.",
    );
    pub const SIGNATURE: Check = check(
        "nact-6.1-signature",
        Nact,
        "6.1",
        Must,
        "Each item is a ToolSignature (Figure 2): `toolId`, `name`, `description`, `version`, `currentVersion` and parameter arrays whose entries have an `id` and a `name`.",
    );
    pub const TOOL_ID: Check = check(
        "nact-6.1-tool-id-uuid",
        Nact,
        "6.1",
        Must,
        "The toolID is always a UUID, ensuring tool uniqueness on the server.",
    );
    pub const NAME_LENGTH: Check = check(
        "nact-6.1-name-length",
        Nact,
        "6.1",
        Must,
        "The name MUST be less than 255 characters.",
    );
    pub const NAME_UNIQUE: Check = check(
        "nact-6.1-name-unique",
        Nact,
        "6.1",
        Must,
        "The name MUST be unique across all other tools on the API server.",
    );
    pub const NAME_SNAKE: Check = check(
        "nact-6.1-name-snake-case",
        Nact,
        "6.1",
        Should,
        "Names SHOULD use snake case.",
    );
    pub const DESCRIPTION_LENGTH: Check = check(
        "nact-6.1-description-length",
        Nact,
        "6.1",
        Must,
        "The tool description MUST be less than 2000 characters.",
    );
    pub const VERSION_INTEGER: Check = check(
        "nact-6.1-version-integer",
        Nact,
        "6.1",
        Must,
        "The version number of a tool MUST be a positive integer, and MUST increase monotonically, starting at 1.",
    );
    pub const CURRENT_VERSION: Check = check(
        "nact-6.1-listing-current",
        Nact,
        "6.1",
        Must,
        "The version returned at the top level tool enumeration endpoint MUST be the latest version of the tool: `version` and `currentVersion` are always identical.",
    );
    pub const TYPES: Check = check(
        "nact-6.1-types",
        Nact,
        "6.1",
        Must,
        "Input types are \"string\" (the default), \"int\", \"boolean\" and \"enum\"; more complex input types are not supported. Outputs add \"json\".",
    );
    pub const ENUM_VALUES: Check = check(
        "nact-6.1-enum-allowed-values",
        Nact,
        "6.1",
        Must,
        "If the type is enum, the input parameter must include the attribute \"allowed-values\", an array of name-description pairs.",
    );
    pub const ENUM_NAMES: Check = check(
        "nact-6.1-enum-names",
        Nact,
        "6.1",
        Must,
        "For enumerated strings, names MUST be snake case but capitalized, with a maximum length of 255 characters.",
    );
    pub const PARAMETERS_UNIQUE: Check = check(
        "nact-6.1-parameters-unique",
        Nact,
        "6.1",
        Must,
        "Input parameter IDs need only be unique within the tool; input parameter names must also be unique within the tool.",
    );
    pub const LOCKED: Check = check(
        "nact-6.1-signature-locked",
        Nact,
        "6.1",
        Must,
        "For a particular version the signature is completely locked: the server MUST NOT change any part of it (but currentVersion) without changing the version.",
    );
    pub const DETAILS: Check = check(
        "nact-6.2-current-version",
        Nact,
        "6.2",
        Must,
        "GET {platform-root}/tools/{toolID}: the server MUST return the current version of the specific tool.",
    );
    pub const VERSIONS_ORDER: Check = check(
        "nact-6.3-versions-newest-first",
        Nact,
        "6.3",
        Must,
        "GET {platform-root}/tools/{toolID}/versions is paginated and includes the full signature of each version, sorted from most recent to oldest.",
    );
    pub const VERSIONS_ALL: Check = check(
        "nact-6.3-versions-all",
        Nact,
        "6.3",
        Must,
        "The API allows all versions of a tool to be retrieved via GET {platform-root}/tools/{toolID}/versions: a version that can be read at …/versions/{versionNum} is in that list.",
    );
    pub const VERSION_READ: Check = check(
        "nact-6.3-version-by-number",
        Nact,
        "6.3",
        Must,
        "An individual version can be retrieved via GET {platform-root}/tools/{toolID}/versions/{versionNum}.",
    );
    pub const TAG_FILTER: Check = check(
        "nact-5.2-tag-filter",
        Nact,
        "5.2",
        Must,
        "The enumeration API supports tagging, with filtering on tags: filtered by one of its tags (`tag=`; the draft names no parameter), the listing holds exactly the tools that carry it.",
    );
    pub const PAGINATION: Check = check(
        "nact-6.4-pagination",
        Nact,
        "6.4",
        Must,
        "All of the enumeration APIs support pageCursor and pageLimit; `paging` holds the page limit the server offers and `next`, the cursor of the next page (so following `next` reaches the end, each tool once).",
    );
    pub const INVOKE: Check = check(
        "nact-7-invoke",
        Nact,
        "7",
        Must,
        "POST {platform-root}/tools/{toolID}:invoke with an invocation object answers `output_parameters` (name and value).",
    );
    pub const OUTPUT_NAMES: Check = check(
        "nact-7-output-names",
        Nact,
        "7",
        Must,
        "The output MUST include the name which matches to the output name in the signature.",
    );
    pub const PINNED: Check = check(
        "nact-7-pinned-invoke",
        Nact,
        "7",
        Must,
        "A specific version can be invoked: POST {platform-root}/tools/{toolID}/versions/{versionId}:invoke runs that version (5.4: servers allow invocation against a specific version), for each version the tool lists.",
    );
    pub const MALFORMED: Check = check(
        "nact-7-malformed-is-4xx",
        Nact,
        "7",
        Must,
        "Traditional HTTP response codes apply: 4xx when the request is not formatted correctly, 5xx only for temporary failures (which the executor SHOULD retry).",
    );
    pub const UNKNOWN_TOOL: Check = check(
        "nact-7-unknown-tool-is-4xx",
        Nact,
        "7",
        Must,
        "Traditional HTTP response codes apply: invoking a toolID the server does not have is a 4xx, not a 5xx or a success.",
    );

    pub const ALL: &[&Check] = &[
        &ENUMERATION,
        &SIGNATURE,
        &TOOL_ID,
        &NAME_LENGTH,
        &NAME_UNIQUE,
        &NAME_SNAKE,
        &DESCRIPTION_LENGTH,
        &VERSION_INTEGER,
        &CURRENT_VERSION,
        &TYPES,
        &ENUM_VALUES,
        &ENUM_NAMES,
        &PARAMETERS_UNIQUE,
        &LOCKED,
        &DETAILS,
        &VERSIONS_ORDER,
        &VERSIONS_ALL,
        &VERSION_READ,
        &TAG_FILTER,
        &PAGINATION,
        &INVOKE,
        &OUTPUT_NAMES,
        &PINNED,
        &MALFORMED,
        &UNKNOWN_TOOL,
    ];
}

pub(crate) mod otc {
    use super::*;
    pub const HEALTH: Check = check(
        "otc-health",
        Otc,
        "health-check",
        Must,
        "An OTC server MUST implement GET /health; if the server is ready to receive tool calls, it MUST return 200 OK (a 503 only while it is not).",
    );
    pub const HEALTH_NO_AUTH: Check = check(
        "otc-health-no-auth",
        Otc,
        "health-check",
        Must,
        "GET /health — Security: No authentication is required (openapi.json: `security: [{}]`).",
    );
    pub const IGNORE_AUTHORIZATION: Check = check(
        "otc-authn-ignores-authorization",
        Otc,
        "security-authn",
        Must,
        "If a server is configured to not require authentication, the server MUST ignore the `Authorization` header.",
    );
    pub const LIST: Check = check(
        "otc-list-tools",
        Otc,
        "list-tools",
        Must,
        "GET /tools answers 200 with a JSON object whose `tools` array holds complete Tool Definitions.",
    );
    pub const LIST_SCHEMA: Check = check(
        "otc-list-schema",
        Otc,
        "list-tools",
        Should,
        "The listing includes a `$schema` URI reference indicating the OTC version.",
    );
    pub const SCHEMA_URI: Check = check(
        "otc-schema-uri",
        Otc,
        "versioning",
        Must,
        "The schema URI (`$schema`) MUST be a valid URI.",
    );
    pub const DEFINITION: Check = check(
        "otc-tool-definition",
        Otc,
        "tool-definition",
        Must,
        "Each tool conforms to the ToolDefinition schema of openapi.json (`id`, `name` of 1-64 of [A-Za-z0-9_-], `description`, `input_schema.parameters`, `output_schema`); added properties are allowed (index: the standard is extensible).",
    );
    pub const ID_UNIQUE: Check = check(
        "otc-id-unique",
        Otc,
        "tool-definition",
        Must,
        "The `id` MUST be unique within the scope of the Tool Server.",
    );
    pub const VERSIONED_ID: Check = check(
        "otc-versioned-id",
        Otc,
        "tool-definition",
        Must,
        "Tools MUST be versioned as `x.y.z`; the id is `ToolkitName.ToolName@Version`.",
    );
    pub const PARAMETERS: Check = check(
        "otc-parameters",
        Otc,
        "tool-definition",
        Must,
        "Each parameter in `parameters` MUST be a valid JSON Schema object and MUST contain a `description` field.",
    );
    pub const SERVER_ERROR: Check = check(
        "otc-server-error",
        Otc,
        "call-tool",
        Must,
        "An error before the tool is called (a tool ID that is invalid or cannot be found, a version that is not available) MUST be a 400 ServerErrorResponse, whose `message` MUST be present.",
    );
    pub const VALIDATION_ERROR: Check = check(
        "otc-validation-error",
        Otc,
        "call-tool",
        Must,
        "Servers MUST validate the input against the tool's input_schema before calling the tool; invalid input MUST be a 422 ValidationErrorResponse (a missing secret or token the tool requires may be a 400 first: tool-secrets, tool-authz).",
    );
    pub const EXECUTION_ERROR: Check = check(
        "otc-execution-error",
        Otc,
        "call-tool",
        Must,
        "If an error occurs during execution of a tool, the server MUST return a 200 Call Tool Response with `success: false` and an `error` object; a 400 is for errors before the tool is called.",
    );
    pub const RESOLUTION: Check = check(
        "otc-version-resolution",
        Otc,
        "call-tool",
        Must,
        "`@x.y.z` MUST use that exact version, `@x` MUST use x.0.0, no version MUST use the latest.",
    );
    pub const SCHEMA_ABSENT: Check = check(
        "otc-schema-optional",
        Otc,
        "call-tool",
        Must,
        "If the `$schema` field is not included, the server MUST assume the client supports the latest version (a request without it is served like one with it).",
    );
    pub const SCHEMA_UNSUPPORTED: Check = check(
        "otc-schema-unsupported",
        Otc,
        "call-tool",
        Must,
        "A requested version of the OTC standard that is not supported is an error before the tool is called: a 400 ServerErrorResponse.",
    );
    pub const CALL: Check = check(
        "otc-call-response",
        Otc,
        "call-tool",
        Must,
        "A tool call answers 200 with `result` following the Call Tool Response schema (`call_id`, `success`, then `value` or `error`), even if the tool fails.",
    );
    pub const CALL_VALUE: Check = check(
        "otc-call-value",
        Otc,
        "tool-definition",
        Must,
        "`output_schema` describes what the tool returns: a successful call's `value` conforms to it (none when it is null).",
    );
    pub const CALL_ID_GENERATED: Check = check(
        "otc-call-id-generated",
        Otc,
        "call-tool-response",
        Must,
        "`call_id` is required in the response; if an ID is not provided by the client, the server will generate one.",
    );
    pub const CALL_ID_ECHO: Check = check(
        "otc-call-id-echoed",
        Otc,
        "call-tool-response",
        Must,
        "The response's `call_id` is the identifier of this tool call: the one the client sent.",
    );
    pub const CALL_ID_REPEATED: Check = check(
        "otc-call-id-idempotent",
        Otc,
        "call-tool-request",
        Should,
        "`call_id` is used as an idempotency key: the same call repeated under one `call_id` answers the same result.",
    );

    pub const ALL: &[&Check] = &[
        &HEALTH,
        &HEALTH_NO_AUTH,
        &IGNORE_AUTHORIZATION,
        &LIST,
        &LIST_SCHEMA,
        &SCHEMA_URI,
        &DEFINITION,
        &ID_UNIQUE,
        &VERSIONED_ID,
        &PARAMETERS,
        &SERVER_ERROR,
        &VALIDATION_ERROR,
        &RESOLUTION,
        &SCHEMA_ABSENT,
        &SCHEMA_UNSUPPORTED,
        &CALL,
        &EXECUTION_ERROR,
        &CALL_VALUE,
        &CALL_ID_GENERATED,
        &CALL_ID_ECHO,
        &CALL_ID_REPEATED,
    ];
}

pub(crate) mod woa {
    use super::*;
    pub const WELL_KNOWN: Check = check(
        "woa-9.1-well-known",
        Woa,
        "9.1",
        Must,
        "The WoA document is served at the origin's well-known URI /.well-known/woa.json (RFC 8615: well-known URIs are at the root of the origin, not under a path).",
    );
    pub const MEDIA_TYPE: Check = check(
        "woa-9.2-media-type",
        Woa,
        "9.2",
        Should,
        "The document is served as application/woa+json (Figure 1: 200 application/woa+json).",
    );
    pub const DOCUMENT_HTTPS: Check = check(
        "woa-8.1-document-https",
        Woa,
        "8.1",
        Must,
        "Hosts that serve WoA documents MUST use HTTPS; plain HTTP MUST NOT be used on the open Internet.",
    );
    pub const VERSION: Check = check(
        "woa-4-version",
        Woa,
        "4",
        Must,
        "`woa_version` MUST be the string \"1\".",
    );
    pub const TOP_LEVEL: Check = check(
        "woa-4-top-level",
        Woa,
        "4",
        Must,
        "A WoA document is a JSON object with `woa_version`, an `agents` array and a `transports` object.",
    );
    pub const AGENT_FIELDS: Check = check(
        "woa-4.1-agent-fields",
        Woa,
        "4.1",
        Must,
        "Agents have `id`, `name`, `description` (strings), `inputs`, `outputs` (objects) and `transports` (array of strings), all REQUIRED.",
    );
    pub const AGENT_ID: Check = check(
        "woa-4.1-agent-id",
        Woa,
        "4.1",
        Must,
        "The agent id uniquely identifies the agent within the document and MUST match agent-id = 1*( ALPHA / DIGIT / \"-\" / \"_\" ).",
    );
    pub const AGENT_TRANSPORTS: Check = check(
        "woa-4.1-agent-transports",
        Woa,
        "4.1",
        Must,
        "An agent's `transports` are names of transport configurations: keys in the top level `transports` object.",
    );
    pub const OPERATIONS: Check = check(
        "woa-4.1-operations",
        Woa,
        "4.1",
        Must,
        "Each operation has a `name` and a `description` (REQUIRED); its `inputs` and `outputs` are optional objects.",
    );
    pub const SCHEMAS: Check = check(
        "woa-4.2-json-schema",
        Woa,
        "4.2",
        Must,
        "`inputs`, `outputs` and operation level ones MUST be valid JSON Schema documents compliant with JSON Schema 2020-12.",
    );
    pub const REST_FIELDS: Check = check(
        "woa-4.3.1-rest-fields",
        Woa,
        "4.3.1",
        Must,
        "A rest transport MUST contain `base`, an absolute URL, and `invoke_path`, an absolute path beginning with \"/\".",
    );
    pub const REST_HTTPS: Check = check(
        "woa-4.3.1-rest-https",
        Woa,
        "4.3.1",
        Must,
        "The `base` URL scheme MUST be \"https\"; plain HTTP MUST NOT be used for REST invocations on the open Internet (8.1).",
    );
    pub const MCP_FIELDS: Check = check(
        "woa-4.3.2-mcp-fields",
        Woa,
        "4.3.2",
        Must,
        "An mcp transport MUST contain `server`, `tool_namespace` and `tool_field` (strings).",
    );
    pub const PRIVATE_TRANSPORTS: Check = check(
        "woa-4.3.3-private-transports",
        Woa,
        "4.3.3",
        Must,
        "Private transport names MUST use a reverse DNS prefix, such as \"com.example.mytransport\".",
    );
    pub const CACHING: Check = check(
        "woa-7-caching-headers",
        Woa,
        "7",
        Should,
        "Hosts SHOULD include HTTP caching headers, such as ETag, Last-Modified, and appropriate Cache-Control directives (not `no-store`, which forbids the caching they are for), on responses that carry a WoA document.",
    );
    pub const CONDITIONAL: Check = check(
        "woa-7-conditional",
        Woa,
        "7",
        Should,
        "The caching headers let clients poll without refetching: a conditional request for an unchanged document answers 304 Not Modified.",
    );
    pub const RESPONDS_JSON: Check = check(
        "woa-4.3.1-responds-json",
        Woa,
        "4.3.1",
        Must,
        "Hosts using the REST transport MUST respond with JSON.",
    );
    pub const AGENT_MISMATCH: Check = check(
        "woa-5.2-agent-mismatch",
        Woa,
        "5.2",
        Must,
        "An envelope whose `agent` differs from the agent in the URL MUST be rejected with HTTP status 400 (Bad Request).",
    );
    pub const MISMATCH_PROBLEM: Check = check(
        "woa-5.2-mismatch-problem",
        Woa,
        "5.2",
        Should,
        "The host SHOULD return an application/problem+json body explaining the mismatch.",
    );
    pub const ERRORS: Check = check(
        "woa-5.2-errors",
        Woa,
        "5.2",
        Should,
        "On error (here: `input` that does not conform to `inputs`), the host SHOULD return a 4xx or 5xx status with an application/problem+json body (RFC 9457).",
    );
    pub const SUCCESS: Check = check(
        "woa-5.2-success",
        Woa,
        "5.2",
        Must,
        "On success, the host MUST return a 2xx status and a JSON body that conforms to the agent's `outputs` schema.",
    );

    pub const ALL: &[&Check] = &[
        &WELL_KNOWN,
        &MEDIA_TYPE,
        &DOCUMENT_HTTPS,
        &VERSION,
        &TOP_LEVEL,
        &AGENT_FIELDS,
        &AGENT_ID,
        &AGENT_TRANSPORTS,
        &OPERATIONS,
        &SCHEMAS,
        &REST_FIELDS,
        &REST_HTTPS,
        &MCP_FIELDS,
        &PRIVATE_TRANSPORTS,
        &CACHING,
        &CONDITIONAL,
        &RESPONDS_JSON,
        &AGENT_MISMATCH,
        &MISMATCH_PROBLEM,
        &ERRORS,
        &SUCCESS,
    ];
}

/// Every check of `spec`, in report order.
pub fn of(spec: Spec) -> &'static [&'static Check] {
    match spec {
        Spec::Nact => nact::ALL,
        Spec::Otc => otc::ALL,
        Spec::Woa => woa::ALL,
    }
}

/// The frozen requirement set of `revision`, in report order: the checks written from that
/// revision's text.
pub fn set(revision: Revision) -> Vec<&'static Check> {
    of(revision.spec())
        .iter()
        .copied()
        .filter(|c| c.revision == revision)
        .collect()
}

/// The check `id`, in any requirement set.
pub fn by_id(id: &str) -> Option<&'static Check> {
    [Spec::Nact, Spec::Otc, Spec::Woa]
        .into_iter()
        .flat_map(of)
        .copied()
        .find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_name_their_protocol_and_section() {
        let mut seen = std::collections::HashSet::new();
        for spec in [Spec::Nact, Spec::Otc, Spec::Woa] {
            for check in of(spec) {
                assert!(seen.insert(check.id), "{} twice", check.id);
                assert_eq!(check.spec, spec, "{}", check.id);
                let prefix = match spec {
                    Spec::Nact => "nact-",
                    Spec::Otc => "otc-",
                    Spec::Woa => "woa-",
                };
                assert!(check.id.starts_with(prefix), "{}", check.id);
                assert_eq!(check.revision.spec(), spec, "{}", check.id);
                if spec != Spec::Otc {
                    assert!(check.id.contains(&format!("-{}-", check.section)), "{}", check.id);
                }
            }
        }
    }
}
