//! `patience-server`: the authoritative race server. With no arguments it
//! listens for WebSockets and serves the web page on 127.0.0.1:7878, and
//! serves `/healthz` and `/metrics` on 127.0.0.1:7879. It prints both
//! addresses at start. `--help` lists the settings.

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
    // line, and the admin address from the line after it.
    println!("patience-server listening on ws://{}", server.address());
    if let Some(admin) = server.admin_address() {
        println!("admin: http://{admin}/healthz and http://{admin}/metrics");
    }
    println!("the web page: http://{}/", server.address());
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
