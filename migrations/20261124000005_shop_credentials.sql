-- The shop's offline access token for the platform's Admin API, from the token exchange at
-- install. Sealed by the service (AES-256-GCM under the token key setting, nonce first, bound to
-- the shop's domain); never held in clear. Gone with the shop's row, and at uninstall.
CREATE TABLE shop_credentials (
    shop_domain          TEXT PRIMARY KEY REFERENCES shops (domain) ON DELETE CASCADE,
    access_token_sealed  BYTEA NOT NULL,
    -- The access scopes the platform granted, as it wrote them (comma-separated).
    scope                TEXT NOT NULL,
    obtained_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- webhook_deliveries holds all of the platform's work, not only webhooks: a product import
-- started at install is a row of topic 'products/import' whose work keeps the import's cursor.
