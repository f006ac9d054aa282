// Package certificates makes a course certificate (a PDF from the
// CourseFinished pdf template) for each learner who finishes a course,
// stores it in the tenant's store, lists it for the learner with a signed
// download link, and lets admins make it again.
package certificates

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/media/pdf"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Certificate is one learner's certificate of one course.
type Certificate struct {
	ID          int64     `json:"id"`
	UserID      int64     `json:"user_id"`
	CourseID    int64     `json:"course_id"`
	CourseTitle string    `json:"course_title" doc:"The course's title when the certificate was made."`
	URL         string    `json:"url" doc:"Signed download link of the PDF; valid for an hour at least."`
	FinishedAt  time.Time `json:"finished_at" doc:"When the learner finished the course."`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at" doc:"When the PDF was last made."`
	key         string
}

// Service makes and lists certificates.
type Service struct {
	Clock clock.Clock
	// PDF is the PDF service (in this process or another).
	PDF *pdf.Client
	// Templates give the CourseFinished pdf template; Mail gathers the
	// values it prints, as for the event's e-mail.
	Templates *notify.Templates
	Mail      *notify.Channels
	// FileURL signs a stored file's download link.
	FileURL func(t *platform.Tenant, key string) string
}

var (
	errNotFound     = apperr.New(apperr.NotFound, "Certificate not found.")
	errUnauthorized = apperr.New(apperr.Forbidden, "This action is unauthorized.")
	pdfSlot         = notify.Slot{Event: events.CourseFinished, Channel: notify.Pdf, Recipient: notify.ToUser}
)

// ListenerEvents are the events Service.Listener issues certificates on.
var ListenerEvents = []string{events.CourseFinished}

// Listener makes the certificate of a CourseFinished event. A redelivered
// event, or one older than the certificate, changes nothing.
func (s *Service) Listener(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	if ev.Name != events.CourseFinished || ev.UserID == 0 {
		return nil
	}
	courseID, ok := ev.Payload["course_id"].(float64)
	if !ok {
		return nil
	}
	cur, err := s.find(ctx, t, `user_id = $1 AND course_id = $2`, ev.UserID, int64(courseID))
	if err == nil && !cur.FinishedAt.Before(ev.CreatedAt.UTC().Truncate(time.Second)) {
		return nil
	}
	if err != nil && err != errNotFound {
		return err
	}
	_, err = s.make(ctx, t, ev.UserID, int64(courseID), ev.CreatedAt, false)
	return err
}

// Regenerate makes certificate id again from the current template.
func (s *Service) Regenerate(ctx context.Context, t *platform.Tenant, id int64) (Certificate, error) {
	cur, err := s.find(ctx, t, `id = $1`, id)
	if err != nil {
		return Certificate{}, err
	}
	c, err := s.make(ctx, t, cur.UserID, cur.CourseID, cur.FinishedAt, true)
	if err != nil {
		return Certificate{}, err
	}
	if c.ID == 0 {
		return Certificate{}, apperr.New(apperr.Conflict, "The CourseFinished pdf template is switched off.")
	}
	return c, nil
}

// make renders, stores and records the certificate of a learner and a
// course finished at finishedAt. With the pdf template switched off it
// makes nothing and returns a zero Certificate. Unless again, a
// certificate of the same or a later finish is kept: two deliveries of one
// event at once make one certificate, and the other's PDF is dropped.
func (s *Service) make(ctx context.Context, t *platform.Tenant, userID, courseID int64, finishedAt time.Time,
	again bool) (Certificate, error) {
	tpl, err := s.Templates.Effective(ctx, t.DB, pdfSlot)
	if err != nil || !tpl.Enabled {
		return Certificate{}, err
	}
	d, ok, err := s.Mail.Data(ctx, t, events.Stored{Name: events.CourseFinished, UserID: userID,
		Payload: map[string]any{"course_id": float64(courseID)}, CreatedAt: finishedAt})
	if err != nil || !ok || d.Course.Title == "" {
		return Certificate{}, err // the learner or the course is gone
	}
	r, err := notify.Render(tpl, d)
	if err != nil {
		return Certificate{}, fmt.Errorf("certificates: render template: %w", err)
	}
	doc, err := s.PDF.Render(ctx, pdf.Document{Title: r.Subject, Lines: lines(r.Text)})
	if err != nil {
		return Certificate{}, err
	}
	now := s.Clock.Now()
	// A new key each time: a link to the replaced PDF stops working, and a
	// browser never shows it from its cache.
	key := fmt.Sprintf("certificates/%d/%d-%s.pdf", userID, courseID, rand.Text()[:16])
	if err := t.Blob.Put(ctx, key, bytes.NewReader(doc), int64(len(doc)), "application/pdf"); err != nil {
		return Certificate{}, fmt.Errorf("certificates: store pdf: %w", err)
	}
	old, err := s.find(ctx, t, `user_id = $1 AND course_id = $2`, userID, courseID)
	if err != nil && err != errNotFound {
		return Certificate{}, err
	}
	res, err := t.DB.ExecContext(ctx, `INSERT INTO certificates (user_id, course_id, course_title, blob_key, finished_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)
		ON CONFLICT (user_id, course_id) DO UPDATE SET course_title = excluded.course_title, blob_key = excluded.blob_key,
		finished_at = excluded.finished_at, updated_at = excluded.updated_at
		WHERE $7 OR certificates.finished_at < excluded.finished_at`,
		userID, courseID, d.Course.Title, key, finishedAt.UTC().Truncate(time.Second), now, again)
	if err != nil {
		t.Blob.Delete(context.WithoutCancel(ctx), key)
		return Certificate{}, fmt.Errorf("certificates: record: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Blob.Delete(context.WithoutCancel(ctx), key) // another delivery made it
		return s.find(ctx, t, `user_id = $1 AND course_id = $2`, userID, courseID)
	}
	if old.key != "" && old.key != key {
		t.Blob.Delete(ctx, old.key) // the new PDF replaces it
	}
	return s.find(ctx, t, `user_id = $1 AND course_id = $2`, userID, courseID)
}

// lines splits a pdf template's text into the document's lines, without
// the empty ones at its ends.
func lines(text string) []string {
	return strings.Split(strings.Trim(text, "\n"), "\n")
}

// Filter selects certificates; zero fields select all.
type Filter struct {
	UserID, CourseID int64
	Offset, Limit    int
}

// List returns one page of certificates, newest first, with signed links,
// and how many there are in all.
func (s *Service) List(ctx context.Context, t *platform.Tenant, f Filter) ([]Certificate, int64, error) {
	var args sqldb.Args
	var where []string
	if f.UserID != 0 {
		where = append(where, "user_id = "+args.Add(f.UserID))
	}
	if f.CourseID != 0 {
		where = append(where, "course_id = "+args.Add(f.CourseID))
	}
	cond := sqldb.Where(where)
	var total int64
	if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM certificates`+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("certificates: count: %w", err)
	}
	rows, err := t.DB.QueryContext(ctx, `SELECT `+columns+` FROM certificates`+cond+
		` ORDER BY id DESC LIMIT `+args.Add(f.Limit)+` OFFSET `+args.Add(f.Offset), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("certificates: list: %w", err)
	}
	defer rows.Close()
	out := []Certificate{}
	for rows.Next() {
		c, err := scan(rows)
		if err != nil {
			return nil, 0, err
		}
		c.URL = s.FileURL(t, c.key)
		out = append(out, c)
	}
	return out, total, rows.Err()
}

const columns = `id, user_id, course_id, course_title, blob_key, finished_at, created_at, updated_at`

func (s *Service) find(ctx context.Context, t *platform.Tenant, cond string, args ...any) (Certificate, error) {
	c, err := scan(t.DB.QueryRowContext(ctx, `SELECT `+columns+` FROM certificates WHERE `+cond, args...))
	if err == sql.ErrNoRows {
		return Certificate{}, errNotFound
	}
	if err != nil {
		return Certificate{}, fmt.Errorf("certificates: load: %w", err)
	}
	c.URL = s.FileURL(t, c.key)
	return c, nil
}

type scanner interface{ Scan(...any) error }

func scan(r scanner) (Certificate, error) {
	var c Certificate
	err := r.Scan(&c.ID, &c.UserID, &c.CourseID, &c.CourseTitle, &c.key, &c.FinishedAt, &c.CreatedAt, &c.UpdatedAt)
	c.FinishedAt, c.CreatedAt, c.UpdatedAt = c.FinishedAt.UTC(), c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, err
}
