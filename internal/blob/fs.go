package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// FS is a Store in a local directory, the embedded default.
//
// Objects live under root/objects at the path their key names. Each file
// starts with a fixed-size header that holds the content type, so the data
// and its type are replaced together by a single rename, and a size is known
// from the file size alone. Puts are written to root/tmp (the same file
// system) and renamed into place, so a reader sees the old object or the new
// one, never a partial file, and List never sees a file being written.
//
// Because keys map to paths, one key cannot also be a directory of others:
// with "a/b" stored, a Put of "a" fails, and the other way round.
type FS struct {
	objects string
	tmp     string
}

// The header is "lms-blob 1\n", the content type, "\n", then spaces up to
// headerSize with a final "\n", which keeps a stored file readable with head.
const (
	headerMagic = "lms-blob 1\n"
	headerSize  = 256
)

// staleTempAge is how old a temp file must be before NewFS removes it as
// left over by a crashed process. It is long enough that no live upload on
// another process sharing the directory is still writing it.
const staleTempAge = 24 * time.Hour

// NewFS opens (creating if needed) a file store rooted at root.
func NewFS(root string) (*FS, error) {
	if root == "" {
		return nil, errors.New("blob: fs: empty root")
	}
	f := &FS{objects: filepath.Join(root, "objects"), tmp: filepath.Join(root, "tmp")}
	for _, dir := range []string{f.objects, f.tmp} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("blob: fs: %w", err)
		}
	}
	f.removeStaleTemps(time.Now().Add(-staleTempAge))
	return f, nil
}

// removeStaleTemps deletes temp files older than cutoff; failures are
// ignored because the files only waste space.
func (f *FS) removeStaleTemps(cutoff time.Time) {
	entries, _ := os.ReadDir(f.tmp)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(f.tmp, e.Name()))
		}
	}
}

func (f *FS) path(key string) string {
	return filepath.Join(f.objects, filepath.FromSlash(key))
}

// Put writes the object to a temp file and renames it over the key's path.
func (f *FS) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	ct, err := normalizeContentType(contentType)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(f.tmp, "put-*")
	if err != nil {
		return fmt.Errorf("blob: fs put %q: %w", key, err)
	}
	// Until the rename succeeds the temp file is ours to remove.
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	batch := batchFrom(ctx)
	if err := writeObject(ctx, tmp, r, size, ct, batch == nil); err != nil {
		return fmt.Errorf("blob: fs put %q: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("blob: fs put %q: %w", key, err)
	}
	if err := f.rename(tmp.Name(), f.path(key)); err != nil {
		return fmt.Errorf("blob: fs put %q: %w", key, err)
	}
	tmp = nil
	if batch != nil {
		batch.add(f)
	}
	return nil
}

// writeObject writes the header and the data, then syncs unless a batch
// will, so that the file renamed into place is complete even after a
// crash.
func writeObject(ctx context.Context, w *os.File, r io.Reader, size int64, ct string, sync bool) error {
	if _, err := w.Write(encodeHeader(ct)); err != nil {
		return err
	}
	src := ctxReader{ctx: ctx, r: r}
	if size >= 0 {
		n, err := io.CopyN(w, src, size)
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("got %d of %d bytes: %w", n, size, io.ErrUnexpectedEOF)
		}
		if err != nil {
			return err
		}
	} else if _, err := io.Copy(w, src); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	return w.Sync()
}

// rename moves a finished temp file to its key's path. A concurrent Delete
// may remove the (then empty) parent directory between MkdirAll and Rename,
// so a missing directory is retried a few times.
func (f *FS) rename(from, to string) error {
	var err error
	for range 3 {
		if err = os.MkdirAll(filepath.Dir(to), 0o750); err != nil {
			return err
		}
		if err = os.Rename(from, to); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// Get opens the object. The returned reader also implements io.Seeker and
// io.ReaderAt, so it can be served with http.ServeContent.
func (f *FS) Get(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if err := ValidateKey(key); err != nil {
		return nil, Info{}, err
	}
	file, info, err := f.open(key)
	if err != nil {
		return nil, Info{}, err
	}
	return &fsReader{SectionReader: io.NewSectionReader(file, headerSize, info.Size), file: file}, info, nil
}

type fsReader struct {
	*io.SectionReader
	file *os.File
}

func (r *fsReader) Close() error { return r.file.Close() }

// Stat describes the object.
func (f *FS) Stat(ctx context.Context, key string) (Info, error) {
	if err := ValidateKey(key); err != nil {
		return Info{}, err
	}
	file, info, err := f.open(key)
	if err != nil {
		return Info{}, err
	}
	file.Close()
	return info, nil
}

// open opens the object's file and reads its header; the caller closes it.
func (f *FS) open(key string) (*os.File, Info, error) {
	file, err := os.Open(f.path(key))
	if isNotExist(err) {
		return nil, Info{}, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	if err != nil {
		return nil, Info{}, fmt.Errorf("blob: fs get %q: %w", key, err)
	}
	info, err := readInfo(file, key)
	if err != nil {
		file.Close()
		return nil, Info{}, err
	}
	return file, info, nil
}

func readInfo(file *os.File, key string) (Info, error) {
	fi, err := file.Stat()
	if err != nil {
		return Info{}, fmt.Errorf("blob: fs get %q: %w", key, err)
	}
	// A directory is only a prefix of other keys, not an object.
	if !fi.Mode().IsRegular() {
		return Info{}, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	var hdr [headerSize]byte
	if _, err := io.ReadFull(file, hdr[:]); err != nil {
		return Info{}, fmt.Errorf("blob: fs get %q: reading header: %w", key, err)
	}
	ct, err := decodeHeader(hdr[:])
	if err != nil {
		return Info{}, fmt.Errorf("blob: fs get %q: %w", key, err)
	}
	return Info{Key: key, Size: fi.Size() - headerSize, ContentType: ct, ModTime: fi.ModTime()}, nil
}

// Delete removes the object and then any parent directories it left empty,
// so that a later Put of a key equal to such a directory still works.
func (f *FS) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	p := f.path(key)
	fi, err := os.Lstat(p)
	if isNotExist(err) || (err == nil && fi.IsDir()) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("blob: fs delete %q: %w", key, err)
	}
	if err := os.Remove(p); err != nil && !isNotExist(err) {
		return fmt.Errorf("blob: fs delete %q: %w", key, err)
	}
	// Removing a directory fails while it holds anything, which is the
	// test of emptiness we want; stop at the first one still in use.
	for dir := filepath.Dir(p); dir != f.objects; dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
}

// List walks the directory tree in key order. Info.ContentType is left
// empty, as it is by the s3 store, where listing does not return it.
func (f *FS) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	// Start at the deepest directory the prefix names in full.
	base := prefix[:strings.LastIndex(prefix, "/")+1]
	return f.walk(ctx, filepath.Join(f.objects, filepath.FromSlash(base)), base, prefix, fn)
}

// walk lists dir, whose entries have keys starting with keyBase. Entries are
// sorted by name, with "/" appended to directory names: then a depth-first
// walk yields keys in byte order ("a-b" < "a/c" < "a0").
func (f *FS) walk(ctx context.Context, dir, keyBase, prefix string, fn func(Info) error) error {
	entries, err := os.ReadDir(dir)
	if isNotExist(err) {
		return nil // the prefix names nothing, or a concurrent Delete removed it
	}
	if err != nil {
		return fmt.Errorf("blob: fs list %q: %w", prefix, err)
	}
	sortName := func(e fs.DirEntry) string {
		if e.IsDir() {
			return e.Name() + "/"
		}
		return e.Name()
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(sortName(a), sortName(b)) })
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := keyBase + e.Name()
		if e.IsDir() {
			// Descend only where keys matching the prefix can be.
			sub := key + "/"
			if strings.HasPrefix(sub, prefix) || strings.HasPrefix(prefix, sub) {
				if err := f.walk(ctx, filepath.Join(dir, e.Name()), sub, prefix, fn); err != nil {
					return err
				}
			}
			continue
		}
		if !e.Type().IsRegular() || !strings.HasPrefix(key, prefix) {
			continue
		}
		fi, err := e.Info()
		if isNotExist(err) {
			continue // deleted since ReadDir
		}
		if err != nil {
			return fmt.Errorf("blob: fs list %q: %w", prefix, err)
		}
		if fi.Size() < headerSize {
			return fmt.Errorf("blob: fs list: %q is not a blob file", key)
		}
		if err := fn(Info{Key: key, Size: fi.Size() - headerSize, ModTime: fi.ModTime()}); err != nil {
			return err
		}
	}
	return nil
}

// DeletePrefix lists first and then deletes, so the walk never reads a
// directory that its own deletes are changing.
func (f *FS) DeletePrefix(ctx context.Context, prefix string) error {
	var keys []string
	err := f.List(ctx, prefix, func(i Info) error {
		keys = append(keys, i.Key)
		return nil
	})
	if err != nil {
		return err
	}
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := f.Delete(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

// Ping checks that both directories exist and accept new entries.
func (f *FS) Ping(ctx context.Context) error {
	tmp, err := os.CreateTemp(f.tmp, "ping-*")
	if err != nil {
		return fmt.Errorf("blob: fs ping: %w", err)
	}
	tmp.Close()
	os.Remove(tmp.Name())
	// An empty directory is invisible to Get and List, so probing the
	// objects tree with one does not show up as an object.
	dir, err := os.MkdirTemp(f.objects, ".ping-*")
	if err != nil {
		return fmt.Errorf("blob: fs ping: %w", err)
	}
	os.Remove(dir)
	return nil
}

func encodeHeader(ct string) []byte {
	hdr := bytes.Repeat([]byte{' '}, headerSize)
	copy(hdr, headerMagic+ct+"\n")
	hdr[headerSize-1] = '\n'
	return hdr
}

func decodeHeader(hdr []byte) (string, error) {
	rest, ok := bytes.CutPrefix(hdr, []byte(headerMagic))
	if !ok {
		return "", errors.New("not a blob file")
	}
	ct, _, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return "", errors.New("bad blob header")
	}
	return string(ct), nil
}

// isNotExist also counts ENOTDIR: a key below an existing object's path
// ("a/b" when "a" is a file) names nothing.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// ctxReader stops a copy once the context is done, so a cancelled upload
// does not keep writing to disk.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
