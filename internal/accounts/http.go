package accounts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
)

// Inputs of the routes. Bodies are checked by their schema first (types,
// lengths, unknown fields), then by the service's rules.

type idInput struct {
	ID int64 `path:"id" doc:"User id."`
}

type profileBody struct {
	FirstName *string `json:"first_name,omitempty" maxLength:"255"`
	LastName  *string `json:"last_name,omitempty" maxLength:"255"`
	Phone     *string `json:"phone,omitempty" maxLength:"32" doc:"An empty string clears the phone."`
	Bio       *string `json:"bio,omitempty" maxLength:"5000" doc:"An empty string clears the bio."`
}

type profileInput struct {
	Body profileBody
}

type credentialsInput struct {
	Body struct {
		CurrentPassword      string  `json:"current_password" maxLength:"256"`
		Email                *string `json:"email,omitempty" maxLength:"254"`
		Password             *string `json:"password,omitempty" maxLength:"256"`
		PasswordConfirmation *string `json:"password_confirmation,omitempty" maxLength:"256"`
	}
}

type passwordInput struct {
	Body struct {
		CurrentPassword         string `json:"current_password" maxLength:"256"`
		NewPassword             string `json:"new_password" maxLength:"256"`
		NewPasswordConfirmation string `json:"new_password_confirmation" maxLength:"256"`
	}
}

type interestsBody struct {
	Interests []int64 `json:"interests" maxItems:"1000" doc:"Category ids."`
}

type interestsInput struct {
	Body interestsBody
}

type userInterestsInput struct {
	ID   int64 `path:"id"`
	Body interestsBody
}

type interestInput struct {
	ID         int64 `path:"id"`
	InterestID int64 `path:"interest_id" doc:"Category id."`
}

type settingsInput struct {
	Body map[string]string `doc:"Setting keys match ^[a-z0-9_.-]{1,64}$; values have at most 4096 characters; an empty value removes its key when merging."`
}

type userSettingsInput struct {
	ID   int64             `path:"id"`
	Body map[string]string `doc:"Setting keys match ^[a-z0-9_.-]{1,64}$; values have at most 4096 characters."`
}

// avatarInput is read whole, under the route's body cap, and parsed here:
// huma's own multipart decoding would spool any size to disk first.
type avatarInput struct {
	ContentType string `header:"Content-Type" hidden:"true"`
	RawBody     []byte `contentType:"multipart/form-data"`
}

type userAvatarInput struct {
	ID          int64  `path:"id"`
	ContentType string `header:"Content-Type" hidden:"true"`
	RawBody     []byte `contentType:"multipart/form-data"`
}

type deleteConfirmInput struct {
	UserID int64  `path:"userId"`
	Token  string `path:"token" maxLength:"128"`
}

type listUsersInput struct {
	httpx.PageQuery
	Search  string `query:"search" maxLength:"255" doc:"Part of the e-mail, first, last or full name."`
	Role    string `query:"role" maxLength:"64"`
	Status  string `query:"status" enum:"active,blocked"`
	OrderBy string `query:"order_by" enum:"id,email,created_at,first_name,last_name" default:"id"`
	Order   string `query:"order" enum:"asc,desc" default:"asc"`
}

type createUserInput struct {
	Body struct {
		Email         string   `json:"email" maxLength:"254"`
		Password      string   `json:"password,omitempty" maxLength:"256" doc:"Omitted: a random password the user replaces by a reset."`
		FirstName     string   `json:"first_name" maxLength:"255"`
		LastName      string   `json:"last_name" maxLength:"255"`
		Phone         *string  `json:"phone,omitempty" maxLength:"32"`
		Bio           *string  `json:"bio,omitempty" maxLength:"5000"`
		Roles         []string `json:"roles,omitempty" maxItems:"20" doc:"Default: student."`
		IsActive      *bool    `json:"is_active,omitempty" doc:"Default: true."`
		EmailVerified *bool    `json:"email_verified,omitempty" doc:"Default: false."`
		Groups        []int64  `json:"groups,omitempty" maxItems:"1000"`
		Categories    []int64  `json:"categories,omitempty" maxItems:"1000"`
	}
}

// userChangeBody is the body of PATCH: every field is optional.
type userChangeBody struct {
	Email         *string  `json:"email,omitempty" maxLength:"254"`
	Password      *string  `json:"password,omitempty" maxLength:"256"`
	FirstName     *string  `json:"first_name,omitempty" maxLength:"255"`
	LastName      *string  `json:"last_name,omitempty" maxLength:"255"`
	Phone         *string  `json:"phone,omitempty" maxLength:"32" doc:"An empty string clears the phone."`
	Bio           *string  `json:"bio,omitempty" maxLength:"5000" doc:"An empty string clears the bio."`
	Roles         []string `json:"roles,omitempty" maxItems:"20"`
	IsActive      *bool    `json:"is_active,omitempty" doc:"false blocks the user and ends its sessions."`
	EmailVerified *bool    `json:"email_verified,omitempty"`
	Groups        []int64  `json:"groups,omitempty" maxItems:"1000"`
	Categories    []int64  `json:"categories,omitempty" maxItems:"1000"`
}

func (b userChangeBody) change() AccountChange {
	return AccountChange(b)
}

type patchUserInput struct {
	ID   int64 `path:"id"`
	Body userChangeBody
}

// putUserInput is the body of PUT: the names and address are required,
// the other fields as in PATCH.
type putUserInput struct {
	ID   int64 `path:"id"`
	Body struct {
		Email         string   `json:"email" maxLength:"254"`
		Password      *string  `json:"password,omitempty" maxLength:"256"`
		FirstName     string   `json:"first_name" maxLength:"255"`
		LastName      string   `json:"last_name" maxLength:"255"`
		Phone         *string  `json:"phone,omitempty" maxLength:"32"`
		Bio           *string  `json:"bio,omitempty" maxLength:"5000"`
		Roles         []string `json:"roles,omitempty" maxItems:"20"`
		IsActive      *bool    `json:"is_active,omitempty"`
		EmailVerified *bool    `json:"email_verified,omitempty"`
		Groups        []int64  `json:"groups,omitempty" maxItems:"1000"`
		Categories    []int64  `json:"categories,omitempty" maxItems:"1000"`
	}
}

type listGroupsInput struct {
	httpx.PageQuery
	Search string `query:"search" maxLength:"255"`
}

type groupUsersInput struct {
	httpx.PageQuery
	Search  string `query:"search" maxLength:"255" doc:"Part of the e-mail, first, last or full name."`
	GroupID int64  `query:"group_id" doc:"Only the members of this group."`
}

type groupIDInput struct {
	ID int64 `path:"id" doc:"Group id."`
}

type createGroupInput struct {
	Body struct {
		Name         string `json:"name" maxLength:"255"`
		ParentID     *int64 `json:"parent_id,omitempty" nullable:"true"`
		Registerable bool   `json:"registerable,omitempty" doc:"Whether new accounts may join it at registration."`
	}
}

type putGroupInput struct {
	ID   int64 `path:"id"`
	Body struct {
		Name         string `json:"name" maxLength:"255"`
		ParentID     *int64 `json:"parent_id,omitempty" nullable:"true" doc:"Omitted or null: a top-level group."`
		Registerable bool   `json:"registerable,omitempty"`
	}
}

type patchGroupInput struct {
	ID   int64 `path:"id"`
	Body struct {
		Name         *string    `json:"name,omitempty" maxLength:"255"`
		ParentID     nullableID `json:"parent_id,omitempty" doc:"null moves the group to the top."`
		Registerable *bool      `json:"registerable,omitempty"`
	}
}

type memberInput struct {
	ID   int64 `path:"id"`
	Body struct {
		UserID int64 `json:"user_id"`
	}
}

type memberPathInput struct {
	ID     int64 `path:"id"`
	UserID int64 `path:"user_id"`
}

// nullableID is an id a PATCH may set, set to null or leave out.
type nullableID struct {
	set bool
	id  *int64
}

func (n *nullableID) UnmarshalJSON(b []byte) error {
	n.set = true
	if string(b) == "null" {
		n.id = nil
		return nil
	}
	var id int64
	if err := json.Unmarshal(b, &id); err != nil {
		return err
	}
	n.id = &id
	return nil
}

// Schema describes nullableID in the OpenAPI document.
func (nullableID) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeInteger, Format: "int64", Nullable: true}
}

// avatarBody caps an avatar upload: the image and the form around it.
const avatarBody = MaxAvatarSize + 64<<10

var (
	profileTags = []string{"profile"}
	userTags    = []string{"users"}
	groupTags   = []string{"user-groups"}
)

// Routes registers the profile, admin user and user-group routes, in the
// order of the spec's tables.
func Routes(api huma.API, s *Service) {
	profileRoutes(api, s)
	userRoutes(api, s)
	groupRoutes(api, s)
}

func profileRoutes(api huma.API, s *Service) {
	route := func(method, path string, scope httpx.Scope, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Tags: profileTags, Who: httpx.User}
	}
	// "Who am I" for any token, so that the H5P service can ask it about every
	// token; its permissions are the ones the token keeps. The rest of the
	// profile is profile:read and profile:write.
	httpx.Handle(api, route(http.MethodGet, "/api/profile/me", httpx.AnyToken, "The caller's account with roles, permissions, categories, interests and groups (user_read_self)"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[Profile], error) {
			return answer(s.Profile(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx)))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/profile/me", "profile:write", "Change the caller's names, phone and bio (user_update_self)"),
		func(ctx context.Context, in *profileInput) (*httpx.Response[Profile], error) {
			return answer(s.UpdateProfile(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), ProfileChange(in.Body)))
		})
	credentials := func(r httpx.Route) httpx.Route { r.Credentials = true; return r }
	// E-mail, password and account deletion: never with a scoped token.
	httpx.Handle(api, credentials(route(http.MethodPut, "/api/profile/me-auth", httpx.NoTokens, "Change the caller's e-mail and/or password; needs the current password (user_update_self)")),
		func(ctx context.Context, in *credentialsInput) (*httpx.Response[Profile], error) {
			b := in.Body
			return answer(s.UpdateCredentials(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), CredentialsChange{
				CurrentPassword: b.CurrentPassword, Email: b.Email, Password: b.Password, PasswordConfirmation: b.PasswordConfirmation}))
		})
	httpx.Handle(api, credentials(route(http.MethodPut, "/api/profile/password", httpx.NoTokens, "Change the caller's password; event PasswordChanged (user_update_self)")),
		func(ctx context.Context, in *passwordInput) (*httpx.Response[*httpx.Empty], error) {
			b := in.Body
			if err := s.ChangePassword(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), b.CurrentPassword,
				b.NewPassword, b.NewPasswordConfirmation); err != nil {
				return nil, err
			}
			return httpx.Done("Your password has been changed.")
		})
	httpx.Handle(api, route(http.MethodPut, "/api/profile/interests", "profile:write", "Replace the caller's interests (user-interest_update_self)"),
		func(ctx context.Context, in *interestsInput) (*httpx.Response[[]Category], error) {
			p := httpx.PrincipalFrom(ctx)
			return answer(s.SetInterests(ctx, httpx.TenantFrom(ctx), p, p.UserID, in.Body.Interests, ReplaceInterests))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/profile/settings", "profile:write", "Merge into the caller's personal settings; an empty value removes a key (user-setting_update_self)"),
		func(ctx context.Context, in *settingsInput) (*httpx.Response[map[string]string], error) {
			p := httpx.PrincipalFrom(ctx)
			return answer(s.UpdateSettings(ctx, httpx.TenantFrom(ctx), p, p.UserID, in.Body, MergeSettings))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/profile/settings", "profile:read", "The caller's personal settings"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[map[string]string], error) {
			p := httpx.PrincipalFrom(ctx)
			return answer(s.Settings(ctx, httpx.TenantFrom(ctx), p, p.UserID))
		})
	avatarRoute := route(http.MethodPost, "/api/profile/upload-avatar", "profile:write", "Set the caller's avatar: multipart field avatar, a PNG, JPEG, GIF or WebP image of at most 2 MiB (user_update_self)")
	avatarRoute.MaxBody = avatarBody
	httpx.Handle(api, avatarRoute,
		func(ctx context.Context, in *avatarInput) (*httpx.Response[Profile], error) {
			image, err := avatarFromForm(in.ContentType, in.RawBody)
			if err != nil {
				return nil, err
			}
			t, p := httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx)
			if _, err := s.SetAvatar(ctx, t, p, p.UserID, image); err != nil {
				return nil, err
			}
			return answer(s.Profile(ctx, t, p))
		})
	describeAvatarForm(api, avatarRoute.Path)
	httpx.Handle(api, route(http.MethodDelete, "/api/profile/delete-avatar", "profile:write", "Remove the caller's avatar (user_update_self)"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[Profile], error) {
			t, p := httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx)
			if _, err := s.RemoveAvatar(ctx, t, p, p.UserID); err != nil {
				return nil, err
			}
			return answer(s.Profile(ctx, t, p))
		})
	// Deleting the account, at once or through the mailed link: never with a
	// scoped token.
	httpx.Handle(api, route(http.MethodDelete, "/api/profile", httpx.NoTokens, "Delete the caller's account at once; event AccountDeleted (user_delete_self)"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[*httpx.Empty], error) {
			if err := s.DeleteSelf(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx)); err != nil {
				return nil, err
			}
			return httpx.Done("Your account has been deleted.")
		})
	httpx.Handle(api, route(http.MethodPost, "/api/profile/delete/init", httpx.NoTokens, "Mail a link that confirms the deletion of the caller's account, valid 24 hours; event AccountDeletionRequested (user_delete_self)"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[*httpx.Empty], error) {
			if err := s.RequestDeletion(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), httpx.Origin(ctx)); err != nil {
				return nil, err
			}
			return httpx.Done("We have mailed you a link to confirm the deletion of your account.")
		})
	confirm := route(http.MethodGet, "/api/profile/delete/{userId}/{token}", httpx.NoTokens, "Confirm an account deletion through the mailed link; event AccountDeleted")
	confirm.Who = httpx.Anyone
	httpx.Handle(api, confirm,
		func(ctx context.Context, in *deleteConfirmInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.ConfirmDeletion(ctx, httpx.TenantFrom(ctx), in.UserID, in.Token); err != nil {
				return nil, err
			}
			return httpx.Done("Your account has been deleted.")
		})
}

func userRoutes(api huma.API, s *Service) {
	route := func(method, path string, scope httpx.Scope, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Tags: userTags, Who: httpx.User}
	}
	httpx.Handle(api, route(http.MethodGet, "/api/admin/users", "users:read", "List users: search, role, status (active or blocked), order_by and order, pages (user_list)"),
		func(ctx context.Context, in *listUsersInput) (*httpx.PageResponse[Summary], error) {
			users, total, err := s.ListUsers(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), UserFilter{
				Search: in.Search, Role: in.Role, Status: in.Status, OrderBy: in.OrderBy, Desc: in.Order == "desc",
				Offset: in.Offset(), Limit: in.PerPage})
			if err != nil {
				return nil, err
			}
			return httpx.Paged(users, in.PageQuery, total)
		})
	create := route(http.MethodPost, "/api/admin/users", "users:write", "Create a user with roles, groups and categories (user_create)")
	create.Status = http.StatusCreated
	httpx.Handle(api, create,
		func(ctx context.Context, in *createUserInput) (*httpx.Response[Detail], error) {
			b := in.Body
			d, err := s.CreateUser(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), NewAccount{Email: b.Email,
				Password: b.Password, FirstName: b.FirstName, LastName: b.LastName, Phone: b.Phone, Bio: b.Bio,
				Roles: b.Roles, IsActive: b.IsActive, EmailVerified: b.EmailVerified, Groups: b.Groups, Categories: b.Categories})
			if err != nil {
				return nil, err
			}
			return httpx.Created(d, "User created.")
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/users/{id}", "users:read", "A user with categories, interests and groups (user_read)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[Detail], error) {
			return answer(s.User(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPatch, "/api/admin/users/{id}", "users:write", "Change some fields of a user; is_active=false blocks it (event AccountBlocked) and ends its sessions (user_update)"),
		func(ctx context.Context, in *patchUserInput) (*httpx.Response[Detail], error) {
			return answer(s.UpdateUser(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body.change()))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/admin/users/{id}", "users:write", "Update a user: email, first_name and last_name required, other fields as in PATCH (user_update)"),
		func(ctx context.Context, in *putUserInput) (*httpx.Response[Detail], error) {
			b := in.Body
			return answer(s.UpdateUser(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, AccountChange{
				Email: &b.Email, Password: b.Password, FirstName: &b.FirstName, LastName: &b.LastName, Phone: b.Phone,
				Bio: b.Bio, Roles: b.Roles, IsActive: b.IsActive, EmailVerified: b.EmailVerified, Groups: b.Groups,
				Categories: b.Categories}))
		})
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/users/{id}", "users:write", "Delete a user; event AccountDeleted (user_delete)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.DeleteUser(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("User deleted.")
		})
	avatarRoute := route(http.MethodPost, "/api/admin/users/{id}/avatar", "users:write", "Set a user's avatar: multipart field avatar, a PNG, JPEG, GIF or WebP image of at most 2 MiB (user_update)")
	avatarRoute.MaxBody = avatarBody
	httpx.Handle(api, avatarRoute,
		func(ctx context.Context, in *userAvatarInput) (*httpx.Response[Detail], error) {
			image, err := avatarFromForm(in.ContentType, in.RawBody)
			if err != nil {
				return nil, err
			}
			return answer(s.SetAvatar(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, image))
		})
	describeAvatarForm(api, avatarRoute.Path)
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/users/{id}/avatar", "users:write", "Remove a user's avatar (user_update)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[Detail], error) {
			return answer(s.RemoveAvatar(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/users/{id}/settings", "users:read", "A user's personal settings (user_read or user-setting_update)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[map[string]string], error) {
			return answer(s.Settings(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPatch, "/api/admin/users/{id}/settings", "users:write", "Merge into a user's personal settings; an empty value removes a key (user-setting_update)"),
		func(ctx context.Context, in *userSettingsInput) (*httpx.Response[map[string]string], error) {
			return answer(s.UpdateSettings(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body, MergeSettings))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/admin/users/{id}/settings", "users:write", "Replace a user's personal settings (user-setting_update)"),
		func(ctx context.Context, in *userSettingsInput) (*httpx.Response[map[string]string], error) {
			return answer(s.UpdateSettings(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body, ReplaceSettings))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/users/{id}/interests", "users:read", "A user's interests (user_read or user-interest_update)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[[]Category], error) {
			return answer(s.Interests(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/admin/users/{id}/interests", "users:write", "Replace a user's interests (user-interest_update)"),
		func(ctx context.Context, in *userInterestsInput) (*httpx.Response[[]Category], error) {
			return answer(s.SetInterests(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body.Interests, ReplaceInterests))
		})
	httpx.Handle(api, route(http.MethodPost, "/api/admin/users/{id}/interests", "users:write", "Add interests to a user (user-interest_update)"),
		func(ctx context.Context, in *userInterestsInput) (*httpx.Response[[]Category], error) {
			return answer(s.SetInterests(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body.Interests, AddInterests))
		})
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/users/{id}/interests/{interest_id}", "users:write", "Remove one interest of a user (user-interest_update)"),
		func(ctx context.Context, in *interestInput) (*httpx.Response[[]Category], error) {
			return answer(s.RemoveInterest(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.InterestID))
		})
}

func groupRoutes(api huma.API, s *Service) {
	route := func(method, path string, scope httpx.Scope, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Tags: groupTags, Who: httpx.User}
	}
	httpx.Handle(api, route(http.MethodGet, "/api/admin/user-groups", "groups:read", "List groups by name, with search and pages (user-group_list)"),
		func(ctx context.Context, in *listGroupsInput) (*httpx.PageResponse[Group], error) {
			groups, total, err := s.ListGroups(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx),
				GroupFilter{Search: in.Search, Offset: in.Offset(), Limit: in.PerPage})
			if err != nil {
				return nil, err
			}
			return httpx.Paged(groups, in.PageQuery, total)
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/user-groups/tree", "groups:read", "Every group as a tree of children (user-group_list)"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]GroupNode], error) {
			return answer(s.GroupTree(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx)))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/user-groups/users", "groups:read", "Users with their groups, with search, group_id and pages (user-group_list)"),
		func(ctx context.Context, in *groupUsersInput) (*httpx.PageResponse[Member], error) {
			members, total, err := s.GroupMembers(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx),
				UserFilter{Search: in.Search, GroupID: in.GroupID, Offset: in.Offset(), Limit: in.PerPage})
			if err != nil {
				return nil, err
			}
			return httpx.Paged(members, in.PageQuery, total)
		})
	create := route(http.MethodPost, "/api/admin/user-groups", "groups:write", "Create a group (user-group_create)")
	create.Status = http.StatusCreated
	httpx.Handle(api, create,
		func(ctx context.Context, in *createGroupInput) (*httpx.Response[Group], error) {
			b := in.Body
			g, err := s.CreateGroup(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx),
				GroupInput{Name: b.Name, ParentID: b.ParentID, Registerable: b.Registerable})
			if err != nil {
				return nil, err
			}
			return httpx.Created(g, "Group created.")
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/user-groups/{id}", "groups:read", "A group with its members (user-group_read; user-group_read_self: a group of one's own)"),
		func(ctx context.Context, in *groupIDInput) (*httpx.Response[GroupDetail], error) {
			return answer(s.Group(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/admin/user-groups/{id}", "groups:write", "Replace a group's name, parent and registerable flag (user-group_update)"),
		func(ctx context.Context, in *putGroupInput) (*httpx.Response[Group], error) {
			b := in.Body
			return answer(s.UpdateGroup(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, GroupChange{
				Name: &b.Name, SetParent: true, ParentID: b.ParentID, Registerable: &b.Registerable}))
		})
	httpx.Handle(api, route(http.MethodPatch, "/api/admin/user-groups/{id}", "groups:write", "Change some fields of a group; parent_id null moves it to the top (user-group_update)"),
		func(ctx context.Context, in *patchGroupInput) (*httpx.Response[Group], error) {
			b := in.Body
			return answer(s.UpdateGroup(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, GroupChange{
				Name: b.Name, SetParent: b.ParentID.set, ParentID: b.ParentID.id, Registerable: b.Registerable}))
		})
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/user-groups/{id}", "groups:write", "Delete a group with its subgroups (user-group_delete)"),
		func(ctx context.Context, in *groupIDInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.DeleteGroup(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Group deleted.")
		})
	httpx.Handle(api, route(http.MethodPost, "/api/admin/user-groups/{id}/members", "groups:write", "Add a user to a group; event UserAddedToGroup unless already a member (user-group_member-add)"),
		func(ctx context.Context, in *memberInput) (*httpx.Response[GroupDetail], error) {
			d, added, err := s.AddMember(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body.UserID)
			if err != nil {
				return nil, err
			}
			if !added {
				return httpx.OKMessage(d, "The user already is a member of the group.")
			}
			return httpx.OKMessage(d, "User added to the group.")
		})
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/user-groups/{id}/members/{user_id}", "groups:write", "Remove a user from a group; event UserRemovedFromGroup if it was a member (user-group_member-remove)"),
		func(ctx context.Context, in *memberPathInput) (*httpx.Response[GroupDetail], error) {
			d, removed, err := s.RemoveMember(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.UserID)
			if err != nil {
				return nil, err
			}
			if !removed {
				return httpx.OKMessage(d, "The user is not a member of the group.")
			}
			return httpx.OKMessage(d, "User removed from the group.")
		})
}

// answer wraps a service result in the envelope.
func answer[T any](v T, err error) (*httpx.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return httpx.OK(v)
}

// avatarFromForm takes the image from the multipart field "avatar".
func avatarFromForm(contentType string, body []byte) ([]byte, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, apperr.New(apperr.UnsupportedMedia, "Send the avatar as multipart/form-data.")
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, apperr.Field("avatar", "The avatar field is required.")
		}
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err, "The multipart form could not be read.")
		}
		if part.FormName() != "avatar" {
			continue
		}
		image, err := io.ReadAll(io.LimitReader(part, MaxAvatarSize+1))
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err, "The multipart form could not be read.")
		}
		if len(image) > MaxAvatarSize {
			return nil, errAvatarTooLarge
		}
		return image, nil
	}
}

// describeAvatarForm documents the multipart body of an avatar route,
// which the handler reads raw so that its size cap holds.
func describeAvatarForm(api huma.API, path string) {
	item := api.OpenAPI().Paths[path]
	if item == nil || item.Post == nil {
		return
	}
	item.Post.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"multipart/form-data": {
			Schema: &huma.Schema{Type: huma.TypeObject, Required: []string{"avatar"}, Properties: map[string]*huma.Schema{
				"avatar": {Type: huma.TypeString, Format: "binary", Description: "A PNG, JPEG, GIF or WebP image of at most 2 MiB."},
			}},
			Encoding: map[string]*huma.Encoding{"avatar": {ContentType: "image/png, image/jpeg, image/gif, image/webp"}},
		},
	}}
}
