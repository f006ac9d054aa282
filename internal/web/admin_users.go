package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

// adminRoles are the seeded roles an admin may give.
var adminRoles = []string{"student", "tutor", "admin"}

const adminPerPage = 25

type usersPage struct {
	Items              []client.Summary
	Q, Role, Status    string
	Total              int
	Prev, Next         string
	CurrentPage, Pages int
}

// pager fills the previous and next links of a list page.
func pager(base url.Values, path string, meta client.PageMeta) (prev, next string) {
	link := func(p int) string {
		q := url.Values{}
		for k, v := range base {
			if len(v) > 0 && v[0] != "" {
				q[k] = v
			}
		}
		q.Set("page", strconv.Itoa(p))
		return path + "?" + q.Encode()
	}
	if meta.CurrentPage > 1 {
		prev = link(meta.CurrentPage - 1)
	}
	if meta.CurrentPage < meta.LastPage {
		next = link(meta.CurrentPage + 1)
	}
	return
}

func (h *Handler) adminUsers(c *adminCall) {
	q := c.r.URL.Query()
	d := usersPage{Q: strings.TrimSpace(q.Get("q")), Role: q.Get("role"), Status: q.Get("status")}
	if len(d.Q) > 100 {
		d.Q = d.Q[:100]
	}
	if !slices.Contains(adminRoles, d.Role) {
		d.Role = ""
	}
	if d.Status != "active" && d.Status != "blocked" {
		d.Status = ""
	}
	p := client.GetAdminUsersParams{PerPage: client.Ptr(int64(adminPerPage)), OrderBy: client.Ptr("id"), Order: client.Ptr("desc")}
	if n := queryInt(c.r, "page"); n > 0 {
		p.Page = &n
	}
	if d.Q != "" {
		p.Search = &d.Q
	}
	if d.Role != "" {
		p.Role = &d.Role
	}
	if d.Status != "" {
		p.Status = &d.Status
	}
	page, err := c.api.GetAdminUsers(c.r.Context(), p)
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	d.Items, d.Total, d.CurrentPage, d.Pages = page.Items, page.Meta.Total, page.Meta.CurrentPage, page.Meta.LastPage
	d.Prev, d.Next = pager(url.Values{"q": {d.Q}, "role": {d.Role}, "status": {d.Status}}, "/admin/users", page.Meta)
	c.notice()
	h.adminPage(c, http.StatusOK, "users", "users.title", d)
}

// userForm is the create and edit form of a user, as typed.
type userForm struct {
	ID                                int64
	New                               bool
	FirstName, LastName, Email, Phone string
	Bio, Categories                   string
	Roles                             []string
	Groups                            []int64
	EmailVerified, Active             bool
	AllGroups                         []client.Group
	CategoryNames                     []string
	// Interests are the user's, listed with their own add and remove
	// forms; AddInterests is what was typed into the add form.
	Interests    []client.Category
	AddInterests string
	// AllCategories are the tenant's categories by name, for choosing
	// categories and interests by name; nil when the API did not list
	// them (a scoped token without courses:read), and the forms then take
	// ids as typed.
	AllCategories    []client.CategoryRef
	CategoriesListed bool
	Detail           *client.Detail
	Self             bool
	// MayImpersonate offers "Sign in as" (see admin_acting.go).
	MayImpersonate bool
}

func (f userForm) HasRole(r string) bool { return slices.Contains(f.Roles, r) }

// InCategory tells whether the form's categories (ids as typed) hold id.
func (f userForm) InCategory(id int64) bool {
	ids, _ := idList(f.Categories)
	return slices.Contains(ids, id)
}

// NewInterests are the categories the user does not have as interests
// yet: the add form's choices.
func (f userForm) NewInterests() []client.CategoryRef {
	var out []client.CategoryRef
	for _, c := range f.AllCategories {
		if !slices.ContainsFunc(f.Interests, func(i client.Category) bool { return i.ID == c.ID }) {
			out = append(out, c)
		}
	}
	return out
}
func (f userForm) InGroup(id int64) bool { return slices.Contains(f.Groups, id) }
func (f userForm) RoleChoices() []string { return adminRoles }
func (f userForm) Action() string {
	if f.New {
		return "/admin/users"
	}
	return "/admin/users/" + strconv.FormatInt(f.ID, 10)
}

// readUserForm reads the posted user form.
func readUserForm(r *http.Request) userForm {
	f := userForm{FirstName: strings.TrimSpace(r.PostFormValue("first_name")),
		LastName: strings.TrimSpace(r.PostFormValue("last_name")), Email: strings.TrimSpace(r.PostFormValue("email")),
		Phone: strings.TrimSpace(r.PostFormValue("phone")), Bio: strings.TrimSpace(r.PostFormValue("bio")),
		Categories:    r.PostFormValue("categories"),
		EmailVerified: r.PostFormValue("email_verified") != "", Active: r.PostFormValue("is_active") != ""}
	if r.PostFormValue("categories_by") == "name" {
		// Checkboxes, one value each; none checked is no category.
		f.Categories = strings.Join(r.PostForm["category"], ",")
	}
	for _, role := range r.PostForm["roles"] {
		if slices.Contains(adminRoles, role) && !slices.Contains(f.Roles, role) {
			f.Roles = append(f.Roles, role)
		}
	}
	for _, g := range r.PostForm["groups"] {
		if n, err := strconv.ParseInt(g, 10, 64); err == nil && n > 0 && len(f.Groups) < 200 {
			f.Groups = append(f.Groups, n)
		}
	}
	return f
}

// idList reads "3, 5 8" as ids; ok is false when something else is
// typed.
func idList(s string) (ids []int64, ok bool) {
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n <= 0 || len(ids) >= 1000 {
			return nil, false
		}
		ids = append(ids, n)
	}
	return ids, true
}

func joinIDs(cats []client.Category) (ids string, names []string) {
	parts := make([]string, len(cats))
	for i, c := range cats {
		parts[i] = strconv.FormatInt(c.ID, 10)
		names = append(names, c.Name)
	}
	return strings.Join(parts, ", "), names
}

// allGroups lists the tenant's groups for the form's choices (the first
// 100, by name).
func (c *adminCall) allGroups() ([]client.Group, error) {
	p, err := c.api.GetAdminUserGroups(c.r.Context(), client.GetAdminUserGroupsParams{PerPage: client.Ptr(int64(100))})
	if err != nil {
		return nil, err
	}
	return p.Items, nil
}

// allCategories lists the tenant's categories by name: the API lists
// them with the course form's data (GET /api/admin/courses/create), which
// admins may read. A token whose scopes do not open it gets nil, and the
// forms take ids.
func (c *adminCall) allCategories() ([]client.CategoryRef, error) {
	form, err := c.api.GetAdminCoursesCreate(c.r.Context())
	if client.StatusOf(err) == http.StatusForbidden {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return append([]client.CategoryRef{}, form.Categories...), nil
}

func (h *Handler) showUserForm(c *adminCall, status int, f userForm) {
	groups, err := c.allGroups()
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	f.AllGroups = groups
	if f.AllCategories, err = c.allCategories(); err != nil {
		h.adminFailed(c, err)
		return
	}
	f.CategoriesListed = f.AllCategories != nil
	title := "user.edit"
	if f.New {
		title = "user.new"
	}
	h.adminPage(c, status, "user", title, f)
}

func (h *Handler) adminUserNew(c *adminCall) {
	h.showUserForm(c, http.StatusOK, userForm{New: true, Roles: []string{"student"}, Active: true, EmailVerified: true})
}

func (h *Handler) adminUserCreate(c *adminCall) {
	f := readUserForm(c.r)
	f.New = true
	cats, ok1 := idList(f.Categories)
	if !ok1 {
		c.v.Error = c.v.T("err.ids")
		h.showUserForm(c, http.StatusUnprocessableEntity, f)
		return
	}
	body := client.CreateUserInputBody{FirstName: f.FirstName, LastName: f.LastName, Email: f.Email, Roles: f.Roles,
		Groups: f.Groups, Categories: cats, EmailVerified: &f.EmailVerified, IsActive: &f.Active}
	if f.Phone != "" {
		body.Phone = &f.Phone
	}
	if f.Bio != "" {
		body.Bio = &f.Bio
	}
	if pw := c.r.PostFormValue("password"); pw != "" {
		body.Password = &pw
	}
	u, err := c.api.PostAdminUsers(c.r.Context(), body)
	if c.invalid(err) {
		h.showUserForm(c, http.StatusUnprocessableEntity, f)
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/users/"+strconv.FormatInt(u.ID, 10), "done.created")
}

func (h *Handler) loadUser(c *adminCall) (*client.Detail, bool) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return nil, false
	}
	u, err := c.api.GetAdminUsersID(c.r.Context(), id)
	if err != nil {
		h.adminFailed(c, err)
		return nil, false
	}
	return u, true
}

func (h *Handler) adminUser(c *adminCall) {
	u, ok := h.loadUser(c)
	if !ok {
		return
	}
	c.notice()
	h.showUserForm(c, http.StatusOK, h.userFormOf(c, u))
}

// userFormOf is the edit form of u as the API has it.
func (h *Handler) userFormOf(c *adminCall, u *client.Detail) userForm {
	f := userForm{ID: u.ID, FirstName: u.FirstName, LastName: u.LastName, Email: u.Email, Roles: u.Roles,
		EmailVerified: u.EmailVerified, Active: u.IsActive, Detail: u, Self: u.ID == c.me.ID, MayImpersonate: c.mayImpersonate(h)}
	if u.Phone != nil {
		f.Phone = *u.Phone
	}
	if u.Bio != nil {
		f.Bio = *u.Bio
	}
	for _, g := range u.Groups {
		f.Groups = append(f.Groups, g.ID)
	}
	f.Categories, f.CategoryNames = joinIDs(u.Categories)
	f.Interests = u.Interests
	return f
}

func (h *Handler) adminUserSave(c *adminCall) {
	u, ok := h.loadUser(c)
	if !ok {
		return
	}
	f := readUserForm(c.r)
	f.ID, f.Detail, f.Active, f.Self, f.MayImpersonate = u.ID, u, u.IsActive, u.ID == c.me.ID, c.mayImpersonate(h)
	_, f.CategoryNames = joinIDs(u.Categories)
	f.Interests = u.Interests
	cats, ok := idList(f.Categories)
	if !ok {
		c.v.Error = c.v.T("err.ids")
		h.showUserForm(c, http.StatusUnprocessableEntity, f)
		return
	}
	body := client.UserChangeBody{FirstName: &f.FirstName, LastName: &f.LastName, Email: &f.Email, Phone: &f.Phone,
		Bio: &f.Bio, Roles: f.Roles, Groups: append([]int64{}, f.Groups...), Categories: append([]int64{}, cats...),
		EmailVerified: &f.EmailVerified}
	if pw := c.r.PostFormValue("password"); pw != "" {
		body.Password = &pw
	}
	_, err := c.api.PatchAdminUsersID(c.r.Context(), u.ID, body)
	if c.invalid(err) {
		h.showUserForm(c, http.StatusUnprocessableEntity, f)
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/users/"+strconv.FormatInt(u.ID, 10), "done.saved")
}

// adminUserActive blocks (active=0) or unblocks (active=1) a user.
func (h *Handler) adminUserActive(c *adminCall) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return
	}
	active := c.r.PostFormValue("active") == "1"
	_, err := c.api.PatchAdminUsersID(c.r.Context(), id, client.UserChangeBody{IsActive: &active})
	if c.invalid(err) {
		h.errorPage(c.w, c.r, client.StatusOf(err), c.v.T("err.title"), c.v.Error)
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	notice := "done.blocked"
	if active {
		notice = "done.unblocked"
	}
	c.done("/admin/users/"+strconv.FormatInt(id, 10), notice)
}

// confirmPage asks before deleting something.
type confirmPage struct {
	What   string
	Action string
	Back   string
}

func (h *Handler) adminUserDeleteConfirm(c *adminCall) {
	u, ok := h.loadUser(c)
	if !ok {
		return
	}
	id := strconv.FormatInt(u.ID, 10)
	h.adminPage(c, http.StatusOK, "confirm", "user.delete", confirmPage{What: u.Name + " <" + u.Email + ">",
		Action: "/admin/users/" + id + "/delete", Back: "/admin/users/" + id})
}

func (h *Handler) adminUserDelete(c *adminCall) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return
	}
	err := c.api.DeleteAdminUsersID(c.r.Context(), id)
	h.adminActed(c, err, "/admin/users", "done.deleted")
}

// adminInterestsAdd adds interests (category ids) to the user's
// (POST /api/admin/users/{id}/interests); the API's refusal of an id is
// shown next to the add form.
func (h *Handler) adminInterestsAdd(c *adminCall) {
	u, ok := h.loadUser(c)
	if !ok {
		return
	}
	typed := strings.TrimSpace(c.r.PostFormValue("interests"))
	ids, ok := idList(typed)
	// Chosen by name: one checkbox a category.
	for _, v := range c.r.PostForm["interest"] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || len(ids) >= 1000 {
			ok = false
			break
		}
		ids = append(ids, n)
	}
	var err error
	if ok && len(ids) > 0 {
		_, err = c.api.PostAdminUsersIDInterests(c.r.Context(), u.ID, client.InterestsBody{Interests: ids})
	}
	if !ok || len(ids) == 0 || c.invalid(err) {
		if !ok || len(ids) == 0 {
			msg := "err.ids"
			if c.r.PostFormValue("interests_by") == "name" {
				msg = "err.interests.choose"
			}
			c.v.Error, c.v.Errors = c.v.T("err.form"), map[string][]string{"interests": {c.v.T(msg)}}
		}
		f := h.userFormOf(c, u)
		f.AddInterests = typed
		h.showUserForm(c, http.StatusUnprocessableEntity, f)
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/users/"+strconv.FormatInt(u.ID, 10), "done.interests.added")
}

// adminInterestRemove removes one interest of the user
// (DELETE /api/admin/users/{id}/interests/{interest_id}).
func (h *Handler) adminInterestRemove(c *adminCall) {
	id, interest := c.pathID("id"), c.pathID("interest")
	if id == 0 || interest == 0 {
		h.notFound(c.w, c.r)
		return
	}
	_, err := c.api.DeleteAdminUsersIDInterestsID(c.r.Context(), id, interest)
	h.adminActed(c, err, "/admin/users/"+strconv.FormatInt(id, 10), "done.interests.removed")
}
