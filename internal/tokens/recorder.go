package tokens

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Recorder writes the agent audit and tokens' last use off the request
// path: a request only appends to a buffer; a background loop writes each
// tenant's buffered rows in one transaction of batched inserts.
type Recorder struct {
	tenants *platform.Tenants
	clock   clock.Clock
	log     *slog.Logger

	mu      sync.Mutex
	pending map[int64]*batch
	size    int
	dropped int
	// written holds when each token's last use was last written, so a
	// busy token costs one update a minute, not one a request.
	written map[string]time.Time
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

type batch struct {
	rec     platform.Record
	entries []AuditEntry
	uses    map[string]AuditEntry // token id → its latest request
}

const (
	// flushEvery bounds how long an entry waits in the buffer.
	flushEvery = time.Second
	// flushAt wakes the loop early once this many entries wait.
	flushAt = 256
	// maxPending bounds the buffer when the database cannot keep up; what
	// does not fit is counted and logged, never allowed to slow requests.
	maxPending = 50000
	// lastUseEvery throttles the update of a token's last use.
	lastUseEvery = time.Minute
	// rowsPerInsert keeps each INSERT within every driver's parameter cap.
	rowsPerInsert = 100
	maxUserAgent  = 512
)

// NewRecorder starts the background writer; Close stops it after writing
// what is buffered.
func NewRecorder(ts *platform.Tenants, clk clock.Clock, log *slog.Logger) *Recorder {
	r := &Recorder{tenants: ts, clock: clk, log: log, pending: map[int64]*batch{}, written: map[string]time.Time{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go r.run()
	return r
}

// Middleware records every request made with a scoped token: when it
// ended, the token, the user, the method, the route pattern (filled in by
// Enforce), the status, the duration, the address and the user agent.
func (r *Recorder) Middleware() httpx.Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			p := httpx.PrincipalFrom(req.Context())
			t := httpx.TenantFrom(req.Context())
			if !p.Scoped() || t == nil {
				next.ServeHTTP(w, req)
				return
			}
			start := time.Now()
			// Inside a mux (the H5P service's routes) the pattern is known
			// already; the API's Enforce names it once huma matched it.
			note := &auditNote{route: "unmatched"}
			if req.Pattern != "" {
				note.route = req.Pattern
			}
			next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), auditKey{}, note)))
			ua := req.UserAgent()
			if len(ua) > maxUserAgent {
				ua = strings.ToValidUTF8(ua[:maxUserAgent], "")
			}
			r.add(t.Record, AuditEntry{At: r.clock.Now(), TokenID: p.TokenID, UserID: p.UserID, Method: req.Method,
				Route: note.route, Status: httpx.StatusOf(w), DurationUS: time.Since(start).Microseconds(),
				IP: httpx.ClientIP(req.Context()), UserAgent: ua})
		})
	}
}

func (r *Recorder) add(rec platform.Record, e AuditEntry) {
	r.mu.Lock()
	if r.size >= maxPending {
		r.dropped++
		r.mu.Unlock()
		return
	}
	b := r.pending[rec.ID]
	if b == nil {
		b = &batch{rec: rec, uses: map[string]AuditEntry{}}
		r.pending[rec.ID] = b
	}
	b.entries = append(b.entries, e)
	if last, ok := r.written[e.TokenID]; !ok || e.At.Sub(last) >= lastUseEvery {
		b.uses[e.TokenID] = e
	}
	r.size++
	full := r.size >= flushAt
	r.mu.Unlock()
	if full {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

func (r *Recorder) run() {
	defer close(r.done)
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			r.Flush(context.Background())
			return
		case <-tick.C:
		case <-r.wake:
		}
		r.Flush(context.Background())
	}
}

// Flush writes what is buffered now.
func (r *Recorder) Flush(ctx context.Context) {
	r.mu.Lock()
	pending, dropped := r.pending, r.dropped
	r.pending, r.size, r.dropped = map[int64]*batch{}, 0, 0
	for _, b := range pending {
		for id, e := range b.uses {
			r.written[id] = e.At
		}
	}
	if len(r.written) > maxPending {
		r.written = map[string]time.Time{}
	}
	r.mu.Unlock()
	if dropped > 0 {
		r.log.Warn("tokens: agent audit buffer full, entries dropped", "dropped", dropped)
	}
	for _, b := range pending {
		if err := r.write(ctx, b); err != nil {
			r.log.Error("tokens: write agent audit", "tenant", b.rec.ID, "entries", len(b.entries), "error", err)
		}
	}
}

func (r *Recorder) write(ctx context.Context, b *batch) error {
	t, release, err := r.tenants.Get(ctx, b.rec)
	if err != nil {
		return err
	}
	defer release()
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		for start := 0; start < len(b.entries); start += rowsPerInsert {
			if err := insertAudit(ctx, tx, b.entries[start:min(start+rowsPerInsert, len(b.entries))]); err != nil {
				return err
			}
		}
		for id, e := range b.uses {
			if _, err := tx.ExecContext(ctx, `UPDATE personal_tokens SET last_used_at = $1, last_used_ip = $2 WHERE id = $3`,
				e.At, e.IP, id); err != nil {
				return err
			}
		}
		return nil
	})
}

func insertAudit(ctx context.Context, tx *sqldb.Tx, rows []AuditEntry) error {
	const cols = 9
	var q strings.Builder
	q.WriteString(`INSERT INTO agent_audit (at, token_id, user_id, method, route, status, duration_us, ip, user_agent) VALUES `)
	args := make([]any, 0, len(rows)*cols)
	for i, e := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(")
		for c := 1; c <= cols; c++ {
			if c > 1 {
				q.WriteString(", ")
			}
			q.WriteString("$" + strconv.Itoa(i*cols+c))
		}
		q.WriteString(")")
		args = append(args, e.At, e.TokenID, e.UserID, e.Method, e.Route, e.Status, e.DurationUS, e.IP, e.UserAgent)
	}
	_, err := tx.ExecContext(ctx, q.String(), args...)
	return err
}

// Close writes what is buffered and stops the background writer.
func (r *Recorder) Close() {
	close(r.stop)
	<-r.done
}

// PruneJob is the daily job that deletes agent audit rows older than the
// retention (setting lms_tokens.audit_retention_days, default 90).
const PruneJob = "tokens.prune-agent-audit"

// PruneAudit deletes the tenant's audit rows older than the retention.
func (s *Service) PruneAudit(ctx context.Context, t *platform.Tenant, now time.Time) error {
	days, err := s.setting(ctx, t, AuditRetentionKey, DefaultRetention)
	if err != nil {
		return err
	}
	_, err = t.DB.ExecContext(ctx, `DELETE FROM agent_audit WHERE at < $1`, now.Add(-time.Duration(days)*24*time.Hour))
	return err
}

// Jobs are the scheduled jobs of scoped tokens.
func (s *Service) Jobs() []jobs.Job {
	return []jobs.Job{{Name: PruneJob, Schedule: jobs.MustCron("@daily"), Run: s.PruneAudit}}
}
