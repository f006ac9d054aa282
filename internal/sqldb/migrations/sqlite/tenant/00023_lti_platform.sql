-- +goose Up
-- LTI 1.3, platform role (internal/lti): external tools lti topics
-- launch. redirect_uris is space-separated; the tool's key is at jwks_url
-- or given as public_key (PEM). share_name and share_email are the
-- privacy settings of the launch claims.
CREATE TABLE lti_tools (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    client_id TEXT NOT NULL UNIQUE,
    login_url TEXT NOT NULL,
    target_link_uri TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    jwks_url TEXT NOT NULL DEFAULT '',
    public_key TEXT NOT NULL DEFAULT '',
    deployment_id TEXT NOT NULL,
    share_name BOOLEAN NOT NULL DEFAULT FALSE,
    share_email BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

-- Login hints of launches under way: by hash, bound to the user and the
-- topic, two minutes, used once.
CREATE TABLE lti_hints (
    hint_hash TEXT PRIMARY KEY,
    tool_id INTEGER NOT NULL REFERENCES lti_tools(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    expires_at DATETIME NOT NULL,
    used_at DATETIME
);

-- Access tokens of the grade services, issued to tools by client
-- assertion: by hash, with their scopes.
CREATE TABLE lti_service_tokens (
    token_hash TEXT PRIMARY KEY,
    tool_id INTEGER NOT NULL REFERENCES lti_tools(id) ON DELETE CASCADE,
    scopes TEXT NOT NULL,
    expires_at DATETIME NOT NULL
);

-- Line items of lti topics (AGS) and the scores tools post to them.
CREATE TABLE lti_line_items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_id INTEGER NOT NULL REFERENCES lti_tools(id) ON DELETE CASCADE,
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    score_maximum REAL NOT NULL,
    resource_id TEXT NOT NULL DEFAULT '',
    tag TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL
);
CREATE INDEX lti_line_items_topic ON lti_line_items(topic_id);

CREATE TABLE lti_scores (
    line_item_id INTEGER NOT NULL REFERENCES lti_line_items(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    score_given REAL,
    score_maximum REAL,
    activity_progress TEXT NOT NULL,
    grading_progress TEXT NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (line_item_id, user_id)
);

-- +goose Down
DROP TABLE lti_scores;
DROP TABLE lti_line_items;
DROP TABLE lti_service_tokens;
DROP TABLE lti_hints;
DROP TABLE lti_tools;
