-- +goose Up
-- A user's roles are kept by name. The role catalogue (roles, with the
-- permissions of each) is seeded from code and belongs to access; naming
-- the role here lets accounts read and filter users by role without
-- joining access's table. SQLite cannot drop a key column, so the table is
-- rebuilt.
CREATE TABLE user_roles_by_name (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    PRIMARY KEY (user_id, role)
);
INSERT INTO user_roles_by_name (user_id, role)
    SELECT ur.user_id, r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id;
DROP TABLE user_roles;
ALTER TABLE user_roles_by_name RENAME TO user_roles;
CREATE INDEX user_roles_role ON user_roles(role);

-- +goose Down
CREATE TABLE user_roles_by_id (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, role_id)
);
INSERT INTO user_roles_by_id (user_id, role_id)
    SELECT ur.user_id, r.id FROM user_roles ur JOIN roles r ON r.name = ur.role;
DROP TABLE user_roles;
ALTER TABLE user_roles_by_id RENAME TO user_roles;
