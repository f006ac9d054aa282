package scorm_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/scorm"
)

// forcedSequential is a package built as Rustici's "Sequencing Forced
// Sequential Order" golf examples are: every SCO writes its primary
// objective to a global objective, and each later SCO is disabled until
// the global objective of the one before it reads back satisfied (3rd
// edition, imsss:mapInfo) or completed (4th edition, adlseq:objectives).
// The common rules come from the sequencing collection.
func forcedSequential(t testing.TB, edition4 bool) []byte {
	t.Helper()
	ids := []string{"playing", "etiquette", "handicapping"}
	const prefix = "com.example.forcedsequential."
	var items, res strings.Builder
	files := map[string]string{}
	for i, id := range ids {
		var rules, objectives, adl string
		if edition4 {
			objectives = `<imsss:objectives><imsss:primaryObjective objectiveID="` + id + `_completed"/>`
			adl = `<adlseq:objectives><adlseq:objective objectiveID="` + id + `_completed"><adlseq:mapInfo targetObjectiveID="` +
				prefix + id + `_completed" readCompletionStatus="true" writeCompletionStatus="true"/></adlseq:objective>`
		} else {
			objectives = `<imsss:objectives><imsss:primaryObjective objectiveID="` + id + `_satisfied"><imsss:mapInfo targetObjectiveID="` +
				prefix + id + `_satisfied" readSatisfiedStatus="true" writeSatisfiedStatus="true"/></imsss:primaryObjective>`
		}
		if i > 0 {
			prev := ids[i-1]
			if edition4 {
				rules = `<imsss:sequencingRules><imsss:preConditionRule><imsss:ruleConditions conditionCombination="any">` +
					`<imsss:ruleCondition referencedObjective="previous_sco_completed" operator="not" condition="completed"/>` +
					`<imsss:ruleCondition referencedObjective="previous_sco_completed" operator="not" condition="activityProgressKnown"/>` +
					`</imsss:ruleConditions><imsss:ruleAction action="disabled"/></imsss:preConditionRule></imsss:sequencingRules>`
				objectives += `<imsss:objective objectiveID="previous_sco_completed"/>`
				adl += `<adlseq:objective objectiveID="previous_sco_completed"><adlseq:mapInfo targetObjectiveID="` + prefix + prev +
					`_completed" readCompletionStatus="true" writeCompletionStatus="false"/></adlseq:objective>`
			} else {
				rules = `<imsss:sequencingRules><imsss:preConditionRule><imsss:ruleConditions conditionCombination="any">` +
					`<imsss:ruleCondition referencedObjective="previous_sco_satisfied" operator="not" condition="satisfied"/>` +
					`<imsss:ruleCondition referencedObjective="previous_sco_satisfied" operator="not" condition="objectiveStatusKnown"/>` +
					`</imsss:ruleConditions><imsss:ruleAction action="disabled"/></imsss:preConditionRule></imsss:sequencingRules>`
				objectives += `<imsss:objective objectiveID="previous_sco_satisfied"><imsss:mapInfo targetObjectiveID="` + prefix + prev +
					`_satisfied" readSatisfiedStatus="true" writeSatisfiedStatus="false"/></imsss:objective>`
			}
		}
		objectives += `</imsss:objectives>`
		if adl != "" {
			adl += `</adlseq:objectives>`
		}
		fmt.Fprintf(&items, `<item identifier="%s_item" identifierref="%s_resource"><title>%s</title>`+
			`<imsss:sequencing IDRef="common_seq_rules">%s%s%s</imsss:sequencing></item>`, id, id, id, rules, objectives, adl)
		fmt.Fprintf(&res, `<resource identifier="%s_resource" type="webcontent" adlcp:scormType="sco" href="shared/launchpage.html?content=%s">`+
			`<file href="shared/launchpage.html"/></resource>`, id, id)
	}
	version := "2004 3rd Edition"
	if edition4 {
		version = "2004 4th Edition"
	}
	files["shared/launchpage.html"] = "<!doctype html><title>Golf</title><p>Golf"
	files["imsmanifest.xml"] = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.forcedsequential" version="1" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3" xmlns:adlseq="http://www.adlnet.org/xsd/adlseq_v1p3"
  xmlns:adlnav="http://www.adlnet.org/xsd/adlnav_v1p3" xmlns:imsss="http://www.imsglobal.org/xsd/imsss">
  <metadata><schema>ADL SCORM</schema><schemaversion>` + version + `</schemaversion></metadata>
  <organizations default="golf"><organization identifier="golf" adlseq:objectivesGlobalToSystem="false">
    <title>Golf Explained - Forced Sequential Order</title>` + items.String() + `
    <imsss:sequencing><imsss:controlMode choice="true" flow="true"/></imsss:sequencing>
  </organization></organizations>
  <resources>` + res.String() + `</resources>
  <imsss:sequencingCollection><imsss:sequencing ID="common_seq_rules">
    <imsss:rollupRules objectiveMeasureWeight="0"/>
    <imsss:deliveryControls completionSetByContent="true" objectiveSetByContent="true"/>
  </imsss:sequencing></imsss:sequencingCollection>
</manifest>`
	return zipOf(t, files)
}

// played is a SCORM topic of a package for the learner, through the
// typed client.
type played struct {
	t       *testing.T
	w       *world
	learner *client.Client
	pkg     *client.ScormPackage
	scos    map[string]int64
}

func playPackage(t *testing.T, env *apitest.Env, data []byte) (*played, int64) {
	t.Helper()
	w := newWorld(t, env)
	tutor := env.UserClient(w.tutor)
	pkg := apitest.Must(tutor.PostAdminScormUpload(t.Context(), client.PostAdminScormUploadForm{
		Package: &client.File{Name: "package.zip", Content: bytes.NewReader(data)}}))(t)
	p := &played{t: t, w: w, learner: env.UserClient(w.learner), pkg: pkg, scos: map[string]int64{}}
	for _, s := range pkg.Scos {
		p.scos[s.Identifier] = s.ID
	}
	return p, p.topic(env, pkg.Scos[0].ID)
}

// topic creates a topic of the package playing the SCO.
func (p *played) topic(env *apitest.Env, sco int64) int64 {
	p.t.Helper()
	topic := apitest.Must(env.UserClient(p.w.tutor).PostAdminTopics(p.t.Context(), client.PostAdminTopicsBody{Lesson: p.w.lesson,
		Title: "Package", Topicable: scorm.Class, Package: &p.pkg.ID, Sco: sco}))(p.t)
	return topic.ID
}

func (p *played) launch(id string, topic int64) (*client.ScoLaunch, error) {
	return p.learner.PostScormLaunchID(p.t.Context(), p.scos[id], client.LaunchInputBody{TopicID: topic})
}

func (p *played) commit(l *client.ScoLaunch, seq int64, cmi map[string]any) {
	p.t.Helper()
	apitest.Must(p.learner.PostScormTracksIDCommit(p.t.Context(), l.Sco.ID,
		client.PostScormTracksIDCommitParams{XLmsTrackingToken: l.Token}, client.CommitInput{Seq: seq, Cmi: cmi}))(p.t)
}

// TestForcedSequentialObjectiveMaps: SCOs of a package that reads the
// previous SCO's result through a global objective unlock one after the
// other as each is finished, in the 3rd edition (satisfied status,
// imsss:mapInfo) and the 4th (completion status, adlseq:objectives):
// continue reaches the next SCO, and the one after it stays disabled
// until then.
func TestForcedSequentialObjectiveMaps(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		for _, edition4 := range []bool{false, true} {
			p, topic := playPackage(t, env, forcedSequential(t, edition4))
			e := apitest.Refused(t, func() error { _, err := p.launch("etiquette_item", topic); return err }(), 403)
			if !apitest.Says(e, "is not available now") {
				t.Fatalf("etiquette before playing: %v", e)
			}
			first := apitest.Must(p.launch("playing_item", topic))(t)
			finished := map[string]any{"cmi.completion_status": "completed", "cmi.success_status": "passed", "cmi.exit": "normal"}
			if edition4 {
				// The 4th edition maps completion: the SCO need not pass.
				finished = map[string]any{"cmi.completion_status": "completed", "cmi.exit": "normal"}
			}
			p.commit(first, 1, finished)
			next := apitest.Must(p.learner.PostScormTracksIDNavigate(t.Context(), first.Sco.ID,
				client.PostScormTracksIDNavigateParams{XLmsTrackingToken: first.Token}, client.NavigateInputBody{Action: "continue"}))(t)
			if next.Sco.Identifier != "etiquette_item" {
				t.Fatalf("edition 4 %v: continue reached %+v, want etiquette_item", edition4, next)
			}
			// The one after is still locked; a direct launch of the
			// second works now.
			apitest.Refused(t, func() error { _, err := p.launch("handicapping_item", topic); return err }(), 403)
			second := apitest.Must(p.launch("etiquette_item", topic))(t)
			p.commit(second, 1, finished)
			apitest.Must(p.launch("handicapping_item", topic))(t)
		}
	})
}

// TestGlobalObjectiveFailedKeepsNextLocked: a SCO that has no result yet
// writes nothing to its global objective, and a failed one writes not
// satisfied: the next SCO stays disabled until the SCO passes.
func TestGlobalObjectiveFailedKeepsNextLocked(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		p, topic := playPackage(t, env, forcedSequential(t, false))
		first := apitest.Must(p.launch("playing_item", topic))(t)
		p.commit(first, 1, map[string]any{"cmi.completion_status": "incomplete", "cmi.exit": "suspend"})
		apitest.Refused(t, func() error { _, err := p.launch("etiquette_item", topic); return err }(), 403)
		p.commit(first, 2, map[string]any{"cmi.completion_status": "completed", "cmi.success_status": "failed", "cmi.exit": "normal"})
		apitest.Refused(t, func() error { _, err := p.launch("etiquette_item", topic); return err }(), 403)
		p.commit(first, 3, map[string]any{"cmi.completion_status": "completed", "cmi.success_status": "passed", "cmi.exit": "normal"})
		apitest.Must(p.launch("etiquette_item", topic))(t)
	})
}

// TestPrerequisitesAcrossTopics: two topics of a course play module 1 and
// module 2 of one package; module 2's 1.2 prerequisite (module 1) is met
// once module 1 is completed in its own topic.
func TestPrerequisitesAcrossTopics(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		p, first := playPackage(t, env, fixture(t, "PrerequisitesTest_SCORM12.zip"))
		second := p.topic(env, p.scos["module2"])
		apitest.Refused(t, func() error { _, err := p.launch("module2", second); return err }(), 403)
		l := apitest.Must(p.launch("module1", first))(t)
		p.commit(l, 1, map[string]any{"cmi.core.lesson_status": "completed"})
		apitest.Must(p.launch("module2", second))(t)
		// A topic of another course does not count: there module2 is
		// still locked for the same learner.
		other := newWorld(t, env)
		env.Count(t, `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3) RETURNING 1`,
			other.course, p.w.learner.ID, env.Clock.Now())
		topic := apitest.Must(env.UserClient(other.tutor).PostAdminTopics(t.Context(), client.PostAdminTopicsBody{Lesson: other.lesson,
			Title: "Elsewhere", Topicable: scorm.Class, Package: &p.pkg.ID, Sco: p.scos["module2"]}))(t)
		apitest.Refused(t, func() error { _, err := p.launch("module2", topic.ID); return err }(), 403)
	})
}

// TestTrackingTokenMissing: a tracking route without the token answers
// 401, as with a wrong one.
func TestTrackingTokenMissing(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		p, topic := playPackage(t, env, fixture(t, "RuntimeBasicCalls_SCORM20043rdEdition.zip"))
		l := apitest.Must(p.launch(p.pkg.Scos[0].Identifier, topic))(t)
		ctx := t.Context()
		_, err := p.learner.GetScormTracksID(ctx, l.Sco.ID, client.GetScormTracksIDParams{})
		apitest.Refused(t, err, 401)
		_, err = p.learner.PostScormTracksIDCommit(ctx, l.Sco.ID, client.PostScormTracksIDCommitParams{},
			client.CommitInput{Seq: 1, Cmi: map[string]any{}})
		apitest.Refused(t, err, 401)
		_, err = p.learner.PostScormTracksIDNavigate(ctx, l.Sco.ID, client.PostScormTracksIDNavigateParams{},
			client.NavigateInputBody{Action: "exit"})
		apitest.Refused(t, err, 401)
		_, err = p.learner.GetScormTracksID(ctx, l.Sco.ID, client.GetScormTracksIDParams{XLmsTrackingToken: l.Token + "x"})
		apitest.Refused(t, err, 401)
	})
}

// TestCommitNamesFieldsAsSent: a commit whose CMI elements were sent
// without the cmi wrapper is refused naming each element as sent, and
// the missing cmi (raw: the typed client cannot send such a body); so are
// wrong elements inside cmi, each of them.
func TestCommitNamesFieldsAsSent(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		p, topic := playPackage(t, env, fixture(t, "PrerequisitesTest_SCORM12.zip"))
		l := apitest.Must(p.launch("module1", topic))(t)
		s := session{sco: l.Sco.ID, token: l.Token}
		res := s.do(env, "POST", "/commit", map[string]any{"seq": 1, "cmi.core.exit": "suspend",
			"cmi.core.lesson_status": "incomplete", "cmi.suspend_data": "x"})
		errs, _ := res.Get("errors").(map[string]any)
		if res.Status != 422 || len(errs) != 4 {
			t.Fatalf("commit without the wrapper: %d %s", res.Status, res.Body)
		}
		for _, k := range []string{"cmi", "cmi.core.exit", "cmi.core.lesson_status", "cmi.suspend_data"} {
			if _, ok := errs[k]; !ok {
				t.Errorf("errors lack %q: %s", k, res.Body)
			}
		}
		// Elements inside cmi: every wrong one is named by its key as
		// sent.
		_, err := s.send(t, env, client.CommitInput{Seq: 1, Cmi: map[string]any{"cmi.core.lesson_status": map[string]any{"a": 1},
			"core.exit": "suspend", "cmi.suspend_data": "x"}})
		if e := apitest.Refused(t, err, 422); len(e.Errors) != 2 || e.Errors["cmi.core.lesson_status"] == nil || e.Errors["core.exit"] == nil {
			t.Errorf("wrong elements in cmi: %v", e)
		}
		_, err = s.send(t, env, client.CommitInput{Seq: 0, Cmi: map[string]any{}})
		if e := apitest.Refused(t, err, 422); e.Errors["seq"] == nil {
			t.Errorf("seq 0: %v", e)
		}
		if res := s.do(env, "POST", "/commit", "not json"); res.Status != 400 {
			t.Errorf("not JSON: %d %s", res.Status, res.Body)
		}
		if res := s.commit(t, env, 1, map[string]any{"cmi.core.lesson_status": "incomplete"}); !res.Applied {
			t.Errorf("a good commit: %+v", res)
		}
	})
}

// measured is a SCORM 2004 package whose later SCOs read the pretest's
// score through a global objective: the pretest writes its normalized
// measure (cmi.score.scaled) and nothing else; the lesson is disabled
// until that measure is above 0.7 (objectiveMeasureGreaterThan on the
// objective reading it), the summary until an objective satisfied by
// that measure (minNormalizedMeasure 0.8) is satisfied.
func measured(t testing.TB) []byte {
	t.Helper()
	const target = "com.example.measured.pretest_score"
	read := `<imsss:mapInfo targetObjectiveID="` + target + `" readSatisfiedStatus="true" readNormalizedMeasure="true"/>`
	disabledUnless := func(objective, condition, threshold string) string {
		return `<imsss:sequencingRules><imsss:preConditionRule><imsss:ruleConditions>` +
			`<imsss:ruleCondition referencedObjective="` + objective + `" operator="not" condition="` + condition + `"` + threshold + `/>` +
			`</imsss:ruleConditions><imsss:ruleAction action="disabled"/></imsss:preConditionRule></imsss:sequencingRules>`
	}
	items := map[string]string{
		"pretest": `<imsss:objectives><imsss:primaryObjective objectiveID="pretest_score"><imsss:mapInfo targetObjectiveID="` + target +
			`" readSatisfiedStatus="false" readNormalizedMeasure="false" writeNormalizedMeasure="true"/></imsss:primaryObjective></imsss:objectives>`,
		"lesson": disabledUnless("pretest_score", "objectiveMeasureGreaterThan", ` measureThreshold="0.7"`) +
			`<imsss:objectives><imsss:primaryObjective objectiveID="lesson_done"/><imsss:objective objectiveID="pretest_score">` +
			read + `</imsss:objective></imsss:objectives>`,
		"summary": disabledUnless("pretest_passed", "satisfied", "") +
			`<imsss:objectives><imsss:primaryObjective objectiveID="summary_done"/><imsss:objective objectiveID="pretest_passed" satisfiedByMeasure="true">` +
			`<imsss:minNormalizedMeasure>0.8</imsss:minNormalizedMeasure>` + read + `</imsss:objective></imsss:objectives>`,
	}
	var body, res strings.Builder
	for _, id := range []string{"pretest", "lesson", "summary"} {
		fmt.Fprintf(&body, `<item identifier="%s" identifierref="%s_res"><title>%s</title><imsss:sequencing>%s</imsss:sequencing></item>`,
			id, id, id, items[id])
		fmt.Fprintf(&res, `<resource identifier="%s_res" type="webcontent" adlcp:scormType="sco" href="%s.html"><file href="%s.html"/></resource>`,
			id, id, id)
	}
	return zipOf(t, map[string]string{
		"pretest.html": "<!doctype html><title>Pretest</title>", "lesson.html": "<!doctype html><title>Lesson</title>",
		"summary.html": "<!doctype html><title>Summary</title>",
		"imsmanifest.xml": `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.measured" version="1" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3" xmlns:imsss="http://www.imsglobal.org/xsd/imsss">
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 3rd Edition</schemaversion></metadata>
  <organizations default="course"><organization identifier="course"><title>Measured</title>` + body.String() + `
    <imsss:sequencing><imsss:controlMode choice="true" flow="true"/></imsss:sequencing>
  </organization></organizations>
  <resources>` + res.String() + `</resources>
</manifest>`,
	})
}

// TestGlobalObjectiveMeasure: the normalized measure a SCO writes to a
// global objective is read by the objectives of other SCOs, played by
// other topics of the course: a measure condition and an objective
// satisfied by measure decide what is disabled. The global objective is
// the learner's own: another learner of the course finds both locked.
func TestGlobalObjectiveMeasure(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		p, pretestTopic := playPackage(t, env, measured(t))
		lessonTopic, summaryTopic := p.topic(env, p.scos["lesson"]), p.topic(env, p.scos["summary"])
		locked := func(who *client.Client, id string, topic int64) {
			t.Helper()
			_, err := who.PostScormLaunchID(t.Context(), p.scos[id], client.LaunchInputBody{TopicID: topic})
			if e := apitest.Refused(t, err, 403); !apitest.Says(e, "is not available now") {
				t.Errorf("%s: %v", id, e)
			}
		}
		locked(p.learner, "lesson", lessonTopic)
		pretest := apitest.Must(p.launch("pretest", pretestTopic))(t)
		score := func(seq int64, scaled string) {
			t.Helper()
			p.commit(pretest, seq, map[string]any{"cmi.score.scaled": scaled, "cmi.completion_status": "completed", "cmi.exit": "suspend"})
		}
		score(1, "0.6")
		locked(p.learner, "lesson", lessonTopic)
		locked(p.learner, "summary", summaryTopic)
		score(2, "0.75")
		apitest.Must(p.launch("lesson", lessonTopic))(t)
		locked(p.learner, "summary", summaryTopic)
		score(3, "0.9")
		apitest.Must(p.launch("summary", summaryTopic))(t)

		env.Count(t, `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3) RETURNING 1`,
			p.w.course, p.w.outsider.ID, env.Clock.Now())
		other := env.UserClient(p.w.outsider)
		locked(other, "lesson", lessonTopic)
		locked(other, "summary", summaryTopic)
	})
}
