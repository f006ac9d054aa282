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
	d := deviceView{Code: typedCode(r.URL.Query().Get("code"))}
	if d.Code == "" {
		h.renderDevice(w, r, http.StatusOK, d)
		return
	}
	err := h.userCall(w, r, s, func(api *client.Client) (err error) {
		d.Request, err = api.GetAuthDeviceRequestsID(r.Context(), d.Code)
		return err
	})
	h.deviceAnswer(w, r, d, err)
}

// deviceDecide approves or denies the request named by the posted code.
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
		d := deviceView{Code: typedCode(r.PostFormValue("code"))}
		err := h.userCall(w, r, s, func(api *client.Client) (err error) {
			if approve {
				d.Request, err = api.PostAuthDeviceRequestsIDApprove(r.Context(), d.Code, client.DeviceApproveInputBody{})
				d.Notice = "Approved. The device is now signed in as you; you can close this page."
			} else {
				d.Request, err = api.PostAuthDeviceRequestsIDDeny(r.Context(), d.Code)
				d.Notice = "Denied. The device was not signed in."
			}
			return err
		})
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
			d.Error = "Too many attempts. Please wait a minute and try again."
		}
		h.renderDevice(w, r, ae.Status, d)
	default:
		h.apiFailed(w, r, err)
	}
}

func (h *Handler) renderDevice(w http.ResponseWriter, r *http.Request, status int, d deviceView) {
	// The page shows who asks for access: never from a cache.
	w.Header().Set("Cache-Control", "no-store")
	h.render(w, r, status, "device", view{Title: "Connect a device", SignedIn: true, Data: d})
}
