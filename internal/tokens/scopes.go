package tokens

import (
	"slices"
	"strings"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
)

// Scope is one named slice of the API a scoped token may use. A ":write"
// scope includes the ":read" scope of the same name.
type Scope struct {
	Name        string
	Description string
	// Permissions are the user's permissions a token with this scope keeps;
	// every other permission is dropped from its principal.
	Permissions []access.Permission
}

// Scope names.
const (
	CoursesRead        = "courses:read"
	CoursesWrite       = "courses:write"
	UsersRead          = "users:read"
	UsersWrite         = "users:write"
	GroupsRead         = "groups:read"
	GroupsWrite        = "groups:write"
	SettingsRead       = "settings:read"
	SettingsWrite      = "settings:write"
	NotificationsRead  = "notifications:read"
	NotificationsWrite = "notifications:write"
	ProgressRead       = "progress:read"
	ProgressWrite      = "progress:write"
	ReportsRead        = "reports:read"
	ProfileRead        = "profile:read"
	ProfileWrite       = "profile:write"
	H5PRead            = "h5p:read"
	H5PWrite           = "h5p:write"
	TokensRead         = "tokens:read"
	TokensWrite        = "tokens:write"
	TokensManage       = "tokens:manage"
	PlatformRead       = "platform:read"
	PlatformWrite      = "platform:write"
)

// Scopes is the whole set, in the order the documentation lists them.
// Permissions that no scope lists (impersonation, deleting one's own
// account) are never held through a scoped token. The platform scopes are
// asked for by name only: no client puts them in its default set.
var Scopes = []Scope{
	{CoursesRead, "Read courses, lessons, topics, their resources and programs, tutors and authoring form data.",
		[]access.Permission{access.CourseList, access.CourseRead, access.CourseReadAuthored, access.CourseListAuthored}},
	{CoursesWrite, "Create, change, clone and delete courses, lessons, topics and their resources; upload packages; assign tutors and course access (includes courses:read).",
		[]access.Permission{access.CourseCreate, access.CourseUpdate, access.CourseDelete, access.CourseUpdateAuthored,
			access.CourseDeleteAuthored}},
	{UsersRead, "Read users and their settings and interests, and every user's notifications and certificates (admin routes).",
		[]access.Permission{access.UserRead, access.UserList, access.UserReadCourseAuthored, access.UserListCourseAuthored,
			access.NotificationListAccess}},
	{UsersWrite, "Create, change, block and delete users, their avatars, settings and interests; make their certificates again (includes users:read).",
		[]access.Permission{access.UserCreate, access.UserUpdate, access.UserDelete, access.UserVerifyAccount,
			access.UserInterestUpdate, access.UserSettingUpdate}},
	{GroupsRead, "Read user groups and their members.",
		[]access.Permission{access.GroupList, access.GroupRead, access.GroupListSelf, access.GroupReadSelf}},
	{GroupsWrite, "Create, change and delete user groups; add and remove members (includes groups:read).",
		[]access.Permission{access.GroupCreate, access.GroupUpdate, access.GroupDelete, access.GroupMemberAdd,
			access.GroupMemberRemove}},
	{SettingsRead, "Read the tenant's settings (GET /api/config; private keys only for admins).", nil},
	{SettingsWrite, "Change the tenant's settings (includes settings:read).", nil},
	{NotificationsRead, "Read the user's own notifications and the names of the logged events.",
		[]access.Permission{access.NotificationListAccessOwn}},
	{NotificationsWrite, "Mark notifications read (includes notifications:read).", nil},
	{ProgressRead, "Read the user's own course progress.", nil},
	{ProgressWrite, "Record the user's own progress (includes progress:read).", nil},
	{ReportsRead, "Read the gradebook: the progress of the learners of the courses the user may read (tutors: the courses they author; admins: every course), and its CSV exports.",
		[]access.Permission{access.CourseRead, access.CourseReadAuthored, access.UserRead, access.UserReadCourseAuthored}},
	{ProfileRead, "Read the user's own profile and personal settings.",
		[]access.Permission{access.UserReadSelf, access.GroupListSelf, access.GroupReadSelf}},
	{ProfileWrite, "Change the user's own profile, interests, personal settings and avatar; never e-mail, password or deletion (includes profile:read).",
		[]access.Permission{access.UserUpdateSelf, access.UserInterestUpdateSelf, access.UserSettingUpdateSelf}},
	{H5PRead, "List and read H5P contents and libraries, and other users' H5P results, as the user's permissions allow.",
		[]access.Permission{access.H5PList, access.H5PAuthorList, access.H5PRead, access.H5PLibraryList, access.H5PLibraryRead}},
	{H5PWrite, "Create, change and delete H5P contents and libraries, as the user's permissions allow (includes h5p:read).",
		[]access.Permission{access.H5PCreate, access.H5PUpdate, access.H5PAuthorUpdate, access.H5PDelete,
			access.H5PAuthorDelete, access.H5PLibraryUpload, access.H5PLibraryInstall, access.H5PLibraryUpdate,
			access.H5PLibraryDelete}},
	{TokensRead, "List the user's own scoped tokens.", nil},
	{TokensWrite, "Create and revoke the user's own scoped tokens, never with scopes wider than this token's (includes tokens:read).", nil},
	{TokensManage, "Admin token routes: every token of the tenant, their audit and the agent audit (permission token_manage).",
		[]access.Permission{access.TokenManage}},
	{PlatformRead, "Platform API on the platform tenant's host: list the tenants (permission platform_admin).",
		[]access.Permission{access.PlatformAdmin}},
	{PlatformWrite, "Platform API: create, rename, suspend, resume and delete tenants (includes platform:read; permission platform_admin).", nil},
}

// MaxScopes bounds the scopes a creation may name.
const MaxScopes = 64

func scopeByName(name string) (Scope, bool) {
	for _, s := range Scopes {
		if s.Name == name {
			return s, true
		}
	}
	return Scope{}, false
}

// Check validates a requested scope set and returns it sorted without
// repeats. An empty set or an unknown name is a 422 on field "scopes".
func Check(requested []string) ([]string, error) {
	if len(requested) == 0 {
		return nil, apperr.Field("scopes", "The scopes field must name at least one scope.")
	}
	if len(requested) > MaxScopes {
		return nil, apperr.Field("scopes", "The scopes field names too many scopes.")
	}
	out := make([]string, 0, len(requested))
	for _, name := range requested {
		if _, ok := scopeByName(name); !ok {
			return nil, apperr.Field("scopes", "The scope "+quote(name)+" does not exist.")
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// quote keeps an unknown scope name short and printable in a message.
func quote(name string) string {
	if len(name) > 40 {
		name = name[:40] + "…"
	}
	return "\"" + strings.ToValidUTF8(name, "") + "\""
}

// Has reports whether a token holding held may use scope: it holds the
// scope itself, or the ":write" scope that includes a ":read" one.
func Has(held []string, scope string) bool {
	if slices.Contains(held, scope) {
		return true
	}
	name, ok := strings.CutSuffix(scope, ":read")
	return ok && slices.Contains(held, name+":write")
}

// Within reports whether every scope of requested is held by granted, so a
// token never creates another token wider than itself.
func Within(requested, granted []string) bool {
	for _, s := range requested {
		if !Has(granted, s) {
			return false
		}
	}
	return true
}

// Narrow keeps of a user's permissions those the scopes grant, and the
// reading of the user's own account, which every token needs to learn
// whose it is (GET /api/profile/me, and the H5P service asking it).
func Narrow(perms map[access.Permission]bool, held []string) map[access.Permission]bool {
	out := make(map[access.Permission]bool)
	if perms[access.UserReadSelf] {
		out[access.UserReadSelf] = true
	}
	for _, s := range Scopes {
		if !Has(held, s.Name) {
			continue
		}
		for _, p := range s.Permissions {
			if perms[p] {
				out[p] = true
			}
		}
	}
	return out
}
