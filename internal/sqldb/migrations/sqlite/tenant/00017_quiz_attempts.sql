-- +goose Up
-- Quiz attempts (internal/quiz). An attempt keeps the questions as they
-- were when it started (questions: JSON of id, GIFT and score), so an
-- author's edit never changes the scoring of an attempt under way.
-- score and max_score are points; passed is NULL while an essay waits for
-- grading or when the quiz has no pass score. review is the quiz's review
-- setting when the attempt started (after_end, after_answer or never).
CREATE TABLE quiz_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic_id INTEGER NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    questions TEXT NOT NULL,
    started_at DATETIME NOT NULL,
    ends_at DATETIME NOT NULL,
    ended_at DATETIME,
    score REAL NOT NULL DEFAULT 0,
    max_score REAL NOT NULL,
    min_pass_score REAL,
    pending BOOLEAN NOT NULL DEFAULT FALSE,
    passed BOOLEAN,
    review TEXT NOT NULL DEFAULT 'after_end',
    UNIQUE (topic_id, user_id, number)
);
CREATE INDEX quiz_attempts_user ON quiz_attempts(user_id, topic_id);

-- One answer per attempt and question, saved as given (response: JSON);
-- fraction is the share of the question's score earned, NULL until an
-- essay is graded.
CREATE TABLE quiz_answers (
    attempt_id INTEGER NOT NULL REFERENCES quiz_attempts(id) ON DELETE CASCADE,
    question_id INTEGER NOT NULL,
    response TEXT NOT NULL,
    fraction REAL,
    graded_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (attempt_id, question_id)
);

-- +goose Down
DROP TABLE quiz_answers;
DROP TABLE quiz_attempts;
