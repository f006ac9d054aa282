// Command lms runs the learning platform and its operator commands.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/server"
	"github.com/lms-platform/lms/internal/web"
)

const usage = `Usage: lms <command> [flags]

Commands:
  serve                      run the API (and every other part) until interrupted
  migrate                    migrate the platform database and every tenant
  tenant add --host HOST [--name N] [--admin-email E] [--admin-password P] [--demo]
  tenant list [--json]
  user add --host HOST --email E --password P --role student|tutor|admin
  demo reset --host HOST [--force] [--wipe-files] [--recapture]
  openapi                    print the OpenAPI 3.1 description

Every command reads the same configuration: flags over LMS_* environment
variables over defaults. Run 'lms <command> -h' for the flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lms:", describe(err))
		os.Exit(1)
	}
}

// describe shows validation errors with their fields.
func describe(err error) string {
	if e := apperr.As(err); e != nil && len(e.Fields) > 0 {
		var parts []string
		for field, msgs := range e.Fields {
			parts = append(parts, field+": "+strings.Join(msgs, " "))
		}
		return strings.Join(parts, "; ")
	}
	return err.Error()
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(out, usage)
		return nil
	}
	cmd := args[0]
	if (cmd == "tenant" || cmd == "user" || cmd == "demo") && len(args) > 1 {
		cmd, args = cmd+" "+args[1], args[1:]
	}
	fs := flag.NewFlagSet("lms "+cmd, flag.ContinueOnError)
	switch cmd {
	case "serve":
		return serve(ctx, fs, args[1:], out)
	case "migrate":
		return migrate(ctx, fs, args[1:], out)
	case "tenant add":
		return tenantAdd(ctx, fs, args[1:], out)
	case "tenant list":
		return tenantList(ctx, fs, args[1:], out)
	case "user add":
		return userAdd(ctx, fs, args[1:], out)
	case "demo reset":
		return demoReset(ctx, fs, args[1:], out)
	case "openapi":
		doc, err := server.OpenAPI()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, string(doc))
		return err
	}
	return fmt.Errorf("unknown command %q\n\n%s", strings.Join(strings.Fields(cmd), " "), usage)
}

func open(ctx context.Context, fs *flag.FlagSet, args []string) (*server.Server, []string, error) {
	cfg, rest, err := config.Load(fs, args, os.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	s, err := server.New(ctx, cfg, server.Options{})
	return s, rest, err
}

func serve(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	s, _, err := open(ctx, fs, args)
	if err != nil {
		return err
	}
	defer s.Close()
	rec, generated, err := s.EnsurePlatform(ctx)
	if err != nil {
		return err
	}
	// The web frontend listens on its own address and reaches the API
	// over HTTP at LMS_API_URL, as a separate deployment would.
	frontURL, err := web.Start(ctx, s.Config, s.Log)
	if err != nil {
		return err
	}
	return s.Run(ctx, func(addr string) {
		fmt.Fprintf(out, "LMS API listening on http://%s (platform tenant host %q)\n", addr, rec.Hosts[0])
		fmt.Fprintf(out, "  try: curl -H 'Host: %s' http://%s/api/config\n", rec.Hosts[0], addr)
		if frontURL != "" {
			fmt.Fprintf(out, "Web frontend: %s (each tenant at its own host name on the same port)\n", frontURL)
		}
		if generated != "" {
			fmt.Fprintf(out, "  platform admin created: %s / %s (shown once; set LMS_ADMIN_PASSWORD to choose it)\n",
				s.Config.AdminEmail, generated)
		}
	})
}

func migrate(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	s, _, err := open(ctx, fs, args)
	if err != nil {
		return err
	}
	defer s.Close()
	recs, err := s.Registry.List(ctx)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if err := s.Tenants.Provision(ctx, rec); err != nil {
			return fmt.Errorf("tenant %d (%s): %w", rec.ID, strings.Join(rec.Hosts, ","), err)
		}
	}
	fmt.Fprintf(out, "migrated the platform database and %d tenant(s)\n", len(recs))
	return nil
}

func tenantAdd(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	host := fs.String("host", "", "host name the tenant is served at (required)")
	name := fs.String("name", "", "display name (default: the host)")
	email := fs.String("admin-email", "", "first admin's e-mail (default: admin@HOST)")
	pass := fs.String("admin-password", "", "first admin's password (default: generated and printed)")
	demo := fs.Bool("demo", false, "mark the tenant as a demo tenant")
	s, _, err := open(ctx, fs, args)
	if err != nil {
		return err
	}
	defer s.Close()
	if *host == "" {
		return errors.New("tenant add: --host is required")
	}
	if _, _, err := s.EnsurePlatform(ctx); err != nil {
		return err
	}
	rec, generated, err := s.AddTenant(ctx, server.NewTenant{Host: *host, Name: *name, AdminEmail: *email,
		AdminPassword: *pass, Demo: *demo})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "tenant %d added for host %s\n", rec.ID, rec.Hosts[0])
	if generated != "" {
		admin := *email
		if admin == "" {
			admin = "admin@" + rec.Hosts[0]
		}
		fmt.Fprintf(out, "admin: %s / %s (shown once)\n", admin, generated)
	}
	if *demo {
		return seedDemoTenant(ctx, s, rec, out)
	}
	return nil
}

func tenantList(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	asJSON := fs.Bool("json", false, "print JSON")
	s, _, err := open(ctx, fs, args)
	if err != nil {
		return err
	}
	defer s.Close()
	recs, err := s.Registry.List(ctx)
	if err != nil {
		return err
	}
	type row struct {
		ID       int64    `json:"id"`
		Name     string   `json:"name"`
		Hosts    []string `json:"hosts"`
		Platform bool     `json:"platform"`
		Demo     bool     `json:"demo"`
		Created  string   `json:"created_at"`
		// Where the tenant's data lives, for backups (docs/deployment.md):
		// its database, and its prefix in the blob store.
		Database   string `json:"database"`
		BlobPrefix string `json:"blob_prefix"`
	}
	rows := make([]row, len(recs))
	for i, r := range recs {
		rows[i] = row{r.ID, r.Name, r.Hosts, r.IsPlatform, r.IsDemo, r.CreatedAt.Format("2006-01-02T15:04:05Z"),
			r.DatabaseName, r.BlobPrefix}
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tHOSTS\tPLATFORM\tDEMO\tCREATED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%v\t%v\t%s\n", r.ID, r.Name, strings.Join(r.Hosts, ","), r.Platform, r.Demo, r.Created)
	}
	return tw.Flush()
}

func userAdd(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	host := fs.String("host", "", "tenant host (required)")
	email := fs.String("email", "", "e-mail (required)")
	pass := fs.String("password", "", "password, at least 8 characters (required)")
	role := fs.String("role", "student", "student, tutor or admin")
	s, _, err := open(ctx, fs, args)
	if err != nil {
		return err
	}
	defer s.Close()
	if *host == "" || *email == "" || *pass == "" {
		return errors.New("user add: --host, --email and --password are required")
	}
	rec, err := s.TenantByHost(ctx, *host)
	if err != nil {
		return err
	}
	if err := s.AddUser(ctx, rec, *email, *pass, *role); err != nil {
		return err
	}
	fmt.Fprintf(out, "user %s added to %s as %s (verified, active)\n", *email, rec.Hosts[0], *role)
	return nil
}
