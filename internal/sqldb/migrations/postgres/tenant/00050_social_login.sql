-- +goose Up
-- Social login (internal/social). An account's identities at the OpenID
-- Connect providers: a person is recognised by the provider slot, the
-- provider's issuer and its subject, never by e-mail alone.
CREATE TABLE social_identities (
    provider TEXT NOT NULL,
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    email TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (provider, issuer, subject)
);
CREATE INDEX social_identities_user ON social_identities (user_id);

-- The sealed hand-off tokens of the callback already redeemed: the only
-- state of the stateless flow, kept until the token would expire anyway,
-- so that each is used once.
CREATE TABLE social_redemptions (
    token_id TEXT PRIMARY KEY,
    expires_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE social_redemptions;
DROP TABLE social_identities;
