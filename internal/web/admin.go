package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/client"
)

// The admin pages (/admin/...) run a school in the browser: users,
// groups, settings, tokens and the agent audit, message and certificate
// templates, LTI, failed deliveries. Like the learner pages they call the
// API with the signed-in user's token on the server side and post to
// the frontend's own routes (never /bff/). Whoever is not an admin gets
// the plain 404 of an unknown page, so the pages do not advertise
// themselves; the API checks every call again.

// adminForm bounds a posted admin form (settings is the largest).
const adminForm = 256 << 10

// adminRoutes registers the admin pages on mux.
func (h *Handler) adminRoutes(mux *http.ServeMux) {
	get := func(pattern string, fn adminHandler) { mux.HandleFunc("GET "+pattern, h.admin(fn)) }
	post := func(pattern string, fn adminHandler) {
		mux.HandleFunc("POST "+pattern, h.csrfForms(adminForm, h.admin(fn)))
	}
	get("/admin", h.adminHome)
	get("/admin/users", h.adminUsers)
	get("/admin/users/new", h.adminUserNew)
	post("/admin/users", h.adminUserCreate)
	get("/admin/users/{id}", h.adminUser)
	post("/admin/users/{id}", h.adminUserSave)
	post("/admin/users/{id}/active", h.adminUserActive)
	post("/admin/users/{id}/interests", h.adminInterestsAdd)
	post("/admin/users/{id}/interests/{interest}/remove", h.adminInterestRemove)
	get("/admin/users/{id}/delete", h.adminUserDeleteConfirm)
	post("/admin/users/{id}/delete", h.adminUserDelete)
	post("/admin/users/{id}/impersonate", h.adminImpersonate)
	// Coming back is for whoever the browser acts as, admin or not.
	mux.HandleFunc("POST /impersonation/end", h.csrfForms(16<<10, h.endImpersonation))
	get("/admin/groups", h.adminGroups)
	post("/admin/groups", h.adminGroupCreate)
	get("/admin/groups/{id}", h.adminGroup)
	post("/admin/groups/{id}", h.adminGroupSave)
	post("/admin/groups/{id}/members", h.adminGroupAddMember)
	post("/admin/groups/{id}/members/{user}/remove", h.adminGroupRemoveMember)
	get("/admin/groups/{id}/delete", h.adminGroupDeleteConfirm)
	post("/admin/groups/{id}/delete", h.adminGroupDelete)
	get("/admin/settings", h.adminSettings)
	post("/admin/settings", h.adminSettingsSave)
	get("/admin/tokens", h.adminTokens)
	post("/admin/tokens/{id}/revoke", h.adminTokenRevoke)
	get("/admin/audit", h.adminAudit)
	get("/admin/templates", h.adminTemplates)
	get("/admin/templates/{id}", h.adminTemplate)
	post("/admin/templates/{id}", h.adminTemplateSave)
	get("/admin/certificates", h.adminCertificates)
	post("/admin/certificates/{id}/regenerate", h.adminCertificateRegenerate)
	get("/admin/lti", h.adminLTI)
	post("/admin/lti/registrations", h.adminLTIRegistrationCreate)
	get("/admin/lti/registrations/{id}/delete", h.adminLTIDeleteConfirm("registrations"))
	post("/admin/lti/registrations/{id}/delete", h.adminLTIDelete("registrations"))
	post("/admin/lti/tools", h.adminLTIToolCreate)
	get("/admin/lti/tools/{id}/delete", h.adminLTIDeleteConfirm("tools"))
	post("/admin/lti/tools/{id}/delete", h.adminLTIDelete("tools"))
	get("/admin/deliveries", h.adminDeliveries)
	post("/admin/deliveries/{id}/retry", h.adminDeliveryRetry)
}

// adminCall is one admin request: the session, the API signed in as it,
// and the page's words.
type adminCall struct {
	w   http.ResponseWriter
	r   *http.Request
	s   *session
	api *client.Client
	me  *client.Profile
	v   adminView
}

type adminHandler func(c *adminCall)

// admin lets only admins through: anonymous callers go to the sign-in
// page, everybody else gets 404. The role comes from the API's profile
// of the caller, asked on every admin request.
func (h *Handler) admin(fn adminHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := h.requireSession(w, r)
		if s == nil {
			return
		}
		var me *client.Profile
		err := h.userCall(w, r, s, func(api *client.Client) (err error) {
			me, err = api.GetProfileMe(r.Context())
			return err
		})
		if client.StatusOf(err) == http.StatusUnauthorized {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if err != nil {
			h.apiFailed(w, r, err)
			return
		}
		h.navRoles.put(s.token, me.Roles, me.Permissions, h.clock.Now())
		if !slices.Contains(me.Roles, "admin") {
			h.notFound(w, r)
			return
		}
		fn(&adminCall{w: w, r: r, s: s, me: me, api: h.api.as(h.apiHost(r), s.token),
			v: adminView{Lang: acceptLang(r)}})
	}
}

// page renders one admin page: the one template "admin" with the
// section's part.
func (h *Handler) adminPage(c *adminCall, status int, section, titleKey string, data any) {
	c.v.Section, c.v.Title = section, c.v.T(titleKey)
	c.v.CSRF = h.csrfToken(c.w, c.r, csrfForm)
	h.render(c.w, c.r, status, "admin", view{Title: c.v.Title, Lang: c.v.Lang, Nav: "admin", SignedIn: true,
		CSRF: c.v.CSRF, Data: adminPageData{adminView: c.v, Page: data}})
}

// adminPageData is what the admin template gets: the shared view and the
// section's own data.
type adminPageData struct {
	adminView
	Page any
}

// failed shows an API failure: 422 messages go back to the form through
// the caller (invalid), everything else is the frontend's error page.
func (h *Handler) adminFailed(c *adminCall, err error) {
	if client.StatusOf(err) == http.StatusUnauthorized {
		http.Redirect(c.w, c.r, "/login?next="+url.QueryEscape(c.r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	h.apiFailed(c.w, c.r, err)
}

// invalid copies the API's validation answer (message and messages by
// field) into the page's view; it tells whether err was one.
func (c *adminCall) invalid(err error) bool {
	var ae *client.Error
	if !errors.As(err, &ae) || (ae.Status != http.StatusUnprocessableEntity && ae.Status != http.StatusBadRequest &&
		ae.Status != http.StatusConflict && ae.Status != http.StatusForbidden) {
		return false
	}
	c.v.Error = ae.Message
	c.v.Errors = map[string][]string{}
	for field, msgs := range ae.Errors {
		c.v.Errors[strings.TrimPrefix(field, "body.")] = msgs
	}
	return true
}

// adminActed ends an action of no form to show again (a delete, a
// retry): a refusal the API explains is an error page with its message,
// another failure adminFailed's, success goes back to path with notice.
func (h *Handler) adminActed(c *adminCall, err error, path, notice string) {
	if c.invalid(err) {
		h.errorPage(c.w, c.r, client.StatusOf(err), c.v.T("err.title"), c.v.Error)
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done(path, notice)
}

// done sends the browser back to a page after a change, with a notice.
func (c *adminCall) done(path, notice string) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	http.Redirect(c.w, c.r, path+sep+"done="+notice, http.StatusSeeOther)
}

// notice is the page's message after a change (?done=...): only known
// keys are shown, so a link cannot put words on the page.
func (c *adminCall) notice() {
	if k := c.r.URL.Query().Get("done"); strings.HasPrefix(k, "done.") && adminWords[k] != [3]string{} {
		c.v.Notice = c.v.T(k)
	}
}

// pathID is the positive integer path value name, or 0.
func (c *adminCall) pathID(name string) int64 {
	n, err := strconv.ParseInt(c.r.PathValue(name), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// queryInt is a positive integer query value, or 0.
func queryInt(r *http.Request, name string) int64 {
	n, err := strconv.ParseInt(r.URL.Query().Get(name), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

func (h *Handler) adminHome(c *adminCall) {
	h.adminPage(c, http.StatusOK, "home", "admin.title", nil)
}

// navRoleMemo remembers for a while the roles and permissions of a
// session's user, for the header's links (Teaching, Admin): pages that do
// not otherwise ask the API who the caller is ask at most once per token
// and navRoleTTL, whichever way the session began (password, social, demo,
// LTI launch).
type navRoleMemo struct {
	mu   sync.Mutex
	byTk map[[32]byte]navRole
}

type navRole struct {
	roles, perms []string
	at           time.Time
}

const (
	navRoleTTL = 5 * time.Minute
	// navRoleMax bounds the memo; past it, it starts again empty.
	navRoleMax = 10_000
)

func (m *navRoleMemo) put(token string, roles, perms []string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byTk == nil || len(m.byTk) >= navRoleMax {
		m.byTk = map[[32]byte]navRole{}
	}
	m.byTk[tokenKey(token)] = navRole{roles: roles, perms: perms, at: now}
}

func (m *navRoleMemo) get(token string, now time.Time) (navRole, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byTk[tokenKey(token)]
	if !ok || now.Sub(e.at) > navRoleTTL {
		return navRole{}, false
	}
	return e, true
}

// callerNav is the signed-in caller's roles and permissions, from the
// memo or the API (empty when signed out or the API cannot say now).
func (h *Handler) callerNav(r *http.Request) navRole {
	s := h.readSession(r)
	if s == nil {
		return navRole{}
	}
	return h.navOf(r, s.token)
}

// navOf is callerNav for a token the request may not carry yet (just
// signed in).
func (h *Handler) navOf(r *http.Request, token string) navRole {
	now := h.clock.Now()
	if e, ok := h.navRoles.get(token, now); ok {
		return e
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	me, err := h.api.as(h.apiHost(r), token).GetProfileMe(ctx)
	if err != nil {
		return navRole{}
	}
	h.navRoles.put(token, me.Roles, me.Permissions, now)
	return navRole{roles: me.Roles, perms: me.Permissions, at: now}
}

// adminNav is the header's Admin link text for the request's language,
// or "" when the caller is not an admin (or the API cannot say now).
func adminNav(nav navRole, lang string) string {
	if !slices.Contains(nav.roles, "admin") {
		return ""
	}
	return adminWords["nav.admin"][langIndex(lang)]
}
