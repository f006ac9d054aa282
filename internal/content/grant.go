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

// H5P play grants. An H5P topic's content is played on the content origin
// (see docs/web.md), which holds no session: the frontend hands the embed
// page this grant instead, a bearer credential that the H5P service takes
// for one user playing one content in one topic, and for nothing else.
// It is "lms_h5pplay.<user>.<content>.<topic>-<expires>-<signature>": the
// signed grant of the topic, with the user and the content in its purpose.

// H5PGrantPrefix starts every H5P play grant.
const H5PGrantPrefix = "lms_h5pplay."

// H5PGrant is what a play grant allows.
type H5PGrant struct {
	UserID    int64
	ContentID string
	TopicID   int64
	Expires   int64
}

func h5pPurpose(userID int64, contentID string) string {
	return fmt.Sprintf("h5p-play\n%d\n%s", userID, contentID)
}

// SignH5PGrant makes the play grant of g with the tenant's URL key.
func SignH5PGrant(key []byte, g H5PGrant) string {
	return fmt.Sprintf("%s%d.%s.%s", H5PGrantPrefix, g.UserID, g.ContentID,
		SignGrant(key, h5pPurpose(g.UserID, g.ContentID), g.TopicID, g.Expires))
}

// VerifyH5PGrant checks a play grant and returns what it allows.
func VerifyH5PGrant(key []byte, raw string, now time.Time) (H5PGrant, error) {
	bad := apperr.New(apperr.Unauthorized, "Invalid or expired play grant.")
	rest, ok := strings.CutPrefix(raw, H5PGrantPrefix)
	parts := strings.SplitN(rest, ".", 3)
	if !ok || len(parts) != 3 || len(raw) > 256 {
		return H5PGrant{}, bad
	}
	userID, err := strconv.ParseInt(parts[0], 10, 64)
	contentID, cerr := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || cerr != nil || userID <= 0 || contentID <= 0 || strconv.FormatInt(contentID, 10) != parts[1] {
		return H5PGrant{}, bad
	}
	topicID, err := VerifyGrant(key, h5pPurpose(userID, parts[1]), parts[2], now)
	if err != nil {
		return H5PGrant{}, bad
	}
	expires, _ := strconv.ParseInt(strings.Split(parts[2], "-")[1], 10, 64)
	return H5PGrant{UserID: userID, ContentID: parts[1], TopicID: topicID, Expires: expires}, nil
}
