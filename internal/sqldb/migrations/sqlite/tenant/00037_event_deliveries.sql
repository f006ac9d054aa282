-- +goose Up
-- One row per (event, listener): each listener of an event is delivered,
-- retried and given up on its own. state is pending, delivered or failed
-- (a dead letter). claim and claimed_until are the lease of the dispatcher
-- running the pair (wall clock), so two replicas never run it at once and
-- a dead one's lease simply runs out. Events whose dispatched_at is NULL
-- have no pairs yet: the dispatcher makes them (also for the events left
-- by the previous dispatcher, which had no pairs).
CREATE TABLE event_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    listener TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at DATETIME NOT NULL,
    claim TEXT,
    claimed_until DATETIME,
    last_error TEXT NOT NULL DEFAULT '',
    delivered_at DATETIME,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    UNIQUE (event_id, listener)
);
CREATE INDEX event_deliveries_due ON event_deliveries(state, next_attempt_at);
CREATE INDEX event_deliveries_listener ON event_deliveries(listener, state);

-- +goose Down
DROP TABLE event_deliveries;
