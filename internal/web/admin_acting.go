package web

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

// Impersonation: an admin signs this browser in as a user, to see what
// the user sees. The browser's session becomes the user's (the API's
// impersonation token, which names the admin); the admin's own token
// stays on the server, in the keeper's record of that session, renewed
// there like any kept token, so that "Back to my account" restores it
// without signing in again and without the browser ever holding two
// tokens. Every page says who acts as whom. Nothing survives a restart
// of the frontend: the admin then signs out and in again, as with any
// kept session.

// permImpersonate is the API's permission to impersonate; the pages
// offer it only to whom holds it (an admin's scoped token does not).
const permImpersonate = "user_impersonate"

// mayImpersonate tells whether the admin page may offer "Sign in as":
// the caller holds the permission and is not already acting as someone
// (acting within acting would lose the way back).
func (c *adminCall) mayImpersonate(h *Handler) bool {
	return slices.Contains(c.me.Permissions, permImpersonate) && h.keeper.actingOf(c.s.token) == nil
}

func (h *Handler) adminImpersonate(c *adminCall) {
	if c.pathID("id") == 0 {
		h.notFound(c.w, c.r)
		return
	}
	if !slices.Contains(c.me.Permissions, permImpersonate) {
		h.errorPage(c.w, c.r, http.StatusForbidden, c.v.T("err.title"), c.v.T("err.impersonate"))
		return
	}
	if h.keeper.actingOf(c.s.token) != nil {
		h.errorPage(c.w, c.r, http.StatusConflict, c.v.T("err.title"), c.v.T("err.acting"))
		return
	}
	u, ok := h.loadUser(c)
	if !ok {
		return
	}
	tok, err := c.api.PostAdminAuthImpersonate(c.r.Context(), client.ImpersonateInputBody{UserID: u.ID})
	if c.invalid(err) {
		h.errorPage(c.w, c.r, client.StatusOf(err), c.v.T("err.title"), c.v.Error)
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	now := h.clock.Now()
	until := h.keeper.until(c.s.token)
	if until.IsZero() {
		until = now.Add(sessionTTL)
	}
	h.setSession(c.w, c.r, *tok, false, 0)
	h.keeper.actAs(h.apiHost(c.r), tok.Token, acting{admin: c.s.token, adminName: nameOf(c.me.Name, c.me.Email),
		userName: nameOf(u.Name, u.Email), userID: u.ID}, until, now)
	h.startKeeper()
	h.newCSRFSecret(c.w, c.r)
	http.Redirect(c.w, c.r, "/my", http.StatusSeeOther)
}

func nameOf(name, email string) string {
	if strings.TrimSpace(name) != "" {
		return name
	}
	return email
}

// endImpersonation is "Back to my account": the user's token is revoked
// and the admin's session comes back, on the page of the user. When the
// admin's own session ended meanwhile, the browser is signed out and
// asked to sign in.
func (h *Handler) endImpersonation(w http.ResponseWriter, r *http.Request) {
	s := h.requireSession(w, r)
	if s == nil {
		return
	}
	a := h.keeper.actingOf(s.token)
	if a == nil {
		http.Redirect(w, r, "/my", http.StatusSeeOther)
		return
	}
	ctx, host := r.Context(), h.apiHost(r)
	if err := h.api.as(host, s.token).PostAuthLogout(ctx); err != nil && client.StatusOf(err) != http.StatusUnauthorized {
		h.log.Info("web: ending an impersonation at the API failed", "err", err)
	}
	h.keeper.drop(s.token)
	h.newCSRFSecret(w, r)
	if _, err := h.api.as(host, a.admin).GetProfileMe(ctx); err != nil {
		h.keeper.drop(a.admin)
		h.clearSession(w, r)
		if client.StatusOf(err) == http.StatusUnauthorized {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		h.apiFailed(w, r, err)
		return
	}
	h.setSession(w, r, client.Issued{Token: a.admin}, false, 0)
	http.Redirect(w, r, "/admin/users/"+strconv.FormatInt(a.userID, 10)+"?done=done.back", http.StatusSeeOther)
}

// actingView is the banner of a browser whose admin acts as a user.
type actingView struct {
	Lang, Label, Text, Back string
}

// actingBanner is the banner for the request's session in lang, or nil
// when nobody acts as anybody.
func (h *Handler) actingBanner(r *http.Request, lang string) *actingView {
	s := h.readSession(r)
	if s == nil {
		return nil
	}
	a := h.keeper.actingOf(s.token)
	if a == nil {
		return nil
	}
	i := langIndex(lang)
	text := strings.NewReplacer("{admin}", a.adminName, "{user}", a.userName).Replace(adminWords["acting.text"][i])
	return &actingView{Lang: pageLangs[i], Label: adminWords["acting.label"][i], Text: text, Back: adminWords["acting.back"][i]}
}

// actingHTML is the acting banner for the pages written without the
// layout (cmi5's return page, the LTI hand-over page), with its form's
// token; empty when nobody acts as anybody.
func (h *Handler) actingHTML(w http.ResponseWriter, r *http.Request) string {
	a := h.actingBanner(r, acceptLang(r))
	if a == nil {
		return ""
	}
	var b strings.Builder
	data := struct {
		Acting *actingView
		CSRF   string
	}{a, h.csrfToken(w, r, csrfForm)}
	if err := h.pages.layout.ExecuteTemplate(&b, "acting-banner", data); err != nil {
		h.log.Error("web: render the acting banner", "err", err)
		return ""
	}
	return b.String()
}
