// Package livingcourse keeps courses in step with documents kept
// elsewhere: a connection names an external Markdown document and the
// rich text topics it feeds; the source announces a change with a signed
// webhook (Standard Webhooks, keyed with the connection's secret), and
// each accepted announcement queues a check that fetches the document
// through the outbound-fetch guard and, when its ETag or content changed,
// imports it into the linked topics. A connection is checked at most
// MaxChecksPerDay times a day.
package livingcourse

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
	"github.com/lms-platform/lms/internal/webhooks"
)

// MaxChecksPerDay caps the automatic checks of one connection per UTC day.
const MaxChecksPerDay = 48

// MaxTopics caps the topics one connection feeds.
const MaxTopics = 50

// JobKind is the queue job of one check.
const JobKind = "living-course.check"

// Connection is a link from an external document to topics. Secret is
// filled only in the answers that create it or rotate it.
type Connection struct {
	ID            int64      `json:"id"`
	URL           string     `json:"url" doc:"The external Markdown document."`
	Topics        []int64    `json:"topics" doc:"The rich text topics the document is imported into."`
	Description   string     `json:"description"`
	WebhookPath   string     `json:"webhook_path" doc:"Where the source announces changes: POST, signed with the secret."`
	ETag          string     `json:"etag" doc:"The source's ETag at the last import."`
	ContentHash   string     `json:"content_hash" doc:"SHA-256 (hex) of the document at the last import."`
	ChecksToday   int        `json:"checks_today" doc:"Automatic checks queued today (UTC), at most 48."`
	LastCheckedAt *time.Time `json:"last_checked_at"`
	LastChangedAt *time.Time `json:"last_changed_at" doc:"When the topics were last updated from the source."`
	LastError     string     `json:"last_error" doc:"Why the last check failed, empty after a good one."`
	CreatedBy     int64      `json:"created_by"`
	Secret        string     `json:"secret,omitempty" doc:"The signing secret (whsec_...), answered only at creation and rotation."`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// Topics is what connections do with topics (package topics).
type Topics interface {
	EditableContent(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (string, json.RawMessage, error)
	UpdateJSON(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, body []byte) (topics.View, error)
}

// Service keeps connections and runs their checks.
type Service struct {
	Clock  clock.Clock
	Topics Topics
	Queue  *queue.Queue
	// Fetch reads sources; its MaxBody should be the rich text cap.
	Fetch *fetch.Client
	// RichTextClass is the topicable class of the topics a source feeds.
	RichTextClass string
}

var (
	errForbidden = apperr.New(apperr.Forbidden, "This action is unauthorized.")
	errMissing   = apperr.New(apperr.NotFound, "Living-course connection not found.")
)

// canAuthor reports whether p may connect sources: those who author
// courses; which topics is the topics' own rule.
func canAuthor(p *access.Principal) bool {
	return p.Has(access.CourseUpdate) || p.Has(access.CourseUpdateAuthored)
}

// sees reports whether p may manage c: its creator, or who edits every
// course.
func sees(p *access.Principal, c Connection) bool {
	return p.Has(access.CourseUpdate) || (p.UserID != 0 && c.CreatedBy == p.UserID)
}

// source names the receipts of a connection's webhook.
func source(id int64) string { return "living-course:" + strconv.FormatInt(id, 10) }

// WebhookPath is where connection id's source announces changes.
func WebhookPath(id int64) string { return "/api/living-course/webhooks/" + strconv.FormatInt(id, 10) }

// day is the UTC day the checks of now count for.
func day(now time.Time) string { return now.UTC().Format(time.DateOnly) }

// Create stores a connection from url to topicIDs, each a rich text
// topic p may edit, with a new secret.
func (s *Service) Create(ctx context.Context, t *platform.Tenant, p *access.Principal, url string, topicIDs []int64, description string) (Connection, error) {
	if !canAuthor(p) {
		return Connection{}, errForbidden
	}
	if _, err := fetch.CheckURL(url); err != nil || len(url) > 2000 {
		return Connection{}, apperr.Field("url", "The url must be an http or https URL of at most 2000 characters.")
	}
	if len(topicIDs) == 0 || len(topicIDs) > MaxTopics {
		return Connection{}, apperr.Field("topics", fmt.Sprintf("The topics must name 1 to %d topics.", MaxTopics))
	}
	if len(description) > 1000 {
		return Connection{}, apperr.Field("description", "The description may not be greater than 1000 characters.")
	}
	seen := map[int64]bool{}
	for _, id := range topicIDs {
		if seen[id] {
			return Connection{}, apperr.Field("topics", "The topics must not repeat a topic.")
		}
		seen[id] = true
		class, _, err := s.Topics.EditableContent(ctx, t, p, id)
		if err != nil {
			return Connection{}, err
		}
		if class != s.RichTextClass {
			return Connection{}, apperr.Field("topics", fmt.Sprintf("Topic %d is not a rich text topic.", id))
		}
	}
	now := s.Clock.Now()
	c := Connection{URL: url, Topics: topicIDs, Description: description, Secret: webhooks.NewSecret(),
		CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now}
	ids, _ := json.Marshal(topicIDs)
	var creator any
	if p.UserID != 0 {
		creator = p.UserID
	}
	err := t.DB.QueryRowContext(ctx, `INSERT INTO living_course_connections (source_url, topic_ids, description, secret,
		created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
		url, string(ids), description, c.Secret, creator, now).Scan(&c.ID)
	if err != nil {
		return Connection{}, fmt.Errorf("livingcourse: create: %w", err)
	}
	c.WebhookPath = WebhookPath(c.ID)
	return c, nil
}

const columns = `id, source_url, topic_ids, description, etag, content_hash, checks_day, checks_count,
	last_checked_at, last_changed_at, last_error, created_by, created_at, updated_at`

func scan(r interface{ Scan(...any) error }, now time.Time) (Connection, error) {
	var c Connection
	var ids, checksDay string
	var checked, changed sql.NullTime
	var creator sql.NullInt64
	err := r.Scan(&c.ID, &c.URL, &ids, &c.Description, &c.ETag, &c.ContentHash, &checksDay, &c.ChecksToday,
		&checked, &changed, &c.LastError, &creator, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return c, err
	}
	if checksDay != day(now) {
		c.ChecksToday = 0
	}
	c.LastCheckedAt, c.LastChangedAt, c.CreatedBy = timePtr(checked), timePtr(changed), creator.Int64
	c.WebhookPath = WebhookPath(c.ID)
	return c, json.Unmarshal([]byte(ids), &c.Topics)
}

func timePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	return &t.Time
}

// List answers a page of the connections p may manage, and their count.
func (s *Service) List(ctx context.Context, t *platform.Tenant, p *access.Principal, offset, limit int) ([]Connection, int64, error) {
	if !canAuthor(p) {
		return nil, 0, errForbidden
	}
	where, args := "", []any{}
	if !p.Has(access.CourseUpdate) {
		where, args = " WHERE created_by = $1", append(args, p.UserID)
	}
	var total int64
	if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM living_course_connections`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("livingcourse: count: %w", err)
	}
	n := len(args)
	rows, err := t.DB.QueryContext(ctx, `SELECT `+columns+` FROM living_course_connections`+where+
		fmt.Sprintf(` ORDER BY id LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("livingcourse: list: %w", err)
	}
	defer rows.Close()
	out := []Connection{}
	now := s.Clock.Now()
	for rows.Next() {
		c, err := scan(rows, now)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

func (s *Service) get(ctx context.Context, q sqldb.Querier, id int64) (Connection, string, error) {
	var secret string
	c, err := scan(scanWithSecret{q.QueryRowContext(ctx, `SELECT `+columns+`, secret FROM living_course_connections
		WHERE id = $1`, id), &secret}, s.Clock.Now())
	if sqldb.NotFound(err) {
		return c, "", errMissing
	}
	if err != nil {
		return c, "", fmt.Errorf("livingcourse: load %d: %w", id, err)
	}
	return c, secret, nil
}

// scanWithSecret reads the secret after the columns scan reads.
type scanWithSecret struct {
	r      interface{ Scan(...any) error }
	secret *string
}

func (w scanWithSecret) Scan(dest ...any) error { return w.r.Scan(append(dest, w.secret)...) }

// managed loads a connection p may manage; others' are not found.
func (s *Service) managed(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (Connection, error) {
	if !canAuthor(p) {
		return Connection{}, errForbidden
	}
	c, _, err := s.get(ctx, t.DB, id)
	if err != nil {
		return c, err
	}
	if !sees(p, c) {
		return c, errMissing
	}
	return c, nil
}

// Rotate gives a connection a new secret; the old one stops at once.
func (s *Service) Rotate(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (Connection, error) {
	c, err := s.managed(ctx, t, p, id)
	if err != nil {
		return c, err
	}
	c.Secret, c.UpdatedAt = webhooks.NewSecret(), s.Clock.Now()
	if _, err := t.DB.ExecContext(ctx, `UPDATE living_course_connections SET secret = $1, updated_at = $2 WHERE id = $3`,
		c.Secret, c.UpdatedAt, id); err != nil {
		return c, fmt.Errorf("livingcourse: rotate %d: %w", id, err)
	}
	return c, nil
}

// Delete removes a connection; its topics keep what was imported.
func (s *Service) Delete(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) error {
	if _, err := s.managed(ctx, t, p, id); err != nil {
		return err
	}
	_, err := t.DB.ExecContext(ctx, `DELETE FROM living_course_connections WHERE id = $1`, id)
	return err
}

// Accepted is the answer to an accepted announcement.
type Accepted struct {
	Connection  int64 `json:"connection"`
	ChecksToday int   `json:"checks_today" doc:"Checks queued today (UTC), this one included."`
	ChecksLeft  int   `json:"checks_left" doc:"Checks the connection may still queue today."`
}

// Announce checks a signed change announcement for connection id and
// queues a check of its source; the receipt, the day's count and the job
// commit together, so a refused call changes nothing. An unknown id
// answers as a wrong signature does, so that ids cannot be probed.
func (s *Service) Announce(ctx context.Context, t *platform.Tenant, id int64, h webhooks.Signed, body []byte) (Accepted, error) {
	c, secret, err := s.get(ctx, t.DB, id)
	if e := apperr.As(err); e != nil && e.Kind == apperr.NotFound {
		return Accepted{}, webhooks.ErrBadSignature
	}
	if err != nil {
		return Accepted{}, err
	}
	now := s.Clock.Now()
	if err := webhooks.Verify(secret, h, body, now); err != nil {
		return Accepted{}, err
	}
	today := day(now)
	var count int
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		if err := webhooks.Receive(ctx, tx, source(c.ID), h.ID, now); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, `UPDATE living_course_connections
			SET checks_count = CASE WHEN checks_day = $1 THEN checks_count + 1 ELSE 1 END, checks_day = $1
			WHERE id = $2 AND (checks_day <> $1 OR checks_count < $3) RETURNING checks_count`,
			today, c.ID, MaxChecksPerDay).Scan(&count)
		if sqldb.NotFound(err) {
			return dailyCap(now)
		}
		if err != nil {
			return fmt.Errorf("livingcourse: count check: %w", err)
		}
		return s.Queue.Enqueue(ctx, t, tx, queue.New{Kind: JobKind, Key: source(c.ID), Payload: job{Connection: c.ID}})
	})
	if err != nil {
		return Accepted{}, err
	}
	return Accepted{Connection: c.ID, ChecksToday: count, ChecksLeft: MaxChecksPerDay - count}, nil
}

// dailyCap refuses a check over the day's cap until the next UTC day.
func dailyCap(now time.Time) error {
	e := apperr.New(apperr.RateLimited, fmt.Sprintf("This connection had its %d automatic checks today (UTC).", MaxChecksPerDay))
	next := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	e.RetryAfter = max(int(next.Sub(now).Seconds()), 1)
	return e
}

type job struct {
	Connection int64 `json:"connection"`
}

// Job is the queue's handling of a check.
func (s *Service) Job() queue.Kind {
	return queue.Kind{Name: JobKind, Run: s.run, MaxAttempts: 3, Backoff: time.Minute}
}

func (s *Service) run(ctx context.Context, t *platform.Tenant, j queue.Job) error {
	var in job
	if err := json.Unmarshal(j.Payload, &in); err != nil {
		return queue.Permanent(err)
	}
	c, _, err := s.get(ctx, t.DB, in.Connection)
	if errors.Is(err, errMissing) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.Check(ctx, t, c)
}

// Check fetches c's source and imports it into c's topics when it
// changed since the last import.
func (s *Service) Check(ctx context.Context, t *platform.Tenant, c Connection) error {
	header := http.Header{"Accept": {"text/markdown, text/plain;q=0.9, */*;q=0.5"}}
	if c.ETag != "" {
		header.Set("If-None-Match", c.ETag)
	}
	res, err := s.Fetch.Open(ctx, c.URL, header)
	if err != nil {
		return s.fail(ctx, t, c, err)
	}
	defer res.Body.Close()
	now := s.Clock.Now()
	switch {
	case res.Status == http.StatusNotModified:
		return s.checked(ctx, t, c.ID, now, c.ETag, c.ContentHash, false)
	case res.Status != http.StatusOK:
		return s.fail(ctx, t, c, fmt.Errorf("the source answered %d", res.Status))
	}
	doc, err := io.ReadAll(res.Body)
	if err != nil {
		return s.fail(ctx, t, c, err)
	}
	sum := sha256.Sum256(doc)
	hash := hex.EncodeToString(sum[:])
	etag := res.Header.Get("ETag")
	if hash == c.ContentHash {
		return s.checked(ctx, t, c.ID, now, etag, hash, false)
	}
	body, _ := json.Marshal(map[string]string{"markdown": string(doc)})
	system := access.System(access.CourseUpdate)
	for _, id := range c.Topics {
		_, err := s.Topics.UpdateJSON(ctx, t, system, id, body)
		if e := apperr.As(err); e != nil && e.Kind == apperr.NotFound {
			continue // the topic was deleted since
		}
		if err != nil {
			return s.fail(ctx, t, c, err)
		}
	}
	return s.checked(ctx, t, c.ID, now, etag, hash, true)
}

func (s *Service) checked(ctx context.Context, t *platform.Tenant, id int64, now time.Time, etag, hash string, changed bool) error {
	_, err := t.DB.ExecContext(ctx, `UPDATE living_course_connections SET etag = $1, content_hash = $2, last_checked_at = $3,
		last_changed_at = CASE WHEN $4 THEN $3 ELSE last_changed_at END, last_error = '' WHERE id = $5`,
		etag, hash, now, changed, id)
	return err
}

// fail records why a check failed and hands the error to the queue: a
// refusal of the fetch guard or a refused document is not retried.
func (s *Service) fail(ctx context.Context, t *platform.Tenant, c Connection, cause error) error {
	msg := cause.Error()
	if e := apperr.As(cause); e != nil {
		msg = e.Message
	}
	if _, err := t.DB.ExecContext(ctx, `UPDATE living_course_connections SET last_checked_at = $1, last_error = $2 WHERE id = $3`,
		s.Clock.Now(), msg, c.ID); err != nil {
		return err
	}
	if e := apperr.As(cause); e != nil && e.Kind == apperr.Invalid {
		return queue.Permanent(cause)
	}
	return cause
}
