//! How a structured value (an array, an object) is written into a query parameter, a header or a
//! cookie: OpenAPI 3's parameter serialization (`style` and `explode`, OpenAPI 3.1 §4.8.12.4),
//! so an import can send an array query parameter exactly as the API describes it (issue #38.3).

use serde_json::Value;

use crate::template::as_text;

/// The `style` of a query parameter (OpenAPI's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `a=1&a=2` exploded, `a=1,2` not; an object `k=v&k2=v2` exploded, `a=k,v,k2,v2` not.
    Form,
    /// `a=1 2` (arrays, not exploded).
    SpaceDelimited,
    /// `a=1|2` (arrays, not exploded).
    PipeDelimited,
    /// `a[k]=v&a[k2]=v2` (objects, exploded).
    DeepObject,
}

/// A query parameter's serialization as written in a step (`{value, style, explode}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Style {
    pub kind: Kind,
    pub explode: bool,
}

impl Style {
    /// Reads `style` (OpenAPI's name, `form` when absent) and `explode` (`true` for `form` and
    /// `deepObject`, else `false`); says what is wrong otherwise.
    pub fn parse(style: Option<&str>, explode: Option<bool>) -> Result<Self, String> {
        let kind = match style.unwrap_or("form") {
            "form" => Kind::Form,
            "spaceDelimited" => Kind::SpaceDelimited,
            "pipeDelimited" => Kind::PipeDelimited,
            "deepObject" => Kind::DeepObject,
            other => {
                return Err(format!(
                    "`style: {other}` is not a query style; write form, spaceDelimited, pipeDelimited or deepObject"
                ));
            }
        };
        let explode = explode.unwrap_or(matches!(kind, Kind::Form | Kind::DeepObject));
        // OpenAPI leaves an exploded spaceDelimited or pipeDelimited undefined and deepObject
        // unexploded too; descriptions write them anyway: the former is sent as form's repeated
        // parameters, the latter as deepObject.
        Ok(Self { kind, explode })
    }

    /// The query pairs of parameter `key` holding `value`; a null leaves the parameter out.
    pub fn pairs(self, key: &str, value: &Value) -> Vec<(String, String)> {
        let pair = |k: &str, v: String| (k.to_owned(), v);
        match value {
            Value::Null => Vec::new(),
            Value::Array(items) => {
                let items: Vec<String> = items
                    .iter()
                    .filter(|i| !i.is_null())
                    .map(|i| as_text(i).into_owned())
                    .collect();
                match (self.kind, self.explode) {
                    (_, true) => items.into_iter().map(|i| pair(key, i)).collect(),
                    (Kind::SpaceDelimited, _) => vec![pair(key, items.join(" "))],
                    (Kind::PipeDelimited, _) => vec![pair(key, items.join("|"))],
                    _ => vec![pair(key, items.join(","))],
                }
            }
            Value::Object(members) => {
                let members = members.iter().filter(|(_, v)| !v.is_null());
                match (self.kind, self.explode) {
                    (Kind::DeepObject, _) => members
                        .map(|(k, v)| pair(&format!("{key}[{k}]"), as_text(v).into_owned()))
                        .collect(),
                    (Kind::Form, true) => members.map(|(k, v)| pair(k, as_text(v).into_owned())).collect(),
                    (kind, _) => {
                        let joint = match kind {
                            Kind::SpaceDelimited => " ",
                            Kind::PipeDelimited => "|",
                            _ => ",",
                        };
                        let flat: Vec<String> = members
                            .flat_map(|(k, v)| [k.clone(), as_text(v).into_owned()])
                            .collect();
                        vec![pair(key, flat.join(joint))]
                    }
                }
            }
            scalar => vec![pair(key, as_text(scalar).into_owned())],
        }
    }
}

/// OpenAPI's `simple` style, how headers (and paths) carry a value: an array as `1,2`, an
/// object as `k,v,k2,v2`; a scalar as its text.
pub(crate) fn simple(value: &Value) -> String {
    parts(value).join(",")
}

/// The parts `simple` joins: an array's items, an object's keys and values, or the scalar.
pub(crate) fn parts(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter(|i| !i.is_null())
            .map(|i| as_text(i).into_owned())
            .collect(),
        Value::Object(members) => members
            .iter()
            .filter(|(_, v)| !v.is_null())
            .flat_map(|(k, v)| [k.clone(), as_text(v).into_owned()])
            .collect(),
        scalar => vec![as_text(scalar).into_owned()],
    }
}

/// One cookie's value as OpenAPI's `form` style writes it unexploded (`1,2` for an array), each
/// part percent-encoded where RFC 6265 §4.1.1 does not allow it in a cookie value (`;`, `,`,
/// spaces, quotes, `\`, controls, and `%` itself), so an input can never add a cookie.
pub(crate) fn cookie(value: &Value) -> String {
    const NOT_COOKIE: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b',')
        .add(b';')
        .add(b'\\')
        .add(b'%');
    let part = |v: &Value| percent_encoding::utf8_percent_encode(&as_text(v), NOT_COOKIE).to_string();
    match value {
        Value::Array(items) => items
            .iter()
            .filter(|i| !i.is_null())
            .map(part)
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(members) => members
            .iter()
            .filter(|(_, v)| !v.is_null())
            .flat_map(|(k, v)| [part(&Value::String(k.clone())), part(v)])
            .collect::<Vec<_>>()
            .join(","),
        scalar => part(scalar),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pairs(style: &str, explode: Option<bool>, value: Value) -> Vec<(String, String)> {
        Style::parse(Some(style), explode).unwrap().pairs("id", &value)
    }

    fn owned(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// OpenAPI 3.1 §4.8.12.4's style examples, for `id` = [3, 4, 5] and {"role": "admin",
    /// "firstName": "Alex"} (members in the map's order).
    #[test]
    fn the_spec_style_examples() {
        let array = json!([3, 4, 5]);
        let object = json!({"firstName": "Alex", "role": "admin"});
        assert_eq!(
            pairs("form", None, array.clone()),
            owned(&[("id", "3"), ("id", "4"), ("id", "5")])
        );
        assert_eq!(pairs("form", Some(false), array.clone()), owned(&[("id", "3,4,5")]));
        assert_eq!(pairs("spaceDelimited", None, array.clone()), owned(&[("id", "3 4 5")]));
        assert_eq!(pairs("pipeDelimited", None, array), owned(&[("id", "3|4|5")]));
        assert_eq!(
            pairs("form", None, object.clone()),
            owned(&[("firstName", "Alex"), ("role", "admin")])
        );
        assert_eq!(
            pairs("form", Some(false), object.clone()),
            owned(&[("id", "firstName,Alex,role,admin")])
        );
        assert_eq!(
            pairs("deepObject", None, object),
            owned(&[("id[firstName]", "Alex"), ("id[role]", "admin")])
        );
        assert_eq!(simple(&json!([3, 4, 5])), "3,4,5");
        assert_eq!(cookie(&json!(["a b", "c;d"])), "a%20b,c%3Bd");
    }

    #[test]
    fn styles_openapi_does_not_define() {
        assert!(
            Style::parse(Some("matrix"), None)
                .unwrap_err()
                .contains("not a query style")
        );
        let exploded = Style::parse(Some("pipeDelimited"), Some(true)).unwrap();
        assert_eq!(exploded.pairs("id", &json!([1, 2])), owned(&[("id", "1"), ("id", "2")]));
        let flat = Style::parse(Some("deepObject"), Some(false)).unwrap();
        assert_eq!(flat.pairs("id", &json!({"a": 1})), owned(&[("id[a]", "1")]));
        assert_eq!(
            Style::parse(None, None).unwrap(),
            Style {
                kind: Kind::Form,
                explode: true
            }
        );
    }
}
