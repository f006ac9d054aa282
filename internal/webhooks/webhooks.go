// Package webhooks sends the platform's events to HTTPS endpoints that
// admins subscribe, signed per Standard Webhooks (standardwebhooks.com).
// Each (event, endpoint) is its own pair of the outbox (listener
// webhook:<id>), with the outbox's retries, backoff and dead letters.
package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Prefix is the listener name prefix of webhook deliveries.
const Prefix = "webhook:"

// Disabled is the internal event recorded when an endpoint is switched
// off after failing for a whole retry window; its user is the admin who
// created the endpoint.
const Disabled = "WebhookEndpointDisabled"

// Endpoint is a subscribed endpoint. Secret is filled only in the answer
// that creates it.
type Endpoint struct {
	ID             int64     `json:"id"`
	URL            string    `json:"url"`
	Events         []string  `json:"events" doc:"Event names of GET /api/events; * matches any run of characters (Course*, *)."`
	Description    string    `json:"description"`
	Enabled        bool      `json:"enabled"`
	DisabledReason string    `json:"disabled_reason" doc:"Why the endpoint was switched off, empty while enabled."`
	Secret         string    `json:"secret,omitempty" doc:"The signing secret (whsec_...), answered once, at creation."`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Service stores endpoints and delivers to them.
type Service struct {
	Clock clock.Clock
	// Wall is the clock of the webhook-timestamp header, which receivers
	// compare with their own clock (5 minutes of tolerance); nil is the
	// system clock.
	Wall  clock.Clock
	Fetch *fetch.Client
	// AllowHTTP accepts http:// endpoints (development and tests, with
	// LMS_FETCH_ALLOW_PRIVATE); otherwise only https://.
	AllowHTTP bool
}

var (
	errNotFound = errors.New("webhooks: no such endpoint")
)

// NewSecret makes a signing secret: whsec_ and 24 random bytes in base64.
func NewSecret() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// Sign is the webhook-signature value of body for msgID at ts (Unix
// seconds): v1, and the base64 HMAC-SHA256 of "msgID.ts.body" keyed with
// the secret's decoded bytes.
func Sign(secret, msgID string, ts int64, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(signature(key, msgID, ts, body)), nil
}

// secretKey is the HMAC key of a secret: the decoded bytes of a whsec_
// secret, or the bytes of any other string (a secret an operator typed,
// such as the tenant's Jitsi secret).
func secretKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("webhooks: bad secret: %w", err)
	}
	return key, nil
}

func signature(key []byte, msgID string, ts int64, body []byte) []byte {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", msgID, ts)
	mac.Write(body)
	return mac.Sum(nil)
}

// Matches reports whether an event name is selected by the patterns.
func Matches(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// subscribable reports whether name is an event of the catalog.
func subscribable(name string) bool {
	for _, e := range events.Catalog {
		if e.Name == name {
			return true
		}
	}
	return false
}

// ValidPattern reports whether a pattern selects at least one event of the
// catalog.
func ValidPattern(p string) bool {
	if _, err := path.Match(p, ""); err != nil {
		return false
	}
	for _, e := range events.Catalog {
		if ok, _ := path.Match(p, e.Name); ok {
			return true
		}
	}
	return false
}

const columns = `id, url, event_patterns, description, enabled, disabled_reason, created_at, updated_at`

func scan(row interface{ Scan(...any) error }) (Endpoint, error) {
	var e Endpoint
	var evs string
	err := row.Scan(&e.ID, &e.URL, &evs, &e.Description, &e.Enabled, &e.DisabledReason, &e.CreatedAt, &e.UpdatedAt)
	if err != nil {
		return e, err
	}
	err = json.Unmarshal([]byte(evs), &e.Events)
	return e, err
}

// Create stores an endpoint with a new secret, which the answer carries.
func (s *Service) Create(ctx context.Context, q sqldb.Querier, e Endpoint, by int64) (Endpoint, error) {
	evs, _ := json.Marshal(e.Events)
	now := s.Clock.Now()
	e.Secret = NewSecret()
	var creator any
	if by != 0 {
		creator = by
	}
	err := q.QueryRowContext(ctx, `INSERT INTO webhook_endpoints (url, event_patterns, description, secret, enabled, disabled_reason,
		created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, TRUE, '', $5, $6, $6) RETURNING id`,
		e.URL, string(evs), e.Description, e.Secret, creator, now).Scan(&e.ID)
	if err != nil {
		return e, fmt.Errorf("webhooks: create: %w", err)
	}
	e.Enabled, e.CreatedAt, e.UpdatedAt = true, now, now
	return e, nil
}

// List answers a page of the endpoints and their count.
func (s *Service) List(ctx context.Context, q sqldb.Querier, offset, limit int) ([]Endpoint, int64, error) {
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_endpoints`).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+columns+` FROM webhook_endpoints ORDER BY id LIMIT $1 OFFSET $2`, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Endpoint{}
	for rows.Next() {
		e, err := scan(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, e)
	}
	return out, total, rows.Err()
}

// Get reads one endpoint; errNotFound when there is none.
func (s *Service) Get(ctx context.Context, q sqldb.Querier, id int64) (Endpoint, error) {
	e, err := scan(q.QueryRowContext(ctx, `SELECT `+columns+` FROM webhook_endpoints WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, errNotFound
	}
	return e, err
}

// Update stores e's url, events, description and enabled; enabling
// clears the reason it was switched off.
func (s *Service) Update(ctx context.Context, q sqldb.Querier, e Endpoint) (Endpoint, error) {
	evs, _ := json.Marshal(e.Events)
	if e.Enabled {
		e.DisabledReason = ""
	}
	e.UpdatedAt = s.Clock.Now()
	res, err := q.ExecContext(ctx, `UPDATE webhook_endpoints SET url = $1, event_patterns = $2, description = $3, enabled = $4,
		disabled_reason = $5, updated_at = $6 WHERE id = $7`, e.URL, string(evs), e.Description, e.Enabled, e.DisabledReason,
		e.UpdatedAt, e.ID)
	if err != nil {
		return e, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return e, errNotFound
	}
	return e, nil
}

// Delete removes an endpoint; its pending deliveries then fail for good.
func (s *Service) Delete(ctx context.Context, q sqldb.Querier, id int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNotFound
	}
	return nil
}

// Targets is the outbox family of webhook deliveries.
func (s *Service) Targets() events.Targets {
	return events.Targets{Prefix: Prefix, Match: s.match, Run: s.deliver, GaveUp: s.gaveUp}
}

// match names the enabled endpoints subscribed to ev.
func (s *Service) match(ctx context.Context, q sqldb.Querier, _ *platform.Tenant, ev events.Stored) ([]string, error) {
	if !subscribable(ev.Name) {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT id, event_patterns FROM webhook_endpoints WHERE enabled = TRUE ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("webhooks: endpoints: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int64
		var evs string
		var patterns []string
		if err := rows.Scan(&id, &evs); err != nil {
			return nil, err
		}
		if json.Unmarshal([]byte(evs), &patterns) == nil && Matches(patterns, ev.Name) {
			out = append(out, Prefix+strconv.FormatInt(id, 10))
		}
	}
	return out, rows.Err()
}

// MessageID is the webhook-id of ev at an endpoint: the same on every
// attempt, so receivers drop a message they already handled.
func MessageID(eventID, endpointID int64) string {
	return fmt.Sprintf("msg_%d_%d", eventID, endpointID)
}

// Payload is the JSON body of a delivery.
type Payload struct {
	Type      string         `json:"type"`
	ID        int64          `json:"id"`
	Timestamp time.Time      `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

func (s *Service) deliver(ctx context.Context, t *platform.Tenant, name string, ev events.Stored) error {
	id, err := strconv.ParseInt(strings.TrimPrefix(name, Prefix), 10, 64)
	if err != nil {
		return events.Permanent(fmt.Errorf("webhooks: bad listener %q", name))
	}
	var url, secret string
	var enabled bool
	err = t.DB.QueryRowContext(ctx, `SELECT url, secret, enabled FROM webhook_endpoints WHERE id = $1`, id).Scan(&url, &secret, &enabled)
	if errors.Is(err, sql.ErrNoRows) {
		return events.Permanent(errors.New("the endpoint was deleted"))
	}
	if err != nil {
		return err
	}
	if !enabled {
		return events.Permanent(errors.New("the endpoint is switched off"))
	}
	data := ev.Payload
	if data == nil {
		data = map[string]any{}
	}
	if ev.UserID != 0 {
		data["user_id"] = ev.UserID
	}
	body, err := json.Marshal(Payload{Type: ev.Name, ID: ev.ID, Timestamp: ev.CreatedAt.UTC(), Data: data})
	if err != nil {
		return events.Permanent(err)
	}
	wall := s.Wall
	if wall == nil {
		wall = clock.System{}
	}
	msgID, ts := MessageID(ev.ID, id), wall.Now().Unix()
	sig, err := Sign(secret, msgID, ts, body)
	if err != nil {
		return events.Permanent(err)
	}
	res, err := s.Fetch.Send(ctx, http.MethodPost, url, http.Header{
		"Content-Type":      {"application/json"},
		"Webhook-Id":        {msgID},
		"Webhook-Timestamp": {strconv.FormatInt(ts, 10)},
		"Webhook-Signature": {sig},
	}, body)
	if err != nil {
		return err
	}
	switch {
	case res.Status/100 == 2:
		return nil
	case res.Status == http.StatusGone:
		return events.Permanent(fmt.Errorf("the endpoint answered %d", res.Status))
	}
	return fmt.Errorf("the endpoint answered %d", res.Status)
}

// gaveUp switches an endpoint off once one of its deliveries failed for
// the whole window (not for a reason of its own making: deleted, already
// off), and records the Disabled event for the admin who created it, whom
// the notification log tells.
func (s *Service) gaveUp(ctx context.Context, t *platform.Tenant, name string, ev events.Stored, reason string) {
	id, err := strconv.ParseInt(strings.TrimPrefix(name, Prefix), 10, 64)
	if err != nil || strings.Contains(reason, "the endpoint was deleted") || strings.Contains(reason, "switched off") {
		return
	}
	_ = t.DB.Tx(ctx, func(tx *sqldb.Tx) error {
		var creator sql.NullInt64
		var url string
		err := tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET enabled = FALSE, disabled_reason = $1, updated_at = $2
			WHERE id = $3 AND enabled = TRUE RETURNING created_by, url`,
			"switched off after failing for the retry window: "+reason, s.Clock.Now(), id).Scan(&creator, &url)
		if err != nil {
			return err
		}
		return events.Emit(ctx, tx, s.Clock.Now(), events.Event{Name: Disabled, UserID: creator.Int64,
			Payload: map[string]any{"webhook_id": id, "url": url, "event_id": ev.ID, "reason": reason}})
	})
}
