package files

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
)

// PlaylistType is the content type of HLS playlists.
const PlaylistType = "application/vnd.apple.mpegurl"

// maxPlaylist caps the playlists read for signing; a VOD playlist of four
// second segments is about 40 bytes a segment, so this is days of video.
const maxPlaylist = 4 << 20

// signPlaylist rewrites an HLS playlist stored at key so that each
// relative URI in it (a variant's playlist, a segment) becomes a signed
// link of its own: a player resolves them against the playlist's address,
// which would drop the playlist's signature. Only URIs under the
// playlist's own folder are kept; any other line naming a file is dropped,
// so a playlist never signs a link to a file outside its folder.
func (s *Signer) signPlaylist(t *platform.Tenant, key string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPlaylist+1))
	if err != nil {
		return nil, fmt.Errorf("files: read playlist %s: %w", key, err)
	}
	if len(data) > maxPlaylist {
		return nil, apperr.New(apperr.TooLarge, "The playlist is too large.")
	}
	dir := path.Dir(key) + "/"
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		target := path.Join(dir, line)
		if strings.Contains(line, ":") || strings.HasPrefix(line, "/") || !strings.HasPrefix(target, dir) {
			continue
		}
		out.WriteString(s.URL(t, target) + "\n")
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("files: read playlist %s: %w", key, err)
	}
	return out.Bytes(), nil
}
