-- +goose Up
-- The catalogue shows its authors' and categories' names: renaming one
-- moves the catalogue's counter too, so a kept page is served whole,
-- names included, with the one lookup of the counter.
CREATE TRIGGER users_catalogue_version AFTER UPDATE OF first_name, last_name ON users
    FOR EACH STATEMENT EXECUTE FUNCTION bump_catalogue_version();
CREATE TRIGGER categories_catalogue_version AFTER INSERT OR UPDATE OR DELETE ON categories
    FOR EACH STATEMENT EXECUTE FUNCTION bump_catalogue_version();

-- +goose Down
DROP TRIGGER categories_catalogue_version ON categories;
DROP TRIGGER users_catalogue_version ON users;
