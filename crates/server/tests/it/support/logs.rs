//! Log capture: what the in-process server logs, for tests that check what it never logs.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// Everything logged on this thread, at every level, while the capture lives.
///
/// The server runs in the test's runtime; `#[tokio::test]` polls it on the test's own thread, so
/// a thread-local subscriber sees every line the server logs for that test and no other test's.
pub struct Logs {
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl Logs {
    /// Starts capturing, at TRACE level, what this thread logs.
    ///
    /// One global subscriber (installed once) writes each event into the capturing thread's
    /// buffer. A scoped subscriber per test would race with the other tests' subscribers over
    /// tracing's global level and interest caches, and miss events now and then.
    pub fn capture() -> Self {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(|| {
            let subscriber = tracing_subscriber::fmt()
                .with_max_level(tracing::Level::TRACE)
                .with_ansi(false)
                .with_writer(|| ThreadBuffer)
                .finish();
            let _ = tracing::subscriber::set_global_default(subscriber);
        });
        let buffer = Arc::new(Mutex::new(Vec::new()));
        CAPTURE.with(|c| *c.borrow_mut() = Some(Arc::clone(&buffer)));
        let logs = Self { buffer };
        // A check that something is never logged means nothing unless capture works: another
        // global subscriber would have taken every event.
        tracing::trace!("log capture started");
        assert!(
            logs.text().contains("log capture started"),
            "log capture does not work: is another global tracing subscriber installed?"
        );
        logs
    }

    /// The lines captured so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.lock().unwrap()).into_owned()
    }
}

impl Drop for Logs {
    fn drop(&mut self) {
        CAPTURE.with(|c| *c.borrow_mut() = None);
    }
}

thread_local! {
    static CAPTURE: std::cell::RefCell<Option<Arc<Mutex<Vec<u8>>>>> = const { std::cell::RefCell::new(None) };
}

/// Writes to the current thread's capture buffer, if it has one.
struct ThreadBuffer;

impl Write for ThreadBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        CAPTURE.with(|c| {
            if let Some(buffer) = c.borrow().as_ref() {
                buffer.lock().unwrap().extend_from_slice(bytes);
            }
        });
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
