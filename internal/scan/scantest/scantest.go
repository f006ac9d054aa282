// Package scantest gives tests a real ClamAV daemon that knows the EICAR
// test file: the one named by LMS_TEST_CLAMAV_ADDR (CI starts it with
// .ci/start-clamd), or one started for the test with that script when clamd
// is installed.
package scantest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/lms-platform/lms/internal/fixtures"
)

// EnvAddr names the variable holding the test clamd's address.
const EnvAddr = "LMS_TEST_CLAMAV_ADDR"

// EICAR is the standard antivirus test file: harmless, and found by every
// scanner (by the test daemon's only signature).
const EICAR = `X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`

// Addr returns the address of a clamd for t. Without one, and without
// clamd installed, the test is skipped, or fails under CI=true.
func Addr(t testing.TB) string {
	t.Helper()
	if addr := os.Getenv(EnvAddr); addr != "" {
		return addr
	}
	if _, err := exec.LookPath("clamd"); err != nil {
		if _, err := os.Stat("/usr/sbin/clamd"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true but %s is not set and clamd is not installed", EnvAddr)
			}
			t.Skipf("%s is not set and clamd is not installed (apt-get install clamav-daemon): not testing malware scans", EnvAddr)
		}
	}
	script := filepath.Join(fixtures.RepoRoot(), ".ci", "start-clamd")
	pidfile := filepath.Join(t.TempDir(), "clamd.pid")
	out, err := exec.Command(script, pidfile).Output()
	if err != nil {
		t.Fatalf("start clamd: %v", err)
	}
	raw, _ := os.ReadFile(pidfile)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil {
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGTERM) })
	}
	// The script prints: export LMS_TEST_CLAMAV_ADDR='tcp://127.0.0.1:PORT'
	_, addr, ok := strings.Cut(strings.TrimSpace(string(out)), "=")
	if !ok {
		t.Fatalf("start clamd printed %q", out)
	}
	return strings.Trim(addr, "'")
}
