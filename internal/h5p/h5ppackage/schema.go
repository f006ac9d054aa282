package h5ppackage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Patterns of the H5P format (h5p.org "Package Definition" and "Library
// Definition"; the same rules H5P core's validator applies).
var (
	machineNameRe = regexp.MustCompile(`^[\w\-.]{1,255}$`)
	libraryDirRe  = regexp.MustCompile(`^[\w\-.]{1,255}-\d+\.\d+$`)
	languageRe    = regexp.MustCompile(`^[-a-zA-Z]{1,10}$`)
	// Language files are named by language code: "fr.json", "pt-br.json",
	// "zh-hans.json". Letters only, as in H5P core.
	languageFileRe = regexp.MustCompile(`(?i)^(-?[a-z]+){1,7}\.json$`)
	jsPathRe       = regexp.MustCompile(`(?i)^([\\/]?[a-z_\-\s0-9.]+)+\.js$`)
	cssPathRe      = regexp.MustCompile(`(?i)^([\\/]?[a-z_\-\s0-9.]+)+\.css$`)
)

// checker validates the fields of one JSON object and reports every
// defect as a problem with one code.
type checker struct {
	rep  *report
	code string
	file string
	lib  string
}

func (c *checker) fail(format string, args ...any) {
	c.rep.add(Invalid, Problem{Code: c.code, File: c.file, Library: c.lib,
		Message: c.file + ": " + fmt.Sprintf(format, args...)})
}

// jsonType names the JSON type of a raw value.
func jsonType(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "missing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// field returns the value of key; a null value counts as absent, as it
// does for H5P core.
func field(m map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	raw, ok := m[key]
	if !ok || jsonType(raw) == "null" {
		return nil, false
	}
	return raw, true
}

func (c *checker) missing(path string) { c.fail("property %q is required.", path) }

// str checks a string field of at most maxLen characters (0: no limit)
// matching re (nil: any).
func (c *checker) str(m map[string]json.RawMessage, key, path string, required bool, maxLen int, re *regexp.Regexp) (string, bool) {
	raw, ok := field(m, key)
	if !ok {
		if required {
			c.missing(path)
		}
		return "", !required
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		c.fail("%s must be a string.", path)
		return "", false
	}
	n := utf8.RuneCountInString(s)
	switch {
	case required && n == 0:
		c.fail("%s must not be empty.", path)
		return "", false
	case maxLen > 0 && n > maxLen:
		c.fail("%s is longer than %d characters.", path, maxLen)
		return "", false
	case re != nil && !re.MatchString(s):
		c.fail("%s has an invalid value %s.", path, quote(s))
		return "", false
	}
	return s, true
}

// number checks a whole-number field of at most maxDigits digits.
func (c *checker) number(m map[string]json.RawMessage, key, path string, required bool, maxDigits int) (int, bool) {
	raw, ok := field(m, key)
	if !ok {
		if required {
			c.missing(path)
		}
		return 0, !required
	}
	v, ok := intValue(raw, maxDigits)
	if !ok {
		c.fail("%s must be a whole number of at most %d digits.", path, maxDigits)
	}
	return v, ok
}

func (c *checker) flag(m map[string]json.RawMessage, key, path string, required bool) bool {
	raw, ok := field(m, key)
	if !ok {
		if required {
			c.missing(path)
		}
		return !required
	}
	if _, ok := flagValue(raw); !ok {
		c.fail("%s must be 0 or 1.", path)
		return false
	}
	return true
}

func (c *checker) object(raw json.RawMessage, path string) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if jsonType(raw) != "object" || json.Unmarshal(raw, &m) != nil {
		c.fail("%s must be an object.", path)
		return nil, false
	}
	return m, true
}

func (c *checker) array(m map[string]json.RawMessage, key, path string, required bool) ([]json.RawMessage, bool) {
	raw, ok := field(m, key)
	if !ok {
		if required {
			c.missing(path)
		}
		return nil, !required
	}
	var items []json.RawMessage
	if jsonType(raw) != "array" || json.Unmarshal(raw, &items) != nil {
		c.fail("%s must be an array.", path)
		return nil, false
	}
	return items, true
}

// dependencies checks a list of {machineName, majorVersion, minorVersion}
// and returns it when every entry is well formed.
func (c *checker) dependencies(m map[string]json.RawMessage, key string, required bool) ([]Dependency, bool) {
	items, ok := c.array(m, key, key, required)
	if !ok {
		return nil, false
	}
	deps := make([]Dependency, 0, len(items))
	for i, item := range items {
		path := fmt.Sprintf("%s[%d]", key, i)
		o, ok := c.object(item, path)
		if !ok {
			continue
		}
		name, okName := c.str(o, "machineName", path+".machineName", true, 255, machineNameRe)
		major, okMajor := c.number(o, "majorVersion", path+".majorVersion", true, 5)
		minor, okMinor := c.number(o, "minorVersion", path+".minorVersion", true, 5)
		if okName && okMajor && okMinor {
			deps = append(deps, Dependency{MachineName: name, MajorVersion: major, MinorVersion: minor})
		}
	}
	return deps, len(deps) == len(items)
}

func (c *checker) embedTypes(m map[string]json.RawMessage, required bool) {
	items, ok := c.array(m, "embedTypes", "embedTypes", required)
	if !ok {
		return
	}
	for i, item := range items {
		var s string
		if json.Unmarshal(item, &s) != nil || s != "div" && s != "iframe" {
			c.fail("embedTypes[%d] must be \"div\" or \"iframe\".", i)
		}
	}
}

// paths checks preloadedJs or preloadedCss: a list of {path}.
func (c *checker) paths(m map[string]json.RawMessage, key string, re *regexp.Regexp) ([]string, bool) {
	items, ok := c.array(m, key, key, false)
	if !ok {
		return nil, false
	}
	var out []string
	for i, item := range items {
		path := fmt.Sprintf("%s[%d]", key, i)
		o, ok := c.object(item, path)
		if !ok {
			continue
		}
		if s, ok := c.str(o, "path", path+".path", true, 0, re); ok {
			out = append(out, s)
		}
	}
	return out, len(out) == len(items)
}

// checkH5PJSON checks h5p.json and returns the dependencies it lists (only
// from well-formed lists) and the main library when it is well formed.
func checkH5PJSON(c *checker, m map[string]json.RawMessage) (deps []Dependency, mainLibrary string) {
	c.str(m, "title", "title", true, 255, nil)
	mainLibrary, okMain := c.str(m, "mainLibrary", "mainLibrary", true, 255, machineNameRe)
	c.str(m, "language", "language", true, 0, languageRe)
	preloaded, okPre := c.dependencies(m, "preloadedDependencies", true)
	dynamic, okDyn := c.dependencies(m, "dynamicDependencies", false)
	c.embedTypes(m, true)
	for _, key := range []string{"defaultLanguage", "contentType", "license", "extraTitle", "licenseVersion", "source", "authorComments"} {
		c.str(m, key, key, false, 0, nil)
	}
	c.array(m, "authors", "authors", false)
	c.array(m, "changes", "changes", false)
	if okPre {
		deps = append(deps, preloaded...)
	}
	if okDyn {
		deps = append(deps, dynamic...)
	}
	if okMain && okPre {
		found := false
		for _, d := range preloaded {
			found = found || d.MachineName == mainLibrary
		}
		if !found {
			c.rep.add(Invalid, Problem{Code: CodeMainLibraryNotListed, File: c.file,
				Message: fmt.Sprintf("h5p.json: the main library %s is not among preloadedDependencies.", quote(mainLibrary))})
		}
	}
	if !okMain {
		mainLibrary = ""
	}
	return deps, mainLibrary
}

// libraryFacts are the checked parts of a library.json that validation
// needs beyond the schema.
type libraryFacts struct {
	name         string
	major, minor int
	identityOK   bool // name, major and minor are all well formed
	coreAPI      *Version
	js, css      []string
	deps         []Dependency
}

func checkLibraryJSON(c *checker, m map[string]json.RawMessage) libraryFacts {
	var f libraryFacts
	c.str(m, "title", "title", true, 255, nil)
	name, okName := c.str(m, "machineName", "machineName", true, 255, machineNameRe)
	major, okMajor := c.number(m, "majorVersion", "majorVersion", true, 5)
	minor, okMinor := c.number(m, "minorVersion", "minorVersion", true, 5)
	c.number(m, "patchVersion", "patchVersion", true, 5)
	c.flag(m, "runnable", "runnable", true)
	f.name, f.major, f.minor, f.identityOK = name, major, minor, okName && okMajor && okMinor

	for _, key := range []string{"description", "author", "license", "contentType"} {
		c.str(m, key, key, false, 0, nil)
	}
	c.flag(m, "fullscreen", "fullscreen", false)
	c.number(m, "w", "w", false, 4)
	c.number(m, "h", "h", false, 4)
	c.embedTypes(m, false)
	if raw, ok := field(m, "coreApi"); ok {
		if o, ok := c.object(raw, "coreApi"); ok {
			cmaj, ok1 := c.number(o, "majorVersion", "coreApi.majorVersion", true, 5)
			cmin, ok2 := c.number(o, "minorVersion", "coreApi.minorVersion", true, 5)
			if ok1 && ok2 {
				f.coreAPI = &Version{Major: cmaj, Minor: cmin}
			}
		}
	}
	if raw, ok := field(m, "metadataSettings"); ok {
		c.object(raw, "metadataSettings")
	}
	f.js, _ = c.paths(m, "preloadedJs", jsPathRe)
	f.css, _ = c.paths(m, "preloadedCss", cssPathRe)
	if items, ok := c.array(m, "dropLibraryCss", "dropLibraryCss", false); ok {
		for i, item := range items {
			path := fmt.Sprintf("dropLibraryCss[%d]", i)
			if o, ok := c.object(item, path); ok {
				c.str(o, "machineName", path+".machineName", true, 255, machineNameRe)
			}
		}
	}
	for _, key := range []string{"preloadedDependencies", "dynamicDependencies", "editorDependencies"} {
		if deps, ok := c.dependencies(m, key, false); ok {
			f.deps = append(f.deps, deps...)
		}
	}
	return f
}
