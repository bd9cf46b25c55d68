//! What a failed ClickHouse call means for the caller: the server refused the data itself (to
//! retry it cannot help), or anything else (unreachable, overloaded, timed out: worth retrying).
//!
//! The server names the reason with an exception code. The `clickhouse` client hands back the
//! server's exception text only (`Error::BadResponse`), so the code is read from that text here,
//! once, in the two forms servers write it, and everything else speaks of codes by name.

use std::time::Duration;

/// A ClickHouse exception code, by the name the server's source gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExceptionCode(pub u32);

impl ExceptionCode {
    pub const CANNOT_PARSE_TEXT: ExceptionCode = ExceptionCode(6);
    pub const CANNOT_PARSE_QUOTED_STRING: ExceptionCode = ExceptionCode(26);
    pub const CANNOT_PARSE_INPUT_ASSERTION_FAILED: ExceptionCode = ExceptionCode(27);
    pub const ATTEMPT_TO_READ_AFTER_EOF: ExceptionCode = ExceptionCode(32);
    pub const CANNOT_READ_ALL_DATA: ExceptionCode = ExceptionCode(33);
    pub const CANNOT_PARSE_DATE: ExceptionCode = ExceptionCode(38);
    pub const CANNOT_PARSE_DATETIME: ExceptionCode = ExceptionCode(41);
    pub const TYPE_MISMATCH: ExceptionCode = ExceptionCode(53);
    pub const ARGUMENT_OUT_OF_BOUND: ExceptionCode = ExceptionCode(69);
    pub const CANNOT_CONVERT_TYPE: ExceptionCode = ExceptionCode(70);
    pub const CANNOT_PARSE_NUMBER: ExceptionCode = ExceptionCode(72);
    pub const INCORRECT_DATA: ExceptionCode = ExceptionCode(117);
    pub const TOO_LARGE_STRING_SIZE: ExceptionCode = ExceptionCode(131);

    /// The codes that say "this data is bad": the same rows would be refused again.
    const DATA_ERRORS: [ExceptionCode; 13] = [
        Self::CANNOT_PARSE_TEXT,
        Self::CANNOT_PARSE_QUOTED_STRING,
        Self::CANNOT_PARSE_INPUT_ASSERTION_FAILED,
        Self::ATTEMPT_TO_READ_AFTER_EOF,
        Self::CANNOT_READ_ALL_DATA,
        Self::CANNOT_PARSE_DATE,
        Self::CANNOT_PARSE_DATETIME,
        Self::TYPE_MISMATCH,
        Self::ARGUMENT_OUT_OF_BOUND,
        Self::CANNOT_CONVERT_TYPE,
        Self::CANNOT_PARSE_NUMBER,
        Self::INCORRECT_DATA,
        Self::TOO_LARGE_STRING_SIZE,
    ];

    /// The server's code for a failed call, if the server answered with an exception.
    ///
    /// Old servers write `Code: 27, e.displayText() = DB::Exception: …`, current ones
    /// `Code: 131. DB::Exception: … (TOO_LARGE_STRING_SIZE)`: both start with the code.
    pub fn of(error: &clickhouse::error::Error) -> Option<ExceptionCode> {
        let clickhouse::error::Error::BadResponse(text) = error else {
            return None;
        };
        let digits = text.trim_start().strip_prefix("Code: ")?;
        let end = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        digits[..end].parse().ok().map(ExceptionCode)
    }

    pub fn is_data_error(self) -> bool {
        Self::DATA_ERRORS.contains(&self)
    }
}

/// A failed ClickHouse call, classified.
#[derive(Debug, thiserror::Error)]
pub enum WarehouseError {
    /// Worth retrying: ClickHouse unreachable, overloaded, timed out.
    #[error("{0}")]
    Transient(String),
    /// ClickHouse refuses the data itself; retrying cannot help.
    #[error("refused: {0}")]
    Rejected(String),
}

impl WarehouseError {
    pub fn timed_out(after: Duration) -> WarehouseError {
        WarehouseError::Transient(format!("no answer within {after:?}"))
    }
}

/// Whether the server's exception is a connection to another server (a shard or replica of a
/// cluster) that broke: "read after eof" or "cannot read all data" from a peer, not bad data.
fn between_servers(error: &clickhouse::error::Error) -> bool {
    let clickhouse::error::Error::BadResponse(text) = error else {
        return false;
    };
    let broken_connection = [
        ExceptionCode::ATTEMPT_TO_READ_AFTER_EOF,
        ExceptionCode::CANNOT_READ_ALL_DATA,
    ];
    ExceptionCode::of(error).is_some_and(|code| broken_connection.contains(&code))
        && text.contains("while receiving packet from")
}

impl From<clickhouse::error::Error> for WarehouseError {
    fn from(error: clickhouse::error::Error) -> Self {
        match ExceptionCode::of(&error) {
            Some(code) if code.is_data_error() && !between_servers(&error) => {
                WarehouseError::Rejected(error.to_string())
            }
            _ => WarehouseError::Transient(error.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clickhouse::error::Error;

    #[test]
    fn the_code_is_read_in_the_old_and_the_current_form() {
        let old = Error::BadResponse(
            "Code: 27, e.displayText() = DB::Exception: Cannot parse input".into(),
        );
        assert_eq!(
            ExceptionCode::of(&old),
            Some(ExceptionCode::CANNOT_PARSE_INPUT_ASSERTION_FAILED)
        );
        let current = Error::BadResponse(
            "Code: 131. DB::Exception: Too large string size. (TOO_LARGE_STRING_SIZE)".into(),
        );
        assert_eq!(
            ExceptionCode::of(&current),
            Some(ExceptionCode::TOO_LARGE_STRING_SIZE)
        );
        assert_eq!(ExceptionCode::of(&Error::TimedOut), None);
        assert_eq!(
            ExceptionCode::of(&Error::BadResponse("502 Bad Gateway".into())),
            None
        );
    }

    #[test]
    fn data_errors_are_rejections_and_everything_else_is_transient() {
        let bad = Error::BadResponse("Code: 27, e.displayText() = DB::Exception: x".into());
        assert!(matches!(
            WarehouseError::from(bad),
            WarehouseError::Rejected(_)
        ));
        let overloaded =
            Error::BadResponse("Code: 202. DB::Exception: Too many simultaneous queries".into());
        assert!(matches!(
            WarehouseError::from(overloaded),
            WarehouseError::Transient(_)
        ));
        assert!(matches!(
            WarehouseError::from(Error::TimedOut),
            WarehouseError::Transient(_)
        ));
    }

    #[test]
    fn a_broken_connection_between_servers_is_transient_whatever_its_code() {
        let dropped_shard = Error::BadResponse(
            "Code: 32, e.displayText() = DB::Exception: Attempt to read after eof: while receiving packet from 127.0.0.1:19214".into(),
        );
        assert!(matches!(
            WarehouseError::from(dropped_shard),
            WarehouseError::Transient(_)
        ));
    }
}
