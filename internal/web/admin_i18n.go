package web

import (
	"net/http"
	"strings"
)

// pageLangs are the languages of the admin pages, the device page and the
// sign-in notice, in the order of the word lists below.
var pageLangs = []string{"en", "pl", "zh"}

func langIndex(lang string) int {
	for i, l := range pageLangs {
		if l == lang {
			return i
		}
	}
	return 0
}

// acceptLang picks the page language from the browser's Accept-Language:
// the first of its languages that the pages speak, else English.
func acceptLang(r *http.Request) string {
	header := r.Header.Get("Accept-Language")
	if len(header) > 512 {
		header = header[:512]
	}
	best, bestQ := "en", -1.0
	for i, part := range strings.Split(header, ",") {
		if i >= 20 {
			break
		}
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		tag = strings.ToLower(strings.TrimSpace(tag))
		base, _, _ := strings.Cut(tag, "-")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			q = parseQ(v)
		}
		for _, l := range pageLangs {
			if base == l && q > bestQ && q > 0 {
				best, bestQ = l, q
			}
		}
	}
	return best
}

// parseQ reads a quality value ("0.8"); anything unreadable is 0.
func parseQ(v string) float64 {
	v = strings.TrimSpace(v)
	if v == "1" || strings.HasPrefix(v, "1.") {
		return 1
	}
	rest, ok := strings.CutPrefix(v, "0.")
	if !ok {
		return 0
	}
	q, scale := 0.0, 0.1
	for _, c := range rest {
		if c < '0' || c > '9' {
			return 0
		}
		q += float64(c-'0') * scale
		scale /= 10
	}
	return q
}

// adminView is what every admin page shows besides its own data: its
// language, section, title, the notice after a change and the API's
// messages.
type adminView struct {
	Lang, Section, Title string
	Notice, Error        string
	// Errors are the API's validation messages by field.
	Errors map[string][]string
	// CSRF is the token of the page's forms.
	CSRF string
}

// T is the page's word for key.
func (v adminView) T(key string) string {
	w, ok := adminWords[key]
	if !ok {
		return key
	}
	return w[langIndex(v.Lang)]
}

// FieldError is the API's message about one field, or "".
func (v adminView) FieldError(field string) string {
	return strings.Join(v.Errors[field], " ")
}

// RoleName is a role in words; a role the pages do not know keeps its
// name.
func (v adminView) RoleName(role string) string {
	if _, ok := adminWords["role."+role]; ok {
		return v.T("role." + role)
	}
	return role
}

// Roles are the roles the pages offer.
func (adminView) Roles() []string { return adminRoles }

// DeliveryStates are the delivery states the failed deliveries page
// filters by, failed first.
func (adminView) DeliveryStates() []string { return []string{"failed", "pending", "delivered"} }

// adminWords are the admin pages' words: English, Polish, Chinese.
var adminWords = map[string][3]string{
	"nav.admin":   {"Admin", "Administracja", "管理"},
	"nav.label":   {"Administration", "Administracja", "管理"},
	"admin.title": {"Administration", "Administracja", "管理"},
	"home.title":  {"Overview", "Przegląd", "概览"},
	"home.users":  {"Find, add, block and remove people, and give them roles.", "Wyszukuj, dodawaj, blokuj i usuwaj osoby oraz nadawaj im role.", "查找、添加、封禁和删除用户，并为他们分配角色。"},
	"home.groups": {"Groups of learners as a tree, and who is in each.", "Grupy uczących się w postaci drzewa i ich członkowie.", "以树状结构显示学员分组及其成员。"},
	"home.settings": {"How the site behaves: registration, sessions, courses, integrations.",
		"Działanie serwisu: rejestracja, sesje, kursy, integracje.", "站点的行为：注册、会话、课程、集成。"},
	"home.tokens": {"Tokens of scripts and agents, and every call they made.", "Tokeny skryptów i agentów oraz każde ich wywołanie.", "脚本和智能体的令牌，以及它们的每一次调用。"},
	"home.templates": {"The e-mails and certificates sent for each event, with a preview.",
		"Wiadomości e-mail i certyfikaty wysyłane przy zdarzeniach, z podglądem.", "每个事件发送的电子邮件和证书，可预览。"},
	"home.certificates":      {"Certificates", "Certyfikaty", "证书"},
	"home.certificates.text": {"Certificates issued to learners; make one again.", "Certyfikaty wydane uczącym się; wygeneruj ponownie.", "已颁发给学员的证书；可重新生成。"},
	"home.lti":               {"Platforms that launch this site, and tools it launches.", "Platformy uruchamiające ten serwis i narzędzia, które on uruchamia.", "启动本站的平台，以及本站启动的工具。"},
	"home.deliveries":        {"Notifications and webhooks that could not be delivered.", "Powiadomienia i webhooki, których nie udało się dostarczyć.", "未能送达的通知和 Webhook。"},

	"certificates.title": {"Certificates", "Certyfikaty", "证书"},
	"certificates.help": {"A learner gets a certificate on finishing a course; it is made from the CourseFinished PDF template.",
		"Uczący się otrzymuje certyfikat po ukończeniu kursu; powstaje on z szablonu PDF CourseFinished.", "学员完成课程后获得证书；证书根据 CourseFinished PDF 模板生成。"},
	"certificates.template": {"Edit the certificate template", "Edytuj szablon certyfikatu", "编辑证书模板"},
	"certificates.off": {"The certificate template is switched off: no certificates are made, and none can be made again.",
		"Szablon certyfikatu jest wyłączony: certyfikaty nie powstają i nie można ich wygenerować ponownie.", "证书模板已关闭：不会生成证书，也无法重新生成。"},
	"certificates.course":   {"Course", "Kurs", "课程"},
	"certificates.all":      {"All courses", "Wszystkie kursy", "所有课程"},
	"certificates.learner":  {"Learner", "Uczący się", "学员"},
	"certificates.only":     {"Only the certificates of", "Tylko certyfikaty użytkownika", "仅显示以下学员的证书："},
	"certificates.everyone": {"Show every learner's", "Pokaż wszystkich uczących się", "显示所有学员的证书"},
	"certificates.finished": {"Finished", "Ukończono", "完成时间"},
	"certificates.made":     {"Made", "Wygenerowano", "生成时间"},
	"certificates.again":    {"Make again", "Wygeneruj ponownie", "重新生成"},
	"certificates.gone":     {"Deleted user", "Usunięty użytkownik", "已删除的用户"},
	"certificates.none":     {"No certificates here yet.", "Na razie brak certyfikatów.", "暂无证书。"},
	"certificates.user":     {"Certificates of this user", "Certyfikaty tego użytkownika", "该用户的证书"},
	"done.certificate": {"The certificate was made again from the current template.", "Certyfikat wygenerowano ponownie z bieżącego szablonu.",
		"已根据当前模板重新生成证书。"},

	"users.title":    {"Users", "Użytkownicy", "用户"},
	"users.search":   {"Name or e-mail", "Imię, nazwisko lub e-mail", "姓名或电子邮件"},
	"users.role":     {"Role", "Rola", "角色"},
	"users.status":   {"Status", "Stan", "状态"},
	"role.student":   {"Student", "Uczeń", "学生"},
	"role.tutor":     {"Tutor", "Nauczyciel", "导师"},
	"role.admin":     {"Admin", "Administrator", "管理员"},
	"status.active":  {"Active", "Aktywny", "正常"},
	"status.blocked": {"Blocked", "Zablokowany", "已封禁"},
	"any":            {"Any", "Dowolny", "全部"},
	"filter":         {"Filter", "Filtruj", "筛选"},
	"total":          {"Total", "Razem", "总计"},
	"none":           {"Nothing here yet.", "Na razie nic tu nie ma.", "暂无内容。"},
	"pages":          {"Pages", "Strony", "分页"},
	"prev":           {"Previous page", "Poprzednia strona", "上一页"},
	"next":           {"Next page", "Następna strona", "下一页"},
	"actions":        {"Actions", "Działania", "操作"},
	"save":           {"Save", "Zapisz", "保存"},
	"create":         {"Create", "Utwórz", "创建"},
	"delete":         {"Delete", "Usuń", "删除"},
	"cancel":         {"Cancel", "Anuluj", "取消"},
	"yes":            {"Yes", "Tak", "是"},
	"no":             {"No", "Nie", "否"},

	"user.new":              {"New user", "Nowy użytkownik", "新建用户"},
	"user.edit":             {"Edit user", "Edycja użytkownika", "编辑用户"},
	"user.delete":           {"Delete user", "Usuń użytkownika", "删除用户"},
	"user.name":             {"Name", "Imię i nazwisko", "姓名"},
	"user.first":            {"First name", "Imię", "名"},
	"user.last":             {"Last name", "Nazwisko", "姓"},
	"user.email":            {"E-mail address", "Adres e-mail", "电子邮件地址"},
	"user.phone":            {"Phone", "Telefon", "电话"},
	"user.bio":              {"About", "O sobie", "简介"},
	"user.password":         {"New password", "Nowe hasło", "新密码"},
	"user.password.new":     {"Password", "Hasło", "密码"},
	"user.password.help":    {"Leave empty to keep the current password.", "Zostaw puste, aby zachować obecne hasło.", "留空则保留当前密码。"},
	"user.password.newhelp": {"Leave empty: the user sets one with a password reset.", "Zostaw puste: użytkownik ustawi je, resetując hasło.", "留空：用户通过重置密码自行设置。"},
	"user.roles":            {"Roles", "Role", "角色"},
	"user.categories":       {"Categories (ids)", "Kategorie (identyfikatory)", "类别（编号）"},
	"user.interests":        {"Interests", "Zainteresowania", "兴趣"},
	"interests.none":        {"No interests yet.", "Brak zainteresowań.", "暂无兴趣。"},
	"interests.add":         {"Add", "Dodaj", "添加"},
	"interests.add.label":   {"Add interests (category ids)", "Dodaj zainteresowania (identyfikatory kategorii)", "添加兴趣（类别编号）"},
	"interests.remove":      {"Remove", "Usuń", "移除"},
	"user.ids.help":         {"Numbers separated by commas.", "Liczby oddzielone przecinkami.", "用逗号分隔的数字。"},
	"user.now":              {"Now", "Obecnie", "当前"},
	"user.categories.names": {"Categories", "Kategorie", "类别"},
	"categories.none":       {"No categories yet.", "Brak kategorii.", "暂无类别。"},
	"interests.choose":      {"Add interests", "Dodaj zainteresowania", "添加兴趣"},
	"interests.all":         {"Every category is already an interest of this user.", "Wszystkie kategorie są już zainteresowaniami tego użytkownika.", "所有类别都已是该用户的兴趣。"},
	"user.verified":         {"E-mail address verified", "Adres e-mail potwierdzony", "电子邮件地址已验证"},
	"user.active":           {"Active (may sign in)", "Aktywny (może się logować)", "正常（可以登录）"},
	"user.actions":          {"Account", "Konto", "账户"},
	"user.block":            {"Block", "Zablokuj", "封禁"},
	"user.unblock":          {"Unblock", "Odblokuj", "解除封禁"},
	"user.impersonate":      {"Sign in as this user", "Zaloguj się jako ten użytkownik", "以该用户身份登录"},
	"user.impersonate.help": {"You then see and do what the user does, until you choose “Back to my account” in the banner at the top of every page.", "Widzisz wtedy i robisz to, co ten użytkownik, dopóki nie wybierzesz „Wróć do mojego konta” na pasku u góry każdej strony.", "之后您将看到并执行该用户所能做的一切，直到您在每个页面顶部的横幅中选择“返回我的账户”。"},
	"acting.label":          {"Signed in as another user", "Zalogowano jako inny użytkownik", "正在以其他用户身份登录"},
	"acting.text":           {"{admin}, you are signed in as {user}.", "{admin}, jesteś zalogowany(-a) jako {user}.", "{admin}，您正在以 {user} 的身份登录。"},
	"acting.back":           {"Back to my account", "Wróć do mojego konta", "返回我的账户"},
	"confirm.question":      {"Delete this for good?", "Usunąć to na zawsze?", "确定永久删除吗？"},
	"confirm.help":          {"This cannot be undone.", "Tej operacji nie można cofnąć.", "此操作无法撤销。"},

	"groups.title":       {"Groups", "Grupy", "分组"},
	"groups.tree":        {"All groups", "Wszystkie grupy", "所有分组"},
	"group.title":        {"Group", "Grupa", "分组"},
	"group.new":          {"New group", "Nowa grupa", "新建分组"},
	"group.delete":       {"Delete group", "Usuń grupę", "删除分组"},
	"group.name":         {"Name", "Nazwa", "名称"},
	"group.parent":       {"Inside group", "W grupie", "上级分组"},
	"group.top":          {"None (top level)", "Brak (najwyższy poziom)", "无（顶级）"},
	"group.registerable": {"New accounts may choose it when they register", "Nowe konta mogą ją wybrać przy rejestracji", "新账户注册时可以选择此分组"},
	"group.members":      {"Members", "Członkowie", "成员"},
	"group.remove":       {"Remove", "Usuń z grupy", "移出"},
	"group.add":          {"Add member", "Dodaj członka", "添加成员"},
	"group.add.label":    {"E-mail address or user id", "Adres e-mail lub identyfikator użytkownika", "电子邮件地址或用户编号"},

	"settings.title":  {"Settings", "Ustawienia", "设置"},
	"settings.help":   {"Only the settings you change are saved; the service checks them all and saves all or none.", "Zapisywane są tylko zmienione ustawienia; usługa sprawdza wszystkie i zapisuje wszystkie albo żadne.", "只保存您修改的设置；服务会检查全部设置，要么全部保存，要么都不保存。"},
	"settings.secret": {"Hidden; type to replace", "Ukryte; wpisz, aby zastąpić", "已隐藏；输入以替换"},

	"tokens.title":     {"Tokens", "Tokeny", "令牌"},
	"tokens.user":      {"User id", "Identyfikator użytkownika", "用户编号"},
	"tokens.revoked":   {"Show revoked tokens too", "Pokaż także unieważnione tokeny", "同时显示已撤销的令牌"},
	"tokens.name":      {"Name", "Nazwa", "名称"},
	"tokens.scopes":    {"Permissions", "Uprawnienia", "权限"},
	"tokens.used":      {"Last used", "Ostatnio użyty", "最近使用"},
	"tokens.revoke":    {"Revoke", "Unieważnij", "撤销"},
	"tokens.isrevoked": {"Revoked", "Unieważniony", "已撤销"},
	"audit.title":      {"Agent audit", "Dziennik agentów", "智能体审计"},
	"audit.token":      {"Token id", "Identyfikator tokenu", "令牌编号"},
	"audit.route":      {"Route", "Ścieżka", "路由"},
	"audit.status":     {"Answer status", "Kod odpowiedzi", "响应状态"},
	"audit.at":         {"When", "Kiedy", "时间"},
	"audit.ip":         {"Address", "Adres", "地址"},

	"templates.title":     {"Messages and certificates", "Wiadomości i certyfikaty", "消息和证书"},
	"template.title":      {"Template", "Szablon", "模板"},
	"templates.help":      {"What is sent for each event: e-mails, and the PDF certificate of a finished course.", "Co jest wysyłane przy każdym zdarzeniu: wiadomości e-mail i certyfikat PDF ukończonego kursu.", "每个事件发送的内容：电子邮件，以及完成课程的 PDF 证书。"},
	"templates.event":     {"Event", "Zdarzenie", "事件"},
	"templates.channel":   {"Sent as", "Wysyłane jako", "发送方式"},
	"templates.recipient": {"To", "Do", "收件人"},
	"templates.subject":   {"Subject or title", "Temat lub tytuł", "主题或标题"},
	"templates.text":      {"Text", "Treść", "正文"},
	"templates.html":      {"HTML", "HTML", "HTML"},
	"templates.enabled":   {"Send on this channel", "Wysyłaj tym kanałem", "通过此渠道发送"},
	"templates.preview":   {"Preview", "Podgląd", "预览"},
	"templates.variables": {"Values you can use", "Dostępne wartości", "可用的变量"},
	"templates.email":     {"E-mail", "E-mail", "电子邮件"},
	"templates.pdf":       {"PDF certificate", "Certyfikat PDF", "PDF 证书"},
	"templates.custom":    {"Changed", "Zmieniony", "已自定义"},
	"templates.default":   {"Built in", "Domyślny", "默认"},
	"templates.off":       {"Off", "Wyłączony", "已关闭"},

	"lti.title":                {"LTI", "LTI", "LTI"},
	"lti.registrations":        {"Platforms that launch this site", "Platformy uruchamiające ten serwis", "启动本站的平台"},
	"lti.registrations.help":   {"Other learning platforms where this site is a tool.", "Inne platformy e-learningowe, w których ten serwis jest narzędziem.", "将本站作为工具使用的其他学习平台。"},
	"lti.tools":                {"Tools this site launches", "Narzędzia uruchamiane przez ten serwis", "本站启动的工具"},
	"lti.tools.help":           {"External tools that courses open; give a tool the addresses below.", "Zewnętrzne narzędzia otwierane w kursach; przekaż narzędziu poniższe adresy.", "课程中打开的外部工具；请将下面的地址提供给工具。"},
	"lti.issuer":               {"Issuer", "Wystawca", "签发者"},
	"lti.client":               {"Client id", "Identyfikator klienta", "客户端编号"},
	"lti.login":                {"Login address", "Adres logowania", "登录地址"},
	"lti.token":                {"Token address", "Adres tokenów", "令牌地址"},
	"lti.reg.new":              {"Add a platform", "Dodaj platformę", "添加平台"},
	"lti.tool.new":             {"Add a tool", "Dodaj narzędzie", "添加工具"},
	"lti.jwks":                 {"Key set address (JWKS)", "Adres zestawu kluczy (JWKS)", "密钥集地址（JWKS）"},
	"lti.jwks.optional":        {"Key set address (JWKS), optional", "Adres zestawu kluczy (JWKS), opcjonalny", "密钥集地址（JWKS），可选"},
	"lti.token.optional":       {"Token address, optional", "Adres tokenów, opcjonalny", "令牌地址，可选"},
	"lti.deployments":          {"Deployment ids, one a line", "Identyfikatory wdrożeń, po jednym w wierszu", "部署编号，每行一个"},
	"lti.deployment":           {"Deployment id, optional", "Identyfikator wdrożenia, opcjonalny", "部署编号，可选"},
	"lti.target":               {"Launch address", "Adres uruchomienia", "启动地址"},
	"lti.redirects":            {"Redirect addresses, one a line", "Adresy przekierowań, po jednym w wierszu", "重定向地址，每行一个"},
	"lti.share_name":           {"Send the learner's name", "Wysyłaj imię i nazwisko ucznia", "发送学员姓名"},
	"lti.share_email":          {"Send the learner's e-mail", "Wysyłaj e-mail ucznia", "发送学员电子邮件"},
	"lti.delete.registrations": {"Delete platform", "Usuń platformę", "删除平台"},
	"lti.delete.tools":         {"Delete tool", "Usuń narzędzie", "删除工具"},

	"deliveries.title":     {"Failed deliveries", "Nieudane dostarczenia", "投递失败"},
	"deliveries.help":      {"Events that could not be passed on (e-mails, notifications, webhooks, grades) after every retry. Retry one when its cause is fixed.", "Zdarzenia, których nie udało się przekazać (e-maile, powiadomienia, webhooki, oceny) mimo ponowień. Ponów, gdy przyczyna zostanie usunięta.", "经过所有重试仍未能传递的事件（电子邮件、通知、Webhook、成绩）。问题解决后可重试。"},
	"deliveries.failed":    {"Failed", "Nieudane", "失败"},
	"deliveries.pending":   {"Waiting", "Oczekujące", "等待中"},
	"deliveries.delivered": {"Delivered", "Dostarczone", "已送达"},
	"deliveries.listener":  {"Receiver", "Odbiorca", "接收方"},
	"deliveries.attempts":  {"Attempts", "Próby", "尝试次数"},
	"deliveries.error":     {"Last error", "Ostatni błąd", "最后错误"},
	"deliveries.retry":     {"Retry", "Ponów", "重试"},

	"done.created":           {"Created.", "Utworzono.", "已创建。"},
	"done.saved":             {"Saved.", "Zapisano.", "已保存。"},
	"done.nochange":          {"Nothing was changed.", "Nic nie zmieniono.", "没有任何更改。"},
	"done.deleted":           {"Deleted.", "Usunięto.", "已删除。"},
	"done.blocked":           {"The user is blocked and signed out everywhere.", "Użytkownik jest zablokowany i wylogowany wszędzie.", "该用户已被封禁，并已在所有地方退出登录。"},
	"done.unblocked":         {"The user may sign in again.", "Użytkownik może znów się logować.", "该用户可以重新登录。"},
	"done.added":             {"Added to the group.", "Dodano do grupy.", "已添加到分组。"},
	"done.removed":           {"Removed from the group.", "Usunięto z grupy.", "已移出分组。"},
	"done.revoked":           {"The token is revoked.", "Token został unieważniony.", "令牌已撤销。"},
	"done.retried":           {"The delivery will be tried again now.", "Dostarczenie zostanie teraz ponowione.", "将立即重新投递。"},
	"done.interests.added":   {"Interests added.", "Dodano zainteresowania.", "已添加兴趣。"},
	"done.interests.removed": {"Interest removed.", "Usunięto zainteresowanie.", "已移除兴趣。"},
	"done.back":              {"You are back in your own account.", "Wróciłeś(-aś) do swojego konta.", "您已返回自己的账户。"},

	"err.title":            {"That did not work", "To się nie udało", "操作未成功"},
	"err.form":             {"Some fields need attention.", "Niektóre pola wymagają poprawy.", "部分字段需要修改。"},
	"err.interests.choose": {"Choose at least one category.", "Wybierz co najmniej jedną kategorię.", "请至少选择一个类别。"},
	"err.ids":              {"Type category ids as numbers separated by commas.", "Wpisz identyfikatory kategorii jako liczby oddzielone przecinkami.", "请以逗号分隔的数字输入类别编号。"},
	"err.json":             {"This is not valid JSON.", "To nie jest poprawny JSON.", "这不是有效的 JSON。"},
	"err.impersonate":      {"This session may not sign in as other users.", "Ta sesja nie może logować się jako inni użytkownicy.", "此会话无权以其他用户身份登录。"},
	"err.acting":           {"You are already signed in as another user: go back to your own account first.", "Jesteś już zalogowany(-a) jako inny użytkownik: najpierw wróć do swojego konta.", "您已在以其他用户身份登录：请先返回自己的账户。"},
	"err.nouser":           {"No user with that e-mail address or id.", "Nie ma użytkownika o tym adresie e-mail lub identyfikatorze.", "没有该电子邮件地址或编号的用户。"},
}
