package accounts

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Group is a node of the user-group tree.
type Group struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	ParentID     *int64    `json:"parent_id"`
	Registerable bool      `json:"registerable"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// GroupNode is a group with its subgroups, for the tree.
type GroupNode struct {
	Group
	Children []GroupNode `json:"children"`
}

// GroupDetail is a group with its members.
type GroupDetail struct {
	Group
	Users []Summary `json:"users"`
}

const groupColumns = `id, name, parent_id, registerable, created_at, updated_at`

// maxGroupDepth bounds the walk up the tree when checking for cycles; a
// deeper tree than this is refused as if it were a cycle.
const maxGroupDepth = 1000

var errGroupNotFound = notFound("Group not found.")

func scanGroup(row interface{ Scan(...any) error }) (Group, error) {
	var g Group
	var parent sql.NullInt64
	err := row.Scan(&g.ID, &g.Name, &parent, &g.Registerable, &g.CreatedAt, &g.UpdatedAt)
	if parent.Valid {
		g.ParentID = &parent.Int64
	}
	return g, err
}

func queryGroups(ctx context.Context, q sqldb.Querier, query string, args ...any) ([]Group, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("accounts: groups: %w", err)
	}
	defer rows.Close()
	out := []Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// RegisterableGroups lists the groups a new account may join.
func RegisterableGroups(ctx context.Context, q sqldb.Querier) ([]Group, error) {
	return queryGroups(ctx, q, `SELECT `+groupColumns+` FROM user_groups WHERE registerable ORDER BY name, id`)
}

// JoinRegisterableGroups adds a newly registered user to the groups it
// chose, recording UserAddedToGroup for each; a group that is not
// registerable is a 422 on "groups".
func JoinRegisterableGroups(ctx context.Context, tx *sqldb.Tx, now time.Time, u User, ids []int64) error {
	for _, id := range ids {
		g, err := scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM user_groups WHERE id = $1`, id))
		if err != nil && !sqldb.NotFound(err) {
			return err
		}
		if err != nil || !g.Registerable {
			return apperr.Field("groups", fmt.Sprintf("The group %d cannot be joined at registration.", id))
		}
		if _, err := addMember(ctx, tx, now, g, u); err != nil {
			return err
		}
	}
	return nil
}

func groupByID(ctx context.Context, q sqldb.Querier, id int64) (Group, error) {
	g, err := scanGroup(q.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM user_groups WHERE id = $1`, id))
	if sqldb.NotFound(err) {
		return g, errGroupNotFound
	}
	if err != nil {
		return g, fmt.Errorf("accounts: load group %d: %w", id, err)
	}
	return g, nil
}

// groupsOf lists the groups a user belongs to, by name.
func groupsOf(ctx context.Context, q sqldb.Querier, userID int64) ([]Group, error) {
	return queryGroups(ctx, q, `SELECT `+prefixed("g.", groupColumns)+` FROM user_groups g
		JOIN user_group_members m ON m.group_id = g.id WHERE m.user_id = $1 ORDER BY g.name, g.id`, userID)
}

// groupsOfUsers loads the groups of many users at once.
func groupsOfUsers(ctx context.Context, q sqldb.Querier, ids []int64) (map[int64][]Group, error) {
	out := map[int64][]Group{}
	if len(ids) == 0 {
		return out, nil
	}
	var a sqldb.Args
	rows, err := q.QueryContext(ctx, `SELECT m.user_id, `+prefixed("g.", groupColumns)+` FROM user_groups g
		JOIN user_group_members m ON m.group_id = g.id WHERE m.user_id IN (`+a.List(ids)+`) ORDER BY g.name, g.id`, a...)
	if err != nil {
		return nil, fmt.Errorf("accounts: load groups of users: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var uid int64
		var g Group
		var parent sql.NullInt64
		if err := rows.Scan(&uid, &g.ID, &g.Name, &parent, &g.Registerable, &g.CreatedAt, &g.UpdatedAt); err != nil {
			return nil, err
		}
		if parent.Valid {
			g.ParentID = &parent.Int64
		}
		out[uid] = append(out[uid], g)
	}
	return out, rows.Err()
}

// prefixed qualifies each column of a column list with a table alias.
func prefixed(alias, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = alias + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

func isMember(ctx context.Context, q sqldb.Querier, groupID, userID int64) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM user_group_members WHERE group_id = $1 AND user_id = $2`,
		groupID, userID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("accounts: check membership: %w", err)
	}
	return n > 0, nil
}

func memberPayload(g Group, u User) map[string]any {
	return map[string]any{"group_id": g.ID, "group_name": g.Name, "email": u.Email, "name": u.Name()}
}

// addMember puts u into g and records UserAddedToGroup; a member already
// there changes nothing and records nothing.
func addMember(ctx context.Context, tx *sqldb.Tx, now time.Time, g Group, u User) (bool, error) {
	sqldb.Changed(tx, access.UserKey(u.ID))
	res, err := tx.ExecContext(ctx, `INSERT INTO user_group_members (group_id, user_id, created_at) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, g.ID, u.ID, now)
	if err != nil {
		return false, fmt.Errorf("accounts: add member: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	return true, events.Emit(ctx, tx, now, events.Event{Name: events.UserAddedToGroup, UserID: u.ID, Payload: memberPayload(g, u)})
}

// removeMember takes u out of g and records UserRemovedFromGroup; a user
// who is not a member changes nothing and records nothing.
func removeMember(ctx context.Context, tx *sqldb.Tx, now time.Time, g Group, u User) (bool, error) {
	sqldb.Changed(tx, access.UserKey(u.ID))
	res, err := tx.ExecContext(ctx, `DELETE FROM user_group_members WHERE group_id = $1 AND user_id = $2`, g.ID, u.ID)
	if err != nil {
		return false, fmt.Errorf("accounts: remove member: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	return true, events.Emit(ctx, tx, now, events.Event{Name: events.UserRemovedFromGroup, UserID: u.ID, Payload: memberPayload(g, u)})
}

// checkGroups loads the groups ids name; each unknown id is a problem on
// field.
func checkGroups(ctx context.Context, q sqldb.Querier, p problems, field string, ids []int64) ([]Group, error) {
	ids = sqldb.UniqueIDs(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	var a sqldb.Args
	groups, err := queryGroups(ctx, q, `SELECT `+groupColumns+` FROM user_groups WHERE id IN (`+a.List(ids)+`)`, a...)
	if err != nil {
		return nil, err
	}
	found := map[int64]bool{}
	for _, g := range groups {
		found[g.ID] = true
	}
	for _, id := range ids {
		if !found[id] {
			p.add(field, fmt.Sprintf("The group %d does not exist.", id))
		}
	}
	return groups, nil
}

// setGroups makes groups the user's memberships, recording an event for
// every membership that starts or ends.
func setGroups(ctx context.Context, tx *sqldb.Tx, now time.Time, u User, groups []Group) error {
	current, err := groupsOf(ctx, tx, u.ID)
	if err != nil {
		return err
	}
	want := map[int64]bool{}
	for _, g := range groups {
		want[g.ID] = true
	}
	for _, g := range current {
		if !want[g.ID] {
			if _, err := removeMember(ctx, tx, now, g, u); err != nil {
				return err
			}
		}
	}
	for _, g := range groups {
		if _, err := addMember(ctx, tx, now, g, u); err != nil {
			return err
		}
	}
	return nil
}

// GroupFilter selects a page of groups.
type GroupFilter struct {
	Search string
	Offset int
	Limit  int
}

// ListGroups returns a page of groups by name.
func (s *Service) ListGroups(ctx context.Context, t *platform.Tenant, p *access.Principal, f GroupFilter) ([]Group, int64, error) {
	if err := allow(p.Has(access.GroupList)); err != nil {
		return nil, 0, err
	}
	var a sqldb.Args
	cond := ""
	if strings.TrimSpace(f.Search) != "" {
		cond = ` WHERE LOWER(name) LIKE LOWER(` + a.Add(sqldb.Contains(f.Search)) + `) ESCAPE '\'`
	}
	var total int64
	if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM user_groups`+cond, a...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("accounts: count groups: %w", err)
	}
	groups, err := queryGroups(ctx, t.DB, `SELECT `+groupColumns+` FROM user_groups`+cond+` ORDER BY name, id LIMIT `+
		a.Add(f.Limit)+` OFFSET `+a.Add(f.Offset), a...)
	return groups, total, err
}

// GroupTree returns every group as a forest: the roots by name, each with
// its subgroups.
func (s *Service) GroupTree(ctx context.Context, t *platform.Tenant, p *access.Principal) ([]GroupNode, error) {
	if err := allow(p.Has(access.GroupList)); err != nil {
		return nil, err
	}
	groups, err := queryGroups(ctx, t.DB, `SELECT `+groupColumns+` FROM user_groups ORDER BY name, id`)
	if err != nil {
		return nil, err
	}
	children := map[int64][]Group{}
	var roots []Group
	for _, g := range groups {
		if g.ParentID == nil {
			roots = append(roots, g)
		} else {
			children[*g.ParentID] = append(children[*g.ParentID], g)
		}
	}
	var build func(gs []Group, depth int) []GroupNode
	build = func(gs []Group, depth int) []GroupNode {
		out := make([]GroupNode, 0, len(gs))
		for _, g := range gs {
			node := GroupNode{Group: g, Children: []GroupNode{}}
			if depth < maxGroupDepth {
				node.Children = build(children[g.ID], depth+1)
			}
			out = append(out, node)
		}
		return out
	}
	return build(roots, 0), nil
}

// GroupMembers returns a page of users, each with its groups; with a
// GroupID only that group's members.
func (s *Service) GroupMembers(ctx context.Context, t *platform.Tenant, p *access.Principal, f UserFilter) ([]Member, int64, error) {
	if err := allow(p.Has(access.GroupList)); err != nil {
		return nil, 0, err
	}
	users, total, err := listUsers(ctx, t.DB, f)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]int64, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	groups, err := groupsOfUsers(ctx, t.DB, ids)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Member, len(users))
	for i, u := range users {
		gs := groups[u.ID]
		if gs == nil {
			gs = []Group{}
		}
		out[i] = Member{Summary: SummaryOf(u), Groups: gs}
	}
	return out, total, nil
}

// GroupInput is the content of a group.
type GroupInput struct {
	Name         string
	ParentID     *int64
	Registerable bool
}

// GroupChange is a partial update: nil fields stay; SetParent with a nil
// ParentID moves the group to the top.
type GroupChange struct {
	Name         *string
	SetParent    bool
	ParentID     *int64
	Registerable *bool
}

// CreateGroup adds a group; an unknown parent is a 422 on "parent_id".
func (s *Service) CreateGroup(ctx context.Context, t *platform.Tenant, p *access.Principal, in GroupInput) (Group, error) {
	if err := allow(p.Has(access.GroupCreate)); err != nil {
		return Group{}, err
	}
	var g Group
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		probs := problems{}
		name := probs.name("name", "name", in.Name)
		if err := checkParent(ctx, tx, probs, 0, in.ParentID); err != nil {
			return err
		}
		if err := probs.err(); err != nil {
			return err
		}
		now := s.now()
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO user_groups (name, parent_id, registerable, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $4) RETURNING id`, name, in.ParentID, in.Registerable, now).Scan(&id); err != nil {
			return fmt.Errorf("accounts: create group: %w", err)
		}
		var err error
		g, err = groupByID(ctx, tx, id)
		return err
	})
	return g, err
}

// checkParent adds a problem on "parent_id" when parent names no group, or
// when making it the parent of group id would close a cycle.
func checkParent(ctx context.Context, q sqldb.Querier, p problems, id int64, parent *int64) error {
	if parent == nil {
		return nil
	}
	if *parent == id {
		p.add("parent_id", "A group cannot be its own parent.")
		return nil
	}
	cur := *parent
	for depth := 0; ; depth++ {
		g, err := groupByID(ctx, q, cur)
		if apperr.Is(err, apperr.NotFound) && cur == *parent {
			p.add("parent_id", "The selected parent group does not exist.")
			return nil
		}
		if err != nil {
			return err
		}
		if g.ParentID == nil {
			return nil
		}
		if *g.ParentID == id || depth >= maxGroupDepth {
			p.add("parent_id", "A group cannot be moved below one of its own subgroups.")
			return nil
		}
		cur = *g.ParentID
	}
}

// UpdateGroup changes the fields the change sets; a new parent must exist
// and must not be the group itself or one of its subgroups.
func (s *Service) UpdateGroup(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, in GroupChange) (Group, error) {
	if err := allow(p.Has(access.GroupUpdate)); err != nil {
		return Group{}, err
	}
	var g Group
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		cur, err := groupByID(ctx, tx, id)
		if err != nil {
			return err
		}
		probs := problems{}
		if in.Name != nil {
			cur.Name = probs.name("name", "name", *in.Name)
		}
		moved := false
		if in.SetParent {
			if err := checkParent(ctx, tx, probs, id, in.ParentID); err != nil {
				return err
			}
			moved = !sqldb.SameID(cur.ParentID, in.ParentID)
			cur.ParentID = in.ParentID
		}
		if in.Registerable != nil {
			cur.Registerable = *in.Registerable
		}
		if err := probs.err(); err != nil {
			return err
		}
		now := s.now()
		if moved {
			if err := recordTreeChange(ctx, tx, now, id); err != nil {
				return err
			}
		}
		sqldb.Changed(tx, access.GroupsKey)
		if _, err := tx.ExecContext(ctx, `UPDATE user_groups SET name = $1, parent_id = $2, registerable = $3, updated_at = $4
			WHERE id = $5`, cur.Name, cur.ParentID, cur.Registerable, now, id); err != nil {
			return fmt.Errorf("accounts: update group %d: %w", id, err)
		}
		g, err = groupByID(ctx, tx, id)
		return err
	})
	return g, err
}

// recordTreeChange records GroupTreeChanged for the members of group id
// and of its subgroups: a delete or a move of the group changes the groups
// their course access is inherited from, which the cascade or the new
// parent_id does without any membership event. Called before the change,
// so that a delete's members are still there to be read.
func recordTreeChange(ctx context.Context, tx *sqldb.Tx, now time.Time, id int64) error {
	users, err := MembersWithin(ctx, tx, []int64{id})
	if err != nil || len(users) == 0 {
		return err
	}
	return events.Emit(ctx, tx, now, events.Event{Name: events.GroupTreeChanged,
		Payload: map[string]any{"group_id": id, "user_ids": users}})
}

// DeleteGroup removes a group with its subgroups and memberships,
// recording GroupTreeChanged for the members they had.
func (s *Service) DeleteGroup(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) error {
	if err := allow(p.Has(access.GroupDelete)); err != nil {
		return err
	}
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		if err := recordTreeChange(ctx, tx, s.now(), id); err != nil {
			return err
		}
		sqldb.Changed(tx, access.GroupsKey)
		res, err := tx.ExecContext(ctx, `DELETE FROM user_groups WHERE id = $1`, id)
		if err != nil {
			return fmt.Errorf("accounts: delete group %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errGroupNotFound
		}
		return nil
	})
}

// Group returns a group with its members: any group with user-group_read,
// a group of one's own with user-group_read_self.
func (s *Service) Group(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (GroupDetail, error) {
	g, err := groupByID(ctx, t.DB, id)
	if err != nil {
		if apperr.Is(err, apperr.NotFound) && !p.Has(access.GroupRead) && !p.Has(access.GroupReadSelf) {
			return GroupDetail{}, errUnauthorized
		}
		return GroupDetail{}, err
	}
	member, err := isMember(ctx, t.DB, id, p.UserID)
	if err != nil {
		return GroupDetail{}, err
	}
	if err := allow(canReadGroup(p, member)); err != nil {
		return GroupDetail{}, err
	}
	return groupDetail(ctx, t.DB, g)
}

func groupDetail(ctx context.Context, q sqldb.Querier, g Group) (GroupDetail, error) {
	users, err := queryUsers(ctx, q, `SELECT `+prefixed("u.", userColumns)+` FROM users u
		JOIN user_group_members m ON m.user_id = u.id WHERE m.group_id = $1 ORDER BY u.id`, g.ID)
	if err != nil {
		return GroupDetail{}, err
	}
	d := GroupDetail{Group: g, Users: make([]Summary, len(users))}
	for i, u := range users {
		d.Users[i] = SummaryOf(u)
	}
	return d, nil
}

// AddMember puts a user into a group. Adding a member twice changes
// nothing; added reports whether the user was new to the group.
func (s *Service) AddMember(ctx context.Context, t *platform.Tenant, p *access.Principal, groupID, userID int64) (d GroupDetail, added bool, err error) {
	if err := allow(p.Has(access.GroupMemberAdd)); err != nil {
		return d, false, err
	}
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		g, err := groupByID(ctx, tx, groupID)
		if err != nil {
			return err
		}
		u, err := ByID(ctx, tx, userID)
		if apperr.Is(err, apperr.NotFound) {
			return apperr.Field("user_id", "The selected user does not exist.")
		}
		if err != nil {
			return err
		}
		if added, err = addMember(ctx, tx, s.now(), g, u); err != nil {
			return err
		}
		d, err = groupDetail(ctx, tx, g)
		return err
	})
	return d, added, err
}

// RemoveMember takes a user out of a group; removing a non-member changes
// nothing.
func (s *Service) RemoveMember(ctx context.Context, t *platform.Tenant, p *access.Principal, groupID, userID int64) (d GroupDetail, removed bool, err error) {
	if err := allow(p.Has(access.GroupMemberRemove)); err != nil {
		return d, false, err
	}
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		g, err := groupByID(ctx, tx, groupID)
		if err != nil {
			return err
		}
		u, err := ByID(ctx, tx, userID)
		if err != nil {
			return err
		}
		if removed, err = removeMember(ctx, tx, s.now(), g, u); err != nil {
			return err
		}
		d, err = groupDetail(ctx, tx, g)
		return err
	})
	return d, removed, err
}
