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

package metallb

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// MetalLB's annotations, current and legacy.
const (
	annotationLoadBalancerIPs       = "metallb.io/loadBalancerIPs"
	annotationLegacyLoadBalancerIPs = "metallb.universe.tf/loadBalancerIPs"
	annotationAddressPool           = "metallb.io/address-pool"
	annotationAllowSharedIP         = "metallb.io/allow-shared-ip"
	annotationLegacyAllowSharedIP   = "metallb.universe.tf/allow-shared-ip"
	// annotationAllocatedFromPool is MetalLB's record, on a Service it gave
	// an address, of the pool the address came from. MetalLB removes it when
	// it handles a Service that is not a LoadBalancer.
	annotationAllocatedFromPool = "metallb.io/ip-allocated-from-pool"
)

// MetalLB's annotations other packages of the driver read: the pin and the
// sharing key.
const (
	AnnotationLoadBalancerIPs       = annotationLoadBalancerIPs
	AnnotationLegacyLoadBalancerIPs = annotationLegacyLoadBalancerIPs
	AnnotationAllowSharedIP         = annotationAllowSharedIP
	AnnotationLegacyAllowSharedIP   = annotationLegacyAllowSharedIP
)

// Names the driver puts on placeholder Services.
const (
	// annotationClaim records "namespace/name" of the claim an allocation
	// placeholder provisions for.
	annotationClaim = "local.sdn.cozystack.io/claim"
	// annotationAddressName records the full name of the IPAddress a
	// placeholder holds (LabelAddress carries a label-safe key of it).
	annotationAddressName = "local.sdn.cozystack.io/address-name"
	// LabelWithdrawn marks a Service whose pin the driver withdrew, or an
	// allocation placeholder giving back an address it was offered. The
	// driver's pools refuse such Services, so MetalLB takes back the address
	// it would otherwise keep. Its value is a mark only the driver can
	// compute (see withdrawnMark).
	LabelWithdrawn = "local.sdn.cozystack.io/withdrawn"
	// annotationSharedBy records the allow-shared-ip key the driver wrote on
	// a workload for a shared handoff.
	annotationSharedBy = "local.sdn.cozystack.io/sharing-key"
	// annotationRetry is the retry token a pinned Service was last written
	// in; writing a new one makes MetalLB process the Service again.
	annotationRetry = "local.sdn.cozystack.io/retry"
	// annotationYieldedTo, on an allocation placeholder, is the address
	// MetalLB offered it that the ledger records for someone else: the
	// placeholder gives it back and waits until its rightful holder has it.
	annotationYieldedTo = "local.sdn.cozystack.io/yielded-to"
)

// placeholderPort is the one port a placeholder declares: a LoadBalancer
// Service needs one, and with no selector nothing ever answers on it.
const placeholderPort = 9

// allocationName is the deterministic name of the placeholder that asks
// MetalLB for a claim's address of one family: racing reconciles collide on
// create instead of allocating twice.
func allocationName(claim types.UID, family v1alpha1.IPFamily) string {
	suffix := "4"
	if family == v1alpha1.IPv6 {
		suffix = "6"
	}
	return "alloc-" + string(claim) + "-v" + suffix
}

// holdName is the deterministic name of the placeholder holding an address.
func holdName(addressName string) string {
	if name := "hold-" + addressName; len(validation.IsDNS1035Label(name)) == 0 {
		return name
	}
	return "hold-" + digest(addressName)
}

// addressKey is a label-safe key of an IPAddress name: the name itself when
// it is a valid label value (driver-created names always are).
func addressKey(addressName string) string {
	if len(validation.IsValidLabelValue(addressName)) == 0 {
		return addressName
	}
	return "h-" + digest(addressName)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return strings.ToLower(hex.EncodeToString(sum[:]))[:20]
}
