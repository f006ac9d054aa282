package file

import (
	"bytes"
	"net/http"
)

// Checks of a file's first bytes against the type its extension claims.
// Each looks for the format's own signature, which is stricter than
// http.DetectContentType (that one does not know MOV, and takes any ftyp
// box with an "mp4" brand for any MP4 flavour).

func isPDF(head []byte) bool {
	// Readers accept a PDF header anywhere in the first KiB.
	return bytes.Contains(head, []byte("%PDF-"))
}

func isPNG(head []byte) bool { return bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")) }

func isJPEG(head []byte) bool { return bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}) }

func isGIF(head []byte) bool {
	return bytes.HasPrefix(head, []byte("GIF87a")) || bytes.HasPrefix(head, []byte("GIF89a"))
}

func isWebP(head []byte) bool {
	return len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP"
}

// looksLikeSVG accepts text that the sniffer calls text (or XML); the
// whole file is then parsed by checkSVG, which requires an svg root.
func looksLikeSVG(head []byte) bool {
	ct := http.DetectContentType(head)
	return bytes.HasPrefix([]byte(ct), []byte("text/")) || ct == "application/xml"
}

func isMP3(head []byte) bool {
	if bytes.HasPrefix(head, []byte("ID3")) {
		return true
	}
	// An MPEG audio frame header: 11 sync bits, then a valid layer.
	return len(head) >= 2 && head[0] == 0xFF && head[1]&0xE0 == 0xE0 && head[1]&0x06 != 0
}

func isOgg(head []byte) bool { return bytes.HasPrefix(head, []byte("OggS")) }

func isWebM(head []byte) bool {
	// An EBML header declaring the webm document type.
	return bytes.HasPrefix(head, []byte{0x1A, 0x45, 0xDF, 0xA3}) && bytes.Contains(head[:min(len(head), 64)], []byte("webm"))
}

// isMP4 wants the ftyp box that opens every ISO base media file.
func isMP4(head []byte) bool {
	return len(head) >= 12 && string(head[4:8]) == "ftyp" && string(head[8:12]) != "qt  "
}

// isMOV accepts QuickTime files: an ftyp box of brand "qt  " or, in older
// files, one of the atoms QuickTime files start with.
func isMOV(head []byte) bool {
	if len(head) < 12 {
		return false
	}
	switch string(head[4:8]) {
	case "ftyp":
		return true
	case "moov", "mdat", "wide", "free", "skip", "pnot":
		return true
	}
	return false
}
