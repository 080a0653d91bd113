//! `patience-server`: the authoritative race server. With no arguments it
//! listens for WebSockets and serves the web page on 127.0.0.1:7878, and
//! serves `/healthz` and `/metrics` on 127.0.0.1:7879. It prints both
//! addresses at start. `--help` lists the settings.

use std::io::Write as _;

use anyhow::Context as _;
use clap::Parser as _;
use patience_server::config::Cli;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let config = Cli::parse().into_config()?;
    let server = patience_server::start(config)
        .await
        .context("starting the server")?;
    // Scripts and tests read the WebSocket address at the end of the first
    // line, and the admin address from the line after it. Written at once,
    // and a reader that has gone (a closed pipe) is no reason to stop:
    // `println!` would panic.
    let mut addresses = format!("patience-server listening on ws://{}\n", server.address());
    if let Some(admin) = server.admin_address() {
        addresses.push_str(&format!(
            "admin: http://{admin}/healthz and http://{admin}/metrics\n"
        ));
    }
    addresses.push_str(&format!("the web page: http://{}/\n", server.address()));
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(addresses.as_bytes());
    let _ = stdout.flush();
    drop(stdout);
    stop_signal().await;
    server.shutdown().await;
    Ok(())
}

/// Ctrl-C, or SIGTERM on Unix.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
