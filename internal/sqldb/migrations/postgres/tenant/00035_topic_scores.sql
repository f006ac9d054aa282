-- +goose Up
-- A learner's best score in a topic whose kind measures one (points out of
-- score_max, both NULL when none): the result that goes back to an LTI
-- platform that launched the topic.
ALTER TABLE topic_progress ADD COLUMN score_raw DOUBLE PRECISION;
ALTER TABLE topic_progress ADD COLUMN score_max DOUBLE PRECISION;

-- +goose Down
ALTER TABLE topic_progress DROP COLUMN score_max;
ALTER TABLE topic_progress DROP COLUMN score_raw;
