package lmsctl

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/ops"
)

// tokenPrefix starts every scoped personal token.
const tokenPrefix = "lms_pat_"

// Device-flow answers of POST /api/auth/device/token (RFC 8628 names).
const (
	devicePending  = "authorization_pending"
	deviceSlowDown = "slow_down"
	deviceDenied   = "access_denied"
	deviceExpired  = "expired_token"
	slowDownStep   = 5 * time.Second
)

// login stores a token for a server in a profile: one read from standard
// input (--token), so it never sits in the process arguments or the shell
// history, or one the user approves in a browser (device flow).
func (a *app) login(args []string) error {
	fs := a.flags("login")
	server := fs.String("server", "", "API address, http(s)://host[:port] (default: the profile's)")
	host := fs.String("host", "", "tenant host to send as the Host header, when the address does not name it")
	withToken := fs.Bool("token", false, "read an lms_pat_ token from standard input instead of logging in through the browser")
	scopes := fs.String("scopes", "", "scopes to ask for, separated by commas (default: every scope the operations use)")
	name := fs.String("name", "", "name of the token the approver sees (default: lmsctl on <this machine>)")
	noBrowser := fs.Bool("no-browser", false, "do not open a browser; only print the address")
	noSwitch := fs.Bool("no-switch", false, "keep the current profile; the new one is used with --profile")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	path, err := configPath(a.Getenv)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	profile := a.profile
	if old, ok := cfg.Profiles[profile]; ok && *server == "" {
		*server, *host = old.Server, orElse(*host, old.Host)
	}
	if *server == "" {
		return usagef("login: --server is required")
	}
	cl, err := newClient(*server, *host)
	if err != nil {
		return usagef("login: %v", err)
	}
	if profile == "" {
		profile = *host
		if profile == "" {
			u, _ := url.Parse(*server)
			profile = u.Host
		}
	}
	var token string
	if *withToken {
		token, err = readToken(a.Stdin)
	} else {
		token, err = a.deviceLogin(cl, *name, *scopes, *noBrowser)
	}
	if err != nil {
		return err
	}
	caller := a.callerFor(cl.WithToken(token))
	current, err := caller.Call(a.ctx, mustOp("get-auth-tokens-current"), Input{})
	if err != nil {
		return err
	}
	cfg.Profiles[profile] = Profile{Server: *server, Host: *host, Token: token}
	// Later commands run as the current profile's user: a login never
	// changes it without saying so.
	switch was := cfg.Current; {
	case was == "" || was == profile:
		cfg.Current = profile
	case *noSwitch:
		fmt.Fprintf(a.Stderr, "lmsctl: profile %s saved; the current profile stays %s (use --profile %s for the new one)\n",
			profile, was, profile)
	default:
		cfg.Current = profile
		fmt.Fprintf(a.Stderr, "lmsctl: the current profile is now %s (was %s): later commands act as this login's user; "+
			"`lmsctl login --no-switch` keeps the current one, --profile %s goes back\n", profile, was, was)
	}
	if err := cfg.save(path); err != nil {
		return err
	}
	return a.out().print(map[string]any{"profile": profile, "current": cfg.Current, "server": *server, "host": *host,
		"token": current.Data})
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func readToken(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", usagef("login --token: reading standard input: %v", err)
	}
	token := strings.TrimSpace(line)
	if !strings.HasPrefix(token, tokenPrefix) || len(token) == len(tokenPrefix) {
		return "", usagef("login --token: standard input must hold a token starting with %s", tokenPrefix)
	}
	return token, nil
}

// defaultScopes are every scope the registry's operations need but the
// platform API's, which administer every tenant and are asked for only by
// name (--scopes); the approver may grant fewer.
func defaultScopes() []string {
	var out []string
	for _, o := range ops.All() {
		if o.Scope != "any" && !strings.HasPrefix(o.Scope, "platform:") && !slices.Contains(out, o.Scope) {
			out = append(out, o.Scope)
		}
	}
	slices.Sort(out)
	return out
}

// deviceLogin asks for a device code, shows the user where to approve
// it, and polls at the interval the server gives until it is decided.
func (a *app) deviceLogin(cl *client.Client, name, scopes string, noBrowser bool) (string, error) {
	if name == "" {
		hn, _ := os.Hostname()
		name = "lmsctl on " + orElse(hn, "this machine")
	}
	want := defaultScopes()
	if scopes != "" {
		want = strings.Split(scopes, ",")
	}
	grant, err := cl.PostAuthDeviceCode(a.ctx, client.DeviceCodeInputBody{ClientName: name, Scopes: want})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(a.Stderr, "To log in, open %s and enter the code %s\n(or open %s)\n",
		grant.VerificationURI, grant.UserCode, grant.VerificationURIComplete)
	if !noBrowser && a.OpenBrowser != nil {
		// The page asks the user to confirm; opening it is a convenience.
		_ = a.OpenBrowser(grant.VerificationURIComplete)
	}
	interval := time.Duration(grant.Interval) * time.Second
	sleep := (&Caller{Sleep: a.Sleep}).sleep
	for {
		if err := sleep(a.ctx, interval); err != nil {
			return "", err
		}
		got, err := cl.PostAuthDeviceToken(a.ctx, client.DeviceTokenInputBody{DeviceCode: grant.DeviceCode})
		if err == nil {
			return got.Token, nil
		}
		var apiErr *client.Error
		if !errors.As(err, &apiErr) {
			return "", err
		}
		switch apiErr.Code {
		case devicePending:
		case deviceSlowDown:
			interval += slowDownStep
		case deviceDenied:
			return "", &Failure{Code: "ACCESS_DENIED", Message: "The login was denied in the browser.", Exit: ExitAuth}
		case deviceExpired:
			return "", &Failure{Code: "EXPIRED", Message: "The login code expired before it was approved: run `lmsctl login` again.", Exit: ExitAuth}
		default:
			if apiErr.RateLimited() {
				interval = max(interval, apiErr.RetryAfter)
				continue
			}
			return "", err
		}
	}
}

func mustOp(name string) ops.Operation {
	o, ok := ops.Find(name)
	if !ok {
		panic("lmsctl: the registry lacks " + name)
	}
	return o
}

// whoami shows who the current profile acts as, and with which token
// (never its secret).
func (a *app) whoami(args []string) error {
	fs := a.flags("whoami")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	c, name, p, err := a.caller()
	if err != nil {
		return err
	}
	me, err := c.Call(a.ctx, mustOp("get-profile-me"), Input{})
	if err != nil {
		return err
	}
	tok, err := c.Call(a.ctx, mustOp("get-auth-tokens-current"), Input{})
	if err != nil {
		return err
	}
	var user map[string]any
	_ = json.Unmarshal(me.Data, &user)
	shown := map[string]any{}
	for _, k := range []string{"id", "name", "email", "roles"} {
		shown[k] = user[k]
	}
	return a.out().print(map[string]any{"profile": name, "server": p.Server, "host": p.Host, "user": shown, "token": tok.Data})
}

// logout revokes the profile's token and forgets the profile. A token
// without the tokens:write scope cannot revoke itself: the profile is
// forgotten all the same, and the answer says the token still works
// until it expires or its owner revokes it.
func (a *app) logout(args []string) error {
	fs := a.flags("logout")
	keep := fs.Bool("keep-token", false, "forget the profile but leave its token valid on the server")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	c, name, _, err := a.caller()
	if err != nil {
		return err
	}
	out := map[string]any{"profile": name, "revoked": false}
	if !*keep {
		var tok struct {
			ID string `json:"id"`
		}
		res, err := c.Call(a.ctx, mustOp("get-auth-tokens-current"), Input{})
		if err == nil {
			err = json.Unmarshal(res.Data, &tok)
		}
		if err == nil {
			_, err = c.Call(a.ctx, mustOp("delete-auth-tokens-id"), Input{Params: map[string]string{"id": tok.ID}})
		}
		var apiErr *client.Error
		switch {
		case err == nil:
			out["revoked"] = true
		case errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized:
			out["revoked"] = true // already revoked or expired
		case errors.As(err, &apiErr) && apiErr.Status == http.StatusForbidden:
			out["note"] = "the token lacks the tokens:write scope to revoke itself: revoke it in the account page (token " + tok.ID + ")"
		default:
			return err
		}
	}
	path, err := configPath(a.Getenv)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	delete(cfg.Profiles, name)
	if cfg.Current == name {
		cfg.Current = ""
	}
	if err := cfg.save(path); err != nil {
		return err
	}
	return a.out().print(out)
}
