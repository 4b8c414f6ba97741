//! `toolhost call` on a call the server holds for a human's confirmation (issue #40,
//! docs/client.md): show the link (and open it with `--open`), wait for the decision
//! (`--confirm-wait`), and say plainly when nothing ran, with its own exit status.

use std::time::Duration;

use clap::Args;
use toolhost_client::{Confirmation, Error, Standing, Unconfirmed};

/// Exit status of a call the user declined: nothing ran.
pub const DECLINED: u8 = 3;
/// Exit status of a call not confirmed (lapsed, not decided in time, not waited for): nothing
/// ran.
pub const NOT_CONFIRMED: u8 = 4;

/// How `call` waits for a human's confirmation.
#[derive(Debug, Clone, Args)]
pub struct Flags {
    /// When the server holds the call for the user's confirmation, wait this long for the
    /// decision (polling its result URI), then call again with the confirmation; 0 prints the
    /// link and does not wait.
    #[arg(long, value_name = "SECS", env = "TOOLHOST_CONFIRM_WAIT", default_value_t = 300)]
    confirm_wait: u64,
    /// Open the confirmation page with the system's opener (`$BROWSER`, else `xdg-open`,
    /// `open` on macOS, `start` on Windows) instead of only printing it.
    #[arg(long)]
    open: bool,
}

impl Flags {
    /// The longest wait for a decision.
    pub fn wait(&self) -> Duration {
        Duration::from_secs(self.confirm_wait)
    }

    /// Tells the user the call waits for them: the whole link on a line of its own (so the
    /// host it is on can be checked), how long the client waits, and that nothing ran.
    pub fn tell(&self, asked: &Confirmation) {
        let when = match asked.standing {
            Standing::Pending => "still waits for",
            Standing::Required | Standing::Declined => "needs",
        };
        eprintln!(
            "toolhost: `{}` {when} your confirmation of this exact call before it runs; nothing was done yet.",
            asked.tool
        );
        if let Some(note) = &asked.note {
            eprintln!("toolhost: ({})", toolhost_client::text::one_line(note, 300));
        }
        eprintln!("toolhost: confirm at {}", asked.link);
        if let Some(expires) = &asked.expires {
            eprintln!("toolhost: the request lapses at {expires}");
        }
        if self.open {
            open(&asked.link);
        }
        if self.confirm_wait > 0 {
            eprintln!(
                "toolhost: waiting up to {} s for the decision (--confirm-wait); nothing runs without an approval",
                self.confirm_wait
            );
        }
    }
}

/// The exit status of an error that says a call did not run for want of a confirmation.
pub fn exit_code(error: &Error) -> Option<u8> {
    match error {
        Error::Unconfirmed {
            why: Unconfirmed::Declined,
            ..
        } => Some(DECLINED),
        Error::Unconfirmed {
            why: Unconfirmed::Expired | Unconfirmed::NotInTime(_) | Unconfirmed::NotWaited | Unconfirmed::NoResultUri,
            ..
        } => Some(NOT_CONFIRMED),
        Error::Confirmation(held) => Some(match held.standing {
            Standing::Declined => DECLINED,
            Standing::Required | Standing::Pending => NOT_CONFIRMED,
        }),
        _ => None,
    }
}

/// Opens `link` with the system's opener, as one argument and no shell; only an http(s) URL
/// (a server could name `file:` or a custom scheme).
fn open(link: &str) {
    let scheme_ok = url::Url::parse(link).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
    if !scheme_ok {
        eprintln!("toolhost: note: not opening the link: only http(s) links are opened");
        return;
    }
    let (program, args): (String, Vec<&str>) = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => (browser, vec![link]),
        _ if cfg!(target_os = "macos") => ("open".to_owned(), vec![link]),
        _ if cfg!(windows) => ("cmd".to_owned(), vec!["/C", "start", "", link]),
        _ => ("xdg-open".to_owned(), vec![link]),
    };
    let started = std::process::Command::new(&program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            eprintln!("toolhost: opened it with `{program}`");
            // Reaped on the side: the wait for the decision does not wait for the opener.
            std::thread::spawn(move || child.wait());
        }
        Err(e) => eprintln!("toolhost: note: could not open it with `{program}` ({e}); open it yourself"),
    }
}
