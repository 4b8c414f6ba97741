//! Issue #32.10: what toolhost says is worth reading — a wrong tool name gets the nearest
//! names, not every name; the note about reaching a loopback address the user typed is said
//! once per run; `serve` says where the catalog page is.

use crate::support::{Scratch, Server, run};

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_wrong_name_gets_the_nearest_names_and_a_note_is_said_once() {
    // The bundled catalog: six tools.
    let server = Server::start(&[], &[], None);
    let page = format!("{}/ui", server.base);
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains(&page)));
    assert!(logs.iter().any(|x| x.contains(&page)), "{logs:?}");

    let nact = format!("{}/nact", server.base);
    let wrong = run(&["call", &nact, "add_number", "--no-cache"]);
    let said = stderr(&wrong);
    assert_eq!(wrong.status.code(), Some(1), "{said}");
    assert!(
        said.contains("has no tool `add_number`; its tools are: add_numbers, ")
            && said.contains("the nearest of 6; `toolhost tools ")
            && !said.contains("lookup_country_by_code"),
        "{said}"
    );

    let dir = Scratch::new();
    let lock = dir.0.join("tools.lock");
    let otc = format!("{}/otc", server.base);
    let locked = run(&["lock", &nact, &otc, "--no-cache", "--output", lock.to_str().unwrap()]);
    let said = stderr(&locked);
    assert!(locked.status.success(), "{said}");
    assert_eq!(said.matches("because you gave it").count(), 1, "{said}");
    assert!(server.terminate());
}
