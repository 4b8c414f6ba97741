//! A `multipart/form-data` body (RFC 7578), as a step's `multipart:` writes it and OpenAPI 3.1
//! §4.8.15 describes it: a text part per scalar, a part per item of an array, a JSON part per
//! object, and files given as text or as `{data: BASE64, mimeType, filename}` (issue #38.4).

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::template::as_text;

/// One part: its field name, file name (a file), media type and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

const TEXT: &str = "text/plain; charset=utf-8";

/// The parts of field `name` holding `value`; `file` when the step writes it `{file: ...}`. A
/// null is no part; what cannot be sent is said, naming the field.
pub(crate) fn parts(name: &str, value: &Value, file: bool) -> Result<Vec<Part>, String> {
    let part = |filename: Option<String>, content_type: &str, bytes: Vec<u8>| Part {
        name: name.to_owned(),
        filename,
        content_type: content_type.to_owned(),
        bytes,
    };
    Ok(match value {
        Value::Null => Vec::new(),
        // Several values (several files) are several parts of the same name (§4.8.15.3).
        Value::Array(items) => {
            let mut all = Vec::new();
            for item in items {
                match item {
                    Value::Array(_) => all.push(part(None, "application/json", item.to_string().into_bytes())),
                    _ => all.extend(parts(name, item, file)?),
                }
            }
            all
        }
        Value::String(text) if file => vec![part(Some(name.to_owned()), TEXT, text.clone().into_bytes())],
        Value::Object(members) if file => {
            let Some(Value::String(data)) = members.get("data") else {
                return Err(format!(
                    "`{name}` is a file: text, or `{{\"data\": BASE64, \"mimeType\": \"image/png\", \"filename\": \"a.png\"}}`"
                ));
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(data.trim()))
                .map_err(|_| format!("`{name}`: `data` is not base64 (RFC 4648 §4)"))?;
            let media = members
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("application/octet-stream");
            let plain = |t: &str| !t.is_empty() && t.bytes().all(|b| (0x20..0x7f).contains(&b));
            if !plain(media) || !media.contains('/') {
                return Err(format!("`{name}`: `mimeType` is a media type such as `image/png`"));
            }
            let filename = members
                .get("filename")
                .and_then(Value::as_str)
                .unwrap_or(name)
                .to_owned();
            vec![part(Some(filename), media, bytes)]
        }
        Value::Object(_) => vec![part(None, "application/json", value.to_string().into_bytes())],
        Value::Number(_) | Value::Bool(_) if file => {
            return Err(format!(
                "`{name}` is a file: text, or `{{\"data\": BASE64, \"mimeType\": ...}}`"
            ));
        }
        scalar => vec![part(None, TEXT, as_text(scalar).into_owned().into_bytes())],
    })
}

/// The body and its boundary. The boundary is taken from a digest of the parts, so no part
/// holds it (and the same parts make the same body).
pub(crate) fn encode(parts: &[Part]) -> (String, Vec<u8>) {
    let mut digest = Sha256::new();
    for part in parts {
        digest.update(part.name.as_bytes());
        digest.update([0]);
        digest.update(&part.bytes);
        digest.update([0]);
    }
    let hex: String = digest.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect();
    let boundary = format!("toolhost-{hex}");
    let mut body = Vec::new();
    for part in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let mut disposition = format!("Content-Disposition: form-data; name=\"{}\"", quoted(&part.name));
        if let Some(filename) = &part.filename {
            disposition.push_str(&format!("; filename=\"{}\"", quoted(filename)));
        }
        body.extend_from_slice(format!("{disposition}\r\nContent-Type: {}\r\n\r\n", part.content_type).as_bytes());
        body.extend_from_slice(&part.bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (boundary, body)
}

/// A name as a quoted string of `Content-Disposition`, as HTML's form submission writes it
/// (RFC 7578 §4.2): `"`, CR and LF percent-encoded, so a name can never end the header.
fn quoted(name: &str) -> String {
    name.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_arrays_objects_and_files_become_parts() {
        let mut all = parts("primitive", &json!("p"), false).unwrap();
        all.extend(parts("array", &json!(["a", "b"]), false).unwrap());
        all.extend(parts("object", &json!({"foo": "f"}), false).unwrap());
        all.extend(
            parts(
                "doc",
                &json!({"data": "aGk=", "mimeType": "image/png", "filename": "a\".png"}),
                true,
            )
            .unwrap(),
        );
        all.extend(parts("note", &json!("plain text"), true).unwrap());
        let shape: Vec<(&str, Option<&str>, &str, &[u8])> = all
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.filename.as_deref(),
                    p.content_type.as_str(),
                    p.bytes.as_slice(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("primitive", None, TEXT, b"p".as_slice()),
                ("array", None, TEXT, b"a"),
                ("array", None, TEXT, b"b"),
                ("object", None, "application/json", br#"{"foo":"f"}"#),
                ("doc", Some("a\".png"), "image/png", b"hi"),
                ("note", Some("note"), TEXT, b"plain text"),
            ]
        );
        let (boundary, body) = encode(&all[..1]);
        assert_eq!(
            String::from_utf8(body).unwrap(),
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"primitive\"\r\nContent-Type: {TEXT}\r\n\r\np\r\n--{boundary}--\r\n"
            )
        );
        let (_, body) = encode(&all[4..5]);
        assert!(String::from_utf8_lossy(&body).contains("name=\"doc\"; filename=\"a%22.png\""));
    }

    #[test]
    fn what_cannot_be_a_file_is_said() {
        assert!(
            parts("doc", &json!({"data": "not base64!"}), true)
                .unwrap_err()
                .contains("base64")
        );
        assert!(
            parts("doc", &json!({"data": "aGk=", "mimeType": "x\r\ny"}), true)
                .unwrap_err()
                .contains("mimeType")
        );
        assert!(parts("doc", &json!(3), true).unwrap_err().contains("is a file"));
        assert!(parts("doc", &json!(null), true).unwrap().is_empty());
    }
}
