//! The files of `deploy/` (and the root `.dockerignore`) against the server
//! they deploy: a deployment that passes a flag, a variable or a TOML key
//! the server does not know, or publishes, probes and scrapes a port it does
//! not listen on, fails here rather than on the first start in production.
//!
//! Each way the files start the server (the image, compose, the systemd unit
//! with and without its example env file, the StatefulSet with its
//! ConfigMap) becomes an [`Invocation`]: the flags, the environment and the
//! files it is given. [`effective_config`] runs it through the server's own
//! parser (`patience_server::config::Cli`, then `Cli::into_config`, TOML
//! file and validation included), and the ports, paths and timeouts of the
//! deployment are checked against the `Config` that comes out. Every YAML
//! and JSON file is parsed, Prometheus' scrape target and Grafana's metric
//! names are checked against the server's, and a text scan catches any
//! `PATIENCE_*` name or `patience-server --flag` that no structured check
//! reached (the README's commands, comments).
//!
//! `check` returns the problems instead of panicking, so that
//! `deploy_check_catches_planted_mistakes` can plant one mistake at a time
//! in a copy of the files and see each one caught.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::{CommandFactory as _, FromArgMatches as _};
use patience_server::config::{Cli, Config};
use yaml_rust2::{Yaml, YamlLoader};

/// The files checked: every file under `deploy/` and the root
/// `.dockerignore`, by path relative to the repository root.
type Files = BTreeMap<String, String>;

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository root")
        .to_path_buf()
}

fn read_deploy_files() -> Files {
    let root = repository_root();
    let mut files = Files::new();
    let mut pending = vec![root.join("deploy")];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            let entries = std::fs::read_dir(&path).expect("deploy/ is readable");
            pending.extend(entries.map(|entry| entry.expect("a directory entry").path()));
            continue;
        }
        let relative = path
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{relative} is not text: {error}"));
        files.insert(relative, text);
    }
    let dockerignore = root.join(".dockerignore");
    let text = std::fs::read_to_string(&dockerignore).expect("the root has a .dockerignore");
    files.insert(".dockerignore".to_string(), text);
    files
}

// ----- The server's own parser -----

/// What `patience-server` accepts, read from clap's definition of `Cli`.
struct ServerParser {
    /// Long flag names (without `--`), and whether each takes a value.
    flags: BTreeMap<String, bool>,
    /// Each environment variable and the long flag it stands for.
    variables: BTreeMap<String, String>,
}

impl ServerParser {
    fn new() -> ServerParser {
        let mut flags = BTreeMap::new();
        let mut variables = BTreeMap::new();
        for arg in Cli::command().get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            flags.insert(long.to_string(), arg.get_action().takes_values());
            if let Some(variable) = arg.get_env().and_then(|name| name.to_str()) {
                variables.insert(variable.to_string(), long.to_string());
            }
        }
        // clap's own.
        flags.insert("help".to_string(), false);
        flags.insert("version".to_string(), false);
        ServerParser { flags, variables }
    }
}

/// One way a deployment starts the server.
#[derive(Clone, Debug, Default)]
struct Invocation {
    /// Where it comes from, for the messages.
    source: String,
    /// The arguments after the program's name.
    args: Vec<String>,
    /// The environment, in the order it is set (a later one wins).
    environment: Vec<(String, String)>,
    /// Files the server is given (the ConfigMap's), by the path it sees.
    files: BTreeMap<String, String>,
}

/// The settings `invocation` gives the server, from its own parser.
///
/// The process's own environment must not leak in (the test binary's
/// `PATIENCE_*`, if any), and setting variables in a test binary whose
/// tests run on threads and spawn servers is not safe; so each `env` of the
/// parser is switched off and each variable of the invocation is passed as
/// the flag it stands for, which is what clap does with it: a flag given
/// too wins over its variable, and a switch (`--no-admin`) takes only
/// `true` or `false`, as clap's bool parser does.
fn effective_config(parser: &ServerParser, invocation: &Invocation) -> Result<Config, String> {
    let source = &invocation.source;
    let given: BTreeSet<String> = invocation
        .args
        .iter()
        .filter_map(|arg| arg.strip_prefix("--"))
        .map(|flag| flag.split('=').next().unwrap_or(flag).to_string())
        .collect();
    let mut latest = BTreeMap::new();
    for (name, value) in &invocation.environment {
        latest.insert(name.clone(), value.clone());
    }
    let mut argv = vec!["patience-server".to_string()];
    for (name, value) in &latest {
        if !name.starts_with("PATIENCE_") {
            continue;
        }
        let Some(long) = parser.variables.get(name) else {
            return Err(format!(
                "{source}: patience-server reads no variable {name}"
            ));
        };
        if given.contains(long) {
            continue;
        }
        if parser.flags.get(long).copied().unwrap_or(true) {
            argv.push(format!("--{long}={value}"));
        } else {
            match value.as_str() {
                "true" => argv.push(format!("--{long}")),
                "false" => {}
                _ => return Err(format!("{source}: {name} is true or false, not {value:?}")),
            }
        }
    }
    argv.extend(invocation.args.iter().cloned());
    // The file named by --config, written where the parser can read it.
    let directory =
        tempfile::tempdir().map_err(|error| format!("a temporary directory: {error}"))?;
    let mut argv_with_files = Vec::with_capacity(argv.len());
    let mut arguments = argv.into_iter();
    while let Some(arg) = arguments.next() {
        let path = if arg == "--config" {
            argv_with_files.push(arg);
            arguments.next()
        } else if let Some(path) = arg.strip_prefix("--config=") {
            argv_with_files.push("--config".to_string());
            Some(path.to_string())
        } else {
            argv_with_files.push(arg);
            continue;
        };
        let Some(path) = path else {
            return Err(format!("{source}: --config without a file"));
        };
        let Some(text) = invocation.files.get(&path) else {
            return Err(format!(
                "{source}: --config {path}, a file no deploy file provides"
            ));
        };
        let local = directory.path().join("server.toml");
        std::fs::write(&local, text).map_err(|error| format!("writing {path}: {error}"))?;
        argv_with_files.push(local.to_string_lossy().into_owned());
    }
    let command = Cli::command().mut_args(|arg| arg.env(None));
    let matches = command
        .try_get_matches_from(&argv_with_files)
        .map_err(|error| format!("{source}: {argv_with_files:?}: {error}"))?;
    let cli = Cli::from_arg_matches(&matches).map_err(|error| format!("{source}: {error}"))?;
    cli.into_config()
        .map_err(|error| format!("{source}: {error:#}"))
}

// ----- Small readers -----

/// The problems found, each a line naming its file.
#[derive(Debug, Default)]
struct Problems(Vec<String>);

impl Problems {
    fn push(&mut self, problem: impl Into<String>) {
        self.0.push(problem.into());
    }

    fn check(&mut self, ok: bool, problem: impl FnOnce() -> String) {
        if !ok {
            self.push(problem());
        }
    }
}

fn yaml_documents(files: &Files, path: &str, problems: &mut Problems) -> Vec<Yaml> {
    let Some(text) = files.get(path) else {
        problems.push(format!("{path} is missing"));
        return Vec::new();
    };
    match YamlLoader::load_from_str(text) {
        Ok(documents) => documents,
        Err(error) => {
            problems.push(format!("{path} is not YAML: {error}"));
            Vec::new()
        }
    }
}

fn yaml_strings(value: &Yaml) -> Vec<String> {
    value
        .as_vec()
        .map(|items| items.iter().filter_map(yaml_scalar).collect())
        .unwrap_or_default()
}

/// A scalar as text, as a deployment tool reads it.
fn yaml_scalar(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(text) | Yaml::Real(text) => Some(text.clone()),
        Yaml::Integer(number) => Some(number.to_string()),
        Yaml::Boolean(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// A duration written as `15s`, `2m`, `1min`, `500ms` or bare seconds, in
/// milliseconds.
fn duration_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    let number: u64 = digits.parse().ok()?;
    match &text[digits.len()..] {
        "" | "s" | "sec" => Some(number * 1000),
        "ms" => Some(number),
        "m" | "min" => Some(number * 60_000),
        _ => None,
    }
}

// ----- deploy/Dockerfile -----

/// What the image's last stage says.
#[derive(Debug, Default)]
struct Image {
    entrypoint: Vec<String>,
    cmd: Vec<String>,
    environment: Vec<(String, String)>,
    exposed: Vec<u16>,
    volumes: Vec<String>,
    user: Option<String>,
    healthcheck: Option<String>,
    stop_signal: Option<String>,
    builds_the_server: bool,
    runtime_base: String,
}

/// Dockerfile instructions, continuation lines joined, comments dropped.
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        if let Some(head) = trimmed.strip_suffix('\\') {
            current.push_str(head);
            current.push(' ');
            continue;
        }
        current.push_str(trimmed);
        let (word, rest) = current
            .split_once(char::is_whitespace)
            .unwrap_or((&current, ""));
        out.push((word.to_ascii_uppercase(), rest.trim().to_string()));
        current.clear();
    }
    out
}

fn exec_form(text: &str) -> Option<Vec<String>> {
    serde_json::from_str::<Vec<String>>(text.trim()).ok()
}

fn read_image(files: &Files, problems: &mut Problems) -> Image {
    let path = "deploy/Dockerfile";
    let Some(text) = files.get(path) else {
        problems.push(format!("{path} is missing"));
        return Image::default();
    };
    let mut image = Image::default();
    for (instruction, rest) in instructions(text) {
        match instruction.as_str() {
            "FROM" => {
                // Only the last stage is the image.
                let builds = image.builds_the_server;
                image = Image {
                    builds_the_server: builds,
                    runtime_base: rest.clone(),
                    ..Image::default()
                };
            }
            "RUN" => {
                image.builds_the_server |=
                    rest.contains("cargo build --release --locked -p patience-server");
            }
            "ENV" => {
                for pair in rest.split_whitespace() {
                    match pair.split_once('=') {
                        Some((name, value)) => image
                            .environment
                            .push((name.to_string(), value.trim_matches('"').to_string())),
                        None => problems.push(format!("{path}: ENV {pair} is not NAME=value")),
                    }
                }
            }
            "ENTRYPOINT" | "CMD" => match exec_form(&rest) {
                Some(words) if instruction == "CMD" => image.cmd = words,
                Some(words) => image.entrypoint = words,
                // The shell form runs the server under sh, which does not
                // pass SIGTERM on: no drain.
                None => problems.push(format!("{path}: {instruction} is not in exec form")),
            },
            "EXPOSE" => {
                for port in rest.split_whitespace() {
                    match port.trim_end_matches("/tcp").parse() {
                        Ok(port) => image.exposed.push(port),
                        Err(_) => problems.push(format!("{path}: EXPOSE {port}")),
                    }
                }
            }
            "VOLUME" => image.volumes.extend(
                exec_form(&rest)
                    .unwrap_or_else(|| rest.split_whitespace().map(str::to_string).collect()),
            ),
            "USER" => image.user = Some(rest),
            "HEALTHCHECK" => image.healthcheck = Some(rest),
            "STOPSIGNAL" => image.stop_signal = Some(rest),
            _ => {}
        }
    }
    image
}

fn image_invocation(image: &Image) -> Invocation {
    Invocation {
        source: "deploy/Dockerfile".to_string(),
        args: image
            .entrypoint
            .iter()
            .skip(1)
            .chain(&image.cmd)
            .cloned()
            .collect(),
        environment: image.environment.clone(),
        files: BTreeMap::new(),
    }
}

fn check_image(parser: &ServerParser, image: &Image, problems: &mut Problems) {
    let path = "deploy/Dockerfile";
    problems.check(image.builds_the_server, || {
        format!("{path}: no stage runs cargo build --release --locked -p patience-server")
    });
    problems.check(image.runtime_base.contains("slim"), || {
        format!(
            "{path}: the runtime stage is not a slim image: {}",
            image.runtime_base
        )
    });
    problems.check(
        image
            .entrypoint
            .first()
            .is_some_and(|program| program.ends_with("/patience-server")),
        || {
            format!(
                "{path}: ENTRYPOINT is not patience-server: {:?}",
                image.entrypoint
            )
        },
    );
    problems.check(
        image
            .user
            .as_deref()
            .is_some_and(|user| !["root", "0"].contains(&user.split(':').next().unwrap_or(user))),
        || format!("{path}: the image runs as root: USER {:?}", image.user),
    );
    problems.check(image.stop_signal.as_deref() == Some("SIGTERM"), || {
        format!("{path}: STOPSIGNAL is not SIGTERM")
    });
    let config = match effective_config(parser, &image_invocation(image)) {
        Ok(config) => config,
        Err(error) => return problems.push(error),
    };
    problems.check(config.listen.ip().is_unspecified(), || {
        format!(
            "{path}: the server listens on {}, not on every address",
            config.listen
        )
    });
    let Some(admin) = config.admin_listen else {
        return problems.push(format!("{path}: the image serves no admin port"));
    };
    problems.check(admin.ip().is_unspecified(), || {
        format!("{path}: the admin port listens on {admin}, unreachable from outside")
    });
    for (what, port) in [("WebSocket", config.listen.port()), ("admin", admin.port())] {
        problems.check(image.exposed.contains(&port), || {
            format!(
                "{path}: the {what} port {port} is not exposed: {:?}",
                image.exposed
            )
        });
    }
    let data = config
        .data_dir
        .as_ref()
        .map(|dir| dir.to_string_lossy().into_owned());
    problems.check(
        data.as_ref().is_some_and(|dir| image.volumes.contains(dir)),
        || {
            format!(
                "{path}: the data directory {data:?} is not a VOLUME: {:?}",
                image.volumes
            )
        },
    );
    let healthcheck = image.healthcheck.as_deref().unwrap_or_default();
    problems.check(
        healthcheck.contains("/healthz")
            && healthcheck.contains(&format!("/dev/tcp/127.0.0.1/{}", admin.port())),
        || {
            format!(
                "{path}: HEALTHCHECK does not ask /healthz on port {}: {healthcheck}",
                admin.port()
            )
        },
    );
}

// ----- deploy/compose.yaml, Prometheus, Grafana -----

/// A compose service's environment, as a map or as a list.
fn compose_environment(value: &Yaml) -> Vec<(String, String)> {
    if let Some(map) = value.as_hash() {
        return map
            .iter()
            .filter_map(|(name, value)| {
                Some((yaml_scalar(name)?, yaml_scalar(value).unwrap_or_default()))
            })
            .collect();
    }
    yaml_strings(value)
        .into_iter()
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) => (name.to_string(), value.to_string()),
            None => (pair, String::new()),
        })
        .collect()
}

/// The container side of a compose port (`"127.0.0.1:7879:7879"`).
fn container_port(spec: &str) -> Option<u16> {
    spec.rsplit(':')
        .next()?
        .trim_end_matches("/tcp")
        .parse()
        .ok()
}

fn check_compose(files: &Files, parser: &ServerParser, image: &Image, problems: &mut Problems) {
    let path = "deploy/compose.yaml";
    let documents = yaml_documents(files, path, problems);
    let Some(compose) = documents.first() else {
        return;
    };
    let services = &compose["services"];
    let Some(service_names) = services
        .as_hash()
        .map(|map| map.keys().filter_map(yaml_scalar).collect::<BTreeSet<_>>())
    else {
        return problems.push(format!("{path}: no services"));
    };
    let server = &services["patience"];
    problems.check(
        server["build"]["dockerfile"].as_str() == Some("deploy/Dockerfile")
            && server["build"]["context"].as_str() == Some(".."),
        || format!("{path}: patience is not built from deploy/Dockerfile in the repository root"),
    );
    let entrypoint = match &server["entrypoint"] {
        Yaml::BadValue => image.entrypoint.clone(),
        value => yaml_strings(value),
    };
    let cmd = match &server["command"] {
        Yaml::BadValue => image.cmd.clone(),
        value => yaml_strings(value),
    };
    let mut environment = image.environment.clone();
    environment.extend(compose_environment(&server["environment"]));
    let invocation = Invocation {
        source: path.to_string(),
        args: entrypoint.iter().skip(1).chain(&cmd).cloned().collect(),
        environment,
        files: BTreeMap::new(),
    };
    let config = match effective_config(parser, &invocation) {
        Ok(config) => config,
        Err(error) => return problems.push(error),
    };
    let Some(admin) = config.admin_listen else {
        return problems.push(format!("{path}: the server serves no admin port"));
    };
    let published: BTreeSet<u16> = yaml_strings(&server["ports"])
        .iter()
        .filter_map(|spec| container_port(spec))
        .collect();
    let listened = BTreeSet::from([config.listen.port(), admin.port()]);
    problems.check(published == listened, || {
        format!(
            "{path}: publishes container ports {published:?}, the server listens on {listened:?}"
        )
    });
    let data = config
        .data_dir
        .as_ref()
        .map(|dir| dir.to_string_lossy().into_owned());
    let declared: BTreeSet<String> = compose["volumes"]
        .as_hash()
        .map(|map| map.keys().filter_map(yaml_scalar).collect())
        .unwrap_or_default();
    let data_volume = yaml_strings(&server["volumes"]).into_iter().find(|mount| {
        let mut parts = mount.split(':');
        let (volume, target) = (parts.next().unwrap_or_default(), parts.next());
        target == data.as_deref() && declared.contains(volume)
    });
    problems.check(data_volume.is_some(), || {
        format!("{path}: no named volume is mounted at the data directory {data:?}")
    });
    let stop = server["stop_grace_period"].as_str().and_then(duration_ms);
    problems.check(
        stop.is_some_and(|stop| stop > config.shutdown_grace_ms),
        || {
            format!(
                "{path}: stop_grace_period {stop:?} ms does not cover the shutdown grace of {} ms",
                config.shutdown_grace_ms
            )
        },
    );
    // Host files mounted into the other services exist beside compose.yaml.
    for name in &service_names {
        for mount in yaml_strings(&services[name.as_str()]["volumes"]) {
            if let Some(host) = mount
                .split(':')
                .next()
                .filter(|host| host.starts_with("./"))
            {
                let host = format!("deploy/{}", &host[2..]);
                let exists = files.contains_key(&host)
                    || files
                        .keys()
                        .any(|file| file.starts_with(&format!("{host}/")));
                problems.check(exists, || {
                    format!("{path}: {name} mounts {host}, which is missing")
                });
            }
        }
    }
    check_prometheus(files, &service_names, admin.port(), problems);
    check_grafana(files, services, &service_names, problems);
}

fn check_prometheus(
    files: &Files,
    services: &BTreeSet<String>,
    admin_port: u16,
    problems: &mut Problems,
) {
    let path = "deploy/prometheus/prometheus.yml";
    let documents = yaml_documents(files, path, problems);
    let Some(prometheus) = documents.first() else {
        return;
    };
    let expected = format!("patience:{admin_port}");
    let mut found = false;
    for job in prometheus["scrape_configs"].as_vec().into_iter().flatten() {
        let metrics_path = job["metrics_path"].as_str().unwrap_or("/metrics");
        for static_config in job["static_configs"].as_vec().into_iter().flatten() {
            for target in yaml_strings(&static_config["targets"]) {
                let host = target.split(':').next().unwrap_or_default();
                problems.check(services.contains(host), || {
                    format!("{path}: target {target} is no compose service")
                });
                if target == expected && metrics_path == "/metrics" {
                    found = true;
                }
            }
        }
    }
    problems.check(found, || {
        format!("{path}: nothing scrapes {expected}/metrics")
    });
}

/// Every series name `/metrics` shows, from the server's own renderer.
fn exported_series() -> BTreeSet<String> {
    let metrics = patience_server::metrics::Metrics::default();
    let text = metrics.render(
        &[("three-blind-mice".to_string(), 1)],
        &patience_server::database::Stats::default(),
    );
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split(['{', ' ']).next())
        .map(str::to_string)
        .collect()
}

/// The `patience_*` names a PromQL expression reads.
fn series_in(expression: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in expression.match_indices("patience_") {
        let before = expression[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = expression[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        names.insert(name);
    }
    names
}

fn check_grafana(
    files: &Files,
    services: &Yaml,
    service_names: &BTreeSet<String>,
    problems: &mut Problems,
) {
    let datasources = "deploy/grafana/provisioning/datasources/prometheus.yaml";
    let documents = yaml_documents(files, datasources, problems);
    let mut uids = BTreeSet::new();
    for source in documents
        .iter()
        .flat_map(|doc| doc["datasources"].as_vec().into_iter().flatten())
    {
        let url = source["url"].as_str().unwrap_or_default();
        let host = url
            .trim_start_matches("http://")
            .split(':')
            .next()
            .unwrap_or_default();
        problems.check(service_names.contains(host), || {
            format!("{datasources}: {url} is no compose service")
        });
        if let Some(uid) = source["uid"].as_str() {
            uids.insert(uid.to_string());
        }
    }
    // The dashboards' provider reads where compose mounts them.
    let providers = "deploy/grafana/provisioning/dashboards/patience.yaml";
    let mounted: Vec<String> = yaml_strings(&services["grafana"]["volumes"]);
    for document in yaml_documents(files, providers, problems) {
        for provider in document["providers"].as_vec().into_iter().flatten() {
            let path = provider["options"]["path"].as_str().unwrap_or_default();
            problems.check(
                mounted.iter().any(|mount| {
                    mount.starts_with("./grafana/dashboards:")
                        && mount.contains(&format!(":{path}"))
                }),
                || {
                    format!(
                        "{providers}: {path} is not where compose mounts deploy/grafana/dashboards"
                    )
                },
            );
        }
    }
    let exported = exported_series();
    let mut shown = BTreeSet::new();
    let dashboards: Vec<&String> = files
        .keys()
        .filter(|path| path.starts_with("deploy/grafana/dashboards/") && path.ends_with(".json"))
        .collect();
    problems.check(!dashboards.is_empty(), || {
        "deploy/grafana/dashboards/ has no dashboard".to_string()
    });
    for path in dashboards {
        let Ok(dashboard) = serde_json::from_str::<serde_json::Value>(&files[path]) else {
            continue; // Reported as invalid JSON by the scan of every file.
        };
        for panel in dashboard["panels"].as_array().into_iter().flatten() {
            let title = panel["title"].as_str().unwrap_or("?");
            let uid = panel["datasource"]["uid"].as_str().unwrap_or_default();
            problems.check(uids.contains(uid), || {
                format!("{path}: panel {title:?} reads datasource {uid:?}, not provisioned")
            });
            for target in panel["targets"].as_array().into_iter().flatten() {
                let expression = target["expr"].as_str().unwrap_or_default();
                for name in series_in(expression) {
                    problems.check(exported.contains(&name), || {
                        format!(
                            "{path}: panel {title:?} reads {name}, which /metrics does not show"
                        )
                    });
                    shown.insert(name);
                }
            }
        }
    }
    for wanted in [
        "patience_connections",
        "patience_rooms",
        "patience_races_running",
        "patience_races_started_total",
        "patience_races_finished_total",
        "patience_moves_accepted_total",
        "patience_moves_rejected_total",
        "patience_database_up",
        "patience_database_commits_total",
        "patience_database_failed_jobs_total",
    ] {
        problems.check(shown.contains(wanted), || {
            format!("deploy/grafana/dashboards: no panel shows {wanted}")
        });
    }
}

// ----- deploy/systemd -----

/// A unit file's `[Service]` settings, each key with every value given.
fn unit_settings(text: &str, section: &str) -> BTreeMap<String, Vec<String>> {
    let mut settings: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            current = line.to_string();
            continue;
        }
        if current == format!("[{section}]")
            && let Some((key, value)) = line.split_once('=')
        {
            settings
                .entry(key.trim().to_string())
                .or_default()
                .push(value.trim().to_string());
        }
    }
    settings
}

/// `NAME=value` lines of an env file; `examples` also reads the `# NAME=value`
/// lines, the examples a reader may uncomment.
fn env_file(text: &str, examples: bool) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter_map(|line| match line.strip_prefix("# ") {
            Some(example) if examples => Some(example),
            Some(_) => None,
            None => Some(line),
        })
        .filter_map(|line| line.split_once('='))
        .filter(|(name, _)| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

fn check_systemd(files: &Files, parser: &ServerParser, problems: &mut Problems) {
    let path = "deploy/systemd/patience-server.service";
    let Some(text) = files.get(path) else {
        return problems.push(format!("{path} is missing"));
    };
    let service = unit_settings(text, "Service");
    let one = |key: &str| service.get(key).and_then(|values| values.last()).cloned();
    let exec = one("ExecStart").unwrap_or_default();
    problems.check(!exec.contains(['"', '\'', '$']), || {
        format!("{path}: ExecStart uses quotes or variables this check does not read: {exec}")
    });
    let mut words = exec.split_whitespace();
    problems.check(
        words
            .next()
            .is_some_and(|program| program.ends_with("/patience-server")),
        || format!("{path}: ExecStart does not run patience-server: {exec}"),
    );
    let args: Vec<String> = words.map(str::to_string).collect();
    let mut environment = Vec::new();
    for value in service.get("Environment").into_iter().flatten() {
        for pair in value.split_whitespace() {
            match pair.split_once('=') {
                Some((name, value)) => environment.push((name.to_string(), value.to_string())),
                None => problems.push(format!("{path}: Environment={pair} is not NAME=value")),
            }
        }
    }
    let example = "deploy/systemd/patience-server.env";
    let env_files = service.get("EnvironmentFile").cloned().unwrap_or_default();
    problems.check(
        env_files
            .iter()
            .any(|file| file.starts_with('-') && file.ends_with("/patience-server.env")),
        || format!("{path}: no optional EnvironmentFile= names patience-server.env"),
    );
    let example_text = files.get(example).cloned().unwrap_or_default();
    problems.check(files.contains_key(example), || {
        format!("{example} is missing")
    });
    let plain = Invocation {
        source: path.to_string(),
        args: args.clone(),
        environment: environment
            .iter()
            .cloned()
            .chain(env_file(&example_text, false))
            .collect(),
        files: BTreeMap::new(),
    };
    let with_examples = Invocation {
        source: format!("{path} with every example of {example}"),
        args,
        environment: environment
            .into_iter()
            .chain(env_file(&example_text, true))
            .collect(),
        files: BTreeMap::new(),
    };
    let mut configs = Vec::new();
    for invocation in [plain, with_examples] {
        match effective_config(parser, &invocation) {
            Ok(config) => configs.push(config),
            Err(error) => problems.push(error),
        }
    }
    let Some(config) = configs.first() else {
        return;
    };
    let state = one("StateDirectory").unwrap_or_default();
    let state_path = PathBuf::from(format!("/var/lib/{state}"));
    problems.check(
        !state.is_empty() && config.data_dir.as_ref() == Some(&state_path),
        || {
            format!(
                "{path}: the data directory {:?} is not the StateDirectory {}",
                config.data_dir,
                state_path.display()
            )
        },
    );
    let stop = one("TimeoutStopSec").as_deref().and_then(duration_ms);
    problems.check(
        stop.is_some_and(|stop| stop > config.shutdown_grace_ms),
        || {
            format!(
                "{path}: TimeoutStopSec {stop:?} ms does not cover the shutdown grace of {} ms",
                config.shutdown_grace_ms
            )
        },
    );
    for (key, wanted) in [
        ("KillSignal", "SIGTERM"),
        ("Restart", "on-failure"),
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("PrivateTmp", "yes"),
        ("MemoryDenyWriteExecute", "yes"),
        ("CapabilityBoundingSet", ""),
        ("SystemCallFilter", "@system-service"),
    ] {
        let values = service.get(key).cloned().unwrap_or_default();
        problems.check(values.iter().any(|value| value == wanted), || {
            format!("{path}: {key}={wanted} is missing: {values:?}")
        });
    }
    problems.check(
        one("DynamicUser").as_deref() == Some("yes") || one("User").is_some(),
        || format!("{path}: the service runs as root (neither DynamicUser= nor User=)"),
    );
    problems.check(one("RestrictAddressFamilies").is_some(), || {
        format!("{path}: RestrictAddressFamilies= is missing")
    });
}

// ----- deploy/k8s -----

/// The container port `port` names (a name or a number) among `ports`.
fn resolve_port(port: &Yaml, ports: &BTreeMap<String, u16>) -> Option<u16> {
    match port {
        Yaml::Integer(number) => u16::try_from(*number).ok(),
        Yaml::String(name) => ports.get(name).copied(),
        _ => None,
    }
}

fn check_kubernetes(files: &Files, parser: &ServerParser, image: &Image, problems: &mut Problems) {
    let manifests: Vec<&String> = files
        .keys()
        .filter(|path| path.starts_with("deploy/k8s/") && path.ends_with(".yaml"))
        .collect();
    let mut objects: Vec<(String, Yaml)> = Vec::new();
    for path in &manifests {
        for document in yaml_documents(files, path, problems) {
            problems.check(document["metadata"]["namespace"].is_badvalue(), || {
                format!("{path}: names a namespace; the manifests take the one they are applied in")
            });
            objects.push((path.to_string(), document));
        }
    }
    let kind = |wanted: &str| {
        objects
            .iter()
            .filter(|(_, object)| object["kind"].as_str() == Some(wanted))
            .collect::<Vec<_>>()
    };
    // kubectl apply -k applies what the kustomization lists: every manifest.
    let listed: BTreeSet<String> = kind("Kustomization")
        .iter()
        .flat_map(|(_, object)| yaml_strings(&object["resources"]))
        .map(|resource| format!("deploy/k8s/{resource}"))
        .collect();
    for path in &manifests {
        let is_kustomization = path.ends_with("/kustomization.yaml");
        problems.check(is_kustomization || listed.contains(path.as_str()), || {
            format!("deploy/k8s/kustomization.yaml does not list {path}")
        });
    }
    for resource in &listed {
        problems.check(files.contains_key(resource), || {
            format!("deploy/k8s/kustomization.yaml lists {resource}, which is missing")
        });
    }
    let statefulsets = kind("StatefulSet");
    let [(path, statefulset)] = statefulsets.as_slice() else {
        return problems.push(format!(
            "deploy/k8s: {} StatefulSets, not one",
            statefulsets.len()
        ));
    };
    let spec = &statefulset["spec"];
    problems.check(spec["replicas"].as_i64() == Some(1), || {
        format!("{path}: SQLite takes one writer: replicas must be 1")
    });
    let pod = &spec["template"]["spec"];
    let containers = pod["containers"].as_vec().cloned().unwrap_or_default();
    let Some(container) = containers.iter().find(|container| {
        container["image"]
            .as_str()
            .is_some_and(|image| image.starts_with("patience-server"))
    }) else {
        return problems.push(format!(
            "{path}: no container runs the patience-server image"
        ));
    };
    // command replaces the image's ENTRYPOINT, args its CMD.
    let entrypoint = match &container["command"] {
        Yaml::BadValue => image.entrypoint.clone(),
        value => yaml_strings(value),
    };
    let cmd = match &container["args"] {
        Yaml::BadValue => image.cmd.clone(),
        value => yaml_strings(value),
    };
    let mut environment = image.environment.clone();
    for variable in container["env"].as_vec().into_iter().flatten() {
        let name = variable["name"].as_str().unwrap_or_default().to_string();
        match yaml_scalar(&variable["value"]) {
            Some(value) => environment.push((name, value)),
            None => problems.push(format!("{path}: env {name} has no literal value to check")),
        }
    }
    // The ConfigMaps mounted into the container, as the files it sees.
    let configmaps: BTreeMap<String, &Yaml> = kind("ConfigMap")
        .iter()
        .filter_map(|(_, object)| {
            Some((
                object["metadata"]["name"].as_str()?.to_string(),
                &object["data"],
            ))
        })
        .collect();
    let volumes = pod["volumes"].as_vec().cloned().unwrap_or_default();
    let mut mounted_files = BTreeMap::new();
    let mut mounts = BTreeMap::new();
    for mount in container["volumeMounts"].as_vec().into_iter().flatten() {
        let (Some(name), Some(at)) = (mount["name"].as_str(), mount["mountPath"].as_str()) else {
            continue;
        };
        mounts.insert(name.to_string(), at.to_string());
        let Some(volume) = volumes
            .iter()
            .find(|volume| volume["name"].as_str() == Some(name))
        else {
            let claimed = spec["volumeClaimTemplates"]
                .as_vec()
                .into_iter()
                .flatten()
                .any(|claim| claim["metadata"]["name"].as_str() == Some(name));
            problems.check(claimed, || {
                format!("{path}: mounts {name}, which is no volume")
            });
            continue;
        };
        if let Some(configmap) = volume["configMap"]["name"].as_str() {
            let Some(data) = configmaps.get(configmap) else {
                problems.push(format!(
                    "{path}: mounts ConfigMap {configmap}, which no manifest defines"
                ));
                continue;
            };
            for (key, text) in data.as_hash().into_iter().flatten() {
                if let (Some(key), Some(text)) = (yaml_scalar(key), yaml_scalar(text)) {
                    mounted_files.insert(format!("{}/{key}", at.trim_end_matches('/')), text);
                }
            }
        }
    }
    let invocation = Invocation {
        source: format!("{path} with its ConfigMap"),
        args: entrypoint.iter().skip(1).chain(&cmd).cloned().collect(),
        environment,
        files: mounted_files,
    };
    let config = match effective_config(parser, &invocation) {
        Ok(config) => config,
        Err(error) => return problems.push(error),
    };
    let Some(admin) = config.admin_listen else {
        return problems.push(format!("{path}: the server serves no admin port"));
    };
    let ports: BTreeMap<String, u16> = container["ports"]
        .as_vec()
        .into_iter()
        .flatten()
        .filter_map(|port| {
            let number = u16::try_from(port["containerPort"].as_i64()?).ok()?;
            Some((port["name"].as_str()?.to_string(), number))
        })
        .collect();
    let wanted = BTreeMap::from([
        ("admin".to_string(), admin.port()),
        ("ws".to_string(), config.listen.port()),
    ]);
    problems.check(ports == wanted, || {
        format!("{path}: container ports {ports:?}, the server listens on {wanted:?}")
    });
    for probe in ["readinessProbe", "livenessProbe", "startupProbe"] {
        let get = &container[probe]["httpGet"];
        if probe == "startupProbe" && container[probe].is_badvalue() {
            continue;
        }
        problems.check(
            get["path"].as_str() == Some("/healthz")
                && resolve_port(&get["port"], &ports) == Some(admin.port()),
            || {
                format!(
                    "{path}: {probe} does not ask /healthz on the admin port {}",
                    admin.port()
                )
            },
        );
    }
    let data = config
        .data_dir
        .as_ref()
        .map(|dir| dir.to_string_lossy().into_owned());
    let claims: BTreeSet<String> = spec["volumeClaimTemplates"]
        .as_vec()
        .into_iter()
        .flatten()
        .filter_map(|claim| claim["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    problems.check(
        claims
            .iter()
            .any(|claim| mounts.get(claim) == data.as_ref()),
        || format!("{path}: no volumeClaimTemplate is mounted at the data directory {data:?}"),
    );
    // SIGTERM comes after preStop; both must end within the grace period.
    let pause_ms = container["lifecycle"]["preStop"]["exec"]["command"]
        .as_vec()
        .and_then(|command| match command.as_slice() {
            [sleep, seconds] if sleep.as_str() == Some("sleep") => {
                seconds.as_str().and_then(duration_ms)
            }
            _ => None,
        })
        .unwrap_or(0);
    let grace_ms = pod["terminationGracePeriodSeconds"]
        .as_i64()
        .and_then(|seconds| u64::try_from(seconds).ok())
        .map(|seconds| seconds * 1000);
    problems.check(
        grace_ms.is_some_and(|grace| grace > pause_ms + config.shutdown_grace_ms),
        || format!(
            "{path}: terminationGracePeriodSeconds ({grace_ms:?} ms) does not cover preStop ({pause_ms} ms) and the shutdown grace ({} ms)",
            config.shutdown_grace_ms
        ),
    );
    let security = &container["securityContext"];
    problems.check(
        pod["securityContext"]["runAsNonRoot"].as_bool() == Some(true)
            && security["readOnlyRootFilesystem"].as_bool() == Some(true)
            && security["allowPrivilegeEscalation"].as_bool() == Some(false),
        || format!("{path}: not non-root with a read-only root and no privilege escalation"),
    );
    // Services reach the container's ports and select its pods.
    let labels = &spec["template"]["metadata"]["labels"];
    let mut headless = BTreeSet::new();
    for (service_path, service) in kind("Service") {
        let name = service["metadata"]["name"].as_str().unwrap_or("?");
        if service["spec"]["clusterIP"].as_str() == Some("None") {
            headless.insert(name.to_string());
        }
        for (key, value) in service["spec"]["selector"].as_hash().into_iter().flatten() {
            problems.check(&labels[key.as_str().unwrap_or_default()] == value, || {
                format!(
                    "{service_path}: Service {name} selects {key:?}={value:?}, which the pods lack"
                )
            });
        }
        for port in service["spec"]["ports"].as_vec().into_iter().flatten() {
            problems.check(resolve_port(&port["targetPort"], &ports).is_some(), || {
                format!(
                    "{service_path}: Service {name} targets {:?}, which the container lacks",
                    port["targetPort"]
                )
            });
        }
        if let Some(scrape_port) = service["metadata"]["annotations"]["prometheus.io/port"].as_str()
        {
            problems.check(scrape_port == admin.port().to_string(), || {
                format!("{service_path}: Service {name} asks Prometheus to scrape {scrape_port}")
            });
        }
    }
    let governing = spec["serviceName"].as_str().unwrap_or_default();
    problems.check(headless.contains(governing), || {
        format!("{path}: serviceName {governing:?} is no headless Service")
    });
}

// ----- Every file -----

/// Where a program word `patience-server` starts the rest of `line`.
fn server_arguments(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for (at, word) in line.match_indices("patience-server") {
        let before = line[..at].chars().next_back();
        let after = &line[at + word.len()..];
        let starts = before.is_none_or(|c| c.is_whitespace() || "/\"`'$(".contains(c));
        if starts && after.starts_with(char::is_whitespace) {
            let end = after
                .find(['|', ';', '&', '`', '#', ')'])
                .unwrap_or(after.len());
            found.push(&after[..end]);
        }
    }
    found
}

fn check_every_file(files: &Files, parser: &ServerParser, problems: &mut Problems) {
    for (path, text) in files {
        if (path.ends_with(".yaml") || path.ends_with(".yml"))
            && let Err(error) = YamlLoader::load_from_str(text)
        {
            problems.push(format!("{path} is not YAML: {error}"));
        }
        if path.ends_with(".json")
            && let Err(error) = serde_json::from_str::<serde_json::Value>(text)
        {
            problems.push(format!("{path} is not JSON: {error}"));
        }
        for (at, _) in text.match_indices("PATIENCE_") {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if name.len() > "PATIENCE_".len() {
                problems.check(parser.variables.contains_key(&name), || {
                    format!("{path}: patience-server reads no variable {name}")
                });
            }
        }
        for line in text.lines() {
            for arguments in server_arguments(line) {
                for word in arguments.split_whitespace() {
                    let Some(flag) = word.strip_prefix("--") else {
                        continue;
                    };
                    let flag = flag
                        .split('=')
                        .next()
                        .unwrap_or(flag)
                        .trim_end_matches(['`', '"', '\'', ',', '.']);
                    problems.check(parser.flags.contains_key(flag), || {
                        format!("{path}: patience-server has no flag --{flag}: {line}")
                    });
                }
            }
        }
        // TOML examples in the READMEs go through the parser as files.
        if path.ends_with(".md") {
            for (index, block) in text.split("```toml\n").skip(1).enumerate() {
                let toml = block.split("```").next().unwrap_or_default();
                let invocation = Invocation {
                    source: format!("{path}: TOML example {}", index + 1),
                    args: vec!["--config".to_string(), "example.toml".to_string()],
                    environment: Vec::new(),
                    files: BTreeMap::from([("example.toml".to_string(), toml.to_string())]),
                };
                if let Err(error) = effective_config(parser, &invocation) {
                    problems.push(error);
                }
            }
        }
    }
    let ignored = files.get(".dockerignore").cloned().unwrap_or_default();
    problems.check(
        ignored
            .lines()
            .any(|line| line.trim().trim_end_matches('/') == "target"),
        || ".dockerignore does not keep target/ out of the build context".to_string(),
    );
}

/// Every problem of the deployment files.
fn check(files: &Files) -> Vec<String> {
    let parser = ServerParser::new();
    let mut problems = Problems::default();
    check_every_file(files, &parser, &mut problems);
    let image = read_image(files, &mut problems);
    check_image(&parser, &image, &mut problems);
    check_compose(files, &parser, &image, &mut problems);
    check_systemd(files, &parser, &mut problems);
    check_kubernetes(files, &parser, &image, &mut problems);
    problems.0
}

#[test]
fn deploy_files_agree_with_the_server() {
    let files = read_deploy_files();
    for expected in [
        "deploy/Dockerfile",
        "deploy/compose.yaml",
        "deploy/README.md",
        "deploy/systemd/patience-server.service",
        "deploy/k8s/statefulset.yaml",
    ] {
        assert!(files.contains_key(expected), "{expected} is missing");
    }
    let problems = check(&files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn deploy_parser_sees_the_servers_settings() {
    // The checks are only as good as this reading of the parser: it knows
    // the flags and variables the README documents.
    let parser = ServerParser::new();
    assert_eq!(
        parser.variables.get("PATIENCE_LISTEN").map(String::as_str),
        Some("listen")
    );
    assert_eq!(
        parser.variables.get("PATIENCE_DATA").map(String::as_str),
        Some("data")
    );
    assert_eq!(parser.flags.get("no-admin"), Some(&false));
    assert_eq!(parser.flags.get("config"), Some(&true));
    // Flags win over variables, the file loses to both, and unknown keys fail.
    let invocation = Invocation {
        source: "a test".to_string(),
        args: vec![
            "--config".into(),
            "/etc/s.toml".into(),
            "--countdown-ms".into(),
            "7".into(),
        ],
        environment: vec![
            ("PATIENCE_COUNTDOWN_MS".into(), "9".into()),
            ("PATIENCE_GRACE_PERIOD_MS".into(), "11".into()),
            ("PATIENCE_NO_ADMIN".into(), "true".into()),
        ],
        files: BTreeMap::from([(
            "/etc/s.toml".to_string(),
            "grace_period_ms = 5\nshutdown_grace_ms = 1234\n".to_string(),
        )]),
    };
    let config = effective_config(&parser, &invocation).expect("valid");
    assert_eq!((config.countdown_ms, config.grace_period_ms), (7, 11));
    assert_eq!(
        (config.shutdown_grace_ms, config.admin_listen),
        (1234, None)
    );
    let mut unknown = invocation.clone();
    unknown.files.insert(
        "/etc/s.toml".to_string(),
        "lisen = \"0.0.0.0:1\"\n".to_string(),
    );
    assert!(effective_config(&parser, &unknown).is_err());
    let mut switch = invocation;
    switch
        .environment
        .push(("PATIENCE_NO_ADMIN".into(), "yes".into()));
    assert!(
        effective_config(&parser, &switch).is_err(),
        "clap's bool parser takes true or false"
    );
}

#[test]
fn deploy_check_catches_planted_mistakes() {
    let files = read_deploy_files();
    // (file, text to replace, its replacement, a word the problem names)
    let plants = [
        (
            "deploy/systemd/patience-server.service",
            "--data /var/lib/patience",
            "--data /var/lib/patience --lisen 0.0.0.0:1",
            "lisen",
        ),
        (
            "deploy/systemd/patience-server.service",
            "TimeoutStopSec=15s",
            "TimeoutStopSec=2s",
            "TimeoutStopSec",
        ),
        (
            "deploy/systemd/patience-server.env",
            "# PATIENCE_COUNTDOWN_MS=5000",
            "# PATIENCE_COUNTDOWN_MS=soon",
            "COUNTDOWN",
        ),
        (
            "deploy/Dockerfile",
            "PATIENCE_ADMIN_LISTEN=0.0.0.0:7879",
            "PATIENCE_ADMIN_LISTEN=0.0.0.0:9100",
            "7879",
        ),
        (
            "deploy/Dockerfile",
            "PATIENCE_DATA=/var/lib/patience",
            "PATIENCE_DATA_DIR=/var/lib/patience",
            "PATIENCE_DATA_DIR",
        ),
        (
            "deploy/Dockerfile",
            "ENTRYPOINT [\"/usr/local/bin/patience-server\"]",
            "ENTRYPOINT /usr/local/bin/patience-server",
            "exec form",
        ),
        (
            "deploy/compose.yaml",
            "\"7878:7878\"",
            "\"7878:7880\"",
            "publishes",
        ),
        (
            "deploy/compose.yaml",
            "RUST_LOG: info",
            "PATIENCE_GAMES: chess",
            "compose",
        ),
        (
            "deploy/prometheus/prometheus.yml",
            "patience:7879",
            "patience:7878",
            "patience:7879",
        ),
        (
            "deploy/grafana/dashboards/patience-server.json",
            "patience_rooms",
            "patience_room_count",
            "patience_room_count",
        ),
        (
            "deploy/k8s/configmap.yaml",
            "countdown_ms = 5000",
            "count_down_ms = 5000",
            "count_down_ms",
        ),
        (
            "deploy/k8s/statefulset.yaml",
            "\"/etc/patience/server.toml\"",
            "\"/etc/patience/settings.toml\"",
            "settings.toml",
        ),
        (
            "deploy/k8s/statefulset.yaml",
            "terminationGracePeriodSeconds: 20",
            "terminationGracePeriodSeconds: 6",
            "terminationGracePeriodSeconds",
        ),
        (
            "deploy/k8s/statefulset.yaml",
            "containerPort: 7879",
            "containerPort: 9100",
            "container ports",
        ),
        (
            "deploy/k8s/services.yaml",
            "targetPort: admin",
            "targetPort: metrics",
            "metrics",
        ),
        (
            "deploy/README.md",
            "patience-server --help",
            "patience-server --halp",
            "--halp",
        ),
    ];
    for (path, from, to, named) in plants {
        let mut planted = files.clone();
        let text = planted
            .get_mut(path)
            .unwrap_or_else(|| panic!("{path} is missing"));
        assert!(
            text.contains(from),
            "{path} no longer has {from:?}: update this plant"
        );
        *text = text.replacen(from, to, 1);
        let problems = check(&planted);
        assert!(
            problems.iter().any(|problem| problem.contains(named)),
            "planting {to:?} in {path} went unnoticed: {problems:#?}"
        );
    }
}
