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

package classparams

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

	"github.com/cozystack/address-controller/internal/ipaddr"
)

// AddressesRequired is the problem of parameters that list no addresses.
const AddressesRequired = "parameters.addresses is required"

// Error lists everything wrong with a class's parameters, each problem as
// "parameters.<path>: <what is wrong>", so that the class's condition can
// tell an admin every fix at once.
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	return strings.Join(e.Problems, "; ")
}

// Path is the problem prefix of a field of the parameters, given as the
// path below spec.parameters ("addresses[0]", "" for the parameters
// themselves).
func Path(path string) string {
	if path == "" {
		return "parameters"
	}
	return "parameters." + path
}

// Decode reads raw into v strictly. It returns the problems found: a value
// of the wrong type first (encoding/json reports the first in document
// order), then every unknown or duplicate field; typed is false when a
// value had the wrong type or there was nothing to decode, and v is then
// not worth checking further. Parameters that are absent, empty or null
// lack their addresses.
func Decode(raw *runtime.RawExtension, v any) (problems []string, typed bool) {
	data, err := rawJSON(raw)
	if err != nil {
		return []string{"parameters: " + err.Error()}, false
	}
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return []string{AddressesRequired}, false
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, v)
	if err != nil {
		// A value of the wrong type leaves its field unset, so semantic
		// checks would only add misleading "required" noise.
		problems = append(problems, decodeProblem(err))
	}
	for _, e := range strictErrs {
		problems = append(problems, strictProblem(e))
	}
	return problems, err == nil
}

// Addresses parses the parameters' address ranges in order, and returns
// every problem: no entry at all is AddressesRequired, and each entry that
// does not parse is Address's problem.
func Addresses(addrs []string) ([]ipaddr.Range, []string) {
	if len(addrs) == 0 {
		return nil, []string{AddressesRequired}
	}
	var problems []string
	ranges := make([]ipaddr.Range, 0, len(addrs))
	for i, s := range addrs {
		r, problem := Address(i, s)
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		ranges = append(ranges, r)
	}
	return ranges, problems
}

// Address parses s, the i-th address range, or returns its problem:
// "parameters.addresses[i]: " and what ipaddr.ParseRange finds wrong.
func Address(i int, s string) (ipaddr.Range, string) {
	r, err := ipaddr.ParseRange(s)
	if err != nil {
		return ipaddr.Range{}, fmt.Sprintf("%s: %v", Path(fmt.Sprintf("addresses[%d]", i)), err)
	}
	return r, ""
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

func strictProblem(err error) string {
	var fe sigsjson.FieldError
	if !errors.As(err, &fe) {
		return "parameters: " + err.Error()
	}
	if strings.HasPrefix(err.Error(), "duplicate field") {
		return Path(fe.FieldPath()) + ": duplicate field"
	}
	return Path(fe.FieldPath()) + ": unknown field"
}

func decodeProblem(err error) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Sprintf("%s: want %s, got %s", Path(te.Field), describeType(te.Type), describeValue(te.Value))
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
