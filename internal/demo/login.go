package demo

import (
	"context"
	"fmt"
	"slices"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
)

// errOff is the answer of every demo route outside demo mode: the same 404
// as a route that does not exist.
var errOff = apperr.New(apperr.NotFound, "Not found.")

// Login logs in as the demo account of a role without a password. The
// demo student is first given access to every published course, so that
// the catalogue a visitor sees is the one they can learn from.
func (s *Service) Login(ctx context.Context, t *platform.Tenant, role string, remember bool) (auth.Issued, error) {
	if !s.On(t.Record) {
		return auth.Issued{}, errOff
	}
	if !slices.Contains(Roles, role) {
		return auth.Issued{}, apperr.Field("role", "The role must be student, tutor or admin.")
	}
	u, err := s.Account(ctx, t, role)
	if err != nil {
		return auth.Issued{}, err
	}
	if !u.IsActive {
		return auth.Issued{}, apperr.Field("role", "The demo account of this role is blocked.")
	}
	if role == access.Student {
		if err := s.grantPublished(ctx, t, u.ID); err != nil {
			return auth.Issued{}, err
		}
	}
	return s.Auth.LoginUser(ctx, t, u.ID, remember)
}

// Account is the demo account of a role: the configured one when it holds
// the role, else the first user with that role.
func (s *Service) Account(ctx context.Context, t *platform.Tenant, role string) (accounts.User, error) {
	u, err := accounts.ByEmail(ctx, t.DB, s.Email(role))
	if err == nil && slices.Contains(u.Roles, role) {
		return u, nil
	}
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return u, err
	}
	list, err := s.usersWithRole(ctx, t, role, 1)
	if err != nil {
		return accounts.User{}, err
	}
	if len(list) == 0 {
		return accounts.User{}, apperr.Field("role", fmt.Sprintf("No account has the role %s.", role))
	}
	return list[0], nil
}

// grantPublished assigns the user to every published course; courses
// already assigned stay as they are.
func (s *Service) grantPublished(ctx context.Context, t *platform.Tenant, userID int64) error {
	admin := systemAdmin(t)
	list, _, err := s.Courses.ListCourses(ctx, t, admin, courses.CourseFilter{Limit: 1000})
	if err != nil {
		return err
	}
	for _, c := range list {
		if c.Status != courses.Published && c.Status != courses.PublishedUnactivated {
			continue
		}
		if _, err := s.Courses.Assign(ctx, t, admin, c.ID, []courses.Grant{{ID: userID}}, nil); err != nil {
			return fmt.Errorf("demo: grant course %d: %w", c.ID, err)
		}
	}
	return nil
}

// User is a demo account as GET /api/demo shows it: never a password.
type User struct {
	Role  string `json:"role" enum:"student,tutor,admin"`
	Email string `json:"email"`
}

// Info is the answer of GET /api/demo.
type Info struct {
	Enabled   bool   `json:"enabled"`
	Users     []User `json:"users" doc:"The account each role logs in as; roles without an account are left out."`
	FrontURL  string `json:"front_url"`
	AdminURL  string `json:"admin_url"`
	ResetCron string `json:"reset_cron" doc:"When the demo is reset (cron, UTC)."`
}

// Describe answers GET /api/demo.
func (s *Service) Describe(ctx context.Context, t *platform.Tenant) (Info, error) {
	if !s.On(t.Record) {
		return Info{}, errOff
	}
	info := Info{Enabled: true, Users: []User{}, ResetCron: s.Config.ResetCron}
	if info.ResetCron == "" {
		info.ResetCron = DefaultCron
	}
	for _, role := range Roles {
		u, err := s.Account(ctx, t, role)
		if apperr.Is(err, apperr.Invalid) {
			continue
		}
		if err != nil {
			return Info{}, err
		}
		info.Users = append(info.Users, User{Role: role, Email: u.Email})
	}
	var err error
	if info.FrontURL, err = s.Settings.String(ctx, t, "lms_demo.front_url"); err != nil {
		return Info{}, err
	}
	if info.AdminURL, err = s.Settings.String(ctx, t, "lms_demo.admin_url"); err != nil {
		return Info{}, err
	}
	return info, nil
}
