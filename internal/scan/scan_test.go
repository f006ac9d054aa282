package scan_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/scan/scantest"
)

func TestClamd(t *testing.T) {
	c, err := scan.NewClamd(scantest.Addr(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	clean := strings.Repeat("an ordinary essay, many times over. ", 10000) // several stream chunks
	if err := c.Check(ctx, strings.NewReader(clean), "file"); err != nil {
		t.Errorf("clean file refused: %v", err)
	}
	for name, body := range map[string]string{
		"the test file":        scantest.EICAR,
		"inside a larger file": clean + scantest.EICAR + clean,
	} {
		err := c.Check(ctx, strings.NewReader(body), "file")
		e := apperr.As(err)
		if e == nil || e.Kind != apperr.Invalid || len(e.Fields["file"]) != 1 ||
			!strings.Contains(e.Fields["file"][0], "malware (Eicar-Test-Signature") {
			t.Errorf("%s: %v, want a 422 naming the signature", name, err)
		}
	}
}

func TestClamdUnreachable(t *testing.T) {
	// Port 1 is closed on any machine that runs tests: scans fail closed.
	c, err := scan.NewClamd("tcp://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(context.Background(), strings.NewReader("x"), "file"); !apperr.Is(err, apperr.Unavailable) {
		t.Errorf("unreachable clamd: %v, want Unavailable", err)
	}
	for _, bad := range []string{"clamd", "tcp://nohost", "http://x:1"} {
		if _, err := scan.NewClamd(bad); err == nil {
			t.Errorf("NewClamd(%q) accepted", bad)
		}
	}
}
