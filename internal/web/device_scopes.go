package web

// The device page explains each scope a client asks for in words and
// groups them, so that the person approving knows what they grant and
// can grant fewer. The scope names are the API's (docs/agents.md); a
// scope this list does not know is shown by its name under "Other".

// scopeWords are a scope's short name and what it allows, in English,
// Polish and Chinese.
type scopeWords struct {
	group       string
	name, about [3]string
}

var scopeInfo = map[string]scopeWords{
	"courses:read": {"reading",
		[3]string{"Read courses", "Odczyt kursów", "读取课程"},
		[3]string{"See courses, lessons, topics and their files, as you can.", "Przeglądanie kursów, lekcji, tematów i ich plików, tak jak Ty możesz.", "查看课程、课时、主题及其文件（在您的权限范围内）。"}},
	"progress:read": {"reading",
		[3]string{"Read your progress", "Odczyt Twoich postępów", "读取您的学习进度"},
		[3]string{"See which topics you finished and your scores.", "Sprawdzanie, które tematy ukończyłeś, i Twoich wyników.", "查看您完成了哪些主题及您的成绩。"}},
	"profile:read": {"reading",
		[3]string{"Read your profile", "Odczyt Twojego profilu", "读取您的个人资料"},
		[3]string{"See your name, e-mail address, groups and personal settings.", "Wgląd w Twoje imię, adres e-mail, grupy i ustawienia osobiste.", "查看您的姓名、电子邮件地址、分组和个人设置。"}},
	"notifications:read": {"reading",
		[3]string{"Read your notifications", "Odczyt Twoich powiadomień", "读取您的通知"},
		[3]string{"See the notifications sent to you.", "Przeglądanie wysłanych do Ciebie powiadomień.", "查看发给您的通知。"}},
	"h5p:read": {"reading",
		[3]string{"Read interactive content", "Odczyt treści interaktywnych", "读取互动内容"},
		[3]string{"See H5P exercises and their results, as you can.", "Przeglądanie ćwiczeń H5P i ich wyników, tak jak Ty możesz.", "查看 H5P 练习及其结果（在您的权限范围内）。"}},
	"tokens:read": {"reading",
		[3]string{"List your tokens", "Lista Twoich tokenów", "列出您的令牌"},
		[3]string{"See the names and permissions of your other tokens.", "Wgląd w nazwy i uprawnienia Twoich innych tokenów.", "查看您其他令牌的名称和权限。"}},
	"progress:write": {"learning",
		[3]string{"Record your progress", "Zapisywanie Twoich postępów", "记录您的学习进度"},
		[3]string{"Mark topics done and save answers as you.", "Oznaczanie tematów jako ukończone i zapisywanie odpowiedzi w Twoim imieniu.", "以您的身份将主题标记为完成并保存答案。"}},
	"profile:write": {"learning",
		[3]string{"Change your profile", "Zmiana Twojego profilu", "修改您的个人资料"},
		[3]string{"Change your name, photo, interests and personal settings; never your e-mail address or password.", "Zmiana imienia, zdjęcia, zainteresowań i ustawień osobistych; nigdy adresu e-mail ani hasła.", "修改您的姓名、头像、兴趣和个人设置；不能修改电子邮件地址或密码。"}},
	"notifications:write": {"learning",
		[3]string{"Mark notifications read", "Oznaczanie powiadomień jako przeczytane", "将通知标为已读"},
		[3]string{"Mark your notifications as read.", "Oznaczanie Twoich powiadomień jako przeczytanych.", "将您的通知标记为已读。"}},
	"tokens:write": {"learning",
		[3]string{"Create and revoke your tokens", "Tworzenie i unieważnianie Twoich tokenów", "创建和撤销您的令牌"},
		[3]string{"Make new tokens for you, never with more permissions than this one.", "Tworzenie nowych tokenów w Twoim imieniu, nigdy z szerszymi uprawnieniami niż ten.", "为您创建新令牌，权限不会超过此令牌。"}},
	"courses:write": {"authoring",
		[3]string{"Author courses", "Tworzenie kursów", "编写课程"},
		[3]string{"Create, change and delete courses, lessons and topics, upload packages and assign learners, as you can.", "Tworzenie, zmiana i usuwanie kursów, lekcji i tematów, wgrywanie pakietów i przypisywanie uczących się, tak jak Ty możesz.", "创建、修改和删除课程、课时和主题，上传课件包并分配学员（在您的权限范围内）。"}},
	"h5p:write": {"authoring",
		[3]string{"Author interactive content", "Tworzenie treści interaktywnych", "编写互动内容"},
		[3]string{"Create, change and delete H5P exercises and libraries, as you can.", "Tworzenie, zmiana i usuwanie ćwiczeń i bibliotek H5P, tak jak Ty możesz.", "创建、修改和删除 H5P 练习和库（在您的权限范围内）。"}},
	"reports:read": {"authoring",
		[3]string{"Read class progress", "Odczyt postępów grupy", "读取班级学习进度"},
		[3]string{"See the progress, scores and time of the learners in the courses you teach (every course for an admin).", "Wgląd w postępy, wyniki i czas uczących się na kursach, które prowadzisz (na wszystkich kursach w przypadku administratora).", "查看您所教课程中学员的进度、成绩和学习时间（管理员可查看所有课程）。"}},
	"users:read": {"admin",
		[3]string{"Read users", "Odczyt użytkowników", "读取用户"},
		[3]string{"See every user's account, settings, notifications and certificates.", "Wgląd w konta, ustawienia, powiadomienia i certyfikaty wszystkich użytkowników.", "查看所有用户的账户、设置、通知和证书。"}},
	"users:write": {"admin",
		[3]string{"Manage users", "Zarządzanie użytkownikami", "管理用户"},
		[3]string{"Create, change, block and delete users.", "Tworzenie, zmiana, blokowanie i usuwanie użytkowników.", "创建、修改、封禁和删除用户。"}},
	"groups:read": {"admin",
		[3]string{"Read groups", "Odczyt grup", "读取分组"},
		[3]string{"See the groups and who is in them.", "Wgląd w grupy i ich członków.", "查看分组及其成员。"}},
	"groups:write": {"admin",
		[3]string{"Manage groups", "Zarządzanie grupami", "管理分组"},
		[3]string{"Create, change and delete groups and their members.", "Tworzenie, zmiana i usuwanie grup oraz ich członków.", "创建、修改和删除分组及其成员。"}},
	"settings:read": {"admin",
		[3]string{"Read settings", "Odczyt ustawień", "读取设置"},
		[3]string{"See the site's settings (the private ones too, for admins).", "Wgląd w ustawienia serwisu (dla administratorów także prywatne).", "查看站点设置（管理员还可查看私有设置）。"}},
	"settings:write": {"admin",
		[3]string{"Change settings", "Zmiana ustawień", "修改设置"},
		[3]string{"Change how the whole site behaves.", "Zmiana działania całego serwisu.", "修改整个站点的行为。"}},
	"tokens:manage": {"admin",
		[3]string{"Manage everyone's tokens", "Zarządzanie tokenami wszystkich", "管理所有人的令牌"},
		[3]string{"See and revoke every token of the site and read the agent audit.", "Wgląd i unieważnianie wszystkich tokenów serwisu oraz odczyt dziennika agentów.", "查看并撤销站点的所有令牌，并读取智能体审计。"}},
	"platform:read": {"platform",
		[3]string{"Read the platform", "Odczyt platformy", "读取平台"},
		[3]string{"List every school (tenant) of the platform.", "Lista wszystkich szkół (dzierżawców) platformy.", "列出平台上的所有学校（租户）。"}},
	"platform:write": {"platform",
		[3]string{"Run the platform", "Zarządzanie platformą", "管理平台"},
		[3]string{"Create, rename, suspend and delete schools (tenants).", "Tworzenie, zmiana nazwy, zawieszanie i usuwanie szkół (dzierżawców).", "创建、重命名、暂停和删除学校（租户）。"}},
}

// scopeGroups are the groups in the page's order, with their headings.
var scopeGroups = []struct {
	key  string
	name [3]string
}{
	{"reading", [3]string{"Reading", "Odczyt", "读取"}},
	{"learning", [3]string{"Acting as you", "Działanie w Twoim imieniu", "以您的身份操作"}},
	{"authoring", [3]string{"Authoring", "Tworzenie treści", "内容编写"}},
	{"admin", [3]string{"Administration", "Administracja", "管理"}},
	{"platform", [3]string{"Platform", "Platforma", "平台"}},
	{"other", [3]string{"Other", "Inne", "其他"}},
}

// scopeItem is one scope as the page shows it.
type scopeItem struct {
	Scope, Name, About string
	Granted            bool
}

type scopeGroup struct {
	Name   string
	Scopes []scopeItem
}

// groupScopes arranges scopes by group, in words of lang; granted marks
// the ones checked.
func groupScopes(scopes []string, lang string, granted func(string) bool) []scopeGroup {
	li := langIndex(lang)
	var out []scopeGroup
	for _, g := range scopeGroups {
		var items []scopeItem
		for _, s := range scopes {
			info, ok := scopeInfo[s]
			switch {
			case ok && info.group == g.key:
				items = append(items, scopeItem{Scope: s, Name: info.name[li], About: info.about[li], Granted: granted(s)})
			case !ok && g.key == "other":
				items = append(items, scopeItem{Scope: s, Name: s, Granted: granted(s)})
			}
		}
		if len(items) > 0 {
			out = append(out, scopeGroup{Name: g.name[li], Scopes: items})
		}
	}
	return out
}

// deviceWords are the device page's words: English, Polish, Chinese.
var deviceWords = map[string][3]string{
	"title":       {"Connect a device", "Połącz urządzenie", "连接设备"},
	"wants":       {"wants to sign in as you with these permissions:", "chce zalogować się jako Ty z tymi uprawnieniami:", "想以您的身份登录，并请求以下权限："},
	"asked":       {"asked to sign in as you with these permissions:", "prosiło o zalogowanie się jako Ty z tymi uprawnieniami:", "曾请求以您的身份登录，并请求以下权限："},
	"choose":      {"Untick what you do not want to grant: the device gets only what stays ticked.", "Odznacz to, czego nie chcesz przyznać: urządzenie dostanie tylko zaznaczone uprawnienia.", "取消勾选您不想授予的权限：设备只会获得保持勾选的权限。"},
	"granted":     {"You granted:", "Przyznano:", "您已授予："},
	"code":        {"Code", "Kod", "代码"},
	"at":          {"Asked at", "Czas prośby", "请求时间"},
	"from":        {"From address", "Z adresu", "来源地址"},
	"status":      {"Status", "Stan", "状态"},
	"careful":     {"Approve only if you started this sign-in yourself and the code matches the one your device shows.", "Zatwierdź tylko wtedy, gdy sam rozpocząłeś to logowanie, a kod zgadza się z kodem na urządzeniu.", "只有在您本人发起此次登录且代码与设备上显示的一致时才批准。"},
	"approve":     {"Approve", "Zatwierdź", "批准"},
	"deny":        {"Deny", "Odrzuć", "拒绝"},
	"label":       {"Code shown on your device", "Kod widoczny na urządzeniu", "设备上显示的代码"},
	"help":        {"Eight letters, as XXXX-XXXX. Case and the dash do not matter.", "Osiem liter, jako XXXX-XXXX. Wielkość liter i myślnik nie mają znaczenia.", "八个字母，格式为 XXXX-XXXX。不区分大小写，短横线可有可无。"},
	"continue":    {"Continue", "Dalej", "继续"},
	"approved":    {"Approved. The device is now signed in as you; you can close this page.", "Zatwierdzono. Urządzenie jest teraz zalogowane jako Ty; możesz zamknąć tę stronę.", "已批准。设备现已以您的身份登录；您可以关闭此页面。"},
	"denied":      {"Denied. The device was not signed in.", "Odrzucono. Urządzenie nie zostało zalogowane.", "已拒绝。设备未登录。"},
	"none":        {"Choose at least one permission, or deny the request.", "Wybierz co najmniej jedno uprawnienie albo odrzuć prośbę.", "请至少选择一项权限，或拒绝该请求。"},
	"notpage":     {"This decision did not come from the confirmation page. Open the page with the code again and choose there.", "Ta decyzja nie pochodzi ze strony potwierdzenia. Otwórz stronę z kodem ponownie i wybierz tam.", "此决定并非来自确认页面。请重新打开带有代码的页面并在那里选择。"},
	"toomany":     {"Too many attempts. Please wait a minute and try again.", "Zbyt wiele prób. Odczekaj minutę i spróbuj ponownie.", "尝试次数过多。请稍等一分钟后再试。"},
	"st.pending":  {"waiting for your decision", "czeka na Twoją decyzję", "等待您的决定"},
	"st.approved": {"approved", "zatwierdzone", "已批准"},
	"st.denied":   {"denied", "odrzucone", "已拒绝"},
	"st.expired":  {"expired", "wygasło", "已过期"},
}
