-- +goose Up
-- The tenants whose job queue (internal/queue) may hold work at due_at or
-- later, so workers open only those and idle tenants stay closed. A row is
-- written before the transaction that enqueues commits, so a job is never
-- without one (a rolled-back enqueue leaves a row that a worker finds
-- empty and drops); version counts the enqueues, and a worker moves or
-- drops the row only when no enqueue came since it looked.
CREATE TABLE queue_tenants (
    tenant_id BIGINT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
    due_at TIMESTAMPTZ NOT NULL,
    version BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE queue_tenants;
