-- +goose Up
-- A user's roles are kept by name. The role catalogue (roles, with the
-- permissions of each) is seeded from code and belongs to access; naming
-- the role here lets accounts read and filter users by role without
-- joining access's table.
ALTER TABLE user_roles ADD COLUMN role TEXT;
UPDATE user_roles ur SET role = r.name FROM roles r WHERE r.id = ur.role_id;
-- Dropping the column drops the key and the reference it is part of.
ALTER TABLE user_roles DROP COLUMN role_id;
ALTER TABLE user_roles ALTER COLUMN role SET NOT NULL;
ALTER TABLE user_roles ADD PRIMARY KEY (user_id, role);
CREATE INDEX user_roles_role ON user_roles(role);

-- +goose Down
DROP INDEX user_roles_role;
ALTER TABLE user_roles DROP CONSTRAINT user_roles_pkey;
ALTER TABLE user_roles ADD COLUMN role_id BIGINT REFERENCES roles(id) ON DELETE CASCADE;
UPDATE user_roles ur SET role_id = r.id FROM roles r WHERE r.name = ur.role;
ALTER TABLE user_roles DROP COLUMN role;
ALTER TABLE user_roles ALTER COLUMN role_id SET NOT NULL;
ALTER TABLE user_roles ADD PRIMARY KEY (user_id, role_id);
