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

package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Output formats of a run's report (-o).
const (
	OutputText = ""
	OutputJSON = "json"
	OutputYAML = "yaml"
)

// OutputAPIVersion versions the documents -o json|yaml writes. They are
// the command's output, never served by the API server. Within a version,
// fields are only added, never renamed, removed or given another meaning;
// docs/operating.md describes each.
const OutputAPIVersion = "import.local.sdn.cozystack.io/v1alpha1"

// Kinds of those documents, one per mode.
const (
	KindImportPlan   = "ImportPlan"
	KindUndoPlan     = "UndoPlan"
	KindHandoverPlan = "HandoverPlan"
)

// Subject is what every document says of its run.
type Subject struct {
	// Class is the IPAddressClass the run is about; Driver the driver that
	// serves it.
	Class  string `json:"class"`
	Driver string `json:"driver"`
	// Namespaces are those whose Services were considered; none: every
	// namespace.
	Namespaces []string `json:"namespaces,omitempty"`
	// Selector is the label selector the Services had to match, if any.
	Selector string `json:"selector,omitempty"`
	// Applied: the run wrote (--apply); every item then has a result.
	Applied bool `json:"applied"`
}

// subjectOf is what opts say of the run.
func subjectOf(opts Options) Subject {
	return Subject{Class: opts.Class, Driver: opts.Driver, Namespaces: opts.Namespaces, Selector: selectorOf(opts.Scope), Applied: opts.Apply}
}

// ImportPlan is an import's plan as -o json|yaml writes it, and with
// --apply what was done.
type ImportPlan struct {
	metav1.TypeMeta `json:",inline"`
	Subject
	// Imports are the Services brought under a claim, by namespace and
	// name.
	Imports []PlannedImport `json:"imports"`
	// Skips are the Services left alone, and why.
	Skips []PlannedSkip `json:"skips"`
}

// PlannedService is the Service a plan's item is about, and the addresses
// it holds, IPv4 first: an import keeps them.
type PlannedService struct {
	Namespace  string    `json:"namespace"`
	Service    string    `json:"service"`
	ServiceUID types.UID `json:"serviceUID"`
	Addresses  []string  `json:"addresses,omitempty"`
}

// plannedService is what a plan says of s and its addresses.
func plannedService(s Service, addresses []netip.Addr) PlannedService {
	return PlannedService{Namespace: s.Namespace, Service: s.Name, ServiceUID: s.UID, Addresses: addressStrings(addresses)}
}

// PlannedImport is one Service to bring under a claim.
type PlannedImport struct {
	PlannedService `json:",inline"`
	// Claim is the IPAddressClaim's name, in the Service's namespace, and
	// Family its family.
	Claim  string            `json:"claim"`
	Family v1alpha1.IPFamily `json:"family"`
	// Action is "import" (nothing exists yet), "resume" (an earlier run
	// began it) or "imported" (nothing left to do).
	Action string `json:"action"`
	// Note explains the claim's name when it is not the Service's.
	Note string `json:"note,omitempty"`
	// Result is what --apply did; absent in a dry run.
	Result *ImportResult `json:"result,omitempty"`
}

// ImportResult is what --apply did for one Service.
type ImportResult struct {
	// Bound: the claim is Bound to exactly the Service's addresses.
	Bound bool `json:"bound"`
	// Associated: the driver has recorded the Service as carrying them.
	Associated bool `json:"associated"`
	// Error says why the import did not finish; running again resumes it.
	Error string `json:"error,omitempty"`
}

// PlannedSkip is one Service the import leaves alone.
type PlannedSkip struct {
	PlannedService `json:",inline"`
	Reason         string `json:"reason"`
}

// UndoPlan is what --undo takes back and what it keeps, and with --apply
// what was done.
type UndoPlan struct {
	metav1.TypeMeta `json:",inline"`
	Subject
	Undos []PlannedUndo `json:"undos"`
}

// PlannedUndo is one import to take back, or to keep.
type PlannedUndo struct {
	Namespace string `json:"namespace"`
	// Claim is the import's IPAddressClaim, Service the Service it was
	// made for, and IPAddresses the IPAddresses it created.
	Claim       string   `json:"claim"`
	Service     string   `json:"service"`
	IPAddresses []string `json:"ipAddresses,omitempty"`
	// Action is "remove" or "keep"; Reason says why it is kept.
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	// Result is what --apply did to an import it removes.
	Result *UndoResult `json:"result,omitempty"`
}

// UndoResult is what --apply did to one import.
type UndoResult struct {
	Removed bool   `json:"removed"`
	Error   string `json:"error,omitempty"`
}

// HandoverPlan is what --handover changes, and with --apply how it ended.
type HandoverPlan struct {
	metav1.TypeMeta `json:",inline"`
	// Subject names no namespaces or selector: a handover is about the class.
	Subject
	// Steps are the writes, one line each, in their order; none when
	// nothing else overlaps the class.
	Steps []string `json:"steps"`
	// Blockers are Services that would lose their address: with any, the
	// handover refuses to run.
	Blockers []string `json:"blockers,omitempty"`
	// Unimported are Services whose addresses move into the class without
	// a claim.
	Unimported []string `json:"unimported,omitempty"`
	// Result is how --apply ended.
	Result *HandoverResult `json:"result,omitempty"`
}

// HandoverResult is how --apply ended.
type HandoverResult struct {
	// Rendered: the class's configuration is the driver's, and the class
	// says Rendered.
	Rendered bool   `json:"rendered"`
	Error    string `json:"error,omitempty"`
}

func importDocument(opts Options, plan Plan, outcomes []Outcome) ImportPlan {
	run := subjectOf(opts)
	run.Class = plan.Class
	doc := ImportPlan{TypeMeta: typeMeta(KindImportPlan), Subject: run,
		Imports: make([]PlannedImport, 0, len(plan.Imports)), Skips: make([]PlannedSkip, 0, len(plan.Skips))}
	results := map[types.UID]*ImportResult{}
	for _, o := range outcomes {
		r := &ImportResult{Bound: o.Err == nil, Associated: o.Associated}
		if o.Err != nil {
			r.Error = o.Err.Error()
		}
		results[o.Import.Service.UID] = r
	}
	for _, im := range plan.Imports {
		doc.Imports = append(doc.Imports, PlannedImport{PlannedService: plannedService(im.Service, im.Addresses),
			Claim: im.Claim, Family: im.Family, Action: im.Action, Note: im.Note, Result: results[im.Service.UID]})
	}
	for _, sk := range plan.Skips {
		doc.Skips = append(doc.Skips, PlannedSkip{PlannedService: plannedService(sk.Service, sk.Addresses), Reason: sk.Reason})
	}
	return doc
}

func (doc ImportPlan) failed() int {
	return count(doc.Imports, func(im PlannedImport) bool { return im.Result != nil && im.Result.Error != "" })
}

func undoDocument(opts Options, undos []Undo, results map[string]error) UndoPlan {
	doc := UndoPlan{TypeMeta: typeMeta(KindUndoPlan), Subject: subjectOf(opts), Undos: make([]PlannedUndo, 0, len(undos))}
	for _, u := range undos {
		p := PlannedUndo{Namespace: u.Namespace, Claim: u.Claim, Service: u.Service, IPAddresses: u.Addresses, Action: "remove", Reason: u.Reason}
		if u.Reason != "" {
			p.Action = "keep"
		}
		if err, done := results[u.Namespace+"/"+u.Claim]; done {
			p.Result = &UndoResult{Removed: err == nil, Error: errorText(err)}
		}
		doc.Undos = append(doc.Undos, p)
	}
	return doc
}

func (doc UndoPlan) failed() int {
	return count(doc.Undos, func(u PlannedUndo) bool { return u.Result != nil && u.Result.Error != "" })
}

// count is how many of items pass.
func count[T any](items []T, pass func(T) bool) (n int) {
	for _, it := range items {
		if pass(it) {
			n++
		}
	}
	return n
}

// errorText is err's message, or "" without one.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// handoverDocument is the handover h, and with --apply how it ended: err
// is the handover's error.
func handoverDocument(opts Options, h *Handover, err error) HandoverPlan {
	doc := HandoverPlan{TypeMeta: typeMeta(KindHandoverPlan), Subject: Subject{Class: opts.Class, Driver: opts.Driver, Applied: opts.Apply}, Steps: h.Steps(), Blockers: h.Blockers, Unimported: h.Unimported}
	if doc.Steps == nil {
		doc.Steps = []string{}
	}
	if opts.Apply {
		doc.Result = &HandoverResult{Rendered: err == nil, Error: errorText(err)}
	}
	return doc
}

// writeDocument writes doc as JSON (indented) or YAML.
func writeDocument(w io.Writer, format string, doc any) error {
	var out []byte
	var err error
	switch format {
	case OutputJSON:
		if out, err = json.MarshalIndent(doc, "", "  "); err == nil {
			out = append(out, '\n')
		}
	case OutputYAML:
		out, err = yaml.Marshal(doc)
	default:
		return fmt.Errorf("unknown output format %q", format)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: OutputAPIVersion, Kind: kind}
}

func selectorOf(sc Scope) string {
	if sc.Selector == nil || sc.Selector.Empty() {
		return ""
	}
	return sc.Selector.String()
}

func addressStrings(ips []netip.Addr) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}
