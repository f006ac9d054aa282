package server

import (
	"net/http"

	"github.com/lms-platform/lms/internal/certificates"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/media/img"
	"github.com/lms-platform/lms/internal/media/pdf"
)

// pdfService is the PDF service of this process, served under /pdf/ behind
// the internal token, with the embedded fonts unless LMS_PDF_FONTS names
// others. Configured fonts that cannot be read leave it answering 503 and
// its health saying why, rather than stopping the server.
func (s *Server) pdfService() *pdf.Service {
	fonts, fontsErr := pdf.LoadFonts(s.Config.PDFFonts)
	svc := &pdf.Service{InternalKey: s.Config.InternalKey, Log: s.Log, Fonts: fonts, FontsErr: fontsErr}
	if svc.FontsErr != nil && s.Log != nil { // nil: only describing the routes
		s.Log.Warn("pdf service without fonts: certificates fail until they are installed", "error", svc.FontsErr)
	}
	return svc
}

// certificateRoutes wires course certificates to the PDF service: the one
// at LMS_PDF_URL, or this process's through its handler.
func (s *Server) certificateRoutes() {
	client := pdf.InProcess(s.PDF)
	if s.Config.PDFURL != "" {
		client = &pdf.Client{BaseURL: s.Config.PDFURL, Token: s.Config.InternalKey, HTTP: &http.Client{}}
	}
	s.Certificates = &certificates.Service{Clock: s.Clock, PDF: client, Templates: s.Mail.Templates, Mail: s.Mail,
		FileURL: s.Files.URL}
	certificates.Routes(s.API, s.Certificates)
	if s.Dispatcher != nil {
		s.Dispatcher.ListenTo("certificates", events.Named(certificates.ListenerEvents...), s.Certificates.Listener)
	}
}

// imageRoutes is the image renderer, GET|POST /api/img.
func (s *Server) imageRoutes() {
	img.Routes(s.API, &img.Service{Files: s.Files, Limiter: s.Limiter, Settings: s.Settings})
}
