package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"strings"
)

// Prefix starts every scoped token's secret, so that secret scanners and
// the server tell it from a signed access token at a glance.
const Prefix = "lms_pat_"

// A secret is Prefix, the token id, a random part and a checksum, all in
// base62. The id lets a request find its row by primary key; the random
// part carries the secret's strength (44 base62 characters hold more than
// 256 bits); the checksum (CRC-32 of everything before it) lets a mistyped
// or truncated secret be refused without a database read.
const (
	idLen       = 16
	randomLen   = 44
	checksumLen = 6
	secretLen   = len(Prefix) + idLen + randomLen + checksumLen
	base62      = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// randomBase62 draws n unbiased base62 characters from the system's
// cryptographic source.
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/2)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			panic("tokens: no randomness: " + err.Error())
		}
		for _, b := range buf {
			// 248 = 4*62: bytes above it would favour the first letters.
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

func checksum(body string) string {
	sum := crc32.ChecksumIEEE([]byte(body))
	out := make([]byte, checksumLen)
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = base62[sum%62]
		sum /= 62
	}
	return string(out)
}

// newSecret returns a fresh token id and the secret that carries it.
func newSecret() (id, secret string) {
	id = randomBase62(idLen)
	body := Prefix + id + randomBase62(randomLen)
	return id, body + checksum(body)
}

// ParseSecret returns the token id a well-formed secret carries. It reads
// nothing but the string: a wrong length, a character outside base62 or a
// checksum that does not match refuses the secret.
func ParseSecret(raw string) (string, bool) {
	if len(raw) != secretLen || !strings.HasPrefix(raw, Prefix) {
		return "", false
	}
	for i := len(Prefix); i < len(raw); i++ {
		if strings.IndexByte(base62, raw[i]) < 0 {
			return "", false
		}
	}
	body := raw[:secretLen-checksumLen]
	if checksum(body) != raw[secretLen-checksumLen:] {
		return "", false
	}
	return raw[len(Prefix) : len(Prefix)+idLen], true
}

// HashSecret is what is stored of a secret: a database leak hands out no
// working token.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
