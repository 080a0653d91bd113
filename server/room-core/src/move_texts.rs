//! A racer's moves as it played them, in notation, in one buffer.
//!
//! Why not a `Vec<String>`: a move's text is a handful of bytes (`7h>4`),
//! and a `String` of it costs 24 bytes plus an allocation of 32 or more;
//! a room holds every racer's moves for the whole race. Here a move costs
//! its bytes and four more. The store and the protocol still take
//! `Vec<String>`, made when a race is kept or ends.

/// A racer's moves in the order played, `undo` included.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct MoveTexts {
    /// Every text, back to back.
    text: String,
    /// Where each text ends in `text`.
    ends: Vec<u32>,
}

impl MoveTexts {
    /// Adds a move's text.
    pub(super) fn push(&mut self, text: &str) {
        self.text.push_str(text);
        // A race's moves come nowhere near 4 GiB of text; saturating keeps
        // the type honest without a panic.
        self.ends
            .push(u32::try_from(self.text.len()).unwrap_or(u32::MAX));
    }

    /// How many moves were played.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The texts, first played first.
    pub(super) fn iter(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let end = usize::try_from(end)
                .unwrap_or(usize::MAX)
                .min(self.text.len());
            let text = self.text.get(start..end).unwrap_or_default();
            start = end;
            text
        })
    }

    /// The texts as the store and the protocol take them.
    pub(super) fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

impl<'a> FromIterator<&'a str> for MoveTexts {
    fn from_iter<I: IntoIterator<Item = &'a str>>(texts: I) -> MoveTexts {
        let mut moves = MoveTexts::default();
        for text in texts {
            moves.push(text);
        }
        moves
    }
}

#[cfg(test)]
mod tests {
    use super::MoveTexts;

    #[test]
    fn move_texts_give_back_each_text_as_pushed_in_order() {
        let cases: [&[&str]; 4] = [
            &[],
            &["7h>4"],
            &["7h>4", "undo", "s", "10c>f1", "", "KdQd>3"],
            &["♥ not ascii", "x"],
        ];
        for texts in cases {
            let moves: MoveTexts = texts.iter().copied().collect();
            assert_eq!(moves.len(), texts.len());
            assert_eq!(moves.iter().collect::<Vec<_>>(), texts);
            assert_eq!(moves.to_vec(), texts);
        }
    }
}
