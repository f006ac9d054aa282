package web

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/lms-platform/lms/client"
)

// ltiPendingCookie holds the token of an LTI launch waiting for the
// learner's confirmation because another user is signed in in this
// browser. It is SameSite=Strict and limited to /lti/: another site can
// neither make the browser send it nor post the confirmation with it.
const (
	ltiPendingCookie = "lms_lti_pending"
	ltiPendingTTL    = 10 * time.Minute
)

// ltiLaunch is where the API's LTI tool launch sends the browser with a
// one-time code: the code is exchanged for a token, which becomes the
// session (8 hours), and the learner lands on the course.
//
// A launch link is only a code, which anyone can send to anyone: opened
// in a browser where another user is signed in, it would silently swap
// that user's session for the account of whoever made the link (login
// CSRF). So when the browser holds a live session of a different user,
// the launch asks first (ltiSwitch) and keeps the new token aside until
// the learner chooses.
func (h *Handler) ltiLaunch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	code := q.Get("code")
	if code == "" {
		h.plainError(w, http.StatusBadRequest, "The launch link has no code.")
		return
	}
	course := q.Get("course")
	if course != "" && !isID(course) {
		h.plainError(w, http.StatusBadRequest, "The launch link names no valid course.")
		return
	}
	tok, err := h.api.as(h.apiHost(r), "").PostLTIToolExchange(r.Context(), client.ExchangeInputBody{Code: code})
	switch {
	case errors.Is(err, errUnreachable):
		h.plainError(w, http.StatusBadGateway, "The learning platform cannot be reached. Please try again in a moment.")
		return
	case err != nil && client.StatusOf(err) >= 500:
		h.plainError(w, http.StatusBadGateway, "The learning platform could not complete the launch. Please try again.")
		return
	case err != nil || tok == nil || tok.Token == "":
		h.plainError(w, http.StatusUnauthorized,
			"This launch link is invalid or has expired. Please start again from your course platform.")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if s := h.readSession(r); s != nil && s.token != tok.Token {
		if sw, ask := h.ltiSwitch(r, s.token, tok.Token, course); ask {
			http.SetCookie(w, &http.Cookie{Name: ltiPendingCookie, Value: tok.Token, Path: "/lti/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode, Secure: h.secure(r), MaxAge: int(ltiPendingTTL / time.Second)})
			h.render(w, r, http.StatusOK, "lti-switch", view{Title: "Switch account?", SignedIn: true, Data: sw})
			return
		}
	}
	h.setSession(w, r, *tok, false, ltiSessionTTL)
	h.newCSRFSecret(w, r)
	http.Redirect(w, r, ltiTarget(course), http.StatusSeeOther)
}

// ltiSwitchView is what the confirmation page shows.
type ltiSwitchView struct {
	Current, Next string
	Course        string
}

// ltiSwitch tells whether the launch must ask before replacing the
// session: the session is live (the API still accepts it) and belongs to
// another user than the launch's token, or the launch's user cannot be
// told. A dead session is replaced without asking.
func (h *Handler) ltiSwitch(r *http.Request, current, next, course string) (ltiSwitchView, bool) {
	host := h.apiHost(r)
	cur, err := h.api.as(host, current).GetProfileMe(r.Context())
	if err != nil || cur == nil {
		return ltiSwitchView{}, false
	}
	sw := ltiSwitchView{Current: displayName(cur), Next: "another account", Course: course}
	nu, err := h.api.as(host, next).GetProfileMe(r.Context())
	if err == nil && nu != nil {
		if nu.ID == cur.ID {
			return ltiSwitchView{}, false
		}
		sw.Next = displayName(nu)
	}
	return sw, true
}

func displayName(p *client.Profile) string {
	if p.Name != "" {
		return p.Name + " (" + p.Email + ")"
	}
	return p.Email
}

// ltiConfirm answers the confirmation page: choice "switch" makes the
// pending launch token the session and goes on to the course; anything
// else keeps the current session. Either way the pending token is
// dropped. Like every form it passes the same-origin guard and carries
// its CSRF token.
func (h *Handler) ltiConfirm(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	course := r.PostFormValue("course")
	if course != "" && !isID(course) {
		h.plainError(w, http.StatusBadRequest, "The launch names no valid course.")
		return
	}
	pending, err := r.Cookie(ltiPendingCookie)
	if err != nil || pending.Value == "" {
		h.plainError(w, http.StatusBadRequest,
			"There is no launch to confirm, or it has expired. Please start again from your course platform.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: ltiPendingCookie, Path: "/lti/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.secure(r)})
	if r.PostFormValue("choice") != "switch" {
		http.Redirect(w, r, "/my", http.StatusSeeOther)
		return
	}
	h.setSession(w, r, client.Issued{Token: pending.Value}, false, ltiSessionTTL)
	h.newCSRFSecret(w, r)
	http.Redirect(w, r, ltiTarget(course), http.StatusSeeOther)
}

func ltiTarget(course string) string {
	if course != "" {
		return "/learn/" + course
	}
	return "/my"
}

// ltiAuthorizePath is the API's OIDC authorization endpoint of launches
// from this platform: the path of the cookie a launch answer sets.
const ltiAuthorizePath = "/api/lti/authorize"

// launchTool launches the external tool of an lti topic for the signed-in
// learner (platform role). POST /api/lti/launches/{topic}, called here
// with the session's token, answers the tool's login URL and sets the
// one-time cookie that binds the login hint to the browser: the tool
// sends the browser back to the API's authorization endpoint, which
// answers only a browser holding it. The API answered the frontend, not
// the browser, so the cookie is handed on here, on the frontend's host:
// the tenant's host, which the API's authorization endpoint is on too
// (on another port, or behind the same proxy; cookies do not tell ports
// apart). The browser goes on to the tool from a page rather than by a
// redirect, which the form's CSP (form-action 'self') would block.
func (h *Handler) launchTool(w http.ResponseWriter, r *http.Request) {
	courseID, topicID, s := h.topicPost(w, r)
	if s == nil {
		return
	}
	var kept cookieKeeper
	var l *client.ToolLaunch
	err := h.userCall(w, r, s, func(api *client.Client) error {
		var err error
		l, err = h.api.keeping(h.apiHost(r), api.Token(), &kept).PostLTILaunchesID(r.Context(), topicID)
		return err
	})
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	h.handToTool(w, r, kept.cookies, l.URL, topicPath(courseID, topicID), "back to the topic")
}

// handToTool sends the browser on to a tool's login URL with the cookies
// of the API's answer that bind its login hint to the browser (see
// launchTool), from a page that links back to back.
func (h *Handler) handToTool(w http.ResponseWriter, r *http.Request, cookies []*http.Cookie, toolURL, back, backText string) {
	to, err := url.Parse(toolURL)
	if err != nil || (to.Scheme != "http" && to.Scheme != "https") {
		h.errorPage(w, r, http.StatusBadGateway, "Not available", "The tool's address is not valid.")
		return
	}
	for _, c := range cookies {
		if c.Path != ltiAuthorizePath {
			continue
		}
		// Over https the tool may send the browser back by a form post or
		// in a frame, which only SameSite=None cookies follow.
		same := http.SameSiteLaxMode
		if h.secure(r) {
			same = http.SameSiteNoneMode
		}
		http.SetCookie(w, &http.Cookie{Name: c.Name, Value: c.Value, Path: ltiAuthorizePath, MaxAge: c.MaxAge,
			HttpOnly: true, Secure: h.secure(r), SameSite: same})
	}
	target := template.HTMLEscapeString(to.String())
	page := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Opening the tool</title>
<meta http-equiv="refresh" content="0; url=` + target + `">
<link rel="stylesheet" href="/assets/app.css?v=` + assetVersion + `"></head>
<body>` + h.actingHTML(w, r) + `<main class="wrap"><p id="lti-opening">Opening the tool… <a href="` + target + `" id="lti-continue">Continue</a>
or go <a href="` + template.HTMLEscapeString(back) + `">` + template.HTMLEscapeString(backText) + `</a>.</p></main></body></html>`
	w.Header().Set("Referrer-Policy", "no-referrer")
	writePage(w, http.StatusOK, []byte(page))
}
