package interactive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

var errGone = apperr.New(apperr.NotFound, "Not found.")

// played is a topic's app as it plays now: the topic's settings and the
// version it plays (the current one under followLatest).
type played struct {
	topic   topics.Topic
	value   Value
	version Version
}

// playing loads an interactive topic and the version it plays. A tenant
// with interactive topics disabled has none to play (404).
func (s *Service) playing(ctx context.Context, t *platform.Tenant, topicID int64) (played, error) {
	if on, err := s.Settings.Bool(ctx, t, EnabledSetting); err != nil {
		return played{}, err
	} else if !on {
		return played{}, apperr.New(apperr.NotFound, "Interactive topics are disabled on this platform.")
	}
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return played{}, err
	}
	if topic.TopicableType != Class {
		return played{}, apperr.New(apperr.Invalid, "This topic is not interactive.")
	}
	v, err := Parse(topic.Content)
	if err != nil {
		return played{}, err
	}
	ver, err := versionOf(ctx, t.DB, v.Package, v.Version)
	if err != nil {
		return played{}, err
	}
	return played{topic: topic, value: v, version: ver}, nil
}

// origins are the network origins the app may connect to: those the
// author accepted that this version's manifest still lists, and none
// while the tenant allows no network.
func (s *Service) origins(ctx context.Context, t *platform.Tenant, pl played) ([]string, error) {
	if len(pl.value.Network) == 0 {
		return nil, nil
	}
	allowed, err := s.Settings.Bool(ctx, t, AllowNetworkSetting)
	if err != nil || !allowed {
		return nil, err
	}
	var out []string
	for _, o := range pl.version.Manifest.Network {
		if contains(pl.value.Network, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Policy is the Content-Security-Policy of a played app. sandbox without
// allow-same-origin gives the page an opaque origin even when opened on
// its own: it reads no cookie or storage of ours and its requests carry
// no credentials. connect-src lists only the accepted origins, so the app
// cannot call the API or the frontend's /bff; violations are reported to
// /api/csp-report with the topic.
func Policy(topicID int64, origins []string) string {
	connect := "'none'"
	if len(origins) > 0 {
		connect = strings.Join(origins, " ")
	}
	return strings.Join([]string{
		"sandbox allow-scripts allow-pointer-lock allow-popups",
		"default-src 'self' data: blob:",
		"script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:",
		"style-src 'self' 'unsafe-inline'",
		"connect-src " + connect,
		"frame-src 'none'",
		"object-src 'none'",
		"form-action 'none'",
		"base-uri 'none'",
		"report-uri /api/csp-report?topic=" + strconv.FormatInt(topicID, 10),
	}, "; ")
}

// Open checks a play link's grant and loads what it plays with the
// origins its policy allows.
func (s *Service) Open(ctx context.Context, t *platform.Tenant, grant string) (played, []string, error) {
	topicID, err := VerifyGrant(t, grant, s.Clock.Now())
	if err != nil {
		return played{}, nil, err
	}
	pl, err := s.playing(ctx, t, topicID)
	if err != nil {
		return played{}, nil, err
	}
	origins, err := s.origins(ctx, t, pl)
	return pl, origins, err
}

// Serve sends one file of an opened app; the empty path redirects to the
// entry page.
func (s *Service) Serve(ctx context.Context, t *platform.Tenant, pl played, origins []string, file string, w http.ResponseWriter, r *http.Request) error {
	if file == "" {
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, "./"+escapePath(pl.version.Manifest.Entry), http.StatusFound)
		return nil
	}
	rc, info, err := t.Blob.Get(ctx, pl.version.Prefix+file)
	if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrInvalidKey) {
		return errGone
	}
	if err != nil {
		return fmt.Errorf("interactive: open %s: %w", file, err)
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Type", info.ContentType)
	h.Set("Content-Security-Policy", Policy(pl.topic.ID, origins))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// followLatest may change what a path holds; a pinned version never.
	if pl.value.FollowLatest {
		h.Set("Cache-Control", "private, no-cache")
	} else {
		h.Set("Cache-Control", "private, max-age=3600")
	}
	content.SendStored(w, r, rc, info)
	return nil
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
