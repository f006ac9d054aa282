-- +goose Up
-- LiaScript courses (internal/liascript): the course Markdown and its
-- assets are stored under prefix (prefix + "course.md"); structure is the
-- parsed header, sections and quiz count (JSON).
CREATE TABLE liascript_courses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    structure TEXT NOT NULL,
    prefix TEXT NOT NULL,
    created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL
);

-- A learner's progress in a LiaScript topic: the section indexes visited
-- and the quiz indexes solved (JSON lists).
CREATE TABLE liascript_progress (
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    visited TEXT NOT NULL,
    solved TEXT NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (topic_id, user_id)
);

-- +goose Down
DROP TABLE liascript_progress;
DROP TABLE liascript_courses;
