package web

import (
	"errors"
	"net/http"

	"github.com/lms-platform/lms/client"
)

// ltiLaunch is where the API's LTI tool launch sends the browser with a
// one-time code: the code is exchanged for a token, which becomes the
// session (8 hours), and the learner lands on the course.
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
	h.setSession(w, r, *tok, false, ltiSessionTTL)
	h.newCSRFSecret(w, r)
	w.Header().Set("Cache-Control", "no-store")
	target := "/my"
	if course != "" {
		target = "/learn/" + course
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}
