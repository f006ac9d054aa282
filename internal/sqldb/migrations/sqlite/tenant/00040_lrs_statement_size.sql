-- +goose Up
-- The bytes of a statement's body, so a query page can stop at its byte
-- budget (internal/lrs, PageBytes) without the database reading out the
-- bodies beyond it.
ALTER TABLE lrs_statements ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
UPDATE lrs_statements SET size = length(CAST(body AS BLOB));

-- +goose Down
ALTER TABLE lrs_statements DROP COLUMN size;
