package runcode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// API is a host function offered to code as api.<Name>(...). Every API is
// async in JavaScript: a call returns a Promise that the handler settles.
type API struct {
	// Name is a JavaScript identifier; code calls api.<Name>.
	Name string
	// Signature shows how to call it, e.g. "api.fetch(url, {method, headers, body})".
	// Default "api.<Name>(...)".
	Signature string
	// Description says what it does, in a sentence or two.
	Description string
	// ReturnType describes what the promise resolves to, e.g. "{status, headers, body}".
	ReturnType string
	// ReadOnly reports that the API does not change anything outside the
	// sandbox; run_code is advertised as read-only when all its APIs are.
	ReadOnly bool
	// Params, if set, is a JSON schema the argument list (a JSON array, so
	// usually with prefixItems) must satisfy before Handler is called.
	Params *jsonschema.Schema
	// Validate, if set, checks the arguments after Params.
	Validate func(args []json.RawMessage) error
	// Hints are the keys of the run's hints the API reads; only these are
	// passed to it, in Call.Hints.
	Hints []string
	// Handler serves a call. ctx ends with the run (its deadline, or the
	// caller's cancellation). The result is marshaled to JSON; an error is
	// thrown into the script as an Error with the same message.
	Handler func(ctx context.Context, call Call) (any, error)
}

// Call is one invocation of an API.
type Call struct {
	// Args are the arguments, each as JSON (undefined arrives as null).
	Args []json.RawMessage
	// Hints holds the run's hints the API declared, by key.
	Hints map[string]json.RawMessage
}

// Arg decodes argument i into v. A missing or null argument leaves v as it
// is and reports false.
func (c Call) Arg(i int, v any) (bool, error) {
	if i >= len(c.Args) || string(c.Args[i]) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(c.Args[i], v); err != nil {
		return false, fmt.Errorf("argument %d: %v", i+1, err)
	}
	return true, nil
}

// Hint decodes the hint key into v and reports whether it was given.
func (c Call) Hint(key string, v any) (bool, error) {
	raw, ok := c.Hints[key]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("hint %q: %v", key, err)
	}
	return true, nil
}

// APIInfo is an API's metadata, as listed in environment.apis and in the
// tool description.
type APIInfo struct {
	Name        string `json:"name"`
	Signature   string `json:"signature"`
	Description string `json:"description"`
	Returns     string `json:"returns,omitempty"`
}

// registeredAPI is an API checked and ready to serve.
type registeredAPI struct {
	API
	params *jsonschema.Resolved
}

var (
	schemaArgPath  = regexp.MustCompile(`validating /prefixItems/(\d+)`)
	schemaPropPath = regexp.MustCompile(`validating /properties/([^:/]+)`)
	schemaCount    = regexp.MustCompile(`(minItems|maxItems): array length (\d+) is (?:less|greater) than (\d+)`)
)

// schemaMessage rewords a jsonschema validation error of an argument list
// in terms of arguments.
func schemaMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "validating root: ")
	msg = schemaArgPath.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(schemaArgPath.FindStringSubmatch(m)[1])
		return "argument " + strconv.Itoa(n+1)
	})
	msg = schemaPropPath.ReplaceAllString(msg, "property $1")
	return schemaCount.ReplaceAllStringFunc(msg, func(m string) string {
		g := schemaCount.FindStringSubmatch(m)
		if g[1] == "minItems" {
			return "got " + g[2] + " arguments, need at least " + g[3]
		}
		return "got " + g[2] + " arguments, at most " + g[3] + " are accepted"
	})
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func newRegisteredAPI(api API) (*registeredAPI, error) {
	if !identifier.MatchString(api.Name) {
		return nil, fmt.Errorf("runcode: API name %q is not a JavaScript identifier", api.Name)
	}
	if api.Handler == nil {
		return nil, fmt.Errorf("runcode: API %q has no handler", api.Name)
	}
	if api.Signature == "" {
		api.Signature = "api." + api.Name + "(...)"
	}
	api.Hints = slices.Clone(api.Hints)
	r := &registeredAPI{API: api}
	if api.Params != nil {
		resolved, err := api.Params.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("runcode: API %q: parameter schema: %v", api.Name, err)
		}
		r.params = resolved
	}
	return r, nil
}

func (a *registeredAPI) info() APIInfo {
	return APIInfo{Name: "api." + a.Name, Signature: a.Signature, Description: a.Description, Returns: a.ReturnType}
}

// call validates the arguments (a JSON array) and runs the handler.
func (a *registeredAPI) call(ctx context.Context, args json.RawMessage, hints map[string]json.RawMessage) (any, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(args, &list); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON array: %v", err)
	}
	if a.params != nil {
		var instance any
		if err := json.Unmarshal(args, &instance); err != nil {
			return nil, err
		}
		if err := a.params.Validate(instance); err != nil {
			return nil, fmt.Errorf("invalid arguments: %s; expected %s", schemaMessage(err), a.Signature)
		}
	}
	if a.Validate != nil {
		if err := a.Validate(list); err != nil {
			return nil, fmt.Errorf("invalid arguments: %v; expected %s", err, a.Signature)
		}
	}
	call := Call{Args: list, Hints: map[string]json.RawMessage{}}
	for _, k := range a.Hints {
		if v, ok := hints[k]; ok {
			call.Hints[k] = v
		}
	}
	result, err := a.Handler(ctx, call)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return nil, fmt.Errorf("cancelled: the run ended")
		}
		return nil, err
	}
	return result, nil
}
