-- +goose Up
-- Outbound webhooks: HTTPS endpoints an admin subscribed to events
-- (patterns: names of the catalog, * as a wildcard). secret is the
-- Standard Webhooks signing secret (whsec_...), shown once. An endpoint
-- that failed for a whole retry window is switched off (enabled = 0) with
-- the reason. Its deliveries are the event_deliveries of listener
-- webhook:<id>.
CREATE TABLE webhook_endpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    url TEXT NOT NULL,
    event_patterns TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    secret TEXT NOT NULL,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    disabled_reason TEXT NOT NULL DEFAULT '',
    created_by INTEGER,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE webhook_endpoints;
