//! One line of text, as every string the admin API stores is.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::InvalidValue;

// Every string the admin API stores is one of these: Postgres refuses NUL in text (which would
// otherwise answer 500), and the other controls would only break a storefront's layout or a log
// line. No stored field is multi-line, so tab and newline are refused as well.
/// One line of text (a title, a name, a handle, a link) without control characters: nothing of
/// Unicode `Cc` (U+0000–U+001F, U+007F–U+009F), so no tab or newline either.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type)]
#[serde(try_from = "String", into = "String")]
#[sqlx(transparent)]
pub struct TextLine(String);

impl TextLine {
    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        match raw.chars().find(|c| c.is_control()) {
            Some(c) => Err(InvalidValue(format!(
                "must not contain control characters (found U+{:04X})",
                u32::from(c)
            ))),
            None => Ok(TextLine(raw.to_string())),
        }
    }

    /// A `PATCH`'s new text, or else the text stored before. That one is not checked again: a
    /// value stored before a rule tightened stays as it is until the merchant changes it.
    pub(crate) fn or_stored(change: Option<TextLine>, stored: String) -> Self {
        change.unwrap_or(TextLine(stored))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for TextLine {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TextLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

string_conversions!(TextLine, |t| t.0);
