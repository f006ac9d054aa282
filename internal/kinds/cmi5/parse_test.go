package cmi5

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/fixtures"
)

func TestFixturesImport(t *testing.T) {
	for _, name := range []string{"cmi5/single_au_basic_responsive.zip", "cmi5/multi_au_framed.zip"} {
		data := fixtures.Read(t, name)
		course, pkg, err := OpenZip(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(course.AUs()) == 0 || pkg == nil || course.ID == "" || Text(course.Title) == "" {
			t.Fatalf("%s: parsed %+v", name, course)
		}
	}
	data := fixtures.Read(t, "cmi5/multi_au_framed.zip")
	course, _, _ := OpenZip(bytes.NewReader(data), int64(len(data)))
	aus := course.AUs()
	if len(aus) != 8 || aus[0].MoveOn != CompletedOrPassed || aus[0].URL != "index.html?pages=1&complete=launch" {
		t.Fatalf("multi AU: %d AUs, first %+v", len(aus), aus[0])
	}
}

func TestSpecExamples(t *testing.T) {
	simple := fixtures.Read(t, "cmi5/spec/simple-cmi5.xml")
	if _, err := Parse(simple, nil); err != nil {
		t.Fatalf("simple: %v", err)
	}
	complex := fixtures.Read(t, "cmi5/spec/complex-cmi5.xml")
	c, err := Parse(complex, nil)
	if err != nil {
		t.Fatalf("complex: %v", err)
	}
	if n := len(c.AUs()); n != 14 {
		t.Fatalf("complex: %d AUs, want 14", n)
	}
	nested := false
	for _, blocks := range c.Blocks() {
		nested = nested || len(blocks) > 1
	}
	if !nested || len(c.Objectives) == 0 {
		t.Fatalf("complex: nested blocks %v, objectives %d", nested, len(c.Objectives))
	}
	extended := fixtures.Read(t, "cmi5/spec/extended-cmi5.xml")
	e, err := Parse(extended, nil)
	if err != nil {
		t.Fatalf("extended: %v", err)
	}
	au := e.AUs()[0]
	if len(au.Extensions) != 5 || !strings.Contains(au.Extensions[0], `kw:keyword idref="http://words.example/earth_science"`) ||
		len(e.Extensions) != 1 || !strings.Contains(e.Extensions[0], "Plate Tectonics") {
		t.Fatalf("extensions not kept: AU %q, course %q", au.Extensions, e.Extensions)
	}
}

// doc builds a course structure around the AUs and blocks given.
func doc(body string) []byte {
	return []byte(`<?xml version="1.0" encoding="utf-8"?>
<courseStructure xmlns="` + Namespace + `" xmlns:x="urn:example:ext">
  <course id="https://example.com/course"><title><langstring lang="en">C</langstring></title>
    <description><langstring>D</langstring></description></course>
` + body + `
</courseStructure>`)
}

func au(id, attrs, inner string) string {
	return `<au id="` + id + `" ` + attrs + `><title><langstring>T</langstring></title><description><langstring>D</langstring></description>` +
		inner + `</au>`
}

// TestInvalidStructures refuses each kind of invalid structure, naming
// the problem.
func TestInvalidStructures(t *testing.T) {
	u := `<url>https://cdn.example.com/a.html</url>`
	cases := []struct {
		name, xml, want string
	}{
		{"not XML", "<courseStructure", "not well-formed"},
		{"wrong root", `<course xmlns="` + Namespace + `"/>`, "root element must be courseStructure"},
		{"wrong namespace", `<courseStructure xmlns="urn:other"/>`, "root element must be courseStructure"},
		{"doctype", `<!DOCTYPE x [<!ENTITY a "b">]><courseStructure xmlns="` + Namespace + `"/>`, "DOCTYPE"},
		{"no AU", string(doc("")), "At least one au or block"},
		{"missing course", `<courseStructure xmlns="` + Namespace + `">` + au("https://e.com/a", "", u) + `</courseStructure>`, "course is missing"},
		{"course id missing", strings.Replace(string(doc(au("https://e.com/a", "", u))), ` id="https://example.com/course"`, "", 1), "id attribute is required"},
		{"id not IRI", string(doc(au("not an iri", "", u))), "not an absolute IRI"},
		{"duplicate AU id", string(doc(au("https://e.com/a", "", u) + au("https://e.com/a", "", u))), "already used"},
		{"AU id equals course id", string(doc(au("https://example.com/course", "", u))), "already used"},
		{"duplicate block id", string(doc(`<block id="https://e.com/b"><title><langstring>B</langstring></title><description><langstring>B</langstring></description>` +
			au("https://e.com/a", "", u) + `</block><block id="https://e.com/b"><title><langstring>B</langstring></title><description><langstring>B</langstring></description>` +
			au("https://e.com/c", "", u) + `</block>`)), "already used"},
		{"empty block", string(doc(`<block id="https://e.com/b"><title><langstring>B</langstring></title><description><langstring>B</langstring></description></block>`)), "At least one au or block"},
		{"missing title", string(doc(`<au id="https://e.com/a"><description><langstring>D</langstring></description>` + u + `</au>`)), "title is missing"},
		{"title without langstring", string(doc(`<au id="https://e.com/a"><title/><description><langstring>D</langstring></description>` + u + `</au>`)), "At least one langstring"},
		{"bad lang", string(doc(au("https://e.com/a", "", u))[:0]) + string(doc(strings.Replace(au("https://e.com/a", "", u), "<langstring>T", `<langstring lang="en us">T`, 1))), "not a language tag"},
		{"missing url", string(doc(au("https://e.com/a", "", ""))), "url is missing"},
		{"empty url", string(doc(au("https://e.com/a", "", "<url> </url>"))), "url is empty"},
		{"relative url without package", string(doc(au("https://e.com/a", "", "<url>index.html</url>"))), "is relative"},
		{"non-http url", string(doc(au("https://e.com/a", "", "<url>ftp://e.com/a.html</url>"))), "not an http or https URL"},
		{"launch parameter in url", string(doc(au("https://e.com/a", "", "<url>https://e.com/a.html?x=1&amp;endpoint=y</url>"))), "launch parameter endpoint"},
		{"registration in url", string(doc(au("https://e.com/a", "", "<url>https://e.com/a.html?registration=1</url>"))), "launch parameter registration"},
		{"bad moveOn", string(doc(au("https://e.com/a", `moveOn="Done"`, u))), "moveOn"},
		{"masteryScore above 1", string(doc(au("https://e.com/a", `masteryScore="1.5"`, u))), "outside 0 to 1"},
		{"masteryScore below 0", string(doc(au("https://e.com/a", `masteryScore="-0.1"`, u))), "outside 0 to 1"},
		{"masteryScore not a number", string(doc(au("https://e.com/a", `masteryScore="high"`, u))), "not a decimal"},
		{"bad launchMethod", string(doc(au("https://e.com/a", `launchMethod="Popup"`, u))), "launchMethod"},
		{"unknown attribute", string(doc(au("https://e.com/a", `colour="red"`, u))), "attribute colour is not allowed"},
		{"unknown cmi5 element", string(doc(au("https://e.com/a", "", u+"<score>1</score>"))), "score is not allowed"},
		{"launchParameters before url", string(doc(au("https://e.com/a", "", "<launchParameters>x</launchParameters>"+u))), "url is missing"},
		{"entitlementKey twice", string(doc(au("https://e.com/a", "", u+"<entitlementKey>a</entitlementKey><entitlementKey>b</entitlementKey>"))), "entitlementKey is not allowed"},
		{"cmi5 element after extension", string(doc(au("https://e.com/a", "", u+"<x:y/><launchParameters>p</launchParameters>"))), "after extension elements"},
		{"undeclared objective", string(doc(au("https://e.com/a", "", `<objectives><objective idref="https://e.com/o"/></objectives>`+u))), "not declared"},
		{"objective without id", strings.Replace(string(doc(au("https://e.com/a", "", u))), "</course>",
			"</course><objectives><objective><title><langstring>O</langstring></title><description><langstring>O</langstring></description></objective></objectives>", 1), "id attribute is required"},
		{"duplicate objective id", strings.Replace(string(doc(au("https://e.com/o", "", u))), "</course>",
			"</course><objectives><objective id=\"https://e.com/o\"><title><langstring>O</langstring></title><description><langstring>O</langstring></description></objective></objectives>", 1), "already used"},
		{"empty objectives", strings.Replace(string(doc(au("https://e.com/a", "", u))), "</course>", "</course><objectives/>", 1), "At least one objective"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.xml), nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("accepted or wrong error: %v", err)
			}
			if !strings.Contains(e.Error(), c.want) {
				t.Fatalf("error %q does not name %q", e.Error(), c.want)
			}
			ae := apperr.As(StructureError(err))
			if ae == nil || ae.Kind != apperr.Invalid || len(ae.Fields["package"]) != len(e.Problems) {
				t.Fatalf("not a 422 naming the problems: %+v", ae)
			}
		})
	}
}

func TestValidDetails(t *testing.T) {
	x := doc(au("https://e.com/a", `moveOn="CompletedAndPassed" masteryScore="0.8" launchMethod="OwnWindow" x:flag="1"`,
		`<url>https://cdn.example.com/a.html?lang=en</url><launchParameters>{"level":2}</launchParameters><entitlementKey>K-1</entitlementKey><x:note>n</x:note>`))
	c, err := Parse(x, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := c.AUs()[0]
	if a.MoveOn != CompletedAndPassed || a.MasteryScore == nil || *a.MasteryScore != 0.8 || a.LaunchMethod != OwnWindow ||
		a.LaunchParameters != `{"level":2}` || a.EntitlementKey != "K-1" || len(a.Extensions) != 1 {
		t.Fatalf("AU %+v", a)
	}
	def, _ := Parse(doc(au("https://e.com/a", "", `<url>https://cdn.example.com/a.html</url>`)), nil)
	if d := def.AUs()[0]; d.MoveOn != NotApplicable || d.LaunchMethod != AnyWindow || d.MasteryScore != nil {
		t.Fatalf("defaults %+v", d)
	}
}

// zipOf builds a zip of the files given.
func zipOf(t testing.TB, files map[string]string) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, body := range files {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(body))
	}
	w.Close()
	return buf.Bytes()
}

func TestZipPackages(t *testing.T) {
	ok := doc(au("https://e.com/a", "", `<url>web/index.html?x=1</url>`))
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"relative url missing from zip", map[string]string{"cmi5.xml": string(ok)}, "does not hold"},
		{"no cmi5.xml", map[string]string{"web/index.html": "x"}, "no cmi5.xml"},
		{"cmi5.xml not at root", map[string]string{"course/cmi5.xml": string(ok), "web/index.html": "x"}, "no cmi5.xml"},
		{"unsafe path", map[string]string{"cmi5.xml": string(ok), "web/index.html": "x", "../evil": "x"}, "unsafe path"},
		{"url leaves package", map[string]string{"cmi5.xml": string(doc(au("https://e.com/a", "", `<url>/etc/passwd</url>`)))}, "relative to the package root"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := zipOf(t, c.files)
			_, _, err := OpenZip(bytes.NewReader(data), int64(len(data)))
			ae := apperr.As(err)
			if ae == nil || ae.Kind != apperr.Invalid || !strings.Contains(fmt.Sprint(ae.Fields), c.want) {
				t.Fatalf("want 422 naming %q, got %v", c.want, err)
			}
		})
	}
	data := zipOf(t, map[string]string{"cmi5.xml": string(ok), "web/index.html": "x"})
	if _, _, err := OpenZip(bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenZip(bytes.NewReader([]byte("not a zip")), 9); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("not a zip: %v", err)
	}
}

// TestThousandAUs parses a course of a thousand AUs; the time is logged
// (the speed goal is BenchmarkParseThousandAUs).
func TestThousandAUs(t *testing.T) {
	start := time.Now()
	c, err := Parse(thousand(), nil)
	if err != nil || len(c.AUs()) != 1000 {
		t.Fatalf("%v", err)
	}
	t.Logf("1000 AUs parsed in %v", time.Since(start))
}

func thousand() []byte {
	var b strings.Builder
	for i := range 1000 {
		b.WriteString(au(fmt.Sprintf("https://e.com/au/%d", i), `moveOn="Completed"`, fmt.Sprintf(`<url>https://cdn.e.com/%d.html</url>`, i)))
	}
	return doc(b.String())
}

func BenchmarkParseThousandAUs(b *testing.B) {
	data := thousand()
	for b.Loop() {
		if _, err := Parse(data, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(doc(au("https://e.com/a", "", `<url>https://cdn.example.com/a.html</url>`)))
	f.Add([]byte(`<courseStructure xmlns="` + Namespace + `"/>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, func(string) bool { return true })
		if err == nil && (c == nil || len(c.AUs()) == 0) {
			t.Fatalf("accepted a course without AUs")
		}
		var e *Error
		if err != nil && (!errors.As(err, &e) || len(e.Problems) == 0) {
			t.Fatalf("error without problems: %v", err)
		}
	})
}
