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
	"github.com/cozystack/address-controller/internal/driver/metallb/catchup"
)

// MetalLB's annotations, current and legacy.
const (
	annotationLoadBalancerIPs       = "metallb.io/loadBalancerIPs"
	annotationLegacyLoadBalancerIPs = "metallb.universe.tf/loadBalancerIPs"
	annotationAddressPool           = "metallb.io/address-pool"
	annotationLegacyAddressPool     = "metallb.universe.tf/address-pool"
	annotationAllowSharedIP         = "metallb.io/allow-shared-ip"
	annotationLegacyAllowSharedIP   = "metallb.universe.tf/allow-shared-ip"
	annotationAllocatedFromPool     = catchup.AnnotationAllocatedFromPool
)
