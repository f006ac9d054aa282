package h5p_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
)

// setHub points the service's content-type refresh at url.
func setHub(env *apitest.Env, url string, timeout time.Duration) {
	set := env.Server.H5P.Store.Settings()
	set.HubURL, set.HubTimeout = url, timeout
	env.Server.H5P.Store.SetSettings(set)
}

// cacheLibrary finds machine in the libraries of a content-type cache.
func cacheLibrary(v any, machine string) map[string]any {
	list, _ := v.([]any)
	for _, x := range list {
		if m, _ := x.(map[string]any); m["machineName"] == machine {
			return m
		}
	}
	return nil
}

func TestContentTypeCacheGet(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		installTrueFalse(t, env)
		ctx := t.Context()
		for _, as := range []string{"", "student"} {
			_, err := env.ClientAs(as).GetH5PContentTypeCacheUpdate(ctx)
			apitest.Refused(t, err, map[string]int{"": 401, "student": 403}[as])
		}
		for _, as := range []string{"", "student", "tutor"} {
			_, err := env.ClientAs(as).PostH5PContentTypeCacheUpdate(ctx)
			apitest.Refused(t, err, map[string]int{"": 401, "student": 403, "tutor": 403}[as])
		}
		// The same data as the editor's AJAX action, in the envelope.
		for _, as := range []string{"tutor", "admin"} {
			token := env.As(as).Token
			// Raw: the editor's AJAX action is H5P's protocol, not the API's.
			ajax := env.Call(t, 200, "GET", "/h5p/ajax?action=content-type-cache", token, nil)
			res := apitest.Must(env.ClientAs(as).GetH5PContentTypeCacheUpdate(ctx))(t)
			if res.Outdated || !reflect.DeepEqual(res.APIVersion, map[string]int64{"major": 1, "minor": 24}) {
				t.Errorf("%s: outdated %v, apiVersion %v", as, res.Outdated, res.APIVersion)
			}
			if string(mustJSON(listOf(res.Libraries))) != string(mustJSON(ajax.Get("libraries"))) {
				t.Errorf("%s: libraries differ from the AJAX action:\n%s\n%s", as, mustJSON(res.Libraries), ajax.Body)
			}
			if tf := cacheLibrary(listOf(res.Libraries), "H5P.TrueFalse"); tf == nil || tf["installed"] != true {
				t.Errorf("%s: TrueFalse missing: %+v", as, res)
			}
		}
	})
}

// TestContentTypeCacheHubDown refreshes with a hub that cannot be reached,
// answers garbage, or does not answer in time: each gives 200 with the
// installed content types and the flags, never a 5xx or a hang.
func TestContentTypeCacheHubDown(t *testing.T) {
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`<html>not json{`))
	}))
	defer garbage.Close()
	wrongShape := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"libraries": []}`))
	}))
	defer wrongShape.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer failing.Close()
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(stop)

	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		installTrueFalse(t, env)
		admin := env.As("admin")
		for name, url := range map[string]string{
			"closed port": "http://" + closedAddr(t) + "/v1/content-types/",
			"garbage":     garbage.URL, "wrong shape": wrongShape.URL, "502": failing.URL, "slow": slow.URL,
		} {
			setHub(env, url, 300*time.Millisecond)
			start := time.Now()
			// Raw: the envelope's success and message, which the client does not return.
			res := env.Do(apitest.Request{Method: "POST", Path: "/h5p/content-type-cache/update", Token: admin.Token})
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("%s: refresh took %v", name, took)
			}
			if res.Status != 200 || res.Get("success") != true || res.Get("data.outdated") != true ||
				res.Get("data.hubReachable") != false ||
				res.String("message") != "The H5P hub could not be reached; showing the installed content types." {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
				continue
			}
			if tf := cacheLibrary(res.Get("data.libraries"), "H5P.TrueFalse"); tf == nil || tf["installed"] != true {
				t.Errorf("%s: installed content types missing: %s", name, res.Body)
			}
		}
		if env.BlobExists(t, "h5p/hub/content-types.json") {
			t.Errorf("a failed refresh stored a hub list")
		}
	})
}

// hubAnswer is a hub list: TrueFalse in a later version than the fixture's
// and a content type that is not installed.
const hubAnswer = `{"contentTypes": [
	{"id": "H5P.TrueFalse", "version": {"major": 1, "minor": 8, "patch": 3},
	 "coreApiVersionNeeded": {"major": 1, "minor": 24}, "title": "True/False Question",
	 "summary": "Create True/False questions", "icon": "https://h5p.org/tf.svg", "isRecommended": true,
	 "popularity": 12, "owner": "Joubel", "keywords": ["true", "false"]},
	{"id": "H5P.Accordion", "version": {"major": 1, "minor": 0, "patch": 27},
	 "coreApiVersionNeeded": {"major": 1, "minor": 24}, "title": "Accordion", "summary": "Text in panels"},
	{"id": "H5P.Future", "version": {"major": 1, "minor": 0, "patch": 0},
	 "coreApiVersionNeeded": {"major": 1, "minor": 99}, "title": "Needs a newer core"},
	{"id": "", "version": {"major": 1}},
	"not an object"
]}`

func TestContentTypeCacheHubRefresh(t *testing.T) {
	var calls atomic.Int32
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != http.MethodPost || r.ParseForm() != nil || r.PostForm.Get("core_api_version") != "1.24" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(hubAnswer))
	}))
	defer hub.Close()
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		installTrueFalse(t, env)
		setHub(env, hub.URL, 0)
		// Raw: the envelope's message, which the client does not return.
		res := apitest.RunOne(t, env, apitest.Scenario{Name: "refresh", As: "admin", Method: "POST",
			Path: "/h5p/content-type-cache/update", Status: 200, JSON: map[string]any{
				"success": true, "data.outdated": false, "data.hubReachable": true,
				"message": "The content type cache was updated from the H5P hub."}})
		check := func(name string, libs any, mayInstall bool) {
			t.Helper()
			tf := cacheLibrary(libs, "H5P.TrueFalse")
			if tf == nil || tf["installed"] != true || tf["isUpToDate"] != false || tf["majorVersion"] != 1.0 ||
				tf["minorVersion"] != 8.0 || tf["localMinorVersion"] != 6.0 || tf["summary"] != "Create True/False questions" ||
				tf["isRecommended"] != true {
				t.Errorf("%s: TrueFalse %v", name, tf)
			}
			acc := cacheLibrary(libs, "H5P.Accordion")
			if acc == nil || acc["installed"] != false || acc["canInstall"] != mayInstall || acc["localMajorVersion"] != nil ||
				acc["title"] != "Accordion" || acc["patchVersion"] != 27.0 {
				t.Errorf("%s: Accordion %v", name, acc)
			}
			if f := cacheLibrary(libs, "H5P.Future"); f == nil || f["canInstall"] != false {
				t.Errorf("%s: a content type needing core API 1.99 is installable: %v", name, f)
			}
			if n := len(libs.([]any)); n != 3+countRunnable(t, env)-1 {
				t.Errorf("%s: %d entries", name, n)
			}
		}
		check("refresh", res.Get("data.libraries"), true)
		// The list is kept: later reads show it without calling the hub.
		before := calls.Load()
		get := apitest.Must(env.ClientAs("tutor").GetH5PContentTypeCacheUpdate(t.Context()))(t)
		check("GET as tutor", listOf(get.Libraries), false)
		// Raw: the editor's AJAX action is H5P's protocol, not the API's.
		ajax := env.Call(t, 200, "GET", "/h5p/ajax?action=content-type-cache", env.As("admin").Token, nil)
		check("AJAX", ajax.Get("libraries"), true)
		if calls.Load() != before {
			t.Errorf("reads called the hub")
		}
		// A later failure keeps the stored list and says it is outdated.
		setHub(env, "http://"+closedAddr(t)+"/", 300*time.Millisecond)
		down := apitest.Must(env.ClientAs("admin").PostH5PContentTypeCacheUpdate(t.Context()))(t)
		if !down.Outdated {
			t.Errorf("hub down after a refresh: %+v", down)
		}
		check("hub down", listOf(down.Libraries), true)
		var stored h5pstore.HubCache
		if err := json.Unmarshal(readBlob(t, env, "h5p/hub/content-types.json"), &stored); err != nil || len(stored.ContentTypes) != 3 {
			t.Errorf("stored hub list: %d entries, %v", len(stored.ContentTypes), err)
		}
	})
}

// listOf is a typed answer's list of libraries as a raw answer holds it.
func listOf(libs []map[string]any) []any {
	out := make([]any, len(libs))
	for i, l := range libs {
		out[i] = l
	}
	return out
}

// countRunnable counts the runnable installed libraries.
func countRunnable(t *testing.T, env *apitest.Env) int {
	return env.Count(t, `SELECT COUNT(*) FROM h5p_libraries WHERE runnable = TRUE`)
}

// readBlob reads a blob of env's default tenant; nil when it is absent.
func readBlob(t *testing.T, env *apitest.Env, key string) []byte {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	rc, _, err := tenant.Blob.Get(context.Background(), key)
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return b
}

// TestHubURLConfigured checks that LMS_H5P_HUB_URL reaches the hub calls:
// a refresh against a configured hub that is down says so.
func TestHubURLConfigured(t *testing.T) {
	hub := "http://" + closedAddr(t) + "/v1/content-types/"
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.H5PHubURL = hub }})
	if got := env.Server.H5P.Store.Settings().HubURL; got != hub {
		t.Fatalf("hub URL %q, want %q", got, hub)
	}
	res := apitest.Must(env.ClientAs("admin").PostH5PContentTypeCacheUpdate(t.Context()))(t)
	if res.HubReachable == nil || *res.HubReachable {
		t.Errorf("refresh against a closed hub: %+v", res)
	}
}
