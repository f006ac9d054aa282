-- +goose Up
-- Whether the session's auth token has read the learner preferences
-- (cmi5LearnerPreferences): the AU must before it sends initialized
-- (cmi5 section 11.0, requirement 11.0.0.0-3), which the LMS enforces.
ALTER TABLE cmi5_sessions ADD COLUMN preferences_read BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE cmi5_sessions DROP COLUMN preferences_read;
