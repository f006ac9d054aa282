package h5ppackage

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// DefaultCoreAPI is the H5P core API version supported by default: that
// of the current H5P core, 1.24, which hub content types require.
func DefaultCoreAPI() Version { return Version{Major: 1, Minor: 24} }

// DefaultContentExtensions returns H5P's default whitelist of content file
// extensions.
func DefaultContentExtensions() []string {
	return strings.Fields("json png jpg jpeg gif bmp tif tiff svg eot ttf woff woff2 otf webm mp4 ogg mp3 m4a wav txt pdf rtf doc docx xls xlsx ppt pptx odt ods odp xml csv diff patch swf md textile vtt webvtt")
}

// DefaultLibraryExtensions returns the extensions library files may have
// beyond the content whitelist.
func DefaultLibraryExtensions() []string { return []string{"js", "css"} }

// Options tune Validate. The zero value takes every default.
type Options struct {
	// CoreAPI is the highest core API version a library may require;
	// zero means DefaultCoreAPI.
	CoreAPI Version
	// Installed reports whether the installation already has a library;
	// nil means nothing is installed.
	Installed func(machineName string, major, minor int) bool
	// ContentExtensions is the whitelist of extensions (without the dot,
	// any case) of content files; nil means DefaultContentExtensions.
	ContentExtensions []string
	// LibraryExtensions are the extensions library files may have in
	// addition to ContentExtensions; nil means DefaultLibraryExtensions.
	LibraryExtensions []string
	// LibrariesOnly validates a package uploaded only to install its
	// libraries: h5p.json and content/ are then optional and ignored.
	LibrariesOnly bool
	// RejectUnsafeSVG turns an unsafe content SVG from a warning into a
	// problem that makes the package invalid.
	RejectUnsafeSVG bool
}

// Validate checks that p follows the H5P package format and fills its
// parsed model. It returns nil or an *Error listing every problem found,
// of kind Invalid, MissingDependencies (only missing libraries), or
// Corrupt / TooLarge when an entry's data turns out damaged or larger than
// declared while it is read.
//
// Rules: h5p.json at the root parses and has title, mainLibrary, language,
// preloadedDependencies and embedTypes of the right types, mainLibrary
// being one of the dependencies; content/content.json parses; every other
// top-level folder is a library folder named machineName-major.minor with a
// library.json that parses, satisfies the library.json schema, names that
// same folder, requires no core API above Options.CoreAPI, and lists
// preloaded JS and CSS files that exist; language files have
// language-code names and parse; file extensions are whitelisted; every
// dependency of h5p.json and of each library.json (preloaded, dynamic,
// editor) is in the package or installed.
func Validate(p *Package, opts Options) error {
	v := newValidator(p, opts)
	v.run()
	return v.rep.err()
}

type validator struct {
	p        *Package
	opts     Options
	rep      report
	content  map[string]bool
	library  map[string]bool
	present  map[string]bool // library folders of the package
	needs    map[string]*need
	needKeys []string
	inflate  inflater
}

type need struct {
	dep Dependency
	by  []string
}

func newValidator(p *Package, opts Options) *validator {
	if opts.CoreAPI == (Version{}) {
		opts.CoreAPI = DefaultCoreAPI()
	}
	if opts.ContentExtensions == nil {
		opts.ContentExtensions = DefaultContentExtensions()
	}
	if opts.LibraryExtensions == nil {
		opts.LibraryExtensions = DefaultLibraryExtensions()
	}
	v := &validator{p: p, opts: opts, content: extSet(opts.ContentExtensions),
		present: map[string]bool{}, needs: map[string]*need{}}
	v.library = extSet(opts.LibraryExtensions)
	for ext := range v.content {
		v.library[ext] = true
	}
	return v
}

func extSet(list []string) map[string]bool {
	set := make(map[string]bool, len(list))
	for _, e := range list {
		set[strings.ToLower(strings.TrimPrefix(e, "."))] = true
	}
	return set
}

func extension(name string) string {
	base := path.Base(name)
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		return strings.ToLower(base[i+1:])
	}
	return ""
}

func (v *validator) run() {
	p := v.p
	p.H5P, p.H5PRaw, p.Content = H5PJSON{}, nil, nil
	p.Libraries, p.ContentFiles, p.Warnings = nil, nil, nil

	names := slices.Clone(p.names)
	slices.Sort(names)
	var rootFiles, contentFiles []string
	libDirs := map[string][]string{}
	var dirOrder []string
	for _, name := range names {
		top, rest, inDir := strings.Cut(name, "/")
		switch {
		case !inDir:
			rootFiles = append(rootFiles, name)
		case top == "content":
			contentFiles = append(contentFiles, rest)
		default:
			if _, seen := libDirs[top]; !seen {
				dirOrder = append(dirOrder, top)
			}
			libDirs[top] = append(libDirs[top], rest)
		}
	}

	if !v.opts.LibrariesOnly {
		v.checkH5PJSON(slices.Contains(rootFiles, "h5p.json"))
		v.checkContent(contentFiles)
		for _, name := range rootFiles {
			if name != "h5p.json" {
				v.whitelist(name, "", v.content)
			}
		}
	}
	for _, dir := range dirOrder {
		v.checkLibrary(dir, libDirs[dir])
	}
	v.checkDependencies()
}

// read reads a whole entry, recording a read failure as a problem.
func (v *validator) read(name string) ([]byte, bool) {
	data, err := v.p.readFile(name, &v.inflate)
	if err != nil {
		v.rep.addErr(name, err)
		return nil, false
	}
	return data, true
}

// parseObject reads name as a JSON object; a file that is not JSON gets
// the parse code, valid JSON of another type the schema code.
func (v *validator) parseObject(name, lib, parseCode string, c *checker) (json.RawMessage, map[string]json.RawMessage, bool) {
	data, ok := v.read(name)
	if !ok {
		return nil, nil, false
	}
	if !json.Valid(data) {
		v.rep.add(Invalid, Problem{Code: parseCode, File: name, Library: lib,
			Message: fmt.Sprintf("%s is not valid JSON.", name)})
		return nil, nil, false
	}
	m, ok := c.object(data, "the file")
	return data, m, ok
}

func (v *validator) checkH5PJSON(exists bool) {
	if !exists {
		v.rep.add(Invalid, Problem{Code: CodeMissingH5PJSON, File: "h5p.json",
			Message: "The package has no h5p.json at its root."})
		return
	}
	c := &checker{rep: &v.rep, code: CodeInvalidH5PJSONSchema, file: "h5p.json"}
	data, m, ok := v.parseObject("h5p.json", "", CodeInvalidH5PJSON, c)
	if !ok {
		return
	}
	deps, _ := checkH5PJSON(c, m)
	for _, d := range deps {
		v.require(d, "h5p.json")
	}
	_ = json.Unmarshal(data, &v.p.H5P) // wrong types were reported above
	v.p.H5PRaw = data
}

func (v *validator) checkContent(files []string) {
	if !slices.Contains(files, "content.json") {
		v.rep.add(Invalid, Problem{Code: CodeMissingContentJSON, File: contentJSON,
			Message: "The package has no content/content.json."})
	} else if data, ok := v.read(contentJSON); ok {
		if !json.Valid(data) || jsonType(data) != "object" {
			v.rep.add(Invalid, Problem{Code: CodeInvalidContentJSON, File: contentJSON,
				Message: "content/content.json is not a valid JSON object."})
		} else {
			v.p.Content = data
		}
	}
	for _, rel := range files {
		if rel == "content.json" {
			continue
		}
		name := "content/" + rel
		v.p.ContentFiles = append(v.p.ContentFiles, rel)
		if !v.whitelist(name, "", v.content) || extension(name) != "svg" {
			continue
		}
		// Library files are executable code by design; content files are
		// the uploader's, served from our origin, so their SVG is checked.
		data, ok := v.read(name)
		if !ok || !UnsafeSVG(data) {
			continue
		}
		prob := Problem{Code: CodeUnsafeSVG, File: name,
			Message: fmt.Sprintf("%s contains script (script elements, event attributes or javascript: URLs).", quote(name))}
		if v.opts.RejectUnsafeSVG {
			v.rep.add(Invalid, prob)
		} else {
			v.p.Warnings = append(v.p.Warnings, prob)
		}
	}
}

func (v *validator) whitelist(name, lib string, allowed map[string]bool) bool {
	if allowed[extension(name)] {
		return true
	}
	v.rep.add(Invalid, Problem{Code: CodeNotInWhitelist, File: name, Library: lib,
		Message: fmt.Sprintf("File %s is not allowed: its extension is not in the whitelist.", quote(name))})
	return false
}

func (v *validator) checkLibrary(dir string, files []string) {
	if !libraryDirRe.MatchString(dir) {
		v.rep.add(Invalid, Problem{Code: CodeInvalidLibraryName, File: dir + "/", Library: dir,
			Message: fmt.Sprintf("Folder %s is not a valid library folder name (machineName-major.minor).", quote(dir))})
		return
	}
	v.present[dir] = true
	for _, rel := range files {
		v.whitelist(dir+"/"+rel, dir, v.library)
	}
	has := make(map[string]bool, len(files))
	for _, rel := range files {
		has[rel] = true
	}
	lib := Library{Dir: dir, Files: files}
	v.checkLanguageFiles(dir, files)
	if has["semantics.json"] {
		if data, ok := v.read(dir + "/semantics.json"); ok && !json.Valid(data) {
			v.rep.add(Invalid, Problem{Code: CodeInvalidSemanticsJSON, File: dir + "/semantics.json", Library: dir,
				Message: fmt.Sprintf("%s/semantics.json is not valid JSON.", dir)})
		}
	}

	name := dir + "/library.json"
	if !has["library.json"] {
		v.rep.add(Invalid, Problem{Code: CodeMissingLibraryJSON, File: name, Library: dir,
			Message: fmt.Sprintf("Library folder %s has no library.json.", quote(dir))})
		return
	}
	c := &checker{rep: &v.rep, code: CodeInvalidLibrarySchema, file: name, lib: dir}
	data, m, ok := v.parseObject(name, dir, CodeInvalidLibraryJSON, c)
	if !ok {
		return
	}
	facts := checkLibraryJSON(c, m)
	if facts.identityOK {
		if want := fmt.Sprintf("%s-%d.%d", facts.name, facts.major, facts.minor); want != dir {
			v.rep.add(Invalid, Problem{Code: CodeLibraryDirMismatch, File: name, Library: dir,
				Message: fmt.Sprintf("Library folder %s holds library %s; its folder must be named %s.", quote(dir), want, quote(want))})
		}
	}
	if facts.coreAPI != nil && facts.coreAPI.After(v.opts.CoreAPI) {
		v.rep.add(Invalid, Problem{Code: CodeAPIVersionUnsupported, File: name, Library: dir,
			Message: fmt.Sprintf("Library %s requires H5P core API %s; this server supports up to %s.", dir, facts.coreAPI, v.opts.CoreAPI)})
	}
	for _, file := range slices.Concat(facts.js, facts.css) {
		if !v.libraryHas(dir, file, has) {
			v.rep.add(Invalid, Problem{Code: CodeLibraryFileMissing, File: dir + "/" + file, Library: dir,
				Message: fmt.Sprintf("Library %s lists %s, which is not in the package.", dir, quote(file))})
		}
	}
	for _, d := range facts.deps {
		v.require(d, dir)
	}
	_ = json.Unmarshal(data, &lib.JSON) // wrong types were reported above
	lib.Raw = data
	v.p.Libraries = append(v.p.Libraries, lib)
}

// libraryHas resolves a preloaded file path of library.json inside its
// folder: "./js/a.js" and "/js/a.js" count, anything leaving the folder
// does not.
func (v *validator) libraryHas(dir, file string, has map[string]bool) bool {
	clean := path.Clean("/" + strings.ReplaceAll(file, `\`, "/"))[1:]
	return clean != "" && has[clean]
}

func (v *validator) checkLanguageFiles(dir string, files []string) {
	for _, rel := range files {
		if !strings.HasPrefix(rel, "language/") {
			continue
		}
		name := dir + "/" + rel
		base := path.Base(rel)
		if !languageFileRe.MatchString(base) {
			v.rep.add(Invalid, Problem{Code: CodeInvalidLanguageFile, File: name, Library: dir,
				Message: fmt.Sprintf("Invalid language file %s in library %s: the name must be a language code such as fr.json.", quote(base), dir)})
			continue
		}
		if data, ok := v.read(name); ok && !json.Valid(data) {
			v.rep.add(Invalid, Problem{Code: CodeInvalidLanguageJSON, File: name, Library: dir,
				Message: fmt.Sprintf("Language file %s in library %s is not valid JSON.", quote(base), dir)})
		}
	}
}

func (v *validator) require(d Dependency, by string) {
	key := d.Dir()
	n, ok := v.needs[key]
	if !ok {
		n = &need{dep: d}
		v.needs[key] = n
		v.needKeys = append(v.needKeys, key)
	}
	if !slices.Contains(n.by, by) {
		n.by = append(n.by, by)
	}
}

func (v *validator) checkDependencies() {
	for _, key := range v.needKeys {
		n := v.needs[key]
		if v.present[key] {
			continue
		}
		d := n.dep
		if v.opts.Installed != nil && v.opts.Installed(d.MachineName, d.MajorVersion, d.MinorVersion) {
			continue
		}
		v.rep.add(MissingDependencies, Problem{Code: CodeMissingDependency, Library: d.String(),
			Message: fmt.Sprintf("Missing required library %s (needed by %s).", d, strings.Join(n.by, ", "))})
	}
}
