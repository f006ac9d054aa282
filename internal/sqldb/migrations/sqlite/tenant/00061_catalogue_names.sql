-- +goose Up
-- The catalogue shows its authors' and categories' names: renaming one
-- moves the catalogue's counter too, so a kept page is served whole,
-- names included, with the one lookup of the counter.
-- +goose StatementBegin
CREATE TRIGGER users_catalogue_names AFTER UPDATE OF first_name, last_name ON users BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER categories_catalogue_insert AFTER INSERT ON categories BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER categories_catalogue_update AFTER UPDATE ON categories BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER categories_catalogue_delete AFTER DELETE ON categories BEGIN
    UPDATE catalogue_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER categories_catalogue_delete;
DROP TRIGGER categories_catalogue_update;
DROP TRIGGER categories_catalogue_insert;
DROP TRIGGER users_catalogue_names;
