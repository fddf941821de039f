/*
Copyright 2026 The address-controller Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package params

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"
)

// Error lists everything wrong with a class's parameters, each problem as
// "parameters.<path>: <what is wrong>", so that the class's condition can
// tell an admin every fix at once.
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	return strings.Join(e.Problems, "; ")
}

// Decode reads a class's spec.parameters strictly: unknown or duplicate
// fields, wrong types, trailing data and every semantic problem (bad or
// overlapping ranges, both l2 and bgp, out-of-range numbers, bad
// communities, peer names or selectors) are errors. On failure the error is
// an *Error holding all problems found; nothing is returned to render.
func Decode(raw *runtime.RawExtension) (*Parameters, error) {
	data, err := rawJSON(raw)
	if err != nil {
		return nil, &Error{Problems: []string{"parameters: " + err.Error()}}
	}
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return nil, &Error{Problems: []string{"parameters.addresses is required"}}
	}
	p := &Parameters{}
	strictErrs, err := sigsjson.UnmarshalStrict(data, p)
	var problems []string
	if err != nil {
		// A value of the wrong type leaves its field unset, so semantic
		// checks would only add misleading "required" noise.
		problems = append(problems, decodeProblem(err))
	}
	for _, e := range strictErrs {
		problems = append(problems, strictProblem(e))
	}
	if err == nil {
		problems = append(problems, validate(p)...)
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return p, nil
}

func rawJSON(raw *runtime.RawExtension) ([]byte, error) {
	switch {
	case raw == nil:
		return nil, nil
	case len(raw.Raw) > 0:
		return bytes.TrimSpace(raw.Raw), nil
	case raw.Object != nil:
		return json.Marshal(raw.Object)
	}
	return nil, nil
}

func fieldPath(path string) string {
	if path == "" {
		return "parameters"
	}
	return "parameters." + path
}

func strictProblem(err error) string {
	var fe sigsjson.FieldError
	if !errors.As(err, &fe) {
		return "parameters: " + err.Error()
	}
	if strings.HasPrefix(err.Error(), "duplicate field") {
		return fieldPath(fe.FieldPath()) + ": duplicate field"
	}
	return fieldPath(fe.FieldPath()) + ": unknown field"
}

func decodeProblem(err error) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Sprintf("%s: want %s, got %s", fieldPath(te.Field), describeType(te.Type), describeValue(te.Value))
	}
	if ok, _ := sigsjson.SyntaxErrorOffset(err); ok {
		return "parameters: not valid JSON: " + err.Error()
	}
	return "parameters: " + err.Error()
}

// describeType names a Go type the way a YAML author thinks of it.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int32:
		return fmt.Sprintf("an integer from %d to %d", math.MinInt32, math.MaxInt32)
	case reflect.Uint32:
		return fmt.Sprintf("an integer from 0 to %d", uint32(math.MaxUint32))
	}
	return t.String()
}

// describeValue turns encoding/json's "number -1" or "string" into "-1" or
// "a string".
func describeValue(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	switch v {
	case "array", "object":
		return "an " + v
	case "bool":
		return "a boolean"
	}
	return "a " + v
}
