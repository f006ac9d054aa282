package content

import (
	"io"
	"net/http"
	"strconv"

	"github.com/lms-platform/lms/internal/blob"
)

// SendStored writes the body of a stored file that a player serves (an
// app's or a course's file) once its headers are set: with ranges and
// conditional requests when the store's reader can seek, else whole.
func SendStored(w http.ResponseWriter, r *http.Request, rc io.Reader, info blob.Info) {
	if rs, ok := rc.(io.ReadSeeker); ok {
		http.ServeContent(w, r, "", info.ModTime, rs)
		return
	}
	w.Header().Set("Content-Length", strconv.FormatInt(info.Size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		// The status is sent; a failed copy only means the caller left.
		_, _ = io.Copy(w, rc)
	}
}
