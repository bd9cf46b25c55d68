//! The settings' value parsers: each value read into its type (addresses, durations, URLs,
//! secrets), trimmed, or refused with a reason that never repeats a secret.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::time::Duration;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{value_parser, Arg, Command};
use secrecy::SecretString;
use url::Url;

/// `parser`, given the value without surrounding whitespace (which an env file easily leaves).
pub(super) fn trim<P: TypedValueParser>(parser: P) -> Trimmed<P> {
    Trimmed(parser)
}

#[derive(Clone)]
pub(super) struct Trimmed<P>(P);

impl<P: TypedValueParser> TypedValueParser for Trimmed<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let value = value.to_str().map_or(value, |v| OsStr::new(v.trim()));
        self.0.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        self.0.possible_values()
    }
}

/// Why a setting's value is refused. The variants for secrets (and the Postgres URL, which carries
/// a password) do not repeat the value.
#[derive(Debug, PartialEq, thiserror::Error)]
pub(super) enum InvalidValue {
    #[error("'{0}' is not an address like 127.0.0.1:8080")]
    SocketAddr(String),
    #[error("'{0}' is not a whole number of seconds")]
    Seconds(String),
    #[error("'{0}' is not true or false")]
    Boolean(String),
    #[error("must be a URL like postgres://user:password@host:5432/database")]
    PostgresUrl,
    #[error("'{0}' is not an HTTP URL like http://127.0.0.1:8123")]
    HttpUrl(String),
    #[error("'{0}' is not a plain identifier (letters, digits, _)")]
    Identifier(String),
    #[error("must not be empty")]
    Empty,
    #[error("must be at least {MIN_ADMIN_TOKEN_LEN} characters")]
    TooShort,
    #[error("{0}")]
    TokenKey(&'static str),
}

const MIN_ADMIN_TOKEN_LEN: usize = 16;

pub(super) fn socket_addr(raw: &str) -> Result<SocketAddr, InvalidValue> {
    let raw = raw.trim();
    raw.parse()
        .map_err(|_| InvalidValue::SocketAddr(raw.to_string()))
}

pub(super) fn seconds(raw: &str) -> Result<Duration, InvalidValue> {
    let raw = raw.trim();
    raw.parse()
        .map(Duration::from_secs)
        .map_err(|_| InvalidValue::Seconds(raw.to_string()))
}

/// Whole seconds, at least one: a timeout of zero would refuse every client.
pub(super) fn positive_seconds() -> impl TypedValueParser<Value = Duration> {
    trim(value_parser!(u64).range(1..).map(Duration::from_secs))
}

pub(super) fn boolean(raw: &str) -> Result<bool, InvalidValue> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "0" | "false" | "no" | "off" => Ok(false),
        "1" | "true" | "yes" | "on" => Ok(true),
        other => Err(InvalidValue::Boolean(other.to_string())),
    }
}

pub(super) fn postgres_url(raw: &str) -> Result<SecretString, InvalidValue> {
    let raw = raw.trim();
    match Url::parse(raw) {
        Ok(url) if matches!(url.scheme(), "postgres" | "postgresql") => Ok(raw.into()),
        _ => Err(InvalidValue::PostgresUrl),
    }
}

pub(super) fn http_url(raw: &str) -> Result<Url, InvalidValue> {
    let raw = raw.trim();
    match Url::parse(raw) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Ok(url),
        _ => Err(InvalidValue::HttpUrl(raw.to_string())),
    }
}

/// A name ClickHouse takes unquoted: letters, digits (not first) and `_`.
pub(super) fn identifier(raw: &str) -> Result<String, InvalidValue> {
    let raw = raw.trim();
    let plain = !raw.is_empty()
        && raw
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()));
    match plain {
        true => Ok(raw.to_string()),
        false => Err(InvalidValue::Identifier(raw.to_string())),
    }
}

/// Taken as given: a password may begin or end with a space.
pub(super) fn password(raw: &str) -> Result<SecretString, std::convert::Infallible> {
    Ok(raw.into())
}

pub(super) fn proxy_secret(raw: &str) -> Result<SecretString, InvalidValue> {
    match raw.trim() {
        "" => Err(InvalidValue::Empty),
        secret => Ok(secret.into()),
    }
}

pub(super) fn client_id(raw: &str) -> Result<String, InvalidValue> {
    match raw.trim() {
        "" => Err(InvalidValue::Empty),
        id => Ok(id.to_string()),
    }
}

/// The 32 bytes of the key that seals the platform's access tokens, given as 64 hex digits or in
/// base64. Never printed.
#[derive(Clone)]
pub struct TokenKeyBytes(std::sync::Arc<secrecy::SecretBox<[u8; 32]>>);

impl std::fmt::Debug for TokenKeyBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKeyBytes([redacted])")
    }
}

impl TokenKeyBytes {
    /// The key `raw` writes; the message never repeats the value.
    pub fn parse(raw: &str) -> Result<TokenKeyBytes, &'static str> {
        use base64::Engine as _;
        let raw = raw.trim();
        let bytes = if raw.len() == 64 && raw.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(raw).ok()
        } else {
            base64::engine::general_purpose::STANDARD.decode(raw).ok()
        };
        match bytes.and_then(|b| <[u8; 32]>::try_from(b).ok()) {
            Some(key) => Ok(TokenKeyBytes(std::sync::Arc::new(secrecy::SecretBox::new(
                Box::new(key),
            )))),
            None => Err("must be 32 bytes written as 64 hex digits or in base64 \
                      (e.g. the output of `openssl rand -hex 32`)"),
        }
    }

    pub fn expose(&self) -> &[u8; 32] {
        use secrecy::ExposeSecret;
        self.0.expose_secret()
    }
}

pub(super) fn token_key(raw: &str) -> Result<TokenKeyBytes, InvalidValue> {
    TokenKeyBytes::parse(raw).map_err(InvalidValue::TokenKey)
}

pub(super) fn admin_token(raw: &str) -> Result<SecretString, InvalidValue> {
    match raw.trim() {
        token if token.len() < MIN_ADMIN_TOKEN_LEN => Err(InvalidValue::TooShort),
        token => Ok(token.into()),
    }
}
