// Package accounts holds users, their roles, groups, categories, interests
// and personal settings, the profile routes and the admin user routes.
package accounts

import (
	"crypto/rand"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lms-platform/lms/internal/apperr"
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

// Limits of the personal fields of an account.
const (
	maxNameLength  = 255
	maxPhoneLength = 32
	maxBioLength   = 5000
)

var phonePattern = regexp.MustCompile(`^\+?[0-9 ()./-]+$`)

// problems collects validation messages keyed by input field, so that one
// answer lists every mistake of a request.
type problems map[string][]string

func (p problems) add(field, message string) { p[field] = append(p[field], message) }

// err is the 422 for the collected messages, or nil when there are none.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return apperr.Validation(p)
}

// name checks a first or last name and returns it trimmed.
func (p problems) name(field, label, value string) string {
	value = strings.TrimSpace(value)
	switch {
	case value == "":
		p.add(field, fmt.Sprintf("The %s field is required.", label))
	case utf8.RuneCountInString(value) > maxNameLength:
		p.add(field, fmt.Sprintf("The %s may not be greater than %d characters.", label, maxNameLength))
	}
	return value
}

// email checks an address and returns it as stored.
func (p problems) email(value string) string {
	email, ok := NormalizeEmail(value)
	if !ok {
		p.add("email", "The email must be a valid email address.")
	}
	return email
}

// password checks the password rule on field.
func (p problems) password(field, value string) {
	if msg := ValidPassword(value); msg != "" {
		p.add(field, msg)
	}
}

// phone checks a phone number; an empty value clears the field (nil).
func (p problems) phone(value string) *string {
	value = strings.TrimSpace(value)
	switch {
	case value == "":
		return nil
	case len(value) > maxPhoneLength:
		p.add("phone", fmt.Sprintf("The phone may not be greater than %d characters.", maxPhoneLength))
	case !phonePattern.MatchString(value):
		p.add("phone", "The phone may only contain digits, spaces and + ( ) . / -.")
	}
	return &value
}

// bio checks a biography; an empty value clears the field (nil).
func (p problems) bio(value string) *string {
	if strings.TrimSpace(value) == "" {
		return nil
	}
	if utf8.RuneCountInString(value) > maxBioLength {
		p.add("bio", fmt.Sprintf("The bio may not be greater than %d characters.", maxBioLength))
	}
	return &value
}

// randomPassword is the password of an account an admin creates without
// one: nobody knows it, so the user sets their own through a reset.
func randomPassword() string {
	return rand.Text() + rand.Text()
}
