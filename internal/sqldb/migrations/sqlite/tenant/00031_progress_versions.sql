-- +goose Up
-- Two counters that let a learner's program answer be kept whole in memory
-- and checked with two lookups instead of reading the learner's rows and
-- the access rule on every read. progress_versions moves whenever a
-- learner's progress in a course changes (any topic_progress or
-- course_progress row of theirs in it); access_version moves whenever an
-- assignment, a group membership or the group tree changes, whoever makes
-- the change. Rows of progress_versions are never removed. A missing row is
-- added with NOT EXISTS rather than INSERT OR IGNORE: an outer upsert's
-- conflict handling would override the trigger's.
CREATE TABLE progress_versions (
    user_id INTEGER NOT NULL,
    course_id INTEGER NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, course_id)
);

-- program_versions.access moves with the assignments of its course, and
-- with every membership or group-tree change (those may touch any course):
-- with it a learner's kept program answer knows when to ask the access rule
-- again.
ALTER TABLE program_versions ADD COLUMN access INTEGER NOT NULL DEFAULT 0;

-- Every learner with progress before this migration gets their row, so
-- that the update triggers, the hot ones (a ping changes a progress row),
-- need only move it.
INSERT INTO progress_versions (user_id, course_id, version)
    SELECT user_id, course_id, 1 FROM topic_progress UNION SELECT user_id, course_id, 1 FROM course_progress;

CREATE TABLE access_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL DEFAULT 0
);
INSERT INTO access_version (id, version) VALUES (1, 0);

-- +goose StatementBegin
CREATE TRIGGER topic_progress_version_insert AFTER INSERT ON topic_progress BEGIN
    INSERT INTO progress_versions (user_id, course_id, version) SELECT NEW.user_id, NEW.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM progress_versions WHERE user_id = NEW.user_id AND course_id = NEW.course_id);
    UPDATE progress_versions SET version = version + 1 WHERE user_id = NEW.user_id AND course_id = NEW.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER topic_progress_version_update AFTER UPDATE ON topic_progress BEGIN
    UPDATE progress_versions SET version = version + 1 WHERE user_id = NEW.user_id AND course_id = NEW.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER topic_progress_version_move AFTER UPDATE ON topic_progress
    WHEN OLD.user_id <> NEW.user_id OR OLD.course_id <> NEW.course_id BEGIN
    INSERT INTO progress_versions (user_id, course_id, version) SELECT NEW.user_id, NEW.course_id, 1
        WHERE NOT EXISTS (SELECT 1 FROM progress_versions WHERE user_id = NEW.user_id AND course_id = NEW.course_id);
    UPDATE progress_versions SET version = version + 1 WHERE user_id = OLD.user_id AND course_id = OLD.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER topic_progress_version_delete AFTER DELETE ON topic_progress BEGIN
    UPDATE progress_versions SET version = version + 1 WHERE user_id = OLD.user_id AND course_id = OLD.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_progress_version_insert AFTER INSERT ON course_progress BEGIN
    INSERT INTO progress_versions (user_id, course_id, version) SELECT NEW.user_id, NEW.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM progress_versions WHERE user_id = NEW.user_id AND course_id = NEW.course_id);
    UPDATE progress_versions SET version = version + 1 WHERE user_id = NEW.user_id AND course_id = NEW.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_progress_version_update AFTER UPDATE ON course_progress BEGIN
    UPDATE progress_versions SET version = version + 1 WHERE user_id = NEW.user_id AND course_id = NEW.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_progress_version_move AFTER UPDATE ON course_progress
    WHEN OLD.user_id <> NEW.user_id OR OLD.course_id <> NEW.course_id BEGIN
    INSERT INTO progress_versions (user_id, course_id, version) SELECT NEW.user_id, NEW.course_id, 1
        WHERE NOT EXISTS (SELECT 1 FROM progress_versions WHERE user_id = NEW.user_id AND course_id = NEW.course_id);
    UPDATE progress_versions SET version = version + 1 WHERE user_id = OLD.user_id AND course_id = OLD.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_progress_version_delete AFTER DELETE ON course_progress BEGIN
    UPDATE progress_versions SET version = version + 1 WHERE user_id = OLD.user_id AND course_id = OLD.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_users_access_insert AFTER INSERT ON course_users BEGIN
    UPDATE access_version SET version = version + 1;
    INSERT INTO program_versions (course_id, version) SELECT NEW.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM program_versions WHERE course_id = NEW.course_id);
    UPDATE program_versions SET access = access + 1 WHERE course_id IN (NEW.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_users_access_update AFTER UPDATE ON course_users BEGIN
    UPDATE access_version SET version = version + 1;
    INSERT INTO program_versions (course_id, version) SELECT NEW.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM program_versions WHERE course_id = NEW.course_id);
    INSERT INTO program_versions (course_id, version) SELECT OLD.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM program_versions WHERE course_id = OLD.course_id);
    UPDATE program_versions SET access = access + 1 WHERE course_id IN (NEW.course_id, OLD.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_users_access_delete AFTER DELETE ON course_users BEGIN
    UPDATE access_version SET version = version + 1;
    INSERT INTO program_versions (course_id, version) SELECT OLD.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM program_versions WHERE course_id = OLD.course_id);
    UPDATE program_versions SET access = access + 1 WHERE course_id IN (OLD.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_groups_access_insert AFTER INSERT ON course_groups BEGIN
    UPDATE access_version SET version = version + 1;
    INSERT INTO program_versions (course_id, version) SELECT NEW.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM program_versions WHERE course_id = NEW.course_id);
    UPDATE program_versions SET access = access + 1 WHERE course_id IN (NEW.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_groups_access_update AFTER UPDATE ON course_groups BEGIN
    UPDATE access_version SET version = version + 1;
    INSERT INTO program_versions (course_id, version) SELECT NEW.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM program_versions WHERE course_id = NEW.course_id);
    INSERT INTO program_versions (course_id, version) SELECT OLD.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM program_versions WHERE course_id = OLD.course_id);
    UPDATE program_versions SET access = access + 1 WHERE course_id IN (NEW.course_id, OLD.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_groups_access_delete AFTER DELETE ON course_groups BEGIN
    UPDATE access_version SET version = version + 1;
    INSERT INTO program_versions (course_id, version) SELECT OLD.course_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM program_versions WHERE course_id = OLD.course_id);
    UPDATE program_versions SET access = access + 1 WHERE course_id IN (OLD.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER user_group_members_access_insert AFTER INSERT ON user_group_members BEGIN
    UPDATE access_version SET version = version + 1;
    UPDATE program_versions SET access = access + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER user_group_members_access_update AFTER UPDATE ON user_group_members BEGIN
    UPDATE access_version SET version = version + 1;
    UPDATE program_versions SET access = access + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER user_group_members_access_delete AFTER DELETE ON user_group_members BEGIN
    UPDATE access_version SET version = version + 1;
    UPDATE program_versions SET access = access + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER user_groups_access_insert AFTER INSERT ON user_groups BEGIN
    UPDATE access_version SET version = version + 1;
    UPDATE program_versions SET access = access + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER user_groups_access_update AFTER UPDATE ON user_groups BEGIN
    UPDATE access_version SET version = version + 1;
    UPDATE program_versions SET access = access + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER user_groups_access_delete AFTER DELETE ON user_groups BEGIN
    UPDATE access_version SET version = version + 1;
    UPDATE program_versions SET access = access + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER course_users_access_insert;
DROP TRIGGER course_users_access_update;
DROP TRIGGER course_users_access_delete;
DROP TRIGGER course_groups_access_insert;
DROP TRIGGER course_groups_access_update;
DROP TRIGGER course_groups_access_delete;
DROP TRIGGER user_group_members_access_insert;
DROP TRIGGER user_group_members_access_update;
DROP TRIGGER user_group_members_access_delete;
DROP TRIGGER user_groups_access_insert;
DROP TRIGGER user_groups_access_update;
DROP TRIGGER user_groups_access_delete;
DROP TRIGGER topic_progress_version_insert;
DROP TRIGGER topic_progress_version_update;
DROP TRIGGER topic_progress_version_move;
DROP TRIGGER topic_progress_version_delete;
DROP TRIGGER course_progress_version_insert;
DROP TRIGGER course_progress_version_update;
DROP TRIGGER course_progress_version_move;
DROP TRIGGER course_progress_version_delete;
DROP TABLE access_version;
ALTER TABLE program_versions DROP COLUMN access;
DROP TABLE progress_versions;
