package access

import (
	"strconv"
	"strings"
)

// Keys naming the data principals are built from, for sqldb.Changed: a
// write that changes one names it, and every process drops the principals
// (and H5P profiles) it cached from it.
const TenantKey = "tenant" // everything of the tenant (a recreated database)

// GroupsKey names every user's groups as their profiles show them: a group
// was renamed, moved or deleted.
const GroupsKey = "groups"

// UserKey names a user's account and roles.
func UserKey(id int64) string { return "user:" + strconv.FormatInt(id, 10) }

// TokenKey names an access token that was revoked.
func TokenKey(id string) string { return tokenPrefix + id }

// TokenKeys names the revoked tokens of ids, for one announcement.
func TokenKeys(ids []string) []string {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = TokenKey(id)
	}
	return keys
}

const tokenPrefix = "token:"

// RevokedToken returns the token id a TokenKey names, and false for the
// other keys.
func RevokedToken(key string) (string, bool) { return strings.CutPrefix(key, tokenPrefix) }
