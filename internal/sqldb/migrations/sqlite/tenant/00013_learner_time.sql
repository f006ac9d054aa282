-- +goose Up
-- Time pings are counted once per learner and wall-clock interval, whatever
-- topic or course they name: counted_until is the end of the learner's time
-- already counted, credit the seconds the latest ping added (read back by
-- that ping's statement).
CREATE TABLE learner_time (
    user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    counted_until DATETIME NOT NULL,
    credit INTEGER NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE learner_time;
