//! Issue #12: the catalog loader takes any text without panicking: random text, and random
//! changes to a valid catalog. A catalog that loads has tools whose every version has an input
//! schema that compiled.

use proptest::prelude::*;
use toolhost_core::catalog::{Loader, Source};

const VALID: &str = "toolkits:
  - name: Weather
    tools:
      - name: forecast
        description: The forecast.
        versions:
          - version: 1.0.0
            inputs: [{ name: city, description: A city., max_length: 20 }]
            outputs: [{ name: city, type: string, description: The city. }]
            backend: { kind: native, function: testing.echo }
";

fn load(text: String) -> Result<toolhost_core::Catalog, Vec<toolhost_core::Problem>> {
    Loader::default().load(&[Source {
        name: "p.yaml".to_owned(),
        text,
    }])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_is_a_catalog_or_problems(text in "\\PC{0,200}") {
        if let Err(problems) = load(text) {
            prop_assert!(!problems.is_empty());
        }
    }

    #[test]
    fn a_changed_catalog_loads_or_says_why(at in 0usize..VALID.len(), cut in 0usize..8, insert in "[ -~\\n]{0,6}") {
        let mut text = VALID.to_owned();
        let at = (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        let end = (at + cut).min(text.len());
        text.replace_range(at..end, &insert);
        match load(text) {
            Ok(catalog) => {
                for tool in catalog.tools() {
                    prop_assert!(!tool.versions.is_empty());
                }
            }
            Err(problems) => prop_assert!(problems.iter().all(|p| !p.message.is_empty())),
        }
    }
}
