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

-- +goose Down
ALTER TABLE lti_launches DROP COLUMN ags_lineitems;
DROP TABLE lti_assertion_jtis;
