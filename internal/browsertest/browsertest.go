// Package browsertest starts headless Chromium for end-to-end tests
// (chromedp). On a machine without Chromium the tests are skipped, except
// in CI (CI=true), where .ci/run installs it and a missing browser fails.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// candidates are the executables tried in order; LMS_CHROMIUM overrides.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"}

// Path finds the Chromium executable, or "" when there is none.
func Path() string {
	if p := os.Getenv("LMS_CHROMIUM"); p != "" {
		return p
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// New starts a fresh headless browser with an empty profile and returns a
// tab context with the given timeout. The browser is closed when the test
// ends.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	exe := Path()
	if exe == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("browsertest: Chromium not found (install Debian's chromium or set LMS_CHROMIUM)")
		}
		t.Skip("browsertest: Chromium not found; install Debian's chromium to run browser tests")
	}
	// The machine's network is closed: background services of the browser
	// would only produce refused connections and slow start-up.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	tctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	// Start the browser now so a broken installation fails here, clearly.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("browsertest: start Chromium %s: %v", exe, err)
	}
	return tctx
}

// Screenshot saves a full-page PNG of the current tab into the directory
// named by LMS_TEST_ARTIFACTS (default: the test's temporary directory)
// and returns its path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	dir := os.Getenv("LMS_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("browsertest: artifacts dir: %v", err)
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 90)); err != nil {
		t.Fatalf("browsertest: screenshot %s: %v", name, err)
	}
	p := dir + "/" + name + ".png"
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatalf("browsertest: save screenshot: %v", err)
	}
	return p
}
