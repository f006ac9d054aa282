package tokens

import (
	"math"
	"testing"
)

func TestSecretFormat(t *testing.T) {
	id, secret := newSecret()
	got, ok := ParseSecret(secret)
	if !ok || got != id {
		t.Fatalf("ParseSecret(%q) = %q, %v; want %q", secret, got, ok, id)
	}
	if bits := float64(randomLen) * math.Log2(62); bits < 256 {
		t.Fatalf("the random part carries %.1f bits", bits)
	}
	_, other := newSecret()
	if other == secret {
		t.Fatal("two secrets are equal")
	}
	// Every single-character change and every truncation is refused.
	for i := len(Prefix); i < len(secret); i++ {
		b := []byte(secret)
		if b[i] == 'a' {
			b[i] = 'b'
		} else {
			b[i] = 'a'
		}
		if _, ok := ParseSecret(string(b)); ok {
			t.Errorf("change at %d accepted", i)
		}
		if _, ok := ParseSecret(secret[:i]); ok {
			t.Errorf("truncation to %d accepted", i)
		}
	}
	for _, bad := range []string{"", Prefix, "lms_pax_" + secret[len(Prefix):], secret + "x", secret[:len(secret)-1] + "!"} {
		if _, ok := ParseSecret(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestScopeSets(t *testing.T) {
	if _, err := Check([]string{"courses:read", "nope"}); err == nil {
		t.Error("unknown scope accepted")
	}
	got, err := Check([]string{"courses:write", "courses:read", "courses:write"})
	if err != nil || len(got) != 2 || got[0] != "courses:read" {
		t.Errorf("Check = %v, %v", got, err)
	}
	if !Within([]string{"courses:read"}, []string{"courses:write"}) {
		t.Error("courses:write does not include courses:read")
	}
	if Within([]string{"courses:write"}, []string{"courses:read"}) || Within([]string{"users:read"}, []string{"courses:write"}) {
		t.Error("a wider set is within a narrower one")
	}
	if Has([]string{"tokens:write"}, "tokens:manage") {
		t.Error("tokens:write includes tokens:manage")
	}
}
