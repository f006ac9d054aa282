package scorm

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
)

// TokenHeader carries the tracking token on the tracking routes.
const TokenHeader = "X-Lms-Tracking-Token"

// ticket is what a tracking token says: who tracks which SCO in which
// topic, in which session, until when. Preview tickets (an author trying a
// topic they cannot learn in) record nothing in the learner's progress;
// owns says the SCO is the topic's own, whose completion completes it.
type ticket struct {
	UserID, TopicID, SCOID int64
	Session                int
	Expires                int64
	Preview, Owns          bool
}

// launchedAt is when the ticket's session was launched: every ticket is
// signed at its launch to expire trackTokenTTL later (Launch).
func (k ticket) launchedAt() time.Time {
	return time.Unix(k.Expires, 0).Add(-trackTokenTTL)
}

var errTicket = apperr.New(apperr.Unauthorized, "Invalid or expired tracking token.")

func (k ticket) payload() string {
	return fmt.Sprintf("v1|%d|%d|%d|%d|%d|%t|%t", k.UserID, k.TopicID, k.SCOID, k.Session, k.Expires, k.Preview, k.Owns)
}

// sign makes the token: the payload and its HMAC under the tenant's URL
// key, with a purpose that no other signed value of the tenant shares, so
// the token is good on that tenant only.
func (k ticket) sign(t *platform.Tenant) string {
	p := k.payload()
	return base64.RawURLEncoding.EncodeToString([]byte(p)) + "." + mac(t.URLKey, "scorm-track", p)
}

func mac(key []byte, purpose, text string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(purpose + "\n" + text))
	return hex.EncodeToString(h.Sum(nil))
}

// readTicket checks a token for the SCO of the route.
func readTicket(t *platform.Tenant, token string, scoID int64, now time.Time) (ticket, error) {
	if token == "" {
		return ticket{}, apperr.New(apperr.Unauthorized, "The tracking token is missing: send it as "+TokenHeader+".")
	}
	enc, sig, ok := strings.Cut(token, ".")
	if !ok || len(token) > 512 {
		return ticket{}, errTicket
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || !hmac.Equal([]byte(mac(t.URLKey, "scorm-track", string(raw))), []byte(sig)) {
		return ticket{}, errTicket
	}
	f := strings.Split(string(raw), "|")
	if len(f) != 8 || f[0] != "v1" {
		return ticket{}, errTicket
	}
	var k ticket
	ints := []*int64{&k.UserID, &k.TopicID, &k.SCOID, nil, &k.Expires}
	for i, p := range ints {
		if p == nil {
			continue
		}
		if *p, err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return ticket{}, errTicket
		}
	}
	if k.Session, err = strconv.Atoi(f[4]); err != nil {
		return ticket{}, errTicket
	}
	k.Preview, k.Owns = f[6] == "true", f[7] == "true"
	if now.Unix() >= k.Expires {
		return ticket{}, apperr.New(apperr.Unauthorized, "The tracking token has expired; launch the SCO again.")
	}
	if k.SCOID != scoID {
		return ticket{}, apperr.New(apperr.Forbidden, "The tracking token is for another SCO.")
	}
	return k, nil
}

// filesSignature signs the file links of a package until expires: the
// links are a path prefix, so that the SCO's relative links work.
func filesSignature(t *platform.Tenant, packageID, expires int64) string {
	return mac(t.URLKey, "scorm-files", fmt.Sprintf("%d\n%d", packageID, expires))
}
