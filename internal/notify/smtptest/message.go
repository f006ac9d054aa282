package smtptest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
)

// maxDepth bounds nested multiparts so a malformed message cannot recurse
// without end.
const maxDepth = 5

// decode fills the parsed fields of m from m.Data.
func decode(m *Mail) {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		m.ParseErr = fmt.Errorf("smtptest: read message: %w", err)
		return
	}
	m.Header = msg.Header
	m.Subject = msg.Header.Get("Subject")
	if s, err := new(mime.WordDecoder).DecodeHeader(m.Subject); err == nil {
		m.Subject = s
	} else {
		m.ParseErr = fmt.Errorf("smtptest: decode subject: %w", err)
	}
	err = decodeEntity(m, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, 0)
	if err != nil && m.ParseErr == nil {
		m.ParseErr = err
	}
}

// decodeEntity decodes one MIME entity, keeping the first text/plain and
// text/html it finds, descending into multiparts.
func decodeEntity(m *Mail, contentType, encoding string, body io.Reader, depth int) error {
	if contentType == "" {
		contentType = "text/plain; charset=us-ascii" // RFC 2045 5.2
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("smtptest: content type %q: %w", contentType, err)
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		if depth >= maxDepth {
			return errors.New("smtptest: multiparts nested too deep")
		}
		// NextRawPart leaves transfer decoding to decodeEntity, so the part
		// headers stay as sent.
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("smtptest: multipart: %w", err)
			}
			err = decodeEntity(m, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, depth+1)
			if err != nil {
				return err
			}
		}
	}
	var r io.Reader
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, body)
	case "", "7bit", "8bit", "binary":
		r = body
	default:
		return fmt.Errorf("smtptest: unknown transfer encoding %q", encoding)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("smtptest: decode %s body: %w", mediaType, err)
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	switch mediaType {
	case "text/plain":
		if m.Body == "" {
			m.Body = text
		}
	case "text/html":
		if m.HTML == "" {
			m.HTML = text
		}
	}
	return nil
}
