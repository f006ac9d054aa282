package settings

import (
	"reflect"
	"strings"
	"testing"
)

// specKeys are the keys the interface's settings table names, with their
// public flag; the families the table leaves vague are checked by prefix
// in TestKeyFamilies.
var specKeys = map[string]bool{
	"lms_auth.registration":                             true,
	"lms_auth.account_must_be_enabled_by_admin":         true,
	"lms_auth.auto_verified_email":                      true,
	"lms_auth.return_url":                               true,
	"lms_auth.socialite_remember_me":                    true,
	"lms_auth.token_expiration_minutes":                 false,
	"lms_courses.platform_visibility":                   true,
	"lms_courses.reminder_of_deadline_count_days":       true,
	"lms_courses.course_visibility":                     true,
	"lms_course_access.auto_accept_access_request":      true,
	"lms_cart.min_product_price":                        true,
	"lms_interactive.enabled":                           true,
	"lms_interactive.allow_network":                     true,
	"lms_gift_quiz.max_quiz_time":                       false,
	"lms_video.bitrates":                                false,
	"lms_video.enable":                                  false,
	"lms_video.non_strict_value":                        false,
	"lms_questionnaires.new_answers_visible_by_default": true,
	"lms_tasks.notifications.overdue_period":            false,
	"invoices.date.pay_until_days":                      true,
	"invoices.currency.code":                            true,
	"invoices.currency.fraction":                        true,
	"invoices.currency.symbol":                          true,
	"invoices.seller.attributes.name":                   true,
	"invoices.seller.attributes.address":                true,
	"invoices.seller.attributes.code":                   true,
	"invoices.seller.attributes.vat":                    true,
	"invoices.seller.attributes.phone":                  true,
	"invoices.seller.attributes.SWIFT":                  true,
	"images.private.rate_limiter_status":                false,
	"images.private.rate_limit_global":                  false,
	"images.private.rate_limit_per_ip":                  false,
	// Social login, two providers.
	"lms_auth.socialite.google.enabled":          true,
	"lms_auth.socialite.google.label":            true,
	"lms_auth.socialite.google.client_id":        false,
	"lms_auth.socialite.google.client_secret":    false,
	"lms_auth.socialite.google.redirect":         false,
	"lms_auth.socialite.google.issuer":           false,
	"lms_auth.socialite.microsoft.enabled":       true,
	"lms_auth.socialite.microsoft.label":         true,
	"lms_auth.socialite.microsoft.client_id":     false,
	"lms_auth.socialite.microsoft.client_secret": false,
	"lms_auth.socialite.microsoft.redirect":      false,
	"lms_auth.socialite.microsoft.issuer":        false,
	// Payments: enabled flags, publishable key, gateway and currency public.
	"lms_payments.drivers.stripe.enabled":         true,
	"lms_payments.drivers.stripe.secret_key":      false,
	"lms_payments.drivers.stripe.publishable_key": true,
	"lms_payments.drivers.przelewy24.enabled":     true,
	"lms_payments.drivers.przelewy24.merchant_id": false,
	"lms_payments.drivers.przelewy24.crc":         false,
	"lms_payments.drivers.przelewy24.api_key":     false,
	"lms_payments.default_gateway":                true,
	"lms_payments.default_currency":               true,
	// Templates-email and SMS: private.
	"lms_templates_email.use_api":          false,
	"lms_templates_email.api_id":           false,
	"lms_templates_email.api_secret":       false,
	"lms_templates_email.default_template": false,
	"lms_sms.default_driver":               false,
	"lms_sms.drivers.twilio.sid":           false,
	"lms_sms.drivers.twilio.token":         false,
	// Demo: public and read-only.
	"lms_demo.enabled":   true,
	"lms_demo.front_url": true,
	"lms_demo.admin_url": true,
}

func TestSpecKeysExist(t *testing.T) {
	for name, public := range specKeys {
		k, ok := Lookup(name)
		if !ok {
			t.Errorf("%s: missing", name)
			continue
		}
		if k.Public != public {
			t.Errorf("%s: public = %v, want %v", name, k.Public, public)
		}
		if k.ReadOnly != strings.HasPrefix(name, "lms_demo.") {
			t.Errorf("%s: read-only = %v", name, k.ReadOnly)
		}
	}
}

func TestKeyFamilies(t *testing.T) {
	// Integrations: videoconferencing, chat, mailing list, video-sharing
	// site, whiteboard, push notifications; package status private, host
	// public, at least one private credential.
	for _, group := range []string{"lms_jitsi", "lms_chat", "lms_mailerlite", "lms_youtube", "lms_whiteboard", "lms_push"} {
		status, ok := Lookup(group + ".package_status")
		if !ok || status.Public || status.Describe() != "required, string, one of: enabled, disabled" {
			t.Errorf("%s.package_status: %+v", group, status)
		}
		host, ok := Lookup(group + ".host")
		if !ok || !host.Public || !host.Nullable || host.Rule.Doc != "url" {
			t.Errorf("%s.host: %+v", group, host)
		}
		credentials := 0
		for _, k := range Keys() {
			if strings.HasPrefix(k.Name, group+".") && k.Name != status.Name && k.Name != host.Name {
				credentials++
				if k.Public {
					t.Errorf("%s is public", k.Name)
				}
			}
		}
		if credentials == 0 {
			t.Errorf("%s has no credentials", group)
		}
	}
	if _, ok := Lookup("lms_mailerlite.groups.registered"); !ok {
		t.Error("mailing list group keys missing")
	}
}

func TestRegistryIsConsistent(t *testing.T) {
	seen := map[string]string{}
	names := map[string]bool{}
	for _, k := range Keys() {
		if names[k.Name] {
			t.Errorf("%s: defined twice", k.Name)
		}
		names[k.Name] = true
		if other, ok := seen[EnvVar(k.Name)]; ok {
			t.Errorf("%s and %s share the variable %s", k.Name, other, EnvVar(k.Name))
		}
		seen[EnvVar(k.Name)] = k.Name
		if k.Rule.check == nil || k.Rule.Doc == "" {
			t.Errorf("%s: no rule", k.Name)
		}
		v, msg := k.Validate(k.Default)
		if msg != "" {
			t.Errorf("%s: default %#v breaks the rule: %s", k.Name, k.Default, msg)
		}
		if !reflect.DeepEqual(v, k.Default) {
			t.Errorf("%s: default %#v is not normalized (%#v)", k.Name, k.Default, v)
		}
	}
	// All nests values along the dots, so no key may be a group of another.
	for name := range names {
		for other := range names {
			if strings.HasPrefix(other, name+".") {
				t.Errorf("%s is both a key and the group of %s", name, other)
			}
		}
	}
}

func TestKeysReturnsCopies(t *testing.T) {
	keys := Keys()
	for i := range keys {
		if keys[i].Name == "lms_video.bitrates" {
			keys[i].Default = append(keys[i].Default.([]any), 1.0)
		}
		keys[i].Public = !keys[i].Public
	}
	k, _ := Lookup("lms_video.bitrates")
	if len(k.Default.([]any)) != 0 || k.Public {
		t.Fatalf("registry changed through Keys: %+v", k)
	}
}

func TestEnvVar(t *testing.T) {
	if got := EnvVar("lms_auth.registration"); got != "LMS_SETTING_LMS_AUTH__REGISTRATION" {
		t.Fatal(got)
	}
	if got := EnvVar("invoices.seller.attributes.SWIFT"); got != "LMS_SETTING_INVOICES__SELLER__ATTRIBUTES__SWIFT" {
		t.Fatal(got)
	}
}

// TestRules checks every kind of rule with values it accepts (and what it
// stores for them) and values it refuses (and the message).
func TestRules(t *testing.T) {
	type ok struct {
		in, want any
	}
	cases := []struct {
		key  string
		good []ok
		bad  map[string]any // message → value
	}{
		{"lms_auth.registration",
			[]ok{{"enabled", "enabled"}, {"disabled", "disabled"}},
			map[string]any{
				"The lms_auth.registration must be one of: enabled, disabled.": "on",
				"The lms_auth.registration field is required.":                 nil,
			}},
		{"lms_auth.auto_verified_email", []ok{{"enabled", "enabled"}},
			map[string]any{"The lms_auth.auto_verified_email must be one of: enabled, disabled.": true}},
		{"lms_courses.platform_visibility", []ok{{"public", "public"}, {"private", "private"}},
			map[string]any{"The lms_courses.platform_visibility must be one of: public, private.": "hidden"}},
		{"lms_courses.course_visibility", []ok{{"show_all", "show_all"}, {"show_only_public", "show_only_public"}},
			map[string]any{"The lms_courses.course_visibility must be one of: show_all, show_only_public.": "all"}},
		{"images.private.rate_limiter_status", []ok{{"disabled", "disabled"}},
			map[string]any{"The images.private.rate_limiter_status must be one of: enabled, disabled.": "Enabled"}},
		{"lms_payments.default_gateway", []ok{{"Free", "Free"}, {"Stripe", "Stripe"}, {"Przelewy24", "Przelewy24"}},
			map[string]any{"The lms_payments.default_gateway must be one of: Free, Stripe, Przelewy24.": "stripe"}},
		{"lms_sms.default_driver", []ok{{"twilio", "twilio"}},
			map[string]any{"The lms_sms.default_driver field is required.": nil}},
		{"lms_auth.return_url",
			[]ok{{"https://app.example.com/after", "https://app.example.com/after"}, {"myapp://callback", "myapp://callback"}},
			map[string]any{"The lms_auth.return_url must be a valid URL.": "not a url"}},
		{"lms_auth.socialite.google.redirect", []ok{{nil, nil}, {"https://x.example/cb", "https://x.example/cb"}},
			map[string]any{"The lms_auth.socialite.google.redirect must be a valid URL.": "/relative"}},
		{"lms_auth.socialite_remember_me",
			[]ok{{true, true}, {false, false}, {"true", true}, {"0", false}, {1.0, true}},
			map[string]any{"The lms_auth.socialite_remember_me must be true or false.": "yes"}},
		{"lms_auth.token_expiration_minutes", []ok{{15.0, 15.0}, {"30", 30.0}, {-1.0, -1.0}},
			map[string]any{
				"The lms_auth.token_expiration_minutes must be an integer.": 1.5,
				"The lms_auth.token_expiration_minutes field is required.":  nil,
			}},
		{"lms_courses.reminder_of_deadline_count_days", []ok{{1.0, 1.0}, {10.0, 10.0}},
			map[string]any{
				"The lms_courses.reminder_of_deadline_count_days must be at least 1.": 0.0,
				"The lms_courses.reminder_of_deadline_count_days must be an integer.": "three",
			}},
		{"lms_gift_quiz.max_quiz_time", []ok{{1.0, 1.0}},
			map[string]any{"The lms_gift_quiz.max_quiz_time must be at least 1.": -5.0}},
		{"lms_cart.min_product_price", []ok{{0.0, 0.0}, {9.99, 9.99}, {"2.5", 2.5}},
			map[string]any{
				"The lms_cart.min_product_price must be at least 0.": -0.01,
				"The lms_cart.min_product_price must be a number.":   "free",
			}},
		{"images.private.rate_limit_global", []ok{{500.0, 500.0}},
			map[string]any{"The images.private.rate_limit_global must be a number.": []any{}}},
		{"invoices.currency.code", []ok{{"EUR", "EUR"}, {"", ""}},
			map[string]any{
				"The invoices.currency.code must be a string.":  5.0,
				"The invoices.currency.code field is required.": nil,
			}},
		{"invoices.seller.attributes.phone", []ok{{nil, nil}, {"+48 123", "+48 123"}},
			map[string]any{"The invoices.seller.attributes.phone must be a string.": false}},
		{"lms_payments.default_currency", []ok{{"EUR", "EUR"}, {"PLN", "PLN"}},
			map[string]any{
				"The lms_payments.default_currency must be a currency code of three upper-case letters (ISO 4217).": "eur",
			}},
		{"lms_video.bitrates", []ok{{[]any{}, []any{}}, {[]any{360.0, 720.0}, []any{360.0, 720.0}}},
			map[string]any{"The lms_video.bitrates must be an array.": map[string]any{"a": 1.0}}},
	}
	for _, c := range cases {
		k, found := Lookup(c.key)
		if !found {
			t.Errorf("%s: missing", c.key)
			continue
		}
		for _, g := range c.good {
			got, msg := k.Validate(g.in)
			if msg != "" || !reflect.DeepEqual(got, g.want) {
				t.Errorf("%s: Validate(%#v) = %#v, %q; want %#v", c.key, g.in, got, msg, g.want)
			}
		}
		for want, v := range c.bad {
			if _, msg := k.Validate(v); msg != want {
				t.Errorf("%s: Validate(%#v) = %q, want %q", c.key, v, msg, want)
			}
		}
	}
	// More refusals that share the messages above.
	more := map[string][]any{
		"lms_auth.return_url":            {5.0, "http://", "https://exa mple.com", ""},
		"lms_payments.default_currency":  {"EURO", "EU", "E1R", 978.0},
		"lms_auth.registration":          {"", "ENABLED", []any{"enabled"}},
		"lms_cart.min_product_price":     {true, "NaN", "Inf"},
		"lms_auth.socialite_remember_me": {2.0, "", []any{}},
		"lms_gift_quiz.max_quiz_time":    {"1.5", 1e300},
	}
	for key, values := range more {
		k, _ := Lookup(key)
		for _, v := range values {
			if _, msg := k.Validate(v); msg == "" || !strings.HasPrefix(msg, "The "+key+" ") {
				t.Errorf("%s: Validate(%#v) = %q, want a refusal naming the key", key, v, msg)
			}
		}
	}
}

func TestDescribe(t *testing.T) {
	for name, want := range map[string]string{
		"lms_auth.registration":                       "required, string, one of: enabled, disabled",
		"lms_courses.reminder_of_deadline_count_days": "required, integer, minimum 1",
		"lms_cart.min_product_price":                  "required, numeric, minimum 0",
		"invoices.seller.attributes.SWIFT":            "nullable, string",
		"lms_payments.default_currency":               "required, currency (ISO 4217, three upper-case letters)",
	} {
		k, _ := Lookup(name)
		if got := k.Describe(); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
