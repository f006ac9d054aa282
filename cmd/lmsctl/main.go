// Command lmsctl is the command-line client of the LMS API and, as
// `lmsctl mcp`, its tool interface for agents. See internal/lmsctl.
package main

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"runtime"

	"github.com/lms-platform/lms/internal/lmsctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := lmsctl.Main(ctx, lmsctl.Env{
		Args:        os.Args[1:],
		Stdin:       os.Stdin,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		StdoutTTY:   isTerminal(os.Stdout),
		StderrTTY:   isTerminal(os.Stderr),
		OpenBrowser: openBrowser,
	})
	stop()
	os.Exit(code)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// openBrowser opens url with the desktop's opener, when there is one.
func openBrowser(url string) error {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		return exec.Command("rundll32", "url.dll,FileProtocolHandler", url).Start()
	}
	if !isTerminal(os.Stderr) {
		return nil
	}
	return exec.Command(name, url).Start()
}
