package accounts

import (
	"context"
	"fmt"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Person is a user as message templates see it; found is false for a user
// who no longer exists.
func Person(ctx context.Context, q sqldb.Querier, id int64) (notify.TemplateUser, bool, error) {
	u, err := ByID(ctx, q, id)
	if apperr.Is(err, apperr.NotFound) {
		return notify.TemplateUser{ID: id}, false, nil
	}
	if err != nil {
		return notify.TemplateUser{}, false, err
	}
	return person(u), true, nil
}

func person(u User) notify.TemplateUser {
	return notify.TemplateUser{ID: u.ID, Name: u.Name(), FirstName: u.FirstName, LastName: u.LastName, Email: u.Email}
}

// ActiveAdmins lists the active users of the admin role, who receive the
// mails addressed to the tenant's admins.
func ActiveAdmins(ctx context.Context, q sqldb.Querier) ([]notify.TemplateUser, error) {
	rows, err := q.QueryContext(ctx, `SELECT u.id, u.email, u.first_name, u.last_name FROM users u
		JOIN user_roles ur ON ur.user_id = u.id
		WHERE ur.role = $1 AND u.is_active ORDER BY u.id`, access.Admin)
	if err != nil {
		return nil, fmt.Errorf("accounts: list admins: %w", err)
	}
	defer rows.Close()
	var out []notify.TemplateUser
	for rows.Next() {
		var u User
		if err := rows.Scan(&u.ID, &u.Email, &u.FirstName, &u.LastName); err != nil {
			return nil, err
		}
		out = append(out, person(u))
	}
	return out, rows.Err()
}
