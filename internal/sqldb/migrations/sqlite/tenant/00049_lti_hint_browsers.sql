-- +goose Up
-- LTI platform role (internal/kinds/lti): a login hint is bound to the
-- browser that asked for the launch or the deep linking request. The
-- browser holds a one-time cookie whose value is kept here by hash; our
-- authorization endpoint answers only a request carrying it. Hints made
-- before have none and are refused (they live two minutes).
ALTER TABLE lti_hints ADD COLUMN browser_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE lti_link_requests ADD COLUMN browser_hash TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE lti_link_requests DROP COLUMN browser_hash;
ALTER TABLE lti_hints DROP COLUMN browser_hash;
