-- +goose Up
-- Course certificates (internal/certificates): one PDF per learner and
-- course, made from the CourseFinished pdf template when the course is
-- finished and made again when an admin regenerates it. blob_key names the
-- PDF in the tenant's store; a regeneration writes a new key.
CREATE TABLE certificates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    course_title TEXT NOT NULL,
    blob_key TEXT NOT NULL,
    finished_at DATETIME NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    UNIQUE (user_id, course_id)
);
CREATE INDEX certificates_course ON certificates(course_id);

-- +goose Down
DROP TABLE certificates;
