package accounts

import "time"

// Summary is the public shape of a user in API responses.
type Summary struct {
	ID            int64      `json:"id"`
	Email         string     `json:"email"`
	FirstName     string     `json:"first_name"`
	LastName      string     `json:"last_name"`
	Name          string     `json:"name"`
	Phone         *string    `json:"phone"`
	Bio           *string    `json:"bio"`
	IsActive      bool       `json:"is_active"`
	EmailVerified bool       `json:"email_verified"`
	VerifiedAt    *time.Time `json:"email_verified_at"`
	AvatarPath    *string    `json:"path_avatar"`
	Roles         []string   `json:"roles"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// SummaryOf renders a user for responses; the password hash never leaves.
func SummaryOf(u User) Summary {
	roles := u.Roles
	if roles == nil {
		roles = []string{}
	}
	return Summary{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName, Name: u.Name(),
		Phone: u.Phone, Bio: u.Bio, IsActive: u.IsActive, EmailVerified: u.Verified(), VerifiedAt: u.EmailVerifiedAt,
		AvatarPath: u.AvatarPath, Roles: roles, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// Category is a user category or interest; categories form a tree.
type Category struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Slug     string `json:"slug"`
	ParentID *int64 `json:"parent_id"`
}

// Detail is a user with the categories, interests and groups it has, as
// the admin user routes show one.
type Detail struct {
	Summary
	// AvatarURL is a signed link to the avatar image, valid for an hour.
	AvatarURL  *string    `json:"avatar_url"`
	Categories []Category `json:"categories"`
	Interests  []Category `json:"interests"`
	Groups     []Group    `json:"groups"`
}

// Profile is the caller's own account (GET /api/profile/me): the detail
// with the permissions the caller holds, sorted.
type Profile struct {
	Detail
	Permissions []string `json:"permissions"`
	// Token describes the scoped token the request carries (absent for a
	// signed access token); Permissions are then narrowed to its scopes.
	Token *TokenInfo `json:"token,omitempty"`
}

// TokenInfo is what the profile tells of the caller's scoped token, so
// that the H5P service applies its scopes and limit.
type TokenInfo struct {
	ID                 string   `json:"id"`
	Scopes             []string `json:"scopes"`
	RateLimitPerMinute int      `json:"rate_limit_per_minute,omitempty"`
}

// Member is a user with the groups it belongs to, as the group member list
// shows one.
type Member struct {
	Summary
	Groups []Group `json:"groups"`
}
