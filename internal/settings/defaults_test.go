package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadDefaultsFile(t *testing.T) {
	if m, err := LoadDefaultsFile(""); m != nil || err != nil {
		t.Fatalf("empty path: %v, %v", m, err)
	}
	path := writeFile(t, `{
		"lms_auth.registration": "disabled",
		"lms_auth": {"token_expiration_minutes": 10, "socialite": {"google": {"client_id": "abc"}}},
		"lms_video.bitrates": [360, 720],
		"lms_cart.min_product_price": "4.5",
		"lms_demo.front_url": "https://demo.example.com",
		"invoices.seller.attributes.SWIFT": null
	}`)
	got, err := LoadDefaultsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"lms_auth.registration":               "disabled",
		"lms_auth.token_expiration_minutes":   10.0,
		"lms_auth.socialite.google.client_id": "abc",
		"lms_video.bitrates":                  []any{360.0, 720.0},
		"lms_cart.min_product_price":          4.5,
		"lms_demo.front_url":                  "https://demo.example.com",
		"invoices.seller.attributes.SWIFT":    nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}

	for body, wantErr := range map[string]string{
		`{"lms_auth.nope": 1}`:                           "lms_auth.nope: the setting does not exist",
		`{"lms_auth": {"nope": 1}}`:                      "lms_auth.nope: the setting does not exist",
		`{"lms_auth.registration": "on"}`:                "lms_auth.registration: The lms_auth.registration must be one of: enabled, disabled.",
		`{"lms_video.bitrates": {"a": 1}}`:               "lms_video.bitrates: The lms_video.bitrates must be an array.",
		`{"lms_gift_quiz.max_quiz_time": null}`:          "lms_gift_quiz.max_quiz_time: The lms_gift_quiz.max_quiz_time field is required.",
		`["lms_auth.registration"]`:                      "cannot unmarshal",
		`{"lms_auth.registration": "enabled"} {}`:        "more than one JSON value",
		`{"lms_auth.registration": "enabled"`:            "unexpected EOF",
		`{"a.b": 1, "lms_payments.default_currency": 1}`: "a.b: the setting does not exist",
	} {
		_, err := LoadDefaultsFile(writeFile(t, body))
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want %q", body, err, wantErr)
		}
	}
	if _, err := LoadDefaultsFile(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file read")
	}
}

func TestDefaultsFromEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin",
		"LMS_SETTING_LMS_AUTH__REGISTRATION=disabled",                      // not JSON: a string
		"LMS_SETTING_LMS_AUTH__TOKEN_EXPIRATION_MINUTES=30",                // JSON number
		"LMS_SETTING_LMS_INTERACTIVE__ALLOW_NETWORK=true",                  // JSON boolean
		"LMS_SETTING_LMS_VIDEO__BITRATES=[360,720]",                        // JSON array
		"LMS_SETTING_LMS_AUTH__RETURN_URL=https://app.example.com/done",    // URL
		"LMS_SETTING_LMS_SMS__DRIVERS__TWILIO__SID=12345",                  // JSON number, but the rule wants a string
		"LMS_SETTING_INVOICES__SELLER__ATTRIBUTES__SWIFT=null",             // JSON null
		"LMS_SETTING_LMS_TEMPLATES_EMAIL__API_ID=",                         // empty string
		`LMS_SETTING_INVOICES__SELLER__ATTRIBUTES__NAME="Example \"Ltd\""`, // JSON string
		"LMS_SETTING_LMS_DEMO__ADMIN_URL=https://admin.example.com",        // read-only keys are the operator's
	}
	got, err := DefaultsFromEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"lms_auth.registration":             "disabled",
		"lms_auth.token_expiration_minutes": 30.0,
		"lms_interactive.allow_network":     true,
		"lms_video.bitrates":                []any{360.0, 720.0},
		"lms_auth.return_url":               "https://app.example.com/done",
		"lms_sms.drivers.twilio.sid":        "12345",
		"invoices.seller.attributes.SWIFT":  nil,
		"lms_templates_email.api_id":        "",
		"invoices.seller.attributes.name":   `Example "Ltd"`,
		"lms_demo.admin_url":                "https://admin.example.com",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	if m, err := DefaultsFromEnv([]string{"HOME=/root"}); m != nil || err != nil {
		t.Fatalf("no settings: %v, %v", m, err)
	}

	_, err = DefaultsFromEnv([]string{
		"LMS_SETTING_LMS_AUTH__NOPE=1",
		"LMS_SETTING_LMS_GIFT_QUIZ__MAX_QUIZ_TIME=0",
		"LMS_SETTING_LMS_AUTH__REGISTRATION=true",
		"LMS_SETTING_lms_auth__registration=enabled",
	})
	if err == nil {
		t.Fatal("bad variables accepted")
	}
	for _, want := range []string{
		"LMS_SETTING_LMS_AUTH__NOPE names no setting",
		"LMS_SETTING_LMS_GIFT_QUIZ__MAX_QUIZ_TIME: The lms_gift_quiz.max_quiz_time must be at least 1.",
		"LMS_SETTING_LMS_AUTH__REGISTRATION: The lms_auth.registration must be one of: enabled, disabled.",
		"LMS_SETTING_lms_auth__registration names no setting",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestLoadDefaults(t *testing.T) {
	path := writeFile(t, `{"lms_auth.registration": "disabled", "lms_gift_quiz.max_quiz_time": 20}`)
	got, err := LoadDefaults(path, []string{"LMS_SETTING_LMS_AUTH__REGISTRATION=enabled"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"lms_auth.registration": "enabled", "lms_gift_quiz.max_quiz_time": 20.0}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("env over file: %#v", got)
	}
	if m, err := LoadDefaults("", nil); m != nil || err != nil {
		t.Fatalf("nothing: %v, %v", m, err)
	}
	if _, err := LoadDefaults(writeFile(t, `{"x": 1}`), nil); err == nil {
		t.Fatal("bad file accepted")
	}
	if _, err := LoadDefaults("", []string{"LMS_SETTING_X=1"}); err == nil {
		t.Fatal("bad variable accepted")
	}
}

func TestValidateDefaults(t *testing.T) {
	got, err := ValidateDefaults(map[string]any{"lms_gift_quiz.max_quiz_time": 90, "lms_video.bitrates": []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, map[string]any{"lms_gift_quiz.max_quiz_time": 90.0, "lms_video.bitrates": []any{1.0}}) {
		t.Fatalf("got %#v", got)
	}
	if _, err := ValidateDefaults(map[string]any{"lms_video.bitrates": make(chan int)}); err == nil {
		t.Fatal("channel accepted")
	}
}

func TestNewIgnoresUnknownDefaults(t *testing.T) {
	s := New(map[string]any{"nope": 1, "lms_auth.registration": "disabled"}, nil)
	if _, ok := s.defaults["nope"]; ok || s.defaults["lms_auth.registration"] != "disabled" {
		t.Fatalf("defaults = %v", s.defaults)
	}
}
