package h5p_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
)

// uploadTemp posts a file to the editor's files action. Raw: the editor's
// AJAX actions are H5P's protocol (forms in, bare JSON out), which the API
// client does not describe.
func uploadTemp(env *apitest.Env, token, name string, data []byte) *apitest.Response {
	env.T.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("field", `{"name":"file","type":"image"}`)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		env.T.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	return env.Do(apitest.Request{Method: "POST", Path: "/h5p/ajax?action=files", Token: token, Body: buf.Bytes(), Type: mw.FormDataContentType()})
}

func TestEditorLibraries(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		installTrueFalse(t, env)
		admin := env.As("admin")
		// Raw throughout: the AJAX actions are H5P's protocol, not the API's.
		if res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/ajax?action=libraries"}); res.Status != 401 {
			t.Errorf("anonymous libraries: %d", res.Status)
		}
		list := env.Call(t, 200, "GET", "/h5p/ajax?action=libraries", admin.Token, nil)
		var libs []map[string]any
		json.Unmarshal(list.Body, &libs)
		var tf map[string]any
		for _, l := range libs {
			if l["runnable"] != true {
				t.Errorf("not runnable in list: %v", l)
			}
			if l["name"] == "H5P.TrueFalse" {
				tf = l
			}
		}
		if tf == nil || tf["title"] == "" {
			t.Fatalf("TrueFalse missing: %s", list.Body)
		}
		uber := tf["uberName"].(string)

		form := url.Values{"libraries[]": {uber, "H5P.Nothing 9.9"}}.Encode()
		details := env.Do(apitest.Request{Method: "POST", Path: "/h5p/ajax?action=libraries", Token: admin.Token, Body: form, Type: "application/x-www-form-urlencoded"})
		if details.Status != 200 || details.String("0.uberName") != uber || details.Get("1") != nil {
			t.Errorf("POST libraries: %d %s", details.Status, details.Body)
		}

		q := fmt.Sprintf("/h5p/ajax?action=libraries&machineName=H5P.TrueFalse&majorVersion=%v&minorVersion=%v", tf["majorVersion"], tf["minorVersion"])
		one := env.Call(t, 200, "GET", q, admin.Token, nil)
		if sem, ok := one.Get("semantics").([]any); !ok || len(sem) == 0 {
			t.Errorf("semantics: %s", one.Body)
		}
		js, _ := one.Get("javascript").([]any)
		if len(js) == 0 || !strings.HasPrefix(js[len(js)-1].(string), "/h5p/libraries/H5P.TrueFalse-") {
			t.Errorf("javascript: %v", js)
		}
		if res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/ajax?action=libraries&machineName=H5P.Nothing&majorVersion=1&minorVersion=0", Token: admin.Token}); res.Status != 404 {
			t.Errorf("unknown library: %d", res.Status)
		}

		cache := env.Call(t, 200, "GET", "/h5p/ajax?action=content-type-cache", admin.Token, nil)
		if cache.Get("outdated") != false {
			t.Errorf("cache: %s", cache.Body)
		}
		found := false
		for _, l := range cache.Get("libraries").([]any) {
			m := l.(map[string]any)
			if m["machineName"] == "H5P.TrueFalse" && m["installed"] == true && m["majorVersion"] == tf["majorVersion"] {
				found = true
			}
		}
		if !found {
			t.Errorf("TrueFalse not in cache: %s", cache.Body)
		}

		filter := env.Do(apitest.Request{Method: "POST", Path: "/h5p/ajax?action=filter", Token: admin.Token,
			Body: url.Values{"libraryParameters": {`{"a":1}`}}.Encode(), Type: "application/x-www-form-urlencoded"})
		if filter.Status != 200 || filter.Number("data.a") != 1 {
			t.Errorf("filter: %d %s", filter.Status, filter.Body)
		}
	})
}

func TestEditorTempFiles(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		png := apitest.PNG(t)
		if res := uploadTemp(env, "", "a.png", png); res.Status != 401 {
			t.Errorf("anonymous upload: %d", res.Status)
		}
		if res := uploadTemp(env, env.As("student").Token, "a.png", png); res.Status != 403 {
			t.Errorf("student upload: %d", res.Status)
		}
		admin := env.As("admin")
		if res := uploadTemp(env, admin.Token, "evil.php", []byte("<?php")); res.Status != 422 {
			t.Errorf("php upload: %d %s", res.Status, res.Body)
		}
		res := uploadTemp(env, admin.Token, "a.png", png)
		p := res.String("path")
		if res.Status != 200 || !strings.HasSuffix(p, "a.png#tmp") || res.String("mime") != "image/png" {
			t.Fatalf("upload: %d %s", res.Status, res.Body)
		}
		file := strings.TrimSuffix(p, "#tmp")
		// Raw: files, not JSON.
		if got := env.Do(apitest.Request{Method: "GET", Path: "/h5p/temp-files/" + file, Token: admin.Token}); got.Status != 200 || !bytes.Equal(got.Body, png) {
			t.Errorf("temp file for uploader: %d", got.Status)
		}
		if got := env.Do(apitest.Request{Method: "GET", Path: "/h5p/temp-files/" + file, Token: env.As("student").Token}); got.Status != 404 {
			t.Errorf("temp file for another user: %d", got.Status)
		}

		// The sweep deletes only files older than 120 minutes.
		env.Clock.Advance(100 * time.Minute)
		fresh, _ := env.Login(env.Host, admin.Email, admin.Password)
		up := uploadTemp(env, fresh, "b.png", png)
		if up.Status != 200 {
			t.Fatalf("second upload: %d %s", up.Status, up.Body)
		}
		newer := strings.TrimSuffix(up.String("path"), "#tmp")
		env.Clock.Advance(30 * time.Minute)
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		if err := env.Server.H5P.SweepTempFiles(context.Background(), tenant, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if env.BlobExists(t, h5pstore.TempPrefix+file) || env.Count(t, `SELECT COUNT(*) FROM h5p_temp_files WHERE path = $1`, file) != 0 {
			t.Errorf("old temp file kept")
		}
		if !env.BlobExists(t, h5pstore.TempPrefix+newer) || env.Count(t, `SELECT COUNT(*) FROM h5p_temp_files WHERE path = $1`, newer) != 1 {
			t.Errorf("recent temp file deleted")
		}
	})
}

func TestEditorPromoteOnSave(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		id := installTrueFalse(t, env)
		ctx, admin, adminClient := t.Context(), env.As("admin"), env.ClientAs("admin")
		c := apitest.Must(env.ClientAs("").GetH5PContentsID(ctx, strconv.FormatInt(id, 10)))(t)
		library := c.MainLibrary + " " + c.LibraryVersion
		png := apitest.PNG(t)
		// The editor's files action is the H5P editor's own AJAX call.
		tmp := uploadTemp(env, admin.Token, "pic.png", png).String("path")
		second := uploadTemp(env, admin.Token, "pic2.png", png).String("path")
		params := func(p string) map[string]any {
			return map[string]any{"question": "<p>Q</p>", "correct": "true",
				"media": map[string]any{"type": map[string]any{"params": map[string]any{"file": map[string]any{"path": p, "mime": "image/png"}}}}}
		}
		body := client.ContentBody{Library: library, Params: client.ContentParams{Params: params(tmp),
			Metadata: map[string]any{"title": "With image"}}}
		cid := apitest.Must(adminClient.PostH5PContents(ctx, body))(t).ContentID
		check := func(tmpPath string) {
			t.Helper()
			got := apitest.Must(env.ClientAs("").GetH5PContentsID(ctx, cid))(t)
			np, _ := lookup(got.Parameters, "media", "type", "params", "file", "path").(string)
			if np == "" || strings.HasSuffix(np, "#tmp") {
				t.Fatalf("path not rewritten: %+v", got.Parameters)
			}
			if !env.BlobExists(t, "h5p/content/"+cid+"/"+np) || env.BlobExists(t, h5pstore.TempPrefix+strings.TrimSuffix(tmpPath, "#tmp")) {
				t.Errorf("file not moved: %s", np)
			}
			// Raw: a file, not JSON.
			if file := env.Do(apitest.Request{Method: "GET", Path: "/h5p/content/" + cid + "/" + np}); file.Status != 200 || !bytes.Equal(file.Body, png) {
				t.Errorf("content file: %d", file.Status)
			}
		}
		check(tmp)
		body.Params = client.ContentParams{Params: params(second)}
		apitest.Must(adminClient.PatchH5PContentsID(ctx, cid, body))(t)
		check(second)
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_temp_files`); n != 0 {
			t.Errorf("temp rows left: %d", n)
		}
		body.Params = client.ContentParams{Params: params("gone.png#tmp")}
		_, err := adminClient.PatchH5PContentsID(ctx, cid, body)
		apitest.Refused(t, err, 422)
	})
}

// lookup follows keys through nested JSON objects; nil when one is missing.
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}
