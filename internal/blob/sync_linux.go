package blob

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// flush syncs the whole file system the objects live on, in one call.
func (f *FS) flush() error {
	d, err := os.Open(f.objects)
	if err != nil {
		return fmt.Errorf("blob: fs flush: %w", err)
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("blob: fs flush: %w", err)
	}
	return nil
}
