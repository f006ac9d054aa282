package manifest_test

import (
	"archive/zip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/scorm/manifest"
)

// open reads a fixture zip's manifest and file names.
func open(t testing.TB, rel string) ([]byte, func(string) bool) {
	t.Helper()
	zr, err := zip.OpenReader(fixtures.Path(t, "scorm/"+rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Close() })
	names := map[string]bool{}
	var data []byte
	for _, f := range zr.File {
		names[f.Name] = true
		if f.Name == "imsmanifest.xml" {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	return data, func(n string) bool { return names[n] }
}

func parse(t *testing.T, rel string) (*manifest.Manifest, error) {
	data, has := open(t, rel)
	return manifest.Parse(data, has)
}

func TestGolf12(t *testing.T) {
	m, err := parse(t, "RuntimeBasicCalls_SCORM12.zip")
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != manifest.V12 || m.Title != "Golf Explained - Run-time Basic Calls" || m.Identifier != "com.scorm.golfsamples.runtime.basicruntime.12" {
		t.Fatalf("manifest %+v", m)
	}
	scos := m.Launchables()
	if len(scos) != 1 || scos[0].Identifier != "item_1" || scos[0].Launch != "shared/launchpage.html" || scos[0].ScormType != "sco" || scos[0].Title != "Golf Explained" {
		t.Fatalf("launchables %+v", scos)
	}
	if len(m.Warnings) != 0 {
		t.Errorf("warnings %q", m.Warnings)
	}
}

func TestGolf2004(t *testing.T) {
	m, err := parse(t, "RuntimeBasicCalls_SCORM20043rdEdition.zip")
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != manifest.V2004Ed3 || !manifest.Is2004(m.Version) {
		t.Fatalf("version %q", m.Version)
	}
	scos := m.Launchables()
	if len(scos) != 1 || scos[0].ScormType != "sco" || scos[0].Launch != "shared/launchpage.html" {
		t.Fatalf("launchables %+v", scos)
	}
	dc := scos[0].Sequencing.DeliveryControls
	if dc == nil || dc.CompletionSetByContent == nil || !*dc.CompletionSetByContent || !*dc.ObjectiveSetByContent {
		t.Errorf("item sequencing %+v", scos[0].Sequencing)
	}
	org := m.Default()
	cm := org.Sequencing.ControlMode
	if cm == nil || !*cm.Choice || !*cm.Flow || org.ObjectivesGlobalToSystem == nil || *org.ObjectivesGlobalToSystem {
		t.Errorf("organization sequencing %+v", org)
	}
}

func TestMultiSCO(t *testing.T) {
	m, err := parse(t, "multi-sco-scorm12.zip")
	if err != nil {
		t.Fatal(err)
	}
	scos := m.Launchables()
	if len(scos) != 18 {
		t.Fatalf("%d launchables", len(scos))
	}
	if len(m.Default().Items) != 4 || m.Default().Items[0].Launch != "" {
		t.Errorf("aggregations %+v", m.Default().Items)
	}
	quiz := scos[5]
	if quiz.Identifier != "playing_quiz_item" || quiz.Launch != "shared/assessmenttemplate.html?questions=Playing" ||
		quiz.File != "shared/assessmenttemplate.html" || quiz.ScormType != "asset" {
		t.Errorf("quiz %+v", quiz)
	}
	r := m.Resources[0]
	if r.Identifier != "playing_playing_resource" || len(r.Dependencies) != 1 || r.Dependencies[0] != "common_files" {
		t.Errorf("resource %+v", r)
	}
}

func TestPrerequisites(t *testing.T) {
	m, err := parse(t, "PrerequisitesTest_SCORM12.zip")
	if err != nil {
		t.Fatal(err)
	}
	scos := m.Launchables()
	if len(scos) != 4 {
		t.Fatalf("%d scos", len(scos))
	}
	m1, m2, m3, m4 := scos[0], scos[1], scos[2], scos[3]
	if m1.MasteryScore == nil || *m1.MasteryScore != 80 || m1.MaxTimeAllowed != "02:30:00" || m1.Prerequisites != "" {
		t.Errorf("module1 %+v", m1)
	}
	if m2.DataFromLMS != "custom_data_for_module2" || m2.Prerequisites != "module1" {
		t.Errorf("module2 %+v", m2)
	}
	if m3.TimeLimitAction != "exit,message" || m3.Prerequisites != "module1 AND module2" {
		t.Errorf("module3 %+v", m3)
	}
	if *m4.MasteryScore != 90 || m4.Prerequisites != "(module1 AND module2) OR module3" {
		t.Errorf("module4 %+v", m4)
	}
	status := map[string]string{"module1": "completed", "module2": "incomplete", "module3": "passed"}
	get := func(id string) string { return status[id] }
	for expr, want := range map[string]bool{
		"module1": true, "module2": false, "module1 AND module2": false, "(module1 AND module2) OR module3": true,
		"~module2": true, "module1 & ~module2": true, "module2 = incomplete": true, "module2 <> i": false,
		"2*{module1,module2,module3}": true, "3*{module1,module2,module3}": false, "module9 = not attempted": false,
		"module1|module2": true,
	} {
		p, err := manifest.ParsePrerequisite(expr)
		if err != nil {
			t.Errorf("%q: %v", expr, err)
			continue
		}
		if got := p.Met(get); got != want {
			t.Errorf("%q met = %v, want %v", expr, got, want)
		}
	}
	for _, bad := range []string{"", "(module1", "module1 AND", "2*{a,", "a = maybe", "&"} {
		if _, err := manifest.ParsePrerequisite(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestInvalidFixtures follows invalid/expected.json: refused where the
// defect would hurt a learner, tolerated with a warning otherwise.
func TestInvalidFixtures(t *testing.T) {
	refused := map[string]string{
		"MalformedXml_SCORM12.zip":                            "not well-formed XML",
		"MissingLaunchUrl_SCORM12.zip":                        "missing its required launch URL",
		"MissingRequiredFields_SCORM12.zip":                   "missing its required <title> element",
		"InvalidMissingOrgIdentifier_SCORM20043rdEdition.zip": "has no identifier attribute",
		"InvalidFileReferences_SCORM12.zip":                   `launch file "content/nonexistent.html" of item "item_1" is not in the package`,
	}
	for name, want := range refused {
		t.Run(name, func(t *testing.T) {
			_, err := parse(t, "invalid/"+name)
			var me *manifest.Error
			if !errors.As(err, &me) || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want one containing %q", err, want)
			}
		})
	}
	t.Run("ItemWithNonExistentResourceId_SCORM12.zip", func(t *testing.T) {
		m, err := parse(t, "invalid/ItemWithNonExistentResourceId_SCORM12.zip")
		if err != nil {
			t.Fatal(err)
		}
		scos := m.Launchables()
		if len(scos) != 1 || scos[0].Identifier != "item_2" || scos[0].Launch != "content/item2.html" {
			t.Fatalf("launchables %+v", scos)
		}
		if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], `"non_existent_resource"`) {
			t.Errorf("warnings %q", m.Warnings)
		}
	})
}

func TestBaseParametersAndPaths(t *testing.T) {
	doc := `<manifest identifier="m" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3">
	<metadata><schemaversion>2004 4th Edition</schemaversion></metadata>
	<organizations default="o"><organization identifier="o"><title>T</title>
	  <item identifier="a" identifierref="r1" parameters="?page=2#top"><title>A</title>
	    <adlcp:dataFromLMS>hello</adlcp:dataFromLMS><adlcp:timeLimitAction>continue,no message</adlcp:timeLimitAction>
	    <adlcp:completionThreshold completedByMeasure="true" minProgressMeasure="0.8"/></item>
	  <item identifier="b" identifierref="r2" isvisible="false"><title>B</title></item>
	</organization></organizations>
	<resources xml:base="content/"><resource identifier="r1" type="webcontent" adlcp:scormType="sco" xml:base="unit%201/" href="start.html?lang=en"/>
	  <resource identifier="r2" type="webcontent" adlcp:scormType="asset" href="../b.html"/></resources></manifest>`
	files := map[string]bool{"content/unit 1/start.html": true, "b.html": true}
	m, err := manifest.Parse([]byte(doc), func(n string) bool { return files[n] })
	if err != nil {
		t.Fatal(err)
	}
	scos := m.Launchables()
	if m.Version != manifest.V2004Ed4 || len(scos) != 2 {
		t.Fatalf("%+v", m)
	}
	a := scos[0]
	if a.File != "content/unit 1/start.html" || a.Launch != "content/unit%201/start.html?lang=en&page=2#top" {
		t.Errorf("a %+v", a)
	}
	if a.DataFromLMS != "hello" || a.TimeLimitAction != "continue,no message" || a.CompletionThreshold == nil ||
		a.CompletionThreshold.MinProgressMeasure != 0.8 || !*a.CompletionThreshold.CompletedByMeasure {
		t.Errorf("a %+v", a)
	}
	if scos[1].File != "b.html" || scos[1].Visible {
		t.Errorf("b %+v", scos[1])
	}

	escape := strings.Replace(doc, `href="../b.html"`, `href="../../etc/passwd"`, 1)
	if _, err := manifest.Parse([]byte(escape), func(string) bool { return true }); err == nil || !strings.Contains(err.Error(), "leaves the package") {
		t.Errorf("escape: %v", err)
	}
	external := strings.Replace(doc, `href="../b.html"`, `href="https://example.com/x.html"`, 1)
	if _, err := manifest.Parse([]byte(external), func(string) bool { return true }); err == nil || !strings.Contains(err.Error(), "external address") {
		t.Errorf("external: %v", err)
	}
	deep := "<manifest>" + strings.Repeat("<a>", 200) + strings.Repeat("</a>", 200) + "</manifest>"
	if _, err := manifest.Parse([]byte(deep), func(string) bool { return true }); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, rel := range []string{"RuntimeBasicCalls_SCORM12.zip", "RuntimeBasicCalls_SCORM20043rdEdition.zip",
		"multi-sco-scorm12.zip", "PrerequisitesTest_SCORM12.zip"} {
		if fixtures.Has(f, "scorm/"+rel) {
			data, _ := open(f, rel)
			f.Add(data)
		}
	}
	f.Add([]byte(`<manifest><organizations><organization identifier="o"><title>t</title><item identifier="i" identifierref="r"/></organization></organizations><resources><resource identifier="r" href="a.html"/></resources></manifest>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := manifest.Parse(data, func(n string) bool { return strings.HasSuffix(n, ".html") })
		if err != nil {
			return
		}
		for _, it := range m.Launchables() {
			if it.File == "" || strings.HasPrefix(it.File, "/") || strings.HasPrefix(it.File, "../") {
				t.Fatalf("unsafe launch file %q", it.File)
			}
		}
	})
}

func FuzzPrerequisite(f *testing.F) {
	for _, s := range []string{"a", "a & b", "(a|b)&~c", "2*{a,b,c}", "a = passed", "a <> \"not attempted\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := manifest.ParsePrerequisite(s)
		if err == nil {
			p.Met(func(string) string { return "completed" })
		}
	})
}
