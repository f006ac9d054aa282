package social

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/lms-platform/lms/internal/platform"
)

// What a sealed value is for: a value sealed for one purpose never opens
// as the other, nor on another tenant.
const (
	purposeState   = "state"
	purposeHandoff = "handoff"
)

var errSealed = errors.New("social: sealed value does not open")

// aead is the tenant's cipher for the values of the flow, derived from
// its link-signing key: AES-256-GCM both hides them (the PKCE verifier and
// nonce travel through the browser and the provider) and signs them.
func aead(t *platform.Tenant) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, t.URLKey, nil, "lms social login", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// additional binds a sealed value to its purpose and tenant.
func additional(t *platform.Tenant, purpose string) []byte {
	return []byte("lms-social:" + purpose + ":" + strconv.FormatInt(t.ID, 10))
}

// seal encrypts v as JSON into a URL-safe string.
func seal(t *platform.Tenant, purpose string, v any) (string, error) {
	c, err := aead(t)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, c.NonceSize(), c.NonceSize()+len(plain)+c.Overhead())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(c.Seal(nonce, nonce, plain, additional(t, purpose))), nil
}

// open decrypts a sealed string into v; anything changed, sealed for
// another purpose or by another tenant fails.
func open(t *platform.Tenant, purpose, raw string, v any) error {
	c, err := aead(t)
	if err != nil {
		return err
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) < c.NonceSize() {
		return errSealed
	}
	plain, err := c.Open(nil, b[:c.NonceSize()], b[c.NonceSize():], additional(t, purpose))
	if err != nil {
		return errSealed
	}
	if json.Unmarshal(plain, v) != nil {
		return errSealed
	}
	return nil
}

// randomString is n random bytes, URL-safe.
func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
