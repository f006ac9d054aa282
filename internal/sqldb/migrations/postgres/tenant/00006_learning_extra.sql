-- +goose Up
-- A counter per course that moves whenever the course, its authors, its
-- tags, or a lesson or topic of it is added, changed or removed, however it
-- happens, so that a cached learner program is checked with one lookup. Rows are never removed:
-- a deleted course leaves a harmless counter.
CREATE TABLE program_versions (
    course_id BIGINT PRIMARY KEY,
    version BIGINT NOT NULL DEFAULT 0
);

-- +goose StatementBegin
CREATE FUNCTION bump_program_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO program_versions (course_id, version) VALUES (OLD.course_id, 1)
            ON CONFLICT (course_id) DO UPDATE SET version = program_versions.version + 1;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO program_versions (course_id, version) VALUES (NEW.course_id, 1)
            ON CONFLICT (course_id) DO UPDATE SET version = program_versions.version + 1;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION bump_course_program_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO program_versions (course_id, version) VALUES (OLD.id, 1)
        ON CONFLICT (course_id) DO UPDATE SET version = program_versions.version + 1;
    IF TG_OP = 'UPDATE' AND NEW.id <> OLD.id THEN
        INSERT INTO program_versions (course_id, version) VALUES (NEW.id, 1)
            ON CONFLICT (course_id) DO UPDATE SET version = program_versions.version + 1;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER courses_program_version AFTER UPDATE OR DELETE ON courses
    FOR EACH ROW EXECUTE FUNCTION bump_course_program_version();
CREATE TRIGGER course_authors_program_version AFTER INSERT OR UPDATE OR DELETE ON course_authors
    FOR EACH ROW EXECUTE FUNCTION bump_program_version();
CREATE TRIGGER course_tags_program_version AFTER INSERT OR UPDATE OR DELETE ON course_tags
    FOR EACH ROW EXECUTE FUNCTION bump_program_version();
CREATE TRIGGER lessons_program_version AFTER INSERT OR UPDATE OR DELETE ON lessons
    FOR EACH ROW EXECUTE FUNCTION bump_program_version();
CREATE TRIGGER topics_program_version AFTER INSERT OR UPDATE OR DELETE ON topics
    FOR EACH ROW EXECUTE FUNCTION bump_program_version();

-- +goose Down
DROP TRIGGER course_tags_program_version ON course_tags;
DROP TRIGGER course_authors_program_version ON course_authors;
DROP TRIGGER courses_program_version ON courses;
DROP FUNCTION bump_course_program_version();
DROP TRIGGER topics_program_version ON topics;
DROP TRIGGER lessons_program_version ON lessons;
DROP FUNCTION bump_program_version();
DROP TABLE program_versions;
