-- +goose Up
-- The gradebook (package reports) reads the progress of every learner of a
-- course at once; the existing index leads with the learner.
CREATE INDEX topic_progress_course_learner ON topic_progress(course_id, user_id);

-- +goose Down
DROP INDEX topic_progress_course_learner;
