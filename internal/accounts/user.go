// Package accounts holds users, their roles, groups, categories, interests
// and personal settings, the profile routes and the admin user routes.
package accounts

import (
	"net/mail"
	"strings"
	"time"
)

// User is an account of a tenant.
type User struct {
	ID              int64
	Email           string
	FirstName       string
	LastName        string
	Phone           *string
	Bio             *string
	PasswordHash    string
	IsActive        bool
	EmailVerifiedAt *time.Time
	AvatarPath      *string
	Roles           []string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Name is the display name.
func (u User) Name() string {
	return strings.TrimSpace(u.FirstName + " " + u.LastName)
}

// Verified reports whether the e-mail address is verified.
func (u User) Verified() bool { return u.EmailVerifiedAt != nil }

// NormalizeEmail lower-cases and trims an address, as it is stored, and
// reports whether it is a plain valid address.
func NormalizeEmail(email string) (string, bool) {
	email = strings.ToLower(strings.TrimSpace(email))
	a, err := mail.ParseAddress(email)
	return email, err == nil && a.Address == email && len(email) <= 254
}

// ValidPassword checks the password rule shared by registration, reset,
// profile and admin user creation; it returns the message of a broken rule.
func ValidPassword(password string) string {
	switch {
	case len(password) < 8:
		return "The password must be at least 8 characters."
	case len(password) > 256:
		return "The password may not be greater than 256 characters."
	}
	return ""
}
