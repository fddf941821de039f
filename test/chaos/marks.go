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

package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/types"
)

// secret recomputes, from the outside, the marks and sharing keys the
// driver derives (docs/design.md, "Shared handoff"; docs/security.md): an
// HMAC-SHA256 keyed with the UID of the placeholder namespace over the
// parts, each followed by a zero byte, in hex, cut to 24 characters. The
// harness creates that namespace, so it knows the key; the managers' code
// is not imported, so a change to how the driver computes them shows here
// as a violation.
type secret []byte

func (s secret) mark(parts ...string) string {
	mac := hmac.New(sha256.New, s)
	for _, p := range parts {
		mac.Write([]byte(p))
		mac.Write([]byte{0})
	}
	return hex.EncodeToString(mac.Sum(nil))[:24]
}

// withdrawn is the only valid value of the withdrawn label on the Service
// of uid.
func (s secret) withdrawn(uid types.UID) string { return s.mark("withdrawn", string(uid)) }

// claimKey is the sharing key of the claim of uid: what its hold and its
// carrier share an address under.
func (s secret) claimKey(uid types.UID) string { return "iad-" + s.mark("claim", string(uid)) }

// addressKey is the sharing key of the IPAddress of uid, which a hold
// carries once the binding ended and no workload ever does.
func (s secret) addressKey(uid types.UID) string { return "iad-" + s.mark("address", string(uid)) }
