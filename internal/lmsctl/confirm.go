package lmsctl

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"time"
)

// ConfirmFor is how long a destructive tool's confirmation token stays
// valid.
const ConfirmFor = 2 * time.Minute

// Confirmations issues and redeems the confirmation tokens of destructive
// tools. A token is self-contained: an id, an expiry and a signature over
// them, the tool, its exact arguments and the profile's user, made with a
// key kept in the profile. So a client that starts one `lmsctl mcp` per
// call can confirm in a second process, and a token is used once because
// its id is remembered in the profile until it expires.
type Confirmations struct {
	// Path is the profiles file (0600); Profile names the profile whose key
	// signs and whose token says who the user is.
	Path, Profile string
	// Now is the clock of expiries (time.Now when nil).
	Now func() time.Time
}

func (c *Confirmations) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// confirmState is what a profile keeps for its confirmations.
type confirmState struct {
	Key string `json:"key"`
	// Used are the ids of redeemed tokens, with their expiry (Unix
	// seconds): after it the signature refuses them anyway.
	Used map[string]int64 `json:"used,omitempty"`
}

// update runs fn on the profile under an exclusive lock of the profiles
// file and saves what fn changed: two processes confirming at once see
// each other's spent tokens.
func (c *Confirmations) update(fn func(p *Profile) (bool, error)) error {
	if c == nil {
		return &Failure{Code: "CONFIRMATION_INVALID", Exit: ExitUsage,
			Message: "This server keeps no confirmations: start lmsctl mcp with a profile to use destructive tools."}
	}
	unlock, err := lockFile(c.Path)
	if err != nil {
		return err
	}
	defer unlock()
	cfg, err := loadConfig(c.Path)
	if err != nil {
		return err
	}
	name, p, err := cfg.profile(c.Profile)
	if err != nil {
		return err
	}
	changed, err := fn(&p)
	if err != nil || !changed {
		return err
	}
	cfg.Profiles[name] = p
	return cfg.save(c.Path)
}

// issue returns a token for one call of tool with the canonical
// arguments, and when it expires.
func (c *Confirmations) issue(tool, canonical string) (string, time.Time, error) {
	var key []byte
	var subject string
	err := c.update(func(p *Profile) (bool, error) {
		changed := false
		if p.Confirm == nil || p.Confirm.Key == "" {
			k := make([]byte, 32)
			rand.Read(k)
			p.Confirm = &confirmState{Key: hex.EncodeToString(k)}
			changed = true
		}
		key, _ = hex.DecodeString(p.Confirm.Key)
		subject = userOf(*p)
		return changed, nil
	})
	if err != nil {
		return "", time.Time{}, err
	}
	id := make([]byte, 12)
	rand.Read(id)
	expires := c.now().Add(ConfirmFor).Truncate(time.Second)
	head := hex.EncodeToString(id) + "." + strconv.FormatInt(expires.Unix(), 10)
	return head + "." + confirmMAC(key, head, tool, canonical, subject), expires, nil
}

// redeem accepts a token once, before it expires, for the tool, the
// arguments and the user it was issued for.
func (c *Confirmations) redeem(tool, canonical, token string) error {
	refused := &Failure{Code: "CONFIRMATION_INVALID", Exit: ExitUsage}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		refused.Message = "The confirmation token is malformed: call " + tool + " without confirm to get one."
		return refused
	}
	unix, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		refused.Message = "The confirmation token is malformed: call " + tool + " without confirm to get one."
		return refused
	}
	now := c.now()
	return c.update(func(p *Profile) (bool, error) {
		if p.Confirm == nil || p.Confirm.Key == "" {
			refused.Message = "This profile issued no confirmation token (it was logged in again since?): call " + tool +
				" without confirm to get a new one."
			return false, refused
		}
		key, _ := hex.DecodeString(p.Confirm.Key)
		head := parts[0] + "." + parts[1]
		if !hmac.Equal([]byte(parts[2]), []byte(confirmMAC(key, head, tool, canonical, userOf(*p)))) {
			refused.Message = "The confirmation token was not issued for " + tool + " with exactly these arguments " +
				"by this profile's user: call " + tool + " again with the same arguments as the first call, or without confirm to get a new token."
			return false, refused
		}
		if !now.Before(time.Unix(unix, 0)) {
			refused.Message = "The confirmation token expired (tokens last " + ConfirmFor.String() + "): call " + tool +
				" without confirm to get a new one."
			return false, refused
		}
		for id, exp := range p.Confirm.Used {
			if !now.Before(time.Unix(exp, 0)) {
				delete(p.Confirm.Used, id)
			}
		}
		if _, spent := p.Confirm.Used[parts[0]]; spent {
			refused.Message = "The confirmation token was used already: call " + tool + " without confirm to get a new one."
			return false, refused
		}
		if p.Confirm.Used == nil {
			p.Confirm.Used = map[string]int64{}
		}
		p.Confirm.Used[parts[0]] = unix
		return true, nil
	})
}

// userOf names the profile's user by a digest of its token: a token is
// one user's, and the digest keeps the secret out of the signature input.
func userOf(p Profile) string {
	sum := sha256.Sum256([]byte(p.Server + "\x00" + p.Host + "\x00" + p.Token))
	return hex.EncodeToString(sum[:])
}

func confirmMAC(key []byte, head, tool, canonical, subject string) string {
	m := hmac.New(sha256.New, key)
	io.WriteString(m, "lmsctl-confirm\x00"+head+"\x00"+tool+"\x00"+canonical+"\x00"+subject)
	return hex.EncodeToString(m.Sum(nil))
}
