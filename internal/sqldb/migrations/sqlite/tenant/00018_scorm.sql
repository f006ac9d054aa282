-- +goose Up
-- SCORM packages (internal/scorm): an uploaded package's files live in the
-- tenant's blob store under blob_prefix; manifest is the parsed
-- imsmanifest.xml (JSON of package scorm/manifest), kept whole so that the
-- player reads the organization, prerequisites and sequencing from it.
CREATE TABLE scorm_packages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    version TEXT NOT NULL,
    identifier TEXT NOT NULL,
    manifest TEXT NOT NULL,
    blob_prefix TEXT NOT NULL,
    size INTEGER NOT NULL,
    created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL
);

-- The launchable items of a package (SCOs and assets), in the order the
-- learner meets them; topics and tracks name them by id.
CREATE TABLE scorm_scos (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    package_id INTEGER NOT NULL REFERENCES scorm_packages(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    identifier TEXT NOT NULL,
    title TEXT NOT NULL,
    launch TEXT NOT NULL,
    scorm_type TEXT NOT NULL,
    UNIQUE (package_id, identifier)
);

-- One track per learner, topic and SCO: the whole CMI data model of the
-- current attempt (cmi: JSON as the runtime commits it) and what progress
-- reads of it. session counts launches and seq the commits of a session:
-- a commit is applied only when (session, seq) is newer than the stored
-- pair, so a late or repeated commit never overwrites newer data.
-- base_seconds is the time of the sessions before the current one,
-- session_seconds the current session's time so far.
CREATE TABLE scorm_tracks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    sco_id INTEGER NOT NULL REFERENCES scorm_scos(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL DEFAULT 1,
    session INTEGER NOT NULL DEFAULT 0,
    seq INTEGER NOT NULL DEFAULT 0,
    cmi TEXT NOT NULL DEFAULT '{}',
    completion TEXT NOT NULL DEFAULT 'not attempted',
    success TEXT NOT NULL DEFAULT 'unknown',
    score_raw REAL,
    score_min REAL,
    score_max REAL,
    score_scaled REAL,
    exit_mode TEXT NOT NULL DEFAULT '',
    base_seconds INTEGER NOT NULL DEFAULT 0,
    session_seconds INTEGER NOT NULL DEFAULT 0,
    completed_at DATETIME,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    UNIQUE (topic_id, sco_id, user_id)
);
CREATE INDEX scorm_tracks_user ON scorm_tracks(user_id, topic_id);

-- +goose Down
DROP TABLE scorm_tracks;
DROP TABLE scorm_scos;
DROP TABLE scorm_packages;
