package config

import (
	"flag"
	"strings"
)

// Demo configures demo mode (docs/demo.md): the demo routes, the lms_demo
// settings and the scheduled reset of demo tenants.
type Demo struct {
	// Enabled is DEMO_MODE=true. Off, the demo routes answer 404, GET
	// /api/config shows no lms_demo group and no reset is scheduled.
	Enabled bool
	// FrontURL is the frontend visitors open; empty: derived per demo
	// tenant from its host and the port of WebAddr.
	FrontURL string
	// AdminURL is the admin panel shown to visitors; empty: none.
	AdminURL string
	// ResetCron is when every demo tenant is reset (five fields, UTC).
	ResetCron string
	// ContentDir holds .h5p packages the seed imports; empty: none.
	ContentDir string
	// StudentEmail, TutorEmail and AdminEmail are the seeded accounts that
	// POST /api/demo/login logs in as.
	StudentEmail string
	TutorEmail   string
	AdminEmail   string
}

// demoFlags registers the demo mode flags with the environment as
// defaults. DEMO_MODE is the interface's name for the switch; the other
// variables follow the LMS_ prefix.
func demoFlags(fs *flag.FlagSet, getenv func(string) string, d *Demo) {
	vars := []env{
		{"LMS_DEMO_FRONT_URL", "", &d.FrontURL, "demo mode: frontend URL shown to visitors (empty: http://TENANT-HOST:WEB-PORT)"},
		{"LMS_DEMO_ADMIN_URL", "", &d.AdminURL, "demo mode: admin panel URL shown to visitors"},
		{"LMS_DEMO_RESET_CRON", "0 * * * *", &d.ResetCron, "demo mode: when demo tenants are reset (cron, UTC)"},
		{"LMS_DEMO_CONTENT_DIR", "", &d.ContentDir, "demo mode: directory of .h5p packages the seed imports"},
		{"LMS_DEMO_STUDENT_EMAIL", "student@demo.local", &d.StudentEmail, "demo mode: the demo student's e-mail"},
		{"LMS_DEMO_TUTOR_EMAIL", "tutor@demo.local", &d.TutorEmail, "demo mode: the demo tutor's e-mail"},
		{"LMS_DEMO_ADMIN_EMAIL", "admin@demo.local", &d.AdminEmail, "demo mode: the demo admin's e-mail"},
	}
	for _, v := range vars {
		def := v.def
		if e := getenv(v.name); e != "" {
			def = e
		}
		fs.StringVar(v.dst, flagName(v.name), def, v.help+" ["+v.name+"]")
	}
	on := getenv("DEMO_MODE")
	fs.BoolVar(&d.Enabled, "demo-mode", on == "1" || strings.EqualFold(on, "true"),
		"demo mode: demo login, GET /api/demo and the scheduled reset of demo tenants [DEMO_MODE]")
}
