-- +goose Up
-- cmi5 packages (internal/cmi5). structure is the parsed course structure
-- (JSON, foreign-namespace extensions kept as written); file_prefix is the
-- blob prefix of the package's files, '' for a bare cmi5.xml whose AUs
-- live elsewhere.
CREATE TABLE cmi5_packages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    course_iri TEXT NOT NULL,
    title TEXT NOT NULL,
    structure TEXT NOT NULL,
    file_prefix TEXT NOT NULL DEFAULT '',
    created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL
);

-- The AUs of a package; their ids are what a topic's au names. blocks is
-- the JSON list of the IRIs of the blocks holding the AU, outermost first.
CREATE TABLE cmi5_aus (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    package_id INTEGER NOT NULL REFERENCES cmi5_packages(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    iri TEXT NOT NULL,
    title TEXT NOT NULL,
    url TEXT NOT NULL,
    move_on TEXT NOT NULL,
    mastery_score REAL,
    launch_method TEXT NOT NULL,
    launch_parameters TEXT NOT NULL DEFAULT '',
    entitlement_key TEXT NOT NULL DEFAULT '',
    blocks TEXT NOT NULL DEFAULT '[]',
    UNIQUE (package_id, iri)
);

-- One registration per learner and course (package), reused by every
-- session of the learner in any AU of the course.
CREATE TABLE cmi5_registrations (
    id TEXT PRIMARY KEY,
    package_id INTEGER NOT NULL REFERENCES cmi5_packages(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL,
    UNIQUE (package_id, user_id)
);

-- A launch of an AU. fetch_hash is the hash of the one-time fetch code;
-- token_hash the hash of the auth token the fetch answered (NULL until
-- then), which authenticates the AU's LRS calls. The flags record the
-- session's cmi5 statements in order; last_at is the time of its latest
-- statement, seconds the duration terminated reported.
CREATE TABLE cmi5_sessions (
    id TEXT PRIMARY KEY,
    registration TEXT NOT NULL REFERENCES cmi5_registrations(id) ON DELETE CASCADE,
    au_id INTEGER NOT NULL REFERENCES cmi5_aus(id) ON DELETE CASCADE,
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    launch_mode TEXT NOT NULL,
    fetch_hash TEXT UNIQUE,
    token_hash TEXT UNIQUE,
    launched_at DATETIME NOT NULL,
    initialized_at DATETIME,
    completed BOOLEAN NOT NULL DEFAULT FALSE,
    passed BOOLEAN NOT NULL DEFAULT FALSE,
    failed BOOLEAN NOT NULL DEFAULT FALSE,
    terminated_at DATETIME,
    abandoned_at DATETIME,
    last_at DATETIME,
    seconds INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX cmi5_sessions_open ON cmi5_sessions(registration, au_id);

-- What a learner achieved in an AU across sessions of a registration.
CREATE TABLE cmi5_au_status (
    registration TEXT NOT NULL REFERENCES cmi5_registrations(id) ON DELETE CASCADE,
    au_id INTEGER NOT NULL REFERENCES cmi5_aus(id) ON DELETE CASCADE,
    completed BOOLEAN NOT NULL DEFAULT FALSE,
    passed BOOLEAN NOT NULL DEFAULT FALSE,
    satisfied BOOLEAN NOT NULL DEFAULT FALSE,
    score REAL,
    PRIMARY KEY (registration, au_id)
);

-- Blocks and courses satisfied in a registration (iri of the block or
-- course).
CREATE TABLE cmi5_satisfied (
    registration TEXT NOT NULL REFERENCES cmi5_registrations(id) ON DELETE CASCADE,
    iri TEXT NOT NULL,
    PRIMARY KEY (registration, iri)
);

-- +goose Down
DROP TABLE cmi5_satisfied;
DROP TABLE cmi5_au_status;
DROP TABLE cmi5_sessions;
DROP TABLE cmi5_registrations;
DROP TABLE cmi5_aus;
DROP TABLE cmi5_packages;
