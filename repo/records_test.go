package repo

// deps returns the requirements written ss; a text that does not parse becomes a
// requirement whose name is the text, which writes it so, for tests of the checks.
func deps(ss ...string) []Requirement {
	rs := make([]Requirement, len(ss))
	for i, s := range ss {
		r, err := parseRequirement(s)
		if err != nil {
			r = Requirement{Name: s}
		}
		rs[i] = r
	}
	return rs
}

// bins returns the commands of the bin entries ss.
func bins(ss ...string) []Command {
	cs := make([]Command, len(ss))
	for i, s := range ss {
		cs[i] = ParseCommand(s)
	}
	return cs
}
