package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestPicturesArePNG(t *testing.T) {
	pictures := map[string][]byte{
		"cover": Cover("Getting started", "#1d4ed8", "#0ea5e9", Cards), "map": CourseMap(),
		"lifecycle": DataLifecycle(), "identifiers": Identifiers(), "triangle": ExposureTriangle(),
		"thirds": RuleOfThirds(), "padlock": Cover("x", "#0f766e", "#134e4a", Padlock),
		"aperture": Cover("x", "#7c2d12", "#f59e0b", Aperture), "choices": Cover("x", "#6d28d9", "#db2777", Choices),
	}
	for name, data := range pictures {
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil || img.Bounds().Dx() < 600 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The PDF's cross-reference table points at its objects, as readers
// need.
func TestDocumentIsPDF(t *testing.T) {
	d := &Document{Title: "Check (list)", Subtitle: "Sub", Accent: "#0f766e"}
	d.Heading("Heading")
	for i := 0; i < 80; i++ {
		d.Paragraph("A paragraph long enough to wrap over more than one line of the page, with (parentheses) and a \\ too.")
	}
	d.Bullets("one", "two")
	d.Checklist("three")
	pdf := d.PDF()
	if !bytes.HasPrefix(pdf, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(pdf, []byte("%%EOF\n")) {
		t.Fatal("not a PDF")
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n`).FindSubmatch(pdf)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(pdf[xref:], []byte("xref\n0 ")) {
		t.Fatalf("startxref %d points at %q", xref, pdf[xref:xref+10])
	}
	entries := regexp.MustCompile(`(\d{10}) 00000 n \n`).FindAllSubmatch(pdf[xref:], -1)
	if len(entries) < 8 {
		t.Fatalf("%d objects: the text should have flowed onto several pages", len(entries))
	}
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(pdf[off:], []byte(want)) {
			t.Errorf("object %d: offset %d holds %q", i+1, off, pdf[off:off+10])
		}
	}
	if !bytes.Contains(pdf, []byte(`(Check \(list\) - page 2)`)) {
		t.Error("parentheses are not escaped or there is no second page")
	}
}

// The chime is Ogg pages with valid checksums holding the FLAC mapping,
// and its STREAMINFO counts every sample of the frames.
func TestChimeIsOggFLAC(t *testing.T) {
	data := Chime([]float64{440, 660}, 0.3)
	var packets [][]byte
	for len(data) > 0 {
		if !bytes.HasPrefix(data, []byte("OggS")) || len(data) < 27 {
			t.Fatalf("page %d: no capture pattern", len(packets))
		}
		n := int(data[26])
		size := 27 + n
		body := 0
		for _, l := range data[27 : 27+n] {
			body += int(l)
		}
		size += body
		page := append([]byte(nil), data[:size]...)
		want := binary.LittleEndian.Uint32(page[22:])
		copy(page[22:26], []byte{0, 0, 0, 0})
		if oggCRC(page) != want {
			t.Fatalf("page %d: bad checksum", len(packets))
		}
		packets = append(packets, data[27+n:size])
		data = data[size:]
	}
	if !bytes.HasPrefix(packets[0], []byte("\x7fFLAC\x01\x00\x00\x01fLaC")) {
		t.Fatalf("first packet %q", packets[0][:13])
	}
	info := packets[0][17:]
	total := (uint64(info[13]&0x0F) << 32) | uint64(binary.BigEndian.Uint32(info[14:18]))
	frames := uint64(0)
	for _, p := range packets[2:] {
		if p[0] != 0xFF || p[1] != 0xF8 {
			t.Fatalf("frame sync %x", p[:2])
		}
		if crc16(p[:len(p)-2]) != binary.BigEndian.Uint16(p[len(p)-2:]) {
			t.Fatal("frame checksum")
		}
		frames += uint64((len(p) - 2 - 8) / 2)
	}
	if total == 0 || total != frames {
		t.Fatalf("STREAMINFO counts %d samples, the frames hold %d", total, frames)
	}
}

// A clip is a QuickTime file whose movie atom indexes every frame and the
// sound; where ffprobe exists it reads the picture, sound and length.
func TestClipIsQuickTime(t *testing.T) {
	clip := ProgressFilm(Tone([]float64{440}, 0.5), 2.5)
	mov := clip.MOV()
	if string(mov[4:8]) != "ftyp" || string(mov[8:12]) != "qt  " {
		t.Fatalf("starts with %q", mov[:12])
	}
	if clip.Frames() != 30 {
		t.Fatalf("%d frames", clip.Frames())
	}
	for _, a := range []string{"mdat", "moov", "mvhd", "jpeg", "sowt", "stsz", "stco"} {
		if !bytes.Contains(mov, []byte(a)) {
			t.Fatalf("no %s atom", a)
		}
	}
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Log("no ffprobe here: the atoms only")
		return
	}
	f := filepath.Join(t.TempDir(), "clip.mov")
	if err := os.WriteFile(f, mov, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_name,nb_frames,width,height,sample_rate,duration",
		"-of", "compact", f).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe: %v\n%s", err, out)
	}
	for _, want := range []string{"codec_name=mjpeg|width=640|height=360", "nb_frames=30", "codec_name=pcm_s16le|sample_rate=22050",
		"duration=2.500000"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("ffprobe lacks %q:\n%s", want, out)
		}
	}
}
