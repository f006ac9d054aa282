-- +goose Up
-- A counter per course that moves whenever the course, its authors, its
-- tags, or a lesson or topic of it is added, changed or removed, however it
-- happens, so that a cached learner program is checked with one lookup. Rows are never removed:
-- a deleted course leaves a harmless counter.
CREATE TABLE program_versions (
    course_id INTEGER PRIMARY KEY,
    version INTEGER NOT NULL DEFAULT 0
);

-- +goose StatementBegin
CREATE TRIGGER lessons_program_insert AFTER INSERT ON lessons BEGIN
    INSERT OR IGNORE INTO program_versions (course_id, version) VALUES (NEW.course_id, 0);
    UPDATE program_versions SET version = version + 1 WHERE course_id = NEW.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER lessons_program_update AFTER UPDATE ON lessons BEGIN
    INSERT OR IGNORE INTO program_versions (course_id, version) VALUES (NEW.course_id, 0);
    UPDATE program_versions SET version = version + 1 WHERE course_id IN (OLD.course_id, NEW.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER lessons_program_delete AFTER DELETE ON lessons BEGIN
    UPDATE program_versions SET version = version + 1 WHERE course_id = OLD.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER topics_program_insert AFTER INSERT ON topics BEGIN
    INSERT OR IGNORE INTO program_versions (course_id, version) VALUES (NEW.course_id, 0);
    UPDATE program_versions SET version = version + 1 WHERE course_id = NEW.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER topics_program_update AFTER UPDATE ON topics BEGIN
    INSERT OR IGNORE INTO program_versions (course_id, version) VALUES (NEW.course_id, 0);
    UPDATE program_versions SET version = version + 1 WHERE course_id IN (OLD.course_id, NEW.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER topics_program_delete AFTER DELETE ON topics BEGIN
    UPDATE program_versions SET version = version + 1 WHERE course_id = OLD.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER courses_program_update AFTER UPDATE ON courses BEGIN
    INSERT OR IGNORE INTO program_versions (course_id, version) VALUES (NEW.id, 0);
    UPDATE program_versions SET version = version + 1 WHERE course_id IN (OLD.id, NEW.id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER courses_program_delete AFTER DELETE ON courses BEGIN
    UPDATE program_versions SET version = version + 1 WHERE course_id = OLD.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_authors_program_insert AFTER INSERT ON course_authors BEGIN
    INSERT OR IGNORE INTO program_versions (course_id, version) VALUES (NEW.course_id, 0);
    UPDATE program_versions SET version = version + 1 WHERE course_id = NEW.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_authors_program_update AFTER UPDATE ON course_authors BEGIN
    INSERT OR IGNORE INTO program_versions (course_id, version) VALUES (NEW.course_id, 0);
    UPDATE program_versions SET version = version + 1 WHERE course_id IN (OLD.course_id, NEW.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_authors_program_delete AFTER DELETE ON course_authors BEGIN
    UPDATE program_versions SET version = version + 1 WHERE course_id = OLD.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_tags_program_insert AFTER INSERT ON course_tags BEGIN
    INSERT OR IGNORE INTO program_versions (course_id, version) VALUES (NEW.course_id, 0);
    UPDATE program_versions SET version = version + 1 WHERE course_id = NEW.course_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_tags_program_update AFTER UPDATE ON course_tags BEGIN
    INSERT OR IGNORE INTO program_versions (course_id, version) VALUES (NEW.course_id, 0);
    UPDATE program_versions SET version = version + 1 WHERE course_id IN (OLD.course_id, NEW.course_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_tags_program_delete AFTER DELETE ON course_tags BEGIN
    UPDATE program_versions SET version = version + 1 WHERE course_id = OLD.course_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER course_tags_program_delete;
DROP TRIGGER course_tags_program_update;
DROP TRIGGER course_tags_program_insert;
DROP TRIGGER course_authors_program_delete;
DROP TRIGGER course_authors_program_update;
DROP TRIGGER course_authors_program_insert;
DROP TRIGGER courses_program_delete;
DROP TRIGGER courses_program_update;
DROP TRIGGER topics_program_delete;
DROP TRIGGER topics_program_update;
DROP TRIGGER topics_program_insert;
DROP TRIGGER lessons_program_delete;
DROP TRIGGER lessons_program_update;
DROP TRIGGER lessons_program_insert;
DROP TABLE program_versions;
