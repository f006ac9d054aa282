package lti_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/lti"
)

// TestDeepLinking: an author asks tool B for content for a lesson of A;
// A's deep linking request carries our return URL and data; B's signed
// answer, checked in the list's order, makes an lti topic of each
// resource link, once; a refused answer makes nothing.
func TestDeepLinking(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newTwoTenants(t, backend)
			ctx := context.Background()
			ask := client.DeepLinkInputBody{Lesson: w.lessonA, Tool: w.tool.ID}
			_, err := w.clientA(w.student).PostLTIDeepLinks(ctx, ask)
			apitest.Refused(t, err, 403)
			start := apitest.Must(w.browser.client(strings.TrimPrefix(w.originA, "http://"), w.adminA).PostLTIDeepLinks(ctx, ask))(t)
			login, err := url.Parse(start.URL)
			if err != nil || login.Query().Get("lti_message_hint") != "deep-linking" || !strings.HasPrefix(login.String(), w.originB+lti.LoginPath) {
				t.Fatalf("start: %+v", start)
			}
			authorize := w.originA + lti.AuthorizePath + "?" + url.Values{"scope": {"openid"}, "response_type": {"id_token"},
				"response_mode": {"form_post"}, "client_id": {w.tool.ClientID}, "redirect_uri": {w.originB + lti.LaunchPath},
				"login_hint": {login.Query().Get("login_hint")}, "lti_message_hint": {"deep-linking"}, "nonce": {"n-1"},
				"state": {"s-1"}}.Encode()
			// Only the browser that asked may use the hint.
			if _, other := autoPost(t, newBrowser(w.env).do(t, "GET", authorize, "")); other.Get("error") != "login_required" {
				t.Fatalf("another browser: %v", other)
			}
			_, fields := w.authorizeForm(t, authorize)
			if _, again := autoPost(t, w.browse(t, "GET", authorize, "")); again.Get("error") != "login_required" {
				t.Fatalf("reused hint: %v", again)
			}

			// The request, as the tool reads it with our key set.
			recA, _ := w.env.Server.Registry.ByHost(context.Background(), "127.0.0.1")
			tenantA, release := w.env.OpenTenant(recA)
			defer release()
			request := jwt.MapClaims{}
			if _, err := jwt.ParseWithClaims(fields.Get("id_token"), request, func(*jwt.Token) (any, error) {
				return &tenantA.Keys.Private.PublicKey, nil
			}); err != nil {
				t.Fatal(err)
			}
			settings, _ := request[lti.ClaimDeepLinking].(map[string]any)
			data, _ := settings["data"].(string)
			if request[lti.ClaimMessageType] != lti.MessageDeepLinkingReq || request["nonce"] != "n-1" ||
				settings["deep_link_return_url"] != w.originA+lti.DeepLinkReturnPath || data == "" ||
				request[lti.ClaimRoles].([]any)[0] != lti.RoleInstructor || settings["accept_lineitem"] != true {
				t.Fatalf("deep linking request: %v", request)
			}

			keyB, kidB := w.keyOfB(t)
			answer := func(edit func(jwt.MapClaims)) string {
				now := w.env.Clock.Now()
				c := jwt.MapClaims{"iss": w.tool.ClientID, "aud": w.originA, "iat": now.Unix(), "exp": now.Add(time.Minute).Unix(),
					"nonce": "n-2", lti.ClaimMessageType: lti.MessageDeepLinkingResp, lti.ClaimVersion: lti.Version,
					lti.ClaimDeploymentID: w.tool.DeploymentID, lti.ClaimDeepLinkingData: data,
					lti.ClaimContentItems: []map[string]any{
						{"type": "ltiResourceLink", "title": "Lab 1", "url": w.originB + "/lab-1", "custom": map[string]any{"level": "2", "n": 3},
							"lineItem": map[string]any{"label": "Lab 1 grade", "scoreMaximum": 25, "resourceId": "lab-1", "tag": "lab"}},
						{"type": "link", "url": "https://example.org/"},
						{"type": "ltiResourceLink", "title": "Lab 2"},
					}}
				if edit != nil {
					edit(c)
				}
				return sign(t, c, kidB, keyB)
			}
			post := func(token string) (int, string) {
				res := w.browse(t, "POST", w.originA+lti.DeepLinkReturnPath, url.Values{"JWT": {token}}.Encode())
				var body struct {
					Error string `json:"error"`
				}
				json.NewDecoder(res.Body).Decode(&body)
				return res.StatusCode, body.Error
			}
			ltiTopics := func() int {
				var n int
				if err := tenantA.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM topics WHERE lesson_id = $1`,
					w.lessonA).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			before := ltiTopics()
			for _, tc := range []struct {
				name, code string
				status     int
				token      string
			}{
				{"another key", "invalid_signature", 401, sign(t, jwt.MapClaims{"iss": w.tool.ClientID, "aud": w.originA,
					"exp": w.env.Clock.Now().Add(time.Minute).Unix()}, kidB, mustKey(t))},
				{"not for us", "invalid_audience", 401, answer(func(c jwt.MapClaims) { c["aud"] = w.originB })},
				{"expired", "expired", 401, answer(func(c jwt.MapClaims) { c["exp"] = w.env.Clock.Now().Add(-5 * time.Minute).Unix() })},
				{"issued later", "invalid_iat", 401, answer(func(c jwt.MapClaims) { c["iat"] = w.env.Clock.Now().Add(10 * time.Minute).Unix() })},
				{"unknown tool", "invalid_issuer", 401, answer(func(c jwt.MapClaims) { c["iss"] = "nobody" })},
				{"message type", "invalid_message_type", 422, answer(func(c jwt.MapClaims) { c[lti.ClaimMessageType] = lti.MessageResourceReq })},
				{"deployment", "unknown_deployment", 403, answer(func(c jwt.MapClaims) { c[lti.ClaimDeploymentID] = "other" })},
				{"other data", "invalid_data", 401, answer(func(c jwt.MapClaims) { c[lti.ClaimDeepLinkingData] = "made-up" })},
				{"no data", "invalid_data", 401, answer(func(c jwt.MapClaims) { delete(c, lti.ClaimDeepLinkingData) })},
				{"line item without maximum", "", 422, answer(func(c jwt.MapClaims) {
					c[lti.ClaimContentItems] = []map[string]any{{"type": "ltiResourceLink", "title": "Lab 3", "lineItem": map[string]any{"label": "x"}}}
				})},
			} {
				if status, code := post(tc.token); status != tc.status || code != tc.code {
					t.Errorf("%s: %d %q, want %d %q", tc.name, status, code, tc.status, tc.code)
				}
			}
			if n := ltiTopics(); n != before {
				t.Fatalf("refused answers made %d topics", n-before)
			}
			good := answer(nil)
			if status, code := post(good); status != 200 {
				t.Fatalf("answer: %d %s", status, code)
			}
			if status, code := post(good); status != 401 || code != "invalid_data" {
				t.Fatalf("replayed answer: %d %s", status, code)
			}
			if n := ltiTopics(); n != before+2 {
				t.Fatalf("%d topics made, want 2", n-before)
			}
			// The first made topic launches the tool at the item's URL with
			// its custom parameters.
			var lab int64
			var value string
			if err := tenantA.DB.QueryRowContext(context.Background(), `SELECT id, content FROM topics WHERE lesson_id = $1
				AND title = 'Lab 1'`, w.lessonA).Scan(&lab, &value); err != nil {
				t.Fatal(err)
			}
			link, _ := lti.ParseLink(json.RawMessage(value))
			if link.URL != w.originB+"/lab-1" || link.Custom["level"] != "2" || link.Custom["n"] != "3" {
				t.Fatalf("topic value: %s", value)
			}
			// The item's lineItem became the line item of the topic's
			// resource link; the item without one has none yet.
			var items int
			if err := tenantA.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM lti_line_items WHERE topic_id = $1
				AND claimed AND resource_link AND label = 'Lab 1 grade' AND score_maximum = 25 AND resource_id = 'lab-1'
				AND tag = 'lab'`, lab).Scan(&items); err != nil || items != 1 {
				t.Fatalf("the line item asked for: %d %v", items, err)
			}
			if err := tenantA.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM lti_line_items`).Scan(&items); err != nil || items != 1 {
				t.Fatalf("%d line items, want 1: %v", items, err)
			}
			launch := apitest.Must(w.clientA(w.adminA).PostLTILaunchesID(ctx, lab))(t)
			if u, _ := url.Parse(launch.URL); u.Query().Get("target_link_uri") != w.originB+"/lab-1" {
				t.Fatalf("launch of the made topic: %+v", launch)
			}
		})
	}
}
