-- +goose Up
-- One row per tenant and scheduled job. On PostgreSQL a replica locks the
-- row (FOR UPDATE SKIP LOCKED) for as long as it runs the job, so the other
-- replicas skip it, and a replica that dies releases it with its
-- connection. It lives in the platform database because a job may recreate
-- its tenant's database (the demo reset) while the claim is held. On SQLite
-- the table only keeps the schemas in step: its one process uses the lock.
CREATE TABLE job_claims (
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

-- +goose Down
DROP TABLE job_claims;
