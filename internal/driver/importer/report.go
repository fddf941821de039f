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
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printPlan writes the import plan as a table: every Service it imports,
// with its addresses and claim, then every Service it skips, with why; and
// which Services it considered.
func printPlan(w io.Writer, p Plan, sc Scope) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "SERVICE\tADDRESSES\tCLAIM\tACTION")
	for _, im := range p.Imports {
		action := im.Action
		if im.Note != "" {
			action += " (" + im.Note + ")"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", im.Service.Key(), joinIPs(im.Addresses), im.Service.Namespace+"/"+im.Claim+" ("+string(im.Family)+")", action)
	}
	for _, s := range p.Skips {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t-\tskip: %s\n", s.Service.Key(), orDash(joinIPs(s.Addresses)), s.Reason)
	}
	_ = tw.Flush()
	todo := 0
	for _, im := range p.Imports {
		if im.Action != ActionImported {
			todo++
		}
	}
	_, _ = fmt.Fprintf(w, "\nclass %s: %d to import, %d imported already, %d skipped (%s)\n", p.Class, todo, len(p.Imports)-todo, len(p.Skips), sc.describe())
}

// describe says which Services the scope considers.
func (sc Scope) describe() string {
	where := "all namespaces"
	switch len(sc.Namespaces) {
	case 0:
	case 1:
		where = "namespace " + sc.Namespaces[0]
	default:
		where = "namespaces " + strings.Join(sc.Namespaces, ",")
	}
	if sc.Selector != nil && !sc.Selector.Empty() {
		where += ", selector " + sc.Selector.String()
	}
	return where
}

// printOutcomes writes what an applied import did.
func printOutcomes(w io.Writer, outcomes []Outcome) (failed int) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "SERVICE\tADDRESSES\tCLAIM\tRESULT")
	for _, o := range outcomes {
		result := "imported"
		switch {
		case o.Err != nil:
			result = "FAILED: " + o.Err.Error()
			failed++
		case !o.Associated:
			result = "imported; the driver has not recorded the association yet"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.Import.Service.Key(), joinIPs(o.Import.Addresses), o.Import.Service.Namespace+"/"+o.Import.Claim, result)
	}
	_ = tw.Flush()
	return failed
}

// printUndo writes what an undo would take back and what it keeps.
func printUndo(w io.Writer, undos []Undo, results map[string]error) (failed int) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "CLAIM\tSERVICE\tIPADDRESSES\tUNDO")
	for _, u := range undos {
		key := u.Namespace + "/" + u.Claim
		action := "remove"
		switch err, done := results[key]; {
		case u.Reason != "":
			action = "keep: " + u.Reason
		case done && err != nil:
			action = "FAILED: " + err.Error()
			failed++
		case done:
			action = "removed"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", key, u.Namespace+"/"+u.Service, orDash(strings.Join(u.Addresses, ",")), action)
	}
	_ = tw.Flush()
	return failed
}

// printHandover writes what the handover changes.
func printHandover(w io.Writer, h *Handover, class string) {
	steps := h.Steps()
	for _, step := range steps {
		_, _ = fmt.Fprintln(w, step)
	}
	if len(steps) == 0 {
		_, _ = fmt.Fprintf(w, "nothing else overlaps class %s: nothing to hand over\n", class)
	}
	for _, u := range h.Unimported {
		_, _ = fmt.Fprintf(w, "warning: moves into the class without a claim: %s\n", u)
	}
	for _, b := range h.Blockers {
		_, _ = fmt.Fprintf(w, "blocked: %s\n", b)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
