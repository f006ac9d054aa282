// Package h5pcontent is the H5P content kind: a topic plays one piece of
// content of the H5P service. An uploaded package goes to the service over
// HTTP with the internal token, as to a separate deployment; the topic
// keeps the content's id.
package h5pcontent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/h5p"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// Class is the topicable class of H5P topics.
const Class = `Lms\TopicTypes\Models\TopicContent\H5P`

// Value is what an H5P topic stores.
type Value struct {
	ContentID string `json:"content_id"`
	Title     string `json:"title"`
	Library   string `json:"library"`
}

// View is what clients see of an H5P topic.
type View struct {
	Value
	EmbedURL string `json:"embed_url"`
	PlayURL  string `json:"play_url"`
}

// Kind is the H5P kind.
type Kind struct {
	token   string
	baseURL func() string
	client  *http.Client
}

// New calls the H5P service at baseURL() (read on each call) with the
// internal token.
func New(internalToken string, baseURL func() string) *Kind {
	return &Kind{token: internalToken, baseURL: baseURL, client: &http.Client{Timeout: 2 * time.Minute}}
}

func (*Kind) Class() string { return Class }
func (*Kind) Name() string  { return "h5p" }

// Build takes a package in the file field package (or file), uploaded to
// the service, or the id of existing content in content_id. An update
// sending neither keeps the old value.
func (k *Kind) Build(ctx context.Context, env content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	var v Value
	var err error
	if f, ok := in.Files["package"]; ok {
		v, err = k.upload(ctx, env.Tenant, f)
	} else if f, ok := in.Files["file"]; ok {
		v, err = k.upload(ctx, env.Tenant, f)
	} else if id, ok := contentIDInput(in); ok {
		v, err = k.fetch(ctx, env.Tenant, id)
	} else if old != nil {
		return old, nil
	} else {
		return nil, apperr.Validation(map[string][]string{
			"package": {"An H5P package (package) or the id of existing H5P content (content_id) is required."}})
	}
	if err != nil {
		return nil, err
	}
	if old != nil {
		if prev, perr := parse(old); perr == nil && prev == v {
			return old, nil
		}
	}
	return json.Marshal(v)
}

// contentIDInput reads content_id from the fields or the generic value.
func contentIDInput(in content.Input) (string, bool) {
	if s, ok := in.Fields["content_id"]; ok && strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s), true
	}
	if len(in.Value) == 0 {
		return "", false
	}
	var obj struct {
		ContentID json.RawMessage `json:"content_id"`
	}
	if json.Unmarshal(in.Value, &obj) != nil || len(obj.ContentID) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(obj.ContentID, &s) == nil {
		return strings.TrimSpace(s), s != ""
	}
	var n json.Number
	if json.Unmarshal(obj.ContentID, &n) == nil {
		return n.String(), true
	}
	return "", false
}

var errContentID = apperr.Validation(map[string][]string{"content_id": {"The content_id must name existing H5P content."}})

// envelope is the service's answer.
type envelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (k *Kind) upload(ctx context.Context, t *platform.Tenant, f content.File) (Value, error) {
	rc, err := f.Open()
	if err != nil {
		return Value{}, fmt.Errorf("h5pcontent: open package: %w", err)
	}
	defer rc.Close()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	name := f.Name
	if name == "" {
		name = "content.h5p"
	}
	part, err := mw.CreateFormFile("h5p_file", name)
	if err != nil {
		return Value{}, fmt.Errorf("h5pcontent: form: %w", err)
	}
	if _, err := io.Copy(part, rc); err != nil {
		return Value{}, fmt.Errorf("h5pcontent: read package: %w", err)
	}
	if err := mw.Close(); err != nil {
		return Value{}, fmt.Errorf("h5pcontent: form: %w", err)
	}
	status, env, err := k.call(ctx, t, http.MethodPost, "/h5p/contents/upload", &body, mw.FormDataContentType())
	if err != nil {
		return Value{}, err
	}
	switch {
	case status == http.StatusUnprocessableEntity:
		return Value{}, apperr.Validation(map[string][]string{"package": {problem(env)}})
	case status == http.StatusRequestEntityTooLarge:
		return Value{}, apperr.New(apperr.TooLarge, problem(env))
	case status != http.StatusCreated && status != http.StatusOK:
		return Value{}, fmt.Errorf("h5pcontent: upload: H5P service answered %d: %s", status, env.Message)
	}
	var data struct {
		ContentID string `json:"contentId"`
	}
	if err := json.Unmarshal(env.Data, &data); err != nil || data.ContentID == "" {
		return Value{}, fmt.Errorf("h5pcontent: upload: unexpected answer: %s", env.Data)
	}
	return k.fetch(ctx, t, data.ContentID)
}

func problem(env envelope) string {
	if env.Message != "" {
		return env.Message
	}
	return "The H5P package is invalid."
}

// fetch reads existing content's title and library.
func (k *Kind) fetch(ctx context.Context, t *platform.Tenant, id string) (Value, error) {
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n < 1 {
		return Value{}, errContentID
	}
	status, env, err := k.call(ctx, t, http.MethodGet, "/h5p/contents/"+url.PathEscape(id), nil, "")
	if err != nil {
		return Value{}, err
	}
	if status == http.StatusNotFound {
		return Value{}, errContentID
	}
	if status != http.StatusOK {
		return Value{}, fmt.Errorf("h5pcontent: content %s: H5P service answered %d: %s", id, status, env.Message)
	}
	var data struct {
		ID             string `json:"id"`
		Title          string `json:"title"`
		MainLibrary    string `json:"mainLibrary"`
		LibraryVersion string `json:"libraryVersion"`
	}
	if err := json.Unmarshal(env.Data, &data); err != nil {
		return Value{}, fmt.Errorf("h5pcontent: content %s: unexpected answer: %w", id, err)
	}
	library := data.MainLibrary
	if data.LibraryVersion != "" {
		library += " " + data.LibraryVersion
	}
	return Value{ContentID: data.ID, Title: data.Title, Library: library}, nil
}

// call sends one request to the service for the tenant.
func (k *Kind) call(ctx context.Context, t *platform.Tenant, method, path string, body io.Reader, contentType string) (int, envelope, error) {
	var env envelope
	if t == nil || len(t.Hosts) == 0 {
		return 0, env, fmt.Errorf("h5pcontent: tenant has no host")
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(k.baseURL(), "/")+path, body)
	if err != nil {
		return 0, env, fmt.Errorf("h5pcontent: request: %w", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Internal-Token", k.token)
	req.Header.Set("X-Forwarded-Host", t.Hosts[0])
	// The service owns what it creates to the user acting here, not to the
	// platform, so that a tutor may edit the content of their topic.
	if p := httpx.PrincipalFrom(ctx); p != nil && p.UserID > 0 {
		req.Header.Set(h5p.ActingUserHeader, strconv.FormatInt(p.UserID, 10))
	}
	res, err := k.client.Do(req)
	if err != nil {
		return 0, env, apperr.Wrap(apperr.Unavailable, err, "The H5P service cannot be reached.")
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return 0, env, fmt.Errorf("h5pcontent: read answer: %w", err)
	}
	_ = json.Unmarshal(raw, &env)
	return res.StatusCode, env, nil
}

// Copy shares the content: the clone plays the same H5P content.
func (*Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove keeps the content: it lives in the H5P service, where other
// topics may use it.
func (*Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// View shows the content with its player links.
func (*Kind) View(_ content.Env, value json.RawMessage) (any, error) {
	v, err := parse(value)
	if err != nil {
		return nil, err
	}
	return View{Value: v, EmbedURL: "/h5p/embed/play/" + v.ContentID, PlayURL: "/h5p/contents/" + v.ContentID + "/play"}, nil
}

// ContentID returns the H5P content id of a topic's value.
func ContentID(value json.RawMessage) (string, error) {
	v, err := parse(value)
	return v.ContentID, err
}

func parse(value json.RawMessage) (Value, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return v, fmt.Errorf("h5pcontent: parse value: %w", err)
	}
	return v, nil
}
