package auth

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/platform"
)

// ListenerEvents are the events Service.Listener handles.
var ListenerEvents = []string{events.ForgotPassword, events.AccountRegistered}

// Listener handles the events whose default behaviour belongs to auth:
// ForgotPassword stores a fresh reset token and mails it with the return
// URL; AccountRegistered mails the verification link when the user must
// verify and has not.
func (s *Service) Listener(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	switch ev.Name {
	case events.ForgotPassword:
		return s.onForgotPassword(ctx, t, ev)
	case events.AccountRegistered:
		return s.onRegistered(ctx, t, ev)
	}
	return nil
}

func (s *Service) onForgotPassword(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	// A second dispatch of the same event must not replace the token the
	// first one already mailed.
	if sent, err := notify.MailSent(ctx, t, ev.ID); err != nil || sent {
		return err
	}
	u, err := accounts.ByID(ctx, t.DB, ev.UserID)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	token := randomToken()
	now := s.Clock.Now()
	if err := accounts.SetResetToken(ctx, t.DB, u.ID, hashToken(token), now); err != nil {
		return err
	}
	returnURL, _ := ev.Payload["return_url"].(string)
	if returnURL == "" {
		if returnURL, err = s.Settings.String(ctx, t, "lms_auth.return_url"); err != nil {
			return err
		}
	}
	d, _, err := s.Mail.Data(ctx, t, ev)
	if err != nil {
		return err
	}
	// The tenant's own ForgotPassword template, when it has one, replaces
	// the default mail (the spec's listener rule); both carry the token.
	d.Token = token
	d.Link = withQuery(returnURL, map[string]string{"token": token, "email": u.Email})
	d.Expires = now.Add(time.Hour)
	return s.Mail.Mail(ctx, t, ev.ID, userSlot(events.ForgotPassword), u.Email, d)
}

func userSlot(event string) notify.Slot {
	return notify.Slot{Event: event, Channel: notify.Email, Recipient: notify.ToUser}
}

func (s *Service) onRegistered(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	u, err := accounts.ByID(ctx, t.DB, ev.UserID)
	if apperr.Is(err, apperr.NotFound) || (err == nil && u.Verified()) {
		return nil
	}
	if err != nil {
		return err
	}
	origin, _ := ev.Payload["origin"].(string)
	return s.sendVerification(ctx, t, ev.ID, u, origin)
}
