package h5ppackage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// H5PJSON is h5p.json, the package definition. Fields the format leaves
// free-form are kept in Package.H5PRaw.
type H5PJSON struct {
	Title                 string       `json:"title"`
	MainLibrary           string       `json:"mainLibrary"`
	Language              string       `json:"language"`
	DefaultLanguage       string       `json:"defaultLanguage,omitempty"`
	EmbedTypes            []string     `json:"embedTypes"`
	PreloadedDependencies []Dependency `json:"preloadedDependencies"`
	DynamicDependencies   []Dependency `json:"dynamicDependencies,omitempty"`
	ContentType           string       `json:"contentType,omitempty"`
	ExtraTitle            string       `json:"extraTitle,omitempty"`
	A11yTitle             string       `json:"a11yTitle,omitempty"`
	License               string       `json:"license,omitempty"`
	LicenseVersion        string       `json:"licenseVersion,omitempty"`
	LicenseExtras         string       `json:"licenseExtras,omitempty"`
	Source                string       `json:"source,omitempty"`
	AuthorComments        string       `json:"authorComments,omitempty"`
	Authors               []Author     `json:"authors,omitempty"`
	Changes               []Change     `json:"changes,omitempty"`
}

// Author is an entry of h5p.json "authors".
type Author struct {
	Name string `json:"name"`
	Role string `json:"role,omitempty"`
}

// Change is an entry of h5p.json "changes".
type Change struct {
	Date   string `json:"date,omitempty"`
	Author string `json:"author,omitempty"`
	Log    string `json:"log,omitempty"`
}

// LibraryJSON is a library's library.json.
type LibraryJSON struct {
	Title                 string          `json:"title"`
	Description           string          `json:"description,omitempty"`
	MachineName           string          `json:"machineName"`
	MajorVersion          int             `json:"majorVersion"`
	MinorVersion          int             `json:"minorVersion"`
	PatchVersion          int             `json:"patchVersion"`
	Runnable              Flag            `json:"runnable"`
	Author                string          `json:"author,omitempty"`
	License               string          `json:"license,omitempty"`
	ContentType           string          `json:"contentType,omitempty"`
	CoreAPI               *Version        `json:"coreApi,omitempty"`
	Fullscreen            Flag            `json:"fullscreen,omitempty"`
	EmbedTypes            []string        `json:"embedTypes,omitempty"`
	W                     int             `json:"w,omitempty"`
	H                     int             `json:"h,omitempty"`
	PreloadedJS           []Path          `json:"preloadedJs,omitempty"`
	PreloadedCSS          []Path          `json:"preloadedCss,omitempty"`
	DropLibraryCSS        []LibraryName   `json:"dropLibraryCss,omitempty"`
	PreloadedDependencies []Dependency    `json:"preloadedDependencies,omitempty"`
	DynamicDependencies   []Dependency    `json:"dynamicDependencies,omitempty"`
	EditorDependencies    []Dependency    `json:"editorDependencies,omitempty"`
	MetadataSettings      json.RawMessage `json:"metadataSettings,omitempty"`
	AddTo                 json.RawMessage `json:"addTo,omitempty"`
	RequiredExtensions    json.RawMessage `json:"requiredExtensions,omitempty"`
	State                 json.RawMessage `json:"state,omitempty"`
}

// Dir is the folder name the library must have: machineName-major.minor.
func (l LibraryJSON) Dir() string {
	return fmt.Sprintf("%s-%d.%d", l.MachineName, l.MajorVersion, l.MinorVersion)
}

// UnmarshalJSON accepts version numbers written as digit strings, as H5P
// does. It never fails: Validate reports wrong types, and a wrong field
// here is left at its zero value.
func (l *LibraryJSON) UnmarshalJSON(b []byte) error {
	type plain LibraryJSON
	var aux struct {
		*plain
		MajorVersion looseInt `json:"majorVersion"`
		MinorVersion looseInt `json:"minorVersion"`
		PatchVersion looseInt `json:"patchVersion"`
		W            looseInt `json:"w"`
		H            looseInt `json:"h"`
	}
	aux.plain = (*plain)(l)
	_ = json.Unmarshal(b, &aux)
	l.MajorVersion, l.MinorVersion, l.PatchVersion = int(aux.MajorVersion), int(aux.MinorVersion), int(aux.PatchVersion)
	l.W, l.H = int(aux.W), int(aux.H)
	return nil
}

// Library is one library folder of a package.
type Library struct {
	// Dir is the folder name, "H5P.Foo-1.2".
	Dir string
	// JSON is library.json; Raw is the file as found in the package.
	JSON LibraryJSON
	Raw  json.RawMessage
	// Files are the files of the folder relative to it ("library.json",
	// "js/foo.js"), in name order.
	Files []string
}

// Dependency names a library by machine name and major.minor version.
type Dependency struct {
	MachineName  string `json:"machineName"`
	MajorVersion int    `json:"majorVersion"`
	MinorVersion int    `json:"minorVersion"`
}

// String is the H5P way of naming a dependency: "H5P.Foo 1.2".
func (d Dependency) String() string {
	return fmt.Sprintf("%s %d.%d", d.MachineName, d.MajorVersion, d.MinorVersion)
}

// Dir is the folder name of the library: "H5P.Foo-1.2".
func (d Dependency) Dir() string {
	return fmt.Sprintf("%s-%d.%d", d.MachineName, d.MajorVersion, d.MinorVersion)
}

// UnmarshalJSON accepts digit-string versions and never fails (see
// LibraryJSON.UnmarshalJSON).
func (d *Dependency) UnmarshalJSON(b []byte) error {
	var aux struct {
		MachineName  any      `json:"machineName"`
		MajorVersion looseInt `json:"majorVersion"`
		MinorVersion looseInt `json:"minorVersion"`
	}
	_ = json.Unmarshal(b, &aux)
	name, _ := aux.MachineName.(string)
	*d = Dependency{MachineName: name, MajorVersion: int(aux.MajorVersion), MinorVersion: int(aux.MinorVersion)}
	return nil
}

// Version is a core API version, {majorVersion, minorVersion}.
type Version struct {
	Major int `json:"majorVersion"`
	Minor int `json:"minorVersion"`
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// After reports whether v is a later version than w.
func (v Version) After(w Version) bool {
	return v.Major > w.Major || v.Major == w.Major && v.Minor > w.Minor
}

// UnmarshalJSON accepts digit-string versions and never fails.
func (v *Version) UnmarshalJSON(b []byte) error {
	var aux struct {
		Major looseInt `json:"majorVersion"`
		Minor looseInt `json:"minorVersion"`
	}
	_ = json.Unmarshal(b, &aux)
	*v = Version{Major: int(aux.Major), Minor: int(aux.Minor)}
	return nil
}

// Path is an entry of preloadedJs or preloadedCss: a file of the library,
// relative to its folder.
type Path struct {
	Path string `json:"path"`
}

// LibraryName is an entry of dropLibraryCss.
type LibraryName struct {
	MachineName string `json:"machineName"`
}

// Flag is an H5P 0/1 field (runnable, fullscreen). It reads 0, 1, true,
// false and their string forms, and writes 0 or 1.
type Flag bool

// UnmarshalJSON never fails; Validate reports a wrong value.
func (f *Flag) UnmarshalJSON(b []byte) error {
	on, _ := flagValue(b)
	*f = Flag(on)
	return nil
}

// MarshalJSON writes 0 or 1, as library.json files do.
func (f Flag) MarshalJSON() ([]byte, error) {
	if f {
		return []byte("1"), nil
	}
	return []byte("0"), nil
}

// flagValue reads an H5P 0/1 value; ok is false for anything else.
func flagValue(b []byte) (on, ok bool) {
	switch string(bytes.TrimSpace(b)) {
	case "1", "true", `"1"`:
		return true, true
	case "0", "false", `"0"`:
		return false, true
	}
	return false, false
}

// looseInt is a version number written either as a JSON number or as a
// string of digits.
type looseInt int

func (n *looseInt) UnmarshalJSON(b []byte) error {
	v, _ := intValue(b, 9)
	*n = looseInt(v)
	return nil
}

// intValue reads a whole number of at most maxDigits digits, written as a
// JSON number or a JSON string of digits, the way H5P's own validator
// accepts version numbers (it matches ^[0-9]{1,5}$ on the value's text).
func intValue(b []byte, maxDigits int) (int, bool) {
	b = bytes.TrimSpace(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	if len(b) == 0 || len(b) > maxDigits {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.Atoi(string(b))
	return v, err == nil
}
