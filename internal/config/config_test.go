package config

import (
	"flag"
	"testing"
)

func TestEmptyWebAddrSwitchesTheFrontendOff(t *testing.T) {
	t.Setenv("LMS_WEB_ADDR", "")
	t.Setenv("LMS_API_ADDR", "")
	c := FromEnv()
	if c.WebAddr != "" {
		t.Fatalf("LMS_WEB_ADDR= gives web address %q, want none", c.WebAddr)
	}
	if c.APIAddr != "127.0.0.1:8080" {
		t.Fatalf("LMS_API_ADDR= gives %q, want the default", c.APIAddr)
	}
}

func TestWebAddr(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unset: default", nil, nil, "127.0.0.1:3000"},
		{"set", map[string]string{"LMS_WEB_ADDR": "127.0.0.1:4000"}, nil, "127.0.0.1:4000"},
		{"empty flag", nil, []string{"-web-addr="}, ""},
		{"flag over empty variable", map[string]string{"LMS_WEB_ADDR": ""}, []string{"-web-addr=:5000"}, ":5000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			c, _, err := Load(flag.NewFlagSet("t", flag.ContinueOnError), tc.args, lookup)
			if err != nil {
				t.Fatal(err)
			}
			if c.WebAddr != tc.want {
				t.Fatalf("web address %q, want %q", c.WebAddr, tc.want)
			}
		})
	}
}

func TestFrontURL(t *testing.T) {
	for _, tc := range []struct{ template, webAddr, host, want string }{
		{"", "127.0.0.1:3000", "school.example", "http://school.example:3000"},
		{"", ":8081", "school.example", "http://school.example:8081"},
		{"", "127.0.0.1:0", "", "http://localhost:3000"},
		{"https://{host}/", "127.0.0.1:3000", "school.example", "https://school.example"},
		{"https://learn.example/{host}", "", "school.example", "https://learn.example/school.example"},
	} {
		if got := FrontURL(tc.template, tc.webAddr, tc.host); got != tc.want {
			t.Errorf("FrontURL(%q, %q, %q) = %q, want %q", tc.template, tc.webAddr, tc.host, got, tc.want)
		}
	}
}
