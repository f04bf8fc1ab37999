package surface

import (
	"context"
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
	roots, all, err := sf.programs.programs.Callees(ctx, sf.programCaller(ctx), code,
		func(name string) string { return deniedTo(programs.PolicyBackend, name) })
	if err != nil || len(roots) == 0 {
		return nil, err
	}
	for _, r := range roots {
		if cl := all[r]; cl != nil && cl.Version != nil {
			sf.programs.programs.Called(cl.Version)
		}
	}
	return codemode.LibraryOf(roots, all), nil
}
