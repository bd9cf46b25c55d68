//! The platform's session tokens: the JWT the embedded app gets from App Bridge and sends as
//! `Authorization: Bearer <token>`. HS256 under the app's secret; `exp` and `nbf` with a 5 s
//! leeway; `aud` is the client id; the shop is the host of `dest`, and `iss` is that shop's admin.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::error::ApiError;

/// Seconds of clock difference forgiven on `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 5;

/// Checks session tokens for one app.
pub struct SessionTokens {
    key: DecodingKey,
    validation: Validation,
}

/// A session token that passed every check.
#[derive(Debug, Clone)]
pub struct SessionToken {
    pub shop: ShopDomain,
    /// The platform's id of the staff member (`sub`), when the token names one.
    pub user: Option<String>,
    /// The token as sent: the token exchange sends it on to the platform.
    pub raw: SecretString,
}

#[derive(Deserialize)]
struct Claims {
    iss: String,
    dest: String,
    sub: Option<String>,
}

impl SessionTokens {
    pub fn new(secret: &SecretString, client_id: &str) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.set_audience(&[client_id]);
        validation.set_required_spec_claims(&["exp", "nbf", "aud", "iss"]);
        SessionTokens {
            key: DecodingKey::from_secret(secret.expose_secret().as_bytes()),
            validation,
        }
    }

    /// The token's shop and user, or what is wrong with it (a message for the 401).
    pub fn verify(&self, token: &str) -> Result<SessionToken, String> {
        let data = jsonwebtoken::decode::<Claims>(token, &self.key, &self.validation).map_err(
            |e| match e.kind() {
                ErrorKind::InvalidSignature => "the signature does not match".to_string(),
                ErrorKind::ExpiredSignature => "it has expired (exp)".to_string(),
                ErrorKind::ImmatureSignature => "it is not valid yet (nbf)".to_string(),
                ErrorKind::InvalidAudience => "it is for another app (aud)".to_string(),
                ErrorKind::InvalidAlgorithm => "it is not signed with HS256".to_string(),
                ErrorKind::MissingRequiredClaim(claim) => format!("it has no {claim} claim"),
                _ => "it is not a JWT with the platform's claims".to_string(),
            },
        )?;
        let Claims { iss, dest, sub } = data.claims;
        let host = dest
            .strip_prefix("https://")
            .ok_or("dest is not an https:// shop address")?;
        let shop = ShopDomain::parse(host).map_err(|e| format!("dest: {e}"))?;
        if iss.trim_end_matches('/') != format!("https://{host}/admin") {
            return Err("iss is not the admin of the shop in dest".into());
        }
        Ok(SessionToken {
            shop,
            user: sub.filter(|s| !s.is_empty()),
            raw: token.into(),
        })
    }
}

impl FromRequestParts<AppState> for SessionToken {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let platform = state.platform.as_ref().ok_or(ApiError::PlatformOff)?;
        let token = crate::bearer::token(&parts.headers).ok_or_else(|| {
            ApiError::InvalidSessionToken("send it as Authorization: Bearer <session token>".into())
        })?;
        platform
            .sessions
            .verify(token)
            .map_err(ApiError::InvalidSessionToken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{encode, EncodingKey, Header};
    use serde_json::json;

    const SECRET: &str = "hush";
    const CLIENT_ID: &str = "client-1";

    fn now() -> i64 {
        chrono::Utc::now().timestamp()
    }

    fn token(claims: serde_json::Value, secret: &str) -> String {
        encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap()
    }

    fn claims() -> serde_json::Value {
        json!({
            "iss": "https://a-shop.myshopify.com/admin",
            "dest": "https://a-shop.myshopify.com",
            "aud": CLIENT_ID,
            "sub": "42",
            "exp": now() + 60,
            "nbf": now() - 1,
            "iat": now() - 1,
            "jti": "j", "sid": "s",
        })
    }

    fn verify(token: &str) -> Result<SessionToken, String> {
        SessionTokens::new(&SECRET.into(), CLIENT_ID).verify(token)
    }

    #[test]
    fn a_good_token_names_its_shop_and_user() {
        let checked = verify(&token(claims(), SECRET)).unwrap();
        assert_eq!(checked.shop.as_str(), "a-shop.myshopify.com");
        assert_eq!(checked.user.as_deref(), Some("42"));
    }

    #[test]
    fn each_broken_check_is_refused_naming_what_is_wrong() {
        let with = |key: &str, value: serde_json::Value| {
            let mut c = claims();
            c[key] = value;
            token(c, SECRET)
        };
        let cases = [
            (token(claims(), "other"), "signature"),
            (with("exp", json!(now() - 10)), "expired"),
            (with("nbf", json!(now() + 60)), "not valid yet"),
            (with("aud", json!("another-app")), "another app"),
            (with("dest", json!("https://b-shop.myshopify.com")), "iss"),
            (with("dest", json!("https://example.com")), "dest"),
            ("not.a.jwt".to_string(), "not a JWT"),
        ];
        for (token, expected) in cases {
            let error = verify(&token).unwrap_err();
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }

    #[test]
    fn the_leeway_forgives_five_seconds_of_clock_difference() {
        let mut c = claims();
        c["exp"] = json!(now() - 3);
        assert!(verify(&token(c, SECRET)).is_ok());
    }
}
