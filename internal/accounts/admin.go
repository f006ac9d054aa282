package accounts

import (
	"context"
	"fmt"
	"slices"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The admin user operations: list, create, read, update, delete.

// NewAccount is a user an admin creates.
type NewAccount struct {
	Email     string
	Password  string // empty: a random one the user replaces by a reset
	FirstName string
	LastName  string
	Phone     *string
	Bio       *string
	Roles     []string // nil: student
	IsActive  *bool    // nil: active
	// EmailVerified marks the address verified; nil: not verified.
	EmailVerified *bool
	Groups        []int64
	Categories    []int64
}

// AccountChange is an admin's change of a user; nil fields stay as they
// are, so a PATCH sets only what it names.
type AccountChange struct {
	Email         *string
	Password      *string
	FirstName     *string
	LastName      *string
	Phone         *string // "" clears
	Bio           *string // "" clears
	Roles         []string
	IsActive      *bool
	EmailVerified *bool
	Groups        []int64
	Categories    []int64
}

// ListUsers returns one page of users.
func (s *Service) ListUsers(ctx context.Context, t *platform.Tenant, p *access.Principal, f UserFilter) ([]Summary, int64, error) {
	if err := allow(p.Has(access.UserList)); err != nil {
		return nil, 0, err
	}
	users, total, err := listUsers(ctx, t.DB, f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Summary, len(users))
	for i, u := range users {
		out[i] = SummaryOf(u)
	}
	return out, total, nil
}

// User returns one user with its categories, interests and groups.
func (s *Service) User(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (Detail, error) {
	if err := allow(canReadUser(p, id)); err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, t, id)
}

// checkRoles adds a problem on "roles" for every name that is no role of
// the catalogue.
func checkRoles(p problems, roles []string) {
	for _, r := range roles {
		if !slices.Contains(access.Roles, r) {
			p.add("roles", fmt.Sprintf("The role %q does not exist.", r))
		}
	}
}

// references checks the roles, categories and groups an input names and
// returns the groups.
func references(ctx context.Context, q sqldb.Querier, p problems, roles []string, categories, groups []int64) ([]int64, []Group, error) {
	checkRoles(p, roles)
	cats, err := checkCategories(ctx, q, p, "categories", categories)
	if err != nil {
		return nil, nil, err
	}
	gs, err := checkGroups(ctx, q, p, "groups", groups)
	return cats, gs, err
}

// CreateUser adds a user with roles, groups and categories. Every broken
// rule is reported at once as a 422, and nothing is stored.
func (s *Service) CreateUser(ctx context.Context, t *platform.Tenant, p *access.Principal, in NewAccount) (Detail, error) {
	if err := allow(p.Has(access.UserCreate)); err != nil {
		return Detail{}, err
	}
	probs := problems{}
	email := probs.email(in.Email)
	first := probs.name("first_name", "first name", in.FirstName)
	last := probs.name("last_name", "last name", in.LastName)
	password := in.Password
	if password == "" {
		password = randomPassword()
	} else {
		probs.password("password", password)
	}
	var phone, bio *string
	if in.Phone != nil {
		phone = probs.phone(*in.Phone)
	}
	if in.Bio != nil {
		bio = probs.bio(*in.Bio)
	}
	roles := in.Roles
	if roles == nil {
		roles = []string{access.Student}
	}
	cats, groups, err := references(ctx, t.DB, probs, roles, in.Categories, in.Groups)
	if err != nil {
		return Detail{}, err
	}
	if err := probs.err(); err != nil {
		return Detail{}, err
	}
	hash, err := s.Passwords.Hash(password)
	if err != nil {
		return Detail{}, fmt.Errorf("accounts: hash password: %w", err)
	}
	var id int64
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		now := s.now()
		u, err := Create(ctx, tx, now, NewUser{Email: email, FirstName: first, LastName: last, PasswordHash: hash,
			Roles: roles, IsActive: in.IsActive == nil || *in.IsActive, Verified: in.EmailVerified != nil && *in.EmailVerified})
		if err != nil {
			return err
		}
		id = u.ID
		if phone != nil || bio != nil {
			if err := updateUser(ctx, tx, now, id, []column{{"phone", phone}, {"bio", bio}}); err != nil {
				return err
			}
		}
		if err := setCategories(ctx, tx, "user_categories", id, cats, false); err != nil {
			return err
		}
		return setGroups(ctx, tx, now, u, groups)
	})
	if err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, t, id)
}

// UpdateUser changes what the change names. Blocking a user records
// AccountBlocked and ends its sessions at once; a new password records
// PasswordChanged and ends them too. Admins cannot block themselves or
// drop their own admin role.
func (s *Service) UpdateUser(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, in AccountChange) (Detail, error) {
	if err := allow(p.Has(access.UserUpdate)); err != nil {
		return Detail{}, err
	}
	u, err := ByID(ctx, t.DB, id)
	if err != nil {
		return Detail{}, err
	}
	now := s.now()
	probs := problems{}
	var cols []column
	if in.Email != nil {
		cols = append(cols, column{"email", probs.email(*in.Email)})
	}
	cols = append(cols, personalColumns(probs, in.FirstName, in.LastName, in.Phone, in.Bio)...)
	if in.Password != nil {
		probs.password("password", *in.Password)
	}
	blocking := in.IsActive != nil && !*in.IsActive && u.IsActive
	if in.IsActive != nil {
		if !*in.IsActive && own(p, id) {
			probs.add("is_active", "You cannot block your own account.")
		}
		cols = append(cols, column{"is_active", *in.IsActive})
	}
	if in.EmailVerified != nil {
		switch {
		case *in.EmailVerified && !u.Verified():
			cols = append(cols, column{"email_verified_at", now})
		case !*in.EmailVerified:
			cols = append(cols, column{"email_verified_at", nil})
		}
	}
	if in.Roles != nil && own(p, id) && slices.Contains(u.Roles, access.Admin) && !slices.Contains(in.Roles, access.Admin) {
		probs.add("roles", "You cannot remove your own admin role.")
	}
	cats, groups, err := references(ctx, t.DB, probs, in.Roles, in.Categories, in.Groups)
	if err != nil {
		return Detail{}, err
	}
	if err := probs.err(); err != nil {
		return Detail{}, err
	}
	if in.Password != nil {
		hash, err := s.Passwords.Hash(*in.Password)
		if err != nil {
			return Detail{}, fmt.Errorf("accounts: hash password: %w", err)
		}
		cols = append(cols, column{"password_hash", hash})
	}
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		if err := updateUser(ctx, tx, now, id, cols); err != nil {
			return err
		}
		changed, err := ByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if in.Roles != nil {
			if err := SetRoles(ctx, tx, id, in.Roles); err != nil {
				return err
			}
		}
		if in.Categories != nil {
			if err := setCategories(ctx, tx, "user_categories", id, cats, false); err != nil {
				return err
			}
		}
		if in.Groups != nil {
			if err := setGroups(ctx, tx, now, changed, groups); err != nil {
				return err
			}
		}
		payload := map[string]any{"email": changed.Email, "name": changed.Name(), "by": p.UserID}
		if blocking {
			if err := events.Emit(ctx, tx, now, events.Event{Name: events.AccountBlocked, UserID: id, Payload: payload}); err != nil {
				return err
			}
		}
		if in.Password != nil {
			if err := events.Emit(ctx, tx, now, events.Event{Name: events.PasswordChanged, UserID: id, Payload: payload}); err != nil {
				return err
			}
		}
		if blocking || in.Password != nil {
			return s.revokeSessions(ctx, tx, now, id)
		}
		return nil
	})
	if err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, t, id)
}

// DeleteUser deletes another user's account; admins delete their own
// through the profile routes.
func (s *Service) DeleteUser(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) error {
	if err := allow(p.Has(access.UserDelete)); err != nil {
		return err
	}
	u, err := ByID(ctx, t.DB, id)
	if err != nil {
		return err
	}
	if own(p, id) {
		return apperr.Field("id", "You cannot delete your own account here.")
	}
	return s.deleteAccount(ctx, t, u, map[string]any{"by": p.UserID}, "")
}
