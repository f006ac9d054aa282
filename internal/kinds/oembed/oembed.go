// Package oembed is the embedded URL content kind: a topic shows the page
// of a video or other content hosted by an oEmbed provider. Build finds the
// provider's endpoint (the built-in registry first, then discovery in the
// page's head), fetches the description through fetch, which refuses
// private addresses, and stores it with its html reduced to one sandboxed
// iframe from the provider's own hosts. Descriptions are cached for a day,
// so repeated creates of one URL fetch nothing.
package oembed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/cache"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/kinds"
)

const (
	// Class is the topicable class of embedded URL topics.
	Class = `Lms\TopicTypes\Models\TopicContent\OEmbed`
	// MaxURLLength is the longest url accepted, in bytes.
	MaxURLLength = 2048
	// CacheTTL is how long a fetched description is reused.
	CacheTTL = 24 * time.Hour

	cachePrefix   = "oembed:"
	msgNoOEmbed   = "The URL has no oEmbed description."
	defaultWidth  = 1280
	defaultHeight = 720
)

// Value is the stored value of an embedded URL topic and what clients see.
type Value struct {
	URL          string `json:"url"`
	ProviderName string `json:"provider_name"`
	ProviderURL  string `json:"provider_url"`
	// Type is the oEmbed type: video, rich, photo or link.
	Type         string `json:"type"`
	Title        string `json:"title"`
	AuthorName   string `json:"author_name"`
	ThumbnailURL string `json:"thumbnail_url"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	// HTML is one sandboxed iframe (video, rich), one img (photo), or
	// empty (link, or a provider whose markup has no safe iframe, such as
	// a script widget): clients then show a link to URL.
	HTML      string    `json:"html"`
	FetchedAt time.Time `json:"fetched_at"`
}

// Options adjust a Kind; zero values take the defaults.
type Options struct {
	// Providers replace the built-in registry (DefaultProviders).
	Providers []Provider
	// MaxWidth and MaxHeight are asked of providers, in pixels.
	MaxWidth, MaxHeight int
}

// Kind is the embedded URL content kind.
type Kind struct {
	client    *fetch.Client
	cache     cache.Cache
	now       func() time.Time
	providers *registry
	maxWidth  int
	maxHeight int
}

var _ content.Kind = (*Kind)(nil)

// New returns the kind with the built-in providers: its outbound requests
// reach private addresses only as the configuration allows; deps.Cache
// keeps descriptions for CacheTTL; deps.Clock stamps fetched_at.
func New(d kinds.Deps) *Kind {
	return NewWithOptions(fetch.New(fetch.Options{AllowPrivate: d.Config.FetchAllowPrivate}), d.Cache, d.Clock.Now, Options{})
}

// NewWithOptions is New with options.
func NewWithOptions(client *fetch.Client, c cache.Cache, now func() time.Time, opts Options) *Kind {
	if client == nil {
		client = fetch.New(fetch.Options{})
	}
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	if opts.Providers == nil {
		opts.Providers = DefaultProviders()
	}
	if opts.MaxWidth <= 0 {
		opts.MaxWidth = defaultWidth
	}
	if opts.MaxHeight <= 0 {
		opts.MaxHeight = defaultHeight
	}
	return &Kind{
		client:    client,
		cache:     c,
		now:       now,
		providers: newRegistry(opts.Providers),
		maxWidth:  opts.MaxWidth,
		maxHeight: opts.MaxHeight,
	}
}

func (k *Kind) Class() string { return Class }
func (k *Kind) Name() string  { return "oembed" }

// Build resolves the url field (or the url of a generic create's value)
// into a description. An update without a url keeps the old value.
func (k *Kind) Build(ctx context.Context, _ content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	raw, given := inputURL(in)
	if !given && len(old) > 0 && string(old) != "null" {
		return old, nil
	}
	if strings.TrimSpace(raw) == "" {
		return nil, apperr.Field("url", "The url field is required.")
	}
	v, err := k.Resolve(ctx, raw)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("oembed: encode value: %w", err)
	}
	return out, nil
}

// Copy keeps the value: it refers to no file of the topic.
func (k *Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove has nothing to delete.
func (k *Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// View is the stored description.
func (k *Kind) View(_ content.Env, value json.RawMessage) (any, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "oembed: decode value")
	}
	return v, nil
}

// inputURL is the url a create or update sent: the url field, or the url of
// the generic value ({"url": "..."} or a bare JSON string).
func inputURL(in content.Input) (string, bool) {
	if u, ok := in.Fields["url"]; ok {
		return u, true
	}
	if len(in.Value) == 0 || string(in.Value) == "null" {
		return "", false
	}
	var obj struct {
		URL *string `json:"url"`
	}
	if json.Unmarshal(in.Value, &obj) == nil && obj.URL != nil {
		return *obj.URL, true
	}
	var s string
	if json.Unmarshal(in.Value, &s) == nil {
		return s, true
	}
	return "", true
}

// checkURL applies the input rules of the url field.
func checkURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, apperr.Field("url", fmt.Sprintf("The url may not be longer than %d characters.", MaxURLLength))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" {
		return nil, apperr.Field("url", "The url must be an http or https URL.")
	}
	return u, nil
}

// Resolve returns the description of a page URL, from the cache when it
// was fetched within CacheTTL. Errors are 422s on the url field.
func (k *Kind) Resolve(ctx context.Context, raw string) (Value, error) {
	raw = strings.TrimSpace(raw)
	u, err := checkURL(raw)
	if err != nil {
		return Value{}, err
	}
	key := cacheKey(raw)
	if k.cache != nil {
		// The cache only saves work: when it fails, fetch.
		if b, ok, err := k.cache.Get(ctx, key); err == nil && ok {
			var v Value
			if json.Unmarshal(b, &v) == nil && v.URL == raw {
				return v, nil
			}
		}
	}
	v, err := k.lookup(ctx, raw, u)
	if err != nil {
		return Value{}, err
	}
	if k.cache != nil {
		if b, err := json.Marshal(v); err == nil {
			_ = k.cache.Set(ctx, key, b, CacheTTL)
		}
	}
	return v, nil
}

func cacheKey(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return cachePrefix + hex.EncodeToString(sum[:])
}

// lookup finds the endpoint of u, fetches its description and makes the
// value.
func (k *Kind) lookup(ctx context.Context, raw string, u *url.URL) (Value, error) {
	provider, known := k.providers.find(u)
	endpoint, embedHosts := provider.Endpoint, provider.EmbedHosts
	if !known {
		page, err := k.client.GetPartial(ctx, raw)
		if err != nil {
			return Value{}, urlError(err)
		}
		if page.Status != 200 {
			return Value{}, noOEmbed(fmt.Errorf("oembed: page %s answered %d", raw, page.Status))
		}
		final, err := url.Parse(page.FinalURL)
		if err != nil {
			final = u
		}
		endpoint = discover(string(page.Body), final)
		if endpoint == "" {
			return Value{}, noOEmbed(fmt.Errorf("oembed: page %s has no discovery link", raw))
		}
		// A discovered provider may embed from the page's own site only.
		embedHosts = siteHosts(u.Hostname(), final.Hostname())
	}
	reqURL, err := endpointURL(endpoint, raw, !known, k.maxWidth, k.maxHeight)
	if err != nil {
		return Value{}, noOEmbed(err)
	}
	resp, err := k.client.Get(ctx, reqURL)
	if err != nil {
		if errors.Is(err, fetch.ErrRefused) {
			msg := "The oEmbed endpoint of the URL was refused. " + apperr.As(err).Message
			return Value{}, fieldError(msg, err)
		}
		return Value{}, noOEmbed(err)
	}
	if resp.Status != 200 {
		return Value{}, noOEmbed(fmt.Errorf("oembed: endpoint %s answered %d", reqURL, resp.Status))
	}
	v, err := k.value(resp.Body, raw, u, provider, embedHosts)
	if err != nil {
		return Value{}, noOEmbed(err)
	}
	return v, nil
}

// endpointURL is the request to an endpoint: format json, the page URL
// (a discovery link carries it already) and the size wanted.
func endpointURL(endpoint, page string, discovered bool, maxWidth, maxHeight int) (string, error) {
	e, err := url.Parse(strings.ReplaceAll(endpoint, "{format}", "json"))
	if err != nil {
		return "", fmt.Errorf("oembed: endpoint %q: %w", endpoint, err)
	}
	q := e.Query()
	if !discovered || q.Get("url") == "" {
		q.Set("url", page)
	}
	if q.Get("format") == "" {
		q.Set("format", "json")
	}
	if q.Get("maxwidth") == "" {
		q.Set("maxwidth", strconv.Itoa(maxWidth))
	}
	if q.Get("maxheight") == "" {
		q.Set("maxheight", strconv.Itoa(maxHeight))
	}
	e.RawQuery = q.Encode()
	return e.String(), nil
}

// value checks an oEmbed response and makes the stored value of it.
func (k *Kind) value(body []byte, raw string, u *url.URL, p Provider, embedHosts []string) (Value, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return Value{}, fmt.Errorf("oembed: response of %s: %w", raw, err)
	}
	if !versionOK(m["version"]) {
		return Value{}, fmt.Errorf("oembed: response of %s: version %v", raw, m["version"])
	}
	v := Value{
		URL:          raw,
		Type:         str(m, "type"),
		Title:        clip(strings.TrimSpace(str(m, "title")), 1000),
		AuthorName:   clip(strings.TrimSpace(str(m, "author_name")), 300),
		ProviderName: clip(strings.TrimSpace(str(m, "provider_name")), 300),
		Width:        dimension(m["width"]),
		Height:       dimension(m["height"]),
		FetchedAt:    k.now(),
	}
	if t := httpsURL(str(m, "thumbnail_url")); t != nil {
		v.ThumbnailURL = t.String()
	}
	if v.ProviderName == "" {
		v.ProviderName = p.Name
	}
	if v.ProviderName == "" {
		v.ProviderName = u.Hostname()
	}
	if pu, err := url.Parse(str(m, "provider_url")); err == nil && (pu.Scheme == "http" || pu.Scheme == "https") && pu.Host != "" {
		v.ProviderURL = pu.String()
	} else if p.URL != "" {
		v.ProviderURL = p.URL
	} else {
		v.ProviderURL = u.Scheme + "://" + u.Host + "/"
	}
	switch v.Type {
	case "video", "rich":
		v.HTML = embedHTML(str(m, "html"), func(host string) bool { return hostAllowed(host, embedHosts) })
	case "photo":
		v.HTML = photoHTML(str(m, "url"), v.Title, v.Width, v.Height)
	case "link":
	default:
		return Value{}, fmt.Errorf("oembed: response of %s: type %q", raw, v.Type)
	}
	return v, nil
}

// versionOK accepts "1.0", and the number 1 some providers send.
func versionOK(v any) bool {
	switch v := v.(type) {
	case string:
		return v == "1.0"
	case float64:
		return v == 1
	}
	return false
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// dimension reads a width or height sent as a number or a string; anything
// else, or a size out of reason, is 0.
func dimension(v any) int {
	var f float64
	switch v := v.(type) {
	case float64:
		f = v
	case string:
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0
		}
		f = n
	default:
		return 0
	}
	if math.IsNaN(f) || f < 0 || f > 100000 {
		return 0
	}
	return int(f)
}

// siteHosts are the embed hosts of a discovered provider: the hosts of the
// URL and of the page it led to, and their subdomains.
func siteHosts(hosts ...string) []string {
	var out []string
	for _, h := range hosts {
		h = strings.ToLower(h)
		if h == "" {
			continue
		}
		base := strings.TrimPrefix(h, "www.")
		out = append(out, h, base, "*."+base)
	}
	return out
}

// urlError is the 422 of a page that could not be fetched; fetch's
// messages are safe to show.
func urlError(err error) error {
	msg := "The URL could not be fetched."
	if e := apperr.As(err); e != nil && e.Kind == apperr.Invalid {
		msg = e.Message
	}
	return fieldError(msg, err)
}

func noOEmbed(cause error) error { return fieldError(msgNoOEmbed, cause) }

func fieldError(msg string, cause error) error {
	e := apperr.Field("url", msg)
	e.Err = cause
	return e
}
