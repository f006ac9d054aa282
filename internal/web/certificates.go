package web

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/lms-platform/lms/client"
)

// certificatesView is the certificates page: the caller's own, and for
// admins the newest certificates of every learner, each of which they
// may make again from the current template.
type certificatesView struct {
	Mine   []client.Certificate
	Admin  bool
	All    []client.Certificate
	Total  int
	Notice string
}

// adminCertificates caps the admin's list on the page: the newest ones.
const adminCertificates = 50

// certificates lists the caller's course certificates with their signed
// download links (GET /api/certificates).
func (h *Handler) certificates(w http.ResponseWriter, r *http.Request) {
	s := h.requireSession(w, r)
	if s == nil {
		return
	}
	var d certificatesView
	err := h.userCall(w, r, s, func(api *client.Client) error {
		mine, err := api.GetCertificates(r.Context(), client.GetCertificatesParams{PerPage: client.Ptr(int64(100))})
		if err != nil {
			return err
		}
		d.Mine = mine.Items
		me, err := api.GetProfileMe(r.Context())
		if err != nil {
			return err
		}
		if d.Admin = slices.Contains(me.Roles, "admin"); !d.Admin {
			return nil
		}
		all, err := api.GetAdminCertificates(r.Context(), client.GetAdminCertificatesParams{PerPage: client.Ptr(int64(adminCertificates))})
		if err != nil {
			return err
		}
		d.All, d.Total = all.Items, all.Meta.Total
		return nil
	})
	if err != nil {
		if client.StatusOf(err) == http.StatusUnauthorized {
			http.Redirect(w, r, "/login?next=/certificates", http.StatusSeeOther)
			return
		}
		h.apiFailed(w, r, err)
		return
	}
	if r.URL.Query().Get("regenerated") != "" {
		d.Notice = "The certificate was made again from the current template."
	}
	h.render(w, r, http.StatusOK, "certificates", view{Title: "Certificates", Nav: "certificates", SignedIn: true, Data: d})
}

// regenerateCertificate makes a certificate again (admins; the API
// decides) and goes back to the list.
func (h *Handler) regenerateCertificate(w http.ResponseWriter, r *http.Request) {
	s := h.requireSession(w, r)
	if s == nil {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		h.notFound(w, r)
		return
	}
	err = h.userCall(w, r, s, func(api *client.Client) error {
		_, err := api.PostAdminCertificatesIDRegenerate(r.Context(), id)
		return err
	})
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	http.Redirect(w, r, "/certificates?regenerated="+strconv.FormatInt(id, 10)+"#certificate-"+strconv.FormatInt(id, 10),
		http.StatusSeeOther)
}
