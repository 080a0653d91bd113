//! One board drawn for the terminal: piles as columns, suit symbols in red
//! and black, face-down cards as backs, long piles compressed to fit.
//!
//! [`board_lines`] turns a [`View`] into lines of styled text for a given
//! size, with the cursor's card and the picked card highlighted. The layout
//! per game: Three Blind Mice shows its cells and finished runs above the
//! ten piles; Indian and Midshipman the stock, the waste and the eight
//! foundations above the piles; Virginia Reel its three rows of eight, then
//! the reserve piles, the stock and the discarded Aces.

use patience_shared::card::Card;
use patience_shared::game::GameKind;
use patience_shared::rules::{View, Zone, ZoneView};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

/// A card, or a place, under the cursor: a zone and a depth from its top.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spot {
    /// The zone.
    pub zone: Zone,
    /// 0 is the top card.
    pub depth: usize,
}

/// What to highlight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// Where the cursor is.
    pub cursor: Option<Spot>,
    /// The card picked up to move.
    pub picked: Option<Spot>,
    /// A card just turned up, shown bold and underlined.
    pub fresh: Option<Card>,
    /// The hint: the card to move and the zone it goes to, both shown on
    /// cyan and underlined.
    pub hint: Option<(Spot, Option<Zone>)>,
    /// The spot a folded pile unfolds to show (the cursor's): a long pile
    /// drawn as `⋮` never hides the card the cursor is on.
    pub unfold: Option<Spot>,
}

/// The back of a face-down card.
const BACK: &str = "▒▒▒";

/// A card as people write it: `10♥`, `A♠`.
pub fn card_label(card: Card) -> String {
    let rank = match card.rank() {
        1 => "A".to_string(),
        10 => "10".to_string(),
        11 => "J".to_string(),
        12 => "Q".to_string(),
        13 => "K".to_string(),
        rank => rank.to_string(),
    };
    let suit = match card.suit().letter() {
        'c' => '♣',
        'd' => '♦',
        'h' => '♥',
        _ => '♠',
    };
    format!("{rank}{suit}")
}

/// Cards look like cards: a white face, red or black ink, readable on dark
/// and light terminals alike.
fn card_style(card: Card) -> Style {
    let style = Style::default().bg(Color::White);
    if card.is_red() {
        style.fg(Color::Red)
    } else {
        style.fg(Color::Black)
    }
}

fn back_style() -> Style {
    Style::default().fg(Color::Blue)
}

fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

/// A card's style, bold and underlined when it was just turned up.
fn fresh_style(card: Card, marks: Marks) -> Style {
    if marks.fresh == Some(card) {
        card_style(card).add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    } else {
        card_style(card)
    }
}

/// The style of a spot: reversed under the cursor, yellow when picked.
fn marked(style: Style, marks: Marks, zone: Zone, depth: usize) -> Style {
    let spot = Some(Spot { zone, depth });
    let hinted = marks
        .hint
        .is_some_and(|(from, to)| Some(from) == spot || (depth == 0 && to == Some(zone)));
    let style = if hinted {
        style
            .bg(Color::Cyan)
            .fg(Color::Black)
            .add_modifier(Modifier::UNDERLINED)
    } else {
        style
    };
    if marks.picked == spot {
        style
            .bg(Color::Yellow)
            .fg(Color::Black)
            .add_modifier(Modifier::BOLD)
    } else if marks.cursor == spot {
        style.add_modifier(Modifier::REVERSED)
    } else {
        style
    }
}

/// A zone's top card as a span of `width`, or an empty-place mark.
fn top_span(zone: &ZoneView, width: usize, marks: Marks) -> Span<'static> {
    match zone.face_up.last() {
        Some(&card) => Span::styled(
            format!("{:<width$}", card_label(card)),
            marked(fresh_style(card, marks), marks, zone.zone, 0),
        ),
        None if zone.hidden > 0 => Span::styled(
            format!("{:<width$}", format!("{BACK}{}", zone.hidden)),
            marked(back_style(), marks, zone.zone, 0),
        ),
        None => Span::styled(
            format!("{:<width$}", "[ ]"),
            marked(dim(), marks, zone.zone, 0),
        ),
    }
}

fn zones<'a>(view: &'a View, wanted: impl Fn(Zone) -> bool + 'a) -> Vec<&'a ZoneView> {
    view.zones.iter().filter(|zone| wanted(zone.zone)).collect()
}

/// The widest a pile's column is drawn, card and gap.
const WIDEST_COLUMN: usize = 7;

/// How many terminal columns the board takes at its widest columns: what
/// a wider screen has beyond it is room the board does not use.
pub fn widest_board_width(view: &View) -> u16 {
    let widest = board_lines(view, Marks::default(), u16::MAX, MIN_BOARD_HEIGHT)
        .iter()
        .map(Line::width)
        .max()
        .unwrap_or(0);
    u16::try_from(widest).unwrap_or(u16::MAX)
}

/// A board's height for [`widest_board_width`]: the width does not depend
/// on it, since a short board folds its piles' cards, never its columns.
const MIN_BOARD_HEIGHT: u16 = 12;

/// The board as lines that fit `width` × `height` where they can.
pub fn board_lines(view: &View, marks: Marks, width: u16, height: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let columns = if view.game == GameKind::VirginiaReel {
        zones(view, |z| matches!(z, Zone::Reserve(_)))
    } else {
        zones(view, |z| matches!(z, Zone::Pile(_)))
    };
    // The widest columns wherever they fit (every other line of a board is
    // narrower than its piles at that width); 4 still fits ten piles in 40.
    let column_width = match usize::from(width) {
        fits if fits >= columns.len() * WIDEST_COLUMN => WIDEST_COLUMN,
        60.. => 5,
        _ => 4,
    };
    match view.game {
        GameKind::ThreeBlindMice => {
            let mut spans = vec![Span::raw("cells ")];
            for cell in zones(view, |z| matches!(z, Zone::Cell(_))) {
                spans.push(top_span(cell, 4, marks));
            }
            spans.push(Span::raw("  runs home "));
            for foundation in zones(view, |z| matches!(z, Zone::Foundation(_))) {
                match foundation.face_up.first() {
                    Some(&king) => spans.push(Span::styled(
                        format!("{} ", card_label(king)),
                        card_style(king),
                    )),
                    None => spans.push(Span::styled("·  ", dim())),
                }
            }
            lines.push(Line::from(spans));
        }
        GameKind::Indian | GameKind::Midshipman => {
            let mut spans = vec![Span::raw("stock ")];
            for zone in zones(view, |z| z == Zone::Stock) {
                spans.push(Span::styled(
                    format!("{:<6}", format!("{BACK}{}", zone.hidden)),
                    marked(back_style(), marks, Zone::Stock, 0),
                ));
            }
            spans.push(Span::raw(" waste "));
            for zone in zones(view, |z| z == Zone::Waste) {
                let shown = zone.face_up.len().min(3);
                for (index, &card) in zone.face_up[zone.face_up.len() - shown..]
                    .iter()
                    .enumerate()
                {
                    let depth = shown - 1 - index;
                    spans.push(Span::styled(
                        format!("{:<4}", card_label(card)),
                        marked(fresh_style(card, marks), marks, Zone::Waste, depth),
                    ));
                }
                if zone.face_up.is_empty() {
                    spans.push(Span::styled("[ ] ", marked(dim(), marks, Zone::Waste, 0)));
                }
            }
            lines.push(Line::from(spans));
            let mut home = vec![Span::raw("home  ")];
            for foundation in zones(view, |z| matches!(z, Zone::Foundation(_))) {
                home.push(top_span(foundation, 4, marks));
            }
            lines.push(Line::from(home));
        }
        GameKind::VirginiaReel => {
            lines.extend(reel_rows(view, marks));
        }
    }
    let mut header = Vec::new();
    for (number, zone) in columns.iter().enumerate() {
        let label = format!("{:<column_width$}", (number + 1) % 100);
        let style = if marks.cursor.is_some_and(|spot| spot.zone == zone.zone) {
            Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        } else {
            dim()
        };
        header.push(Span::styled(label, style));
    }
    lines.push(Line::from(header));
    let used = lines.len() + usize::from(view.game == GameKind::VirginiaReel);
    let rows = usize::from(height).saturating_sub(used).max(3);
    lines.extend(columns_lines(&columns, marks, column_width, rows));
    if view.game == GameKind::VirginiaReel {
        let stock = zones(view, |z| z == Zone::Stock)
            .first()
            .map_or(0, |zone| usize::from(zone.hidden) / 8);
        let discard = zones(view, |z| z == Zone::Discard)
            .first()
            .map_or(0, |zone| zone.face_up.len());
        lines.push(Line::from(vec![
            Span::styled(
                format!("stock: {stock} deals left"),
                marked(back_style(), marks, Zone::Stock, 0),
            ),
            Span::styled(format!("   aces discarded: {discard}"), dim()),
        ]));
    }
    lines
}

/// One entry of a drawn column.
enum Entry {
    Back(usize),
    Card(Card, usize),
    Skipped(usize),
    Empty,
}

/// Piles side by side, bottom card first, compressed to `rows` lines:
/// first the face-down cards fold into one back with a count, then the
/// middle of a long face-up run folds into `⋮`.
fn columns_lines(
    columns: &[&ZoneView],
    marks: Marks,
    column_width: usize,
    rows: usize,
) -> Vec<Line<'static>> {
    let tallest = columns
        .iter()
        .map(|zone| usize::from(zone.hidden) + zone.face_up.len())
        .max()
        .unwrap_or(0);
    let fold_backs = tallest > rows;
    let entries: Vec<Vec<Entry>> = columns
        .iter()
        .map(|zone| {
            let mut entries = Vec::new();
            let hidden = usize::from(zone.hidden);
            if fold_backs && hidden > 0 {
                entries.push(Entry::Back(hidden));
            } else {
                entries.extend((0..hidden).map(|_| Entry::Back(0)));
            }
            let count = zone.face_up.len();
            let room = rows.saturating_sub(entries.len()).max(2);
            let skip = count.saturating_sub(room).min(count.saturating_sub(1));
            let skip = if skip > 0 { skip + 1 } else { 0 };
            // The cursor's card, counted from the bottom of the face-up run.
            let focus = marks
                .unfold
                .filter(|spot| spot.zone == zone.zone && spot.depth < count)
                .map(|spot| count - 1 - spot.depth);
            match focus {
                // The cursor is in the folded middle: the window slides down
                // to start at its card, the cards above it fold instead.
                Some(first) if first < skip => {
                    let before = usize::from(first > 0);
                    let keep = room.saturating_sub(before + 1).max(1);
                    let end = (first + keep).min(count);
                    if first > 0 {
                        entries.push(Entry::Skipped(first));
                    }
                    for (index, &card) in zone.face_up.iter().enumerate().take(end).skip(first) {
                        entries.push(Entry::Card(card, count - 1 - index));
                    }
                    if end < count {
                        entries.push(Entry::Skipped(count - end));
                    }
                }
                _ => {
                    if skip > 0 {
                        entries.push(Entry::Skipped(skip));
                    }
                    for (index, &card) in zone.face_up.iter().enumerate().skip(skip) {
                        entries.push(Entry::Card(card, count - 1 - index));
                    }
                }
            }
            if entries.is_empty() {
                entries.push(Entry::Empty);
            }
            entries
        })
        .collect();
    let height = entries.iter().map(Vec::len).max().unwrap_or(0);
    (0..height)
        .map(|row| {
            let spans: Vec<Span<'static>> = columns
                .iter()
                .zip(&entries)
                .map(|(zone, entries)| match entries.get(row) {
                    Some(Entry::Back(0)) => {
                        Span::styled(format!("{BACK:<column_width$}"), back_style())
                    }
                    Some(Entry::Back(count)) => Span::styled(
                        format!("{:<column_width$}", format!("▒{count}")),
                        back_style(),
                    ),
                    Some(Entry::Skipped(count)) => {
                        Span::styled(format!("{:<column_width$}", format!("⋮{count}")), dim())
                    }
                    Some(Entry::Card(card, depth)) => {
                        let style = marked(fresh_style(*card, marks), marks, zone.zone, *depth);
                        let label =
                            format!("{:<width$}", card_label(*card), width = column_width - 1);
                        Span::styled(label, style)
                    }
                    Some(Entry::Empty) => Span::styled(
                        format!("{:<column_width$}", "[ ]"),
                        marked(dim(), marks, zone.zone, 0),
                    ),
                    None => Span::raw(" ".repeat(column_width)),
                })
                .flat_map(|span| {
                    // Cards are one column narrower than their slot: pad after.
                    let pad = column_width.saturating_sub(span.content.chars().count());
                    [span, Span::raw(" ".repeat(pad))]
                })
                .collect();
            Line::from(spans)
        })
        .collect()
}

/// Virginia Reel's rows: each position as its top card with the height of
/// its home pile, misplaced cards dimmed.
fn reel_rows(view: &View, marks: Marks) -> Vec<Line<'static>> {
    let positions = zones(view, |z| matches!(z, Zone::Position(_)));
    let mut lines = vec![Line::from(Span::styled(
        "     1     2     3     4     5     6     7     8",
        dim(),
    ))];
    for (row, chunk) in positions.chunks(8).enumerate() {
        let mut spans = vec![Span::styled(
            format!("{}{}  ", (b'A' + row as u8) as char, row + 2),
            dim(),
        )];
        for zone in chunk {
            let home = zone
                .face_up
                .first()
                .is_some_and(|card| usize::from(card.rank()) == row + 2);
            match zone.face_up.last() {
                Some(&card) => {
                    let mut style = marked(fresh_style(card, marks), marks, zone.zone, 0);
                    if !home {
                        style = style.add_modifier(Modifier::DIM | Modifier::ITALIC);
                    }
                    let height = if home {
                        ["", "", "²", "³", "⁴"][zone.face_up.len().min(4)]
                    } else {
                        ""
                    };
                    spans.push(Span::styled(card_label(card), style));
                    let used = card_label(card).chars().count() + height.chars().count();
                    spans.push(Span::raw(format!(
                        "{height}{}",
                        " ".repeat(6 - used.min(6))
                    )));
                }
                None => spans.push(Span::styled("[ ]   ", marked(dim(), marks, zone.zone, 0))),
            }
        }
        lines.push(Line::from(spans));
    }
    lines
}

/// The card or place drawn at column `x`, line `y` of a board drawn by
/// [`board_lines`] in `width` × `height`, for mouse clicks. Each candidate
/// spot is drawn under the cursor in turn and the click is matched against
/// the highlighted cell: slow in theory, instant for a board's hundred spots,
/// and it cannot disagree with the drawing.
/// `unfold` is the drawing's [`Marks::unfold`], so that a folded pile is
/// matched as it is drawn.
pub fn spot_at(
    view: &View,
    unfold: Option<Spot>,
    width: u16,
    height: u16,
    x: u16,
    y: u16,
) -> Option<Spot> {
    let candidates = view.zones.iter().flat_map(|zone| {
        (0..zone.face_up.len().max(1)).map(move |depth| Spot {
            zone: zone.zone,
            depth,
        })
    });
    for spot in candidates {
        let marks = Marks {
            cursor: Some(spot),
            unfold,
            ..Marks::default()
        };
        let lines = board_lines(view, marks, width, height);
        let Some(line) = lines.get(usize::from(y)) else {
            continue;
        };
        let mut left = 0usize;
        for span in &line.spans {
            let span_width = span.width();
            if span.style.add_modifier.contains(Modifier::REVERSED)
                && (left..left + span_width).contains(&usize::from(x))
            {
                return Some(spot);
            }
            left += span_width;
        }
    }
    None
}
