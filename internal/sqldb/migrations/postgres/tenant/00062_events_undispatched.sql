-- +goose Up
-- The dispatcher looks for the events that have no pairs yet, oldest
-- first. This index holds only those, in id order, so the look reads its
-- first entries. Giving an event its pairs moves the row out of it; on
-- PostgreSQL the entry of the old version stays until a vacuum, but an
-- index scan marks it dead the first time it meets it, and later scans
-- step over it. events_pending (dispatched_at, id) was read as a bitmap of
-- every such entry, each fetched from the table, at every look: 10 ms and
-- more after a class's 40,000 events on a server that does not vacuum.
CREATE INDEX events_undispatched ON events(id) WHERE dispatched_at IS NULL;
DROP INDEX events_pending;

-- +goose Down
CREATE INDEX events_pending ON events(dispatched_at, id);
DROP INDEX events_undispatched;
