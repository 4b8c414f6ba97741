//! Issue #16: the deployment files a platform team runs (the Dockerfile, the Kubernetes
//! manifests) stay valid and consistent with the binary: the manifests validate against the
//! Kubernetes schemas (kubernetes-validate, strict), every flag and environment variable they
//! pass is one `toolhost serve` takes, the probes name its probe paths, and the catalog and
//! config they ship pass `toolhost check`. That they start as shipped is `deploy_run.rs`.

use std::path::PathBuf;

use serde_json::Value;

use crate::client_peers::installed;
use crate::support::{Scratch, run};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every document of the manifests (by file), as JSON values.
pub fn manifests() -> Vec<(String, Value)> {
    let dir = repo().join("deploy/kubernetes");
    let kustomization: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap()).unwrap();
    let mut documents = Vec::new();
    for file in kustomization["resources"].as_array().unwrap() {
        let file = file.as_str().unwrap();
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        for document in text.split("\n---\n") {
            documents.push((file.to_owned(), serde_saphyr::from_str::<Value>(document).unwrap()));
        }
    }
    documents
}

#[test]
fn the_manifests_validate_and_use_only_what_toolhost_serve_takes() {
    let documents = manifests();
    let kinds: Vec<String> = documents
        .iter()
        .map(|(_, d)| {
            format!(
                "{}/{}",
                d["kind"].as_str().unwrap(),
                d["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    for expected in [
        "Deployment/toolhost",
        "Service/toolhost",
        "ConfigMap/toolhost-catalog",
        "ConfigMap/toolhost-config",
        "Secret/toolhost-secrets",
        "StatefulSet/toolhost-redis",
        "Service/toolhost-redis",
    ] {
        assert!(kinds.iter().any(|k| k == expected), "{expected} missing from {kinds:?}");
    }
    let help = String::from_utf8_lossy(&run(&["serve", "--help"]).stdout).into_owned();
    let deployment = &documents
        .iter()
        .find(|(_, d)| d["metadata"]["name"] == "toolhost" && d["kind"] == "Deployment")
        .unwrap()
        .1;
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    for arg in container["args"].as_array().unwrap().iter().filter_map(Value::as_str) {
        if arg.starts_with("--") {
            assert!(
                help.contains(&format!("{arg} ")),
                "`{arg}` is not a flag of toolhost serve"
            );
        }
    }
    for env in container["env"].as_array().unwrap() {
        let name = env["name"].as_str().unwrap();
        assert!(
            help.contains(&format!("[env: {name}=")),
            "`{name}` is not read by toolhost serve"
        );
    }
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");

    // The store keeps what it acknowledged across its own restart (issue #30.5): an append-only
    // file fsynced per write, on a volume claimed for the pod, nothing evicted.
    let redis = &documents
        .iter()
        .find(|(_, d)| d["metadata"]["name"] == "toolhost-redis" && d["kind"] == "StatefulSet")
        .unwrap()
        .1;
    let args: Vec<&str> = redis["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for pair in [
        ["--appendonly", "yes"],
        ["--appendfsync", "always"],
        ["--maxmemory-policy", "noeviction"],
        ["--dir", "/data"],
    ] {
        assert!(args.windows(2).any(|w| w == pair), "{pair:?} missing from {args:?}");
    }
    assert_eq!(
        redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"],
        redis["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["name"],
        "the data directory is on the claimed volume"
    );
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");

    // The shipped catalog and config pass `check` as `serve` would load them.
    let dir = Scratch::new();
    let catalog = dir.0.join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    let data = |name: &str| documents.iter().find(|(_, d)| d["metadata"]["name"] == name).unwrap().1["data"].clone();
    for (file, text) in data("toolhost-catalog").as_object().unwrap() {
        std::fs::write(catalog.join(file), text.as_str().unwrap()).unwrap();
    }
    let config = dir.write(
        "toolhost.toml",
        data("toolhost-config")["toolhost.toml"].as_str().unwrap(),
    );
    let checked = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["check", "--config", config.to_str().unwrap(), catalog.to_str().unwrap()])
        .env("REDIS_PASSWORD", "a-password-for-check")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&checked.stderr);
    assert!(checked.status.success(), "{stderr}");
    // The catalog is mounted read-only, so `serve` cannot record versions beside it: every
    // served version is in the shipped versions.lock (issue #31.1).
    assert!(
        !stderr.contains("no versions lock yet") && !stderr.contains("is not in"),
        "{stderr}"
    );

    // The Kubernetes schemas, strictly (unknown fields refused).
    let Some(validate) = installed("venv/bin/kubernetes-validate") else {
        return;
    };
    let files: Vec<PathBuf> = [
        "configmap.yaml",
        "secret.yaml",
        "redis.yaml",
        "deployment.yaml",
        "service.yaml",
    ]
    .iter()
    .map(|f| repo().join("deploy/kubernetes").join(f))
    .collect();
    let output = std::process::Command::new(validate)
        .arg("--strict")
        .args(&files)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success() && !said.contains("ERROR"), "{said}");
    assert_eq!(said.matches("passed").count(), 7, "{said}");
}

#[test]
fn the_dockerfile_runs_toolhost_with_flags_it_takes_as_an_unprivileged_user() {
    let dockerfile = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    let help = String::from_utf8_lossy(&run(&["serve", "--help"]).stdout).into_owned();
    let cmd = dockerfile.lines().find(|l| l.starts_with("CMD ")).unwrap();
    let cmd: Vec<String> = serde_json::from_str(cmd.trim_start_matches("CMD ")).unwrap();
    assert_eq!(cmd[0], "serve");
    for arg in cmd.iter().filter(|a| a.starts_with("--")) {
        assert!(
            help.contains(&format!("{arg} ")),
            "`{arg}` is not a flag of toolhost serve"
        );
    }
    assert!(dockerfile.contains("USER 10001"), "the image does not run as root");
    for line in dockerfile
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
    {
        let source = line.split_whitespace().nth(1).unwrap();
        assert!(source == "." || repo().join(source).exists(), "{line}: no {source}");
    }
    assert!(dockerfile.contains("cargo build --release --locked -p toolhost"));
}
