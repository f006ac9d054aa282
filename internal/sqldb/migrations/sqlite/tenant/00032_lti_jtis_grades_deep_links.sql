-- +goose Up
-- LTI 1.3, platform role (internal/lti): the jti of every client
-- assertion a tool got a service token with, kept until the assertion
-- expires, so that a replayed assertion is refused.
CREATE TABLE lti_assertion_jtis (
    tool_id INTEGER NOT NULL REFERENCES lti_tools(id) ON DELETE CASCADE,
    jti TEXT NOT NULL,
    expires_at DATETIME NOT NULL,
    PRIMARY KEY (tool_id, jti)
);
CREATE INDEX lti_assertion_jtis_expiry ON lti_assertion_jtis(expires_at);

-- LTI 1.3, tool role: the line items container of a launch (AGS), where
-- a score's line item is found or made when the launch named none.
ALTER TABLE lti_launches ADD COLUMN ags_lineitems TEXT NOT NULL DEFAULT '';

-- LTI 1.3, platform role: deep linking requests an author started for a
-- lesson: the login hint (two minutes, used once), then the data the
-- tool sends back with its content items (by hash, used once).
CREATE TABLE lti_link_requests (
    hint_hash TEXT PRIMARY KEY,
    tool_id INTEGER NOT NULL REFERENCES lti_tools(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    lesson_id INTEGER NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    expires_at DATETIME NOT NULL,
    hint_used_at DATETIME,
    data_hash TEXT UNIQUE,
    returned_at DATETIME
);

-- +goose Down
DROP TABLE lti_link_requests;
ALTER TABLE lti_launches DROP COLUMN ags_lineitems;
DROP TABLE lti_assertion_jtis;
