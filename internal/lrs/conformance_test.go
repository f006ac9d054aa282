package lrs_test

import (
	"bytes"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/lrs"
)

// ids lists the ids of a page of statements in order.
func ids(t *testing.T, res *apitest.Response) []string {
	t.Helper()
	if res.Status != 200 {
		t.Fatalf("query: %d %s", res.Status, res.Body)
	}
	var out []string
	for _, s := range res.Get("statements").([]any) {
		out = append(out, s.(map[string]any)["id"].(string))
	}
	return out
}

// Statements that target a statement match the filters it matches, voided
// or not, down a chain of references; the time filters and the voided
// rule apply to them as they are (Communication 2.1.3, 2.1.4).
func TestStatementRefFilters(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		verb := "http://example.com/verbs/" + uuid.NewString()
		act := "http://example.com/act/" + uuid.NewString()
		post := func(s map[string]any) string {
			t.Helper()
			env.Clock.Advance(time.Second)
			res := xapi(env, "POST", "statements", s, nil)
			if res.Status != 200 {
				t.Fatalf("post: %d %s", res.Status, res.Body)
			}
			return res.String("0")
		}
		ref := func(verbID, target string) map[string]any {
			return map[string]any{"actor": map[string]any{"mbox": "mailto:cat@example.com"}, "verb": map[string]any{"id": verbID},
				"object": map[string]any{"objectType": "StatementRef", "id": target}}
		}
		start := env.Clock.Now()
		voided := post(stmt(verb, act))
		voiding := post(ref(lrs.VerbVoided, voided))
		mid := env.Clock.Now()
		refSame := post(ref(verb, voided))
		refOther := post(ref("http://example.com/verbs/confirmed", refSame))
		post(stmt("http://example.com/verbs/unrelated", "http://example.com/act/other"))

		byVerb := "statements?verb=" + url.QueryEscape(verb)
		if got, want := ids(t, xapi(env, "GET", byVerb, nil, nil)), []string{refOther, refSame, voiding}; !reflect.DeepEqual(got, want) {
			t.Fatalf("verb: %v, want %v", got, want)
		}
		if got, want := ids(t, xapi(env, "GET", "statements?activity="+url.QueryEscape(act), nil, nil)), []string{refOther, refSame, voiding}; !reflect.DeepEqual(got, want) {
			t.Fatalf("activity: %v, want %v", got, want)
		}
		ann := url.QueryEscape(`{"mbox":"mailto:ann@example.com"}`)
		if got := ids(t, xapi(env, "GET", "statements?agent="+ann+"&verb="+url.QueryEscape(verb), nil, nil)); len(got) != 3 {
			t.Fatalf("agent and verb: %v", got)
		}
		// since and until apply to the targeting statements themselves.
		since := byVerb + "&since=" + url.QueryEscape(mid.Format(time.RFC3339Nano))
		if got, want := ids(t, xapi(env, "GET", since, nil, nil)), []string{refOther, refSame}; !reflect.DeepEqual(got, want) {
			t.Fatalf("since: %v, want %v", got, want)
		}
		until := byVerb + "&until=" + url.QueryEscape(mid.Format(time.RFC3339Nano)) + "&since=" + url.QueryEscape(start.Format(time.RFC3339Nano))
		if got, want := ids(t, xapi(env, "GET", until, nil, nil)), []string{voiding}; !reflect.DeepEqual(got, want) {
			t.Fatalf("until: %v, want %v", got, want)
		}
		if got, want := ids(t, xapi(env, "GET", byVerb+"&limit=1&ascending=true", nil, nil)), []string{voiding}; !reflect.DeepEqual(got, want) {
			t.Fatalf("limit: %v, want %v", got, want)
		}
	})
}

func formatStatement() map[string]any {
	display := map[string]any{"en-US": "attended", "en-GB": "attended (GB)", "fr-FR": "assisté"}
	activity := map[string]any{"objectType": "Activity", "id": "http://example.com/act/meeting", "definition": map[string]any{
		"name":        map[string]any{"en-US": "meeting", "en-GB": "meeting (GB)", "fr-FR": "réunion"},
		"description": map[string]any{"en-US": "a meeting", "fr-FR": "une réunion"},
		"type":        "http://adlnet.gov/expapi/activities/meeting", "interactionType": "choice",
		"choices": []any{map[string]any{"id": "a", "description": map[string]any{"en-US": "A", "fr-FR": "A (fr)"}}}}}
	return map[string]any{
		"actor": map[string]any{"objectType": "Agent", "name": "Ann", "mbox": "mailto:ann@example.com"},
		"verb":  map[string]any{"id": "http://adlnet.gov/expapi/verbs/attended", "display": display},
		"object": map[string]any{"objectType": "SubStatement",
			"actor": map[string]any{"objectType": "Group", "name": "Team", "mbox": "mailto:team@example.com",
				"member": []any{map[string]any{"name": "Bob", "mbox": "mailto:bob@example.com"}}},
			"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/attended", "display": display},
			"object": activity},
		"context": map[string]any{"contextActivities": map[string]any{"category": []any{activity}},
			"instructor": map[string]any{"objectType": "Group", "name": "Anonymous",
				"member": []any{map[string]any{"name": "Cy", "mbox": "mailto:cy@example.com"}}}},
	}
}

// format=ids keeps identifiers only; format=canonical one language of each
// language map, chosen by Accept-Language (Communication 2.1.3).
func TestStatementFormats(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		res := xapi(env, "POST", "statements", formatStatement(), nil)
		if res.Status != 200 {
			t.Fatalf("post: %d %s", res.Status, res.Body)
		}
		id := res.String("0")
		get := func(format, lang string) *apitest.Response {
			h := map[string]string{}
			if lang != "" {
				h["Accept-Language"] = lang
			}
			res := xapi(env, "GET", "statements?statementId="+id+"&format="+format, nil, h)
			if res.Status != 200 {
				t.Fatalf("%s: %d %s", format, res.Status, res.Body)
			}
			return res
		}
		want := func(res *apitest.Response, path string, v any) {
			t.Helper()
			got, _ := json.Marshal(res.Get(path))
			exp, _ := json.Marshal(v)
			if string(got) != string(exp) {
				t.Errorf("%s: %s, want %s", path, got, exp)
			}
		}
		ids := get("ids", "")
		want(ids, "actor", map[string]any{"objectType": "Agent", "mbox": "mailto:ann@example.com"})
		want(ids, "verb", map[string]any{"id": "http://adlnet.gov/expapi/verbs/attended"})
		want(ids, "object.actor", map[string]any{"objectType": "Group", "mbox": "mailto:team@example.com"})
		want(ids, "object.object", map[string]any{"id": "http://example.com/act/meeting"})
		want(ids, "context.contextActivities.category.0", map[string]any{"id": "http://example.com/act/meeting"})
		want(ids, "context.instructor", map[string]any{"objectType": "Group", "member": []any{map[string]any{"mbox": "mailto:cy@example.com"}}})

		gb := get("canonical", "fr-FR;q=0.5, en-GB")
		want(gb, "verb.display", map[string]any{"en-GB": "attended (GB)"})
		want(gb, "object.verb.display", map[string]any{"en-GB": "attended (GB)"})
		want(gb, "object.object.definition.name", map[string]any{"en-GB": "meeting (GB)"})
		// No en-GB description: the next preference.
		want(gb, "object.object.definition.description", map[string]any{"fr-FR": "une réunion"})
		want(gb, "context.contextActivities.category.0.definition.name", map[string]any{"en-GB": "meeting (GB)"})
		want(gb, "object.object.definition.choices.0.description", map[string]any{"fr-FR": "A (fr)"})
		want(gb, "object.actor.name", "Team")
		// A range takes the tags it prefixes; q=0 refuses a language.
		fr := get("canonical", "en;q=0, fr")
		want(fr, "verb.display", map[string]any{"fr-FR": "assisté"})
		// Without Accept-Language still one language; exact keeps all.
		if m, _ := get("canonical", "").Get("verb.display").(map[string]any); len(m) != 1 {
			t.Errorf("canonical without Accept-Language: %v", m)
		}
		if m, _ := get("exact", "en-GB").Get("verb.display").(map[string]any); len(m) != 3 {
			t.Errorf("exact: %v", m)
		}
		list := xapi(env, "GET", "statements?format=canonical", nil, map[string]string{"Accept-Language": "fr"})
		want(list, "statements.0.object.object.definition.name", map[string]any{"fr-FR": "réunion"})
	})
}

// GET activities merges the definitions of every statement naming the
// activity: language maps key by key, the newest value otherwise
// (Communication 2.5).
func TestActivityDefinitionMerge(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		act := "http://example.com/act/" + uuid.NewString()
		first := stmt("http://example.com/verbs/did", act)
		first["object"] = map[string]any{"id": act, "definition": map[string]any{
			"name": map[string]any{"en-US": "meeting"}, "description": map[string]any{"en-US": "a meeting"},
			"type": "http://example.com/types/old", "moreInfo": "http://example.com/more",
			"extensions": map[string]any{"http://example.com/ext/a": 1}}}
		second := stmt("http://example.com/verbs/did", act)
		second["object"] = map[string]any{"id": act, "definition": map[string]any{
			"name": map[string]any{"fr-FR": "réunion"}, "type": "http://example.com/types/new",
			"extensions": map[string]any{"http://example.com/ext/b": 2}}}
		if res := xapi(env, "POST", "statements", []any{first, second}, nil); res.Status != 200 {
			t.Fatalf("post: %d %s", res.Status, res.Body)
		}
		res := xapi(env, "GET", "activities?activityId="+url.QueryEscape(act), nil, nil)
		if res.Status != 200 {
			t.Fatalf("get: %d %s", res.Status, res.Body)
		}
		want := map[string]any{"objectType": "Activity", "id": act, "definition": map[string]any{
			"name": map[string]any{"en-US": "meeting", "fr-FR": "réunion"}, "description": map[string]any{"en-US": "a meeting"},
			"type": "http://example.com/types/new", "moreInfo": "http://example.com/more",
			"extensions": map[string]any{"http://example.com/ext/a": float64(1), "http://example.com/ext/b": float64(2)}}}
		if !reflect.DeepEqual(res.JSON, want) {
			t.Fatalf("activity: %s", res.Body)
		}
	})
}

// form sends a request in the alternate request syntax (Communication
// 1.3): POST with the method as the only query parameter, headers and
// parameters in the form.
func form(env *apitest.Env, path string, query string, values url.Values) *apitest.Response {
	return env.Do(apitest.Request{Method: "POST", Path: "/api/xapi/" + path + "?" + query, Body: []byte(values.Encode()),
		Type: "application/x-www-form-urlencoded"})
}

func TestAlternateRequestSyntax(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("tool:"+env.As("admin").Token))
		id := uuid.NewString()
		content, _ := json.Marshal(stmt("http://example.com/verbs/did", "http://example.com/a"))
		put := url.Values{"statementId": {id}, "content": {string(content)}, "Authorization": {auth},
			"X-Experience-API-Version": {version}, "Content-Type": {"application/json"}}
		if res := form(env, "statements", "method=PUT", put); res.Status != 204 {
			t.Fatalf("PUT as POST: %d %s", res.Status, res.Body)
		}
		if res := xapi(env, "GET", "statements?statementId="+id, nil, nil); res.Status != 200 || res.String("verb.id") != "http://example.com/verbs/did" {
			t.Fatalf("stored: %d %s", res.Status, res.Body)
		}
		get := form(env, "statements", "method=GET", url.Values{"statementId": {id}, "Authorization": {auth}, "X-Experience-API-Version": {version}})
		if get.Status != 200 || get.String("id") != id || get.Header.Get("X-Experience-API-Consistent-Through") == "" {
			t.Fatalf("GET as POST: %d %s %v", get.Status, get.Body, get.Header)
		}
		page := form(env, "statements", "method=GET", url.Values{"limit": {"1"}, "Authorization": {auth}, "X-Experience-API-Version": {version}})
		if page.Status != 200 || len(page.Get("statements").([]any)) != 1 {
			t.Fatalf("query as POST: %d %s", page.Status, page.Body)
		}
		// The header Authorization works too, with a bearer token in the form.
		bearer := url.Values{"Authorization": {"Bearer " + env.As("admin").Token}, "X-Experience-API-Version": {version}}
		if res := form(env, "statements", "method=GET", bearer); res.Status != 200 {
			t.Fatalf("bearer in the form: %d %s", res.Status, res.Body)
		}
		// Documents: PUT and GET as POST.
		doc := url.Values{"activityId": {"http://example.com/a"}, "agent": {`{"mbox":"mailto:ann@example.com"}`}, "stateId": {"alt"},
			"content": {`{"x":1}`}, "Content-Type": {"application/json"}, "Authorization": {auth}, "X-Experience-API-Version": {version}}
		if res := form(env, "activities/state", "method=PUT", doc); res.Status != 204 {
			t.Fatalf("state PUT as POST: %d %s", res.Status, res.Body)
		}
		doc.Del("content")
		doc.Del("Content-Type")
		if res := form(env, "activities/state", "method=GET", doc); res.Status != 200 || res.Number("x") != 1 {
			t.Fatalf("state GET as POST: %d %s", res.Status, res.Body)
		}
		anon := url.Values{"content": {string(content)}, "statementId": {uuid.NewString()}, "X-Experience-API-Version": {version}}
		if res := form(env, "statements", "method=PUT", anon); res.Status != 401 {
			t.Fatalf("no credentials: %d", res.Status)
		}
		refusals := map[string]*apitest.Response{
			"other query parameter": form(env, "statements", "method=PUT&statementId="+uuid.NewString(), put),
			"old version in form": form(env, "statements", "method=PUT", url.Values{"statementId": {uuid.NewString()},
				"content": {string(content)}, "Authorization": {auth}, "X-Experience-API-Version": {"0.8"}}),
			"unknown method": form(env, "statements", "method=PATCH", put),
			"not as POST": env.Do(apitest.Request{Method: "PUT", Path: "/api/xapi/statements?method=POST", Body: []byte(put.Encode()),
				Type: "application/x-www-form-urlencoded"}),
			"form not url-encoded": env.Do(apitest.Request{Method: "POST", Path: "/api/xapi/statements?method=PUT", Body: map[string]any{"content": "x"},
				Headers: map[string]string{"Authorization": auth, "X-Experience-API-Version": version}}),
		}
		for name, res := range refusals {
			if res.Status != 400 {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
			}
		}
		// Statements themselves come as JSON or multipart/mixed only.
		s := stmt("http://example.com/verbs/did", "http://example.com/a")
		s["attachments"] = []any{map[string]any{"usageType": "http://example.com/u", "display": map[string]any{"en-US": "a"},
			"contentType": "text/plain", "length": 3, "sha2": hex.EncodeToString(make([]byte, 32)), "fileUrl": "http://example.com/a.txt"}}
		if res := xapi(env, "POST", "statements", s, map[string]string{"Content-Type": "multipart/form-data; boundary=xyz"}); res.Status != 400 {
			t.Fatalf("multipart/form-data: %d %s", res.Status, res.Body)
		}
		if res := xapi(env, "POST", "statements", s, map[string]string{"Content-Type": "application/json; charset=utf-8"}); res.Status != 200 {
			t.Fatalf("JSON with fileUrl: %d %s", res.Status, res.Body)
		}
	})
}

// signer makes JWS signatures of statements with a key and its
// self-signed certificate.
type signer struct {
	key  *rsa.PrivateKey
	cert []byte
}

func newSigner(t *testing.T) *signer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "statement signer"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{key: key, cert: der}
}

var algs = map[string]crypto.Hash{"RS256": crypto.SHA256, "RS384": crypto.SHA384, "RS512": crypto.SHA512}

func (s *signer) sign(t *testing.T, alg string, payload []byte, withCert bool) []byte {
	header := map[string]any{"alg": alg}
	if withCert {
		header["x5c"] = []string{base64.StdEncoding.EncodeToString(s.cert)}
	}
	h, _ := json.Marshal(header)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(payload)
	var sig []byte
	if alg == "HS256" {
		m := hmac.New(sha256.New, []byte("secret"))
		m.Write([]byte(input))
		sig = m.Sum(nil)
	} else {
		hash := algs[alg]
		d := hash.New()
		d.Write([]byte(input))
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, hash, d.Sum(nil)); err != nil {
			t.Fatal(err)
		}
	}
	return []byte(input + "." + base64.RawURLEncoding.EncodeToString(sig))
}

// signed is a statement with its signature attachment, as multipart/mixed.
func signed(t *testing.T, s map[string]any, jws []byte, contentType string) ([]byte, string) {
	sum := sha256.Sum256(jws)
	sha := hex.EncodeToString(sum[:])
	s["attachments"] = []any{map[string]any{"usageType": lrs.UsageSignature, "display": map[string]any{"en-US": "Signature"},
		"contentType": contentType, "length": len(jws), "sha2": sha}}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	p, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"application/json"}})
	json.NewEncoder(p).Encode(s)
	a, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {contentType}, "Content-Transfer-Encoding": {"binary"},
		"X-Experience-API-Hash": {sha}})
	a.Write(jws)
	mw.Close()
	return buf.Bytes(), "multipart/mixed; boundary=" + mw.Boundary()
}

// A signed statement is stored when its JWS is well formed, its payload
// is the statement and its x5c certificate verifies it; otherwise 400
// (Data 2.6).
func TestSignedStatements(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		sg, other := newSigner(t), newSigner(t)
		statement := func() (map[string]any, []byte) {
			s := stmt("http://example.com/verbs/did", "http://example.com/a")
			s["id"] = uuid.NewString()
			s["timestamp"] = "2026-01-02T03:04:05Z"
			payload, _ := json.Marshal(s)
			return s, payload
		}
		send := func(s map[string]any, jws []byte, contentType string) *apitest.Response {
			body, ct := signed(t, s, jws, contentType)
			return xapi(env, "POST", "statements", body, map[string]string{"Content-Type": ct})
		}
		for _, alg := range []string{"RS256", "RS384", "RS512"} {
			s, payload := statement()
			if res := send(s, sg.sign(t, alg, payload, true), "application/octet-stream"); res.Status != 200 {
				t.Fatalf("%s: %d %s", alg, res.Status, res.Body)
			}
		}
		// Without a certificate the form is checked, not the key.
		s, payload := statement()
		if res := send(s, sg.sign(t, "RS256", payload, false), "application/octet-stream"); res.Status != 200 {
			t.Fatalf("without x5c: %d %s", res.Status, res.Body)
		}
		// The payload may say the timestamp in another zone; the LRS's
		// properties it leaves out are not compared.
		s, _ = statement()
		shifted := map[string]any{}
		for k, v := range s {
			shifted[k] = v
		}
		shifted["timestamp"] = "2026-01-02T05:04:05+02:00"
		delete(shifted, "id")
		payload, _ = json.Marshal(shifted)
		if res := send(s, sg.sign(t, "RS256", payload, true), "application/octet-stream"); res.Status != 200 {
			t.Fatalf("equivalent payload: %d %s", res.Status, res.Body)
		}
		stored := xapi(env, "GET", "statements?attachments=true&statementId="+s["id"].(string), nil, nil)
		if stored.Status != 200 || !bytes.Contains(stored.Body, []byte(lrs.UsageSignature)) {
			t.Fatalf("signed statement not stored with its signature: %d %s", stored.Status, stored.Body)
		}

		refusals := map[string]func() *apitest.Response{
			"HS256": func() *apitest.Response {
				s, payload := statement()
				return send(s, sg.sign(t, "HS256", payload, false), "application/octet-stream")
			},
			"not octet-stream": func() *apitest.Response {
				s, payload := statement()
				return send(s, sg.sign(t, "RS256", payload, true), "text/plain")
			},
			"payload not JSON": func() *apitest.Response {
				s, payload := statement()
				return send(s, sg.sign(t, "RS256", bytes.Replace(payload, []byte(`"`), []byte(`'`), 1), true), "application/octet-stream")
			},
			"payload another statement": func() *apitest.Response {
				s, _ := statement()
				o := stmt("http://example.com/verbs/other", "http://example.com/a")
				o["id"] = s["id"]
				payload, _ := json.Marshal(o)
				return send(s, sg.sign(t, "RS256", payload, true), "application/octet-stream")
			},
			"wrong key for x5c": func() *apitest.Response {
				s, payload := statement()
				jws := other.sign(t, "RS256", payload, false)
				h, _ := json.Marshal(map[string]any{"alg": "RS256", "x5c": []string{base64.StdEncoding.EncodeToString(sg.cert)}})
				parts := bytes.SplitN(jws, []byte("."), 3)
				forged := base64.RawURLEncoding.EncodeToString(h) + "." + string(parts[1]) + "." + string(parts[2])
				return send(s, []byte(forged), "application/octet-stream")
			},
			"not a JWS": func() *apitest.Response {
				s, _ := statement()
				return send(s, []byte("signature"), "application/octet-stream")
			},
		}
		for name, call := range refusals {
			if res := call(); res.Status != 400 {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
			}
		}
	})
}
