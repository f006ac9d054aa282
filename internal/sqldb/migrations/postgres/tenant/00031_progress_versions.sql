-- +goose Up
-- Two counters that let a learner's program answer be kept whole in memory
-- and checked with two lookups instead of reading the learner's rows and
-- the access rule on every read. progress_versions moves whenever a
-- learner's progress in a course changes (any topic_progress or
-- course_progress row of theirs in it); access_version moves whenever an
-- assignment, a group membership or the group tree changes, whoever makes
-- the change. Rows of progress_versions are never removed.
CREATE TABLE progress_versions (
    user_id BIGINT NOT NULL,
    course_id BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, course_id)
);

-- program_versions.access moves with the assignments of its course, and
-- with every membership or group-tree change (those may touch any course):
-- with it a learner's kept program answer knows when to ask the access rule
-- again.
ALTER TABLE program_versions ADD COLUMN access BIGINT NOT NULL DEFAULT 0;

-- Every learner with progress before this migration gets their row.
INSERT INTO progress_versions (user_id, course_id, version)
    SELECT user_id, course_id, 1 FROM topic_progress UNION SELECT user_id, course_id, 1 FROM course_progress;

CREATE TABLE access_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL DEFAULT 0
);
INSERT INTO access_version (id, version) VALUES (1, 0);

-- +goose StatementBegin
CREATE FUNCTION bump_progress_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO progress_versions (user_id, course_id, version) VALUES (OLD.user_id, OLD.course_id, 1)
            ON CONFLICT (user_id, course_id) DO UPDATE SET version = progress_versions.version + 1;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (NEW.user_id, NEW.course_id) IS DISTINCT FROM (OLD.user_id, OLD.course_id)) THEN
        INSERT INTO progress_versions (user_id, course_id, version) VALUES (NEW.user_id, NEW.course_id, 1)
            ON CONFLICT (user_id, course_id) DO UPDATE SET version = progress_versions.version + 1;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION bump_access_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE access_version SET version = version + 1;
    IF TG_TABLE_NAME IN ('user_group_members', 'user_groups') THEN
        UPDATE program_versions SET access = access + 1;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION bump_course_access() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO program_versions (course_id, version, access) VALUES (OLD.course_id, 0, 1)
            ON CONFLICT (course_id) DO UPDATE SET access = program_versions.access + 1;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.course_id <> OLD.course_id) THEN
        INSERT INTO program_versions (course_id, version, access) VALUES (NEW.course_id, 0, 1)
            ON CONFLICT (course_id) DO UPDATE SET access = program_versions.access + 1;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER topic_progress_version AFTER INSERT OR UPDATE OR DELETE ON topic_progress
    FOR EACH ROW EXECUTE FUNCTION bump_progress_version();
CREATE TRIGGER course_progress_version AFTER INSERT OR UPDATE OR DELETE ON course_progress
    FOR EACH ROW EXECUTE FUNCTION bump_progress_version();
-- Once per statement: a statement changing many rows moves the counter once.
CREATE TRIGGER course_users_access_version AFTER INSERT OR UPDATE OR DELETE ON course_users
    FOR EACH STATEMENT EXECUTE FUNCTION bump_access_version();
CREATE TRIGGER course_groups_access_version AFTER INSERT OR UPDATE OR DELETE ON course_groups
    FOR EACH STATEMENT EXECUTE FUNCTION bump_access_version();
CREATE TRIGGER user_group_members_access_version AFTER INSERT OR UPDATE OR DELETE ON user_group_members
    FOR EACH STATEMENT EXECUTE FUNCTION bump_access_version();
CREATE TRIGGER user_groups_access_version AFTER INSERT OR UPDATE OR DELETE ON user_groups
    FOR EACH STATEMENT EXECUTE FUNCTION bump_access_version();
CREATE TRIGGER course_users_course_access AFTER INSERT OR UPDATE OR DELETE ON course_users
    FOR EACH ROW EXECUTE FUNCTION bump_course_access();
CREATE TRIGGER course_groups_course_access AFTER INSERT OR UPDATE OR DELETE ON course_groups
    FOR EACH ROW EXECUTE FUNCTION bump_course_access();

-- +goose Down
DROP TRIGGER course_groups_course_access ON course_groups;
DROP TRIGGER course_users_course_access ON course_users;
DROP FUNCTION bump_course_access();
DROP TRIGGER user_groups_access_version ON user_groups;
DROP TRIGGER user_group_members_access_version ON user_group_members;
DROP TRIGGER course_groups_access_version ON course_groups;
DROP TRIGGER course_users_access_version ON course_users;
DROP TRIGGER course_progress_version ON course_progress;
DROP TRIGGER topic_progress_version ON topic_progress;
DROP FUNCTION bump_access_version();
DROP FUNCTION bump_progress_version();
DROP TABLE access_version;
ALTER TABLE program_versions DROP COLUMN access;
DROP TABLE progress_versions;
