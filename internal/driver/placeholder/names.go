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

package placeholder

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Port is the one port a placeholder declares: a LoadBalancer Service needs
// one, and with no selector nothing ever answers on it. It is the discard
// port, which no workload exposes in practice, so that a workload can share
// its address with the hold (docs/design.md, "Shared handoff").
const Port = 9

// The prefixes of the placeholders' names: allocation placeholders, and
// holds.
const (
	AllocationPrefix = "alloc-"
	HoldPrefix       = "hold-"
)

// AllocationName is the deterministic name of the placeholder that asks the
// allocator for a claim's address of one family: racing reconciles collide
// on create instead of allocating twice.
func AllocationName(claim types.UID, family v1alpha1.IPFamily) string {
	suffix := "4"
	if family == v1alpha1.IPv6 {
		suffix = "6"
	}
	return AllocationPrefix + string(claim) + "-v" + suffix
}

// HoldName is the deterministic name of the placeholder holding an address.
func HoldName(addressName string) string {
	if name := HoldPrefix + addressName; len(validation.IsDNS1035Label(name)) == 0 {
		return name
	}
	return HoldPrefix + digest(addressName)
}

// AddressKey is the label-safe key of an IPAddress name (see LabelValue).
func AddressKey(addressName string) string { return LabelValue(addressName) }

// LabelValue is a label-safe key of an object's name: the name itself when
// it is a valid label value (driver-created names always are), else a digest
// of it.
func LabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	return "h-" + digest(name)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return strings.ToLower(hex.EncodeToString(sum[:]))[:20]
}

// SplitKey splits "namespace/name" (v1alpha1.AnnotationClaim's value).
func SplitKey(key string) (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(key, "/")
	return namespace, name, ok && namespace != "" && name != ""
}
