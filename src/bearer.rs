//! `Authorization: Bearer <token>`, read one way for the admin token, the analytics API keys and
//! the platform's session tokens.

use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, HeaderValue};

/// The token of a request's bearer credentials, if it sent any.
pub fn token(headers: &HeaderMap) -> Option<&str> {
    headers.get(AUTHORIZATION).and_then(parse)
}

/// `<scheme> <token>`: the scheme is `Bearer` in any case (auth schemes are case-insensitive,
/// RFC 7235), one or more spaces, then a non-empty token. A value that is not visible ASCII
/// carries no token.
pub fn parse(value: &HeaderValue) -> Option<&str> {
    let value = value.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim_start_matches(' ');
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token_of(value: &str) -> Option<String> {
        parse(&HeaderValue::from_str(value).unwrap()).map(str::to_string)
    }

    #[test]
    fn the_scheme_is_bearer_in_any_case() {
        for value in [
            "Bearer abc",
            "bearer abc",
            "BEARER abc",
            "bEaReR abc",
            "Bearer   abc",
            "  Bearer abc  ",
        ] {
            assert_eq!(token_of(value).as_deref(), Some("abc"), "{value:?}");
        }
    }

    #[test]
    fn other_schemes_and_missing_tokens_carry_no_token() {
        for value in [
            "",
            "abc",
            "Bearer",
            "Bearer ",
            "Bearer    ",
            "Bearerabc",
            "Bearer\tabc",
            "Basic dXNlcjpwYXNzd29yZA==",
            "Token abc",
            "Bearers abc",
        ] {
            assert_eq!(token_of(value), None, "{value:?}");
        }
    }

    #[test]
    fn a_header_that_is_not_visible_ascii_carries_no_token() {
        let value = HeaderValue::from_bytes("Bearer vk_é".as_bytes()).unwrap();
        assert_eq!(parse(&value), None);
    }

    #[test]
    fn the_token_is_read_from_the_authorization_header_only() {
        let mut headers = HeaderMap::new();
        assert_eq!(token(&headers), None);
        headers.insert("x-authorization", HeaderValue::from_static("Bearer abc"));
        assert_eq!(token(&headers), None);
        headers.insert(AUTHORIZATION, HeaderValue::from_static("bearer xyz"));
        assert_eq!(token(&headers), Some("xyz"));
    }
}
