-- +goose Up
-- Interactive packages (internal/interactive): sandboxed web apps uploaded
-- as a .zip with lms-interactive.json at its root. A package keeps every
-- version it was uploaded in (1, 2, ...); current_version is the newest.
-- created_by is NULL for packages uploaded with a topic create, which
-- only admins may then upload new versions of.
CREATE TABLE interactive_packages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    current_version INTEGER NOT NULL,
    created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

-- One uploaded version: its manifest (JSON) and the blob prefix its files
-- are stored under, each file at prefix + its path in the archive.
CREATE TABLE interactive_versions (
    package_id INTEGER NOT NULL REFERENCES interactive_packages(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    manifest TEXT NOT NULL,
    prefix TEXT NOT NULL,
    files INTEGER NOT NULL,
    size INTEGER NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (package_id, version)
);

-- A learner's activity in an interactive topic, as the app reported it:
-- the step ids reached (JSON list), whether the app said it was complete,
-- and the best score (0 to 100).
CREATE TABLE interactive_progress (
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    steps TEXT NOT NULL,
    app_complete BOOLEAN NOT NULL DEFAULT FALSE,
    score INTEGER,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (topic_id, user_id)
);

-- Content-Security-Policy violation reports of played apps; the newest
-- 1000 per tenant are kept.
CREATE TABLE csp_reports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic_id INTEGER,
    document_uri TEXT NOT NULL,
    blocked_uri TEXT NOT NULL,
    directive TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE INDEX csp_reports_topic ON csp_reports(topic_id, id);

-- +goose Down
DROP TABLE csp_reports;
DROP TABLE interactive_progress;
DROP TABLE interactive_versions;
DROP TABLE interactive_packages;
