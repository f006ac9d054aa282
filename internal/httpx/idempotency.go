package httpx

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/sqldb"
)

const (
	idempotencyTTL = 24 * time.Hour
	// Bodies of keyed requests are held in memory to hash and replay them.
	idempotencyMaxBody = 32 << 20
)

// Idempotency makes writes sent with an Idempotency-Key safe to retry: the
// first response (other than a server error or a rate limit) is stored in the
// tenant database, scoped to the caller, and replayed for 24 hours to a retry
// with the same key and body. The same key with another body answers 422; a
// retry while the first request still runs answers 409.
//
// Answers of routes marked Route.Credentials (logins, registration,
// password changes, impersonation) are never kept: a stored token would
// outlive its revocation, so their retries run again. The request is
// remembered only as an HMAC under the tenant's URL key, so a password in a
// body cannot be recovered from the table by guessing.
func Idempotency(clk clock.Clock) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get("Idempotency-Key")
			t := TenantFrom(r.Context())
			if key == "" || t == nil || !isWrite(r.Method) {
				next.ServeHTTP(w, r)
				return
			}
			if len(key) > 255 {
				WriteError(w, r, apperr.Field("Idempotency-Key", "The Idempotency-Key header may have at most 255 characters."))
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, idempotencyMaxBody+1))
			if err != nil {
				WriteError(w, r, apperr.Wrap(apperr.BadRequest, err, "The request body could not be read."))
				return
			}
			if len(body) > idempotencyMaxBody {
				WriteError(w, r, apperr.New(apperr.TooLarge, "Requests with an Idempotency-Key may have at most 32 MiB of body."))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			scope := callerScope(r)
			hash := requestHash(t.URLKey, r, body)

			stored, err := claimKey(r.Context(), t.DB, clk.Now(), scope, key, hash)
			if err != nil {
				WriteError(w, r, err)
				return
			}
			if stored != nil {
				w.Header().Set("Content-Type", stored.contentType)
				w.Header().Set("Idempotent-Replayed", "true")
				w.WriteHeader(stored.status)
				w.Write(stored.body)
				return
			}
			rec := &captureWriter{ResponseWriter: w}
			completed := false
			defer func() {
				// Server errors, rate limits and panics release the key so the
				// client's retry runs again instead of replaying a failure.
				ctx := context.WithoutCancel(r.Context())
				if !completed || rec.status >= 500 || rec.status == http.StatusTooManyRequests || carriesCredentials(ctx) {
					t.DB.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2`, scope, key)
					return
				}
				t.DB.ExecContext(ctx, `UPDATE idempotency_keys SET status = $1, content_type = $2, body = $3
					WHERE scope = $4 AND key = $5`, rec.status, rec.Header().Get("Content-Type"), rec.buf.Bytes(), scope, key)
			}()
			next.ServeHTTP(rec, r)
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			completed = true
		})
	}
}

// requestHash identifies a keyed request: method, URI, content type and
// body, under an HMAC keyed with the tenant's secret.
func requestHash(secret []byte, r *http.Request, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	io.WriteString(mac, "idempotency\n"+r.Method+" "+r.URL.RequestURI()+"\n"+r.Header.Get("Content-Type")+"\n")
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// carriesCredentials reports whether the request's route is marked
// Route.Credentials (the route guard records it).
func carriesCredentials(ctx context.Context) bool {
	info := infoFrom(ctx)
	return info != nil && info.credentials
}

func isWrite(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch || method == http.MethodDelete
}

// callerScope keeps one caller's keys apart from another's.
func callerScope(r *http.Request) string {
	if p := PrincipalFrom(r.Context()); p != nil {
		return "user:" + strconv.FormatInt(p.UserID, 10)
	}
	return "ip:" + ClientIP(r.Context())
}

type storedResponse struct {
	status      int
	contentType string
	body        []byte
}

// claimKey inserts the key as in progress, or returns the stored response
// of an earlier request with the same key.
func claimKey(ctx context.Context, db *sqldb.DB, now time.Time, scope, key, hash string) (*storedResponse, error) {
	// Expired keys are free again; removing them here also keeps the table small.
	if _, err := db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, now.Add(-idempotencyTTL)); err != nil {
		return nil, err
	}
	_, err := db.ExecContext(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, created_at)
		VALUES ($1, $2, $3, $4)`, scope, key, hash, now)
	if err == nil {
		return nil, nil
	}
	if !sqldb.IsUniqueViolation(err) {
		return nil, err
	}
	var s storedResponse
	var storedHash string
	err = db.QueryRowContext(ctx, `SELECT request_hash, status, content_type, body FROM idempotency_keys
		WHERE scope = $1 AND key = $2`, scope, key).Scan(&storedHash, &s.status, &s.contentType, &s.body)
	if sqldb.NotFound(err) {
		return nil, apperr.New(apperr.Conflict, "A request with this Idempotency-Key is still in progress.")
	}
	if err != nil {
		return nil, err
	}
	if storedHash != hash {
		return nil, apperr.Field("Idempotency-Key", "The Idempotency-Key was already used with a different request.")
	}
	if s.status == 0 {
		return nil, apperr.New(apperr.Conflict, "A request with this Idempotency-Key is still in progress.")
	}
	return &s, nil
}

// captureWriter passes the response through and keeps a copy of its body.
type captureWriter struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.buf.Write(b)
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
