-- +goose Up
-- The optional fields of an AGS line item (internal/kinds/lti): when the
-- activity opens and closes for submissions, and whether its grades are
-- released to learners; NULL when the tool did not send them.
ALTER TABLE lti_line_items ADD COLUMN start_date_time TIMESTAMPTZ;
ALTER TABLE lti_line_items ADD COLUMN end_date_time TIMESTAMPTZ;
ALTER TABLE lti_line_items ADD COLUMN grades_released BOOLEAN;

-- +goose Down
ALTER TABLE lti_line_items DROP COLUMN grades_released;
ALTER TABLE lti_line_items DROP COLUMN end_date_time;
ALTER TABLE lti_line_items DROP COLUMN start_date_time;
