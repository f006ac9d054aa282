-- +goose Up
-- The reset state of demo tenants: the baseline each reset restores (JSON
-- of name, theme, accent and students; empty until one is recorded) and
-- when the tenant was last reset.
CREATE TABLE demo_tenants (
    tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
    baseline TEXT NOT NULL DEFAULT '',
    captured_at DATETIME,
    last_reset_at DATETIME
);

-- +goose Down
DROP TABLE demo_tenants;
