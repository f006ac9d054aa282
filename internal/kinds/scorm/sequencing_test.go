package scorm_test

import (
	stdjson "encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// package2004 builds a SCORM 2004 4th edition package whose default
// organization holds org (items and sequencing, imsss prefix); every item
// named in scos launches <id>.html through resource r_<id>.
func package2004(t testing.TB, org string, scos ...string) []byte {
	t.Helper()
	files := map[string]string{}
	var res strings.Builder
	for _, id := range scos {
		files[id+".html"] = "<!doctype html><title>" + id + "</title><p>" + id
		fmt.Fprintf(&res, `<resource identifier="r_%s" type="webcontent" adlcp:scormType="sco" href="%s.html"><file href="%s.html"/></resource>`,
			id, id, id)
	}
	files["imsmanifest.xml"] = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="seqtest" version="1" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3" xmlns:adlseq="http://www.adlnet.org/xsd/adlseq_v1p3"
  xmlns:adlnav="http://www.adlnet.org/xsd/adlnav_v1p3" xmlns:imsss="http://www.imsglobal.org/xsd/imsss">
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="org"><organization identifier="org"><title>Sequencing test</title>` + org + `</organization></organizations>
  <resources>` + res.String() + `</resources>
</manifest>`
	return zipOf(t, files)
}

// item is an item of package2004: a SCO (no children) or a cluster.
func item(id, sequencing string, children ...string) string {
	ref := ""
	if len(children) == 0 {
		ref = ` identifierref="r_` + id + `"`
	}
	return `<item identifier="` + id + `"` + ref + `><title>` + id + `</title>` + strings.Join(children, "") + sequencing + `</item>`
}

// rule is a sequencing rule element (pre, exit or post) on one condition
// ("not satisfied" negates).
func rule(kind, condition, action string) string {
	op := ""
	if c, ok := strings.CutPrefix(condition, "not "); ok {
		condition, op = c, ` operator="not"`
	}
	return `<imsss:` + kind + `ConditionRule><imsss:ruleConditions><imsss:ruleCondition condition="` + condition + `"` + op +
		`/></imsss:ruleConditions><imsss:ruleAction action="` + action + `"/></imsss:` + kind + `ConditionRule>`
}

func sequencing(parts ...string) string {
	var rules, other []string
	for _, p := range parts {
		if strings.Contains(p, "ConditionRule>") {
			rules = append(rules, p)
		} else {
			other = append(other, p)
		}
	}
	out := "<imsss:sequencing>"
	for _, p := range other {
		if strings.HasPrefix(p, "<imsss:controlMode") {
			out += p
		}
	}
	if len(rules) > 0 {
		// The schema's order: pre, exit, then post rules.
		out += "<imsss:sequencingRules>"
		for _, kind := range []string{"<imsss:pre", "<imsss:exit", "<imsss:post"} {
			for _, r := range rules {
				if strings.HasPrefix(r, kind) {
					out += r
				}
			}
		}
		out += "</imsss:sequencingRules>"
	}
	for _, p := range other {
		if !strings.HasPrefix(p, "<imsss:controlMode") {
			out += p
		}
	}
	return out + "</imsss:sequencing>"
}

const flow = `<imsss:controlMode flow="true"/>`

// seqCourse is a SCORM topic of a hand-built package for a learner.
type seqCourse struct {
	t     *testing.T
	env   *apitest.Env
	w     *world
	topic int64
	scos  map[string]int64
}

func newSeqCourse(t *testing.T, env *apitest.Env, data []byte) *seqCourse {
	t.Helper()
	w := newWorld(t, env)
	pkg := apitest.Must(upload(t, env, w.tutor, "seq.zip", data))(t)
	c := &seqCourse{t: t, env: env, w: w, scos: map[string]int64{}}
	for _, s := range pkg.Scos {
		c.scos[s.Identifier] = s.ID
	}
	c.topic = scormTopic(t, w, "Sequencing", pkg.ID, pkg.Scos[0].ID)
	return c
}

func (c *seqCourse) launch(id string) (session, *client.ScoLaunch) {
	c.t.Helper()
	return launch(c.t, c.env, c.w.learner, c.scos[id], c.topic)
}

// finish commits the end of the SCO's attempt, as Terminate does.
func (c *seqCourse) finish(s session, completion, success string) {
	c.t.Helper()
	s.commit(c.t, c.env, 1, map[string]any{"cmi.completion_status": completion, "cmi.success_status": success,
		"cmi.exit": "normal", "cmi.session_time": "PT5S", "cmi.suspend_data": fmt.Sprint("state of ", s.sco)})
}

// navigate posts a navigation request and checks what it delivers: the
// SCO want ("" for the end of the session) and the rule that decided.
func (c *seqCourse) navigate(s session, action, target, want, rule string) (session, *client.ScoLaunch) {
	c.t.Helper()
	res, err := s.navigate(c.t, c.env, client.NavigateInputBody{Action: action, Target: &target})
	if err != nil {
		c.t.Fatalf("navigate %s from %d: %v", action, s.sco, err)
	}
	got := res.Sco.Identifier
	if want == "" {
		if res.Ended == nil || !*res.Ended || got != "" {
			c.t.Fatalf("navigate %s: want the end, got %+v", action, res)
		}
	} else if got != want {
		c.t.Fatalf("navigate %s: want %s, got %+v", action, want, res)
	}
	if r := res.Rule; (r == nil && rule != "") || (r != nil && *r != rule) {
		c.t.Fatalf("navigate %s: rule %v, want %q: %+v", action, r, rule, res)
	}
	return session{sco: c.scos[want], token: res.Token}, res
}

// tracks maps each SCO's identifier to its listed track.
func (c *seqCourse) tracks() map[string]client.Track {
	c.t.Helper()
	out := map[string]client.Track{}
	for _, tr := range tracks(c.t, c.env, c.w.learner, c.w.course) {
		out[tr.Identifier] = tr
	}
	return out
}

// contents reads the table of contents of a session's player page.
func (c *seqCourse) contents(s session) map[string]string {
	c.t.Helper()
	page := s.player(c.t, c.env)
	m := regexp.MustCompile(`(?s)<script id="runtime" type="application/json">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		c.t.Fatalf("player: %s", page)
	}
	var rt struct {
		Contents []struct{ Identifier, Status string }
	}
	if err := stdjson.Unmarshal([]byte(m[1]), &rt); err != nil {
		c.t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range rt.Contents {
		out[e.Identifier] = e.Status
	}
	return out
}

// TestPostConditionRetryAndExitAll: a SCO failed is retried by its
// post-condition rule (a new attempt, clean), up to its attempt limit;
// passed, the learner's continue stands; the last SCO's exitAll rule
// ends the session whatever the learner asks.
func TestPostConditionRetryAndExitAll(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		org := item("quiz", sequencing(rule("post", "not satisfied", "retry"), `<imsss:limitConditions attemptLimit="3"/>`)) +
			item("summary", sequencing(rule("post", "always", "exitAll"))) + sequencing(flow)
		c := newSeqCourse(t, env, package2004(t, org, "quiz", "summary"))
		s, _ := c.launch("quiz")
		c.finish(s, "completed", "failed")
		s, res := c.navigate(s, "continue", "", "quiz", "retry")
		if res.Attempt != 2 || res.Entry != "ab-initio" {
			t.Fatalf("retry: %+v", res)
		}
		st := apitest.Must(s.stored(t, env))(t)
		if st.Attempt != 2 || st.CompletionStatus != "not attempted" || st.SuccessStatus != "unknown" || len(st.Cmi) != 0 {
			t.Fatalf("stored after the retry: %+v", st)
		}
		// The SCO terminates without a request: the rule retries again.
		c.finish(s, "completed", "failed")
		s, res = c.navigate(s, "exit", "", "quiz", "retry")
		if res.Attempt != 3 {
			t.Fatalf("second retry: %+v", res)
		}
		// The third attempt is the last one: no retry is possible.
		c.finish(s, "completed", "failed")
		_, err := s.navigate(t, env, client.NavigateInputBody{Action: "continue"})
		if e := apitest.Refused(t, err, 403); !strings.Contains(e.Message, "Every attempt") {
			t.Fatalf("retry past the limit: %v", e)
		}
		if tr := c.tracks()["quiz"]; tr.Attempt != 3 || tr.Status != "failed" {
			t.Fatalf("quiz track: %+v", tr)
		}

		// Another learner passes at once: the learner's continue stands;
		// leaving the summary, whatever the request, ends the session.
		c = newSeqCourse(t, env, package2004(t, org, "quiz", "summary"))
		s, _ = c.launch("quiz")
		c.finish(s, "completed", "passed")
		s, res = c.navigate(s, "continue", "", "summary", "")
		if res.Attempt != 1 {
			t.Fatalf("summary: %+v", res)
		}
		c.finish(s, "completed", "unknown")
		c.navigate(s, "previous", "", "", "exitAll")
		c.navigate(s, "exit", "", "", "exitAll")
		if tr := c.tracks(); tr["quiz"].Status != "passed" || tr["quiz"].Attempt != 1 || tr["summary"].Status != "completed" {
			t.Fatalf("tracks: %+v", tr)
		}
	})
}

// rollupRule is a rollupRule element of one condition.
func rollupRule(set, extra, condition, action string) string {
	op := ""
	if c, ok := strings.CutPrefix(condition, "not "); ok {
		condition, op = c, ` operator="not"`
	}
	return `<imsss:rollupRule childActivitySet="` + set + `"` + extra + `><imsss:rollupConditions><imsss:rollupCondition condition="` +
		condition + `"` + op + `/></imsss:rollupConditions><imsss:rollupAction action="` + action + `"/></imsss:rollupRule>`
}

// TestExitRulesAndRetryAll: an exitParent post-condition rule ends the
// chapter's attempt, so continue flows from the chapter (past its other
// SCO); an exit rule on a chapter that a custom rollup rule satisfies
// with one SCO passed ends it the same way; the last SCO's retryAll
// starts the whole package again, every track clean.
func TestExitRulesAndRetryAll(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		org := item("ch1", sequencing(flow), item("a1", sequencing(rule("post", "completed", "exitParent"))), item("a2", "")) +
			item("ch2", sequencing(flow, rule("exit", "satisfied", "exit"),
				`<imsss:rollupRules>`+rollupRule("any", "", "satisfied", "satisfied")+`</imsss:rollupRules>`),
				item("b1", ""), item("b2", "")) +
			item("ch3", sequencing(flow), item("c1", sequencing(rule("post", "always", "retryAll")))) +
			sequencing(flow)
		c := newSeqCourse(t, env, package2004(t, org, "a1", "a2", "b1", "b2", "c1"))
		s, _ := c.launch("a1")
		// Not completed: no rule acts, continue reaches a2.
		s.commit(t, env, 1, map[string]any{"cmi.completion_status": "incomplete", "cmi.exit": "normal"})
		s, _ = c.navigate(s, "continue", "", "a2", "")
		s, _ = c.navigate(s, "previous", "", "a1", "")
		c.finish(s, "completed", "unknown")
		s, _ = c.navigate(s, "continue", "", "b1", "exitParent")
		c.finish(s, "completed", "passed")
		s, _ = c.navigate(s, "continue", "", "c1", "exit")
		c.finish(s, "completed", "passed")
		if got := c.contents(s); got["ch2"] != "incomplete" || got["b2"] != "not attempted" || got["ch1"] != "incomplete" {
			t.Fatalf("contents before retryAll: %v", got)
		}
		_, res := c.navigate(s, "exit", "", "a1", "retryAll")
		if res.Attempt != 2 || res.Entry != "ab-initio" {
			t.Fatalf("retryAll: %+v", res)
		}
		tr := c.tracks()
		for _, id := range []string{"a1", "b1", "c1"} {
			if tr[id].Status != "not attempted" {
				t.Errorf("%s after retryAll: %+v", id, tr[id])
			}
		}
		if tr["a2"].Status != "not attempted" || tr["b1"].Attempt != 1 {
			t.Errorf("tracks after retryAll: %+v", tr)
		}
		// b1's next launch is its second attempt, with none of its data.
		_, res = c.launch("b1")
		if res.Attempt != 2 || res.Entry != "ab-initio" {
			t.Fatalf("b1 after retryAll: %+v", res)
		}
		if cmi := env.Count(t, `SELECT COUNT(*) FROM scorm_tracks WHERE sco_id = $1 AND cmi = '{}' AND attempt = 2`, c.scos["b1"]); cmi != 1 {
			t.Errorf("b1 stored: %d", cmi)
		}
	})
}

// TestPostConditionFlow: continue and previous rules replace the
// learner's request (exit here) when the SCO's attempt ends; with no
// rule acting, exit delivers nothing.
func TestPostConditionFlow(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		org := item("s1", "") + item("s2", sequencing(rule("post", "not satisfied", "previous"), rule("post", "satisfied", "continue"))) +
			item("s3", "") + sequencing(flow)
		c := newSeqCourse(t, env, package2004(t, org, "s1", "s2", "s3"))
		s, _ := c.launch("s2")
		c.finish(s, "completed", "failed")
		s, _ = c.navigate(s, "exit", "", "s1", "previous")
		s, _ = c.navigate(s, "continue", "", "s2", "")
		// A choice is replaced too.
		c.finish(s, "completed", "passed")
		s, _ = c.navigate(s, "choice", "s1", "s3", "continue")
		c.finish(s, "completed", "passed")
		c.navigate(s, "exit", "", "", "")
	})
}

// TestRollupRules: custom rollup rules decide a cluster's completion
// (atLeastCount, none) and satisfaction (atLeastPercent), as the table
// of contents and a pre-condition rule on the cluster show.
func TestRollupRules(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		org := item("g1", sequencing(flow, `<imsss:rollupRules>`+rollupRule("atLeastCount", ` minimumCount="2"`, "completed", "completed")+
			`</imsss:rollupRules>`), item("g1a", ""), item("g1b", ""), item("g1c", "")) +
			item("g2", sequencing(flow, rule("pre", "satisfied", "disabled"), `<imsss:rollupRules>`+
				rollupRule("atLeastPercent", ` minimumPercent="0.5"`, "satisfied", "satisfied")+`</imsss:rollupRules>`),
				item("g2a", ""), item("g2b", "")) +
			item("g3", sequencing(`<imsss:rollupRules>`+rollupRule("none", "", "attempted", "completed")+
				rollupRule("all", "", "activityProgressKnown", "incomplete")+`</imsss:rollupRules>`), item("g3a", "")) +
			item("g4", "", item("g4a", ""), item("g4b", "")) + sequencing(flow)
		c := newSeqCourse(t, env, package2004(t, org, "g1a", "g1b", "g1c", "g2a", "g2b", "g3a", "g4a", "g4b"))
		s, _ := c.launch("g1a")
		if got := c.contents(s); got["g1"] != "not attempted" || got["g3"] != "completed" {
			t.Fatalf("contents at first: %v", got)
		}
		c.finish(s, "completed", "unknown")
		if got := c.contents(s); got["g1"] != "incomplete" {
			t.Fatalf("one of g1 done: %v", got)
		}
		s, _ = c.navigate(s, "continue", "", "g1b", "")
		c.finish(s, "completed", "unknown")
		// The default rules would want g1c too; g4 keeps them.
		if got := c.contents(s); got["g1"] != "completed" {
			t.Fatalf("two of g1 done: %v", got)
		}
		s, _ = c.navigate(s, "choice", "g4a", "g4a", "")
		c.finish(s, "completed", "passed")
		if got := c.contents(s); got["g4"] != "incomplete" {
			t.Fatalf("one of g4 done: %v", got)
		}
		s, _ = c.navigate(s, "choice", "g3a", "g3a", "")
		s.commit(t, env, 1, map[string]any{"cmi.completion_status": "incomplete", "cmi.exit": "suspend"})
		if got := c.contents(s); got["g3"] != "incomplete" {
			t.Fatalf("g3 attempted: %v", got)
		}
		s, _ = c.navigate(s, "choice", "g2a", "g2a", "")
		c.finish(s, "completed", "passed")
		// Half of g2 satisfied: g2 is, and its disabled rule holds.
		_, err := s.navigate(t, env, client.NavigateInputBody{Action: "continue"})
		if e := apitest.Refused(t, err, 403); !strings.Contains(e.Message, "not available") {
			t.Fatalf("g2b under a satisfied g2: %v", e)
		}
	})
}
