package typecheck

import "testing"

// Valid programs whose arguments TypeScript cannot follow (built up
// after their declaration, spread from values of unknown shape) may get
// hints, never a certain diagnostic: strict mode must not refuse them.
func TestValidDynamicArgumentsAreNotRefused(t *testing.T) {
	programs := []string{
		"const args = {};\nargs.id = 'p1';\nawait counter.bump(args)",
		"const args = {};\nargs['id'] = 'p1';\nawait counter.bump(args)",
		"let args = {by: 1};\nObject.assign(args, {id: 'p1'});\nawait counter.bump(args)",
		"const base = {};\nbase.id = 'p1';\nawait counter.bump({...base, by: 2})",
		"const ids = JSON.parse('[\"a\"]');\nfor (const id of ids) await counter.bump({id})",
		"const o = Object.fromEntries([['id', 'p1']]);\nawait counter.bump(o)",
	}
	for _, p := range programs {
		rep := check(t, p)
		if c := rep.Certain(); len(c) > 0 {
			t.Errorf("%q: strict would refuse it: %+v", p, c)
		}
	}
}
