//! Protocol adapters. Each decodes its protocol, makes one core call, and encodes the answer;
//! each maps core errors to its own statuses in one exhaustive match (`error.rs`).

pub mod mcp;
pub mod nact;
pub mod openapi;
pub mod otc;
pub mod ui;
pub mod woa;

/// Generators for the adapters' property tests (issue #12).
#[cfg(test)]
pub(crate) mod props {
    use proptest::prelude::*;
    use serde_json::Value;

    /// Any JSON value, a few levels deep, with the keys the protocols use mixed in so that
    /// decoders get past their first check now and then.
    pub fn json() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just("input".to_owned()),
            Just("input_parameters".to_owned()),
            Just("name".to_owned()),
            Just("value".to_owned()),
            Just("request".to_owned()),
            Just("tool_id".to_owned()),
            Just("context".to_owned()),
            Just("version".to_owned()),
            Just("agent".to_owned()),
            Just("operation".to_owned()),
            "\\PC{0,8}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "\\PC{0,16}".prop_map(Value::String),
            Just(Value::String("Calculator.add_numbers@1.0.0".to_owned())),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }
}
