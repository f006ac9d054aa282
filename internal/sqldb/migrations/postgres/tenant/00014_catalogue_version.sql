-- +goose Up
-- One counter per tenant that moves whenever a course, its authors, its
-- categories or its tags are added, changed or removed, however it happens,
-- so that a cached page of the public catalogue is checked with one lookup.
CREATE TABLE catalogue_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL DEFAULT 0
);
INSERT INTO catalogue_version (id, version) VALUES (1, 0);

-- +goose StatementBegin
CREATE FUNCTION bump_catalogue_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE catalogue_version SET version = version + 1;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- Once per statement: a statement changing many rows moves the counter once.
CREATE TRIGGER courses_catalogue_version AFTER INSERT OR UPDATE OR DELETE ON courses
    FOR EACH STATEMENT EXECUTE FUNCTION bump_catalogue_version();
CREATE TRIGGER course_authors_catalogue_version AFTER INSERT OR UPDATE OR DELETE ON course_authors
    FOR EACH STATEMENT EXECUTE FUNCTION bump_catalogue_version();
CREATE TRIGGER course_categories_catalogue_version AFTER INSERT OR UPDATE OR DELETE ON course_categories
    FOR EACH STATEMENT EXECUTE FUNCTION bump_catalogue_version();
CREATE TRIGGER course_tags_catalogue_version AFTER INSERT OR UPDATE OR DELETE ON course_tags
    FOR EACH STATEMENT EXECUTE FUNCTION bump_catalogue_version();

-- +goose Down
DROP TRIGGER course_tags_catalogue_version ON course_tags;
DROP TRIGGER course_categories_catalogue_version ON course_categories;
DROP TRIGGER course_authors_catalogue_version ON course_authors;
DROP TRIGGER courses_catalogue_version ON courses;
DROP FUNCTION bump_catalogue_version();
DROP TABLE catalogue_version;
