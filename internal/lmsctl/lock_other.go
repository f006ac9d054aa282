//go:build !unix

package lmsctl

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// lockFile holds path+".lock", created exclusively, until unlock is
// called; a lock older than a minute is a crashed process's and is taken
// over.
func lockFile(path string) (unlock func(), err error) {
	lock := path + ".lock"
	for {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if st, err := os.Stat(lock); err == nil && time.Since(st.ModTime()) > time.Minute {
			os.Remove(lock)
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
}
