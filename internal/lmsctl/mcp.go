package lmsctl

func (a *app) mcp(args []string) error { return usagef("mcp: not built yet") }
