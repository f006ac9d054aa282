package tokens

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/platform"
)

// AuditEntry is one request made with a scoped token. It never holds a
// body, a query string or a secret.
type AuditEntry struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	TokenID    string    `json:"token_id"`
	UserID     int64     `json:"user_id"`
	Method     string    `json:"method"`
	Route      string    `json:"route" doc:"The route pattern, such as \"GET /api/admin/courses/{id}\"; \"unmatched\" for a path no route serves."`
	Status     int       `json:"status"`
	DurationUS int64     `json:"duration_us" doc:"Time to answer, in microseconds."`
	IP         string    `json:"ip"`
	UserAgent  string    `json:"user_agent"`
}

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	UserID        int64
	TokenID       string
	Route         string
	Status        int
	From, To      time.Time
	Offset, Limit int
}

// Audit returns one page of the tenant's agent audit, newest first, and
// how many entries match.
func Audit(ctx context.Context, t *platform.Tenant, f AuditFilter) ([]AuditEntry, int64, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.UserID != 0 {
		add("user_id = ?", f.UserID)
	}
	if f.TokenID != "" {
		add("token_id = ?", f.TokenID)
	}
	if f.Route != "" {
		add("route = ?", f.Route)
	}
	if f.Status != 0 {
		add("status = ?", f.Status)
	}
	if !f.From.IsZero() {
		add("at >= ?", f.From)
	}
	if !f.To.IsZero() {
		add("at < ?", f.To)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int64
	if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM agent_audit`+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("tokens: count audit: %w", err)
	}
	args = append(args, f.Limit, f.Offset)
	rows, err := t.DB.QueryContext(ctx, `SELECT id, at, token_id, user_id, method, route, status, duration_us, ip, user_agent
		FROM agent_audit`+cond+` ORDER BY at DESC, id DESC LIMIT $`+strconv.Itoa(len(args)-1)+` OFFSET $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("tokens: audit: %w", err)
	}
	defer rows.Close()
	out := []AuditEntry{}
	for rows.Next() {
		var e AuditEntry
		if err := rows.Scan(&e.ID, &e.At, &e.TokenID, &e.UserID, &e.Method, &e.Route, &e.Status, &e.DurationUS, &e.IP,
			&e.UserAgent); err != nil {
			return nil, 0, err
		}
		out = append(out, e)
	}
	return out, total, rows.Err()
}
