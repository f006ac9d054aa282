-- +goose Up
-- The job queue (internal/queue): one row per piece of background work
-- enqueued in the transaction of the change that asks for it. state is
-- queued (waiting for run_after), running (a worker holds it until
-- lease_until; lease_token names that worker's claim) or failed (no
-- attempts left; last_error says why). A finished job is deleted. key,
-- when set, names what the job works on ("video:12"): enqueueing a key
-- again replaces its job that is still waiting.
CREATE TABLE queue_jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    key TEXT,
    payload TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    run_after DATETIME NOT NULL,
    lease_until DATETIME,
    lease_token TEXT,
    last_error TEXT,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX queue_jobs_due ON queue_jobs(state, run_after);
CREATE INDEX queue_jobs_key ON queue_jobs(key);

-- +goose Down
DROP TABLE queue_jobs;
