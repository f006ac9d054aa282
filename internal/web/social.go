package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/lms-platform/lms/client"
)

// socialConfig is what the frontend reads of the public settings: which
// social login providers are switched on, and their buttons' names.
type socialConfig struct {
	Auth struct {
		Socialite map[string]struct {
			Enabled bool   `json:"enabled"`
			Label   string `json:"label"`
		} `json:"socialite"`
	} `json:"lms_auth"`
}

var decodeConfig = decodeInto[socialConfig]()

type socialButton struct{ Slot, Label string }

// socialBindCookie ties a social sign-in to the browser that started it,
// for as long as the API's sealed state lives.
const (
	socialBindCookie = "lms_social_bind"
	socialBindTTL    = 10 * time.Minute
)

// socialButtons are the "Sign in with ..." buttons of the login page.
func (h *Handler) socialButtons(r *http.Request) []socialButton {
	c, err := h.public(r, "/api/config", decodeConfig)
	if err != nil || c.status != http.StatusOK {
		return nil
	}
	var out []socialButton
	for slot, p := range c.value.(*socialConfig).Auth.Socialite {
		if p.Enabled {
			out = append(out, socialButton{Slot: slot, Label: p.Label})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slot < out[j].Slot })
	return out
}

// socialPass forwards the start and the callback of social login to the
// API with the Host the browser sent, port included: the API's default
// callback address (the provider's redirect_uri) is then this very route
// on the frontend's origin. Their answers are redirects, passed on.
func (h *Handler) socialPass(w http.ResponseWriter, r *http.Request) {
	path := r.URL.RequestURI()
	if !strings.HasSuffix(r.URL.Path, "/callback") {
		// A landing link is only a token, which anyone can send anyone:
		// opened elsewhere it would sign that browser in as the sender
		// (login CSRF). The start ties the sign-in to this browser with a
		// cookie whose value the landing must bring back.
		b := make([]byte, 24)
		rand.Read(b)
		bind := base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, &http.Cookie{Name: socialBindCookie, Value: bind, Path: "/auth/social", HttpOnly: true,
			SameSite: http.SameSiteLaxMode, Secure: h.secure(r), MaxAge: int(socialBindTTL / time.Second)})
		q := r.URL.Query()
		q.Set("bind", bind)
		path = r.URL.Path + "?" + q.Encode()
	}
	res, err := h.api.do(r.Context(), apiCall{Method: http.MethodGet, Path: path, Host: h.requestHost(r),
		Header: http.Header{"Accept": {"application/json"}}})
	if err != nil {
		h.plainError(w, http.StatusBadGateway, "The learning platform cannot be reached. Please try again in a moment.")
		return
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusFound || res.StatusCode == http.StatusSeeOther {
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, res.Header.Get("Location"), res.StatusCode)
		return
	}
	err = readAnswer(res)
	h.showLogin(w, r, res.StatusCode, loginData{Error: socialMessage(err)})
}

func socialMessage(err error) string {
	var ae *client.Error
	if errors.As(err, &ae) && ae.Message != "" {
		return ae.Message
	}
	return "The sign-in did not work. Please try again."
}

// socialView is the page that asks for what the provider did not tell.
type socialView struct {
	Token, Next string
	// Ask lists the fields to fill in, Errors their messages.
	Ask    map[string]bool
	Values map[string]string
	Errors map[string][]string
}

// socialLanding is where the API's callback sends the browser: the sealed
// hand-off is redeemed at once; when the provider left out what the
// tenant needs, the page asks for it.
func (h *Handler) socialLanding(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	next := localPath(q.Get("next"), "")
	if q.Get("error") != "" {
		h.showLogin(w, r, http.StatusUnauthorized, loginData{Next: next,
			Error: "The sign-in was cancelled or refused by the provider."})
		return
	}
	if q.Get("token") == "" {
		h.plainError(w, http.StatusBadRequest, "The sign-in link has no token.")
		return
	}
	if c, err := r.Cookie(socialBindCookie); err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(q.Get("bind"))) != 1 {
		h.showLogin(w, r, http.StatusUnauthorized, loginData{Next: next,
			Error: "This sign-in was started in another browser. Please sign in here."})
		return
	}
	h.socialComplete(w, r, socialView{Token: q.Get("token"), Next: next}, client.CompleteInputBody{})
}

// socialForm posts the missing data (csrfForms has read the form).
func (h *Handler) socialForm(w http.ResponseWriter, r *http.Request) {
	v := socialView{Token: r.PostFormValue("token"), Next: localPath(r.PostFormValue("next"), ""), Values: map[string]string{}}
	var body client.CompleteInputBody
	for field, into := range map[string]**string{"email": &body.Email, "first_name": &body.FirstName, "last_name": &body.LastName} {
		if s := r.PostFormValue(field); s != "" {
			*into = &s
			v.Values[field] = s
		}
	}
	h.socialComplete(w, r, v, body)
}

func (h *Handler) socialComplete(w http.ResponseWriter, r *http.Request, v socialView, body client.CompleteInputBody) {
	w.Header().Set("Cache-Control", "no-store")
	tok, err := h.api.as(h.apiHost(r), "").PostAuthSocialCompleteID(r.Context(), v.Token, body)
	var ae *client.Error
	switch {
	case err == nil:
		h.setSession(w, r, *tok, false, 0)
		h.newCSRFSecret(w, r)
		http.Redirect(w, r, localPath(v.Next, h.landingOf(r, tok.Token)), http.StatusSeeOther)
	case errors.As(err, &ae) && ae.Code == "details_required":
		v.Ask, v.Errors = map[string]bool{}, ae.Errors
		for field := range ae.Errors {
			v.Ask[field] = true
		}
		// The first ask is no error; a form that still misses data is.
		status := http.StatusOK
		if v.Values != nil {
			status = http.StatusUnprocessableEntity
		}
		h.render(w, r, status, "social-complete", view{Title: "Complete your account", Nav: "login", Data: v})
	case errors.As(err, &ae) && ae.Status < 500:
		h.showLogin(w, r, ae.Status, loginData{Next: v.Next, Error: ae.Message})
	default:
		h.apiFailed(w, r, err)
	}
}
