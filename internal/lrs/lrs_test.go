package lrs_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/lrs"
)

const version = "1.0.3"

// xapi calls the LRS as the tenant's admin (bearer token).
func xapi(env *apitest.Env, method, path string, body any, headers map[string]string) *apitest.Response {
	h := map[string]string{"X-Experience-API-Version": version}
	for k, v := range headers {
		h[k] = v
	}
	req := apitest.Request{Method: method, Path: "/api/xapi/" + path, Token: env.As("admin").Token, Body: body, Headers: h}
	if ct, ok := h["Content-Type"]; ok {
		req.Type = ct
	}
	return env.Do(req)
}

func stmt(verb, activity string) map[string]any {
	return map[string]any{"actor": map[string]any{"mbox": "mailto:ann@example.com", "name": "Ann"},
		"verb":   map[string]any{"id": verb, "display": map[string]any{"en-US": "did"}},
		"object": map[string]any{"id": activity, "definition": map[string]any{"name": map[string]any{"en-US": "Thing"}}}}
}

func TestStatementValidation(t *testing.T) {
	env := apitest.New(t, apitest.Backends(t)[0], apitest.Options{})
	ok := stmt("http://example.com/verbs/did", "http://example.com/a")
	with := func(mod func(m map[string]any)) map[string]any {
		b, _ := json.Marshal(ok)
		var m map[string]any
		json.Unmarshal(b, &m)
		mod(m)
		return m
	}
	cases := map[string]map[string]any{
		"no actor":            func(m map[string]any) map[string]any { delete(m, "actor"); return m }(with(func(map[string]any) {})),
		"agent with two IFIs": with(func(m map[string]any) { m["actor"].(map[string]any)["openid"] = "http://ann.example.com" }),
		"agent without IFI":   with(func(m map[string]any) { m["actor"] = map[string]any{"name": "Ann"} }),
		"mbox not mailto":     with(func(m map[string]any) { m["actor"] = map[string]any{"mbox": "ann@example.com"} }),
		"bad sha1":            with(func(m map[string]any) { m["actor"] = map[string]any{"mbox_sha1sum": "xyz"} }),
		"account without name": with(func(m map[string]any) {
			m["actor"] = map[string]any{"account": map[string]any{"homePage": "http://e.com"}}
		}),
		"anonymous group empty": with(func(m map[string]any) { m["actor"] = map[string]any{"objectType": "Group"} }),
		"group of groups": with(func(m map[string]any) {
			m["actor"] = map[string]any{"objectType": "Group", "member": []any{map[string]any{"objectType": "Group", "mbox": "mailto:g@e.com"}}}
		}),
		"verb without id":     with(func(m map[string]any) { m["verb"] = map[string]any{"display": map[string]any{"en-US": "x"}} }),
		"verb id not IRI":     with(func(m map[string]any) { m["verb"] = map[string]any{"id": "did"} }),
		"display not a map":   with(func(m map[string]any) { m["verb"].(map[string]any)["display"] = "did" }),
		"bad language tag":    with(func(m map[string]any) { m["verb"].(map[string]any)["display"] = map[string]any{"not a tag": "x"} }),
		"no object":           with(func(m map[string]any) { delete(m, "object") }),
		"activity id not IRI": with(func(m map[string]any) { m["object"] = map[string]any{"id": "thing"} }),
		"unknown objectType":  with(func(m map[string]any) { m["object"] = map[string]any{"objectType": "Thing", "id": "http://e.com"} }),
		"statementref bad id": with(func(m map[string]any) { m["object"] = map[string]any{"objectType": "StatementRef", "id": "x"} }),
		"nested substatement": with(func(m map[string]any) {
			m["object"] = map[string]any{"objectType": "SubStatement", "actor": ok["actor"], "verb": ok["verb"], "object": map[string]any{"objectType": "SubStatement"}}
		}),
		"substatement with id": with(func(m map[string]any) {
			m["object"] = map[string]any{"objectType": "SubStatement", "id": uuid.NewString(), "actor": ok["actor"], "verb": ok["verb"], "object": ok["object"]}
		}),
		"unknown property":       with(func(m map[string]any) { m["colour"] = "red" }),
		"id not UUID":            with(func(m map[string]any) { m["id"] = "123" }),
		"timestamp without zone": with(func(m map[string]any) { m["timestamp"] = "2024-01-01T10:00:00" }),
		"scaled above 1":         with(func(m map[string]any) { m["result"] = map[string]any{"score": map[string]any{"scaled": 1.5}} }),
		"raw above max":          with(func(m map[string]any) { m["result"] = map[string]any{"score": map[string]any{"raw": 11, "max": 10}} }),
		"min above max":          with(func(m map[string]any) { m["result"] = map[string]any{"score": map[string]any{"min": 5, "max": 1}} }),
		"success not bool":       with(func(m map[string]any) { m["result"] = map[string]any{"success": "yes"} }),
		"bad duration":           with(func(m map[string]any) { m["result"] = map[string]any{"duration": "5 seconds"} }),
		"extension key not IRI":  with(func(m map[string]any) { m["result"] = map[string]any{"extensions": map[string]any{"key": 1}} }),
		"registration not UUID":  with(func(m map[string]any) { m["context"] = map[string]any{"registration": "r1"} }),
		"revision on agent": with(func(m map[string]any) {
			m["object"] = map[string]any{"objectType": "Agent", "mbox": "mailto:b@e.com"}
			m["context"] = map[string]any{"revision": "1"}
		}),
		"team not group": with(func(m map[string]any) {
			m["context"] = map[string]any{"team": map[string]any{"mbox": "mailto:b@e.com"}}
		}),
		"context statement wrong": with(func(m map[string]any) {
			m["context"] = map[string]any{"statement": map[string]any{"id": uuid.NewString()}}
		}),
		"voiding non-ref": with(func(m map[string]any) { m["verb"] = map[string]any{"id": lrs.VerbVoided} }),
		"bad version":     with(func(m map[string]any) { m["version"] = "2.0.0" }),
		"interaction bad type": with(func(m map[string]any) {
			m["object"].(map[string]any)["definition"] = map[string]any{"interactionType": "essay"}
		}),
		"choices without type": with(func(m map[string]any) {
			m["object"].(map[string]any)["definition"] = map[string]any{"choices": []any{}}
		}),
		// What ADL's conformance suite found accepted (Data 2.4.4.1,
		// 2.4.9, 4.5, 4.6).
		"pattern without type": with(func(m map[string]any) {
			m["object"].(map[string]any)["definition"] = map[string]any{"correctResponsesPattern": []any{"true"}}
		}),
		"authority identified group": with(func(m map[string]any) {
			m["authority"] = map[string]any{"objectType": "Group", "mbox": "mailto:g@e.com",
				"member": []any{map[string]any{"mbox": "mailto:a@e.com"}, map[string]any{"mbox": "mailto:b@e.com"}}}
		}),
		"authority group of three": with(func(m map[string]any) {
			m["authority"] = map[string]any{"objectType": "Group", "member": []any{map[string]any{"mbox": "mailto:a@e.com"},
				map[string]any{"mbox": "mailto:b@e.com"}, map[string]any{"mbox": "mailto:c@e.com"}}}
		}),
		"timestamp negative zero": with(func(m map[string]any) { m["timestamp"] = "2024-01-01T10:00:00-00:00" }),
		"weeks with days":         with(func(m map[string]any) { m["result"] = map[string]any{"duration": "P4W1D"} }),
		"attachment without sha2": with(func(m map[string]any) {
			m["attachments"] = []any{map[string]any{"usageType": "http://e.com/u", "display": map[string]any{"en": "a"}, "contentType": "text/plain", "length": 1}}
		}),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			if res := xapi(env, "POST", "statements", body, nil); res.Status != 400 {
				t.Fatalf("want 400, got %d %s", res.Status, res.Body)
			}
		})
	}
	if res := xapi(env, "POST", "statements", "{not json", nil); res.Status != 400 {
		t.Fatalf("malformed JSON: %d", res.Status)
	}
	if res := xapi(env, "POST", "statements", ok, nil); res.Status != 200 {
		t.Fatalf("valid: %d %s", res.Status, res.Body)
	}
	// An authority of two anonymous members, weeks alone and a positive
	// zero offset are fine.
	fine := with(func(m map[string]any) {
		m["authority"] = map[string]any{"objectType": "Group", "member": []any{map[string]any{"mbox": "mailto:a@e.com"},
			map[string]any{"account": map[string]any{"homePage": "http://e.com", "name": "app"}}}}
		m["result"] = map[string]any{"duration": "P4W"}
		m["timestamp"] = "2024-01-01T10:00:00+00:00"
	})
	if res := xapi(env, "POST", "statements", fine, nil); res.Status != 200 {
		t.Fatalf("valid authority, duration and timestamp: %d %s", res.Status, res.Body)
	}
}

func TestVersionHeaderAndAuth(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		about := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/about"})
		if about.Status != 200 || about.Get("version.0") != version || about.Header.Get("X-Experience-API-Version") != version {
			t.Fatalf("about: %d %s", about.Status, about.Body)
		}
		admin := env.As("admin").Token
		// Refusals carry the version too, and every answer of GET
		// statements its consistency (the conformance suite reads it
		// while it waits for a statement it does not get).
		res := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements", Token: admin})
		if res.Status != 400 || res.Header.Get("X-Experience-API-Version") != version || res.Header.Get("X-Experience-API-Consistent-Through") == "" {
			t.Fatalf("no version header: %d %v", res.Status, res.Header)
		}
		res = xapi(env, "GET", "statements?voidedStatementId="+uuid.NewString()+"&verb=http://e.com/v", nil, nil)
		if res.Status != 400 || res.Header.Get("X-Experience-API-Consistent-Through") == "" {
			t.Fatalf("refused query: %d %v", res.Status, res.Header)
		}
		res = xapi(env, "PUT", "activities/state", nil, nil)
		if res.Status != 400 || res.Header.Get("X-Experience-API-Version") != version || res.Header.Get("X-Experience-API-Consistent-Through") != "" {
			t.Fatalf("refused document: %d %v", res.Status, res.Header)
		}
		bad := xapi(env, "GET", "statements", nil, map[string]string{"X-Experience-API-Version": "0.95"})
		if bad.Status != 400 {
			t.Fatalf("old version: %d", bad.Status)
		}
		res = xapi(env, "GET", "statements", nil, nil)
		if res.Status != 200 || res.Header.Get("X-Experience-API-Version") != version || res.Header.Get("X-Experience-API-Consistent-Through") == "" {
			t.Fatalf("query: %d %v", res.Status, res.Header)
		}
		anon := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements", Headers: map[string]string{"X-Experience-API-Version": version}})
		if anon.Status != 401 {
			t.Fatalf("anonymous: %d", anon.Status)
		}
		student := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements", Token: env.As("student").Token,
			Headers: map[string]string{"X-Experience-API-Version": version}})
		if student.Status != 403 {
			t.Fatalf("student: %d", student.Status)
		}
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+admin))
		viaBasic := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements", Headers: map[string]string{
			"X-Experience-API-Version": version, "Authorization": basic}})
		if viaBasic.Status != 200 {
			t.Fatalf("admin token as Basic password: %d %s", viaBasic.Status, viaBasic.Body)
		}
		wrong := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements", Headers: map[string]string{
			"X-Experience-API-Version": version, "Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("cmi5:nope"))}})
		if wrong.Status != 401 {
			t.Fatalf("unknown launch token: %d", wrong.Status)
		}
	})
}

func TestPutConflictVoiding(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		id := uuid.NewString()
		s := stmt("http://example.com/verbs/did", "http://example.com/a")
		if res := xapi(env, "PUT", "statements?statementId="+id, s, nil); res.Status != 204 {
			t.Fatalf("put: %d %s", res.Status, res.Body)
		}
		if res := xapi(env, "PUT", "statements", s, nil); res.Status != 400 {
			t.Fatalf("put without id: %d", res.Status)
		}
		if res := xapi(env, "PUT", "statements?statementId="+id, s, nil); res.Status != 204 {
			t.Fatalf("same statement again: %d", res.Status)
		}
		other := stmt("http://example.com/verbs/other", "http://example.com/a")
		if res := xapi(env, "PUT", "statements?statementId="+id, other, nil); res.Status != 409 {
			t.Fatalf("conflicting statement: %d", res.Status)
		}
		other["id"] = id
		if res := xapi(env, "POST", "statements", []any{other}, nil); res.Status != 409 {
			t.Fatalf("conflicting POST: %d", res.Status)
		}
		dup := uuid.NewString()
		a, b := stmt("http://example.com/verbs/x", "http://example.com/a"), stmt("http://example.com/verbs/y", "http://example.com/a")
		a["id"], b["id"] = dup, dup
		if res := xapi(env, "POST", "statements", []any{a, b}, nil); res.Status != 400 {
			t.Fatalf("duplicate ids in a batch: %d", res.Status)
		}
		got := xapi(env, "GET", "statements?statementId="+id, nil, nil)
		if got.Status != 200 || got.String("id") != id || got.String("stored") == "" || got.Get("authority") == nil ||
			got.String("version") == "" || got.Header.Get("Last-Modified") == "" {
			t.Fatalf("get: %d %s", got.Status, got.Body)
		}
		void := map[string]any{"actor": s["actor"], "verb": map[string]any{"id": lrs.VerbVoided},
			"object": map[string]any{"objectType": "StatementRef", "id": id}}
		res := xapi(env, "POST", "statements", void, nil)
		if res.Status != 200 {
			t.Fatalf("void: %d %s", res.Status, res.Body)
		}
		voidID := res.String("0")
		if res := xapi(env, "GET", "statements?statementId="+id, nil, nil); res.Status != 404 {
			t.Fatalf("voided by statementId: %d", res.Status)
		}
		if res := xapi(env, "GET", "statements?voidedStatementId="+id, nil, nil); res.Status != 200 {
			t.Fatalf("voided by voidedStatementId: %d", res.Status)
		}
		// The voided statement is left out; the voiding statement, which
		// targets it, matches its verb (Communication 2.1.3).
		q := xapi(env, "GET", "statements?verb="+url.QueryEscape("http://example.com/verbs/did"), nil, nil)
		if list := q.Get("statements").([]any); len(list) != 1 || q.String("statements.0.id") != voidID {
			t.Fatalf("voided statement in query: %s", q.Body)
		}
		voidVoid := map[string]any{"actor": s["actor"], "verb": map[string]any{"id": lrs.VerbVoided},
			"object": map[string]any{"objectType": "StatementRef", "id": voidID}}
		if res := xapi(env, "POST", "statements", voidVoid, nil); res.Status != 400 {
			t.Fatalf("voiding a voiding statement: %d", res.Status)
		}
		if res := xapi(env, "GET", "statements?statementId="+id+"&verb=x", nil, nil); res.Status != 400 {
			t.Fatalf("statementId with a filter: %d", res.Status)
		}
	})
}

func TestQueries(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		reg := uuid.NewString()
		var ids []string
		for i := range 7 {
			s := stmt(fmt.Sprintf("http://example.com/verbs/v%d", i%2), fmt.Sprintf("http://example.com/act/%d", i%3))
			if i == 6 {
				s["actor"] = map[string]any{"mbox": "mailto:bob@example.com"}
				s["context"] = map[string]any{"registration": reg, "instructor": map[string]any{"mbox": "mailto:ann@example.com"},
					"contextActivities": map[string]any{"parent": map[string]any{"id": "http://example.com/act/0"}}}
			}
			res := xapi(env, "POST", "statements", s, nil)
			if res.Status != 200 {
				t.Fatalf("post: %d %s", res.Status, res.Body)
			}
			ids = append(ids, res.String("0"))
		}
		count := func(q string) int {
			res := xapi(env, "GET", "statements?"+q, nil, nil)
			if res.Status != 200 {
				t.Fatalf("%s: %d %s", q, res.Status, res.Body)
			}
			return len(res.Get("statements").([]any))
		}
		ann := url.QueryEscape(`{"mbox":"mailto:ann@example.com"}`)
		checks := map[string]int{
			"":                                      7,
			"agent=" + ann:                          6,
			"agent=" + ann + "&related_agents=true": 7,
			"verb=" + url.QueryEscape("http://example.com/verbs/v0"):                                4,
			"activity=" + url.QueryEscape("http://example.com/act/0"):                               3,
			"activity=" + url.QueryEscape("http://example.com/act/0") + "&related_activities=true":  3,
			"activity=" + url.QueryEscape("http://example.com/act/1") + "&related_activities=false": 2,
			"registration=" + reg:        1,
			"since=2000-01-01T00:00:00Z": 7,
			"until=2000-01-01T00:00:00Z": 0,
		}
		for q, want := range checks {
			if got := count(q); got != want {
				t.Errorf("%q: %d statements, want %d", q, got, want)
			}
		}
		// Newest first unless ascending; limit pages with more links that
		// walk every statement once.
		first := xapi(env, "GET", "statements?limit=1", nil, nil)
		if first.String("statements.0.id") != ids[6] {
			t.Fatalf("not newest first: %s", first.Body)
		}
		asc := xapi(env, "GET", "statements?limit=1&ascending=true", nil, nil)
		if asc.String("statements.0.id") != ids[0] {
			t.Fatalf("ascending: %s", asc.Body)
		}
		seen := map[string]bool{}
		next := "statements?limit=3"
		for pages := 0; next != ""; pages++ {
			res := xapi(env, "GET", next, nil, nil)
			for _, s := range res.Get("statements").([]any) {
				seen[s.(map[string]any)["id"].(string)] = true
			}
			more := res.String("more")
			next = strings.TrimPrefix(more, lrs.Base)
			if pages > 5 {
				t.Fatal("more links never end")
			}
		}
		if len(seen) != 7 {
			t.Fatalf("paging saw %d statements", len(seen))
		}
		ids6 := xapi(env, "GET", "statements?statementId="+ids[6]+"&format=ids", nil, nil)
		if ids6.Get("actor.name") != nil || ids6.Get("object.definition") != nil || ids6.String("actor.mbox") != "mailto:bob@example.com" {
			t.Fatalf("format=ids: %s", ids6.Body)
		}
		for _, q := range []string{"agent=x", "verb=notiri", "registration=r", "since=yesterday", "limit=-1", "format=full", "ascending=maybe", "colour=red"} {
			if res := xapi(env, "GET", "statements?"+q, nil, nil); res.Status != 400 {
				t.Errorf("%s: %d, want 400", q, res.Status)
			}
		}
	})
}

func TestAttachments(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		content := []byte("certificate text")
		sum := sha256.Sum256(content)
		sha := hex.EncodeToString(sum[:])
		s := stmt("http://example.com/verbs/did", "http://example.com/a")
		s["attachments"] = []any{map[string]any{"usageType": "http://id.tincanapi.com/attachment/certificate",
			"display": map[string]any{"en-US": "Certificate"}, "contentType": "text/plain", "length": len(content), "sha2": sha}}
		body, ct := mixed(t, s, content, sha)
		// Without the attachment's part the statement is refused.
		if res := xapi(env, "POST", "statements", s, nil); res.Status != 400 {
			t.Fatalf("missing attachment: %d", res.Status)
		}
		bad, badCT := mixed(t, s, []byte("other"), sha)
		if res := xapi(env, "POST", "statements", bad, map[string]string{"Content-Type": badCT}); res.Status != 400 {
			t.Fatalf("hash mismatch: %d", res.Status)
		}
		res := xapi(env, "POST", "statements", body, map[string]string{"Content-Type": ct})
		if res.Status != 200 {
			t.Fatalf("post: %d %s", res.Status, res.Body)
		}
		got := xapi(env, "GET", "statements?attachments=true&statementId="+res.String("0"), nil, nil)
		if !strings.HasPrefix(got.Header.Get("Content-Type"), "multipart/mixed") || !bytes.Contains(got.Body, content) {
			t.Fatalf("attachments=true: %s %s", got.Header.Get("Content-Type"), got.Body)
		}
	})
}

func mixed(t *testing.T, s map[string]any, content []byte, sha string) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	p, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"application/json"}})
	json.NewEncoder(p).Encode(s)
	a, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/plain"}, "Content-Transfer-Encoding": {"binary"},
		"X-Experience-API-Hash": {sha}})
	a.Write(content)
	mw.Close()
	return buf.Bytes(), "multipart/mixed; boundary=" + mw.Boundary()
}

func TestDocuments(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		agent := url.QueryEscape(`{"mbox":"mailto:ann@example.com"}`)
		act := url.QueryEscape("http://example.com/a")
		state := "activities/state?activityId=" + act + "&agent=" + agent + "&stateId=s1"
		js := map[string]string{"Content-Type": "application/json"}
		if res := xapi(env, "PUT", state, map[string]any{"a": 1}, js); res.Status != 204 {
			t.Fatalf("put state: %d %s", res.Status, res.Body)
		}
		if res := xapi(env, "POST", state, map[string]any{"b": 2}, js); res.Status != 204 {
			t.Fatalf("merge state: %d %s", res.Status, res.Body)
		}
		got := xapi(env, "GET", state, nil, nil)
		if got.Number("a") != 1 || got.Number("b") != 2 || got.Header.Get("ETag") == "" {
			t.Fatalf("merged: %s %v", got.Body, got.Header)
		}
		if res := xapi(env, "POST", state, "not json", map[string]string{"Content-Type": "text/plain"}); res.Status != 400 {
			t.Fatalf("merging text into JSON: %d", res.Status)
		}
		list := xapi(env, "GET", "activities/state?activityId="+act+"&agent="+agent, nil, nil)
		if list.String("0") != "s1" {
			t.Fatalf("ids: %s", list.Body)
		}
		if res := xapi(env, "GET", "activities/state?activityId="+act, nil, nil); res.Status != 400 {
			t.Fatalf("state without agent: %d", res.Status)
		}
		if res := xapi(env, "DELETE", "activities/state?activityId="+act+"&agent="+agent, nil, nil); res.Status != 204 {
			t.Fatalf("delete all state: %d", res.Status)
		}
		if res := xapi(env, "GET", state, nil, nil); res.Status != 404 {
			t.Fatalf("deleted state: %d", res.Status)
		}

		// Profiles: ETag concurrency.
		prof := "agents/profile?agent=" + agent + "&profileId=p1"
		if res := xapi(env, "PUT", prof, map[string]any{"v": 1}, map[string]string{"Content-Type": "application/json", "If-None-Match": "*"}); res.Status != 204 {
			t.Fatalf("create profile: %d %s", res.Status, res.Body)
		}
		if res := xapi(env, "PUT", prof, map[string]any{"v": 2}, js); res.Status != 409 {
			t.Fatalf("overwrite without precondition: %d", res.Status)
		}
		if res := xapi(env, "PUT", prof, map[string]any{"v": 2}, map[string]string{"Content-Type": "application/json", "If-None-Match": "*"}); res.Status != 412 {
			t.Fatalf("If-None-Match * on existing: %d", res.Status)
		}
		if res := xapi(env, "PUT", prof, map[string]any{"v": 2}, map[string]string{"Content-Type": "application/json", "If-Match": `"stale"`}); res.Status != 412 {
			t.Fatalf("stale If-Match: %d", res.Status)
		}
		etag := xapi(env, "GET", prof, nil, nil).Header.Get("ETag")
		if res := xapi(env, "PUT", prof, map[string]any{"v": 3}, map[string]string{"Content-Type": "application/json", "If-Match": etag}); res.Status != 204 {
			t.Fatalf("If-Match current: %d", res.Status)
		}
		if xapi(env, "GET", prof, nil, nil).Number("v") != 3 {
			t.Fatal("profile not replaced")
		}
		if res := xapi(env, "DELETE", prof, nil, map[string]string{"If-Match": etag}); res.Status != 412 {
			t.Fatalf("delete with stale ETag: %d", res.Status)
		}
		actProf := "activities/profile?activityId=" + act + "&profileId=p1"
		if res := xapi(env, "PUT", actProf, []byte("plain"), map[string]string{"Content-Type": "text/plain"}); res.Status != 400 {
			t.Fatalf("new profile without If-None-Match: %d %s", res.Status, res.Body)
		}
		if res := xapi(env, "GET", actProf, nil, nil); res.Status != 404 {
			t.Fatalf("refused profile stored: %d", res.Status)
		}
		if res := xapi(env, "PUT", actProf, []byte("plain"), map[string]string{"Content-Type": "text/plain", "If-None-Match": "*"}); res.Status != 204 {
			t.Fatalf("activity profile: %d", res.Status)
		}
		if got := xapi(env, "GET", actProf, nil, nil); string(got.Body) != "plain" || got.Header.Get("Content-Type") != "text/plain" {
			t.Fatalf("activity profile body: %q %s", got.Body, got.Header.Get("Content-Type"))
		}
		if res := xapi(env, "DELETE", "activities/profile?activityId="+act, nil, nil); res.Status != 400 {
			t.Fatalf("delete profile without id: %d", res.Status)
		}
		person := xapi(env, "GET", "agents?agent="+agent, nil, nil)
		if person.String("objectType") != "Person" || person.String("mbox.0") != "mailto:ann@example.com" {
			t.Fatalf("person: %s", person.Body)
		}
	})
}

func FuzzParseStatement(f *testing.F) {
	seed, _ := json.Marshal(stmt("http://example.com/verbs/did", "http://example.com/a"))
	f.Add(seed)
	f.Add([]byte(`{"actor":{"objectType":"Group","member":[{"mbox":"mailto:a@b.c"}]},"verb":{"id":"http://e.com/v"},"object":{"objectType":"SubStatement","actor":{"mbox":"mailto:a@b.c"},"verb":{"id":"http://e.com/v"},"object":{"id":"http://e.com/a"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := lrs.ParseStatement(data)
		if err == nil && (st.Verb == "" || st.ActorKey == "" && st.Object["actor"] == nil) {
			t.Fatalf("accepted a statement without verb or actor: %s", data)
		}
	})
}
