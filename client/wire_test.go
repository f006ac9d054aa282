package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
)

// What the client puts on the wire and reads back, seen by a server that
// records the request: optional fields left out unless set, Extra fields
// beside the listed ones, multipart text before files, and an error
// envelope with its code, details and Retry-After.
func TestClientWire(t *testing.T) {
	var got struct {
		host, auth, ctype string
		json              map[string]any
		parts             []string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.host, got.auth, got.ctype = r.Host, r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		if strings.HasPrefix(got.ctype, "multipart/") {
			mr, err := r.MultipartReader()
			if err != nil {
				t.Error(err)
				return
			}
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(p)
				got.parts = append(got.parts, p.FormName()+"|"+p.FileName()+"|"+string(b))
			}
		} else if r.Body != nil {
			got.json = nil
			json.NewDecoder(r.Body).Decode(&got.json)
		}
		if r.URL.Path == "/api/name" {
			w.Header().Set("Retry-After", "3")
			w.Header().Set("X-Request-Id", "req-1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"success":false,"message":"Slow down.","error":"rate_limited","details":{"retryAfter":3}}`)
			return
		}
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		io.WriteString(w, `{"success":true,"message":"","data":{"id":7,"lesson_id":3}}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithHost("school.test").WithToken("tok")
	ctx := context.Background()

	view, err := c.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: 3, Title: "Quiz", Topicable: "quiz",
		Preview: client.Ptr(false), Extra: map[string]any{"gift": "::Q:: 1+1 {=2}", "title": "not this one"}})
	if err != nil || view.ID != 7 || view.LessonID != 3 {
		t.Fatalf("answer: %+v, %v", view, err)
	}
	if got.host != "school.test" || got.auth != "Bearer tok" || got.ctype != "application/json" {
		t.Errorf("request: host %q, authorization %q, type %q", got.host, got.auth, got.ctype)
	}
	want := map[string]any{"lesson": 3.0, "title": "Quiz", "topicable": "quiz", "preview": false, "gift": "::Q:: 1+1 {=2}"}
	if len(got.json) != len(want) {
		t.Errorf("JSON body %v, want %v", got.json, want)
	}
	for k, v := range want {
		if got.json[k] != v {
			t.Errorf("JSON body %s = %v, want %v", k, got.json[k], v)
		}
	}

	_, err = c.PostAdminTopicsMultipart(ctx, client.PostAdminTopicsForm{Lesson: 3, Title: "Package", Topicable: "h5p",
		ExtraFiles: map[string]client.File{"package": {Name: "q.h5p", Content: strings.NewReader("zip")}},
		Extra:      map[string]string{"sco": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	wantParts := []string{"lesson||3", "title||Package", "topicable||h5p", "sco||2", "package|q.h5p|zip"}
	if strings.Join(got.parts, ",") != strings.Join(wantParts, ",") {
		t.Errorf("form parts %q, want %q", got.parts, wantParts)
	}

	_, err = c.GetName(ctx)
	var apiErr *client.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("429: %v", err)
	}
	if !apiErr.RateLimited() || apiErr.RetryAfter != 3*time.Second || apiErr.Code != "rate_limited" ||
		apiErr.Message != "Slow down." || apiErr.Details["retryAfter"] != 3.0 || apiErr.RequestID != "req-1" {
		t.Errorf("error: %+v", apiErr)
	}
}

// A 2xx the API does not document for the operation is refused: a route
// that answers 202 where its description says 200 fails its callers.
func TestUndocumentedStatus(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, `{"success":true,"message":"","data":{"id":7}}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	if me, err := c.GetProfileMe(context.Background()); err != nil || me.ID != 7 {
		t.Fatalf("documented 200: %+v %v", me, err)
	}
	status = http.StatusAccepted
	_, err = c.GetProfileMe(context.Background())
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusAccepted || e.Code != "undocumented_status" {
		t.Fatalf("undocumented 202: %v", err)
	}
}
