// Package settings is the administrable configuration of a tenant: the
// registry of every key with its rule, defaults from a file and the
// environment, the values admins store per tenant, and GET /api/config.
//
// A value is a JSON value (string, number, boolean, array or null). The
// value in force is the tenant's stored value, else the operator's default
// (file, overridden by environment), else the built-in default.
package settings

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Key describes one setting.
type Key struct {
	// Name is the dotted path, e.g. "lms_auth.registration"; GET /api/config
	// nests values along it.
	Name string
	Rule Rule
	// Public keys are shown to everyone; the others only to admins.
	Public bool
	// ReadOnly keys cannot be changed through the API: their values come
	// from the operator's configuration or from the code (demo mode).
	ReadOnly bool
	// Nullable keys accept null; for the others null breaks "required".
	Nullable bool
	// Default is the built-in value. It is a JSON value (numbers are
	// float64, arrays []any) and satisfies the rule.
	Default any
}

// Validate checks v against the key's rule and returns the value to store,
// or a message naming the key and the broken rule.
func (k Key) Validate(v any) (any, string) {
	if v == nil {
		if k.Nullable {
			return nil, ""
		}
		return nil, fmt.Sprintf("The %s field is required.", k.Name)
	}
	return k.Rule.Check(k.Name, v)
}

// Describe is the rule in words: "required, string, one of: enabled, disabled".
func (k Key) Describe() string {
	if k.Nullable {
		return "nullable, " + k.Rule.Doc
	}
	return "required, " + k.Rule.Doc
}

// EnvVar is the environment variable that sets the key's default:
// LMS_SETTING_ followed by the key upper-cased with "." written "__".
func EnvVar(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

const envPrefix = "LMS_SETTING_"

// demoGroup holds the read-only keys of demo mode; GET /api/config shows
// the group only while the tenant runs in demo mode.
const demoGroup = "lms_demo"

// Status values.
const (
	Enabled  = "enabled"
	Disabled = "disabled"
)

// registry is built once and never changed; Keys and Lookup hand out copies.
var registry, byName, byEnv = buildRegistry()

func buildRegistry() ([]Key, map[string]int, map[string]int) {
	keys := keyTable()
	names := make(map[string]int, len(keys))
	envs := make(map[string]int, len(keys))
	for i, k := range keys {
		names[k.Name] = i
		envs[EnvVar(k.Name)] = i
	}
	return keys, names, envs
}

// Keys lists every setting in the order of the interface's table.
func Keys() []Key {
	out := slices.Clone(registry)
	for i := range out {
		out[i].Default = clone(out[i].Default)
	}
	return out
}

// Lookup returns the setting named name.
func Lookup(name string) (Key, bool) {
	i, ok := byName[name]
	if !ok {
		return Key{}, false
	}
	k := registry[i]
	k.Default = clone(k.Default)
	return k, true
}

// keyTable is the interface's settings table made concrete. Where the table
// names a family of keys (social login, payments, e-mail templates, SMS,
// integrations) the names below are ours.
func keyTable() []Key {
	settingStatus := oneOf(Enabled, Disabled)
	packageStatus := oneOf(Enabled, Disabled)
	platformVisibility := oneOf("public", "private")
	courseVisibility := oneOf("show_all", "show_only_public")

	keys := []Key{
		{Name: "lms_auth.registration", Rule: settingStatus, Public: true, Default: Enabled},
		{Name: "lms_auth.account_must_be_enabled_by_admin", Rule: settingStatus, Public: true, Default: Disabled},
		{Name: "lms_auth.auto_verified_email", Rule: settingStatus, Public: true, Default: Disabled},
		{Name: "lms_auth.return_url", Rule: link(), Public: true, Default: "http://localhost:3000"},
		{Name: "lms_auth.socialite_remember_me", Rule: boolean(), Public: true, Default: false},
		{Name: "lms_auth.token_expiration_minutes", Rule: integer(), Default: 5.0},
		// Scoped personal tokens (internal/tokens): live tokens per user,
		// and how long the agent audit keeps its rows.
		{Name: "lms_tokens.max_per_user", Rule: integer(1), Default: 50.0},
		{Name: "lms_tokens.audit_retention_days", Rule: integer(1), Default: 90.0},
		// Event deliveries (internal/events): how long a failing listener
		// or webhook is retried before it is a dead letter; at least the
		// three days a partner may be down over a long weekend.
		{Name: "lms_events.retry_window_hours", Rule: integer(72), Default: 72.0},
	}
	// The two social login providers (internal/social): OpenID Connect
	// providers found by discovery from their issuer, named for the two an
	// operator picks (Google needs no issuer; Microsoft Entra ID needs
	// the directory's, https://login.microsoftonline.com/<tenant id>/v2.0).
	// Beside the interface's client_id, client_secret and redirect, a
	// public switch and button label, and the issuer.
	for _, provider := range []struct {
		name, label string
		issuer      any
	}{
		{"google", "Google", "https://accounts.google.com"},
		{"microsoft", "Microsoft", nil},
	} {
		p := "lms_auth.socialite." + provider.name + "."
		keys = append(keys,
			Key{Name: p + "enabled", Rule: boolean(), Public: true, Default: false},
			Key{Name: p + "label", Rule: str(), Public: true, Default: provider.label},
			Key{Name: p + "client_id", Rule: str(), Nullable: true},
			Key{Name: p + "client_secret", Rule: str(), Nullable: true},
			Key{Name: p + "redirect", Rule: link(), Nullable: true},
			Key{Name: p + "issuer", Rule: link(), Nullable: true, Default: provider.issuer},
		)
	}
	keys = append(keys,
		Key{Name: "lms_courses.platform_visibility", Rule: platformVisibility, Public: true, Default: "public"},
		Key{Name: "lms_courses.reminder_of_deadline_count_days", Rule: integer(1), Public: true, Default: 3.0},
		Key{Name: "lms_courses.course_visibility", Rule: courseVisibility, Public: true, Default: "show_all"},
		Key{Name: "lms_course_access.auto_accept_access_request", Rule: settingStatus, Public: true, Default: Disabled},
		Key{Name: "lms_cart.min_product_price", Rule: numeric(0), Public: true, Default: 0.0},
		Key{Name: "lms_interactive.enabled", Rule: boolean(), Public: true, Default: true},
		Key{Name: "lms_interactive.allow_network", Rule: boolean(), Public: true, Default: false},
		Key{Name: "lms_gift_quiz.max_quiz_time", Rule: integer(1), Default: 60.0},
		Key{Name: "lms_video.bitrates", Rule: array(), Default: []any{}},
		Key{Name: "lms_video.enable", Rule: boolean(), Default: false},
		Key{Name: "lms_video.non_strict_value", Rule: boolean(), Default: false},
		Key{Name: "lms_questionnaires.new_answers_visible_by_default", Rule: boolean(), Public: true, Default: false},
		Key{Name: "lms_tasks.notifications.overdue_period", Rule: integer(), Default: 1.0},

		Key{Name: "invoices.date.pay_until_days", Rule: integer(), Public: true, Default: 7.0},
		Key{Name: "invoices.currency.code", Rule: str(), Public: true, Default: "USD"},
		Key{Name: "invoices.currency.fraction", Rule: str(), Public: true, Default: "ct."},
		Key{Name: "invoices.currency.symbol", Rule: str(), Public: true, Default: "$"},
		Key{Name: "invoices.seller.attributes.name", Rule: str(), Public: true, Default: ""},
		Key{Name: "invoices.seller.attributes.address", Rule: str(), Public: true, Default: ""},
		Key{Name: "invoices.seller.attributes.code", Rule: str(), Public: true, Default: ""},
		Key{Name: "invoices.seller.attributes.vat", Rule: str(), Public: true, Default: ""},
		Key{Name: "invoices.seller.attributes.phone", Rule: str(), Public: true, Nullable: true},
		Key{Name: "invoices.seller.attributes.SWIFT", Rule: str(), Public: true, Nullable: true},

		// The public image endpoint's limiter: 10000 a minute per host,
		// 1000 per address (the interface's Limits table).
		Key{Name: "images.private.rate_limiter_status", Rule: packageStatus, Default: Enabled},
		Key{Name: "images.private.rate_limit_global", Rule: numeric(), Default: 10000.0},
		Key{Name: "images.private.rate_limit_per_ip", Rule: numeric(), Default: 1000.0},

		Key{Name: "lms_payments.drivers.stripe.enabled", Rule: boolean(), Public: true, Default: false},
		Key{Name: "lms_payments.drivers.stripe.secret_key", Rule: str(), Default: ""},
		Key{Name: "lms_payments.drivers.stripe.publishable_key", Rule: str(), Public: true, Default: ""},
		Key{Name: "lms_payments.drivers.przelewy24.enabled", Rule: boolean(), Public: true, Default: false},
		Key{Name: "lms_payments.drivers.przelewy24.merchant_id", Rule: str(), Default: ""},
		Key{Name: "lms_payments.drivers.przelewy24.crc", Rule: str(), Default: ""},
		Key{Name: "lms_payments.drivers.przelewy24.api_key", Rule: str(), Default: ""},
		Key{Name: "lms_payments.default_gateway", Rule: oneOf("Free", "Stripe", "Przelewy24"), Public: true, Default: "Free"},
		Key{Name: "lms_payments.default_currency", Rule: currency(), Public: true, Default: "USD"},

		Key{Name: "lms_templates_email.use_api", Rule: boolean(), Default: false},
		Key{Name: "lms_templates_email.api_id", Rule: str(), Default: ""},
		Key{Name: "lms_templates_email.api_secret", Rule: str(), Default: ""},
		Key{Name: "lms_templates_email.default_template", Rule: str(), Default: ""},

		Key{Name: "lms_sms.default_driver", Rule: oneOf("log", "twilio"), Default: "log"},
		Key{Name: "lms_sms.drivers.twilio.sid", Rule: str(), Default: ""},
		Key{Name: "lms_sms.drivers.twilio.token", Rule: str(), Default: ""},
		Key{Name: "lms_sms.drivers.twilio.from", Rule: str(), Default: ""},
	)

	// Integrations: each has a package status, a public host and private
	// credentials; the mailing list also names the groups users join.
	integrations := []struct {
		group       string
		host        any
		credentials []string
	}{
		{"lms_jitsi", "https://meet.jit.si", []string{"app_id", "secret"}},
		{"lms_chat", nil, []string{"api_key", "api_secret"}},
		{"lms_mailerlite", nil, []string{"api_key", "groups.registered", "groups.enrolled"}},
		{"lms_youtube", nil, []string{"client_id", "client_secret", "refresh_token"}},
		{"lms_whiteboard", nil, []string{"api_key"}},
		{"lms_push", nil, []string{"server_key"}},
	}
	for _, in := range integrations {
		keys = append(keys,
			Key{Name: in.group + ".package_status", Rule: packageStatus, Default: Disabled},
			Key{Name: in.group + ".host", Rule: link(), Public: true, Nullable: true, Default: in.host},
		)
		for _, c := range in.credentials {
			keys = append(keys, Key{Name: in.group + "." + c, Rule: str(), Nullable: true})
		}
	}

	keys = append(keys,
		Key{Name: demoGroup + ".enabled", Rule: boolean(), Public: true, ReadOnly: true, Nullable: true, Default: false},
		Key{Name: demoGroup + ".front_url", Rule: str(), Public: true, ReadOnly: true, Nullable: true},
		Key{Name: demoGroup + ".admin_url", Rule: str(), Public: true, ReadOnly: true, Nullable: true},
	)
	return keys
}

// clone deep-copies a JSON value, so callers cannot change defaults or
// each other's results.
func clone(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	}
	return v
}

// normalize turns any Go value into the JSON value it encodes to
// (int → float64, []string → []any, ...), so rules see one set of types.
func normalize(v any) (any, error) {
	switch v.(type) {
	case nil, string, bool, float64:
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
