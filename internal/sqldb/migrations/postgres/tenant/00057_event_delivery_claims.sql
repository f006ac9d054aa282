-- +goose Up
-- The dispatcher reads the pairs it has just claimed by their claim token.
-- Without an index that read scans every delivery ever made, which after a
-- burst of events (a class signing in before an exam) costs more than the
-- deliveries themselves, and on SQLite holds the one writer meanwhile. A
-- claim is cleared once its pair is run, so the index holds only the pairs
-- in flight.
CREATE INDEX event_deliveries_claim ON event_deliveries(claim) WHERE claim IS NOT NULL;

-- +goose Down
DROP INDEX event_deliveries_claim;
