//! Issue #37.2: the image and the Deployment start as shipped, and answer `/readyz` 200.
//!
//! Each artifact's command line is read from its file, so a change to the file is what is
//! tested: the Dockerfile's final stage (ENTRYPOINT, CMD, ENV, USER and what it COPYs), and the
//! Deployment's args, env, envFrom, volume mounts and security context, with its ConfigMaps and
//! Secret written where they mount and the StatefulSet's Redis run with its own args. The binary
//! then runs with exactly that, its paths mapped into a scratch root (a copy of what the image
//! copies), as the user the artifact names when the test runs as root. No Docker daemon and no
//! cluster: what differs from a container is the root directory and the listen port (0, so
//! tests in parallel never collide); the listen *address* is kept, so the rule for a listener
//! off loopback (WoA's https, draft §8.1) applies as it does in the container.

use std::os::unix::fs::MetadataExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::deploy::{manifests, repo};
use crate::support::{BIN, Scratch, Server, copy_tree, json_of, tree};

/// The final stage of the Dockerfile, as a container runtime reads it.
#[derive(Debug, Default)]
struct Image {
    entrypoint: Vec<String>,
    cmd: Vec<String>,
    env: Vec<(String, String)>,
    /// `USER uid[:gid]`.
    user: Option<(u32, u32)>,
    /// `COPY [--from=STAGE] SOURCE DESTINATION`.
    copies: Vec<(Option<String>, String, String)>,
}

impl Image {
    fn read() -> Self {
        let text = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
        // Instructions, with continuation lines joined and comments left out.
        let mut instructions = Vec::new();
        let mut current = String::new();
        for line in text.lines() {
            if current.is_empty() && (line.trim().is_empty() || line.trim_start().starts_with('#')) {
                continue;
            }
            match line.strip_suffix('\\') {
                Some(part) => current.push_str(part),
                None => {
                    current.push_str(line);
                    instructions.push(std::mem::take(&mut current));
                }
            }
        }
        let last_from = instructions.iter().rposition(|l| l.starts_with("FROM ")).unwrap();
        let mut image = Self::default();
        let exec_form = |rest: &str, what: &str| -> Vec<String> {
            serde_json::from_str(rest)
                .unwrap_or_else(|e| panic!("{what} {rest}: the exec form (a JSON array) is expected: {e}"))
        };
        for line in &instructions[last_from + 1..] {
            let (instruction, rest) = line.split_once(' ').unwrap_or((line, ""));
            let rest = rest.trim();
            match instruction {
                "ENTRYPOINT" => image.entrypoint = exec_form(rest, instruction),
                "CMD" => image.cmd = exec_form(rest, instruction),
                "ENV" => {
                    for pair in rest.split_whitespace() {
                        let (name, value) = pair
                            .split_once('=')
                            .unwrap_or_else(|| panic!("ENV {rest}: NAME=VALUE expected"));
                        assert!(
                            !value.starts_with('"') || value.ends_with('"'),
                            "ENV {rest}: a quoted value with spaces is not read here"
                        );
                        image.env.push((name.to_owned(), value.trim_matches('"').to_owned()));
                    }
                }
                "USER" => {
                    let (uid, gid) = rest.split_once(':').unwrap_or((rest, rest));
                    image.user = Some((uid.parse().unwrap(), gid.parse().unwrap()));
                }
                "COPY" => {
                    let words: Vec<&str> = rest.split_whitespace().collect();
                    let from = words.iter().find_map(|w| w.strip_prefix("--from=")).map(str::to_owned);
                    let paths: Vec<&str> = words.iter().copied().filter(|w| !w.starts_with("--")).collect();
                    let [source, destination] = paths[..] else {
                        panic!("COPY {rest}: one source and one destination expected")
                    };
                    image.copies.push((from, source.to_owned(), destination.to_owned()));
                }
                _ => {}
            }
        }
        assert!(!image.entrypoint.is_empty(), "the image has an ENTRYPOINT");
        image
    }

    /// Writes what the final stage copies under `root`: the repository's files, and the binary
    /// the build stage made (this test's build of it).
    fn install(&self, root: &Path) {
        for (from, source, destination) in &self.copies {
            let target = under(root, destination);
            match from {
                Some(_) => {
                    assert!(
                        source.ends_with("target/release/toolhost"),
                        "COPY --from {source}: only the binary is known"
                    );
                    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                    // A link where it can be (no copy of a large debug binary), a copy else.
                    if std::fs::hard_link(BIN, &target).is_err() {
                        std::fs::copy(BIN, &target).unwrap();
                    }
                }
                None if repo().join(source).is_dir() => copy_tree(&repo().join(source), &target),
                None => {
                    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                    std::fs::copy(repo().join(source), &target).unwrap();
                }
            }
        }
    }

    /// The command the image's ENTRYPOINT runs under `root` with `args` (its CMD, or a
    /// Deployment's `args`), its ENV set first, then `env` (a Deployment's, which wins).
    fn command(&self, root: &Path, args: &[String], env: &[(String, String)], user: Option<(u32, u32)>) -> Command {
        let mut command = Command::new(under(root, &self.entrypoint[0]));
        command
            .args(mapped(root, self.entrypoint[1..].iter().chain(args)))
            .env_clear()
            .env("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
            .envs(self.env.iter().chain(env).map(|(k, v)| (k, v)))
            .current_dir(root);
        // The artifact's user, when this test may switch to it (root): files it cannot write
        // (the copied catalog, owned by root) behave as in the container.
        if let Some((uid, gid)) = user.or(self.user)
            && std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
        {
            command.uid(uid).gid(gid);
        }
        command
    }
}

/// The absolute container path `path` under `root`.
fn under(root: &Path, path: &str) -> PathBuf {
    root.join(path.trim_start_matches('/'))
}

/// `args` with absolute paths moved under `root`, and the listen port made 0 (the address is
/// kept: whether it is loopback decides what `serve` requires).
fn mapped<'a>(root: &Path, args: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for arg in args {
        let listen = out.last().is_some_and(|a| a == "--listen");
        let arg = if listen {
            let (address, _port) = arg.rsplit_once(':').unwrap();
            format!("{address}:0")
        } else if arg.starts_with('/') {
            under(root, arg).to_string_lossy().into_owned()
        } else {
            arg.clone()
        };
        out.push(arg);
    }
    out
}

/// Waits until the server answers `/readyz` 200 (30 s at most); its body.
async fn ready(server: &Server) -> Value {
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let answer = http.get(format!("{}/readyz", server.base)).send().await;
        if let Ok(answer) = answer {
            let status = answer.status();
            let body: Value = answer.json().await.unwrap_or_default();
            if status == 200 {
                return body;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "/readyz still {status}: {body}"
            );
        }
        assert!(started.elapsed() < Duration::from_secs(30), "/readyz never answered");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The log lines at level WARN or ERROR (JSON or text) up to the first `/readyz` request.
fn warnings(server: &Server) -> Vec<String> {
    let logs = server.logs_when(|lines| lines.iter().any(|l| l.contains("/readyz")));
    logs.into_iter()
        .filter(|line| match serde_json::from_str::<Value>(line) {
            Ok(v) => v["level"] == "WARN" || v["level"] == "ERROR",
            Err(_) => line
                .split_whitespace()
                .nth(1)
                .is_some_and(|level| level == "WARN" || level == "ERROR"),
        })
        .collect()
}

#[tokio::test]
async fn the_image_starts_as_its_entrypoint_and_cmd_say() {
    let image = Image::read();
    let root = Scratch::new();
    image.install(&root.0);
    let copied: Vec<PathBuf> = image
        .copies
        .iter()
        .filter(|(from, ..)| from.is_none())
        .map(|(_, _, destination)| under(&root.0, destination))
        .collect();
    let before: Vec<_> = copied.iter().map(|dir| tree(dir)).collect();

    let server = Server::exact(image.command(&root.0, &image.cmd, &[], None));
    let ready = ready(&server).await;
    assert_eq!(ready["status"], "ready", "{ready}");
    // `docker run -p 8080:8080 IMAGE` answers on localhost, as the image documents.
    let tools = json_of(reqwest::Client::new().get(format!("{}/nact/tools", server.base))).await;
    assert!(!tools["items"].as_array().unwrap().is_empty(), "{tools}");
    // The image's files are not the run's: nothing is written among them.
    let after: Vec<_> = copied.iter().map(|dir| tree(dir)).collect();
    assert!(before == after, "the run changed files the image copies");
    // It starts cleanly: the one warning is that the WoA document advertises plain http, on
    // loopback only.
    let warned = warnings(&server);
    assert!(
        warned
            .iter()
            .all(|l| l.contains("advertises a plain-http URL") && l.contains("url=http://localhost:")),
        "{warned:#?}"
    );
    assert!(server.terminate());
}

/// The documents of one `kind` and `name`.
fn document<'a>(documents: &'a [(String, Value)], kind: &str, name: &str) -> &'a Value {
    &documents
        .iter()
        .find(|(_, d)| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name} in the manifests"))
        .1
}

/// The string entries of a ConfigMap's `data` or a Secret's `stringData`.
fn entries(documents: &[(String, Value)], kind: &str, name: &str) -> Vec<(String, String)> {
    let document = document(documents, kind, name);
    assert!(
        document.get("data").is_none() || kind == "ConfigMap",
        "{kind}/{name}: only stringData is read here"
    );
    let data = if kind == "Secret" {
        &document["stringData"]
    } else {
        &document["data"]
    };
    data.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
        .collect()
}

/// A container's environment as the kubelet builds it: `envFrom` first, then `env` (which
/// wins), values taken from the manifests' Secrets and ConfigMaps.
fn container_env(documents: &[(String, Value)], container: &Value) -> Vec<(String, String)> {
    let mut env = Vec::new();
    for source in container["envFrom"].as_array().into_iter().flatten() {
        let (kind, reference) = match (&source["secretRef"], &source["configMapRef"]) {
            (Value::Object(r), _) => ("Secret", r),
            (_, Value::Object(r)) => ("ConfigMap", r),
            _ => panic!("envFrom {source}: not read here"),
        };
        env.extend(entries(documents, kind, reference["name"].as_str().unwrap()));
    }
    for variable in container["env"].as_array().into_iter().flatten() {
        let name = variable["name"].as_str().unwrap().to_owned();
        let value = match (&variable["value"], &variable["valueFrom"]["secretKeyRef"]) {
            (Value::String(v), _) => v.clone(),
            (_, Value::Object(r)) => {
                let secret = entries(documents, "Secret", r["name"].as_str().unwrap());
                secret.into_iter().find(|(k, _)| r["key"] == *k).unwrap().1
            }
            _ => panic!("env {variable}: not read here"),
        };
        env.retain(|(k, _)| *k != name);
        env.push((name, value));
    }
    env
}

/// `$(NAME)` in `arg` replaced by the variable's value, as the kubelet does.
fn expand(arg: &str, env: &[(String, String)]) -> String {
    env.iter().fold(arg.to_owned(), |arg, (name, value)| {
        arg.replace(&format!("$({name})"), value)
    })
}

/// The pod's files: each volume mount of `container` written under `root` from its ConfigMap
/// or Secret (a key a file), or an empty directory for any other volume, in place of what the
/// image has there.
fn mount(documents: &[(String, Value)], pod: &Value, container: &Value, root: &Path) {
    for volume_mount in container["volumeMounts"].as_array().into_iter().flatten() {
        let directory = under(root, volume_mount["mountPath"].as_str().unwrap());
        // A mount hides what the image has at its path.
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).unwrap();
        let volume = pod["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == volume_mount["name"]);
        let files = match volume {
            Some(v) if v["configMap"].is_object() => {
                entries(documents, "ConfigMap", v["configMap"]["name"].as_str().unwrap())
            }
            Some(v) if v["secret"].is_object() => {
                entries(documents, "Secret", v["secret"]["secretName"].as_str().unwrap())
            }
            _ => Vec::new(),
        };
        for (file, text) in files {
            std::fs::write(directory.join(file), text).unwrap();
        }
    }
}

/// The pod's `runAsUser` and `runAsGroup`, the container's over the pod's.
fn run_as(pod: &Value, container: &Value) -> Option<(u32, u32)> {
    let field = |key: &str| {
        container["securityContext"][key]
            .as_u64()
            .or_else(|| pod["securityContext"][key].as_u64())
            .map(|id| u32::try_from(id).unwrap())
    };
    Some((field("runAsUser")?, field("runAsGroup")?))
}

#[tokio::test]
async fn the_deployment_starts_with_its_args_env_and_mounts_against_its_redis() {
    let found = Command::new("redis-server").arg("--version").output().is_ok();
    if !found {
        crate::client_peers::skip_unless_required("redis-server");
        return;
    }
    let documents = manifests();

    // The store: the StatefulSet's Redis with its own args, on a loopback port of its own.
    let statefulset = document(&documents, "StatefulSet", "toolhost-redis");
    let redis_pod = &statefulset["spec"]["template"]["spec"];
    let redis_container = &redis_pod["containers"][0];
    let redis_root = Scratch::new();
    mount(&documents, redis_pod, redis_container, &redis_root.0);
    let redis_env = container_env(&documents, redis_container);
    let args: Vec<String> = redis_container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| expand(a.as_str().unwrap(), &redis_env))
        .collect();
    let port = crate::client_peers::free_port();
    let mut redis = Command::new("redis-server");
    redis
        .args(mapped(&redis_root.0, args.iter()))
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"]);
    let _redis = crate::client_peers::start(redis, port).await;
    let service = document(&documents, "Service", "toolhost-redis");
    let service_address = format!(
        "{}:{}",
        service["metadata"]["name"].as_str().unwrap(),
        service["spec"]["ports"][0]["port"]
    );

    // The replica: the image's entrypoint with the Deployment's args, env and mounts.
    let deployment = document(&documents, "Deployment", "toolhost");
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let root = Scratch::new();
    let image = Image::read();
    image.install(&root.0);
    mount(&documents, pod, container, &root.0);
    let env: Vec<(String, String)> = container_env(&documents, container)
        .into_iter()
        .map(|(k, v)| (k, v.replace(&service_address, &format!("127.0.0.1:{port}"))))
        .collect();
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| expand(a.as_str().unwrap(), &env))
        .collect();
    let mounted: Vec<PathBuf> = container["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| under(&root.0, m["mountPath"].as_str().unwrap()))
        .collect();
    let before: Vec<_> = mounted.iter().map(|dir| tree(dir)).collect();

    let server = Server::exact(image.command(&root.0, &args, &env, run_as(pod, container)));
    let ready = ready(&server).await;
    assert_eq!(ready["status"], "ready", "{ready}");
    assert_eq!(ready["state"]["kind"], "redis", "{ready}");
    assert_eq!(
        ready["state"]["ok"], true,
        "the replica reaches its Redis with the Secret's password: {ready}"
    );

    // Callers inside the cluster name the Service; the WoA document advertises the public URL.
    let http = reqwest::Client::new();
    let service_host = format!(
        "toolhost:{}",
        document(&documents, "Service", "toolhost")["spec"]["ports"][0]["port"]
    );
    let tools = json_of(
        http.get(format!("{}/nact/tools", server.base))
            .header("host", &service_host),
    )
    .await;
    assert!(!tools["items"].as_array().unwrap().is_empty(), "{tools}");
    let public_url = &env.iter().find(|(k, _)| k == "TOOLHOST_PUBLIC_URL").unwrap().1;
    let woa = json_of(
        http.get(format!("{}/.well-known/woa.json", server.base))
            .header("host", &service_host),
    )
    .await;
    assert_eq!(woa["transports"]["rest"]["base"], public_url.as_str(), "{woa}");
    // The mounts are read-only in the pod: the replica writes nothing there.
    let after: Vec<_> = mounted.iter().map(|dir| tree(dir)).collect();
    assert!(before == after, "the run changed files in a read-only mount");
    let warned = warnings(&server);
    assert!(warned.is_empty(), "the replica starts without a warning: {warned:#?}");
    assert!(server.terminate());
}
