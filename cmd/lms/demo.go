package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/demo"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/server"
)

// minResetInterval is how soon after a reset `lms demo reset` without
// --force refuses to reset the tenant again: a second run is then almost
// always a mistake (a repeated command, a cron job and a hand beside it).
const minResetInterval = time.Minute

// demoReset is `lms demo reset --host HOST [--force] [--wipe-files]
// [--recapture]`. Without --force it refuses a tenant reset less than a
// minute ago and, when standard input is a terminal, asks before it
// starts.
func demoReset(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	host := fs.String("host", "", "host of the demo tenant (required)")
	force := fs.Bool("force", false, "reset without asking, even if the tenant was reset less than a minute ago")
	wipe := fs.Bool("wipe-files", false, "also delete every file of the tenant")
	recapture := fs.Bool("recapture", false, "record the tenant's name, theme, accent and students as the new baseline first")
	s, _, err := open(ctx, fs, args)
	if err != nil {
		return err
	}
	defer s.Close()
	if *host == "" {
		return errors.New("demo reset: --host is required")
	}
	rec, err := s.TenantByHost(ctx, *host)
	if err != nil {
		return err
	}
	if err := s.Demo.Check(rec); err != nil {
		return fmt.Errorf("demo reset %s: %w", rec.Hosts[0], err)
	}
	if !*force {
		if err := confirmReset(ctx, s, rec, out); err != nil {
			return err
		}
	}
	stop, err := serveLocally(s)
	if err != nil {
		return err
	}
	defer stop()
	rep, err := s.Demo.Reset(ctx, rec, demo.ResetOptions{WipeFiles: *wipe, Recapture: *recapture})
	if err != nil {
		return fmt.Errorf("demo reset %s: %w", rec.Hosts[0], err)
	}
	fmt.Fprintf(out, "demo tenant %s reset: %d H5P content(s) deleted, %d course(s) and %d account(s) seeded\n",
		rec.Hosts[0], rep.H5PDeleted, rep.Seed.Courses, rep.Seed.Accounts)
	if *wipe {
		fmt.Fprintln(out, "every file of the tenant was deleted before the seed")
	}
	if *recapture {
		fmt.Fprintf(out, "new baseline: name %q, theme %q, accent %q, %d student(s)\n", rep.Baseline.Name,
			rep.Baseline.Theme, rep.Baseline.Accent, len(rep.Baseline.Students))
	}
	if rep.AdminPassword != "" {
		fmt.Fprintf(out, "admin: %s / %s (shown once)\n", rep.AdminEmail, rep.AdminPassword)
	}
	for _, r := range rep.Seed.Refused {
		fmt.Fprintf(out, "H5P package refused: %s\n", r)
	}
	return nil
}

// confirmReset refuses a tenant reset less than a minute ago and asks for
// confirmation on a terminal.
func confirmReset(ctx context.Context, s *server.Server, rec platform.Record, out io.Writer) error {
	last, err := s.Demo.LastReset(ctx, rec.ID)
	if err != nil {
		return err
	}
	if last != nil {
		if ago := s.Clock.Now().Sub(*last); ago < minResetInterval {
			return fmt.Errorf("demo reset %s: the tenant was reset %s ago; use --force to reset it again",
				rec.Hosts[0], ago.Round(time.Second))
		}
	}
	if !interactive(os.Stdin) {
		return nil
	}
	fmt.Fprintf(out, "Reset demo tenant %s? Its database is recreated and every session ends. [y/N] ", rec.Hosts[0])
	answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return errors.New("demo reset: cancelled")
}

// interactive reports whether f is a terminal: a character device other
// than the null device (which is what "no input" usually is).
func interactive(f *os.File) bool {
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(info, null) {
		return false
	}
	return true
}

// serveLocally serves the platform on a loopback port while a command
// runs, and points the H5P service's callers at it: the seed sends H5P
// packages to the H5P service over HTTP, and a command must work whether
// or not a server is running.
func serveLocally(s *server.Server) (stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	before := s.H5P.API.BaseURL()
	s.H5P.API.SetBaseURL("http://" + ln.Addr().String())
	return func() {
		s.H5P.API.SetBaseURL(before)
		srv.Close()
	}, nil
}

// seedDemoTenant seeds a tenant just added with --demo.
func seedDemoTenant(ctx context.Context, s *server.Server, rec platform.Record, out io.Writer) error {
	stop, err := serveLocally(s)
	if err != nil {
		return err
	}
	defer stop()
	rep, err := s.Demo.Seed(ctx, rec)
	if err != nil {
		return fmt.Errorf("demo seed %s: %w", rec.Hosts[0], err)
	}
	fmt.Fprintf(out, "demo tenant seeded: %d course(s), %d account(s), %d H5P package(s)\n", rep.Courses, rep.Accounts, rep.H5P)
	for _, r := range rep.Refused {
		fmt.Fprintf(out, "H5P package refused: %s\n", r)
	}
	fmt.Fprintf(out, "demo front URL: %s\n", s.Demo.FrontURL(rec))
	for _, role := range demo.Roles {
		fmt.Fprintf(out, "demo %s: %s (POST /api/demo/login {\"role\":%q})\n", role, s.Demo.Email(role), role)
	}
	if !s.Config.Demo.Enabled {
		fmt.Fprintln(out, "demo mode is off: set DEMO_MODE=true for the demo login and the scheduled reset")
	}
	return nil
}
