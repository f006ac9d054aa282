package auth

import (
	"context"
	"net/url"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
)

// checkReturnURL refuses a return_url that leaves the site. The address
// receives a secret (the password reset token, the e-mail verification
// link) in the mail sent to the account's owner, and anyone may ask for
// that mail: a return_url of the asker's own host would hand them the
// secret when the owner follows the link. So it must be http(s) on a host
// of the tenant, a sub-host of one (the frontend's), or the host of the
// configured lms_auth.return_url; "" (the setting) is always fine.
func (s *Service) checkReturnURL(ctx context.Context, t *platform.Tenant, raw string) error {
	if raw == "" {
		return nil
	}
	refused := apperr.Field("return_url", "The return_url must be an address of this site.")
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.Hostname() == "" {
		return refused
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	for _, h := range t.Hosts {
		h = strings.ToLower(h)
		if host == h || strings.HasSuffix(host, "."+h) {
			return nil
		}
	}
	if s.Settings != nil {
		configured, err := s.Settings.String(ctx, t, "lms_auth.return_url")
		if err != nil {
			return err
		}
		if c, err := url.Parse(configured); err == nil && c.Hostname() != "" && strings.EqualFold(c.Hostname(), host) {
			return nil
		}
	}
	return refused
}
