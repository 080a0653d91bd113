//! The terminal UI (ratatui + crossterm).

use std::time::Duration;

use patience_shared::game::GameKind;

use crate::session::Session;

/// Practice in the terminal UI.
pub fn practice(game: GameKind, seed: u64, note: Option<String>) -> anyhow::Result<()> {
    let _ = (game, seed, note, Duration::ZERO);
    anyhow::bail!("the terminal UI is not built yet: use --plain")
}

/// Online play in the terminal UI.
pub async fn online(session: Session, notes: Vec<String>) -> anyhow::Result<()> {
    crate::plain::online(
        session,
        notes,
        crate::plain::stdin_lines(),
        std::io::stdout(),
    )
    .await
}
