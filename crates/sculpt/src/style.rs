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

/// The style of a path parameter or a header (OpenAPI 3.1 §4.8.12.4, after RFC 6570): `simple`
/// (`a,b`), `label` (`.a,b`) and `matrix` (`;id=a,b`), each exploded or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    kind: SegmentKind,
    explode: bool,
    /// The parameter's name, which `matrix` writes (`;id=5`).
    name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SegmentKind {
    Simple,
    Label,
    Matrix,
}

impl Segment {
    /// Reads `style` (`simple` when absent) and `explode` (`false` when absent) of the parameter
    /// `name`; says what is wrong otherwise.
    pub fn parse(style: Option<&str>, explode: Option<bool>, name: &str) -> Result<Self, String> {
        let kind = match style.unwrap_or("simple") {
            "simple" => SegmentKind::Simple,
            "label" => SegmentKind::Label,
            "matrix" => SegmentKind::Matrix,
            other => {
                return Err(format!(
                    "`style: {other}` is not a path style; write simple, label or matrix"
                ));
            }
        };
        Ok(Self {
            kind,
            explode: explode.unwrap_or(false),
            name: name.to_owned(),
        })
    }

    /// Whether it is the `simple` style (the only one a header has).
    pub fn is_simple(&self) -> bool {
        self.kind == SegmentKind::Simple
    }

    /// Writes `value` into `out`, each name and value through `encode` (percent-encoding in a
    /// path, nothing in a header), the separators as the style says.
    pub fn write(&self, value: &Value, out: &mut String, encode: impl Fn(&str, &mut String)) {
        let name = self.name.as_str();
        // Exploded, an object's members are `k=v`; an array's items or a scalar stay as they are.
        let pairs: Option<Vec<(String, String)>> = match value {
            Value::Object(members) if self.explode => Some(
                members
                    .iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), as_text(v).into_owned()))
                    .collect(),
            ),
            _ => None,
        };
        let list = parts(value);
        let (lead, between) = match (self.kind, self.explode) {
            (SegmentKind::Simple, _) => ("", ","),
            (SegmentKind::Label, false) => (".", ","),
            (SegmentKind::Label, true) => (".", "."),
            (SegmentKind::Matrix, false) => (";", ","),
            (SegmentKind::Matrix, true) => (";", ";"),
        };
        out.push_str(lead);
        match pairs {
            Some(pairs) => {
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(between);
                    }
                    encode(k, out);
                    out.push('=');
                    encode(v, out);
                }
            }
            None if list.is_empty() && self.kind == SegmentKind::Matrix => encode(name, out),
            None => {
                let empty = list.iter().all(String::is_empty);
                for (i, part) in list.iter().enumerate() {
                    // Matrix names each item exploded (`;id=3;id=4`), the value once otherwise
                    // (`;id=3,4`), and an empty value bare (`;id`).
                    if self.kind == SegmentKind::Matrix && (i == 0 || self.explode) {
                        if i > 0 {
                            out.push_str(between);
                        }
                        encode(name, out);
                        if !empty {
                            out.push('=');
                        }
                    } else if i > 0 {
                        out.push_str(between);
                    }
                    encode(part, out);
                }
            }
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

    fn segment(style: &str, explode: bool, value: &Value) -> String {
        let mut out = String::new();
        Segment::parse(Some(style), Some(explode), "color")
            .unwrap()
            .write(value, &mut out, |part, out| {
                out.extend(percent_encoding::utf8_percent_encode(
                    part,
                    percent_encoding::NON_ALPHANUMERIC,
                ))
            });
        out
    }

    /// OpenAPI 3.1 §4.8.12.4's table of style examples for `color`: "" (empty), "blue",
    /// ["blue", "black", "brown"] and {"R": 100, "G": 200, "B": 150} (members sent in the
    /// map's order, B, G, R), for the path styles and `form`'s query ones.
    #[test]
    fn the_spec_style_table() {
        let (empty, string) = (json!(""), json!("blue"));
        let (array, object) = (json!(["blue", "black", "brown"]), json!({"R": 100, "G": 200, "B": 150}));
        let table = [
            (
                "matrix",
                false,
                [
                    ";color",
                    ";color=blue",
                    ";color=blue,black,brown",
                    ";color=B,150,G,200,R,100",
                ],
            ),
            (
                "matrix",
                true,
                [
                    ";color",
                    ";color=blue",
                    ";color=blue;color=black;color=brown",
                    ";B=150;G=200;R=100",
                ],
            ),
            (
                "label",
                false,
                [".", ".blue", ".blue,black,brown", ".B,150,G,200,R,100"],
            ),
            ("label", true, [".", ".blue", ".blue.black.brown", ".B=150.G=200.R=100"]),
            ("simple", false, ["", "blue", "blue,black,brown", "B,150,G,200,R,100"]),
            ("simple", true, ["", "blue", "blue,black,brown", "B=150,G=200,R=100"]),
        ];
        for (style, explode, want) in table {
            let got = [&empty, &string, &array, &object].map(|v| segment(style, explode, v));
            assert_eq!(got, want, "{style}, explode {explode}");
        }
        // A part's reserved characters are encoded, the style's own separators are not.
        assert_eq!(segment("matrix", true, &json!({"a;b": "c=d"})), ";a%3Bb=c%3Dd");
        let query = |style: &str, explode: bool, value: &Value| -> String {
            form_urlencoded::Serializer::new(String::new())
                .extend_pairs(Style::parse(Some(style), Some(explode)).unwrap().pairs("color", value))
                .finish()
        };
        assert_eq!(query("form", false, &string), "color=blue");
        assert_eq!(query("form", false, &array), "color=blue%2Cblack%2Cbrown");
        assert_eq!(query("form", false, &object), "color=B%2C150%2CG%2C200%2CR%2C100");
        assert_eq!(query("form", true, &array), "color=blue&color=black&color=brown");
        assert_eq!(query("form", true, &object), "B=150&G=200&R=100");
        assert_eq!(query("spaceDelimited", false, &array), "color=blue+black+brown");
        assert_eq!(
            query("pipeDelimited", false, &object),
            "color=B%7C150%7CG%7C200%7CR%7C100"
        );
        assert_eq!(
            query("deepObject", true, &object),
            "color%5BB%5D=150&color%5BG%5D=200&color%5BR%5D=100"
        );
        assert!(
            Segment::parse(Some("form"), None, "x")
                .unwrap_err()
                .contains("not a path style")
        );
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
