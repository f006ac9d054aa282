package device

import (
	"strings"
	"testing"
)

// TestSealOpensOnlyWithItsDeviceCode: what approval stores opens with the
// device code it was sealed to, and with no other.
func TestSealOpensOnlyWithItsDeviceCode(t *testing.T) {
	code, other := newDeviceCode(), newDeviceCode()
	sealed, err := seal(sealKey(code), "lms_pat_secret")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "secret") {
		t.Fatal("the sealed form shows the secret")
	}
	if got, err := open(code, sealed); err != nil || got != "lms_pat_secret" {
		t.Fatalf("open with its code: %q %v", got, err)
	}
	if _, err := open(other, sealed); err == nil {
		t.Fatal("another device code opened the token")
	}
	if _, err := open(code, sealed[:len(sealed)-4]); err == nil {
		t.Fatal("a truncated seal opened")
	}
	if codeHash(code) == codeHash(other) || strings.Contains(codeHash(code), code) {
		t.Fatal("code hashes")
	}
}
