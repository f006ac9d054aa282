package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Settings is what auth reads of the administrable configuration.
type Settings interface {
	String(ctx context.Context, t *platform.Tenant, key string) (string, error)
	Bool(ctx context.Context, t *platform.Tenant, key string) (bool, error)
	Int(ctx context.Context, t *platform.Tenant, key string) (int, error)
}

// Service carries the authentication flows.
type Service struct {
	Clock     clock.Clock
	Passwords *Passwords
	Settings  Settings
	// Mail sends the reset and verification mails on their templates.
	Mail *notify.Channels
}

const (
	resetTokenLifetime  = time.Hour
	verifyLinkLifetime  = 7 * 24 * time.Hour
	deleteTokenLifetime = 24 * time.Hour
)

func (s *Service) enabled(ctx context.Context, t *platform.Tenant, key string) (bool, error) {
	v, err := s.Settings.String(ctx, t, key)
	return v == "enabled", err
}

// Login checks credentials and issues a token. Every refusal is a 422.
func (s *Service) Login(ctx context.Context, t *platform.Tenant, email, password string, remember bool) (Issued, error) {
	u, err := accounts.ByEmail(ctx, t.DB, email)
	if apperr.Is(err, apperr.NotFound) {
		s.Passwords.VerifyNothing(password)
		return Issued{}, apperr.Field("email", "Invalid credentials.")
	}
	if err != nil {
		return Issued{}, err
	}
	if !s.Passwords.Verify(u.PasswordHash, password) {
		return Issued{}, apperr.Field("email", "Invalid credentials.")
	}
	return s.LoginAccount(ctx, t, u, remember)
}

// LoginAccount logs in a user whose identity is already proven (a password,
// a social provider): blocked accounts and addresses still waiting for
// verification are refused with 422, as every login refuses them.
func (s *Service) LoginAccount(ctx context.Context, t *platform.Tenant, u accounts.User, remember bool) (Issued, error) {
	if !u.IsActive {
		return Issued{}, apperr.Field("email", "Your account is blocked or not yet enabled by an administrator.")
	}
	autoVerified, err := s.enabled(ctx, t, "lms_auth.auto_verified_email")
	if err != nil {
		return Issued{}, err
	}
	if !u.Verified() && !autoVerified {
		return Issued{}, apperr.Field("email", "Your e-mail address is not verified.")
	}
	return s.issueWithEvent(ctx, t, u.ID, remember, 0, events.Event{Name: events.Login, UserID: u.ID})
}

// issueWithEvent issues a token of the class and records ev in one
// transaction.
func (s *Service) issueWithEvent(ctx context.Context, t *platform.Tenant, userID int64, remember bool,
	impersonator int64, ev events.Event) (Issued, error) {
	minutes, err := s.Settings.Int(ctx, t, "lms_auth.token_expiration_minutes")
	if err != nil {
		return Issued{}, err
	}
	var out Issued
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		now := s.Clock.Now()
		out, err = Issue(ctx, tx, t, now, userID, tokenLifetime(remember, minutes), remember, impersonator)
		if err != nil {
			return err
		}
		return events.Emit(ctx, tx, now, ev)
	})
	return out, err
}

// Refresh replaces the caller's token with a new one of the same lifetime
// class: remember-me tokens get another month.
func (s *Service) Refresh(ctx context.Context, t *platform.Tenant, p *access.Principal) (Issued, error) {
	var remember bool
	if err := t.DB.QueryRowContext(ctx, `SELECT remember FROM access_tokens WHERE id = $1`, p.TokenID).Scan(&remember); err != nil {
		return Issued{}, fmt.Errorf("auth: load token class: %w", err)
	}
	minutes, err := s.Settings.Int(ctx, t, "lms_auth.token_expiration_minutes")
	if err != nil {
		return Issued{}, err
	}
	var out Issued
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		now := s.Clock.Now()
		if err := Revoke(ctx, tx, now, p.TokenID); err != nil {
			return err
		}
		out, err = Issue(ctx, tx, t, now, p.UserID, tokenLifetime(remember, minutes), remember, p.ImpersonatorID)
		return err
	})
	return out, err
}

// Logout revokes the caller's current token.
func (s *Service) Logout(ctx context.Context, t *platform.Tenant, p *access.Principal) error {
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		now := s.Clock.Now()
		if err := Revoke(ctx, tx, now, p.TokenID); err != nil {
			return err
		}
		return events.Emit(ctx, tx, now, events.Event{Name: events.Logout, UserID: p.UserID})
	})
}

// Registration is the input of Register.
type Registration struct {
	Email     string
	Password  string
	FirstName string
	LastName  string
	Groups    []int64
	ReturnURL string
	// Origin is the scheme and host the request came to, for the
	// verification link.
	Origin string
}

// Register creates an account as the registration settings say.
func (s *Service) Register(ctx context.Context, t *platform.Tenant, in Registration) (accounts.User, error) {
	if err := s.registrationOpen(ctx, t); err != nil {
		return accounts.User{}, err
	}
	if err := s.checkReturnURL(ctx, t, in.ReturnURL); err != nil {
		return accounts.User{}, err
	}
	if msg := accounts.ValidPassword(in.Password); msg != "" {
		return accounts.User{}, apperr.Field("password", msg)
	}
	hash, err := s.Passwords.Hash(in.Password)
	if err != nil {
		return accounts.User{}, err
	}
	return s.register(ctx, t, in, hash, false, nil)
}

// RegisterExternal creates the account of a person whose identity another
// service proved (social login): no password, the address verified when
// that service vouches for it, under the same registration settings and
// events as Register. within runs in the same transaction, so what ties
// the account to its identity is written with it or not at all.
func (s *Service) RegisterExternal(ctx context.Context, t *platform.Tenant, in Registration, emailVerified bool,
	within func(tx *sqldb.Tx, u accounts.User) error) (accounts.User, error) {
	if err := s.registrationOpen(ctx, t); err != nil {
		return accounts.User{}, err
	}
	return s.register(ctx, t, in, "", emailVerified, within)
}

func (s *Service) registrationOpen(ctx context.Context, t *platform.Tenant) error {
	open, err := s.enabled(ctx, t, "lms_auth.registration")
	if err != nil {
		return err
	}
	if !open {
		return apperr.New(apperr.Forbidden, "Registration is disabled.")
	}
	return nil
}

func (s *Service) register(ctx context.Context, t *platform.Tenant, in Registration, hash string, verified bool,
	within func(tx *sqldb.Tx, u accounts.User) error) (accounts.User, error) {
	byAdmin, err := s.enabled(ctx, t, "lms_auth.account_must_be_enabled_by_admin")
	if err != nil {
		return accounts.User{}, err
	}
	autoVerified, err := s.enabled(ctx, t, "lms_auth.auto_verified_email")
	if err != nil {
		return accounts.User{}, err
	}
	var u accounts.User
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		now := s.Clock.Now()
		u, err = accounts.Create(ctx, tx, now, accounts.NewUser{Email: in.Email, FirstName: in.FirstName,
			LastName: in.LastName, PasswordHash: hash, Roles: []string{access.Student}, IsActive: !byAdmin,
			Verified: verified || autoVerified})
		if err != nil {
			return err
		}
		if err := accounts.JoinRegisterableGroups(ctx, tx, now, u, in.Groups); err != nil {
			return err
		}
		if within != nil {
			if err := within(tx, u); err != nil {
				return err
			}
		}
		payload := map[string]any{"email": u.Email, "return_url": in.ReturnURL, "origin": in.Origin}
		if err := events.Emit(ctx, tx, now, events.Event{Name: events.AccountRegistered, UserID: u.ID, Payload: payload}); err != nil {
			return err
		}
		if byAdmin {
			return events.Emit(ctx, tx, now, events.Event{Name: events.AccountMustBeEnableByAdmin, UserID: u.ID, Payload: payload})
		}
		return nil
	})
	return u, err
}

// verifyHash ties a verification link to the address it was sent to.
func verifyHash(email string) string {
	sum := sha256.Sum256([]byte(email))
	return hex.EncodeToString(sum[:])
}

func signLink(key []byte, parts ...string) string {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// VerificationURL is the signed link that verifies the user's address.
func (s *Service) VerificationURL(t *platform.Tenant, origin string, u accounts.User) string {
	expires := strconv.FormatInt(s.Clock.Now().Add(verifyLinkLifetime).Unix(), 10)
	id := strconv.FormatInt(u.ID, 10)
	hash := verifyHash(u.Email)
	q := url.Values{"expires": {expires}, "signature": {signLink(t.URLKey, "verify", id, hash, expires)}}
	return origin + "/api/auth/email/verify/" + id + "/" + hash + "?" + q.Encode()
}

// VerifyEmail checks a signed link and marks the address verified.
func (s *Service) VerifyEmail(ctx context.Context, t *platform.Tenant, id int64, hash, expires, signature string) error {
	want := signLink(t.URLKey, "verify", strconv.FormatInt(id, 10), hash, expires)
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || subtle.ConstantTimeCompare([]byte(want), []byte(signature)) != 1 {
		return apperr.New(apperr.Forbidden, "Invalid signature.")
	}
	if s.Clock.Now().Unix() > exp {
		return apperr.New(apperr.Forbidden, "The verification link has expired.")
	}
	u, err := accounts.ByID(ctx, t.DB, id)
	if err != nil {
		return err
	}
	if verifyHash(u.Email) != hash {
		return apperr.New(apperr.Forbidden, "Invalid signature.")
	}
	if u.Verified() {
		return nil
	}
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		now := s.Clock.Now()
		if err := accounts.MarkVerified(ctx, tx, now, id); err != nil {
			return err
		}
		return events.Emit(ctx, tx, now, events.Event{Name: events.AccountConfirmed, UserID: id})
	})
}

// SendVerification mails the verification link now (resend).
func (s *Service) SendVerification(ctx context.Context, t *platform.Tenant, origin string, userID int64) error {
	u, err := accounts.ByID(ctx, t.DB, userID)
	if err != nil {
		return err
	}
	if u.Verified() {
		return apperr.New(apperr.Conflict, "The e-mail address is already verified.")
	}
	return s.sendVerification(ctx, t, 0, u, origin)
}

// sendVerification mails the verification link on the AccountRegistered
// template, once per event (eventID 0: a resend, sent each time).
func (s *Service) sendVerification(ctx context.Context, t *platform.Tenant, eventID int64, u accounts.User, origin string) error {
	d, _, err := s.Mail.Data(ctx, t, events.Stored{ID: eventID, Name: events.AccountRegistered, UserID: u.ID,
		CreatedAt: s.Clock.Now()})
	if err != nil {
		return err
	}
	d.Link = s.VerificationURL(t, origin, u)
	return s.Mail.Mail(ctx, t, eventID, userSlot(events.AccountRegistered), u.Email, d)
}

// ForgotPassword records the request as an event; its listener stores the
// reset token and mails it. Unknown addresses succeed silently so the
// answer does not reveal which addresses have accounts.
func (s *Service) ForgotPassword(ctx context.Context, t *platform.Tenant, email, returnURL string) error {
	// Checked before the address is looked up: the answer tells nothing
	// of which addresses have accounts.
	if err := s.checkReturnURL(ctx, t, returnURL); err != nil {
		return err
	}
	u, err := accounts.ByEmail(ctx, t.DB, email)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		return events.Emit(ctx, tx, s.Clock.Now(), events.Event{Name: events.ForgotPassword, UserID: u.ID,
			Payload: map[string]any{"email": u.Email, "return_url": returnURL}})
	})
}

// ResetPassword consumes a reset token and sets the new password; every
// session of the user ends.
func (s *Service) ResetPassword(ctx context.Context, t *platform.Tenant, email, token, password string) error {
	if msg := accounts.ValidPassword(password); msg != "" {
		return apperr.Field("password", msg)
	}
	u, err := accounts.ByEmail(ctx, t.DB, email)
	if err != nil {
		return apperr.Field("token", "This password reset token is invalid.")
	}
	stored, at, err := accounts.ResetToken(ctx, t.DB, u.ID)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	if stored == nil || at == nil || subtle.ConstantTimeCompare([]byte(*stored), []byte(hashToken(token))) != 1 {
		return apperr.Field("token", "This password reset token is invalid.")
	}
	if now.Sub(*at) > resetTokenLifetime {
		return apperr.Field("token", "This password reset token has expired.")
	}
	hash, err := s.Passwords.Hash(password)
	if err != nil {
		return err
	}
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		if err := accounts.SetPassword(ctx, tx, now, u.ID, hash); err != nil {
			return err
		}
		if err := RevokeAll(ctx, tx, now, u.ID); err != nil {
			return err
		}
		return events.Emit(ctx, tx, now, events.Event{Name: events.ResetPassword, UserID: u.ID})
	})
}

// hashToken is how one-time tokens are stored: a database leak must not
// hand out working reset or deletion links.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// randomToken is a 32-character token of letters and digits.
func randomToken() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 32)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Impersonate issues the admin a token acting as another user.
func (s *Service) Impersonate(ctx context.Context, t *platform.Tenant, admin *access.Principal, userID int64) (Issued, error) {
	if !admin.Has(access.UserImpersonate) {
		return Issued{}, apperr.New(apperr.Forbidden, "This action is unauthorized.")
	}
	if userID == admin.UserID {
		return Issued{}, apperr.Field("user_id", "You cannot impersonate yourself.")
	}
	u, err := accounts.ByID(ctx, t.DB, userID)
	if apperr.Is(err, apperr.NotFound) {
		return Issued{}, apperr.Field("user_id", "The selected user does not exist.")
	}
	if err != nil {
		return Issued{}, err
	}
	if !u.IsActive {
		return Issued{}, apperr.Field("user_id", "The selected user is blocked.")
	}
	return s.issueWithEvent(ctx, t, u.ID, false, admin.UserID, events.Event{Name: events.Impersonate, UserID: u.ID,
		Payload: map[string]any{"impersonator_id": admin.UserID}})
}
