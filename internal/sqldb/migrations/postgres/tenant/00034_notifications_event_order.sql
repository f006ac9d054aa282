-- +goose Up
-- Notifications list in the order of their events, which on PostgreSQL
-- several dispatchers may deliver in another order than they happened.
CREATE INDEX notifications_user_event ON notifications(user_id, event_id);
CREATE INDEX notifications_event ON notifications(event_id, id);

-- +goose Down
DROP INDEX notifications_event;
DROP INDEX notifications_user_event;
