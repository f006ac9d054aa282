package lti

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/platform"
)

// JWK is one public key of a JWKS document (RFC 7517), RSA only.
type JWK struct {
	Kty string `json:"kty" doc:"Always RSA."`
	Kid string `json:"kid"`
	Use string `json:"use,omitempty" doc:"sig"`
	Alg string `json:"alg,omitempty" doc:"RS256"`
	N   string `json:"n" doc:"Modulus, base64url."`
	E   string `json:"e" doc:"Exponent, base64url."`
}

// JWKS is a key set document.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// TenantJWKS is the tenant's public key as a key set: the key our
// id_tokens (platform role) and client assertions (tool role) are signed
// with.
func TenantJWKS(t *platform.Tenant) JWKS {
	return JWKS{Keys: []JWK{KeyJWK(t.Keys.ID, t.Keys.Public)}}
}

// KeyJWK is an RSA public key as a JWK for RS256 signatures.
func KeyJWK(kid string, pub *rsa.PublicKey) JWK {
	return JWK{Kty: "RSA", Kid: kid, Use: "sig", Alg: "RS256",
		N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}
}

// ParseJWKS reads the RSA signing keys of a key set by kid; keys of
// other types or algorithms are skipped.
func ParseJWKS(body []byte) (map[string]*rsa.PublicKey, error) {
	var doc JWKS
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("lti: key set: %w", err)
	}
	out := map[string]*rsa.PublicKey{}
	for _, k := range doc.Keys {
		if k.Kty != "RSA" || (k.Alg != "" && k.Alg != "RS256") || (k.Use != "" && k.Use != "sig") {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.N, "="))
		e, err2 := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.E, "="))
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			continue
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < 2048 {
			continue
		}
		out[k.Kid] = pub
	}
	return out, nil
}

// Key set cache times: the default when the answer names none, the
// longest we keep one, and the shortest time between two fetches of the
// same set (an unknown kid does not make us fetch on every launch).
const (
	defaultKeyTTL = 5 * time.Minute
	maxKeyTTL     = 24 * time.Hour
	minRefetch    = 10 * time.Second
)

// KeySets fetches other parties' key sets through the fetch guard and
// keeps them as long as their Cache-Control allows; an unknown kid
// fetches the set again.
type KeySets struct {
	Fetch *fetch.Client
	Now   func() time.Time
}

type keySetsKey struct{}

type cachedSet struct {
	keys    map[string]*rsa.PublicKey
	fetched time.Time
	expires time.Time
	// retriedFor is the latest signing time a fetch within the floor was
	// made for.
	retriedFor time.Time
}

type tenantSets struct {
	mu   sync.Mutex
	sets map[string]*cachedSet
}

// Key returns the key kid of the set at url, fetching it when it is not
// cached, stale, or lacks kid. signedAt is when the JWT naming kid says it
// was signed (its iat; zero when unknown): the party published its key by
// then. Within minRefetch of the last fetch an unknown kid is refused
// without fetching (a flood of made-up kids costs the party nothing),
// unless that fetch may have been made before the JWT was signed (in its
// second of iat or earlier): the key may have come after it (a rotation),
// so the set is fetched once more. Such a fetch is made once per signing
// time, which bounds them to one a second. A party whose clock runs ahead
// of ours signs "in the future": its iat counts as our current second, so
// its rotation is not refused, and its iats cannot buy more fetches.
func (k *KeySets) Key(ctx context.Context, t *platform.Tenant, url, kid string, signedAt time.Time) (*rsa.PublicKey, error) {
	ts := t.Local(keySetsKey{}, func() any { return &tenantSets{sets: map[string]*cachedSet{}} }).(*tenantSets)
	now := k.Now()
	if signedAt.After(now) {
		signedAt = now.Truncate(time.Second)
	}
	ts.mu.Lock()
	set := ts.sets[url]
	ts.mu.Unlock()
	var retriedFor time.Time
	if set != nil {
		retriedFor = set.retriedFor
	}
	if set != nil && now.Before(set.expires) {
		if key, ok := set.keys[kid]; ok {
			return key, nil
		}
		if now.Sub(set.fetched) < minRefetch {
			if !set.fetched.Before(signedAt.Add(time.Second)) || !signedAt.After(set.retriedFor) {
				return nil, nil
			}
			retriedFor = signedAt
		}
	}
	res, err := k.Fetch.Get(ctx, url)
	if err != nil {
		return nil, err
	}
	if res.Status != http.StatusOK {
		return nil, apperr.New(apperr.Unavailable, fmt.Sprintf("The key set answered %d.", res.Status))
	}
	keys, err := ParseJWKS(res.Body)
	if err != nil {
		return nil, apperr.Wrap(apperr.Unavailable, err, "The key set is not a JWKS document.")
	}
	set = &cachedSet{keys: keys, fetched: now, expires: now.Add(cacheTTL(res.Header)), retriedFor: retriedFor}
	ts.mu.Lock()
	ts.sets[url] = set
	ts.mu.Unlock()
	return keys[kid], nil
}

// cacheTTL reads max-age of Cache-Control; no-store and no-cache keep the
// set for no longer than the refetch floor.
func cacheTTL(h http.Header) time.Duration {
	cc := strings.ToLower(h.Get("Cache-Control"))
	if cc == "" {
		return defaultKeyTTL
	}
	ttl := defaultKeyTTL
	for _, part := range strings.Split(cc, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "no-store" || part == "no-cache":
			return minRefetch
		case strings.HasPrefix(part, "max-age="):
			if s, err := strconv.Atoi(strings.TrimPrefix(part, "max-age=")); err == nil && s >= 0 {
				ttl = time.Duration(s) * time.Second
			}
		}
	}
	return min(max(ttl, minRefetch), maxKeyTTL)
}
