-- +goose Up
-- LTI tool role (internal/kinds/lti): the courses a registered platform's
-- launches may open, space-separated ids set by the tenant's admin. A
-- registration made before may open its one course, as before.
ALTER TABLE lti_registrations ADD COLUMN course_ids TEXT NOT NULL DEFAULT '';
UPDATE lti_registrations SET course_ids = CAST(course_id AS TEXT) WHERE course_id IS NOT NULL;

-- +goose Down
ALTER TABLE lti_registrations DROP COLUMN course_ids;
