package notify

import "github.com/lms-platform/lms/internal/events"

// defaults are the built-in templates: one for each event and channel the
// Events table names, in English. A tenant's own template of a slot
// replaces its default (message_templates).
var defaults = []Template{
	emailTemplate(events.AccountBlocked, ToUser, "Your account on {{.Platform.Name}} has been blocked",
		"Hello {{.User.Name}},\n\nyour account on {{.Platform.Name}} ({{.User.Email}}) was blocked on {{.Date.Format \"2 January 2006\"}}. You can no longer sign in.\n\nIf you think this is a mistake, contact the administrators of {{.Platform.Name}}.\n",
		`<p>Hello {{.User.Name}},</p>
<p>your account on {{.Platform.Name}} ({{.User.Email}}) was blocked on {{.Date.Format "2 January 2006"}}. You can no longer sign in.</p>
<p>If you think this is a mistake, contact the administrators of {{.Platform.Name}}.</p>`),
	emailTemplate(events.AccountConfirmed, ToUser, "Your e-mail address is confirmed",
		"Hello {{.User.Name}},\n\nthank you for confirming your e-mail address. Your account on {{.Platform.Name}} is ready:\n\n{{.Platform.URL}}\n",
		`<p>Hello {{.User.Name}},</p>
<p>thank you for confirming your e-mail address. Your account on {{.Platform.Name}} is ready:</p>
<p><a href="{{.Platform.URL}}">{{.Platform.URL}}</a></p>`),
	emailTemplate(events.AccountDeleted, ToUser, "Your account on {{.Platform.Name}} has been deleted",
		"Hello {{.User.Name}},\n\nyour account on {{.Platform.Name}} ({{.User.Email}}) and its data were deleted on {{.Date.Format \"2 January 2006\"}}.\n\nThank you for learning with us.\n",
		`<p>Hello {{.User.Name}},</p>
<p>your account on {{.Platform.Name}} ({{.User.Email}}) and its data were deleted on {{.Date.Format "2 January 2006"}}.</p>
<p>Thank you for learning with us.</p>`),
	emailTemplate(events.AccountDeletionRequested, ToUser, "Confirm the deletion of your account",
		"Hello {{.User.Name}},\n\nsomeone asked to delete your account. To delete it for good, open this link within 24 hours:\n\n{{.Link}}\n\nIf you did not ask for this, ignore this message and your account stays as it is.\n",
		`<p>Hello {{.User.Name}},</p>
<p>someone asked to delete your account. To delete it for good, open this link within 24 hours:</p>
<p><a href="{{.Link}}">Delete my account</a></p>
<p>If you did not ask for this, ignore this message and your account stays as it is.</p>`),
	emailTemplate(events.AccountMustBeEnableByAdmin, ToUser, "Your account on {{.Platform.Name}} awaits approval",
		"Hello {{.User.Name}},\n\nthank you for registering on {{.Platform.Name}}. An administrator must enable your account before you can sign in; you will be told when this happens.\n",
		`<p>Hello {{.User.Name}},</p>
<p>thank you for registering on {{.Platform.Name}}. An administrator must enable your account before you can sign in; you will be told when this happens.</p>`),
	emailTemplate(events.AccountMustBeEnableByAdmin, ToAdmins, "A new account on {{.Platform.Name}} awaits your approval",
		"Hello,\n\n{{.User.Name}} ({{.User.Email}}) registered on {{.Platform.Name}} on {{.Date.Format \"2 January 2006\"}}. The account stays disabled until an administrator enables it.\n\n{{.Platform.URL}}\n",
		`<p>Hello,</p>
<p>{{.User.Name}} ({{.User.Email}}) registered on {{.Platform.Name}} on {{.Date.Format "2 January 2006"}}. The account stays disabled until an administrator enables it.</p>
<p><a href="{{.Platform.URL}}">{{.Platform.Name}}</a></p>`),
	emailTemplate(events.AccountRegistered, ToUser, "Verify your e-mail address",
		"Hello,\n\nplease confirm your e-mail address by opening this link:\n\n{{.Link}}\n\nIf you did not create an account, ignore this message.\n",
		`<p>Hello,</p>
<p>please confirm your e-mail address by opening this link:</p>
<p><a href="{{.Link}}">Verify my e-mail address</a></p>
<p>If you did not create an account, ignore this message.</p>`),
	emailTemplate(events.ForgotPassword, ToUser, "Reset your password",
		"Hello,\n\nsomeone asked to reset the password of your account. Your reset token is:\n\n{{.Token}}\n\nOr open this link to choose a new password:\n\n{{.Link}}\n\nThe token is valid for one hour. If you did not ask for it, ignore this message.\n",
		`<p>Hello,</p>
<p>someone asked to reset the password of your account. Your reset token is:</p>
<p><code>{{.Token}}</code></p>
<p>Or open this link to choose a new password: <a href="{{.Link}}">Reset my password</a></p>
<p>The token is valid for one hour. If you did not ask for it, ignore this message.</p>`),
	emailTemplate(events.PasswordChanged, ToUser, "Your password was changed",
		"Hello {{.User.Name}},\n\nthe password of your account on {{.Platform.Name}} was changed on {{.Date.Format \"2 January 2006 at 15:04 MST\"}}.\n\nIf you did not change it, reset your password at once and contact the administrators.\n",
		`<p>Hello {{.User.Name}},</p>
<p>the password of your account on {{.Platform.Name}} was changed on {{.Date.Format "2 January 2006 at 15:04 MST"}}.</p>
<p>If you did not change it, reset your password at once and contact the administrators.</p>`),
	emailTemplate(events.UserAddedToGroup, ToUser, "You joined the group {{.Group.Title}}",
		"Hello {{.User.Name}},\n\nyou are now a member of the group {{.Group.Title}} on {{.Platform.Name}}.\n\n{{.Platform.URL}}\n",
		`<p>Hello {{.User.Name}},</p>
<p>you are now a member of the group <strong>{{.Group.Title}}</strong> on {{.Platform.Name}}.</p>
<p><a href="{{.Platform.URL}}">{{.Platform.Name}}</a></p>`),
	emailTemplate(events.UserRemovedFromGroup, ToUser, "You left the group {{.Group.Title}}",
		"Hello {{.User.Name}},\n\nyou are no longer a member of the group {{.Group.Title}} on {{.Platform.Name}}.\n",
		`<p>Hello {{.User.Name}},</p>
<p>you are no longer a member of the group <strong>{{.Group.Title}}</strong> on {{.Platform.Name}}.</p>`),
	emailTemplate(events.CourseFinished, ToUser, "Congratulations: you finished {{.Course.Title}}",
		"Hello {{.User.Name}},\n\ncongratulations on finishing the course {{.Course.Title}} on {{.Date.Format \"2 January 2006\"}}. Your certificate is listed in your profile on {{.Platform.Name}}:\n\n{{.Link}}\n",
		`<p>Hello {{.User.Name}},</p>
<p>congratulations on finishing the course <strong>{{.Course.Title}}</strong> on {{.Date.Format "2 January 2006"}}. Your certificate is listed in your profile on {{.Platform.Name}}:</p>
<p><a href="{{.Link}}">{{.Course.Title}}</a></p>`),
	{Slot: Slot{Event: events.CourseFinished, Channel: Pdf, Recipient: ToUser},
		Subject: "Certificate of completion",
		Text: "This certifies that\n{{.User.Name}}\nhas completed the course\n{{.Course.Title}}\non {{.Date.Format \"2 January 2006\"}}\n" +
			"{{.Platform.Name}}\n"},
}

func emailTemplate(event, recipient, subject, text, html string) Template {
	return Template{Slot: Slot{Event: event, Channel: Email, Recipient: recipient}, Subject: subject, Text: text, HTML: html}
}
