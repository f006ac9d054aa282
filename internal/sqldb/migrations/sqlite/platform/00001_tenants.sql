-- +goose Up
-- The tenant registry. database and blob_prefix are names, never URLs with
-- credentials: the servers come from the process configuration.
CREATE TABLE tenants (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    database_name TEXT NOT NULL UNIQUE,
    blob_prefix TEXT NOT NULL UNIQUE,
    key_id TEXT NOT NULL,
    public_key TEXT NOT NULL,
    private_key_sealed TEXT NOT NULL,
    is_platform BOOLEAN NOT NULL DEFAULT FALSE,
    is_demo BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

CREATE TABLE tenant_hosts (
    host TEXT PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE
);
CREATE INDEX tenant_hosts_tenant ON tenant_hosts(tenant_id);

-- +goose Down
DROP TABLE tenant_hosts;
DROP TABLE tenants;
