// Package lmsctl is the command-line client of the LMS API and its tool
// interface for agents (`lmsctl mcp`). Its commands and tools are made
// from one registry of operations (internal/ops); cmd/lmsctl only wires
// the process to Main.
package lmsctl

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/ops"
)

// Env is what the process gives lmsctl.
type Env struct {
	Args           []string // without the program name
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// StdoutTTY and StderrTTY say whether a person is reading them.
	StdoutTTY, StderrTTY bool
	// Sleep waits between device-login polls and rate-limit retries.
	Sleep func(ctx context.Context, d time.Duration) error
	// OpenBrowser shows a URL to the person logging in; nil: never.
	OpenBrowser func(url string) error
}

type app struct {
	Env
	ctx context.Context
	// common flags
	profile string
	json    bool
	wait    bool
}

// Main runs one lmsctl command and returns its exit code. Failures go to
// standard error as {"error": {code, message, details}}.
func Main(ctx context.Context, env Env) (code int) {
	a := &app{Env: env, ctx: ctx}
	if a.Getenv == nil {
		a.Getenv = os.Getenv
	}
	// A panic would otherwise end the process with Go's exit code 2, which
	// means "a choice is needed" here.
	defer func() {
		if v := recover(); v != nil {
			code = a.report(panicFailure(v))
		}
	}()
	err := a.run()
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	return a.report(failureOf(err))
}

// report prints a failure on standard error and returns its exit code.
func (a *app) report(f *Failure) int {
	enc := json.NewEncoder(a.Stderr)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]any{"error": f})
	return f.Exit
}

const usageText = `lmsctl: the command-line client of the LMS API.

  lmsctl login --server URL [--host HOST] [--profile NAME] [--scopes a,b] [--no-switch]   log in through the browser (device flow)
  lmsctl login --token --server URL [--host HOST] < token-file              log in with an lms_pat_ token
  lmsctl whoami                  the user and token of the current profile
  lmsctl logout [--keep-token]   revoke the profile's token and forget the profile
  lmsctl ops [--json]            every operation with its kind, stability and scope
  lmsctl OPERATION [flags]       call one operation (lmsctl OPERATION --help lists its flags)
  lmsctl create-topic TYPE ...   create a topic of a type (lmsctl create-topic --help lists the types)
  lmsctl mcp [--toolset authoring,reporting|admin|all] [--allow-write] [--allow NAMES] [--allow-destructive] [--upload-from DIRS]
                                 the tool interface for agents (MCP, stdio); --stats prints each toolset's size

Common flags: --profile NAME, --json (JSON even on a terminal), --wait (wait out rate limits and retry).
Exit codes: 0 ok, 1 failure, 2 choice needed, 3 usage, 4 auth, 5 not found, 6 conflict or invalid,
7 rate limited, 8 server unavailable.
`

func (a *app) run() error {
	if len(a.Args) == 0 {
		return usagef("no command given: `lmsctl help` lists the commands")
	}
	cmd, rest := a.Args[0], a.Args[1:]
	switch cmd {
	case "help", "-h", "--help":
		_, err := fmt.Fprint(a.Stdout, usageText)
		return err
	case "login":
		return a.login(rest)
	case "whoami":
		return a.whoami(rest)
	case "logout":
		return a.logout(rest)
	case "ops":
		return a.listOps(rest)
	case "create-topic":
		return a.createTopic(rest)
	case "mcp":
		return a.mcp(rest)
	}
	op, ok := ops.Find(cmd)
	if !ok {
		return usagef("unknown command %q: `lmsctl ops` lists the operations", cmd)
	}
	return a.runOp(op, rest)
}

// flags is a flag set with the common flags; its errors are reported by
// Main, not printed by the flag package.
func (a *app) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("lmsctl "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&a.profile, "profile", "", "profile to use (default: the current one)")
	fs.BoolVar(&a.json, "json", false, "print JSON even on a terminal")
	fs.BoolVar(&a.wait, "wait", false, "when rate limited, wait Retry-After and retry")
	return fs
}

// parse parses args; --help prints the flags to standard output.
func (a *app) parse(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(a.Stdout)
		fmt.Fprintf(a.Stdout, "Usage of %s:\n", fs.Name())
		fs.PrintDefaults()
		return err
	}
	if err != nil {
		return usagef("%s", err.Error())
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func (a *app) out() printer {
	return printer{w: a.Stdout, json: a.json || !a.StdoutTTY}
}

// caller is the Caller of the chosen profile.
func (a *app) caller() (*Caller, string, Profile, error) {
	path, err := configPath(a.Getenv)
	if err != nil {
		return nil, "", Profile{}, err
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, "", Profile{}, err
	}
	name := a.profile
	if name == "" {
		name = a.Getenv("LMSCTL_PROFILE")
	}
	name, p, err := cfg.profile(name)
	if err != nil {
		return nil, "", Profile{}, err
	}
	cl, err := newClient(p.Server, p.Host)
	if err != nil {
		return nil, "", Profile{}, usagef("profile %s: %v", name, err)
	}
	return a.callerFor(cl.WithToken(p.Token)), name, p, nil
}

func (a *app) callerFor(cl *client.Client) *Caller {
	c := &Caller{Client: cl, Wait: a.wait, Sleep: a.Sleep}
	if a.StderrTTY {
		c.Notify = func(msg string) { fmt.Fprintln(a.Stderr, msg) }
		c.Progress = progressBar(a.Stderr)
	}
	return c
}

// progressBar draws an upload's progress on one terminal line, redrawn
// when the percentage changes.
func progressBar(w io.Writer) func(sent, total int64) {
	bar := percentBar(w, "upload")
	return func(sent, total int64) {
		bar(int(sent*100/max(total, 1)), fmt.Sprintf(" of %.1f MiB", float64(total)/(1<<20)))
	}
}

func newClient(server, host string) (*client.Client, error) {
	cl, err := client.New(server, &http.Client{})
	if err != nil {
		return nil, err
	}
	if host != "" {
		cl = cl.WithHost(host)
	}
	return cl, nil
}

// flagName is the flag of a parameter or body field: page_size gives page-size.
func flagName(name string) string { return strings.ReplaceAll(name, "_", "-") }

// optValue is a flag that remembers whether it was given.
type optValue struct {
	set     bool
	value   string
	boolean bool
}

func (v *optValue) String() string   { return v.value }
func (v *optValue) IsBoolFlag() bool { return v.boolean }
func (v *optValue) Set(s string) error {
	v.set, v.value = true, s
	return nil
}

// runOp is the generic command of a registry operation: a flag per path
// and query parameter, a flag per top-level body field, and --body for a
// whole JSON body (@file, - for standard input, or the JSON itself);
// field flags win over --body.
func (a *app) runOp(op ops.Operation, args []string) error {
	fs := a.flags(op.Name)
	params := map[string]*optValue{}
	for _, p := range op.Params {
		v := &optValue{boolean: p.Type() == "boolean"}
		name := flagName(p.Name)
		if fs.Lookup(name) != nil {
			name = "param-" + name
		}
		fs.Var(v, name, strings.TrimSpace(p.In+" parameter, "+p.Type()+". "+p.Description))
		params[p.Name] = v
	}
	fields := map[string]*optValue{}
	types := map[string]string{}
	var bodyArg string
	if op.Body != nil {
		fs.StringVar(&bodyArg, "body", "", "the JSON body: @file.json, - (standard input) or the JSON text")
		for _, p := range op.BodyProperties() {
			name := flagName(p.Name)
			if fs.Lookup(name) != nil {
				name = "body-" + name
			}
			v := &optValue{boolean: p.Type == "boolean"}
			fs.Var(v, name, strings.TrimSpace("body field, "+p.Type+". "+p.Description))
			fields[p.Name], types[p.Name] = v, p.Type
		}
	}
	formFields := map[string]*optValue{}
	for _, f := range op.FormFields() {
		name := flagName(f.Name)
		if fs.Lookup(name) != nil {
			name = "form-" + name
		}
		usage := "form field. " + f.Description
		if f.File {
			usage = "form field, the path of a local file (@path works too). " + f.Description
		}
		v := &optValue{}
		fs.Var(v, name, strings.TrimSpace(usage))
		formFields[f.Name] = v
	}
	if err := a.parse(fs, args); err != nil {
		return err
	}
	in := Input{Params: map[string]string{}}
	for name, v := range params {
		if v.set {
			in.Params[name] = v.value
		}
	}
	if bodyArg != "" {
		body, err := a.readBody(bodyArg)
		if err != nil {
			return err
		}
		in.Body = body
	}
	for name, v := range fields {
		if !v.set {
			continue
		}
		val, err := fieldValue(types[name], v.value)
		if err != nil {
			return usagef("--%s: %v", flagName(name), err)
		}
		if in.Body == nil {
			in.Body = map[string]any{}
		}
		in.Body[name] = val
	}
	if err := Check(op, in); err != nil {
		return err
	}
	if op.Form != nil {
		return a.runForm(op, in, formFields)
	}
	c, _, _, err := a.caller()
	if err != nil {
		return err
	}
	res, err := c.Call(a.ctx, op, in)
	if err != nil {
		return err
	}
	return a.out().print(res.shown())
}

// runForm sends an upload: its file fields name local files, checked
// before any request.
func (a *app) runForm(op ops.Operation, in Input, given map[string]*optValue) error {
	fields, files := map[string]any{}, map[string]string{}
	for _, f := range op.FormFields() {
		v := given[f.Name]
		switch {
		case !v.set && f.Required:
			return usagef("%s: --%s is required", op.Name, flagName(f.Name))
		case !v.set:
		case f.File:
			path := strings.TrimPrefix(v.value, "@")
			if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
				return usagef("--%s: %s is not a readable file", flagName(f.Name), path)
			}
			files[f.Name] = path
		default:
			fields[f.Name] = v.value
		}
	}
	c, _, _, err := a.caller()
	if err != nil {
		return err
	}
	res, err := c.CallForm(a.ctx, op, in, fields, files)
	if err != nil {
		return err
	}
	return a.out().print(res.shown())
}

// shown is what a command prints: the data, with the meta of a page.
func (r Result) shown() any {
	if len(r.Meta) > 0 && string(r.Meta) != "null" {
		return r
	}
	return r.Data
}

func (a *app) readBody(arg string) (map[string]any, error) {
	var raw []byte
	var err error
	switch {
	case arg == "-":
		raw, err = io.ReadAll(io.LimitReader(a.Stdin, 64<<20))
	case strings.HasPrefix(arg, "@"):
		raw, err = os.ReadFile(arg[1:])
	default:
		raw = []byte(arg)
	}
	if err != nil {
		return nil, usagef("--body: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		return nil, usagef("--body must be a JSON object")
	}
	return body, nil
}

// fieldValue reads a body field flag as its schema's type.
func fieldValue(typ, s string) (any, error) {
	switch typ {
	case "string":
		return s, nil
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return n, nil
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		if typ == "" {
			return s, nil
		}
		return nil, fmt.Errorf("not JSON of type %s", typ)
	}
	return v, nil
}

// opRow is what `lmsctl ops` shows of an operation.
type opRow struct {
	Name       string   `json:"name"`
	Kind       ops.Kind `json:"kind"`
	Stability  string   `json:"stability"`
	Scope      string   `json:"scope"`
	Method     string   `json:"method"`
	Path       string   `json:"path"`
	Summary    string   `json:"summary,omitempty"`
	Idempotent bool     `json:"idempotent"`
	Output     string   `json:"output,omitempty"`
	Input      any      `json:"input,omitempty"`
}

func (a *app) listOps(args []string) error {
	fs := a.flags("ops")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	p := a.out()
	rows := make([]opRow, 0, len(ops.All()))
	for _, o := range ops.All() {
		r := opRow{Name: o.Name, Kind: o.Kind, Stability: o.Stability, Scope: o.Scope, Method: o.Method, Path: o.Path}
		if p.json {
			r.Summary, r.Idempotent, r.Output, r.Input = o.Summary, o.Idempotent, o.Output, o.InputSchema()
		}
		rows = append(rows, r)
	}
	if p.json {
		return p.print(rows)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Path < rows[j].Path })
	return printOps(a.Stdout, rows)
}

func printOps(w io.Writer, rows []opRow) error {
	const line = "%-50s %-12s %-10s %-20s %-7s %s\n"
	fmt.Fprintf(w, line, "NAME", "KIND", "STABILITY", "SCOPE", "METHOD", "PATH")
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, line, r.Name, r.Kind, r.Stability, r.Scope, r.Method, r.Path); err != nil {
			return err
		}
	}
	return nil
}
