-- +goose Up
-- Administrable settings stored per tenant; value is JSON.
CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at DATETIME NOT NULL
);

-- Transactional outbox: written in the same transaction as the change,
-- dispatched to listeners after commit, at least once.
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    user_id INTEGER,
    payload TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    dispatched_at DATETIME,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
);
CREATE INDEX events_pending ON events(dispatched_at, id);

CREATE TABLE notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    event_id INTEGER NOT NULL,
    event TEXT NOT NULL,
    data TEXT NOT NULL,
    read_at DATETIME,
    created_at DATETIME NOT NULL,
    UNIQUE (event_id, user_id)
);
CREATE INDEX notifications_user ON notifications(user_id, id);

-- Mail sent (or, without SMTP, only recorded) for this tenant.
CREATE TABLE mail_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    event_id INTEGER,
    delivered BOOLEAN NOT NULL DEFAULT FALSE,
    error TEXT,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX mail_log_event ON mail_log(event_id, recipient, subject);

-- Stored responses of writes sent with an Idempotency-Key.
CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status INTEGER NOT NULL DEFAULT 0,
    content_type TEXT NOT NULL DEFAULT '',
    body BLOB,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE mail_log;
DROP TABLE notifications;
DROP TABLE events;
DROP TABLE settings;
