package platform

import (
	"errors"
	"os"
)

// removeSQLite deletes an SQLite database with its WAL and shared-memory
// files.
func removeSQLite(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
