//! `toolhost-bench`: the servers `bench/run.sh` measures toolhost against, on loopback.
//!
//! ```text
//! toolhost-bench bare     127.0.0.1:PORT   # a bare axum handler per protocol: the floor
//! toolhost-bench rmcp     127.0.0.1:PORT   # a minimal rmcp server with the same tool
//! toolhost-bench upstream 127.0.0.1:PORT   # the JSON upstream of the sculpted tool
//! ```
//!
//! Each serves until it is killed. Every server does the same work as toolhost's native
//! `add_numbers` ([`add`]), so a comparison measures only what sits around the tool.

mod bare;
mod rmcp_server;
mod upstream;

use std::net::SocketAddr;
use std::process::ExitCode;

use serde_json::{Map, Value};

/// The same allocator as the `toolhost` binary, so that a comparison measures the code around
/// the tool, not the allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: toolhost-bench bare|rmcp|upstream ADDR   (e.g. 127.0.0.1:8081)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (app, address) = match args.as_slice() {
        [kind, address] => {
            let app = match kind.as_str() {
                "bare" => bare::app(),
                "rmcp" => rmcp_server::app(),
                "upstream" => upstream::app(),
                _ => {
                    eprintln!("{USAGE}");
                    return ExitCode::FAILURE;
                }
            };
            match address.parse::<SocketAddr>() {
                Ok(address) => (app, address),
                Err(e) => {
                    eprintln!("toolhost-bench: expected an address like 127.0.0.1:8081, but got `{address}`: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    // The same runtime as `toolhost serve`: multi-threaded, one worker per core.
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("toolhost-bench: failed to start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address).await?;
        eprintln!("toolhost-bench: listening on {}", listener.local_addr()?);
        axum::serve(listener, app).await
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolhost-bench: failed to serve on {address}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What toolhost's native `calculator.add` does: `a + b`, a whole sum written as an integer.
pub(crate) fn add(input: &Map<String, Value>) -> Map<String, Value> {
    let number = |name: &str| input.get(name).and_then(Value::as_f64).unwrap_or_default();
    let sum = number("a") + number("b");
    let value = if sum.fract() == 0.0 && sum.abs() < 9.0e15 {
        Value::from(sum as i64)
    } else {
        serde_json::Number::from_f64(sum).map_or(Value::Null, Value::Number)
    };
    let mut output = Map::new();
    output.insert("sum".to_owned(), value);
    output
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::add;

    #[test]
    fn adds_like_the_native_tool() {
        let input = |v: serde_json::Value| v.as_object().cloned().unwrap_or_default();
        assert_eq!(Value::Object(add(&input(json!({"a": 10, "b": 5})))), json!({"sum": 15}));
        assert_eq!(
            Value::Object(add(&input(json!({"a": 0.5, "b": 1})))),
            json!({"sum": 1.5})
        );
    }
}
