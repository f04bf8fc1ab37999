package pipeline

// DenyReason names the configuration rule that denies backend's tool
// ("backends.memory.tools.deny: delete_*", or that its allow list does not
// name it), "" when the configuration does not deny it. The console's
// Tools page lists denied tools with it.
func (p *Policy) DenyReason(backend, tool string) string {
	if p.Decide(backend, tool) != Denied {
		return ""
	}
	r := p.ruleSet()[backend]
	name := fold(tool)
	for _, pat := range r.deny {
		if glob(pat, name) {
			return "backends." + backend + ".tools.deny: " + pat
		}
	}
	return "backends." + backend + ".tools.allow does not name it"
}
