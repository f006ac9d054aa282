package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/internal/platform"
)

func signedFixture(tb testing.TB) (*platform.Tenant, string) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	t := &platform.Tenant{Record: platform.Record{ID: 7}, Keys: platform.KeyPair{ID: "k1", Private: key, Public: &key.PublicKey}}
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, Claims{Tenant: 7, RegisteredClaims: jwt.RegisteredClaims{
		Subject: "1", ID: "jti", IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}})
	tok.Header["kid"] = "k1"
	raw, err := tok.SignedString(key)
	if err != nil {
		tb.Fatal(err)
	}
	return t, raw
}

// BenchmarkVerifySignature is the cost a token pays on its first use (the
// verified-token cache spares it afterwards): JWT decoding and RS256.
func BenchmarkVerifySignature(b *testing.B) {
	t, raw := signedFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := verify(t, raw); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseChecksTimesOnCachedTokens(t *testing.T) {
	tn, raw := signedFixture(t)
	now := time.Now()
	if _, err := Parse(tn, now, raw, 0); err != nil {
		t.Fatal(err)
	}
	// The second parse is served from the cache and must still expire.
	if _, err := Parse(tn, now.Add(2*time.Hour), raw, 0); err == nil {
		t.Fatal("a cached token must still expire")
	}
	if _, err := Parse(tn, now.Add(-time.Minute), raw, 0); err == nil {
		t.Fatal("a cached token must not be valid before nbf")
	}
	if _, err := Parse(tn, now.Add(-time.Minute), raw, 2*time.Minute); err != nil {
		t.Fatalf("leeway must apply: %v", err)
	}
	// Another tenant's key never verifies the token, cached or not.
	other, _ := signedFixture(t)
	other.ID = 7
	if _, err := Parse(other, now, raw, 0); err == nil {
		t.Fatal("a token must not verify with another tenant's key")
	}
}

func TestTokenCacheIsBounded(t *testing.T) {
	c := newTokenCache(3)
	for _, k := range []string{"a", "b", "c", "d"} {
		c.put(k, &Claims{})
	}
	if len(c.seen) > 3 {
		t.Fatalf("cache holds %d entries, bound 3", len(c.seen))
	}
	if _, ok := c.get("d"); !ok {
		t.Fatal("the newest entry must be kept")
	}
}

func TestPasswords(t *testing.T) {
	p := NewPasswords("test")
	hash, err := p.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Verify(hash, "correct horse") || p.Verify(hash, "wrong horse") {
		t.Fatal("verify must accept the password and refuse others")
	}
	// Hashes keep their own parameters: a hash made at another cost verifies.
	if !NewPasswords("default").Verify(hash, "correct horse") {
		t.Fatal("a hash must verify whatever cost the verifier uses")
	}
	for _, bad := range []string{"", "plain", "$argon2id$v=19$m=x$y$z", "$bcrypt$..."} {
		if p.Verify(bad, "correct horse") {
			t.Fatalf("malformed hash %q verified", bad)
		}
	}
	p.VerifyNothing("anything") // must not panic, and costs one hash
}
