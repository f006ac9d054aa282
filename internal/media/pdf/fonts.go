package pdf

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The fonts ship inside the binary, so certificates work on any machine
// the binary runs on: DejaVu Sans (Bitstream Vera licence) and Droid Sans
// Fallback (Apache 2.0), as Debian's fonts-dejavu-core and
// fonts-droid-fallback install them; their licences lie next to them in
// fonts/. Droid Sans Fallback is most of the binary's 4.8 MB of fonts.
var (
	//go:embed fonts/DejaVuSans.ttf
	embeddedLatin []byte
	//go:embed fonts/DroidSansFallbackFull.ttf
	embeddedCJK []byte
)

// The file names of the fonts, as Debian installs them.
const (
	LatinFile = "DejaVuSans.ttf"
	CJKFile   = "DroidSansFallbackFull.ttf"
)

// EmbeddedFonts are the fonts shipped in the binary.
func EmbeddedFonts() *Fonts { return &Fonts{Latin: embeddedLatin, CJK: embeddedCJK} }

// LoadFonts returns the fonts the setting names (LMS_PDF_FONTS):
//
//   - empty: the embedded fonts;
//   - a directory, such as /usr/share/fonts: LatinFile and CJKFile are
//     looked up in it and below it, and one not found there is the
//     embedded one, so pointing it at system fonts can only add;
//   - LATIN.ttf:CJK.ttf: exactly those two files, an error when one
//     cannot be read.
func LoadFonts(setting string) (*Fonts, error) {
	if setting == "" {
		return EmbeddedFonts(), nil
	}
	if st, err := os.Stat(setting); err == nil && st.IsDir() {
		return lookUpFonts(setting)
	}
	latin, cjk, ok := strings.Cut(setting, ":")
	if !ok {
		return nil, fmt.Errorf("pdf: %q is neither a directory nor LATIN.ttf:CJK.ttf", setting)
	}
	l, err := os.ReadFile(latin)
	if err != nil {
		return nil, fmt.Errorf("pdf: Latin font: %w", err)
	}
	c, err := os.ReadFile(cjk)
	if err != nil {
		return nil, fmt.Errorf("pdf: CJK font: %w", err)
	}
	return &Fonts{Latin: l, CJK: c}, nil
}

// errFound ends the walk of lookUpFonts once both files are found.
var errFound = errors.New("found")

func lookUpFonts(dir string) (*Fonts, error) {
	f := EmbeddedFonts()
	found := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// An unreadable subdirectory only hides what it holds.
			return nil
		}
		name := d.Name()
		if !d.IsDir() && (name == LatinFile || name == CJKFile) && found[name] == "" {
			found[name] = path
		}
		if len(found) == 2 {
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, fmt.Errorf("pdf: look up fonts in %s: %w", dir, err)
	}
	for name, dst := range map[string]*[]byte{LatinFile: &f.Latin, CJKFile: &f.CJK} {
		if path := found[name]; path != "" {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("pdf: %w", err)
			}
			*dst = b
		}
	}
	return f, nil
}
