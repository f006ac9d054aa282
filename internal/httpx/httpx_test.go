package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apperr"
)

func TestObserveRecoversPanics(t *testing.T) {
	var logs bytes.Buffer
	h := Observe(slog.New(slog.NewJSONHandler(&logs, nil)), false)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/x", nil))
	var body ErrorBody
	json.Unmarshal(rec.Body.Bytes(), &body)
	id := rec.Header().Get("X-Request-Id")
	if rec.Code != 500 || body.Success || !strings.Contains(body.Message, id) || id == "" {
		t.Fatalf("panic answer: %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), `"msg":"panic"`) || !strings.Contains(logs.String(), `"status":500`) {
		t.Fatalf("panic not logged: %s", logs.String())
	}
}

func TestRequestIDIsSanitised(t *testing.T) {
	h := Observe(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)), false)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(RequestID(r.Context())))
	}))
	for given, keep := range map[string]bool{"abc-123": true, "bad id\nInjected: 1": false, strings.Repeat("a", 65): false} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-Request-Id", given)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if (rec.Body.String() == given) != keep {
			t.Errorf("request id %q kept=%v, want %v", given, !keep, keep)
		}
	}
}

func TestErrorMapping(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		err    error
		status int
	}{
		{apperr.New(apperr.Invalid, "x"), 422},
		{apperr.New(apperr.BadRequest, "x"), 400},
		{apperr.New(apperr.Unauthorized, "x"), 401},
		{apperr.New(apperr.Forbidden, "x"), 403},
		{apperr.New(apperr.NotFound, "x"), 404},
		{apperr.New(apperr.Conflict, "x"), 409},
		{apperr.New(apperr.TooLarge, "x"), 413},
		{apperr.New(apperr.RateLimited, "x"), 429},
		{apperr.New(apperr.Unavailable, "x"), 503},
		{errors.New("db password=hunter2 leaked"), 500},
	}
	for _, c := range cases {
		body := ErrorFor(ctx, c.err)
		if body.status != c.status || body.Success {
			t.Errorf("%v: %d, want %d", c.err, body.status, c.status)
		}
	}
	if body := ErrorFor(ctx, errors.New("db password=hunter2")); strings.Contains(body.Message, "hunter2") {
		t.Fatal("internal details reached the client")
	}
	limited := apperr.New(apperr.RateLimited, "slow down")
	limited.RetryAfter = 17
	if got := ErrorFor(ctx, limited).GetHeaders().Get("Retry-After"); got != "17" {
		t.Fatalf("Retry-After %q", got)
	}
}

func TestFieldErrors(t *testing.T) {
	cases := []struct{ location, msg, field, message string }{
		{"body", "expected required property email to be present", "email", "The email field is required."},
		{"body.profile", "expected required property name to be present", "profile.name", "The profile.name field is required."},
		{"body.items[2].id", "expected integer", "items.2.id", "The items.2.id field is invalid: expected integer."},
		{"query.page", "expected number >= 1", "page", "The page field is invalid: expected number >= 1."},
		{"body.extra", "unexpected property", "extra", "The extra field is not allowed."},
	}
	for _, c := range cases {
		field, message := fieldError(c.location, c.msg)
		if field != c.field || message != c.message {
			t.Errorf("%s %q: %q %q", c.location, c.msg, field, message)
		}
	}
}

func TestPaged(t *testing.T) {
	res, _ := Paged([]int(nil), PageQuery{Page: 2, PerPage: 10}, 25)
	m := res.Body.Meta
	if m.CurrentPage != 2 || m.PerPage != 10 || m.Total != 25 || m.LastPage != 3 || res.Body.Data == nil {
		t.Fatalf("meta %+v data %v", m, res.Body.Data)
	}
	res, _ = Paged([]int{}, PageQuery{Page: 1, PerPage: 15}, 0)
	if res.Body.Meta.LastPage != 1 {
		t.Fatal("an empty list has one (empty) page")
	}
}
