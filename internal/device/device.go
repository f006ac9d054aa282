// Package device owns the device login (shaped after RFC 8628): a
// command-line client asks for a code, a signed-in user approves it on the
// web frontend's /device page, and the client collects a scoped token
// (issued through tokens.Service as the approving user) by polling. It is
// the platform's only device-code grant.
//
// A device request moves pending → approved → collected, or pending → denied;
// a pending one expires at expires_at; an approved one never collected is
// moved to revoked, with its token, by the hourly job, which also deletes
// device requests expired for more than a day.
package device

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/tokens"
)

// Timing of a request.
const (
	Lifetime = 10 * time.Minute
	Interval = 5 * time.Second
	// slowDownStep is added to a request's interval each time it is
	// polled too early, as RFC 8628 asks of the client too.
	slowDownStep = 5 * time.Second
	maxInterval  = time.Minute
	// keepExpired is how long an expired request stays for its user to
	// see before the hourly job deletes it.
	keepExpired = 24 * time.Hour
	maxNameLen  = 100
)

// Request states.
const (
	Pending   = "pending"
	Approved  = "approved"
	Denied    = "denied"
	Collected = "collected"
	Expired   = "expired"
	Revoked   = "revoked"
)

// Error codes of the token endpoint, in the envelope's error field.
const (
	CodePending      = "authorization_pending"
	CodeSlowDown     = "slow_down"
	CodeDenied       = "access_denied"
	CodeExpired      = "expired_token"
	CodeInvalidGrant = "invalid_grant"
)

// PruneJob is the hourly job of the device login.
const PruneJob = "device.prune"

// userAlphabet has no vowels (no words) and no look-alike characters
// (0/O, 1/I/L, 2/Z, 5/S, 8/B), as RFC 8628 section 6.1 suggests.
const userAlphabet = "BCDFGHJKMNPQRTVWXY"

const userCodeLen = 8

// Service runs the device login of every tenant.
type Service struct {
	Clock  clock.Clock
	Tokens *tokens.Service
	// FrontURL is the base URL of the tenant's web frontend, where the
	// /device page is.
	FrontURL func(platform.Record) string
}

// DeviceGrant is the answer to a new device request.
type DeviceGrant struct {
	DeviceCode              string `json:"device_code" doc:"Secret the client polls with; never show it."`
	UserCode                string `json:"user_code" doc:"Code the user types on the verification page, XXXX-XXXX."`
	VerificationURI         string `json:"verification_uri" doc:"The frontend page where the user enters the code."`
	VerificationURIComplete string `json:"verification_uri_complete" doc:"The same page with the user code filled in."`
	ExpiresIn               int    `json:"expires_in" doc:"Seconds until the codes expire."`
	Interval                int    `json:"interval" doc:"Seconds to wait between polls."`
}

// DeviceRequest is a device request as the approving user sees it.
type DeviceRequest struct {
	UserCode   string    `json:"user_code"`
	ClientName string    `json:"client_name"`
	Scopes     []string  `json:"scopes" doc:"The scopes the device asks for."`
	IP         string    `json:"ip" doc:"The address the request came from."`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	Status     string    `json:"status" enum:"pending,approved,denied,collected,expired,revoked"`
	// ApprovedScopes are the scopes granted, once approved.
	ApprovedScopes []string `json:"approved_scopes,omitempty"`
	// TokenID is the approved token's id, shown to the approving user only.
	TokenID string `json:"token_id,omitempty"`
}

type row struct {
	DeviceRequest
	id          string
	sealKey     string
	interval    time.Duration
	lastPolled  sql.NullTime
	userID      sql.NullInt64
	sealedToken sql.NullString
}

const columns = `id, user_code, client_name, scopes, ip, created_at, expires_at, status, seal_key, interval_seconds,
	last_polled_at, user_id, approved_scopes, token_id, sealed_token`

func scan(q interface{ Scan(...any) error }) (row, error) {
	var (
		r               row
		scopes          string
		approved, token sql.NullString
		intervalSeconds int
	)
	err := q.Scan(&r.id, &r.UserCode, &r.ClientName, &scopes, &r.IP, &r.CreatedAt, &r.ExpiresAt, &r.Status, &r.sealKey,
		&intervalSeconds, &r.lastPolled, &r.userID, &approved, &token, &r.sealedToken)
	if err != nil {
		return r, err
	}
	r.Scopes = strings.Fields(scopes)
	r.ApprovedScopes = strings.Fields(approved.String)
	r.TokenID = token.String
	r.interval = time.Duration(intervalSeconds) * time.Second
	return r, nil
}

// Start records a new request of a device and answers its codes.
func (s *Service) Start(ctx context.Context, t *platform.Tenant, clientName string, scopes []string, ip string) (DeviceGrant, error) {
	name := strings.TrimSpace(clientName)
	if name == "" || utf8.RuneCountInString(name) > maxNameLen {
		return DeviceGrant{}, apperr.Field("client_name", "The client_name must be 1 to 100 characters.")
	}
	scopes, err := tokens.Check(scopes)
	if err != nil {
		return DeviceGrant{}, err
	}
	now := s.Clock.Now()
	code := newDeviceCode()
	var user string
	// A user code is short; on the rare clash with a kept one, draw again.
	for range 5 {
		user = newUserCode()
		_, err = t.DB.ExecContext(ctx, `INSERT INTO device_requests (id, device_code_hash, user_code, seal_key, client_name,
			scopes, ip, created_at, expires_at, interval_seconds, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			newID(), codeHash(code), user, sealKey(code), name, strings.Join(scopes, " "), ip, now,
			now.Add(Lifetime), int(Interval/time.Second), Pending)
		if !sqldb.IsUniqueViolation(err) {
			break
		}
	}
	if err != nil {
		return DeviceGrant{}, fmt.Errorf("device: record request: %w", err)
	}
	page := strings.TrimSuffix(s.FrontURL(t.Record), "/") + "/device"
	shown := FormatUserCode(user)
	return DeviceGrant{DeviceCode: code, UserCode: shown, VerificationURI: page, VerificationURIComplete: page + "?code=" + shown,
		ExpiresIn: int(Lifetime / time.Second), Interval: int(Interval / time.Second)}, nil
}

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func newUserCode() string {
	b := make([]byte, userCodeLen)
	out := make([]byte, userCodeLen)
	rand.Read(b)
	for i := range b {
		// 256 is not a multiple of the alphabet's length; reject the
		// remainder so every character is equally likely.
		for int(b[i]) >= 256-256%len(userAlphabet) {
			var one [1]byte
			rand.Read(one[:])
			b[i] = one[0]
		}
		out[i] = userAlphabet[int(b[i])%len(userAlphabet)]
	}
	return string(out)
}

// FormatUserCode shows a stored user code as XXXX-XXXX.
func FormatUserCode(code string) string {
	if len(code) != userCodeLen {
		return code
	}
	return code[:4] + "-" + code[4:]
}

// NormalizeUserCode reads a typed code: any case, with or without the
// dash and spaces. It answers "" for what cannot be a user code.
func NormalizeUserCode(typed string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(typed) {
		switch {
		case r == '-' || r == ' ':
		case strings.ContainsRune(userAlphabet, r):
			b.WriteRune(r)
		default:
			return ""
		}
	}
	if b.Len() != userCodeLen {
		return ""
	}
	return b.String()
}

func unknownCode() error { return apperr.New(apperr.NotFound, "Unknown code: check it and try again.") }

// byUserCode loads a request the way a person names it.
func byUserCode(ctx context.Context, q sqldb.Querier, typed string) (row, error) {
	code := NormalizeUserCode(typed)
	if code == "" {
		return row{}, unknownCode()
	}
	r, err := scan(q.QueryRowContext(ctx, `SELECT `+columns+` FROM device_requests WHERE user_code = $1`, code))
	if errors.Is(err, sql.ErrNoRows) {
		return r, unknownCode()
	}
	if err != nil {
		return r, fmt.Errorf("device: load request: %w", err)
	}
	r.UserCode = FormatUserCode(r.UserCode)
	return r, nil
}

// visible is the request as the user asking sees it: a pending request
// past its time is expired; the token of an approved one is only named
// to the user who approved it.
func (r row) visible(now time.Time, userID int64) DeviceRequest {
	out := r.DeviceRequest
	if out.Status == Pending && !now.Before(out.ExpiresAt) {
		out.Status = Expired
	}
	if !r.userID.Valid || r.userID.Int64 != userID {
		out.TokenID = ""
		out.ApprovedScopes = nil
	}
	return out
}

// Show returns the request with the user code to a signed-in user.
func (s *Service) Show(ctx context.Context, t *platform.Tenant, userID int64, userCode string) (DeviceRequest, error) {
	r, err := byUserCode(ctx, t.DB, userCode)
	if err != nil {
		return DeviceRequest{}, err
	}
	return r.visible(s.Clock.Now(), userID), nil
}

// decidable refuses a request that is no longer waiting for a decision.
func (r row) decidable(now time.Time) error {
	switch {
	case r.Status != Pending:
		return apperr.New(apperr.Conflict, "This request was already "+r.Status+".")
	case !now.Before(r.ExpiresAt):
		return apperr.New(apperr.Conflict, "This request has expired: start the login on the device again.")
	}
	return nil
}

// pending loads a request that still waits for a decision.
func (s *Service) pending(ctx context.Context, t *platform.Tenant, userCode string) (row, time.Time, error) {
	r, err := byUserCode(ctx, t.DB, userCode)
	if err != nil {
		return r, time.Time{}, err
	}
	now := s.Clock.Now()
	return r, now, r.decidable(now)
}

// decide records the user's decision, with the approved token when there
// is one. Of two decisions at once, the one whose update still finds the
// request pending wins; the other is a 409.
func decide(ctx context.Context, t *platform.Tenant, r *row, userID int64, now time.Time, approved *tokens.Created, sealed string) error {
	status := Denied
	var scopes, tokenID, sealedToken any
	if approved != nil {
		status, scopes, tokenID, sealedToken = Approved, strings.Join(approved.Scopes, " "), approved.ID, sealed
		r.ApprovedScopes, r.TokenID = approved.Scopes, approved.ID
	}
	res, err := t.DB.ExecContext(ctx, `UPDATE device_requests SET status = $1, user_id = $2, decided_at = $3,
		approved_scopes = $4, token_id = $5, sealed_token = $6 WHERE id = $7 AND status = $8`,
		status, userID, now, scopes, tokenID, sealedToken, r.id, Pending)
	if err != nil {
		return fmt.Errorf("device: record decision: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.New(apperr.Conflict, "This request was already decided.")
	}
	r.Status = status
	r.userID = sql.NullInt64{Int64: userID, Valid: true}
	return nil
}

// Approve issues the device's token to the approving user (p) with the
// scopes asked for, or with fewer when scopes names a subset; never more.
// A scoped-token caller also approves only within its own scopes.
func (s *Service) Approve(ctx context.Context, t *platform.Tenant, p *access.Principal, userCode string, scopes []string) (DeviceRequest, error) {
	r, now, err := s.pending(ctx, t, userCode)
	if err != nil {
		return DeviceRequest{}, err
	}
	granted := r.Scopes
	if len(scopes) > 0 {
		if granted, err = tokens.Check(scopes); err != nil {
			return DeviceRequest{}, err
		}
		if !tokens.Within(granted, r.Scopes) {
			return DeviceRequest{}, apperr.New(apperr.Forbidden, "An approval cannot grant scopes the device did not ask for.")
		}
	}
	created, err := s.Tokens.Issue(ctx, t, p.UserID, tokens.NewToken{Name: r.ClientName, Scopes: granted, Ceiling: p.Scopes,
		Parent: tokens.ParentOf(p)})
	if err != nil {
		return DeviceRequest{}, err
	}
	sealed, err := seal(r.sealKey, created.Secret)
	if err == nil {
		err = decide(ctx, t, &r, p.UserID, now, &created, sealed)
	}
	if err != nil {
		// The token just issued must not outlive a failed approval.
		if rerr := s.Tokens.RevokeAny(ctx, t, created.ID); rerr != nil {
			return DeviceRequest{}, errors.Join(err, rerr)
		}
		return DeviceRequest{}, err
	}
	return r.visible(now, p.UserID), nil
}

// Deny refuses the request; the device's next poll answers access_denied.
func (s *Service) Deny(ctx context.Context, t *platform.Tenant, userID int64, userCode string) (DeviceRequest, error) {
	r, now, err := s.pending(ctx, t, userCode)
	if err == nil {
		err = decide(ctx, t, &r, userID, now, nil, "")
	}
	if err != nil {
		return DeviceRequest{}, err
	}
	return r.visible(now, userID), nil
}

func pollError(code, message string) error {
	e := apperr.New(apperr.BadRequest, message)
	e.Code = code
	return e
}

// Poll answers the device: the token once approved, exactly once;
// otherwise an error with the code RFC 8628 names for the state.
func (s *Service) Poll(ctx context.Context, t *platform.Tenant, deviceCode string) (tokens.Created, error) {
	hash := codeHash(deviceCode)
	r, err := scan(t.DB.QueryRowContext(ctx, `SELECT `+columns+` FROM device_requests WHERE device_code_hash = $1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return tokens.Created{}, pollError(CodeInvalidGrant, "Unknown device code.")
	}
	if err != nil {
		return tokens.Created{}, fmt.Errorf("device: load request: %w", err)
	}
	now := s.Clock.Now()
	switch {
	case r.Status == Collected:
		return tokens.Created{}, pollError(CodeInvalidGrant, "This device code was already used.")
	case r.Status == Revoked || !now.Before(r.ExpiresAt):
		return tokens.Created{}, pollError(CodeExpired, "The device code has expired: start the login again.")
	case r.Status == Denied:
		return tokens.Created{}, pollError(CodeDenied, "The request was denied.")
	}
	if r.lastPolled.Valid && now.Sub(r.lastPolled.Time) < r.interval {
		next := min(r.interval+slowDownStep, maxInterval)
		if _, err := t.DB.ExecContext(ctx, `UPDATE device_requests SET last_polled_at = $1, interval_seconds = $2 WHERE id = $3`,
			now, int(next/time.Second), r.id); err != nil {
			return tokens.Created{}, fmt.Errorf("device: record poll: %w", err)
		}
		return tokens.Created{}, pollError(CodeSlowDown, fmt.Sprintf("Polling too fast: wait %d seconds between polls.", int(next/time.Second)))
	}
	if r.Status == Pending {
		if _, err := t.DB.ExecContext(ctx, `UPDATE device_requests SET last_polled_at = $1 WHERE id = $2`, now, r.id); err != nil {
			return tokens.Created{}, fmt.Errorf("device: record poll: %w", err)
		}
		return tokens.Created{}, pollError(CodePending, "Waiting for a user to approve the request.")
	}
	return s.collect(ctx, t, deviceCode, r, now)
}

// collect hands the approved token over once: of two polls at the same
// moment, the one whose update moves the request to collected wins.
func (s *Service) collect(ctx context.Context, t *platform.Tenant, deviceCode string, r row, now time.Time) (tokens.Created, error) {
	res, err := t.DB.ExecContext(ctx, `UPDATE device_requests SET status = $1, collected_at = $2, last_polled_at = $2,
		sealed_token = NULL WHERE id = $3 AND status = $4`, Collected, now, r.id, Approved)
	if err != nil {
		return tokens.Created{}, fmt.Errorf("device: collect: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tokens.Created{}, pollError(CodeInvalidGrant, "This device code was already used.")
	}
	secret, err := open(deviceCode, r.sealedToken.String)
	if err != nil {
		return tokens.Created{}, fmt.Errorf("device: open sealed token: %w", err)
	}
	tok, err := s.Tokens.Get(ctx, t, r.TokenID)
	if err != nil {
		return tokens.Created{}, err
	}
	return tokens.Created{Token: tok, Secret: secret}, nil
}

// Prune revokes the tokens of approved requests that expired before their
// device collected them, and deletes requests expired for over a day.
func (s *Service) Prune(ctx context.Context, t *platform.Tenant, now time.Time) error {
	ids, err := sqldb.Column[string](t.DB.QueryContext(ctx, `SELECT token_id FROM device_requests
		WHERE status = $1 AND expires_at <= $2`, Approved, now))
	if err != nil {
		return fmt.Errorf("device: uncollected tokens: %w", err)
	}
	for _, id := range ids {
		// A token already gone (its user was deleted) needs nothing more.
		if err := s.Tokens.RevokeAny(ctx, t, id); err != nil && !apperr.Is(err, apperr.NotFound) {
			return err
		}
		if _, err := t.DB.ExecContext(ctx, `UPDATE device_requests SET status = $1, sealed_token = NULL
			WHERE token_id = $2 AND status = $3`, Revoked, id, Approved); err != nil {
			return fmt.Errorf("device: mark revoked: %w", err)
		}
	}
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM device_requests WHERE expires_at < $1`, now.Add(-keepExpired)); err != nil {
		return fmt.Errorf("device: delete expired: %w", err)
	}
	return nil
}

// Jobs are the scheduled jobs of the device login.
func (s *Service) Jobs() []jobs.Job {
	return []jobs.Job{{Name: PruneJob, Schedule: jobs.MustCron("@hourly"), Run: s.Prune}}
}
