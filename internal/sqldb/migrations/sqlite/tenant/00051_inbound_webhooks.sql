-- +goose Up
-- Inbound webhooks (signed per Standard Webhooks). webhook_receipts holds
-- the webhook-id of every accepted message per source ("jitsi",
-- "living-course:<id>") for as long as its timestamp could still pass the
-- five-minute check, so a replay of the same message is refused.
CREATE TABLE webhook_receipts (
    source TEXT NOT NULL,
    message_id TEXT NOT NULL,
    received_at DATETIME NOT NULL,
    PRIMARY KEY (source, message_id)
);

-- A living-course connection: an external document (source_url, Markdown)
-- whose changes are announced to POST /api/living-course/webhooks/{id},
-- signed with secret (whsec_...). Each accepted call queues a check that
-- fetches the source and, when its ETag or hash changed, re-imports it
-- into the rich text topics of topic_ids (a JSON array). checks_day
-- (YYYY-MM-DD, UTC) and checks_count cap the automatic checks per day.
CREATE TABLE living_course_connections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source_url TEXT NOT NULL,
    topic_ids TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    secret TEXT NOT NULL,
    etag TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL DEFAULT '',
    checks_day TEXT NOT NULL DEFAULT '',
    checks_count INTEGER NOT NULL DEFAULT 0,
    last_checked_at DATETIME,
    last_changed_at DATETIME,
    last_error TEXT NOT NULL DEFAULT '',
    created_by INTEGER,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE living_course_connections;
DROP TABLE webhook_receipts;
