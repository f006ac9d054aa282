package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/lms-platform/lms/client"
)

// deviceView is the /device page: the code form, a request to decide, or
// the decision made.
type deviceView struct {
	Code    string
	Request *client.DeviceRequest
	Notice  string
	Error   string
	// Token is the CSRF token of the approve and deny forms: bound to
	// this browser's session and to the request's code, so only this
	// confirmation page can decide this request.
	Token string
	// Lang is the page's language; Asked are the scopes asked for, in
	// groups and words, ticked when granted (all, at first); Granted
	// those approved.
	Lang    string
	Asked   []scopeGroup
	Granted []scopeGroup
}

// T is the device page's word for key.
func (d deviceView) T(key string) string { return deviceWords[key][langIndex(d.Lang)] }

// Status is the request's status in words.
func (d deviceView) Status() string {
	if d.Request == nil {
		return ""
	}
	if w, ok := deviceWords["st."+d.Request.Status]; ok {
		return w[langIndex(d.Lang)]
	}
	return d.Request.Status
}

// deviceCSRF is the CSRF purpose of deciding the request with this code,
// read as the API reads codes: without case, dash or spaces.
func deviceCSRF(code string) string {
	var b strings.Builder
	for _, c := range strings.ToUpper(code) {
		if (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		}
	}
	return "device:" + b.String()
}

// deliberate tells whether a browser says the request is a navigation of
// a whole page that the user started (a click, a key): fetch metadata
// that script cannot forge. Clients that send no metadata pass; the
// token check still applies to them.
func deliberate(r *http.Request) bool {
	mode := r.Header.Get("Sec-Fetch-Mode")
	if mode == "" {
		return true
	}
	dest := r.Header.Get("Sec-Fetch-Dest")
	return mode == "navigate" && (dest == "" || dest == "document") && r.Header.Get("Sec-Fetch-User") == "?1"
}

// maxUserCode bounds what the page passes on of a typed code; the API
// reads the rest (case, dash) itself.
const maxUserCode = 16

func typedCode(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > maxUserCode {
		return ""
	}
	return v
}

// devicePage lets a signed-in user type the code a command-line client
// shows (or arrive with it as ?code=, the verification_uri_complete) and
// see what asks to sign in as them.
func (h *Handler) devicePage(w http.ResponseWriter, r *http.Request) {
	s := h.requireSession(w, r)
	if s == nil {
		return
	}
	d := deviceView{Code: typedCode(r.URL.Query().Get("code")), Lang: acceptLang(r)}
	if d.Code == "" {
		h.renderDevice(w, r, http.StatusOK, d)
		return
	}
	err := h.userCall(w, r, s, func(api *client.Client) (err error) {
		d.Request, err = api.GetAuthDeviceRequestsID(r.Context(), d.Code)
		return err
	})
	if err == nil && d.Request != nil {
		d.Token = h.csrfToken(w, r, deviceCSRF(d.Request.UserCode))
	}
	h.deviceAnswer(w, r, d, err)
}

// deviceDecide approves or denies the request named by the posted code.
// Only the confirmation page's own form can: its token names this
// browser's session and the code, and the browser must say the user
// submitted it. Anything else is 403 and decides nothing.
func (h *Handler) deviceDecide(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := h.requireSession(w, r)
		if s == nil {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		if err := r.ParseForm(); err != nil {
			h.errorPage(w, r, http.StatusBadRequest, "That did not work", "The form could not be read.")
			return
		}
		d := deviceView{Code: typedCode(r.PostFormValue("code")), Lang: acceptLang(r)}
		if d.Code == "" || !h.csrfValid(r, deviceCSRF(d.Code), r.PostFormValue(csrfField)) || !deliberate(r) {
			h.log.Info("web: device decision without its confirmation page refused", "approve", approve)
			d.Code, d.Error = "", d.T("notpage")
			h.renderDevice(w, r, http.StatusForbidden, d)
			return
		}
		chosen, all := chosenScopes(r)
		err := h.userCall(w, r, s, func(api *client.Client) (err error) {
			if !approve {
				d.Request, err = api.PostAuthDeviceRequestsIDDeny(r.Context(), d.Code)
				d.Notice = d.T("denied")
				return err
			}
			body := client.DeviceApproveInputBody{}
			if !all {
				// Grant only what stayed ticked: compare with what the
				// request asks for now, so that nothing unticked slips in.
				req, err := api.GetAuthDeviceRequestsID(r.Context(), d.Code)
				if err != nil {
					return err
				}
				for _, sc := range req.Scopes {
					if chosen[sc] {
						body.Scopes = append(body.Scopes, sc)
					}
				}
				if len(body.Scopes) == 0 {
					d.Request, d.Error = req, d.T("none")
					return nil
				}
				if len(body.Scopes) == len(req.Scopes) {
					body.Scopes = nil
				}
			}
			d.Request, err = api.PostAuthDeviceRequestsIDApprove(r.Context(), d.Code, body)
			d.Notice = d.T("approved")
			return err
		})
		if err == nil && d.Error != "" {
			d.Token = h.csrfToken(w, r, deviceCSRF(d.Request.UserCode))
			h.renderDevice(w, r, http.StatusUnprocessableEntity, d)
			return
		}
		if err != nil {
			d.Notice = ""
		}
		h.deviceAnswer(w, r, d, err)
	}
}

// deviceAnswer renders the page for the API's answer: the API's 4xx
// messages (unknown code, already decided, too many attempts) are shown
// beside the code form.
func (h *Handler) deviceAnswer(w http.ResponseWriter, r *http.Request, d deviceView, err error) {
	var ae *client.Error
	switch {
	case err == nil:
		h.renderDevice(w, r, http.StatusOK, d)
	case client.StatusOf(err) == http.StatusUnauthorized:
		http.Redirect(w, r, "/login?next="+url.QueryEscape("/device?code="+url.QueryEscape(d.Code)), http.StatusSeeOther)
	case errors.As(err, &ae) && ae.Status < 500:
		d.Request = nil
		d.Error = ae.Message
		if ae.Status == http.StatusTooManyRequests {
			d.Error = d.T("toomany")
		}
		h.renderDevice(w, r, ae.Status, d)
	default:
		h.apiFailed(w, r, err)
	}
}

func (h *Handler) renderDevice(w http.ResponseWriter, r *http.Request, status int, d deviceView) {
	// The page shows who asks for access: never from a cache, and never
	// in a frame (no clickjacking of its buttons).
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", strings.Replace(pageCSP, "frame-ancestors 'self'", "frame-ancestors 'none'", 1))
	if d.Request != nil {
		granted := func(string) bool { return true }
		if d.Error != "" {
			// Refused for choosing nothing: show the boxes as they were.
			granted = func(string) bool { return false }
		}
		d.Asked = groupScopes(d.Request.Scopes, d.Lang, granted)
		d.Granted = groupScopes(d.Request.ApprovedScopes, d.Lang, granted)
	}
	h.render(w, r, status, "device", view{Title: d.T("title"), Lang: d.Lang, SignedIn: true, Data: d})
}

// maxScopeChoices bounds the scopes read from the approval form (the
// API's own limit).
const maxScopeChoices = 64

// chosenScopes reads the approval form's boxes: all is true when the form
// had none (an older page, or a client without the boxes), which grants
// what was asked.
func chosenScopes(r *http.Request) (chosen map[string]bool, all bool) {
	if r.PostFormValue("scopes_shown") != "1" {
		return nil, true
	}
	chosen = map[string]bool{}
	for i, sc := range r.PostForm["scope"] {
		if i >= maxScopeChoices {
			break
		}
		chosen[sc] = true
	}
	return chosen, false
}
