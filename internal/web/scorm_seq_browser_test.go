package web

import (
	"archive/zip"
	"bytes"
	"testing"
)

// seqPackage is a SCORM 2004 4th edition package of two SCOs in flow:
// quiz, retried by a post-condition rule until it is satisfied, then
// summary.
func seqPackage(t *testing.T) []byte {
	t.Helper()
	files := map[string]string{
		"quiz.html":    "<!doctype html><title>quiz</title><p>Quiz",
		"summary.html": "<!doctype html><title>summary</title><p>Summary",
		"imsmanifest.xml": `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="seq" version="1" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3" xmlns:imsss="http://www.imsglobal.org/xsd/imsss">
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="org"><organization identifier="org"><title>Retry</title>
    <item identifier="quiz" identifierref="r_quiz"><title>Quiz</title>
      <imsss:sequencing><imsss:sequencingRules><imsss:postConditionRule>
        <imsss:ruleConditions><imsss:ruleCondition condition="satisfied" operator="not"/></imsss:ruleConditions>
        <imsss:ruleAction action="retry"/>
      </imsss:postConditionRule></imsss:sequencingRules></imsss:sequencing>
    </item>
    <item identifier="summary" identifierref="r_summary"><title>Summary</title></item>
    <imsss:sequencing><imsss:controlMode flow="true"/></imsss:sequencing>
  </organization></organizations>
  <resources>
    <resource identifier="r_quiz" type="webcontent" adlcp:scormType="sco" href="quiz.html"><file href="quiz.html"/></resource>
    <resource identifier="r_summary" type="webcontent" adlcp:scormType="sco" href="summary.html"><file href="summary.html"/></resource>
  </resources>
</manifest>`,
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// on2004 holds when a player page the test has not marked (see mark)
// runs the SCO file with a 2004 runtime.
func on2004(file string) string {
	return `F.player.document.readyState === 'complete' && !!F.player.API_1484_11 && !F.player.leftByTest &&
		F.sco.location.pathname.endsWith('/` + file + `') && F.sco.document.readyState === 'complete'`
}

// TestScormRetryRuleInBrowser: the quiz terminates failed without a
// navigation request; the player asks the server what follows, and the
// post-condition rule delivers the quiz again, a new attempt with a clean
// model. Passed, the quiz's continue request reaches the summary; the
// summary's plain Terminate ends the session.
func TestScormRetryRuleInBrowser(t *testing.T) {
	p := newScormPlay(t)
	pkg := p.uploadBytes("retry.zip", seqPackage(t))
	topic := p.scormTopic("Retry", pkg, 0)
	p.open(topic)
	var ok bool
	p.until("quiz", on2004("quiz.html"), &ok)
	var results []string
	mark := `F.player.leftByTest = true`
	p.eval("mark", mark, &ok)
	p.eval("quiz fails", `(function (api) {
		return [api.Initialize(''), api.SetValue('cmi.completion_status', 'completed'), api.SetValue('cmi.success_status', 'failed'),
			api.SetValue('cmi.suspend_data', 'first try'), api.SetValue('cmi.exit', 'normal'), api.Terminate('')];
	})(F.player.API_1484_11)`, &results)
	if len(results) != 6 || results[5] != "true" {
		t.Fatalf("runtime calls: %q", results)
	}
	// The new page: the same SCO, its second attempt, nothing of the first.
	p.until("quiz again", on2004("quiz.html"), &ok)
	var again []string
	p.eval("second attempt", `(function (api) {
		return [api.Initialize(''), api.GetValue('cmi.entry'), api.GetValue('cmi.suspend_data'), api.GetValue('cmi.success_status')];
	})(F.player.API_1484_11)`, &again)
	if len(again) != 4 || again[1] != "ab-initio" || again[2] != "" || again[3] != "unknown" {
		t.Fatalf("second attempt: %q", again)
	}
	tracks := p.env.Call(t, 200, "GET", "/api/courses/"+id(p.course.course)+"/scorm", p.learner.Token, nil)
	if tracks.Number("data.0.attempt") != 2 {
		t.Fatalf("tracks after the retry: %s", tracks.Body)
	}
	p.eval("mark", mark, &ok)
	p.eval("quiz passes", `(function (api) {
		return [api.SetValue('cmi.completion_status', 'completed'), api.SetValue('cmi.success_status', 'passed'),
			api.SetValue('adl.nav.request', 'continue'), api.Terminate('')];
	})(F.player.API_1484_11)`, &results)
	p.until("summary", on2004("summary.html"), &ok)
	p.completes("the quiz passed", topic)
	p.eval("summary ends", `(function (api) { return [api.Initialize(''), api.SetValue('cmi.completion_status', 'completed'),
		api.Terminate('')]; })(F.player.API_1484_11)`, &results)
	p.until("the end", `/You may close this activity/.test(F.player.document.getElementById('notice').textContent) &&
		F.sco.location.pathname.endsWith('/summary.html')`, &ok)
}
