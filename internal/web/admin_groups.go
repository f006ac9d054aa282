package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

// groupRow is one group of the tree, flattened with its depth, for a
// nested list and for the parent choice.
type groupRow struct {
	Group client.GroupNode
	Depth int
	// Indent is the parent choice's label prefix.
	Indent string
}

type groupsPage struct {
	Tree []client.GroupNode
	Rows []groupRow
	Name string
}

func flattenGroups(nodes []client.GroupNode, depth int, out *[]groupRow) {
	for _, n := range nodes {
		*out = append(*out, groupRow{Group: n, Depth: depth, Indent: strings.Repeat("— ", depth)})
		if depth < 50 {
			flattenGroups(n.Children, depth+1, out)
		}
	}
}

func (h *Handler) groupsData(c *adminCall) (groupsPage, error) {
	tree, err := c.api.GetAdminUserGroupsTree(c.r.Context())
	if err != nil {
		return groupsPage{}, err
	}
	d := groupsPage{Tree: tree}
	flattenGroups(tree, 0, &d.Rows)
	return d, nil
}

func (h *Handler) adminGroups(c *adminCall) {
	d, err := h.groupsData(c)
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.notice()
	h.adminPage(c, http.StatusOK, "groups", "groups.title", d)
}

// formParent reads the parent field: 0 is none.
func formParent(r *http.Request) *int64 {
	n, err := strconv.ParseInt(r.PostFormValue("parent_id"), 10, 64)
	if err != nil || n <= 0 {
		return nil
	}
	return &n
}

func (h *Handler) adminGroupCreate(c *adminCall) {
	name := strings.TrimSpace(c.r.PostFormValue("name"))
	reg := c.r.PostFormValue("registerable") != ""
	g, err := c.api.PostAdminUserGroups(c.r.Context(), client.CreateGroupInputBody{Name: name, ParentID: formParent(c.r),
		Registerable: &reg})
	if c.invalid(err) {
		d, lerr := h.groupsData(c)
		if lerr != nil {
			h.adminFailed(c, lerr)
			return
		}
		d.Name = name
		h.adminPage(c, http.StatusUnprocessableEntity, "groups", "groups.title", d)
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/groups/"+strconv.FormatInt(g.ID, 10), "done.created")
}

type groupPage struct {
	Group  *client.GroupDetail
	Rows   []groupRow
	Parent int64
	Member string
}

func (h *Handler) showGroup(c *adminCall, status int, name string, parent *int64, member string) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return
	}
	g, err := c.api.GetAdminUserGroupsID(c.r.Context(), id)
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	tree, err := h.groupsData(c)
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	d := groupPage{Group: g, Member: member}
	// A group cannot move under itself or its own subgroups: they are
	// left out of the parent choice.
	skip := -1
	for _, row := range tree.Rows {
		if skip >= 0 && row.Depth > skip {
			continue
		}
		skip = -1
		if row.Group.ID == g.ID {
			skip = row.Depth
			continue
		}
		d.Rows = append(d.Rows, row)
	}
	if g.ParentID != nil {
		d.Parent = *g.ParentID
	}
	if parent != nil {
		d.Parent = *parent
	}
	if name != "" {
		d.Group.Name = name
	}
	h.adminPage(c, status, "group", "group.title", d)
}

func (h *Handler) adminGroup(c *adminCall) {
	c.notice()
	h.showGroup(c, http.StatusOK, "", nil, "")
}

func (h *Handler) adminGroupSave(c *adminCall) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return
	}
	name := strings.TrimSpace(c.r.PostFormValue("name"))
	reg := c.r.PostFormValue("registerable") != ""
	parent := formParent(c.r)
	var err error
	if parent == nil {
		// The patch cannot say "no parent" (an absent parent_id keeps
		// it): PUT replaces the whole group.
		_, err = c.api.PutAdminUserGroupsID(c.r.Context(), id, client.PutGroupInputBody{Name: name, Registerable: &reg})
	} else {
		_, err = c.api.PatchAdminUserGroupsID(c.r.Context(), id, client.PatchGroupInputBody{Name: &name, ParentID: parent,
			Registerable: &reg})
	}
	if c.invalid(err) {
		h.showGroup(c, http.StatusUnprocessableEntity, name, parent, "")
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/groups/"+strconv.FormatInt(id, 10), "done.saved")
}

// adminGroupAddMember adds a user named by e-mail address or id.
func (h *Handler) adminGroupAddMember(c *adminCall) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return
	}
	who := strings.TrimSpace(c.r.PostFormValue("user"))
	userID, err := strconv.ParseInt(who, 10, 64)
	if err != nil && who != "" && len(who) <= 254 {
		var page *client.Page[client.Summary]
		page, err = c.api.GetAdminUsers(c.r.Context(), client.GetAdminUsersParams{Search: &who, PerPage: client.Ptr(int64(20))})
		if err != nil {
			h.adminFailed(c, err)
			return
		}
		for _, u := range page.Items {
			if strings.EqualFold(u.Email, who) {
				userID = u.ID
			}
		}
	}
	if userID <= 0 {
		c.v.Error = c.v.T("err.nouser")
		h.showGroup(c, http.StatusUnprocessableEntity, "", nil, who)
		return
	}
	_, err = c.api.PostAdminUserGroupsIDMembers(c.r.Context(), id, client.MemberInputBody{UserID: userID})
	if c.invalid(err) || client.StatusOf(err) == http.StatusNotFound {
		if c.v.Error == "" {
			c.v.Error = c.v.T("err.nouser")
		}
		h.showGroup(c, http.StatusUnprocessableEntity, "", nil, who)
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/groups/"+strconv.FormatInt(id, 10), "done.added")
}

func (h *Handler) adminGroupRemoveMember(c *adminCall) {
	id, user := c.pathID("id"), c.pathID("user")
	if id == 0 || user == 0 {
		h.notFound(c.w, c.r)
		return
	}
	if _, err := c.api.DeleteAdminUserGroupsIDMembersID(c.r.Context(), id, user); err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/groups/"+strconv.FormatInt(id, 10), "done.removed")
}

func (h *Handler) adminGroupDeleteConfirm(c *adminCall) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return
	}
	g, err := c.api.GetAdminUserGroupsID(c.r.Context(), id)
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	sid := strconv.FormatInt(g.ID, 10)
	h.adminPage(c, http.StatusOK, "confirm", "group.delete", confirmPage{What: g.Name,
		Action: "/admin/groups/" + sid + "/delete", Back: "/admin/groups/" + sid})
}

func (h *Handler) adminGroupDelete(c *adminCall) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return
	}
	err := c.api.DeleteAdminUserGroupsID(c.r.Context(), id)
	h.adminActed(c, err, "/admin/groups", "done.deleted")
}
