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

package v1alpha1

// Every name the two managers, the charts and admins share lives here, so that
// neither manager has to import the other to agree on a string.

// ProvisionerMetalLB is the provisioner name of the MetalLB driver,
// metallb-iad. A class with this provisioner is served by it.
const ProvisionerMetalLB = "metallb.drivers.local.sdn.cozystack.io"

// ProvisionerCilium is the provisioner name of the Cilium LB-IPAM driver,
// cilium-iad. A class with this provisioner is served by it.
const ProvisionerCilium = "cilium.drivers.local.sdn.cozystack.io"

// Annotations.
const (
	// AnnotationIsDefaultClass on an IPAddressClass, set to "true", makes it the
	// class of claims that name none. The core refuses to guess when zero or
	// several classes carry it.
	AnnotationIsDefaultClass = "ipaddressclass.local.sdn.cozystack.io/is-default-class"

	// AnnotationProvisioner is stamped on a claim by the core once it admitted
	// the claim to its class; it names the class's provisioner. It routes: a
	// driver watches the claims stamped with its own name. It grants nothing:
	// tenants can write it, so a driver provisions only for a claim whose
	// status says the core admitted it (IPAddressClaim.AdmittedTo), and the
	// core reports a stamp it did not write (EventForgedStamp).
	AnnotationProvisioner = "local.sdn.cozystack.io/provisioner"

	// AnnotationHeld on a Released IPAddress, set to "true", stops the class's
	// releaseDelay from returning the address to the pool. It pauses the
	// return, not the clock.
	AnnotationHeld = "ipaddress.local.sdn.cozystack.io/held"

	// AnnotationIPAddressClaim on a Service names, in the Service's own
	// namespace, the claim whose addresses the Service should carry.
	AnnotationIPAddressClaim = "local.sdn.cozystack.io/ip-address-claim"

	// AnnotationPinnedBy on a Service records that a driver wrote the backend's
	// address pin, and the exact value it wrote. A driver withdraws only a pin
	// it finds under its own marker; a hand-written pin is never touched.
	AnnotationPinnedBy = "local.sdn.cozystack.io/pinned"

	// AnnotationSharedBy on a Service records the sharing key a driver wrote
	// on it for a shared handoff: a key the Service carries without this
	// record is the tenant's, and the driver never overwrites it.
	AnnotationSharedBy = "local.sdn.cozystack.io/sharing-key"

	// AnnotationAddressName on a placeholder records the full name of the
	// IPAddress it holds (LabelAddress carries a label-safe key of it).
	AnnotationAddressName = "local.sdn.cozystack.io/address-name"
)

// Finalizers.
const (
	// FinalizerClaimProtection holds a claim until the core has reclaimed every
	// address bound to it.
	FinalizerClaimProtection = "local.sdn.cozystack.io/claim-protection"

	// FinalizerAddressProtection holds an IPAddress while a live claim holds it.
	FinalizerAddressProtection = "local.sdn.cozystack.io/address-protection"

	// FinalizerClassProtection holds a class while any IPAddress of it exists,
	// in any phase.
	FinalizerClassProtection = "local.sdn.cozystack.io/class-protection"

	// FinalizerDriverTeardownSuffix, appended to a provisioner name, is the
	// finalizer a driver puts on the addresses it creates, so that it can
	// release their backend state before they go.
	FinalizerDriverTeardownSuffix = "/teardown"

	// FinalizerDriverCarrierSuffix, appended to a provisioner name, is the
	// finalizer a driver puts on a Service that carries addresses by a shared
	// handoff: while the Service is being deleted, the backend keeps its
	// allocation, so the hold can come back before the address is free.
	FinalizerDriverCarrierSuffix = "/carrier"
)

// DriverCarrierFinalizer is the finalizer the driver named provisioner puts
// on the Services that carry addresses by a shared handoff.
func DriverCarrierFinalizer(provisioner string) string {
	return provisioner + FinalizerDriverCarrierSuffix
}

// DriverTeardownFinalizer is the finalizer the driver named provisioner puts on
// the IPAddress objects it creates.
func DriverTeardownFinalizer(provisioner string) string {
	return provisioner + FinalizerDriverTeardownSuffix
}

// Labels the driver puts on the backend objects it owns.
const (
	// LabelPlaceholder marks a Service as a reservation placeholder; its value
	// is the placeholder's role. The label alone is forgeable: it exempts a
	// Service from conflict detection only inside the driver's placeholder
	// namespace.
	LabelPlaceholder = "local.sdn.cozystack.io/placeholder"

	// LabelAddress names the IPAddress a placeholder holds (or, on an
	// allocation placeholder, will hold once recorded).
	LabelAddress = "local.sdn.cozystack.io/address"

	// LabelClaimUID is the UID of the claim an allocation placeholder
	// provisions for.
	LabelClaimUID = "local.sdn.cozystack.io/claim-uid"

	// LabelFamily is the IP family of a placeholder: IPv4 or IPv6.
	LabelFamily = "local.sdn.cozystack.io/family"

	// LabelClass is the IPAddressClass a placeholder draws from.
	LabelClass = "local.sdn.cozystack.io/class"

	// LabelWithdrawn marks a Service whose pin a driver withdrew, or an
	// allocation placeholder giving back an address it was offered: until
	// the allocator takes the address back, such a Service still reports it
	// and is no thief (MetalLB's pools rendered by the driver refuse it, so
	// MetalLB takes the address back). Its value is a mark only the driver
	// can compute, and the charts' admission policies reserve the label to
	// the driver.
	LabelWithdrawn = "local.sdn.cozystack.io/withdrawn"

	// LabelManagedBy is Kubernetes' recommended label: a driver sets it to its
	// own name on the backend objects it renders and creates (pools,
	// placeholders), and selects its own by it.
	LabelManagedBy = "app.kubernetes.io/managed-by"
)

// Names `metallb-iad import` puts on what it creates, so that a rerun finds
// its own objects again and `--undo` removes nothing else.
const (
	// LabelImportedFor on an IPAddressClaim or IPAddress says that the import
	// created it for the Service whose UID is the value.
	LabelImportedFor = "local.sdn.cozystack.io/imported-for"

	// AnnotationImportedFrom on an imported IPAddressClaim names the Service,
	// in the claim's namespace, it was created for.
	AnnotationImportedFrom = "local.sdn.cozystack.io/imported-from"

	// AnnotationImportedPin on a Service records the MetalLB pin
	// (metallb.io/loadBalancerIPs) the import wrote on it, the addresses the
	// Service already had. Undo removes the pin only while it still equals
	// this value; a Service pinned by hand before the import gets none.
	AnnotationImportedPin = "local.sdn.cozystack.io/imported-pin"
)

// Names one driver writes on the Services it manages and reads back itself.
// No other party acts on them; they are here so that every well-known name is
// declared once, and the chaos harness reads them from here.
const (
	// AnnotationClaim, on an allocation placeholder, is "namespace/name" of
	// the claim it provisions for.
	AnnotationClaim = "local.sdn.cozystack.io/claim"

	// AnnotationRetry is the retry token a Service the MetalLB driver pinned
	// was last written in; writing a new one makes MetalLB process the
	// Service again (docs/design.md, "Refused requests").
	AnnotationRetry = "local.sdn.cozystack.io/retry"

	// AnnotationYieldedTo, on an allocation placeholder of the MetalLB
	// driver, is the address MetalLB offered it that the ledger records for
	// someone else: the placeholder gives it back and waits until its
	// rightful holder has it.
	AnnotationYieldedTo = "local.sdn.cozystack.io/yielded-to"

	// AnnotationProbeAsked stamps one of the MetalLB driver's probes with the
	// question it was asked in (docs/design.md, "MetalLB after a start").
	AnnotationProbeAsked = "local.sdn.cozystack.io/probe-asked"

	// LabelCiliumPool, on a Service, names (label-safe) the class whose
	// CiliumLoadBalancerIPPool serves it: every pool the Cilium driver
	// renders selects exactly the Services carrying its class's value, and
	// only that driver writes the label (the chart's admission policy
	// reserves it). Taking it away is how the driver makes LB-IPAM let go of
	// an address: LB-IPAM keeps an address after its pin is gone.
	LabelCiliumPool = "cilium.drivers.local.sdn.cozystack.io/pool"
)

// Values of LabelPlaceholder.
const (
	// PlaceholderAllocation asks the backend for a new address for a claim.
	PlaceholderAllocation = "allocation"
	// PlaceholderHold keeps an existing address reserved while no workload
	// carries it.
	PlaceholderHold = "hold"
	// PlaceholderTombstone stands in, for a moment, for a placeholder MetalLB
	// still counts though it was deleted, so that MetalLB lets its address go.
	PlaceholderTombstone = "tombstone"
)

// Condition types.
const (
	// ConditionClassResolved on a claim says whether its class is known.
	ConditionClassResolved = "ClassResolved"

	// ConditionBound on a claim says whether every requested family is bound;
	// on an IPAddress (set by the core) it says whether, and why not, the
	// address is bound to a claim.
	ConditionBound = "Bound"

	// ConditionHeld on an IPAddress (set by the driver) says whether the
	// backend holds the address for its owner.
	ConditionHeld = "Held"

	// ConditionAssociated on an IPAddress (set by the driver) says whether a
	// workload carries the address.
	ConditionAssociated = "Associated"

	// ConditionConflict on an IPAddress (set by the driver) is True while a
	// Service that is not entitled to the address holds it.
	ConditionConflict = "Conflict"

	// ConditionDropped on an IPAddress (set by the driver) is True while the
	// Service the address is associated with, having carried it, no longer
	// reports it in status.loadBalancer.ingress: its load balancer took the
	// address away or refuses it (for MetalLB, for instance, an annotation
	// naming another pool). The address stays bound to its claim and
	// associated with the Service, and goes to no one else; the condition
	// turns False once the Service reports the address again.
	ConditionDropped = "Dropped"

	// ConditionReleased on an IPAddress (set by the core) is True while the
	// address is Released. Its lastTransitionTime is when the address was
	// released, and the class's releaseDelay counts from it: a Conflict or
	// Lost phase the driver sets and clears in between moves the phase's
	// transition time, not this one. The core removes it once the address is
	// no longer Released.
	ConditionReleased = "Released"

	// ConditionRendered on an IPAddressClass (set by the driver) says whether
	// the driver could render the class into backend configuration.
	ConditionRendered = "Rendered"

	// ConditionWithinLimits on an IPAddressClass with addressesPerNamespace
	// (set by the core) is False while a namespace holds more addresses of
	// the class than the limit, which happens only when the limit is lowered
	// below what was already admitted.
	ConditionWithinLimits = "WithinLimits"
)

// Reasons of the class's WithinLimits condition.
const (
	ReasonWithinLimits        = "WithinLimits"
	ReasonNamespacesOverLimit = "NamespacesOverLimit"
)

// Reasons of the address's Dropped condition.
const (
	// ReasonNoLongerReported: the associated Service no longer reports the
	// address it carried.
	ReasonNoLongerReported = "NoLongerReported"
	// ReasonNotDropped: no associated Service has dropped the address.
	ReasonNotDropped = "NotDropped"
)

// Reasons of the claim's ClassResolved condition.
const (
	ReasonResolved               = "Resolved"
	ReasonClassNotFound          = "ClassNotFound"
	ReasonNoDefaultClass         = "NoDefaultClass"
	ReasonMultipleDefaultClasses = "MultipleDefaultClasses"
)

// Reasons of the Bound condition, on claims and addresses.
const (
	// ReasonBound: bound (claim: every family; address: to the named claim).
	ReasonBound = "Bound"
	// ReasonWaitingForProvisioning: the claim waits for its driver.
	ReasonWaitingForProvisioning = "WaitingForProvisioning"
	// ReasonWaitingForAddress: the claim waits for the address it names.
	ReasonWaitingForAddress = "WaitingForAddress"
	// ReasonWaitingForClass: the claim cannot progress until its class resolves.
	ReasonWaitingForClass = "WaitingForClass"
	// ReasonAddressLost: a bound address of the claim is gone or lost.
	ReasonAddressLost = "AddressLost"
	// ReasonAvailable: the address is free for matching.
	ReasonAvailable = "Available"
	// ReasonReleased: the address's claim is gone and the address is retained.
	ReasonReleased = "Released"
	// ReasonPreBindingRefused: a pre-binding that the claim cannot accept.
	ReasonPreBindingRefused = "PreBindingRefused"
	// ReasonWaitingForClaim: a pre-bound address waits for its claim to accept it.
	ReasonWaitingForClaim = "WaitingForClaim"
	// ReasonClaimDeleting: the address's claim is being deleted.
	ReasonClaimDeleting = "ClaimDeleting"
	// ReasonInvalidAddress: spec.address is not an address the core can use.
	ReasonInvalidAddress = "InvalidAddress"
	// ReasonDuplicate: another IPAddress keeps the same spec.address (see
	// IPAddress.DuplicateOf); this one is never matched or held.
	ReasonDuplicate = "Duplicate"
	// ReasonClassNotAllowed: the class's namespaceSelector does not match the
	// claim's namespace; nothing is bound or provisioned for the claim.
	ReasonClassNotAllowed = "ClassNotAllowed"
	// ReasonClassLimitReached: admitting the claim would take its namespace
	// past the class's addressesPerNamespace; it waits for a release.
	ReasonClassLimitReached = "ClassLimitReached"
	// ReasonFamilyNotServed: the claim asks for a family its class's driver
	// reports it cannot serve (IPAddressClass.status.families); nothing is
	// provisioned for it.
	ReasonFamilyNotServed = "FamilyNotServed"
)

// Event reasons of the drivers.
const (
	EventProvisioned        = "Provisioned"
	EventLedgerMismatch     = "LedgerMismatch"
	EventAssociated         = "Associated"
	EventDissociated        = "Dissociated"
	EventAssociationRefused = "AssociationRefused"
	EventAddressConflict    = "AddressConflict"
	EventConflictResolved   = "ConflictResolved"
	EventAddressLost        = "AddressLost"
	// EventAddressDropped (Warning, on the IPAddress and on its Service): the
	// Service's load balancer no longer reports the address it carried
	// (ConditionDropped turned True).
	EventAddressDropped = "AddressDropped"
	// EventAddressReportedAgain (Normal, on the IPAddress): the Service that
	// dropped the address reports it again (ConditionDropped turned False).
	EventAddressReportedAgain = "AddressReportedAgain"
	// EventYielded: the backend offered an allocation placeholder an address
	// the ledger records for someone else; the driver gave it back.
	EventYielded = "Yielded"
	// EventAddressContested: the backend keeps offering a recorded address to
	// allocation placeholders; the driver keeps giving it back.
	EventAddressContested = "AddressContested"
	// EventWaitingForBackend: the backend is not ready for changes (its
	// Gate is shut); the claim's provisioning or the Service's association
	// waits and resumes by itself once it is.
	EventWaitingForBackend = "WaitingForBackend"
)

// Event reasons of the core. A claim whose class cannot be resolved gets a
// Warning event whose reason is its ClassResolved condition's
// (ReasonClassNotFound, ReasonNoDefaultClass, ReasonMultipleDefaultClasses).
const (
	EventClassInUse          = "ClassInUse"
	EventPreBindingRefused   = "PreBindingRefused"
	EventBound               = "Bound"
	EventReclaimed           = "Reclaimed"
	EventReleaseDelayExpired = "ReleaseDelayExpired"
	EventDeletionBlocked     = "DeletionBlocked"
	// EventClaimLost: a Bound claim went Lost (a bound address is gone or
	// Lost).
	EventClaimLost         = "ClaimLost"
	EventClassNotAllowed   = "ClassNotAllowed"
	EventClassLimitReached = "ClassLimitReached"
	// EventInvalidNamespaceSelector on a class whose namespaceSelector has
	// label keys or values admission could not check; its claims are refused.
	EventInvalidNamespaceSelector = "InvalidNamespaceSelector"
	// EventForgedStamp on a claim carrying a provisioner stamp the core did
	// not write (no admission in its status explains it): the core treats
	// the claim as not admitted and takes the stamp off.
	EventForgedStamp = "ForgedStamp"
	// EventDuplicateAddress (Warning, on an IPAddress): it became a
	// duplicate, Pending with ReasonDuplicate; the note names the IPAddress
	// that keeps the address (see IPAddress.DuplicateOf).
	EventDuplicateAddress = "DuplicateAddress"
)
