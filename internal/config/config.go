// Package config reads the process configuration: flags over environment
// variables over defaults. It is read once in main and passed down.
package config

import (
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is the whole process configuration.
type Config struct {
	APIAddr string
	// APIURL is where the other parts (the H5P service) reach the API.
	APIURL  string
	WebAddr string // empty: no web frontend
	// ContentAddr is where the web frontend's content origin listens: the
	// second listener that serves untrusted package content (SCORM,
	// cmi5, interactive apps, LiaScript, uploaded HTML) away from the
	// origin that holds the session. Empty: no content listener.
	ContentAddr string
	// ContentOrigin is the content origin's public URL, {host} standing
	// for a tenant's host, e.g. https://content.{host} (empty:
	// http://TENANT-HOST:CONTENT-PORT).
	ContentOrigin string
	// WebURL is the frontend's public URL, {host} standing for a tenant's
	// host (empty: http://TENANT-HOST:WEB-PORT); see FrontURL.
	WebURL       string
	DataDir      string
	DatabaseURL  string // empty: SQLite files under DataDir
	BlobURL      string // empty: files under DataDir
	RedisURL     string // empty: in-process limiter, cache and locks
	MasterKey    string // empty: generated into DataDir
	PlatformHost string
	AdminEmail   string
	AdminPass    string
	TenantIdle   time.Duration // 0: never evict
	// TenantWarm is how many of the most recently used tenants keep their
	// idle database connections (0: platform.DefaultWarm).
	TenantWarm   int
	SMTPURL      string // empty: mail is only recorded in the mail log
	SettingsFile string // JSON object of setting defaults
	// NotifyExclude lists event names never stored as notifications.
	NotifyExclude []string
	InternalKey   string // X-Internal-Token shared by the parts
	TrustProxy    bool   // honour X-Forwarded-Host / X-Forwarded-For
	// FetchAllowPrivate lets outbound fetches (oEmbed) reach private and
	// loopback addresses, for deployments whose providers live there.
	FetchAllowPrivate bool
	LogLevel          string
	// PasswordCost selects argon2id parameters: "default" or "test" (cheap).
	PasswordCost string
	// Demo configures demo mode (DEMO_MODE, LMS_DEMO_*).
	Demo Demo
	// H5PCoreDir holds the H5P core player files (h5p-standalone's dist),
	// served under /h5p/core/.
	H5PCoreDir string
	// ScormPlayerDir holds the SCORM runtime (scorm-again's dist), served
	// to the SCORM player page.
	ScormPlayerDir string
	// LiaScriptDir holds LiaScript's runtime (@liascript/editor's dist),
	// served to the LiaScript player page.
	LiaScriptDir string
	// HLSPlayer is hls.js's browser build the web frontend serves to
	// browsers without native HLS (installed by make build).
	HLSPlayer string
	// Editor is the Markdown editor's browser build (its dist folder) the
	// authoring pages load.
	Editor string
	// H5PEditorDir holds the H5P editor client, served under /h5p/editor/;
	// empty: the editor page reports that the editor is not installed.
	H5PEditorDir string
	// H5PEmbedOrigins lists the origins allowed to frame the H5P embed
	// pages and talk to them ("*": any).
	H5PEmbedOrigins []string
	// H5PHubURL is the H5P hub's content-type endpoint (empty: api.h5p.org).
	H5PHubURL string
	// PDFURL is the PDF service the API calls with the internal token
	// (empty: the one in this process, without a socket); PDFFonts are its
	// fonts (pdf.LoadFonts: empty for the embedded ones, a directory to
	// look them up in, or the Latin and CJK files separated by a colon).
	PDFURL   string
	PDFFonts string
	// ClamAVAddr is the clamd every upload is scanned through
	// (tcp://host:port or unix:///path; empty: no scanning).
	ClamAVAddr string

	// JobsPoll is how often the scheduler looks for due jobs.
	JobsPoll time.Duration
	// EventsPoll is how often a tenant's dispatcher looks for events
	// without being woken: events of other replicas, and retries.
	EventsPoll time.Duration
	// EventsLease is how long a dispatcher holds an event delivery it
	// runs; a replica that dies leaves its deliveries to the others after
	// it.
	EventsLease time.Duration
	// JobSchedules replace the schedules of named jobs:
	// "name=cron;name=cron" (LMS_JOB_SCHEDULES).
	JobSchedules string

	// WebCacheFresh is how long the web frontend serves public API data
	// without asking again (minimum 5 s; served stale up to 30 minutes).
	WebCacheFresh time.Duration
}

// env is one variable with its default.
type env struct {
	name string
	def  string
	dst  *string
	help string
}

// offWhenEmpty lists the variables whose empty value, when set, switches
// their part off instead of taking the default.
var offWhenEmpty = map[string]bool{"LMS_WEB_ADDR": true, "LMS_CONTENT_ADDR": true}

// Load parses args (without the program and command names) with the
// environment (os.LookupEnv) as defaults. It returns the flag set's
// remaining arguments.
func Load(fs *flag.FlagSet, args []string, lookupEnv func(string) (string, bool)) (*Config, []string, error) {
	getenv := func(name string) string {
		v, _ := lookupEnv(name)
		return v
	}
	c := &Config{}
	var webFresh string
	var idle, warm, exclude, embedOrigins, jobsPoll, eventsPoll, eventsLease string
	vars := []env{
		{"LMS_API_ADDR", "127.0.0.1:8080", &c.APIAddr, "API listen address"},
		{"LMS_API_URL", "", &c.APIURL, "base URL the H5P service calls the API at (empty: http:// + the API address)"},
		{"LMS_WEB_ADDR", "127.0.0.1:3000", &c.WebAddr, "web frontend listen address (empty: no frontend)"},
		{"LMS_CONTENT_ADDR", "127.0.0.1:3001", &c.ContentAddr, "listen address of the frontend's content origin, which serves package content without a session (empty: none, packages are not played)"},
		{"LMS_CONTENT_ORIGIN", "", &c.ContentOrigin, "public origin of the content listener, {host} standing for the tenant's host, e.g. https://content.{host} (empty: http://TENANT-HOST:CONTENT-PORT)"},
		{"LMS_WEB_URL", "", &c.WebURL, "public URL of the web frontend, {host} standing for the tenant's host, e.g. https://{host} (empty: http://TENANT-HOST:WEB-PORT)"},
		{"LMS_WEB_CACHE_FRESH", "45s", &webFresh, "how long the frontend keeps public API data fresh (minimum 5s)"},
		{"LMS_DATA_DIR", "./var", &c.DataDir, "data directory (SQLite files, local blobs, master key)"},
		{"LMS_DATABASE_URL", "", &c.DatabaseURL, "postgres://... (empty: SQLite under the data dir)"},
		{"LMS_BLOB_URL", "", &c.BlobURL, "s3://BUCKET?endpoint=...&region=... (empty: the data dir)"},
		{"LMS_REDIS_URL", "", &c.RedisURL, "redis://... for shared limiter, cache and locks"},
		{"LMS_MASTER_KEY", "", &c.MasterKey, "base64 key sealing tenants' private keys (empty: generated in the data dir)"},
		{"LMS_PLATFORM_HOST", "localhost", &c.PlatformHost, "host of the platform tenant"},
		{"LMS_ADMIN_EMAIL", "admin@localhost", &c.AdminEmail, "first admin of the platform tenant"},
		{"LMS_ADMIN_PASSWORD", "", &c.AdminPass, "its password (empty: generated and printed once)"},
		{"LMS_TENANT_IDLE", "30m", &idle, "close a tenant's handles after this idle time (0: never)"},
		{"LMS_TENANT_WARM", "100", &warm, "how many of the most recently used tenants keep their idle database connections"},
		{"LMS_SMTP_URL", "", &c.SMTPURL, "smtp://user:pass@host:port?from=... (empty: mail log only)"},
		{"LMS_SETTINGS_FILE", "", &c.SettingsFile, "JSON file of setting defaults"},
		{"LMS_INTERNAL_TOKEN", "", &c.InternalKey, "token the parts use to call each other (empty: derived from the master key)"},
		{"LMS_NOTIFICATIONS_EXCLUDE", "", &exclude, "comma-separated event names not stored as notifications"},
		{"LMS_LOG_LEVEL", "info", &c.LogLevel, "debug, info, warn or error"},
		{"LMS_PASSWORD_COST", "default", &c.PasswordCost, "argon2id parameters: default or test"},
		{"LMS_H5P_CORE_DIR", "node_modules/h5p-standalone/dist", &c.H5PCoreDir, "H5P core player files (installed by make build)"},
		{"LMS_SCORM_PLAYER_DIR", "node_modules/scorm-again/dist", &c.ScormPlayerDir, "SCORM runtime files (scorm-again, installed by make build)"},
		{"LMS_LIASCRIPT_DIR", "node_modules/@liascript/editor/dist", &c.LiaScriptDir, "LiaScript runtime files (@liascript/editor, installed by make build)"},
		{"LMS_EDITOR", "node_modules/tiny-markdown-editor/dist", &c.Editor, "Markdown editor (tiny-markdown-editor's dist folder) of the authoring pages (installed by make build)"},
		{"LMS_HLS_PLAYER", "node_modules/hls.js/dist/hls.min.js", &c.HLSPlayer, "hls.js browser build the frontend plays HLS videos with (installed by make build)"},
		{"LMS_H5P_EDITOR_DIR", "", &c.H5PEditorDir, "H5P editor client files (empty: no editor)"},
		{"LMS_H5P_EMBED_ORIGINS", "", &embedOrigins, "comma-separated origins that may embed H5P pages (* for any)"},
		{"LMS_JOBS_POLL", "1m", &jobsPoll, "how often the scheduler looks for due jobs"},
		{"LMS_EVENTS_POLL", "5s", &eventsPoll, "how often events committed by other replicas, and retries, are looked for"},
		{"LMS_EVENTS_LEASE", "5m", &eventsLease, "how long a replica holds an event delivery it runs (a dead replica's deliveries run again after it)"},
		{"LMS_JOB_SCHEDULES", "", &c.JobSchedules, "replace job schedules: name=cron;name=cron (cron in UTC, or @every 10m)"},
		{"LMS_CLAMAV_ADDR", "", &c.ClamAVAddr, "clamd address uploads are scanned through: tcp://host:port or unix:///path (empty: no scan)"},
		{"LMS_H5P_HUB_URL", "", &c.H5PHubURL, "H5P hub content-type endpoint (empty: https://api.h5p.org/v1/content-types/)"},
		{"LMS_PDF_URL", "", &c.PDFURL, "base URL of the PDF service the API calls with the internal token (empty: the one in this process)"},
		{"LMS_PDF_FONTS", "", &c.PDFFonts, "the PDF service's fonts: empty for the embedded DejaVu Sans and Droid Sans Fallback, a directory to look DejaVuSans.ttf and DroidSansFallbackFull.ttf up in (such as /usr/share/fonts), or LATIN.ttf:CJK.ttf"},
	}
	for _, v := range vars {
		def := v.def
		if e, set := lookupEnv(v.name); e != "" || set && offWhenEmpty[v.name] {
			def = e
		}
		fs.StringVar(v.dst, flagName(v.name), def, v.help+" ["+v.name+"]")
	}
	demoFlags(fs, getenv, &c.Demo)
	trust := getenv("LMS_TRUST_PROXY")
	fs.BoolVar(&c.TrustProxy, "trust-proxy", trust == "1" || strings.EqualFold(trust, "true"),
		"honour X-Forwarded-* headers from a reverse proxy [LMS_TRUST_PROXY]")
	private := getenv("LMS_FETCH_ALLOW_PRIVATE")
	fs.BoolVar(&c.FetchAllowPrivate, "fetch-allow-private", private == "1" || strings.EqualFold(private, "true"),
		"let outbound fetches (oEmbed) reach private addresses [LMS_FETCH_ALLOW_PRIVATE]")
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	d, err := parseDuration(idle)
	if err != nil {
		return nil, nil, fmt.Errorf("config: LMS_TENANT_IDLE: %w", err)
	}
	c.TenantIdle = d
	if c.TenantWarm, err = strconv.Atoi(warm); err != nil || c.TenantWarm < 1 {
		return nil, nil, fmt.Errorf("config: LMS_TENANT_WARM: %q is not a positive number", warm)
	}
	if c.WebCacheFresh, err = parseDuration(webFresh); err != nil {
		return nil, nil, fmt.Errorf("config: LMS_WEB_CACHE_FRESH: %w", err)
	}
	c.WebCacheFresh = max(c.WebCacheFresh, 5*time.Second)
	if c.JobsPoll, err = parseDuration(jobsPoll); err != nil || c.JobsPoll <= 0 {
		return nil, nil, fmt.Errorf("config: LMS_JOBS_POLL must be a positive duration, got %q", jobsPoll)
	}
	if c.EventsPoll, err = parseDuration(eventsPoll); err != nil || c.EventsPoll <= 0 {
		return nil, nil, fmt.Errorf("config: LMS_EVENTS_POLL must be a positive duration, got %q", eventsPoll)
	}
	if c.EventsLease, err = parseDuration(eventsLease); err != nil || c.EventsLease <= 0 {
		return nil, nil, fmt.Errorf("config: LMS_EVENTS_LEASE must be a positive duration, got %q", eventsLease)
	}
	c.PlatformHost = strings.ToLower(c.PlatformHost)
	if c.APIURL == "" {
		c.APIURL = "http://" + c.APIAddr
	}
	c.NotifyExclude = splitList(exclude)
	c.H5PEmbedOrigins = splitList(embedOrigins)
	return c, fs.Args(), nil
}

// FrontURL is the web frontend's URL for a tenant host: the template
// (LMS_WEB_URL) with {host} replaced, or the host at the port the frontend
// listens on (webAddr), over plain HTTP as on a developer's machine.
func FrontURL(template, webAddr, host string) string {
	if template != "" {
		return strings.TrimSuffix(strings.ReplaceAll(template, "{host}", host), "/")
	}
	port := "3000"
	if _, p, err := net.SplitHostPort(webAddr); err == nil && p != "" && p != "0" {
		port = p
	}
	if host == "" {
		host = "localhost"
	}
	return (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port)}).String()
}

// ContentURL is the content origin for a tenant host: the template
// (LMS_CONTENT_ORIGIN) with {host} replaced, or the host at the port the
// content listener listens on (contentAddr), over plain HTTP.
func ContentURL(template, contentAddr, host string) string {
	if template != "" {
		return strings.TrimSuffix(strings.ReplaceAll(template, "{host}", host), "/")
	}
	port := "3001"
	if _, p, err := net.SplitHostPort(contentAddr); err == nil && p != "" && p != "0" {
		port = p
	}
	if host == "" {
		host = "localhost"
	}
	return (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port)}).String()
}

// FromEnv is Load with no flags, for tests and tools.
func FromEnv() *Config {
	c, _, err := Load(flag.NewFlagSet("env", flag.ContinueOnError), nil, os.LookupEnv)
	if err != nil {
		panic(err)
	}
	return c
}

// flagName turns LMS_API_ADDR into api-addr. The platform admin's flags
// are prefixed so they never clash with the --admin-email and
// --admin-password of `lms tenant add`.
func flagName(envName string) string {
	name := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(envName, "LMS_")), "_", "-")
	if strings.HasPrefix(name, "admin-") {
		name = "platform-" + name
	}
	return name
}

// parseDuration accepts Go durations and a bare number of seconds.
func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}

// splitList reads a comma-separated list, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
