package web

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/lms-platform/lms/client"
)

// scormContent is a SCORM topic as its page plays it: the player address
// and the tracking token the page posts to it, so that the token never
// appears in a URL.
type scormContent struct {
	PackageID int64  `json:"package_id"`
	SCOID     int64  `json:"sco_id"`
	PlayerURL string `json:"-"`
	Token     string `json:"-"`
	Error     string `json:"-"`
}

// launchScorm opens a session of the topic's SCO for the signed-in
// learner, through the API with the session's token.
func (h *Handler) launchScorm(w http.ResponseWriter, r *http.Request, d *topicData) {
	s := h.readSession(r)
	if s == nil || d.Scorm == nil || d.Closed {
		return
	}
	if h.contentOrigin(r) == "" {
		d.Scorm.Error = "This site plays no packages: it has no content origin."
		return
	}
	var l *client.ScoLaunch
	err := h.userCall(w, r, s, func(api *client.Client) error {
		var err error
		l, err = api.PostScormLaunchID(r.Context(), d.Scorm.SCOID, client.LaunchInputBody{TopicID: d.Topic.ID})
		return err
	})
	if err != nil {
		d.Scorm.Error = "This activity cannot be opened now."
		var apiErr *client.Error
		if errors.As(err, &apiErr) && apiErr.Status < 500 {
			d.Scorm.Error = apiErr.Message
		}
		return
	}
	// The player runs on the content origin: the topic page posts it the
	// token (never in a URL) from a form whose target is the frame.
	d.Scorm.PlayerURL, d.Scorm.Token = h.onContent(r, l.PlayerURL), l.Token
}

// scormHeaders are the request headers the SCORM pass-through forwards:
// the tracking token, the body's type and what range requests need.
var scormHeaders = []string{"Content-Type", "X-Lms-Tracking-Token", "Range", "If-Range", "If-None-Match", "If-Modified-Since", "Accept"}

// scormProxy passes the SCORM player, its runtime, the package files and
// the tracking routes through to the API on the content origin, so that
// the SCO, its player and the routes it commits to share one origin, which
// is not the session's. They carry their own authority (the tracking
// token, signed links): no session token is sent.
func (h *Handler) scormProxy(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/api/scorm/")
	area, _, _ := strings.Cut(rest, "/")
	switch area {
	case "player", "content", "runtime", "tracks":
	default:
		h.notFound(w, r)
		return
	}
	hdr := http.Header{}
	for _, k := range scormHeaders {
		if v := r.Header.Get(k); v != "" {
			hdr.Set(k, v)
		}
	}
	path := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	var body io.Reader
	if r.ContentLength != 0 {
		body = http.MaxBytesReader(w, r.Body, 8<<20)
	}
	res, err := h.api.do(r.Context(), apiCall{Method: r.Method, Path: path, Host: h.apiHost(r), Header: hdr,
		Body: body, ContentLength: r.ContentLength})
	if err != nil {
		writeJSONError(w, http.StatusBadGateway, "The SCORM service is unavailable.")
		return
	}
	defer res.Body.Close()
	copyHeaders(w.Header(), res.Header)
	w.WriteHeader(res.StatusCode)
	streamBody(w, res.Body)
}
