-- +goose Up
CREATE TABLE courses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    image_path TEXT,
    language TEXT NOT NULL DEFAULT '',
    level TEXT NOT NULL DEFAULT '',
    -- draft, published, archived or published_unactivated
    status TEXT NOT NULL DEFAULT 'draft',
    active_from DATETIME,
    active_to DATETIME,
    hours_to_complete INTEGER,
    is_public BOOLEAN NOT NULL DEFAULT FALSE,
    findable BOOLEAN NOT NULL DEFAULT TRUE,
    position INTEGER NOT NULL DEFAULT 0,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX courses_status ON courses(status, position);

CREATE TABLE course_authors (
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (course_id, user_id)
);
CREATE INDEX course_authors_user ON course_authors(user_id);

CREATE TABLE course_categories (
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    category_id INTEGER NOT NULL REFERENCES categories(id) ON DELETE CASCADE,
    PRIMARY KEY (course_id, category_id)
);
CREATE INDEX course_categories_category ON course_categories(category_id);

CREATE TABLE course_tags (
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (course_id, tag)
);
CREATE INDEX course_tags_tag ON course_tags(tag);

-- Direct access of a user to a course, with an optional end.
CREATE TABLE course_users (
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    end_date DATETIME,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (course_id, user_id)
);
CREATE INDEX course_users_user ON course_users(user_id);

-- Access through a group; members of the group's descendants inherit it.
CREATE TABLE course_groups (
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    group_id INTEGER NOT NULL REFERENCES user_groups(id) ON DELETE CASCADE,
    end_date DATETIME,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (course_id, group_id)
);
CREATE INDEX course_groups_group ON course_groups(group_id);

CREATE TABLE lessons (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    parent_id INTEGER REFERENCES lessons(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    duration TEXT NOT NULL DEFAULT '',
    position INTEGER NOT NULL DEFAULT 0,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    active_from DATETIME,
    active_to DATETIME,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX lessons_course ON lessons(course_id, position);

-- A topic holds one content item: its kind's class name and its value
-- (JSON, shaped by the kind). Files of the content live in the blob store.
CREATE TABLE topics (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    lesson_id INTEGER NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    position INTEGER NOT NULL DEFAULT 0,
    preview BOOLEAN NOT NULL DEFAULT FALSE,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    can_skip BOOLEAN NOT NULL DEFAULT FALSE,
    duration TEXT NOT NULL DEFAULT '',
    topicable_type TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX topics_lesson ON topics(lesson_id, position);
CREATE INDEX topics_course ON topics(course_id);

-- Attachments of a topic.
CREATE TABLE topic_resources (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE INDEX topic_resources_topic ON topic_resources(topic_id);

-- Work learners upload to project topics.
CREATE TABLE project_submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE INDEX project_submissions_topic ON project_submissions(topic_id, user_id);

-- A learner's state of one topic. status: 0 incomplete, 1 complete,
-- 2 in progress.
CREATE TABLE topic_progress (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    status INTEGER NOT NULL DEFAULT 0,
    seconds INTEGER NOT NULL DEFAULT 0,
    started_at DATETIME,
    finished_at DATETIME,
    last_ping_at DATETIME,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (user_id, topic_id)
);
CREATE INDEX topic_progress_course ON topic_progress(user_id, course_id);

-- A learner's state of one course: when it started and finished, and the
-- deadline fixed at the start.
CREATE TABLE course_progress (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    course_id INTEGER NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    started_at DATETIME,
    finished_at DATETIME,
    deadline DATETIME,
    deadline_notified_at DATETIME,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (user_id, course_id)
);
CREATE INDEX course_progress_course ON course_progress(course_id);

-- xAPI statements an H5P topic reported for a learner.
CREATE TABLE topic_h5p_statements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    verb TEXT NOT NULL,
    score REAL,
    max_score REAL,
    statement TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE INDEX topic_h5p_statements_topic ON topic_h5p_statements(topic_id, user_id);

-- When each scheduled job last ran for this tenant.
CREATE TABLE job_runs (
    name TEXT PRIMARY KEY,
    last_run_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE job_runs;
DROP TABLE topic_h5p_statements;
DROP TABLE course_progress;
DROP TABLE topic_progress;
DROP TABLE project_submissions;
DROP TABLE topic_resources;
DROP TABLE topics;
DROP TABLE lessons;
DROP TABLE course_groups;
DROP TABLE course_users;
DROP TABLE course_tags;
DROP TABLE course_categories;
DROP TABLE course_authors;
DROP TABLE courses;
