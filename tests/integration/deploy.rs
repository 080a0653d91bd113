//! The files of `deploy/` (and the root `.dockerignore`) against the server
//! they deploy: a deployment that passes a flag, a variable or a TOML key
//! the server does not know, or publishes, probes and scrapes a port it does
//! not listen on, fails here rather than on the first start in production.
//!
//! Each way the files start the server (the image, each node of each
//! compose file, the systemd unit with and without its example env file,
//! the StatefulSet of each Kubernetes topology with its ConfigMap and
//! Secret) becomes an [`Invocation`]: the flags, the environment and the
//! files it is given. [`effective_config`] runs it through the server's own
//! parser (`patience_server::config::Cli`, then `Cli::into_config`, TOML
//! file and validation included), and the ports, paths and timeouts of the
//! deployment are checked against the `Config` that comes out. Every YAML
//! and JSON file is parsed, Prometheus' scrape targets and Grafana's metric
//! names are checked against the compose services and the server's, and a
//! text scan catches any `PATIENCE_*` name or `patience-server --flag` that
//! no structured check reached (the README's commands, comments).
//!
//! The cluster topologies (`compose.cluster.yaml`, `k8s/cluster/`) are
//! checked as clusters: every node joins one Redis and one PostgreSQL that
//! the same file starts (and waits for, healthy) or names as managed, has
//! an id of its own, and gives clients a public URL that reaches it: the
//! host port compose publishes, or its pod's own name under the headless
//! Service that governs the StatefulSet.
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

// ----- deploy/compose*.yaml, Prometheus, Grafana -----

/// A value as compose reads it with no variable of the operator's set:
/// `${NAME:-default}` and `${NAME-default}` give their default, `${NAME}`
/// nothing, `$$` a `$`. The files' defaults are what is checked.
fn interpolate(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(after) = after.strip_prefix('$') {
            out.push('$');
            rest = after;
        } else if let Some(inner) = after.strip_prefix('{')
            && let Some(end) = inner.find('}')
        {
            let expression = &inner[..end];
            let default = expression
                .split_once(":-")
                .or_else(|| expression.split_once('-'))
                .map_or("", |(_, default)| default);
            out.push_str(default);
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A compose service's environment, as a map or as a list, interpolated.
fn compose_environment(value: &Yaml) -> Vec<(String, String)> {
    if let Some(map) = value.as_hash() {
        return map
            .iter()
            .filter_map(|(name, value)| {
                Some((
                    yaml_scalar(name)?,
                    interpolate(&yaml_scalar(value).unwrap_or_default()),
                ))
            })
            .collect();
    }
    yaml_strings(value)
        .into_iter()
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) => (name.to_string(), interpolate(value)),
            None => (pair, String::new()),
        })
        .collect()
}

/// A compose port (`"127.0.0.1:7879:7879"`, `"7880:7878"`, `"7878"`) as its
/// host port, if it names one, and its container port.
fn port_mapping(spec: &str) -> Option<(Option<u16>, u16)> {
    let spec = interpolate(spec);
    let mut parts = spec.trim_end_matches("/tcp").rsplit(':');
    let container = parts.next()?.parse().ok()?;
    let host = parts.next().and_then(|port| port.parse().ok());
    Some((host, container))
}

/// The words of an entrypoint that may run the server under `env -u NAME`
/// (which drops a variable of the image: neither compose nor Kubernetes can
/// unset one), from the program on; `environment` becomes the program's.
fn without_env_wrapper(
    words: &[String],
    environment: &mut Vec<(String, String)>,
) -> Result<Vec<String>, String> {
    let Some(first) = words.first() else {
        return Ok(Vec::new());
    };
    if first != "env" && !first.ends_with("/env") {
        return Ok(words.to_vec());
    }
    let mut rest = words[1..].iter();
    while let Some(word) = rest.next() {
        let unset = if word == "-u" || word == "--unset" {
            rest.next()
                .ok_or_else(|| format!("{first} {word} without a name"))?
                .as_str()
        } else if let Some(name) = word.strip_prefix("--unset=") {
            name
        } else if word.starts_with('-') {
            return Err(format!(
                "{first} {word}: an option this check does not read"
            ));
        } else if let Some((name, value)) = word.split_once('=') {
            environment.push((name.to_string(), value.to_string()));
            continue;
        } else {
            let mut program = vec![word.clone()];
            program.extend(rest.cloned());
            return Ok(program);
        };
        environment.retain(|(name, _)| name != unset);
    }
    Err(format!("{first} runs no program"))
}

/// How a container runs the image. A given entrypoint (compose's
/// `entrypoint`, Kubernetes' `command`) replaces the image's ENTRYPOINT and
/// drops its CMD; a given command (`command`, `args`) replaces the CMD, as
/// Docker and Kubernetes do.
fn container_invocation(
    source: &str,
    image: &Image,
    entrypoint: Option<Vec<String>>,
    cmd: Option<Vec<String>>,
    mut environment: Vec<(String, String)>,
    files: BTreeMap<String, String>,
) -> Result<Invocation, String> {
    let cmd = match (&entrypoint, cmd) {
        (_, Some(cmd)) => cmd,
        (Some(_), None) => Vec::new(),
        (None, None) => image.cmd.clone(),
    };
    let entrypoint = entrypoint.unwrap_or_else(|| image.entrypoint.clone());
    let program = without_env_wrapper(&entrypoint, &mut environment)
        .map_err(|error| format!("{source}: {error}"))?;
    let Some((first, args)) = program.split_first() else {
        return Err(format!("{source}: the entrypoint runs no program"));
    };
    if !first.ends_with("/patience-server") {
        return Err(format!(
            "{source}: the entrypoint runs {first}, not patience-server"
        ));
    }
    Ok(Invocation {
        source: source.to_string(),
        args: args.iter().chain(&cmd).cloned().collect(),
        environment,
        files,
    })
}

/// A YAML list of words, or `None` where the key is absent.
fn optional_words(value: &Yaml) -> Option<Vec<String>> {
    match value {
        Yaml::BadValue => None,
        value => Some(yaml_strings(value)),
    }
}

/// The parts of `scheme://user:password@host:port/path?query` the checks
/// compare (percent-escapes left as they are).
#[derive(Debug)]
struct UrlParts {
    scheme: String,
    user: String,
    password: String,
    host: String,
    port: Option<u16>,
    /// The path without its `/`: a PostgreSQL URL's database.
    path: String,
}

fn url_parts(url: &str) -> Option<UrlParts> {
    let (scheme, rest) = url.split_once("://")?;
    let (authority, path) = match rest.find(['/', '?']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    let (user_info, host_port) = authority.rsplit_once('@').unwrap_or(("", authority));
    let (user, password) = user_info.split_once(':').unwrap_or((user_info, ""));
    let (host, port) = match host_port.rsplit_once(':') {
        Some((host, port)) => (host, Some(port.parse().ok()?)),
        None => (host_port, None),
    };
    Some(UrlParts {
        scheme: scheme.to_string(),
        user: user.to_string(),
        password: password.to_string(),
        host: host.to_string(),
        port,
        path: path
            .trim_start_matches('/')
            .split('?')
            .next()
            .unwrap_or_default()
            .to_string(),
    })
}

/// The store URLs a node is given, by the setting that names each, and the
/// port each scheme means when the URL names none.
fn store_urls(config: &Config) -> Vec<(&'static str, String, u16)> {
    let mut urls = Vec::new();
    if let Some(url) = &config.redis_url {
        urls.push(("redis_url", url.clone(), 6379));
    }
    if let Some(url) = &config.database_url {
        urls.push(("database_url", url.expose().to_string(), 5432));
    }
    urls
}

/// A race server of a compose file, with what its parser made of it.
struct ComposeNode {
    name: String,
    config: Config,
}

fn check_compose(files: &Files, parser: &ServerParser, image: &Image, problems: &mut Problems) {
    let composes: Vec<&String> = files
        .keys()
        .filter(|path| path.starts_with("deploy/compose") && path.ends_with(".yaml"))
        .collect();
    let mut scrape_configs = BTreeSet::new();
    for path in composes {
        check_compose_file(files, path, parser, image, &mut scrape_configs, problems);
    }
    for path in files
        .keys()
        .filter(|path| path.starts_with("deploy/prometheus/"))
    {
        problems.check(scrape_configs.contains(path), || {
            format!("{path}: no compose file's Prometheus reads it")
        });
    }
}

fn check_compose_file(
    files: &Files,
    path: &str,
    parser: &ServerParser,
    image: &Image,
    scrape_configs: &mut BTreeSet<String>,
    problems: &mut Problems,
) {
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
    let mut nodes = Vec::new();
    for name in &service_names {
        let service = &services[name.as_str()];
        let runs_server = service["image"]
            .as_str()
            .is_some_and(|image| image.starts_with("patience-server"))
            || !service["build"].is_badvalue();
        if runs_server
            && let Some(node) =
                check_compose_node(path, compose, &service_names, name, parser, image, problems)
        {
            nodes.push(node);
        }
    }
    problems.check(!nodes.is_empty(), || {
        format!("{path}: no service runs patience-server")
    });
    check_compose_cluster(path, &nodes, problems);
    // Host files mounted into the other services exist beside the file.
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
    let prometheus_config = yaml_strings(&services["prometheus"]["volumes"])
        .into_iter()
        .find_map(|mount| {
            let mut parts = mount.split(':');
            let (host, target) = (parts.next()?, parts.next()?);
            (target == "/etc/prometheus/prometheus.yml")
                .then(|| format!("deploy/{}", host.trim_start_matches("./")))
        });
    let Some(prometheus_config) = prometheus_config else {
        return problems.push(format!(
            "{path}: no prometheus service mounts /etc/prometheus/prometheus.yml"
        ));
    };
    let targets: Vec<(String, String)> = nodes
        .iter()
        .filter_map(|node| {
            let admin = node.config.admin_listen?;
            Some((node.name.clone(), format!("{}:{}", node.name, admin.port())))
        })
        .collect();
    check_prometheus(
        files,
        &prometheus_config,
        &service_names,
        &targets,
        problems,
    );
    scrape_configs.insert(prometheus_config);
    check_grafana(files, path, services, &service_names, problems);
}

/// One race server of a compose file: its settings through the server's
/// parser, what it publishes, keeps and waits for.
fn check_compose_node(
    path: &str,
    compose: &Yaml,
    service_names: &BTreeSet<String>,
    name: &str,
    parser: &ServerParser,
    image: &Image,
    problems: &mut Problems,
) -> Option<ComposeNode> {
    let services = &compose["services"];
    let service = &services[name];
    problems.check(
        service["build"]["dockerfile"].as_str() == Some("deploy/Dockerfile")
            && service["build"]["context"].as_str() == Some(".."),
        || format!("{path}: {name} is not built from deploy/Dockerfile in the repository root"),
    );
    let mut environment = image.environment.clone();
    environment.extend(compose_environment(&service["environment"]));
    let source = format!("{path}: {name}");
    let invocation = container_invocation(
        &source,
        image,
        optional_words(&service["entrypoint"]),
        optional_words(&service["command"]),
        environment,
        BTreeMap::new(),
    );
    let config = match invocation.and_then(|invocation| effective_config(parser, &invocation)) {
        Ok(config) => config,
        Err(error) => {
            problems.push(error);
            return None;
        }
    };
    let Some(admin) = config.admin_listen else {
        problems.push(format!("{source}: the server serves no admin port"));
        return None;
    };
    let published: Vec<(Option<u16>, u16)> = yaml_strings(&service["ports"])
        .iter()
        .filter_map(|spec| port_mapping(spec))
        .collect();
    let container_ports: BTreeSet<u16> = published.iter().map(|(_, port)| *port).collect();
    let listened = BTreeSet::from([config.listen.port(), admin.port()]);
    problems.check(container_ports == listened, || {
        format!(
            "{source} publishes container ports {container_ports:?}, the server listens on {listened:?}"
        )
    });
    if config.database_url.is_none() {
        let data = config
            .data_dir
            .as_ref()
            .map(|dir| dir.to_string_lossy().into_owned());
        let declared: BTreeSet<String> = compose["volumes"]
            .as_hash()
            .map(|map| map.keys().filter_map(yaml_scalar).collect())
            .unwrap_or_default();
        let data_volume = yaml_strings(&service["volumes"]).into_iter().find(|mount| {
            let mut parts = mount.split(':');
            let (volume, target) = (parts.next().unwrap_or_default(), parts.next());
            target == data.as_deref() && declared.contains(volume)
        });
        problems.check(data_volume.is_some(), || {
            format!("{source}: no named volume is mounted at the data directory {data:?}")
        });
    }
    let stop = service["stop_grace_period"].as_str().and_then(duration_ms);
    problems.check(
        stop.is_some_and(|stop| stop > config.shutdown_grace_ms),
        || {
            format!(
                "{source}: stop_grace_period {stop:?} ms does not cover the shutdown grace of {} ms",
                config.shutdown_grace_ms
            )
        },
    );
    // A redirected client reaches the node at its public URL: from the
    // host, through the port that publishes its WebSocket port.
    if config.redis_url.is_some() {
        let public_url = config.public_url.clone().unwrap_or_default();
        let public_port = url_parts(&public_url).and_then(|parts| parts.port);
        let websocket_host_port = published
            .iter()
            .find(|(_, container)| *container == config.listen.port())
            .and_then(|(host, _)| *host);
        problems.check(
            public_port.is_some() && public_port == websocket_host_port,
            || {
                format!(
                    "{source}: public_url {public_url} is not the host port {websocket_host_port:?} that publishes its WebSocket port"
                )
            },
        );
    }
    // The store and Redis it names are services it waits for, healthy.
    for (setting, url, default_port) in store_urls(&config) {
        let Some(parts) = url_parts(&url) else {
            problems.push(format!("{source}: {setting} is not a URL this check reads"));
            continue;
        };
        let host = parts.host.as_str();
        if !service_names.contains(host) {
            problems.push(format!(
                "{source}: {setting} names {host}, which is no compose service"
            ));
            continue;
        }
        let dependency = &services[host];
        problems.check(!dependency["healthcheck"]["test"].is_badvalue(), || {
            format!("{path}: {host} has no healthcheck for {name} to wait on")
        });
        problems.check(
            service["depends_on"][host]["condition"].as_str() == Some("service_healthy"),
            || format!("{source} does not wait for {host} (depends_on condition: service_healthy)"),
        );
        problems.check(parts.port.unwrap_or(default_port) == default_port, || {
            format!(
                "{source}: {setting} asks {host} on port {:?}, not {default_port}",
                parts.port
            )
        });
        if setting == "database_url" {
            let database_environment: BTreeMap<String, String> =
                compose_environment(&dependency["environment"])
                    .into_iter()
                    .collect();
            for (variable, given) in [
                ("POSTGRES_USER", &parts.user),
                ("POSTGRES_PASSWORD", &parts.password),
                ("POSTGRES_DB", &parts.path),
            ] {
                if let Some(wanted) = database_environment.get(variable) {
                    problems.check(given == wanted, || {
                        format!("{source}: {setting} gives {given:?} where {host}'s {variable} is {wanted:?}")
                    });
                }
            }
            problems.check(parts.scheme.starts_with("postgres"), || {
                format!("{source}: {setting} is not a postgres:// URL")
            });
        }
    }
    Some(ComposeNode {
        name: name.to_string(),
        config,
    })
}

/// The nodes of one compose file together: more than one is a cluster,
/// which shares one PostgreSQL and one Redis and tells its nodes apart.
fn check_compose_cluster(path: &str, nodes: &[ComposeNode], problems: &mut Problems) {
    if nodes.len() < 2 {
        return;
    }
    for node in nodes {
        let name = &node.name;
        problems.check(node.config.redis_url.is_some(), || {
            format!("{path}: {name} is one of several nodes but joins no cluster (no Redis URL)")
        });
        problems.check(node.config.database_url.is_some(), || {
            format!(
                "{path}: {name} keeps its data in its own SQLite file; the nodes of a cluster share one PostgreSQL"
            )
        });
    }
    let shared = |value: &dyn Fn(&Config) -> Option<String>| {
        nodes
            .iter()
            .map(|node| value(&node.config))
            .collect::<BTreeSet<_>>()
    };
    let databases = shared(&|config| {
        config
            .database_url
            .as_ref()
            .map(|url| url.expose().to_string())
    });
    let redises = shared(&|config| config.redis_url.clone());
    problems.check(databases.len() == 1 && redises.len() == 1, || {
        format!("{path}: the nodes do not share one database and one Redis")
    });
    for (setting, values) in [
        (
            "node_id",
            nodes
                .iter()
                .map(|node| node.config.node_id.clone())
                .collect::<Vec<_>>(),
        ),
        (
            "public_url",
            nodes
                .iter()
                .map(|node| node.config.public_url.clone())
                .collect(),
        ),
    ] {
        let distinct: BTreeSet<&Option<String>> = values.iter().collect();
        problems.check(
            distinct.len() == values.len() && !distinct.contains(&None),
            || format!("{path}: each node needs a {setting} of its own: {values:?}"),
        );
    }
}

/// The scrape config a compose file's Prometheus reads: every target is a
/// service of that file, and each node's admin port is scraped on
/// `/metrics` (`targets` holds each node and its `service:port`).
fn check_prometheus(
    files: &Files,
    path: &str,
    services: &BTreeSet<String>,
    targets: &[(String, String)],
    problems: &mut Problems,
) {
    let documents = yaml_documents(files, path, problems);
    let Some(prometheus) = documents.first() else {
        return;
    };
    let mut scraped = BTreeSet::new();
    for job in prometheus["scrape_configs"].as_vec().into_iter().flatten() {
        let metrics_path = job["metrics_path"].as_str().unwrap_or("/metrics");
        for static_config in job["static_configs"].as_vec().into_iter().flatten() {
            for target in yaml_strings(&static_config["targets"]) {
                let host = target.split(':').next().unwrap_or_default();
                problems.check(services.contains(host), || {
                    format!("{path}: target {target} is no compose service")
                });
                if let Some((_, admin)) = targets.iter().find(|(node, _)| node == host) {
                    problems.check(&target == admin, || {
                        format!("{path}: target {target} is not {host}'s admin port ({admin})")
                    });
                }
                if metrics_path == "/metrics" {
                    scraped.insert(target);
                }
            }
        }
    }
    for (_, expected) in targets {
        problems.check(scraped.contains(expected), || {
            format!("{path}: nothing scrapes {expected}/metrics")
        });
    }
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

/// The Prometheus data sources Grafana is given, by uid, and their URLs.
fn grafana_datasources(files: &Files, problems: &mut Problems) -> Vec<(String, String)> {
    let path = "deploy/grafana/provisioning/datasources/prometheus.yaml";
    yaml_documents(files, path, problems)
        .iter()
        .flat_map(|doc| doc["datasources"].as_vec().cloned().unwrap_or_default())
        .map(|source| {
            (
                source["uid"].as_str().unwrap_or_default().to_string(),
                source["url"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Grafana as a compose file runs it: its data source is a service of the
/// file, and it mounts the dashboards where their provider looks.
fn check_grafana(
    files: &Files,
    compose: &str,
    services: &Yaml,
    service_names: &BTreeSet<String>,
    problems: &mut Problems,
) {
    let datasources = "deploy/grafana/provisioning/datasources/prometheus.yaml";
    for (_, url) in grafana_datasources(files, problems) {
        let host = url
            .trim_start_matches("http://")
            .split(':')
            .next()
            .unwrap_or_default();
        problems.check(service_names.contains(host), || {
            format!("{datasources}: {url} is no service of {compose}")
        });
    }
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
                        "{providers}: {path} is not where {compose} mounts deploy/grafana/dashboards"
                    )
                },
            );
        }
    }
}

/// The dashboards read provisioned data sources and series `/metrics`
/// shows, and show the ones an operator looks at first.
fn check_dashboards(files: &Files, problems: &mut Problems) {
    let uids: BTreeSet<String> = grafana_datasources(files, problems)
        .into_iter()
        .map(|(uid, _)| uid)
        .collect();
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
        "patience_cluster_leases_held",
        "patience_cluster_redirects_total",
        "patience_cluster_failovers_total",
        "patience_cluster_redis_errors_total",
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
    problems.check(
        !exec.split_whitespace().any(|word| word.starts_with("--data")),
        || format!("{path}: ExecStart fixes --data, which no env file can turn into a database URL: {exec}"),
    );
    problems.check(
        configs.get(1).is_some_and(|config| {
            config.database_url.is_some()
                && config.redis_url.is_some()
                && config.public_url.is_some()
                && config.data_dir.is_none()
        }),
        || format!("{path}: {example}'s examples do not make the unit a cluster node"),
    );
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

// ----- deploy/k8s, deploy/k8s/cluster -----

/// The namespace the downward API is taken to give, for the checks.
const SAMPLE_NAMESPACE: &str = "patience";

/// The container port `port` names (a name or a number) among `ports`.
fn resolve_port(port: &Yaml, ports: &BTreeMap<String, u16>) -> Option<u16> {
    match port {
        Yaml::Integer(number) => u16::try_from(*number).ok(),
        Yaml::String(name) => ports.get(name).copied(),
        _ => None,
    }
}

/// A container's named ports.
fn container_ports(container: &Yaml) -> BTreeMap<String, u16> {
    container["ports"]
        .as_vec()
        .into_iter()
        .flatten()
        .filter_map(|port| {
            let number = u16::try_from(port["containerPort"].as_i64()?).ok()?;
            Some((port["name"].as_str()?.to_string(), number))
        })
        .collect()
}

/// Whether every pair of `selector` is among `labels`.
fn selects(selector: &Yaml, labels: &Yaml) -> bool {
    selector.as_hash().is_some_and(|pairs| {
        !pairs.is_empty()
            && pairs
                .iter()
                .all(|(key, value)| &labels[key.as_str().unwrap_or_default()] == value)
    })
}

/// `$(NAME)` as Kubernetes expands it in an env value: by a variable set
/// earlier in the list, else left as it is; `$$` is a `$`.
fn expand_references(value: &str, earlier: &[(String, String)]) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(after) = after.strip_prefix('$') {
            out.push('$');
            rest = after;
        } else if let Some(inner) = after.strip_prefix('(')
            && let Some(end) = inner.find(')')
            && let Some((_, found)) = earlier.iter().rev().find(|(name, _)| name == &inner[..end])
        {
            out.push_str(found);
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A container's environment as its pod `pod_name` sees it: literal
/// values, the downward API's name and namespace, and keys of the
/// directory's Secrets and ConfigMaps, each expanded as Kubernetes does.
fn pod_environment(
    path: &str,
    pod_name: &str,
    container: &Yaml,
    objects: &[(String, Yaml)],
    problems: &mut Problems,
) -> Vec<(String, String)> {
    let mut environment: Vec<(String, String)> = Vec::new();
    for variable in container["env"].as_vec().into_iter().flatten() {
        let name = variable["name"].as_str().unwrap_or_default().to_string();
        let from = &variable["valueFrom"];
        let value = if let Some(value) = yaml_scalar(&variable["value"]) {
            Some(expand_references(&value, &environment))
        } else if let Some(field) = from["fieldRef"]["fieldPath"].as_str() {
            match field {
                "metadata.name" => Some(pod_name.to_string()),
                "metadata.namespace" => Some(SAMPLE_NAMESPACE.to_string()),
                _ => None,
            }
        } else {
            [
                ("secretKeyRef", "Secret", "stringData"),
                ("configMapKeyRef", "ConfigMap", "data"),
            ]
            .into_iter()
            .find(|(reference, _, _)| !from[*reference].is_badvalue())
            .and_then(|(reference, kind, data)| {
                let wanted = &from[reference];
                objects.iter().find_map(|(_, object)| {
                    (object["kind"].as_str() == Some(kind)
                        && object["metadata"]["name"] == wanted["name"])
                        .then(|| yaml_scalar(&object[data][wanted["key"].as_str()?]))
                        .flatten()
                })
            })
        };
        match value {
            Some(value) => environment.push((name, value)),
            None => problems.push(format!(
                "{path}: env {name} has no value this check can read (a literal, the pod's name or namespace, or a key of a Secret's stringData or a ConfigMap of the same directory)"
            )),
        }
    }
    environment
}

fn check_kubernetes(files: &Files, parser: &ServerParser, image: &Image, problems: &mut Problems) {
    let manifests: Vec<&String> = files
        .keys()
        .filter(|path| path.starts_with("deploy/k8s/") && path.ends_with(".yaml"))
        .collect();
    // Each directory with a kustomization is one topology: `kubectl apply -k`
    // applies what it lists.
    let directories: BTreeSet<&str> = manifests
        .iter()
        .filter_map(|path| path.strip_suffix("/kustomization.yaml"))
        .collect();
    for path in &manifests {
        let directory = path.rsplit_once('/').map_or("", |(directory, _)| directory);
        problems.check(directories.contains(directory), || {
            format!("{path}: no kustomization.yaml beside it")
        });
    }
    for directory in directories {
        check_kubernetes_topology(files, directory, parser, image, problems);
    }
}

fn check_kubernetes_topology(
    files: &Files,
    directory: &str,
    parser: &ServerParser,
    image: &Image,
    problems: &mut Problems,
) {
    let manifests: Vec<&String> = files
        .keys()
        .filter(|path| {
            path.strip_prefix(directory)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|name| !name.contains('/') && name.ends_with(".yaml"))
        })
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
    let kustomization = format!("{directory}/kustomization.yaml");
    let listed: BTreeSet<String> = kind("Kustomization")
        .iter()
        .flat_map(|(_, object)| yaml_strings(&object["resources"]))
        .map(|resource| format!("{directory}/{resource}"))
        .collect();
    for path in &manifests {
        problems.check(
            **path == kustomization || listed.contains(path.as_str()),
            || format!("{kustomization} does not list {path}"),
        );
    }
    for resource in &listed {
        problems.check(files.contains_key(resource), || {
            format!("{kustomization} lists {resource}, which is missing")
        });
    }
    let workloads: Vec<&(String, Yaml)> = objects
        .iter()
        .filter(|(_, object)| matches!(object["kind"].as_str(), Some("StatefulSet" | "Deployment")))
        .collect();
    let servers: Vec<&&(String, Yaml)> = workloads
        .iter()
        .filter(|(_, workload)| {
            workload["spec"]["template"]["spec"]["containers"]
                .as_vec()
                .into_iter()
                .flatten()
                .any(|container| {
                    container["image"]
                        .as_str()
                        .is_some_and(|image| image.starts_with("patience-server"))
                })
        })
        .collect();
    let [(path, statefulset)] = servers.as_slice() else {
        return problems.push(format!(
            "{directory}: {} workloads run the patience-server image, not one",
            servers.len()
        ));
    };
    problems.check(statefulset["kind"].as_str() == Some("StatefulSet"), || {
        format!("{path}: the nodes are no StatefulSet: each needs a stable name")
    });
    let workload_name = statefulset["metadata"]["name"].as_str().unwrap_or("?");
    let first_pod = format!("{workload_name}-0");
    let spec = &statefulset["spec"];
    let pod = &spec["template"]["spec"];
    let containers = pod["containers"].as_vec().cloned().unwrap_or_default();
    let Some(container) = containers.iter().find(|container| {
        container["image"]
            .as_str()
            .is_some_and(|image| image.starts_with("patience-server"))
    }) else {
        return;
    };
    let mut environment = image.environment.clone();
    environment.extend(pod_environment(
        path, &first_pod, container, &objects, problems,
    ));
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
    let invocation = container_invocation(
        &format!("{path} with its ConfigMap"),
        image,
        optional_words(&container["command"]),
        optional_words(&container["args"]),
        environment,
        mounted_files,
    );
    let config = match invocation.and_then(|invocation| effective_config(parser, &invocation)) {
        Ok(config) => config,
        Err(error) => return problems.push(error),
    };
    let Some(admin) = config.admin_listen else {
        return problems.push(format!("{path}: the server serves no admin port"));
    };
    let cluster = config.redis_url.is_some() && config.database_url.is_some();
    let replicas = spec["replicas"].as_i64().unwrap_or(1);
    problems.check(replicas == 1 || cluster, || {
        format!(
            "{path}: {replicas} replicas, but SQLite takes one writer: replicas must be 1 without PostgreSQL and Redis"
        )
    });
    let ports = container_ports(container);
    let wanted = BTreeMap::from([
        ("admin".to_string(), admin.port()),
        ("ws".to_string(), config.listen.port()),
    ]);
    problems.check(ports == wanted, || {
        format!("{path}: container ports {ports:?}, the server listens on {wanted:?}")
    });
    // Liveness asks whether the process is alive, readiness whether it can
    // serve: a node without its Redis or its PostgreSQL is not ready, and
    // restarting it would not bring them back.
    for (probe, wanted) in [
        ("readinessProbe", "/healthz"),
        ("livenessProbe", "/livez"),
        ("startupProbe", "/livez"),
    ] {
        let get = &container[probe]["httpGet"];
        if probe == "startupProbe" && container[probe].is_badvalue() {
            continue;
        }
        problems.check(
            get["path"].as_str() == Some(wanted)
                && resolve_port(&get["port"], &ports) == Some(admin.port()),
            || {
                format!(
                    "{path}: {probe} does not ask {wanted} on the admin port {}",
                    admin.port()
                )
            },
        );
    }
    if config.database_url.is_none() {
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
    }
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
    // Every Service selects pods of a workload here and reaches their ports.
    let services = kind("Service");
    let server_labels = &spec["template"]["metadata"]["labels"];
    for (service_path, service) in &services {
        let name = service["metadata"]["name"].as_str().unwrap_or("?");
        let selector = &service["spec"]["selector"];
        let selected: Vec<&&(String, Yaml)> = workloads
            .iter()
            .filter(|(_, workload)| {
                selects(
                    selector,
                    &workload["spec"]["template"]["metadata"]["labels"],
                )
            })
            .collect();
        problems.check(!selected.is_empty(), || {
            format!("{service_path}: Service {name} selects {selector:?}, which no pods of {directory} have")
        });
        for (_, workload) in &selected {
            let workload_ports: BTreeMap<String, u16> =
                workload["spec"]["template"]["spec"]["containers"]
                    .as_vec()
                    .into_iter()
                    .flatten()
                    .flat_map(container_ports)
                    .collect();
            for port in service["spec"]["ports"].as_vec().into_iter().flatten() {
                problems.check(
                    resolve_port(&port["targetPort"], &workload_ports).is_some(),
                    || {
                        format!(
                            "{service_path}: Service {name} targets {:?}, which the container lacks",
                            port["targetPort"]
                        )
                    },
                );
            }
        }
        if selects(selector, server_labels)
            && let Some(scrape_port) =
                service["metadata"]["annotations"]["prometheus.io/port"].as_str()
        {
            problems.check(scrape_port == admin.port().to_string(), || {
                format!("{service_path}: Service {name} asks Prometheus to scrape {scrape_port}")
            });
        }
    }
    let headless: BTreeSet<&str> = services
        .iter()
        .filter(|(_, service)| service["spec"]["clusterIP"].as_str() == Some("None"))
        .filter_map(|(_, service)| service["metadata"]["name"].as_str())
        .collect();
    for (statefulset_path, workload) in kind("StatefulSet") {
        let governing = workload["spec"]["serviceName"].as_str().unwrap_or_default();
        problems.check(headless.contains(governing), || {
            format!("{statefulset_path}: serviceName {governing:?} is no headless Service")
        });
    }
    for (budget_path, budget) in kind("PodDisruptionBudget") {
        problems.check(
            selects(&budget["spec"]["selector"]["matchLabels"], server_labels),
            || format!("{budget_path}: the PodDisruptionBudget selects no race node"),
        );
    }
    if config.redis_url.is_some() {
        check_kubernetes_cluster(path, directory, &config, &objects, &first_pod, problems);
    }
}

/// A cluster's nodes: each is reached at its own pod's name, and the
/// store and Redis they name are Services here (or managed ones, by a
/// name that is not a bare Service name).
fn check_kubernetes_cluster(
    path: &str,
    directory: &str,
    config: &Config,
    objects: &[(String, Yaml)],
    first_pod: &str,
    problems: &mut Problems,
) {
    let statefulset = objects
        .iter()
        .find(|(object_path, object)| {
            object_path == path && object["kind"].as_str() == Some("StatefulSet")
        })
        .map(|(_, object)| object);
    let governing = statefulset
        .and_then(|object| object["spec"]["serviceName"].as_str())
        .unwrap_or_default();
    let service = |name: &str| {
        objects.iter().find_map(|(_, object)| {
            (object["kind"].as_str() == Some("Service")
                && object["metadata"]["name"].as_str() == Some(name))
            .then_some(object)
        })
    };
    let public_url = config.public_url.clone().unwrap_or_default();
    let public = url_parts(&public_url);
    let own_name = format!("{first_pod}.{governing}.{SAMPLE_NAMESPACE}.svc");
    // The port in the URL is a port of the governing Service that reaches
    // the WebSocket port (a headless Service's DNS names give the pod's
    // own address, so they are the same number).
    let reaches_websocket = service(governing).is_some_and(|governing| {
        governing["spec"]["ports"]
            .as_vec()
            .into_iter()
            .flatten()
            .any(|port| {
                port["port"].as_i64() == public.as_ref().and_then(|url| url.port).map(i64::from)
                    && port["port"].as_i64() == Some(i64::from(config.listen.port()))
            })
    });
    problems.check(
        public.as_ref().is_some_and(|url| {
            url.host == own_name || url.host.starts_with(&format!("{own_name}."))
        }) && reaches_websocket,
        || {
            format!(
                "{path}: public_url {public_url} is not the pod's own name ({own_name}…) on a port of {governing} that reaches its WebSocket port {}",
                config.listen.port()
            )
        },
    );
    problems.check(
        service(governing).is_some_and(|governing| {
            governing["spec"]["publishNotReadyAddresses"].as_bool() == Some(true)
        }),
        || format!("{path}: {governing} does not publish pods that are not ready: a node whose Redis blips keeps rooms whose players must reach it"),
    );
    problems.check(
        config
            .node_id
            .as_deref()
            .is_none_or(|node_id| node_id.contains(first_pod)),
        || {
            format!(
                "{path}: node_id {:?} is the same for every pod",
                config.node_id
            )
        },
    );
    for (setting, url, default_port) in store_urls(config) {
        let Some(parts) = url_parts(&url) else {
            problems.push(format!("{path}: {setting} is not a URL this check reads"));
            continue;
        };
        if parts.host.contains('.') {
            continue; // A managed one, by its own name.
        }
        let port = parts.port.unwrap_or(default_port);
        let Some(found) = service(&parts.host) else {
            problems.push(format!(
                "{path}: {setting} names {}, which is no Service of {directory}",
                parts.host
            ));
            continue;
        };
        problems.check(
            found["spec"]["ports"]
                .as_vec()
                .into_iter()
                .flatten()
                .any(|service_port| service_port["port"].as_i64() == Some(i64::from(port))),
            || {
                format!(
                    "{path}: {setting} asks {} on port {port}, which it does not serve",
                    parts.host
                )
            },
        );
    }
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
    check_dashboards(files, &mut problems);
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
        "deploy/compose.cluster.yaml",
        "deploy/prometheus/prometheus.cluster.yml",
        "deploy/k8s/cluster/kustomization.yaml",
        "deploy/k8s/cluster/statefulset.yaml",
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
            "ExecStart=/usr/local/bin/patience-server",
            "ExecStart=/usr/local/bin/patience-server --lisen 0.0.0.0:1",
            "lisen",
        ),
        (
            "deploy/systemd/patience-server.service",
            "ExecStart=/usr/local/bin/patience-server",
            "ExecStart=/usr/local/bin/patience-server --data /var/lib/patience",
            "--data",
        ),
        (
            "deploy/systemd/patience-server.env",
            "# PATIENCE_DATA=\n",
            "# PATIENCE_DATA=/srv/patience\n",
            "cluster node",
        ),
        (
            "deploy/k8s/cluster/statefulset.yaml",
            "path: /livez",
            "path: /healthz",
            "does not ask /livez",
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
        (
            "deploy/k8s/statefulset.yaml",
            "replicas: 1",
            "replicas: 2",
            "SQLite takes one writer",
        ),
        // The cluster topology in compose.
        (
            "deploy/compose.cluster.yaml",
            "PATIENCE_REDIS_URL: redis://redis:6379",
            "PATIENCE_REDIS_ULR: redis://redis:6379",
            "PATIENCE_REDIS_ULR",
        ),
        (
            "deploy/compose.cluster.yaml",
            "\"-u\", \"PATIENCE_DATA\", ",
            "",
            "choose one",
        ),
        (
            "deploy/compose.cluster.yaml",
            "PATIENCE_NODE_ID: node-b",
            "PATIENCE_NODE_ID: node-a",
            "node_id of its own",
        ),
        (
            "deploy/compose.cluster.yaml",
            "${PUBLIC_HOST:-localhost}:7880",
            "${PUBLIC_HOST:-localhost}:7878",
            "publishes its WebSocket port",
        ),
        (
            "deploy/compose.cluster.yaml",
            "postgres://patience:patience@postgres",
            "postgres://patience:secret@postgres",
            "POSTGRES_PASSWORD",
        ),
        (
            "deploy/compose.cluster.yaml",
            "condition: service_healthy",
            "condition: service_started",
            "service_healthy",
        ),
        (
            "deploy/compose.cluster.yaml",
            "redis://redis:6379",
            "redis://cache:6379",
            "no compose service",
        ),
        (
            "deploy/compose.cluster.yaml",
            "PATIENCE_REDIS_URL: redis://redis:6379\n",
            "PATIENCE_REDIS_URL: redis://redis:6379/1\n",
            "do not share one database and one Redis",
        ),
        (
            "deploy/prometheus/prometheus.cluster.yml",
            "\"node-b:7879\"",
            "\"node-b:7878\"",
            "node-b's admin port",
        ),
        (
            "deploy/prometheus/prometheus.cluster.yml",
            ", \"node-b:7879\"",
            "",
            "nothing scrapes node-b:7879",
        ),
        // The cluster topology on Kubernetes.
        (
            "deploy/k8s/cluster/statefulset.yaml",
            "ws://$(POD_NAME).patience-nodes.",
            "ws://patience.",
            "pod's own name",
        ),
        (
            "deploy/k8s/cluster/statefulset.yaml",
            "value: $(POD_NAME)",
            "value: node",
            "same for every pod",
        ),
        (
            "deploy/k8s/cluster/statefulset.yaml",
            "key: redis-url",
            "key: redis_url",
            "env PATIENCE_REDIS_URL",
        ),
        (
            "deploy/k8s/cluster/store.yaml",
            "patience-postgres:5432",
            "patience-postgres:5433",
            "5433",
        ),
        (
            "deploy/k8s/cluster/store.yaml",
            "redis://patience-redis:6379",
            "redis://redis:6379",
            "no Service of deploy/k8s/cluster",
        ),
        (
            "deploy/k8s/cluster/services.yaml",
            "publishNotReadyAddresses: true",
            "publishNotReadyAddresses: false",
            "not ready",
        ),
        (
            "deploy/k8s/cluster/kustomization.yaml",
            "  - redis.yaml\n",
            "",
            "does not list deploy/k8s/cluster/redis.yaml",
        ),
        (
            "deploy/k8s/cluster/redis.yaml",
            "targetPort: redis",
            "targetPort: valkey",
            "valkey",
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

#[test]
fn deploy_readers_expand_values_as_compose_and_kubernetes_do() {
    for (compose_value, expected) in [
        ("ws://${PUBLIC_HOST:-localhost}:7878", "ws://localhost:7878"),
        ("${A-b}/${C}", "b/"),
        ("$$HOME and $", "$HOME and $"),
    ] {
        assert_eq!(interpolate(compose_value), expected, "{compose_value}");
    }
    let earlier = [("POD_NAME".to_string(), "patience-1".to_string())];
    for (kubernetes_value, expected) in [
        ("ws://$(POD_NAME).nodes:7878", "ws://patience-1.nodes:7878"),
        ("$(UNSET) $$(POD_NAME)", "$(UNSET) $(POD_NAME)"),
    ] {
        assert_eq!(
            expand_references(kubernetes_value, &earlier),
            expected,
            "{kubernetes_value}"
        );
    }
    let words = |text: &str| {
        text.split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let mut environment = vec![("PATIENCE_DATA".to_string(), "/d".to_string())];
    assert_eq!(
        without_env_wrapper(
            &words("/usr/bin/env -u PATIENCE_DATA X=1 /bin/patience-server --a"),
            &mut environment
        ),
        Ok(words("/bin/patience-server --a"))
    );
    assert_eq!(environment, vec![("X".to_string(), "1".to_string())]);
    assert!(without_env_wrapper(&words("env -i /bin/patience-server"), &mut environment).is_err());
    let url = url_parts("postgres://ada:s3cret@db:5433/races?sslmode=disable").expect("a URL");
    assert_eq!(
        (
            url.scheme.as_str(),
            url.user.as_str(),
            url.password.as_str(),
            url.host.as_str(),
            url.port,
            url.path.as_str()
        ),
        ("postgres", "ada", "s3cret", "db", Some(5433), "races")
    );
    let url = url_parts("redis://cache").expect("a URL");
    assert_eq!((url.host.as_str(), url.port), ("cache", None));
}
