package tokens_test

import (
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestAdminListingsNeedAdminScopes: a user-level scope (progress:read is
// "the user's own progress", notifications:read the user's own
// notifications) never opens an admin listing of every user's records,
// even on an admin's token; users:read does.
func TestAdminListingsNeedAdminScopes(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.ClientAs("admin")
		learner := env.NewUser("student")
		_, progress := create(t, admin, client.CreateInputBody{Name: "p", Scopes: []string{"progress:read"}})
		_, notes := create(t, admin, client.CreateInputBody{Name: "n", Scopes: []string{"notifications:write"}})
		_, users := create(t, admin, client.CreateInputBody{Name: "u", Scopes: []string{"users:read"}})
		listings := map[string]func(*client.Client) error{
			"/api/admin/certificates": func(c *client.Client) error {
				_, err := c.GetAdminCertificates(ctx, client.GetAdminCertificatesParams{})
				return err
			},
			"/api/admin/notifications/all": func(c *client.Client) error {
				_, err := c.GetAdminNotificationsAll(ctx, client.GetAdminNotificationsAllParams{})
				return err
			},
			"/api/admin/notifications/{user}": func(c *client.Client) error {
				_, err := c.GetAdminNotificationsID(ctx, learner.ID, client.GetAdminNotificationsIDParams{})
				return err
			},
		}
		for path, list := range listings {
			for name, secret := range map[string]string{"progress:read": progress, "notifications:write": notes} {
				if err := list(env.Client("", secret)); client.StatusOf(err) != 403 {
					t.Errorf("GET %s with %s: %v", path, name, err)
				}
			}
			apitest.OK(t, list(env.Client("", users)))
			apitest.OK(t, list(admin))
		}
		// The user-level scopes still open the caller's own records.
		apitest.Must(env.Client("", progress).GetCertificates(ctx, client.GetCertificatesParams{}))(t)
		apitest.Must(env.Client("", notes).GetAdminNotifications(ctx, client.GetAdminNotificationsParams{}))(t)
		apitest.Must(env.Client("", notes).GetNotifications(ctx, client.GetNotificationsParams{}))(t)
	})
}
