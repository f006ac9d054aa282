package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// Passwords hashes and checks passwords with argon2id.
type Passwords struct {
	memoryKiB uint32
	time      uint32
	threads   uint8

	dummyOnce sync.Once
	dummy     string
}

// VerifyNothing costs what Verify of a real hash costs, for logins of
// unknown addresses, so response time does not tell which addresses exist.
func (p *Passwords) VerifyNothing(password string) {
	p.dummyOnce.Do(func() { p.dummy, _ = p.Hash("not a password anyone has") })
	p.Verify(p.dummy, password)
}

// NewPasswords returns the hasher for a cost name: "test" is cheap, for test
// suites; anything else uses the RFC 9106 second recommended option scaled
// to a small server (64 MiB, 1 pass would be ideal; 19 MiB, 2 passes keeps
// logins fast on two cores, as OWASP recommends).
func NewPasswords(cost string) *Passwords {
	if cost == "test" {
		return &Passwords{memoryKiB: 64, time: 1, threads: 1}
	}
	return &Passwords{memoryKiB: 19 * 1024, time: 2, threads: 1}
}

// Hash returns a PHC-format argon2id hash of password.
func (p *Passwords) Hash(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, p.time, p.memoryKiB, p.threads, 32)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.memoryKiB, p.time, p.threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Verify reports whether password matches the hash, using the parameters
// stored in the hash, so hashes made with other costs still verify.
func (p *Passwords) Verify(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var mem, t uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &threads); err != nil {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if errors.Join(err1, err2) != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
