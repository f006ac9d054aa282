-- +goose Up
-- One counter per tenant that moves whenever a course, its authors, its
-- categories or its tags are added, changed or removed, however it happens,
-- so that a cached page of the public catalogue is checked with one lookup.
CREATE TABLE catalogue_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL DEFAULT 0
);
INSERT INTO catalogue_version (id, version) VALUES (1, 0);

-- +goose StatementBegin
CREATE TRIGGER courses_catalogue_insert AFTER INSERT ON courses BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER courses_catalogue_update AFTER UPDATE ON courses BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER courses_catalogue_delete AFTER DELETE ON courses BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_authors_catalogue_insert AFTER INSERT ON course_authors BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_authors_catalogue_update AFTER UPDATE ON course_authors BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_authors_catalogue_delete AFTER DELETE ON course_authors BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_categories_catalogue_insert AFTER INSERT ON course_categories BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_categories_catalogue_update AFTER UPDATE ON course_categories BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_categories_catalogue_delete AFTER DELETE ON course_categories BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_tags_catalogue_insert AFTER INSERT ON course_tags BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_tags_catalogue_update AFTER UPDATE ON course_tags BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER course_tags_catalogue_delete AFTER DELETE ON course_tags BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER courses_catalogue_insert;
DROP TRIGGER courses_catalogue_update;
DROP TRIGGER courses_catalogue_delete;
DROP TRIGGER course_authors_catalogue_insert;
DROP TRIGGER course_authors_catalogue_update;
DROP TRIGGER course_authors_catalogue_delete;
DROP TRIGGER course_categories_catalogue_insert;
DROP TRIGGER course_categories_catalogue_update;
DROP TRIGGER course_categories_catalogue_delete;
DROP TRIGGER course_tags_catalogue_insert;
DROP TRIGGER course_tags_catalogue_update;
DROP TRIGGER course_tags_catalogue_delete;
DROP TABLE catalogue_version;
