package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

type tokensPage struct {
	Items      []client.Token
	User       int64
	Revoked    bool
	Prev, Next string
}

func (h *Handler) adminTokens(c *adminCall) {
	d := tokensPage{User: queryInt(c.r, "user"), Revoked: c.r.URL.Query().Get("revoked") == "1"}
	p := client.GetAdminTokensParams{PerPage: client.Ptr(int64(adminPerPage))}
	if n := queryInt(c.r, "page"); n > 0 {
		p.Page = &n
	}
	if d.User > 0 {
		p.UserID = &d.User
	}
	if d.Revoked {
		p.IncludeRevoked = client.Ptr(true)
	}
	page, err := c.api.GetAdminTokens(c.r.Context(), p)
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	d.Items = page.Items
	base := url.Values{}
	if d.User > 0 {
		base.Set("user", strconv.FormatInt(d.User, 10))
	}
	if d.Revoked {
		base.Set("revoked", "1")
	}
	d.Prev, d.Next = pager(base, "/admin/tokens", page.Meta)
	c.notice()
	h.adminPage(c, http.StatusOK, "tokens", "tokens.title", d)
}

// tokenID is a scoped token's id as the API shows it (URL-safe base64).
func tokenID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func (h *Handler) adminTokenRevoke(c *adminCall) {
	id := c.r.PathValue("id")
	if !tokenID(id) {
		h.notFound(c.w, c.r)
		return
	}
	if err := c.api.DeleteAdminTokensID(c.r.Context(), id); err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/tokens", "done.revoked")
}

type auditPage struct {
	Items      []client.AuditEntry
	User       int64
	Token      string
	Route      string
	Status     int64
	Prev, Next string
}

// adminAudit is the agent audit: every call made with a scoped token,
// filtered by user, token, route and status.
func (h *Handler) adminAudit(c *adminCall) {
	q := c.r.URL.Query()
	d := auditPage{User: queryInt(c.r, "user"), Route: strings.TrimSpace(q.Get("route")), Status: queryInt(c.r, "status")}
	if t := q.Get("token"); tokenID(t) {
		d.Token = t
	}
	if len(d.Route) > 200 {
		d.Route = ""
	}
	p := client.GetAdminAgentAuditParams{PerPage: client.Ptr(int64(50))}
	if n := queryInt(c.r, "page"); n > 0 {
		p.Page = &n
	}
	base := url.Values{}
	if d.User > 0 {
		p.UserID = &d.User
		base.Set("user", strconv.FormatInt(d.User, 10))
	}
	if d.Token != "" {
		p.TokenID = &d.Token
		base.Set("token", d.Token)
	}
	if d.Route != "" {
		p.Route = &d.Route
		base.Set("route", d.Route)
	}
	if d.Status > 0 {
		p.Status = &d.Status
		base.Set("status", strconv.FormatInt(d.Status, 10))
	}
	page, err := c.api.GetAdminAgentAudit(c.r.Context(), p)
	if c.invalid(err) {
		h.adminPage(c, http.StatusUnprocessableEntity, "audit", "audit.title", d)
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	d.Items = page.Items
	d.Prev, d.Next = pager(base, "/admin/audit", page.Meta)
	h.adminPage(c, http.StatusOK, "audit", "audit.title", d)
}

type templatesPage struct {
	Items []client.Template
}

func (h *Handler) adminTemplates(c *adminCall) {
	items, err := c.api.GetAdminMessageTemplates(c.r.Context())
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.notice()
	h.adminPage(c, http.StatusOK, "templates", "templates.title", templatesPage{Items: items})
}

// templateSlot names a template by its slot: event, channel and
// recipient. Built-in defaults have no id, so the edit page is addressed
// by slot ("/admin/templates/slot?event=&channel=&recipient=") or by id.
type templatePage struct {
	Template client.Template
	Preview  *client.TemplatePreview
}

// findTemplate finds the template of the page's address among the list.
func (h *Handler) findTemplate(c *adminCall) (client.Template, bool) {
	items, err := c.api.GetAdminMessageTemplates(c.r.Context())
	if err != nil {
		h.adminFailed(c, err)
		return client.Template{}, false
	}
	id := c.r.PathValue("id")
	q := c.r.URL.Query()
	if c.r.Method == http.MethodPost {
		q = c.r.PostForm
	}
	for _, t := range items {
		if id == "slot" && t.Event == q.Get("event") && t.Channel == q.Get("channel") && t.Recipient == q.Get("recipient") ||
			t.ID > 0 && id == strconv.FormatInt(t.ID, 10) {
			return t, true
		}
	}
	h.notFound(c.w, c.r)
	return client.Template{}, false
}

func (h *Handler) adminTemplate(c *adminCall) {
	t, ok := h.findTemplate(c)
	if !ok {
		return
	}
	c.notice()
	h.adminPage(c, http.StatusOK, "template", "template.title", templatePage{Template: t})
}

// adminTemplateSave saves the typed template (action=save) or shows it
// rendered with sample values (action=preview), without saving.
func (h *Handler) adminTemplateSave(c *adminCall) {
	t, ok := h.findTemplate(c)
	if !ok {
		return
	}
	f := c.r.PostForm
	t.Subject, t.Text, t.HTML, t.Enabled = f.Get("subject"), f.Get("text"), f.Get("html"), f.Get("enabled") != ""
	var html *string
	if t.Channel == "email" {
		html = &t.HTML
	}
	if f.Get("action") == "preview" {
		p, err := c.api.PostAdminMessageTemplatesPreview(c.r.Context(), client.PreviewInputBody{Channel: t.Channel,
			Event: t.Event, Recipient: t.Recipient, Subject: &t.Subject, Text: &t.Text, HTML: html})
		if c.invalid(err) {
			h.adminPage(c, http.StatusUnprocessableEntity, "template", "template.title", templatePage{Template: t})
			return
		}
		if err != nil {
			h.adminFailed(c, err)
			return
		}
		h.adminPage(c, http.StatusOK, "template", "template.title", templatePage{Template: t, Preview: p})
		return
	}
	var saved *client.Template
	var err error
	if t.ID > 0 {
		saved, err = c.api.PutAdminMessageTemplatesID(c.r.Context(), t.ID, client.TemplateBody{Subject: t.Subject,
			Text: t.Text, HTML: html, Enabled: &t.Enabled})
	} else {
		saved, err = c.api.PostAdminMessageTemplates(c.r.Context(), client.CreateTemplateInputBody{Channel: t.Channel,
			Event: t.Event, Recipient: t.Recipient, Subject: t.Subject, Text: t.Text, HTML: html, Enabled: &t.Enabled})
	}
	if c.invalid(err) {
		h.adminPage(c, http.StatusUnprocessableEntity, "template", "template.title", templatePage{Template: t})
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/templates/"+strconv.FormatInt(saved.ID, 10), "done.saved")
}

type ltiPage struct {
	Registrations []client.Registration
	Tools         []client.ExternalTool
	Platform      *client.PlatformURLs
	// Form is the form the API's messages are about ("registrations" or
	// "tools"), Values what was typed in it.
	Form   string
	Values url.Values
}

// V is a value typed in form.
func (p ltiPage) V(form, name string) string {
	if p.Form != form {
		return ""
	}
	return p.Values.Get(name)
}

// adminLTI lists the LTI platforms this site is a tool for
// (registrations) and the external tools it launches, with the URLs to
// give the other side, and the forms that add either.
func (h *Handler) adminLTI(c *adminCall) {
	c.notice()
	h.showLTI(c, http.StatusOK, ltiPage{})
}

func (h *Handler) showLTI(c *adminCall, status int, d ltiPage) {
	var err error
	if d.Registrations, err = c.api.GetAdminLTIRegistrations(c.r.Context()); err == nil {
		if d.Tools, err = c.api.GetAdminLTITools(c.r.Context()); err == nil {
			d.Platform, err = c.api.GetAdminLTIPlatform(c.r.Context())
		}
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	h.adminPage(c, status, "lti", "lti.title", d)
}

// formList splits a field of several values, one a line or separated by
// commas.
func formList(v string) []string {
	out := []string{}
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// formOpt is a field left out of the request when empty.
func formOpt(r *http.Request, name string) *string {
	if v := strings.TrimSpace(r.PostFormValue(name)); v != "" {
		return &v
	}
	return nil
}

func (h *Handler) adminLTIRegistrationCreate(c *adminCall) {
	f := c.r.PostFormValue
	_, err := c.api.PostAdminLTIRegistrations(c.r.Context(), client.RegistrationInput{Name: strings.TrimSpace(f("name")),
		Issuer: strings.TrimSpace(f("issuer")), ClientID: strings.TrimSpace(f("client_id")),
		AuthLoginURL: strings.TrimSpace(f("auth_login_url")), JwksURL: strings.TrimSpace(f("jwks_url")),
		TokenURL: formOpt(c.r, "token_url"), DeploymentIDs: formList(f("deployment_ids"))})
	h.ltiCreated(c, "registrations", err)
}

func (h *Handler) adminLTIToolCreate(c *adminCall) {
	f := c.r.PostFormValue
	shareName, shareEmail := f("share_name") != "", f("share_email") != ""
	_, err := c.api.PostAdminLTITools(c.r.Context(), client.ToolInput{Name: strings.TrimSpace(f("name")),
		LoginURL: strings.TrimSpace(f("login_url")), TargetLinkURI: strings.TrimSpace(f("target_link_uri")),
		RedirectUris: formList(f("redirect_uris")), JwksURL: formOpt(c.r, "jwks_url"),
		DeploymentID: formOpt(c.r, "deployment_id"), ShareName: &shareName, ShareEmail: &shareEmail})
	h.ltiCreated(c, "tools", err)
}

// ltiCreated answers a create: back to the list, or the page again with
// what was typed and the API's messages.
func (h *Handler) ltiCreated(c *adminCall, form string, err error) {
	if c.invalid(err) {
		h.showLTI(c, http.StatusUnprocessableEntity, ltiPage{Form: form, Values: c.r.PostForm})
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/lti", "done.created")
}

// adminLTIDeleteConfirm asks before a registration or tool is deleted:
// launches through it stop working.
func (h *Handler) adminLTIDeleteConfirm(what string) adminHandler {
	return func(c *adminCall) {
		id := c.pathID("id")
		name, found := "", false
		var err error
		if what == "registrations" {
			var rs []client.Registration
			rs, err = c.api.GetAdminLTIRegistrations(c.r.Context())
			for _, r := range rs {
				if r.ID == id {
					name, found = r.Name, true
				}
			}
		} else {
			var ts []client.ExternalTool
			ts, err = c.api.GetAdminLTITools(c.r.Context())
			for _, t := range ts {
				if t.ID == id {
					name, found = t.Name, true
				}
			}
		}
		if err != nil {
			h.adminFailed(c, err)
			return
		}
		if !found {
			h.notFound(c.w, c.r)
			return
		}
		h.adminPage(c, http.StatusOK, "confirm", "lti.delete."+what, confirmPage{What: name,
			Action: "/admin/lti/" + what + "/" + strconv.FormatInt(id, 10) + "/delete", Back: "/admin/lti"})
	}
}

func (h *Handler) adminLTIDelete(what string) adminHandler {
	return func(c *adminCall) {
		id := c.pathID("id")
		if id == 0 {
			h.notFound(c.w, c.r)
			return
		}
		var err error
		if what == "registrations" {
			err = c.api.DeleteAdminLTIRegistrationsID(c.r.Context(), id)
		} else {
			err = c.api.DeleteAdminLTIToolsID(c.r.Context(), id)
		}
		h.adminActed(c, err, "/admin/lti", "done.deleted")
	}
}

type deliveriesPage struct {
	Items      []client.Delivery
	State      string
	Prev, Next string
}

// adminDeliveries lists event deliveries, the failed ones (dead letters)
// first of all, each with a retry button.
func (h *Handler) adminDeliveries(c *adminCall) {
	d := deliveriesPage{State: c.r.URL.Query().Get("state")}
	if d.State != "pending" && d.State != "delivered" {
		d.State = "failed"
	}
	p := client.GetAdminDeliveriesParams{State: &d.State, PerPage: client.Ptr(int64(adminPerPage))}
	if n := queryInt(c.r, "page"); n > 0 {
		p.Page = &n
	}
	page, err := c.api.GetAdminDeliveries(c.r.Context(), p)
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	d.Items = page.Items
	d.Prev, d.Next = pager(url.Values{"state": {d.State}}, "/admin/deliveries", page.Meta)
	c.notice()
	h.adminPage(c, http.StatusOK, "deliveries", "deliveries.title", d)
}

func (h *Handler) adminDeliveryRetry(c *adminCall) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return
	}
	_, err := c.api.PostAdminDeliveriesIDRetry(c.r.Context(), id)
	h.adminActed(c, err, "/admin/deliveries", "done.retried")
}
