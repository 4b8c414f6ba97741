//! Log capture: what the in-process server logs, for tests that check what it never logs.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// Everything logged on this thread, at every level, while the capture lives.
///
/// The server runs in the test's runtime; `#[tokio::test]` polls it on the test's own thread, so
/// a thread-local subscriber sees every line the server logs for that test and no other test's.
pub struct Logs {
    buffer: Arc<Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Logs {
    /// Starts capturing at TRACE level, without colours.
    pub fn capture() -> Self {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = {
            let buffer = Arc::clone(&buffer);
            move || Shared(Arc::clone(&buffer))
        };
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(writer)
            .finish();
        Self {
            buffer,
            _guard: tracing::subscriber::set_default(subscriber),
        }
    }

    /// The lines captured so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.lock().unwrap()).into_owned()
    }
}

/// A writer appending to a shared buffer.
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
