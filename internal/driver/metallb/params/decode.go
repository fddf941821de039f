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
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/cozystack/address-controller/internal/driver/classparams"
)

// Error lists everything wrong with a class's parameters
// (classparams.Error).
type Error = classparams.Error

// Decode reads a class's spec.parameters strictly: unknown or duplicate
// fields, wrong types, trailing data and every semantic problem (bad or
// overlapping ranges, both l2 and bgp, out-of-range numbers, bad
// communities, peer names or selectors) are errors. On failure the error is
// an *Error holding all problems found; nothing is returned to render.
func Decode(raw *runtime.RawExtension) (*Parameters, error) {
	p := &Parameters{}
	problems, typed := classparams.Decode(raw, p)
	if typed {
		problems = append(problems, validate(p)...)
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return p, nil
}
