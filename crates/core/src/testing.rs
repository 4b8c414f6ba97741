//! Generated catalogs for benchmarks and tests: large, valid, and cheap to describe.

use crate::catalog::Source;

/// A catalog source with `tools` tools in `toolkits` toolkits, each with one version of five
/// typed inputs (string, int, number, boolean, enum) echoed back as five outputs.
pub fn generated_catalog(tools: usize, toolkits: usize) -> Source {
    let mut text = String::with_capacity(tools * 900);
    text.push_str("toolkits:\n");
    for (k, chunk) in kits(tools, toolkits).iter().enumerate() {
        push_toolkit(&mut text, k, chunk);
    }
    Source {
        name: format!("generated-{tools}.yaml"),
        text,
    }
}

/// The same catalog as [`generated_catalog`], one file per toolkit, as a large catalog is kept:
/// one YAML file is parsed under a node budget (serde-saphyr's default, 250,000 nodes, about
/// 1,000 of these tools), so a single file of 10,000 tools is refused.
pub fn generated_catalog_files(tools: usize, toolkits: usize) -> Vec<Source> {
    kits(tools, toolkits)
        .iter()
        .enumerate()
        .map(|(k, chunk)| {
            let mut text = String::with_capacity(chunk.len() * 900 + 16);
            text.push_str("toolkits:\n");
            push_toolkit(&mut text, k, chunk);
            Source {
                name: format!("generated-{tools}-kit{k}.yaml"),
                text,
            }
        })
        .collect()
}

/// Tool numbers `0..tools`, split into (at most) `toolkits` toolkits.
fn kits(tools: usize, toolkits: usize) -> Vec<Vec<usize>> {
    let per_kit = tools.div_ceil(toolkits.max(1)).max(1);
    (0..tools)
        .collect::<Vec<_>>()
        .chunks(per_kit)
        .map(<[usize]>::to_vec)
        .collect()
}

fn push_toolkit(text: &mut String, k: usize, chunk: &[usize]) {
    text.push_str(&format!("  - name: Kit{k}\n    tools:\n"));
    for i in chunk {
        let tag = if i % 2 == 0 { "even" } else { "odd" };
        text.push_str(&format!(
                r#"      - name: tool_{i:05}
        description: Generated tool number {i} for load and listing benchmarks.
        tags: [{tag}]
        versions:
          - version: 1.0.0
            inputs:
              - {{ name: city, description: A city name., max_length: 100 }}
              - {{ name: days, type: int, min: 1, max: 16, description: Days to forecast. }}
              - {{ name: threshold, type: number, description: A threshold. }}
              - {{ name: metric, type: boolean, required: false, description: Use metric units. }}
              - name: detail
                type: enum
                description: How much detail to return.
                values:
                  - {{ name: BRIEF, description: One line. }}
                  - {{ name: FULL, description: Everything. }}
            outputs:
              - {{ name: city, type: string, description: The city. }}
              - {{ name: days, type: int, description: The days. }}
              - {{ name: threshold, type: number, description: The threshold. }}
              - {{ name: metric, type: boolean, required: false, description: Metric units. }}
              - {{ name: detail, type: enum, description: The detail., values: [{{ name: BRIEF, description: One line. }}, {{ name: FULL, description: Everything. }}] }}
            backend: {{ kind: native, function: testing.echo }}
"#
            ));
    }
}
