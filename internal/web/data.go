package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/lms-platform/lms/client"
)

// The frontend's own views of the public answers it caches raw (catalogue,
// course, program, name, demo): only the fields the pages show. Other
// answers are read into the typed client's types.

type person struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type course struct {
	ID              int64    `json:"id"`
	Title           string   `json:"title"`
	Summary         string   `json:"summary"`
	Description     string   `json:"description"`
	ImageURL        *string  `json:"image_url"`
	Language        string   `json:"language"`
	Level           string   `json:"level"`
	Status          string   `json:"status"`
	HoursToComplete *int     `json:"hours_to_complete"`
	Public          bool     `json:"public"`
	Authors         []person `json:"authors"`
	Tags            []string `json:"tags"`
}

type program struct {
	ID          int64           `json:"id"`
	Title       string          `json:"title"`
	Summary     string          `json:"summary"`
	Description string          `json:"description"`
	Lessons     []*lesson       `json:"lessons"`
	Progress    *progressTotals `json:"progress"`
}

type lesson struct {
	ID       int64     `json:"id"`
	Title    string    `json:"title"`
	Summary  string    `json:"summary"`
	Duration string    `json:"duration"`
	Open     bool      `json:"is_open"`
	Topics   []*topic  `json:"topics"`
	Lessons  []*lesson `json:"lessons"`
}

type topic struct {
	ID        int64           `json:"id"`
	LessonID  int64           `json:"lesson_id"`
	Title     string          `json:"title"`
	Summary   string          `json:"summary"`
	Duration  string          `json:"duration"`
	Preview   bool            `json:"preview"`
	CanSkip   bool            `json:"can_skip"`
	Kind      string          `json:"kind"`
	Topicable json.RawMessage `json:"topicable"`
	Progress  *topicState     `json:"progress"`
}

type topicState struct {
	Status  int   `json:"status"`
	Seconds int64 `json:"seconds"`
}

// Topic statuses of the API.
const (
	statusIncomplete = 0
	statusComplete   = 1
	statusStarted    = 2
)

type progressTotals struct {
	Status         string     `json:"status"`
	TotalTopics    int        `json:"total_topics"`
	FinishedTopics int        `json:"finished_topics"`
	Percent        int        `json:"percent"`
	Seconds        int64      `json:"seconds"`
	StartedAt      *time.Time `json:"started_at"`
	FinishedAt     *time.Time `json:"finished_at"`
	Deadline       *time.Time `json:"deadline"`
}

// demoData is GET /api/demo; a 404 means demo mode is off.
type demoData struct {
	Enabled bool `json:"enabled"`
	Users   []struct {
		Role  string `json:"role"`
		Email string `json:"email"`
	} `json:"users"`
}

// loadPublic fetches public data anonymously for the cache.
func (h *Handler) loadPublic(ctx context.Context, host, path string) (int, []byte, error) {
	res, err := h.api.do(ctx, apiCall{Method: http.MethodGet, Path: path, Host: host,
		Header: http.Header{"Accept": {"application/json"}}})
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxJSON))
	if err != nil {
		return 0, nil, errUnreachable
	}
	return res.StatusCode, body, nil
}

// unknownTenant is the API's message for a host no tenant has.
const unknownTenant = "Unknown tenant."

// decodeInto is the decoder of data of type T; 403 and 404 answers are
// kept too (they are public facts: a course is not public, not found).
func decodeInto[T any]() decoder {
	return func(status int, body []byte) (*cached, error) {
		var v T
		meta, err := client.Decode(status, nil, body, &v)
		var ae *client.Error
		switch {
		case err == nil:
			c := &cached{status: status, value: &v}
			if meta != (client.PageMeta{}) {
				c.meta = &meta
			}
			return c, nil
		case !errors.As(err, &ae):
			return nil, err
		case ae.Message == unknownTenant:
			// Not kept: a tenant added a moment later must show at once
			// (the cache still answers the error for a second).
			return nil, err
		case status == http.StatusForbidden || status == http.StatusNotFound:
			return &cached{status: status, message: ae.Message}, nil
		}
		return nil, err
	}
}

var (
	decodeCourses = decodeInto[[]course]()
	decodeCourse  = decodeInto[course]()
	decodeProgram = decodeInto[program]()
	decodeName    = decodeInto[map[string]string]()
	decodeTags    = decodeInto[[]string]()
	decodeDemo    = decodeInto[demoData]()
)

// public reads public data through the cache.
func (h *Handler) public(r *http.Request, path string, d decoder) (*cached, error) {
	return h.cache.get(r.Context(), h.apiHost(r), path, d)
}

// siteName is the tenant's name for the page header.
func (h *Handler) siteName(r *http.Request) string {
	c, err := h.public(r, "/api/name", decodeName)
	if err == nil && c.status == http.StatusOK {
		if m := *c.value.(*map[string]string); m["name"] != "" {
			return m["name"]
		}
	}
	return "Learning"
}

// demoInfo says whether the tenant runs in demo mode.
func (h *Handler) demoInfo(ctx context.Context, r *http.Request) demoData {
	c, err := h.cache.get(ctx, h.apiHost(r), "/api/demo", decodeDemo)
	if err != nil || c.status != http.StatusOK {
		return demoData{}
	}
	return *c.value.(*demoData)
}

// cataloguePath is the API query of a catalogue page.
func cataloguePath(q string, tag string, page int) string {
	v := url.Values{"per_page": {"12"}, "page": {strconv.Itoa(page)}}
	if q != "" {
		v.Set("title", q)
	}
	if tag != "" {
		v.Set("tag", tag)
	}
	return "/api/courses?" + v.Encode()
}

func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}
