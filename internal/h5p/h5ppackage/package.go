// Package h5ppackage reads and validates uploaded H5P packages (.h5p files).
//
// Open checks the archive itself before anything is extracted: a readable
// ZIP, safe entry names, regular files only, no duplicates, and the entry
// count and sizes within Limits. Validate then checks the H5P package
// format (h5p.json, content, library folders, language files, extension
// whitelists, core API version, dependencies) and fills the parsed model.
// Every problem found is collected into one *Error, so a caller can name
// each of them. Entries are streamed with Package.Open; every read is
// capped at the size the central directory declared, so a lying header
// cannot inflate past the limits.
package h5ppackage

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Default limits, as the interface specifies them for H5P uploads.
const (
	DefaultMaxEntries   = 10000
	DefaultMaxFileSize  = 64 << 20
	DefaultMaxTotalSize = 256 << 20
	// DefaultMaxContentSize caps content/content.json, the content
	// parameters, which the service keeps in its database and sends whole
	// to every player and editor.
	DefaultMaxContentSize = 4 << 20
)

// Limits bound what Open accepts. A zero or negative field takes its default.
type Limits struct {
	// MaxEntries is the most entries (files and folders) the archive may hold.
	MaxEntries int
	// MaxFileSize is the largest uncompressed size of one file.
	MaxFileSize int64
	// MaxTotalSize is the largest uncompressed size of all files together.
	MaxTotalSize int64
	// MaxContentSize is the largest size of content/content.json.
	MaxContentSize int64
	// KeepHidden keeps the entries H5P skips (a path segment starting
	// with "." or "_"): other package formats (SCORM) serve them.
	KeepHidden bool
}

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = DefaultMaxTotalSize
	}
	if l.MaxContentSize <= 0 {
		l.MaxContentSize = DefaultMaxContentSize
	}
	return l
}

// Package is an opened .h5p archive. Open fills the file index; Validate
// fills the parsed model (H5P, Content, Libraries, ContentFiles, Warnings).
//
// Open (the method) may be called from several goroutines at once when the
// io.ReaderAt given to the package-level Open allows it (os.File and
// bytes.Reader do); Validate changes the package and must run alone.
type Package struct {
	// H5P is h5p.json; H5PRaw is the file as found in the package.
	H5P    H5PJSON
	H5PRaw json.RawMessage
	// Content is content/content.json, the content parameters.
	Content json.RawMessage
	// Libraries are the library folders of the package, in name order.
	Libraries []Library
	// ContentFiles are the files under content/ other than content.json,
	// relative to content/ ("images/earth.jpg"), in name order.
	ContentFiles []string
	// Warnings are findings that do not make the package invalid: content
	// SVG files with script in them (code unsafe-svg), unless
	// Options.RejectUnsafeSVG makes them problems.
	Warnings []Problem

	limits Limits
	files  map[string]*zip.File
	names  []string
}

// contentJSON is the entry holding the content parameters.
const contentJSON = "content/content.json"

// Open reads the central directory of the archive r (size bytes) and
// checks every entry before anything is extracted. It returns an *Error:
// Corrupt when r is not a readable ZIP archive; TooLarge when the archive
// has more than MaxEntries entries, or a file, content/content.json or the
// total is over the size limits; Invalid for entries with absolute, parent
// (..), backslash or NUL paths, links or other non-regular files,
// duplicates, encryption or an unsupported compression method.
//
// Entries with a path segment starting with "." or "_" (__MACOSX/,
// .DS_Store, language/.en.json templates) pass the same safety and size
// checks, and are then left out of the package, as H5P itself skips them.
func Open(r io.ReaderAt, size int64, limits Limits) (*Package, error) {
	limits = limits.withDefaults()
	if r == nil || size <= 0 {
		return nil, single(Corrupt, Problem{Code: CodeCorruptArchive, Message: "The file is empty, not an H5P (ZIP) archive."})
	}
	// The zip reader loads the whole central directory before we can count
	// its entries; the guard stops it once the directory is larger than
	// MaxEntries reasonable records could be, so a forged directory of
	// millions of entries never gets allocated.
	guard := &directoryGuard{r: r, budget: directoryBudget(limits)}
	zr, err := zip.NewReader(guard, size)
	guard.done.Store(true)
	switch {
	case errors.Is(err, errDirectoryBudget):
		return nil, single(TooLarge, Problem{Code: CodeTooManyEntries,
			Message: fmt.Sprintf("The archive's directory is larger than %d entries allow.", limits.MaxEntries)})
	case errors.Is(err, zip.ErrInsecurePath) && zr != nil:
		// Only with GODEBUG=zipinsecurepath=0; the checks below name the
		// offending entries themselves.
	case err != nil:
		return nil, single(Corrupt, Problem{Code: CodeCorruptArchive, Message: "The file is not a readable H5P (ZIP) archive."})
	}
	if len(zr.File) > limits.MaxEntries {
		return nil, single(TooLarge, Problem{Code: CodeTooManyEntries,
			Message: fmt.Sprintf("The archive has %d entries; at most %d are allowed.", len(zr.File), limits.MaxEntries)})
	}

	p := &Package{limits: limits, files: make(map[string]*zip.File, len(zr.File))}
	var rep report
	var total uint64
	totalReported := false
	seenFiles := make(map[string]bool, len(zr.File))
	seenDirs := make(map[string]bool)   // folders with their own entry
	parentDirs := make(map[string]bool) // folders implied by a path
	for _, f := range zr.File {
		name := f.Name
		if reason := unsafeName(name); reason != "" {
			rep.add(Invalid, Problem{Code: CodeUnsafePath, File: name,
				Message: fmt.Sprintf("Entry %s has an unsafe path (%s).", quote(name), reason)})
			continue
		}
		isDir := strings.HasSuffix(name, "/")
		key := strings.TrimSuffix(name, "/")
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			rep.add(Invalid, Problem{Code: CodeSymlink, File: name,
				Message: fmt.Sprintf("Entry %s is a symbolic link; links are not allowed.", quote(name))})
			continue
		case isDir && mode&fs.ModeType != fs.ModeDir, !isDir && !mode.IsRegular():
			rep.add(Invalid, Problem{Code: CodeNotRegularFile, File: name,
				Message: fmt.Sprintf("Entry %s is not a regular file or folder.", quote(name))})
			continue
		}
		if isDir {
			if seenDirs[key] {
				rep.add(Invalid, Problem{Code: CodeDuplicateEntry, File: name,
					Message: fmt.Sprintf("Folder %s appears more than once.", quote(name))})
			}
			seenDirs[key] = true
		} else {
			if seenFiles[key] {
				rep.add(Invalid, Problem{Code: CodeDuplicateEntry, File: name,
					Message: fmt.Sprintf("File %s appears more than once.", quote(name))})
				continue
			}
			seenFiles[key] = true
		}
		for i := strings.IndexByte(key, '/'); i >= 0; i = next(key, i) {
			parentDirs[key[:i]] = true
		}
		if isDir {
			continue // folders are never read; only files are extracted
		}
		if f.Flags&0x1 != 0 {
			rep.add(Invalid, Problem{Code: CodeEncryptedEntry, File: name,
				Message: fmt.Sprintf("File %s is encrypted.", quote(name))})
			continue
		}
		if f.Method != zip.Store && f.Method != zip.Deflate {
			rep.add(Invalid, Problem{Code: CodeUnsupportedCompression, File: name,
				Message: fmt.Sprintf("File %s uses an unsupported compression method (%d).", quote(name), f.Method)})
			continue
		}
		if f.UncompressedSize64 > uint64(limits.MaxFileSize) {
			rep.add(TooLarge, Problem{Code: CodeFileTooLarge, File: name,
				Message: fmt.Sprintf("File %s is %d bytes; a file may have at most %d.", quote(name), f.UncompressedSize64, limits.MaxFileSize)})
			continue
		}
		if name == contentJSON && f.UncompressedSize64 > uint64(limits.MaxContentSize) {
			rep.add(TooLarge, Problem{Code: CodeContentTooLarge, File: name,
				Message: fmt.Sprintf("%s is %d bytes; the content parameters may have at most %d.", name, f.UncompressedSize64, limits.MaxContentSize)})
			continue
		}
		if !totalReported { // both terms below 2^63 here: the sum cannot overflow
			total += f.UncompressedSize64
			if total > uint64(limits.MaxTotalSize) {
				totalReported = true
				rep.add(TooLarge, Problem{Code: CodeTotalTooLarge,
					Message: fmt.Sprintf("The package unpacks to more than %d bytes.", limits.MaxTotalSize)})
			}
		}
		if !limits.KeepHidden && ignored(name) {
			continue
		}
		p.files[name] = f
		p.names = append(p.names, name)
	}
	// A name used both as a file and as a folder cannot be extracted.
	var clashes []string
	for name := range seenFiles {
		if seenDirs[name] || parentDirs[name] {
			clashes = append(clashes, name)
		}
	}
	slices.Sort(clashes)
	for _, name := range clashes {
		rep.add(Invalid, Problem{Code: CodeDuplicateEntry, File: name,
			Message: fmt.Sprintf("%s is both a file and a folder.", quote(name))})
	}
	if err := rep.err(); err != nil {
		return nil, err
	}
	return p, nil
}

func next(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// unsafeName says what is wrong with an entry name, or "" when it is a
// plain relative path that stays inside the extraction folder.
func unsafeName(name string) string {
	switch {
	case name == "" || name == "/":
		return "empty name"
	case !utf8.ValidString(name):
		return "not UTF-8"
	case strings.ContainsRune(name, '\\'):
		return "backslash"
	case strings.HasPrefix(name, "/"):
		return "absolute path"
	case len(name) >= 2 && name[1] == ':' && isLetter(name[0]):
		return "drive letter"
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			if c == 0 {
				return "NUL byte"
			}
			return "control character"
		}
	}
	for _, seg := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		switch seg {
		case "..":
			return "parent folder segment"
		case ".", "":
			return "empty or '.' segment"
		}
	}
	return ""
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// ignored reports whether H5P skips the entry: some segment of its path
// starts with "." or "_".
func ignored(name string) bool {
	for _, seg := range strings.Split(name, "/") {
		if seg != "" && (seg[0] == '.' || seg[0] == '_') {
			return true
		}
	}
	return false
}

// Files lists the files of the package (skipped entries left out) in
// archive order.
func (p *Package) Files() []string { return append([]string(nil), p.names...) }

// Size returns the uncompressed size of a file as the archive declares it;
// reads through Open never return more.
func (p *Package) Size(name string) (int64, bool) {
	f, ok := p.files[name]
	if !ok {
		return 0, false
	}
	return int64(f.UncompressedSize64), true
}

// Open streams one file of the package, name being its full path in the
// archive ("content/images/a.jpg"). The reader stops with an Invalid
// *Error (CodeSizeMismatch) as soon as the data runs past the declared
// size, and with a
// Corrupt *Error on short data, bad compressed data or a checksum mismatch.
// An unknown name gives an error wrapping fs.ErrNotExist.
func (p *Package) Open(name string) (io.ReadCloser, error) {
	f, ok := p.files[name]
	if !ok {
		return nil, fmt.Errorf("h5p package: %s: %w", name, fs.ErrNotExist)
	}
	return p.open(f, nil)
}

// Store hands the file name of the package, with its declared size, to
// put (which writes it to a blob store), then checks that the entry ended
// there whole and with its checksum: stores read exactly the declared size
// and never ask, or drop the error of their last read as io.CopyN does,
// so an entry longer than its header, or with a wrong checksum, would be
// stored cut short as if it were sound. The *Error of such an entry is
// returned whatever put returned.
func (p *Package) Store(name string, put func(r io.Reader, size int64) error) error {
	size, _ := p.Size(name)
	r, err := p.Open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	err = put(r, size)
	if _, end := r.Read(make([]byte, 1)); end != io.EOF {
		var pe *Error
		if errors.As(end, &pe) {
			return pe
		}
		if err == nil {
			err = end
		}
	}
	return err
}

// open streams an entry. With an inflater, the entry is decompressed by
// that shared decompressor, which serves one reader at a time.
func (p *Package) open(f *zip.File, in *inflater) (io.ReadCloser, error) {
	raw, err := f.OpenRaw()
	if err != nil {
		return nil, single(Corrupt, Problem{Code: CodeCorruptArchive, File: f.Name,
			Message: fmt.Sprintf("%s cannot be read from the archive.", quote(f.Name))})
	}
	// Decompressing ourselves, rather than through zip.File.Open, lets the
	// reader count every byte it produces and name the defect precisely.
	r := &entryReader{name: f.Name, crc: f.CRC32, hash: crc32.NewIEEE()}
	r.size = min(int64(f.UncompressedSize64), p.limits.MaxFileSize)
	switch f.Method {
	case zip.Store:
		r.src = raw
	case zip.Deflate:
		if in != nil {
			r.src = in.reader(raw)
			break
		}
		fr := flate.NewReader(raw)
		r.src, r.closer = fr, fr
	default:
		return nil, single(Invalid, Problem{Code: CodeUnsupportedCompression, File: f.Name,
			Message: fmt.Sprintf("File %s uses an unsupported compression method (%d).", quote(f.Name), f.Method)})
	}
	return r, nil
}

// entryReader yields at most size bytes of one entry and checks that the
// data ends exactly there with the declared checksum.
type entryReader struct {
	name   string
	src    io.Reader
	closer io.Closer
	size   int64
	n      int64
	crc    uint32
	hash   hash.Hash32
	err    error
}

func (r *entryReader) Read(b []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(b) == 0 {
		return 0, nil
	}
	// Ask for one byte more than is left: enough to notice data past the
	// declared size, never enough to let a decompression bomb inflate.
	if left := r.size - r.n + 1; int64(len(b)) > left {
		b = b[:left]
	}
	n, err := r.src.Read(b)
	if r.n+int64(n) > r.size {
		n = int(r.size - r.n)
		r.hash.Write(b[:n])
		r.n += int64(n)
		r.err = r.longer()
		return n, r.err
	}
	r.hash.Write(b[:n])
	r.n += int64(n)
	switch {
	case err == io.EOF:
		switch {
		case r.n < r.size:
			r.err = r.corrupt("its data ends early")
		case r.hash.Sum32() != r.crc: // a zero checksum is no exception
			r.err = r.corrupt("checksum mismatch")
		default:
			r.err = io.EOF
		}
		return n, r.err
	case err != nil:
		r.err = r.corrupt("bad compressed data")
		return n, r.err
	}
	return n, nil
}

// longer is the error of an entry whose data runs past the size its
// header declares: the archive is invalid (422 naming the entry), not too
// large, whatever the size.
func (r *entryReader) longer() error {
	return single(Invalid, Problem{Code: CodeSizeMismatch, File: r.name,
		Message: fmt.Sprintf("File %s holds more data than the archive declares (%d bytes): the archive is invalid.", quote(r.name), r.size)})
}

func (r *entryReader) corrupt(why string) error {
	return single(Corrupt, Problem{Code: CodeCorruptArchive, File: r.name,
		Message: fmt.Sprintf("File %s is damaged (%s).", quote(r.name), why)})
}

func (r *entryReader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// inflater reuses one decompressor and its input buffer across entries
// read one after another: a fresh one allocates some 40 KB, which made up
// most of the cost of validating a package.
type inflater struct {
	br *bufio.Reader
	fr io.ReadCloser
}

func (in *inflater) reader(raw io.Reader) io.Reader {
	if in.fr == nil {
		in.br = bufio.NewReaderSize(raw, 16<<10)
		in.fr = flate.NewReader(in.br)
		return in.fr
	}
	in.br.Reset(raw)
	in.fr.(flate.Resetter).Reset(in.br, nil)
	return in.fr
}

// readFile reads a whole entry; the size is bounded by the declared size,
// which Open has checked against the limits.
func (p *Package) readFile(name string, in *inflater) ([]byte, error) {
	f, ok := p.files[name]
	if !ok {
		return nil, fmt.Errorf("h5p package: %s: %w", name, fs.ErrNotExist)
	}
	rc, err := p.open(f, in)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	// Trust the declared size only so far for the first allocation: a
	// header may claim 64 MB for a file of a few bytes.
	buf := make([]byte, 0, min(f.UncompressedSize64, 256<<10)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

var errDirectoryBudget = errors.New("h5p package: central directory over budget")

// directoryBudget is how many bytes zip.NewReader may read: the end
// records plus an average of 512 bytes per allowed entry (a real entry
// record is about 100).
func directoryBudget(l Limits) int64 { return 128<<10 + int64(l.MaxEntries)*512 }

// directoryGuard counts the bytes read through it until done is set.
type directoryGuard struct {
	r      io.ReaderAt
	budget int64
	used   atomic.Int64
	done   atomic.Bool
}

func (g *directoryGuard) ReadAt(b []byte, off int64) (int, error) {
	if !g.done.Load() && g.used.Add(int64(len(b))) > g.budget {
		return 0, errDirectoryBudget
	}
	return g.r.ReadAt(b, off)
}
