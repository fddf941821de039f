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

package driver

// The reasons of the conditions the driver writes. A backend gives some of
// them in the HoldState and RenderResult it returns; the rest are the
// framework's, for the backend's tests to read.

// Reasons of the driver's conditions on an address.
const (
	ReasonHeld        = "Held"
	ReasonHoldPending = "HoldPending"
	ReasonReclaiming  = "Reclaiming"
	ReasonNotHeld     = "NotHeld"
	// ReasonSharedHandoff: a workload carries the address, handed over by a
	// shared handoff (the backend never counted it free).
	ReasonSharedHandoff = "SharedHandoff"
	// ReasonGapHandoff: a workload carries the address, handed over by a gap
	// handoff; the message says why sharing was not possible.
	ReasonGapHandoff    = "GapHandoff"
	ReasonHandingOver   = "HandingOver"
	ReasonNotAssociated = "NotAssociated"
	ReasonHeldByOther   = "HeldByAnotherService"
	ReasonNoConflict    = "NoConflict"
	ReasonBackendLost   = "OutsideBackendRanges"
)

// Reasons of a class's Rendered condition.
const (
	ReasonRendered     = "Rendered"
	ReasonOutsideRange = "AddressesOutsideRange"
)

// Reasons for which a handoff is a gap handoff.
const (
	ReasonGapForced      = "GapHandoffForced"
	ReasonNoSharing      = "BackendCannotShare"
	ReasonHandWrittenPin = "HandWrittenPin"
)
