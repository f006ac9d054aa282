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

// H5P grants. H5P content is played and edited on the content origin
// (see docs/web.md), which holds no session: the frontend hands the embed
// page a grant instead, a bearer credential that the H5P service takes for
// one user and one content, and for nothing else.
//   - A play grant, "lms_h5pplay.<user>.<content>.<topic>-<expires>-<sig>",
//     plays the content of a topic and keeps the user's state and result.
//   - An edit grant, "lms_h5pedit.<user>.<content>.0-<expires>-<sig>",
//     opens the editor of the content ("new": of a content to create). The
//     H5P service issues it to a user who may edit that content.
// Each is the signed grant of the topic (0 for an edit grant), with its
// kind, the user and the content in its purpose.

// H5PGrantPrefix starts every H5P play grant, H5PEditGrantPrefix every
// edit grant.
const (
	H5PGrantPrefix     = "lms_h5pplay."
	H5PEditGrantPrefix = "lms_h5pedit."
)

// H5PGrant is what a grant allows.
type H5PGrant struct {
	UserID int64
	// ContentID is the content's id; "new" in an edit grant that creates
	// one.
	ContentID string
	TopicID   int64
	Expires   int64
	Edit      bool
}

// NewContent is the ContentID of an edit grant for a content to create.
const NewContent = "new"

// IsH5PGrant tells whether a bearer credential is an H5P grant of either
// kind, by its prefix only.
func IsH5PGrant(raw string) bool {
	return strings.HasPrefix(raw, H5PGrantPrefix) || strings.HasPrefix(raw, H5PEditGrantPrefix)
}

func (g H5PGrant) prefixAndPurpose() (string, string) {
	if g.Edit {
		return H5PEditGrantPrefix, fmt.Sprintf("h5p-edit\n%d\n%s", g.UserID, g.ContentID)
	}
	return H5PGrantPrefix, fmt.Sprintf("h5p-play\n%d\n%s", g.UserID, g.ContentID)
}

// SignH5PGrant makes the grant g with the tenant's URL key.
func SignH5PGrant(key []byte, g H5PGrant) string {
	prefix, purpose := g.prefixAndPurpose()
	return fmt.Sprintf("%s%d.%s.%s", prefix, g.UserID, g.ContentID, SignGrant(key, purpose, g.TopicID, g.Expires))
}

// VerifyH5PGrant checks a play or edit grant and returns what it allows.
func VerifyH5PGrant(key []byte, raw string, now time.Time) (H5PGrant, error) {
	bad := apperr.New(apperr.Unauthorized, "Invalid or expired H5P grant.")
	g := H5PGrant{Edit: strings.HasPrefix(raw, H5PEditGrantPrefix)}
	rest, ok := strings.CutPrefix(raw, H5PGrantPrefix)
	if g.Edit {
		rest, ok = strings.CutPrefix(raw, H5PEditGrantPrefix)
	}
	parts := strings.SplitN(rest, ".", 3)
	if !ok || len(parts) != 3 || len(raw) > 256 {
		return H5PGrant{}, bad
	}
	userID, err := strconv.ParseInt(parts[0], 10, 64)
	contentID, cerr := strconv.ParseInt(parts[1], 10, 64)
	numeric := cerr == nil && contentID > 0 && strconv.FormatInt(contentID, 10) == parts[1]
	if err != nil || userID <= 0 || !(numeric || g.Edit && parts[1] == NewContent) {
		return H5PGrant{}, bad
	}
	g.UserID, g.ContentID = userID, parts[1]
	_, purpose := g.prefixAndPurpose()
	topicID, err := VerifyGrant(key, purpose, parts[2], now)
	if err != nil || g.Edit && topicID != 0 {
		return H5PGrant{}, bad
	}
	g.TopicID = topicID
	g.Expires, _ = strconv.ParseInt(strings.Split(parts[2], "-")[1], 10, 64)
	return g, nil
}
