package accounts

import (
	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
)

// The rules of who may do what with accounts. Each admin route needs the
// permission of the spec's table; the *_self permissions open the same
// action on the caller's own account.

var errUnauthorized = apperr.New(apperr.Forbidden, "This action is unauthorized.")

// allow is nil when ok, else the 403 every refusal answers.
func allow(ok bool) error {
	if ok {
		return nil
	}
	return errUnauthorized
}

func own(p *access.Principal, userID int64) bool { return p != nil && p.UserID == userID }

// canReadUser: user_read, or user_read_self for one's own account.
func canReadUser(p *access.Principal, userID int64) bool {
	return p.Has(access.UserRead) || (own(p, userID) && p.Has(access.UserReadSelf))
}

// canUpdateSelf: the profile routes that change one's own account.
func canUpdateSelf(p *access.Principal) bool { return p.Has(access.UserUpdateSelf) }

// canDeleteSelf: deleting one's own account. An admin acting as another
// user (impersonation) may not delete that user's account in their name.
func canDeleteSelf(p *access.Principal) bool {
	return p.Has(access.UserDeleteSelf) && p.ImpersonatorID == 0
}

// canUpdateInterests: user-interest_update, or the _self permission for
// one's own interests.
func canUpdateInterests(p *access.Principal, userID int64) bool {
	return p.Has(access.UserInterestUpdate) || (own(p, userID) && p.Has(access.UserInterestUpdateSelf))
}

// canReadInterests: whoever may read the user or change its interests.
func canReadInterests(p *access.Principal, userID int64) bool {
	return canReadUser(p, userID) || canUpdateInterests(p, userID)
}

// canUpdateSettings: user-setting_update, or the _self permission for one's
// own personal settings.
func canUpdateSettings(p *access.Principal, userID int64) bool {
	return p.Has(access.UserSettingUpdate) || (own(p, userID) && p.Has(access.UserSettingUpdateSelf))
}

// canReadSettings: whoever may read the user or change its settings.
func canReadSettings(p *access.Principal, userID int64) bool {
	return canReadUser(p, userID) || canUpdateSettings(p, userID)
}

// canReadGroup: user-group_read, or user-group_read_self for a group the
// caller belongs to.
func canReadGroup(p *access.Principal, member bool) bool {
	return p.Has(access.GroupRead) || (member && p.Has(access.GroupReadSelf))
}

// canUpdateUser: user_update, or user_update_self for one's own account
// (the avatar routes serve both).
func canUpdateUser(p *access.Principal, userID int64) bool {
	return p.Has(access.UserUpdate) || (own(p, userID) && canUpdateSelf(p))
}
