package codemode

import (
	"encoding/json"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/programs"
)

// LibraryOf is the library of the saved programs a program calls, as
// programs.Callees resolved them for its caller (roots: those its code
// names; all: every one reachable); nil when it calls none.
func LibraryOf(roots []string, all map[string]*programs.Callee) *Library {
	if len(roots) == 0 {
		return nil
	}
	lib := &Library{Roots: roots, Programs: make(map[string]*LibraryProgram, len(all))}
	for name, cl := range all {
		lp := &LibraryProgram{Name: name, Calls: cl.Calls, DeniedBy: cl.DeniedBy}
		if v := cl.Version; v != nil {
			lp.Ref, lp.Code, lp.Params = v.Ref(), v.Code, v.Params
			var plan pipeline.Plan
			if len(v.Plan) > 0 && json.Unmarshal(v.Plan, &plan) == nil {
				lp.Plan = &plan
			}
		}
		lib.Programs[name] = lp
	}
	return lib
}
