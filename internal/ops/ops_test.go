package ops_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/lms-platform/lms/internal/ops"
	"github.com/lms-platform/lms/internal/server"
)

// TestRegistryIsCurrent fails when the committed registry differs from
// what the routes' OpenAPI document builds: run `make client` and commit.
func TestRegistryIsCurrent(t *testing.T) {
	doc, err := server.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	list, err := ops.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ops.Encode(list)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("registry.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/ops/registry.json is not what the OpenAPI document builds: run `make client` and commit the result")
	}
}

func TestRegistryEntries(t *testing.T) {
	cases := []struct {
		name, method, path, scope string
		kind                      ops.Kind
		idempotent                bool
	}{
		{"get-admin-courses", "GET", "/api/admin/courses", "courses:read", ops.Read, true},
		{"post-admin-courses", "POST", "/api/admin/courses", "courses:write", ops.Write, false},
		{"delete-admin-courses-id", "DELETE", "/api/admin/courses/{id}", "courses:write", ops.Destructive, true},
		{"put-admin-lessons-id", "PUT", "/api/admin/lessons/{id}", "courses:write", ops.Write, true},
		{"post-admin-courses-id-access-remove", "POST", "/api/admin/courses/{id}/access/remove", "courses:write", ops.Destructive, false},
		{"get-profile-me", "GET", "/api/profile/me", "any", ops.Read, true},
		{"get-courses-course-program", "GET", "/api/courses/{course}/program", "courses:read", ops.Read, true},
	}
	for _, c := range cases {
		o, ok := ops.Find(c.name)
		if !ok {
			t.Errorf("%s is not in the registry", c.name)
			continue
		}
		if o.Method != c.method || o.Path != c.path || o.Scope != c.scope || o.Kind != c.kind ||
			o.Idempotent != c.idempotent || o.Stability != ops.Stable {
			t.Errorf("%s: %+v", c.name, o)
		}
	}
	// Not offered: calls scoped tokens may not make, device approval
	// (for a person in a browser) and downloads.
	for _, name := range []string{"post-auth-login", "post-auth-device-requests-user-code-approve",
		"get-files-key", "get-admin-topics-topic-project-submissions-id-download"} {
		if _, ok := ops.Find(name); ok {
			t.Errorf("%s is in the registry", name)
		}
	}

	// Uploads take form data, its binary fields files.
	upload, _ := ops.Find("post-admin-topics-topic-id-resources")
	fields := upload.FormFields()
	if upload.Body != nil || len(fields) != 2 || fields[0].Name != "name" || fields[0].File ||
		fields[1].Name != "resource" || !fields[1].File || !fields[1].Required {
		t.Errorf("form of post-admin-topics-topic-id-resources: %+v", fields)
	}

	create, _ := ops.Find("post-admin-lessons")
	in := create.InputSchema()
	body := in["properties"].(map[string]any)["body"].(map[string]any)
	if _, ok := body["properties"].(map[string]any)["title"]; !ok || in["required"].([]string)[0] != "body" {
		t.Errorf("input schema of post-admin-lessons: %v", in)
	}
	get, _ := ops.Find("get-admin-courses-id")
	in = get.InputSchema()
	if id := in["properties"].(map[string]any)["id"].(map[string]any); id["type"] != "integer" || in["required"].([]string)[0] != "id" ||
		id["maximum"] != float64(9007199254740991) || id["minimum"] != float64(-9007199254740991) {
		t.Errorf("input schema of get-admin-courses-id: %v", in)
	}
	if get.Output != "CourseView" {
		t.Errorf("output of get-admin-courses-id: %q", get.Output)
	}
	if list, _ := ops.Find("get-admin-courses"); list.Output != "Page[CourseView]" {
		t.Errorf("output of get-admin-courses: %q", list.Output)
	}
}
