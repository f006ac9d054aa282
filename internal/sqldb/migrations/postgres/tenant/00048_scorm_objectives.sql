-- +goose Up
-- The global objectives of SCORM 2004 sequencing (objective maps): what a
-- package's activities wrote to a shared objective, per learner and
-- package, read back by the other activities' read maps. A value that no
-- write has set is unknown: satisfied and completion are '' and the
-- numbers NULL. satisfied is 'satisfied' or 'notSatisfied', completion
-- 'completed' or 'incomplete'; measure is the normalized measure (-1..1),
-- progress the progress measure (0..1).
CREATE TABLE scorm_objectives (
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    package_id BIGINT NOT NULL REFERENCES scorm_packages(id) ON DELETE CASCADE,
    objective_id TEXT NOT NULL,
    satisfied TEXT NOT NULL DEFAULT '',
    measure DOUBLE PRECISION,
    completion TEXT NOT NULL DEFAULT '',
    progress DOUBLE PRECISION,
    score_raw DOUBLE PRECISION,
    score_min DOUBLE PRECISION,
    score_max DOUBLE PRECISION,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (user_id, package_id, objective_id)
);

-- +goose Down
DROP TABLE scorm_objectives;
