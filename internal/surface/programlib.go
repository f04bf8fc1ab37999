package surface

import (
	"context"
	"slices"
	"strings"

	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/programs"
)

// programLibrary is the saved programs a call_tool_chain program may call
// as programs.<name>(args) (codemode's Library): those its code names that
// the caller may call, and those they name in turn; a program the
// caller's rules deny is in it as denied (its call fails, a plan naming
// it is refused). nil when the code names none. A refusal (PROGRAM_DEPTH;
// STORE_UNAVAILABLE when the store cannot say what the program calls) is
// an error: the run does not start.
func (sf *Surface) programLibrary(ctx context.Context, code string) (*codemode.Library, error) {
	if sf.programs.programs == nil || !strings.Contains(code, "programs") {
		return nil, nil // most runs: nothing to resolve, nothing allocated
	}
	deniedTo := sf.policy.DeniedTo(ctx)
	denied := func(name string) string { return deniedTo(programs.PolicyBackend, name) }
	c := sf.programCaller(ctx)
	roots, all, err := sf.programs.programs.Callees(ctx, c, code, denied)
	if err != nil {
		return nil, err
	}
	for _, r := range roots {
		if cl := all[r]; cl != nil && cl.Version != nil {
			sf.programs.programs.Called(cl.Version)
		}
	}
	lib := codemode.LibraryOf(roots, all)
	if unknown := unknownPrograms(code, roots); len(unknown) > 0 {
		// A name the caller has no program of is not defined in the run;
		// should the run fail on it, its hint names what there is.
		if lib == nil {
			lib = &codemode.Library{}
		}
		lib.Unknown = unknown
		if listed, err := sf.programs.programs.List(ctx, c); err == nil {
			for _, l := range listed {
				if denied(l.Name) == "" {
					lib.Callable = append(lib.Callable, l.Name)
				}
			}
		}
	}
	return lib, nil
}

// unknownPrograms are the names code calls as programs.<name> that are not
// among the roots Callees resolved: the caller has no program of them.
func unknownPrograms(code string, roots []string) []string {
	var out []string
	for _, n := range programs.Names(code) {
		if !slices.Contains(roots, n) {
			out = append(out, n)
		}
	}
	return out
}
