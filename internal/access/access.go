// Package access holds the roles, the permission names and the principal:
// who is calling and what they may do. Capability packages express their
// policies in terms of these permissions.
package access

import "slices"

// Role names seeded in every tenant.
const (
	Student = "student"
	Tutor   = "tutor"
	Admin   = "admin"
)

// Roles lists the seeded roles.
var Roles = []string{Admin, Tutor, Student}

// Permission is the name of one permission.
type Permission string

// Permissions of the spec's permission table.
const (
	UserManage                Permission = "user_manage"
	UserCreate                Permission = "user_create"
	UserDelete                Permission = "user_delete"
	UserUpdate                Permission = "user_update"
	UserRead                  Permission = "user_read"
	UserList                  Permission = "user_list"
	UserVerifyAccount         Permission = "user_verify_account"
	UserImpersonate           Permission = "user_impersonate"
	TokenManage               Permission = "token_manage"
	PlatformAdmin             Permission = "platform_admin"
	UserDeleteSelf            Permission = "user_delete_self"
	UserUpdateSelf            Permission = "user_update_self"
	UserReadSelf              Permission = "user_read_self"
	UserReadCourseAuthored    Permission = "user_read_course-authored"
	UserListCourseAuthored    Permission = "user_list_course-authored"
	GroupCreate               Permission = "user-group_create"
	GroupDelete               Permission = "user-group_delete"
	GroupList                 Permission = "user-group_list"
	GroupMemberAdd            Permission = "user-group_member-add"
	GroupMemberRemove         Permission = "user-group_member-remove"
	GroupRead                 Permission = "user-group_read"
	GroupUpdate               Permission = "user-group_update"
	GroupListSelf             Permission = "user-group_list_self"
	GroupReadSelf             Permission = "user-group_read_self"
	UserInterestUpdate        Permission = "user-interest_update"
	UserSettingUpdate         Permission = "user-setting_update"
	UserInterestUpdateSelf    Permission = "user-interest_update_self"
	UserSettingUpdateSelf     Permission = "user-setting_update_self"
	CourseList                Permission = "course_list"
	CourseCreate              Permission = "course_create"
	CourseUpdate              Permission = "course_update"
	CourseDelete              Permission = "course_delete"
	CourseRead                Permission = "course_read"
	CourseUpdateAuthored      Permission = "course_update_authored"
	CourseDeleteAuthored      Permission = "course_delete_authored"
	CourseReadAuthored        Permission = "course_read_authored"
	CourseListAuthored        Permission = "course_list_authored"
	NotificationListAccess    Permission = "dashboard-app_notification-list_access"
	NotificationListAccessOwn Permission = "dashboard-app_notification-list_access_self"
)

// Permissions of the H5P service (spec "Permissions", H5P part).
const (
	H5PList           Permission = "h5p_list"
	H5PAuthorList     Permission = "h5p_author_list"
	H5PCreate         Permission = "h5p_create"
	H5PUpdate         Permission = "h5p_update"
	H5PAuthorUpdate   Permission = "h5p_author_update"
	H5PDelete         Permission = "h5p_delete"
	H5PAuthorDelete   Permission = "h5p_author_delete"
	H5PRead           Permission = "h5p_read"
	H5PLibraryList    Permission = "h5p_library_list"
	H5PLibraryRead    Permission = "h5p_library_read"
	H5PLibraryUpload  Permission = "h5p_library_upload"
	H5PLibraryInstall Permission = "h5p_library_install"
	H5PLibraryUpdate  Permission = "h5p_library_update"
	H5PLibraryDelete  Permission = "h5p_library_delete"
)

// H5PPermissions lists every H5P permission; the H5P service's system user
// holds them all.
var H5PPermissions = []Permission{
	H5PList, H5PAuthorList, H5PCreate, H5PUpdate, H5PAuthorUpdate, H5PDelete, H5PAuthorDelete, H5PRead,
	H5PLibraryList, H5PLibraryRead, H5PLibraryUpload, H5PLibraryInstall, H5PLibraryUpdate, H5PLibraryDelete,
}

// Seed is the permission table of the spec: each permission with the roles
// that hold it. user_manage exists but no seeded role holds it.
var Seed = []struct {
	Permission Permission
	Roles      []string
}{
	{UserManage, nil},
	{UserCreate, []string{Admin}},
	{UserDelete, []string{Admin}},
	{UserUpdate, []string{Admin}},
	{UserRead, []string{Admin}},
	{UserList, []string{Admin}},
	{UserVerifyAccount, []string{Admin}},
	{UserImpersonate, []string{Admin}},
	{TokenManage, []string{Admin}},
	{PlatformAdmin, []string{Admin}},
	{UserDeleteSelf, []string{Admin, Student, Tutor}},
	{UserUpdateSelf, []string{Admin, Student, Tutor}},
	{UserReadSelf, []string{Admin, Student, Tutor}},
	{UserReadCourseAuthored, []string{Admin, Tutor}},
	{UserListCourseAuthored, []string{Admin, Tutor}},
	{GroupCreate, []string{Admin}},
	{GroupDelete, []string{Admin}},
	{GroupList, []string{Admin}},
	{GroupMemberAdd, []string{Admin}},
	{GroupMemberRemove, []string{Admin}},
	{GroupRead, []string{Admin}},
	{GroupUpdate, []string{Admin}},
	{GroupListSelf, []string{Admin, Student, Tutor}},
	{GroupReadSelf, []string{Admin, Student, Tutor}},
	{UserInterestUpdate, []string{Admin}},
	{UserSettingUpdate, []string{Admin}},
	{UserInterestUpdateSelf, []string{Admin, Student, Tutor}},
	{UserSettingUpdateSelf, []string{Admin, Student, Tutor}},
	{CourseList, []string{Admin, Tutor}},
	{CourseCreate, []string{Admin, Tutor}},
	{CourseUpdate, []string{Admin}},
	{CourseDelete, []string{Admin}},
	{CourseRead, []string{Admin}},
	{CourseUpdateAuthored, []string{Admin, Tutor}},
	{CourseDeleteAuthored, []string{Admin, Tutor}},
	{CourseReadAuthored, []string{Admin, Tutor}},
	{CourseListAuthored, []string{Tutor}},
	{NotificationListAccess, []string{Admin}},
	{NotificationListAccessOwn, []string{Admin}},
	// The spec names the H5P permissions but not their roles. Admins hold
	// them all. Tutors author their own content (h5p_create together with
	// h5p_author_update, which the editor's file uploads need) and may
	// browse the libraries; installing, changing and deleting libraries
	// and touching other authors' content stay with admins. Students
	// play content, which needs no permission.
	{H5PList, []string{Admin}},
	{H5PAuthorList, []string{Admin, Tutor}},
	{H5PCreate, []string{Admin, Tutor}},
	{H5PUpdate, []string{Admin}},
	{H5PAuthorUpdate, []string{Admin, Tutor}},
	{H5PDelete, []string{Admin}},
	{H5PAuthorDelete, []string{Admin, Tutor}},
	{H5PRead, []string{Admin}},
	{H5PLibraryList, []string{Admin, Tutor}},
	{H5PLibraryRead, []string{Admin, Tutor}},
	{H5PLibraryUpload, []string{Admin}},
	{H5PLibraryInstall, []string{Admin}},
	{H5PLibraryUpdate, []string{Admin}},
	{H5PLibraryDelete, []string{Admin}},
}

// Principal is the authenticated caller of a request.
type Principal struct {
	UserID      int64
	Email       string
	Roles       []string
	Permissions map[Permission]bool
	// TokenID is the jti of the access token the request carried.
	TokenID string
	// ImpersonatorID is the admin who impersonates the user, or 0.
	ImpersonatorID int64
	// Scopes are the scopes of a scoped personal token (TokenID is then
	// its id); nil for a signed access token, which is not scope-limited.
	Scopes []string
	// RateLimit is a scoped token's requests per minute, 0 for none.
	RateLimit int
}

// Scoped reports whether the caller authenticated with a scoped token.
func (p *Principal) Scoped() bool { return p != nil && p.Scopes != nil }

// Has reports whether the principal holds the permission.
func (p *Principal) Has(perm Permission) bool {
	return p != nil && p.Permissions[perm]
}

// HasRole reports whether the principal has the role.
func (p *Principal) HasRole(role string) bool {
	return p != nil && slices.Contains(p.Roles, role)
}

// PermissionNames lists the held permissions, sorted.
func (p *Principal) PermissionNames() []string {
	out := make([]string, 0, len(p.Permissions))
	for perm, ok := range p.Permissions {
		if ok {
			out = append(out, string(perm))
		}
	}
	slices.Sort(out)
	return out
}

// System is the principal of work the platform does on its own behalf
// after an inbound webhook (a recording becoming a topic): no user, only
// the permissions given.
func System(perms ...Permission) *Principal {
	p := &Principal{Roles: []string{}, Permissions: map[Permission]bool{}}
	for _, perm := range perms {
		p.Permissions[perm] = true
	}
	return p
}
