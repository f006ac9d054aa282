package content

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
)

// Grants are the signed path segments of play links (interactive apps,
// LiaScript courses): "<id>-<expires>-<signature>". A grant sits in the
// path, not the query, so the relative links of what it plays carry it.
// The purpose is part of what is signed, so a grant of one kind of link
// opens no other.

// GrantExpiry is when a play link made at now expires: ttl ahead, rounded
// up to the hour, so the links of one thing are the same for an hour and
// browsers can cache what they fetch through them.
func GrantExpiry(now time.Time, ttl time.Duration) int64 {
	return now.Add(ttl).Truncate(time.Hour).Add(time.Hour).Unix()
}

// SignGrant makes the grant of id for purpose, valid until expires (Unix
// seconds), with the tenant's URL key.
func SignGrant(key []byte, purpose string, id, expires int64) string {
	return fmt.Sprintf("%d-%d-%s", id, expires, grantSignature(key, purpose, id, expires))
}

// VerifyGrant checks a grant for purpose and returns its id.
func VerifyGrant(key []byte, purpose, grant string, now time.Time) (int64, error) {
	bad := apperr.New(apperr.Forbidden, "Invalid or expired link.")
	parts := strings.Split(grant, "-")
	if len(parts) != 3 {
		return 0, bad
	}
	id, err1 := strconv.ParseInt(parts[0], 10, 64)
	expires, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || !hmac.Equal([]byte(grantSignature(key, purpose, id, expires)), []byte(parts[2])) ||
		now.Unix() >= expires {
		return 0, bad
	}
	return id, nil
}

func grantSignature(key []byte, purpose string, id, expires int64) string {
	mac := hmac.New(sha256.New, key)
	// The purpose keeps these signatures apart from file links' and from
	// each other's.
	fmt.Fprintf(mac, "%s\n%d\n%d", purpose, id, expires)
	return hex.EncodeToString(mac.Sum(nil))[:32]
}
