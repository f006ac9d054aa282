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

-- +goose Down
DROP TABLE lti_assertion_jtis;
