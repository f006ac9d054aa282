-- +goose Up
-- Device login requests (internal/device). The device code is a secret:
-- only its hash is kept. Once approved, the new token's secret waits for
-- the device sealed to a public key derived from the device code, so the
-- row alone never yields a usable token.
CREATE TABLE device_requests (
    id TEXT PRIMARY KEY,
    device_code_hash TEXT NOT NULL UNIQUE,
    user_code TEXT NOT NULL UNIQUE,
    seal_key TEXT NOT NULL,
    client_name TEXT NOT NULL,
    scopes TEXT NOT NULL,
    ip TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    interval_seconds INTEGER NOT NULL,
    last_polled_at TIMESTAMPTZ,
    status TEXT NOT NULL,
    user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
    decided_at TIMESTAMPTZ,
    approved_scopes TEXT,
    token_id TEXT,
    sealed_token TEXT,
    collected_at TIMESTAMPTZ
);
CREATE INDEX device_requests_expires ON device_requests(expires_at);

-- +goose Down
DROP TABLE device_requests;
