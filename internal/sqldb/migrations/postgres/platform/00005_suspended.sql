-- +goose Up
-- A suspended tenant keeps its data but is served no request and runs no
-- job (internal/platform); NULL while it is active.
ALTER TABLE tenants ADD COLUMN suspended_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE tenants DROP COLUMN suspended_at;
