//! What a federated MCP tool says beside its answer, passed on to the caller (issue #39.1, .2):
//! its content blocks (text, images, audio, resources, resource links) into a `content` output,
//! and its progress and log messages while it runs into the caller's [`Progress`]; each
//! scrubbed of every secret the call could have sent, and bounded.

use std::sync::Arc;

use serde_json::{Value, json};
use toolhost_core::{Note, Progress, StepOutcome};
use toolhost_sculpt::Scrubber;

/// The most characters of a relayed progress message.
const MAX_MESSAGE: usize = 1000;
/// The most bytes of JSON of a relayed log message's data; larger data is cut to a note saying so.
const MAX_LOG_DATA: u64 = 16 * 1024;

/// The caller's [`Progress`], given only what a caller may read of the upstream's notes.
#[derive(Debug)]
pub(crate) struct Scrubbed {
    pub inner: Arc<dyn Progress>,
    pub scrubber: Scrubber,
}

impl Progress for Scrubbed {
    fn step(&self, done: usize, total: usize, name: &str, outcome: &StepOutcome) {
        self.inner.step(done, total, name, outcome);
    }

    fn relay(&self, note: Note) {
        let note = match note {
            Note::Progress {
                progress,
                total,
                message,
            } => Note::Progress {
                progress,
                total,
                message: message.map(|m| toolhost_client::text::one_line(&self.scrubber.scrub(&m), MAX_MESSAGE)),
            },
            Note::Log {
                level,
                logger,
                mut data,
            } => {
                self.scrubber.scrub_value(&mut data);
                if crate::call::json_size(&data) > MAX_LOG_DATA {
                    data = json!({"omitted": format!("the upstream's log message was over {MAX_LOG_DATA} bytes")});
                }
                Note::Log {
                    level,
                    logger: logger.map(|l| toolhost_client::text::one_line(&self.scrubber.scrub(&l), 100)),
                    data,
                }
            }
        };
        self.inner.relay(note);
    }
}

/// An MCP answer as the value of a `content` output: its content blocks as they are; an answer
/// that is not a list of blocks (another protocol's value) as one text block.
pub(crate) fn content(value: Value) -> Value {
    match value {
        blocks @ Value::Array(_) => blocks,
        Value::String(text) => json!([{"type": "text", "text": text}]),
        other => json!([{"type": "text", "text": other.to_string()}]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use toolhost_core::LogLevel;

    #[derive(Debug, Default)]
    struct Heard(Mutex<Vec<Note>>);

    impl Progress for Heard {
        fn step(&self, _: usize, _: usize, _: &str, _: &StepOutcome) {}
        fn relay(&self, note: Note) {
            self.0.lock().unwrap().push(note);
        }
    }

    #[test]
    fn relayed_notes_are_scrubbed_and_bounded() {
        let heard = Arc::new(Heard::default());
        let scrubbed = Scrubbed {
            inner: heard.clone(),
            scrubber: Scrubber::shared(["Key-123"]),
        };
        scrubbed.relay(Note::Progress {
            progress: 1.0,
            total: Some(2.0),
            message: Some("using Key-123\nnow".into()),
        });
        scrubbed.relay(Note::Log {
            level: LogLevel::Warning,
            logger: Some("peer".into()),
            data: json!({"token": "Key-123"}),
        });
        scrubbed.relay(Note::Log {
            level: LogLevel::Info,
            logger: None,
            data: json!("x".repeat(20_000)),
        });
        let heard = heard.0.lock().unwrap();
        assert_eq!(
            heard[0],
            Note::Progress {
                progress: 1.0,
                total: Some(2.0),
                message: Some("using <redacted> now".into())
            }
        );
        let Note::Log { data, .. } = &heard[1] else { panic!() };
        assert_eq!(data, &json!({"token": "<redacted>"}));
        let Note::Log { data, .. } = &heard[2] else { panic!() };
        assert!(data["omitted"].is_string(), "{data}");
    }

    #[test]
    fn a_content_output_holds_blocks() {
        let blocks = json!([{"type": "image", "data": "AA==", "mimeType": "image/png"}]);
        assert_eq!(content(blocks.clone()), blocks);
        assert_eq!(content(json!("hi")), json!([{"type": "text", "text": "hi"}]));
    }
}
