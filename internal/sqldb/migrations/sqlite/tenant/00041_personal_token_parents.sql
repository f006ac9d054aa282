-- +goose Up
-- The scoped token that created a token (NULL when a signed access token
-- did): a token's child never outlives, outpaces or outlasts it, and
-- revoking a token revokes the tokens it made, transitively.
ALTER TABLE personal_tokens ADD COLUMN parent_id TEXT;
CREATE INDEX personal_tokens_parent ON personal_tokens(parent_id);

-- +goose Down
DROP INDEX personal_tokens_parent;
ALTER TABLE personal_tokens DROP COLUMN parent_id;
