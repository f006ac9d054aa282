//go:build !linux

package blob

import "syscall"

// flush syncs the file systems, where no call syncs just one.
func (f *FS) flush() error {
	syscall.Sync()
	return nil
}
