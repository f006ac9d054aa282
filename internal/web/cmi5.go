package web

import (
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/lms-platform/lms/client"
)

// cmi5Content is a cmi5 topic as its page shows it: the AU and how it
// opens. The page launches nothing by itself: a session starts when the
// learner presses the start button, whose form posts to
// /learn/{course}/{topic}/cmi5 with the frame (AnyWindow) or a new window
// (OwnWindow) as its target.
type cmi5Content struct {
	PackageID    int64  `json:"package_id"`
	AUID         int64  `json:"au_id"`
	Title        string `json:"title"`
	LaunchMethod string `json:"launch_method"`
}

// OwnWindow tells whether the AU asks for a window of its own.
func (c *cmi5Content) OwnWindow() bool { return c.LaunchMethod == "OwnWindow" }

// cmi5Routes registers the launch and the page AUs return to. The AU's
// files, its fetch URL and the LRS are passed through by the content
// origin only (contentRoutes), so that the AU never runs on the origin of
// the session.
func (h *Handler) cmi5Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /learn/{course}/{topic}/cmi5", h.csrfForms(16<<10, h.launchCmi5))
	mux.HandleFunc("GET /learn/{course}/{topic}/cmi5/return", h.cmi5Return)
}

// launchCmi5 starts a session of the topic's AU for the signed-in learner
// (POST /api/cmi5/launch/{topic} with the session's token) and sends the
// frame or window that posted the form on to the AU. The launch URL and
// the URLs in it that name the API are moved onto the content origin,
// where cmi5Proxy passes them through; the AU returns to cmi5Return, on
// this origin.
func (h *Handler) launchCmi5(w http.ResponseWriter, r *http.Request) {
	courseID, topicID, s := h.topicPost(w, r)
	if s == nil {
		return
	}
	if h.contentOrigin(r) == "" {
		h.errorPage(w, r, http.StatusServiceUnavailable, "Not available", "This site plays no packages: it has no content origin.")
		return
	}
	back := h.origin(r) + topicPath(courseID, topicID) + "/cmi5/return"
	var l *client.AuLaunch
	err := h.userCall(w, r, s, func(api *client.Client) error {
		var err error
		l, err = api.PostCmi5LaunchID(r.Context(), topicID, client.LaunchInput{ReturnURL: &back})
		return err
	})
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	http.Redirect(w, r, h.frontLaunchURL(r, l.URL), http.StatusSeeOther)
}

// frontLaunchURL rewrites a launch URL so that the AU (when it is a file
// of the package), its endpoint and its fetch URL name the content origin
// instead of the API's: they carry the AU's own token, never a session.
// An AU hosted elsewhere keeps its address.
func (h *Handler) frontLaunchURL(r *http.Request, launch string) string {
	u, err := url.Parse(launch)
	if err != nil {
		return launch
	}
	q := u.Query()
	for _, k := range []string{"endpoint", "fetch"} {
		if v := q.Get(k); v != "" {
			q.Set(k, h.toContent(r, v))
		}
	}
	u.RawQuery = q.Encode()
	return h.toContent(r, u.String())
}

// toContent points a URL that names the API's own address (or the tenant
// host) at the content origin; a relative one is made absolute there.
func (h *Handler) toContent(r *http.Request, loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return loc
	}
	if u.Host != "" && !strings.EqualFold(u.Host, h.api.base.Host) && normalizeHost(u.Host) != h.apiHost(r) {
		return loc
	}
	if u.Host == "" && !strings.HasPrefix(u.Path, "/") {
		return loc
	}
	return onOrigin(h.contentOrigin(r), u)
}

// cmi5Return is the page an AU sends the learner to when it exits (the
// returnURL of LMS.LaunchData): a script takes the whole window (not just
// the AU's frame) back to the topic.
func (h *Handler) cmi5Return(w http.ResponseWriter, r *http.Request) {
	cid, tid := r.PathValue("course"), r.PathValue("topic")
	if !isID(cid) || !isID(tid) {
		h.notFound(w, r)
		return
	}
	topic := template.HTMLEscapeString("/learn/" + cid + "/" + tid)
	page := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Back to the topic</title>
<link rel="stylesheet" href="/assets/app.css?v=` + assetVersion + `">
<link rel="icon" href="/assets/favicon.svg?v=` + assetVersion + `" type="image/svg+xml">
<script src="/assets/cmi5.js?v=` + assetVersion + `" defer></script></head>
<body>` + h.actingHTML(w, r) + `<main class="wrap"><p id="cmi5-return" data-topic="` + topic + `">You have left the activity.
<a href="` + topic + `" target="_top">Back to the topic</a></p></main></body></html>`
	writePage(w, http.StatusOK, []byte(page))
}

// cmi5Headers are the request headers the cmi5 pass-through forwards: the
// LRS's credentials and version, the body's type, document concurrency
// and what range requests need. Never a cookie: the AU authenticates with
// the auth token of its launch.
var cmi5Headers = []string{"Authorization", "Content-Type", "X-Experience-API-Version", "If-Match", "If-None-Match",
	"If-Modified-Since", "If-Range", "Range", "Accept", "Accept-Language"}

// cmi5MaxBody caps what an AU may send through the frontend (statements
// with attachments included).
const cmi5MaxBody = 32 << 20

// cmi5Proxy passes an AU's package files, its one-time fetch URL and its
// LRS calls through to the API. Launching and uploading are not passed:
// they need the learner's or author's token, which the browser does not
// hold.
func (h *Handler) cmi5Proxy(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/api/cmi5/"); ok {
		area, _, _ := strings.Cut(rest, "/")
		if area != "content" && area != "fetch" {
			h.notFound(w, r)
			return
		}
	}
	hdr := http.Header{}
	for _, k := range cmi5Headers {
		if v := r.Header.Values(k); len(v) > 0 {
			hdr[k] = v
		}
	}
	path := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	var body io.Reader
	if r.ContentLength != 0 {
		body = http.MaxBytesReader(w, r.Body, cmi5MaxBody)
	}
	res, err := h.api.do(r.Context(), apiCall{Method: r.Method, Path: path, Host: h.apiHost(r), Header: hdr,
		Body: body, ContentLength: r.ContentLength})
	if err != nil {
		writeJSONError(w, http.StatusBadGateway, "The cmi5 service is unavailable.")
		return
	}
	defer res.Body.Close()
	copyHeaders(w.Header(), res.Header)
	w.WriteHeader(res.StatusCode)
	streamBody(w, res.Body)
}
