// Package h5pcontent is the H5P content kind: a topic plays one piece of
// content of the H5P service. An uploaded package goes to the service over
// HTTP with the internal token, as to a separate deployment, through the
// API's typed client; the topic keeps the content's id.
package h5pcontent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/h5p"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/kinds"
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
	doer    *http.Client
}

// New calls the H5P service at deps.H5P's address (read on each call)
// with the internal token.
func New(d kinds.Deps) *Kind {
	return &Kind{token: d.Config.InternalKey, baseURL: d.H5P.BaseURL, doer: &http.Client{Timeout: 2 * time.Minute}}
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
	// Sent empty is refused by the caller, not taken for "not sent".
	if s, ok := in.Fields["content_id"]; ok {
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

func (k *Kind) upload(ctx context.Context, t *platform.Tenant, f content.File) (Value, error) {
	api, err := k.api(ctx, t)
	if err != nil {
		return Value{}, err
	}
	rc, err := f.Open()
	if err != nil {
		return Value{}, fmt.Errorf("h5pcontent: open package: %w", err)
	}
	defer rc.Close()
	name := f.Name
	if name == "" {
		name = "content.h5p"
	}
	// The client streams the package into the request as it reads it;
	// pkg remembers a failed read, so it is not taken for an unreachable
	// service.
	pkg := &packageReader{r: rc}
	out, err := api.PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{
		H5PFile: &client.File{Name: name, Content: pkg}})
	if pkg.err != nil {
		return Value{}, fmt.Errorf("h5pcontent: read package: %w", pkg.err)
	}
	if err != nil {
		var e *client.Error
		if errors.As(err, &e) {
			switch e.Status {
			case http.StatusUnprocessableEntity:
				// The service's message names the package's problems.
				return Value{}, apperr.Validation(map[string][]string{"package": {e.Message}})
			case http.StatusRequestEntityTooLarge:
				return Value{}, apperr.New(apperr.TooLarge, e.Message)
			}
		}
		return Value{}, serviceError(err, "upload")
	}
	if out.ContentID == "" {
		return Value{}, fmt.Errorf("h5pcontent: upload: the H5P service answered no content id")
	}
	return k.fetch(ctx, t, out.ContentID)
}

// packageReader is the package being uploaded; err is its first failed
// read.
type packageReader struct {
	r   io.Reader
	err error
}

func (p *packageReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err != nil && err != io.EOF && p.err == nil {
		p.err = err
	}
	return n, err
}

// fetch reads existing content's title and library.
func (k *Kind) fetch(ctx context.Context, t *platform.Tenant, id string) (Value, error) {
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n < 1 {
		return Value{}, errContentID
	}
	api, err := k.api(ctx, t)
	if err != nil {
		return Value{}, err
	}
	c, err := api.GetH5PContentsID(ctx, id)
	if client.StatusOf(err) == http.StatusNotFound {
		return Value{}, errContentID
	}
	if err != nil {
		return Value{}, serviceError(err, "content "+id)
	}
	library := c.MainLibrary
	if c.LibraryVersion != "" {
		library += " " + c.LibraryVersion
	}
	return Value{ContentID: c.ID, Title: c.Title, Library: library}, nil
}

// ContentExists tells whether the tenant has H5P content id; the service
// knows only the content of the tenant whose host the call carries.
func (k *Kind) ContentExists(ctx context.Context, t *platform.Tenant, id string) (bool, error) {
	_, err := k.fetch(ctx, t, id)
	if err == errContentID {
		return false, nil
	}
	return err == nil, err
}

// api is the typed client of the service for the tenant and the acting
// user.
func (k *Kind) api(ctx context.Context, t *platform.Tenant) (*client.Client, error) {
	if t == nil || len(t.Hosts) == 0 {
		return nil, fmt.Errorf("h5pcontent: tenant has no host")
	}
	c, err := client.New(k.baseURL(), k.doer)
	if err != nil {
		return nil, fmt.Errorf("h5pcontent: %w", err)
	}
	c = c.WithHeader("X-Internal-Token", k.token).WithHeader("X-Forwarded-Host", t.Hosts[0])
	// The service owns what it creates to the user acting here, not to the
	// platform, so that a tutor may edit the content of their topic.
	if p := httpx.PrincipalFrom(ctx); p != nil && p.UserID > 0 {
		c = c.WithHeader(h5p.ActingUserHeader, strconv.FormatInt(p.UserID, 10))
	}
	return c, nil
}

// serviceError is a failed call of the service: 503 when the service
// cannot be reached, else an internal error naming what failed.
func serviceError(err error, what string) error {
	var e *client.Error
	var ue *url.Error
	if !errors.As(err, &e) && errors.As(err, &ue) {
		return apperr.Wrap(apperr.Unavailable, err, "The H5P service cannot be reached.")
	}
	return fmt.Errorf("h5pcontent: %s: %w", what, err)
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
