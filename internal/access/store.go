package access

import (
	"context"
	"fmt"

	"github.com/lms-platform/lms/internal/sqldb"
)

// SeedRoles writes the roles and the permission table into a tenant
// database. It is idempotent, so it runs on every tenant migration, that is
// every time a tenant is opened; it writes only when something is missing,
// since its some hundred statements take most of the time a tenant takes to
// open.
func SeedRoles(ctx context.Context, db *sqldb.DB) error {
	if done, err := seeded(ctx, db); err != nil || done {
		return err
	}
	// One transaction: a new database takes some 160 rows, one commit.
	return db.Tx(ctx, func(tx *sqldb.Tx) error {
		insertIgnore := "INSERT INTO %s (name) VALUES ($1) ON CONFLICT (name) DO NOTHING"
		for _, role := range Roles {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(insertIgnore, "roles"), role); err != nil {
				return fmt.Errorf("access: seed role %s: %w", role, err)
			}
		}
		for _, row := range Seed {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(insertIgnore, "permissions"), string(row.Permission)); err != nil {
				return fmt.Errorf("access: seed permission %s: %w", row.Permission, err)
			}
			for _, role := range row.Roles {
				_, err := tx.ExecContext(ctx, `INSERT INTO role_permissions (role_id, permission_id)
					SELECT r.id, p.id FROM roles r, permissions p WHERE r.name = $1 AND p.name = $2
					ON CONFLICT (role_id, permission_id) DO NOTHING`, role, string(row.Permission))
				if err != nil {
					return fmt.Errorf("access: grant %s to %s: %w", row.Permission, role, err)
				}
			}
		}
		return nil
	})
}

// seeded reports whether the database holds every role, permission and
// grant of the seed.
func seeded(ctx context.Context, q sqldb.Querier) (bool, error) {
	have := map[string]bool{}
	rows, err := q.QueryContext(ctx, `SELECT 'role:' || name FROM roles
		UNION ALL SELECT 'permission:' || name FROM permissions
		UNION ALL SELECT 'grant:' || r.name || ':' || p.name FROM role_permissions rp
			JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id`)
	if err != nil {
		return false, fmt.Errorf("access: read the seeded roles: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return false, err
		}
		have[name] = true
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	for _, role := range Roles {
		if !have["role:"+role] {
			return false, nil
		}
	}
	for _, row := range Seed {
		if !have["permission:"+string(row.Permission)] {
			return false, nil
		}
		for _, role := range row.Roles {
			if !have["grant:"+role+":"+string(row.Permission)] {
				return false, nil
			}
		}
	}
	return true, nil
}

// RolePermissions loads which permissions each role holds.
func RolePermissions(ctx context.Context, q sqldb.Querier) (map[string][]Permission, error) {
	rows, err := q.QueryContext(ctx, `SELECT r.name, p.name FROM role_permissions rp
		JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id`)
	if err != nil {
		return nil, fmt.Errorf("access: load role permissions: %w", err)
	}
	defer rows.Close()
	out := map[string][]Permission{}
	for rows.Next() {
		var role, perm string
		if err := rows.Scan(&role, &perm); err != nil {
			return nil, err
		}
		out[seedName(role)] = append(out[seedName(role)], Permission(seedName(perm)))
	}
	return out, rows.Err()
}

// seedNames are the seed's role and permission names. Every open tenant
// keeps its role table, a hundred and more names: those of the seed are
// shared, not read into copies of their own for each tenant.
var seedNames = func() map[string]string {
	out := map[string]string{}
	for _, role := range Roles {
		out[role] = role
	}
	for _, row := range Seed {
		out[string(row.Permission)] = string(row.Permission)
	}
	return out
}()

// seedName returns the seed's copy of name, or name when the seed has none.
func seedName(name string) string {
	if shared, ok := seedNames[name]; ok {
		return shared
	}
	return name
}
