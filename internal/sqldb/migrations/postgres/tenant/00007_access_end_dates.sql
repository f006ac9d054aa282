-- +goose Up
-- The hourly access-expiry job looks up assignments by end date.
CREATE INDEX course_users_end_date ON course_users(end_date);
CREATE INDEX course_groups_end_date ON course_groups(end_date);

-- +goose Down
DROP INDEX course_groups_end_date;
DROP INDEX course_users_end_date;
