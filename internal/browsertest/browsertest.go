// Package browsertest starts headless Chromium for end-to-end tests
// (chromedp). On a machine without Chromium the tests are skipped, except
// in CI (CI=true), where .ci/run installs it and a missing browser fails.
//
// A browser test waits for conditions in the page (Until, chromedp's
// WaitVisible), never for a time: only the session's timeout given to New
// bounds a wait, as a guard against a hung browser, so a loaded machine
// makes a test slower but not red.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
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

// Option changes how the browser is started.
type Option = chromedp.ExecAllocatorOption

// MapHosts makes the browser resolve each host name to 127.0.0.1, so that
// tests can serve several sites (origins with their own host names) from
// local test servers.
func MapHosts(hosts ...string) Option {
	rules := make([]string, len(hosts))
	for i, h := range hosts {
		rules[i] = "MAP " + h + " 127.0.0.1"
	}
	return chromedp.Flag("host-resolver-rules", strings.Join(rules, ", "))
}

// SameProcessFrames keeps cross-site iframes in the page's process, so that
// a test can query and click inside them; it weakens nothing but the test
// browser's own isolation.
func SameProcessFrames() Option {
	return func(a *chromedp.ExecAllocator) {
		chromedp.Flag("disable-site-isolation-trials", true)(a)
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process")(a)
	}
}

// New starts a fresh headless browser with an empty profile and returns a
// tab context with the given timeout, the bound of the whole session. The
// browser is closed when the test ends.
func New(t testing.TB, timeout time.Duration, extra ...Option) context.Context {
	t.Helper()
	exe := Path()
	if exe == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("browsertest: Chromium not found (install Debian's chromium or set LMS_CHROMIUM)")
		}
		t.Skip("browsertest: Chromium not found; install Debian's chromium to run browser tests")
	}
	// The profile is removed only after the browser has exited: Chromium
	// writes into it until the end, which t.TempDir's cleanup would race.
	profile, err := os.MkdirTemp("", "lms-chromium-")
	if err != nil {
		t.Fatalf("browsertest: profile dir: %v", err)
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
		chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	tctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		chromedp.Cancel(ctx) // closes the browser and waits for it
		cancelTab()
		cancelAlloc()
		os.RemoveAll(profile)
	})
	// Start the browser now so a broken installation fails here, clearly.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("browsertest: start Chromium %s: %v", exe, err)
	}
	return tctx
}

// Screenshot saves a full-page PNG (quality 100 makes Chromium encode PNG) of the current tab into the directory
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
	// From the top, so that sticky headers sit where a reader sees them.
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.scrollTo(0, 0)`, nil), chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("browsertest: screenshot %s: %v", name, err)
	}
	p := dir + "/" + name + ".png"
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatalf("browsertest: save screenshot: %v", err)
	}
	return p
}

// Until waits until the JavaScript expression expr is truthy and stores
// its value in res. It is chromedp.Poll without Poll's own 30-second
// limit: the page decides when the wait ends, the session bounds it.
func Until(expr string, res any, opts ...chromedp.PollOption) chromedp.PollAction {
	return chromedp.Poll(expr, res, append([]chromedp.PollOption{chromedp.WithPollingTimeout(0)}, opts...)...)
}

// Show evaluates the JavaScript expression expr (a string) for a failure
// message; it works also once ctx has expired, so that a wait that ran
// out of time still shows where the page was.
func Show(ctx context.Context, expr string) string {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var out string
	if err := chromedp.Run(sctx, chromedp.Evaluate(expr, &out)); err != nil {
		return "(the page could not be read: " + err.Error() + ")"
	}
	return out
}

// agamottoLaidOut holds once H5P has laid out the image slider of
// H5P.Agamotto content: its track has a width.
const agamottoLaidOut = `(function () {
	var track = document.querySelector('.h5p-agamotto-slider-track');
	return !!track && parseFloat(track.style.width) > 0;
})()`

// SlideH5PImages shows every image of the image slider of H5P.Agamotto
// content in frame, which has n+1 images: n steps with the arrow key to
// the last and n back to the first. The content completes once it has
// counted every image as shown, which it misses for the first one when
// H5P lays the slider out late (under load); the way back shows that one
// again. It waits first for the layout: the slider is visible before it,
// but a key pressed while its track has no width leaves it at a position
// it never recovers from.
func SlideH5PImages(ctx context.Context, frame *cdp.Node, n int) error {
	var ready bool
	actions := []chromedp.Action{Until(agamottoLaidOut, &ready, chromedp.WithPollingInFrame(frame))}
	for _, key := range []string{kb.ArrowRight, kb.ArrowLeft} {
		for range n {
			actions = append(actions, chromedp.SendKeys(`.h5p-agamotto-slider-thumb`, key, chromedp.ByQuery,
				chromedp.FromNode(frame)))
		}
	}
	return chromedp.Run(ctx, actions...)
}
