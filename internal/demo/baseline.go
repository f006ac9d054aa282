package demo

import (
	"context"
	"slices"
	"strings"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/platform"
)

// Baseline is what a reset restores besides the seeded courses: the
// tenant's name, the look of the demo (theme and accent, kept as personal
// settings of the demo accounts, where a frontend reads them through
// GET /api/profile/settings) and the students the demo shows beside the
// demo student. `lms demo reset --recapture` records a new one from the
// tenant as it is; until then Default applies.
type Baseline struct {
	Name     string    `json:"name"`
	Theme    string    `json:"theme"`
	Accent   string    `json:"accent"`
	Students []Student `json:"students"`
}

// Student is a student account of the baseline. PasswordHash keeps the
// password the account had when the baseline was recorded, so accounts an
// operator prepared can still log in after a reset; empty, the account
// gets a random password (the demo login needs none).
type Student struct {
	Email        string `json:"email"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name"`
	PasswordHash string `json:"password_hash,omitempty"`
}

// Theme keys of the demo accounts' personal settings.
const (
	themeKey  = "theme"
	accentKey = "accent"
)

// DefaultBaseline is the baseline of a demo tenant that has not recorded
// one: its current name, a light theme with a blue accent, and three
// sample students so that lists and course access look lived in.
func DefaultBaseline(rec platform.Record) Baseline {
	return Baseline{Name: rec.Name, Theme: "light", Accent: "#2563eb", Students: []Student{
		{Email: "maria.garcia@demo.local", FirstName: "Maria", LastName: "Garcia"},
		{Email: "kenji.sato@demo.local", FirstName: "Kenji", LastName: "Sato"},
		{Email: "amara.okafor@demo.local", FirstName: "Amara", LastName: "Okafor"},
	}}
}

// baseline is the tenant's recorded baseline, or the default.
func (s *Service) baseline(ctx context.Context, rec platform.Record) (Baseline, error) {
	st, err := s.loadState(ctx, rec.ID)
	if err != nil {
		return Baseline{}, err
	}
	if st.Baseline != nil {
		return *st.Baseline, nil
	}
	return DefaultBaseline(rec), nil
}

// capture reads a new baseline from the tenant as it is now: its name,
// the theme and accent of the demo admin (falling back to the current
// baseline's), and every account whose only role is student, except the
// demo student.
func (s *Service) capture(ctx context.Context, t *platform.Tenant) (Baseline, error) {
	current, err := s.baseline(ctx, t.Record)
	if err != nil {
		return Baseline{}, err
	}
	b := Baseline{Name: t.Name, Theme: current.Theme, Accent: current.Accent, Students: []Student{}}
	if admin, err := s.Account(ctx, t, access.Admin); err == nil {
		settings, err := s.Accounts.Settings(ctx, t, systemAdmin(t), admin.ID)
		if err != nil {
			return Baseline{}, err
		}
		if v := strings.TrimSpace(settings[themeKey]); v != "" {
			b.Theme = v
		}
		if v := strings.TrimSpace(settings[accentKey]); v != "" {
			b.Accent = v
		}
	}
	students, err := s.usersWithRole(ctx, t, access.Student, 10000)
	if err != nil {
		return Baseline{}, err
	}
	for _, u := range students {
		if len(u.Roles) != 1 || s.isDemoAccount(u.Email) {
			continue
		}
		b.Students = append(b.Students, Student{Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
			PasswordHash: u.PasswordHash})
	}
	slices.SortFunc(b.Students, func(x, y Student) int { return strings.Compare(x.Email, y.Email) })
	return b, nil
}
