-- +goose Up
-- Scoped personal tokens (lms_pat_...). Only a hash of the secret is kept;
-- the id is also the secret's first part, so a request finds its row by
-- primary key and compares hashes in constant time.
CREATE TABLE personal_tokens (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    scopes TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    rate_limit_per_minute INTEGER,
    created_at DATETIME NOT NULL,
    expires_at DATETIME,
    revoked_at DATETIME,
    last_used_at DATETIME,
    last_used_ip TEXT
);
CREATE INDEX personal_tokens_user ON personal_tokens(user_id, created_at);

-- One row per request made with a scoped token: never bodies or secrets.
-- token_id and user_id are not foreign keys so the trail outlives the
-- token and the user it names.
CREATE TABLE agent_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at DATETIME NOT NULL,
    token_id TEXT NOT NULL,
    user_id INTEGER NOT NULL,
    method TEXT NOT NULL,
    route TEXT NOT NULL,
    status INTEGER NOT NULL,
    duration_us INTEGER NOT NULL,
    ip TEXT NOT NULL,
    user_agent TEXT NOT NULL
);
CREATE INDEX agent_audit_at ON agent_audit(at);
CREATE INDEX agent_audit_token ON agent_audit(token_id, at);
CREATE INDEX agent_audit_user ON agent_audit(user_id, at);

-- +goose Down
DROP TABLE agent_audit;
DROP TABLE personal_tokens;
