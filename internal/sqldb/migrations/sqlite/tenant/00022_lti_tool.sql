-- +goose Up
-- LTI 1.3, tool role (internal/lti): the platforms that may launch us,
-- one registration per (issuer, client_id). deployment_ids is the
-- space-separated list of deployments accepted; course_id is where a
-- launch lands when its resource link names no course or topic.
CREATE TABLE lti_registrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    issuer TEXT NOT NULL,
    client_id TEXT NOT NULL,
    auth_login_url TEXT NOT NULL,
    jwks_url TEXT NOT NULL,
    token_url TEXT NOT NULL DEFAULT '',
    deployment_ids TEXT NOT NULL,
    course_id INTEGER REFERENCES courses(id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    UNIQUE (issuer, client_id)
);

-- OIDC login states waiting for their launch: kept by hash, used once.
CREATE TABLE lti_states (
    state_hash TEXT PRIMARY KEY,
    registration_id INTEGER NOT NULL REFERENCES lti_registrations(id) ON DELETE CASCADE,
    nonce TEXT NOT NULL,
    expires_at DATETIME NOT NULL
);
CREATE INDEX lti_states_expiry ON lti_states(expires_at);

-- Nonces of accepted launches, kept until the id_token they came in has
-- expired, so none is accepted twice.
CREATE TABLE lti_nonces (
    registration_id INTEGER NOT NULL REFERENCES lti_registrations(id) ON DELETE CASCADE,
    nonce TEXT NOT NULL,
    expires_at DATETIME NOT NULL,
    PRIMARY KEY (registration_id, nonce)
);

-- Users created by launches, matched by the platform's issuer and sub,
-- never by e-mail.
CREATE TABLE lti_users (
    issuer TEXT NOT NULL,
    sub TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (issuer, sub)
);

-- Every accepted launch, with the grade service it offered (ags_*).
CREATE TABLE lti_launches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    registration_id INTEGER NOT NULL REFERENCES lti_registrations(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    deployment_id TEXT NOT NULL,
    resource_link_id TEXT NOT NULL,
    context_id TEXT NOT NULL DEFAULT '',
    course_id INTEGER REFERENCES courses(id) ON DELETE SET NULL,
    topic_id INTEGER REFERENCES topics(id) ON DELETE SET NULL,
    launch_roles TEXT NOT NULL,
    ags_lineitem TEXT NOT NULL DEFAULT '',
    ags_scopes TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL
);
CREATE INDEX lti_launches_user ON lti_launches(user_id, course_id);

-- One-time codes the browser brings to the frontend after a launch; kept
-- by hash, exchanged once for an access token.
CREATE TABLE lti_codes (
    code_hash TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    launch_id INTEGER NOT NULL REFERENCES lti_launches(id) ON DELETE CASCADE,
    expires_at DATETIME NOT NULL,
    used_at DATETIME
);

-- +goose Down
DROP TABLE lti_codes;
DROP TABLE lti_launches;
DROP TABLE lti_users;
DROP TABLE lti_nonces;
DROP TABLE lti_states;
DROP TABLE lti_registrations;
