-- +goose Up
-- LTI Assignment and Grade Services, platform role (internal/kinds/lti):
-- resource_link says a line item is bound to its topic's resource link
-- (every line item made before was reported so); claimed marks the one
-- line item the platform keeps for an lti topic's resource link and
-- sends in the launch's lineitem claim, one per tool and topic.
ALTER TABLE lti_line_items ADD COLUMN resource_link BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE lti_line_items ADD COLUMN claimed BOOLEAN NOT NULL DEFAULT FALSE;
CREATE UNIQUE INDEX lti_line_items_claimed ON lti_line_items(tool_id, topic_id) WHERE claimed;

-- A score's timestamp (nanoseconds since 1970, UTC): a score older than
-- the one kept for its learner and line item is ignored. The tool's
-- comment is answered by the result service.
ALTER TABLE lti_scores ADD COLUMN timestamp_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lti_scores ADD COLUMN comment TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE lti_scores DROP COLUMN comment;
ALTER TABLE lti_scores DROP COLUMN timestamp_ns;
DROP INDEX lti_line_items_claimed;
ALTER TABLE lti_line_items DROP COLUMN claimed;
ALTER TABLE lti_line_items DROP COLUMN resource_link;
