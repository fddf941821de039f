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

package charts

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/cilium"
	"github.com/cozystack/address-controller/internal/driver/classparams"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
)

// classCase is a class's spec.parameters (JSON; "" for none) and the
// message its driver and the driver's admission policy refuse them with, ""
// when both accept them. Each bad case has one problem, so that the
// driver's whole message is the policy's.
type classCase struct {
	name, parameters, want string
}

// entry is a class whose one address range is s, refused with want.
func entry(name, s, want string) classCase {
	quoted, _ := json.Marshal(s)
	if want != "" {
		want = "parameters.addresses[0]: " + want
	}
	return classCase{name: name, parameters: `{"addresses": [` + string(quoted) + `]}`, want: want}
}

// addressCases are the parameters both drivers read alike: the address
// ranges (classparams, ipaddr.ParseRange), unknown fields beside them and
// values of the wrong type.
func addressCases() []classCase {
	return []classCase{
		{"ranges and CIDRs of both families", `{"addresses": ["198.51.100.0/28", " 198.51.100.20 - 198.51.100.30 ", "2001:db8::/120", "2001:DB8:1::1-2001:db8:1::ff"]}`, ""},
		entry("a range whose ends differ in a two-digit octet", "198.51.100.9-198.51.100.10", ""),
		entry("an IPv6 range across a compressed group", "2001:db8::ffff-2001:db8:0:1::", ""),
		entry("a single-address range", "198.51.100.9-198.51.100.9", ""),
		{"no parameters", ``, classparams.AddressesRequired},
		{"no addresses", `{}`, classparams.AddressesRequired},
		{"an empty list", `{"addresses": []}`, classparams.AddressesRequired},
		{"addresses that are not a list", `{"addresses": "198.51.100.0/28"}`, "parameters.addresses: want a list, got a string"},
		{"an address that is a number", `{"addresses": ["198.51.100.0/28", 5]}`, "parameters.addresses: want a string, got a number"},
		{"an address that is an object", `{"addresses": [{"cidr": "198.51.100.0/28"}]}`, "parameters.addresses: want a string, got an object"},
		{"a misspelt field", `{"addresses": ["198.51.100.0/28"], "adresses": []}`, "parameters.adresses: unknown field"},
		{"a bad second entry", `{"addresses": ["198.51.100.0/28", "198.51.100.300/28"]}`,
			`parameters.addresses[1]: "198.51.100.300/28" is neither a CIDR nor an a.b.c.d-e.f.g.h range: "198.51.100.300" is not an IP address`},
		{"a null entry", `{"addresses": [null]}`, "parameters.addresses[0]: the range is empty"},
		entry("a blank entry", "  ", "the range is empty"),
		entry("a single IPv4 address", "198.51.100.7", `"198.51.100.7" is neither a CIDR nor an a.b.c.d-e.f.g.h range; for the single address write 198.51.100.7/32`),
		entry("a single IPv6 address", "2001:DB8::7", `"2001:DB8::7" is neither a CIDR nor an a.b.c.d-e.f.g.h range; for the single address write 2001:db8::7/128`),
		entry("a word", "public", `"public" is neither a CIDR nor an a.b.c.d-e.f.g.h range`),
		entry("a single IPv4-mapped address", "::ffff:198.51.100.7", `"::ffff:198.51.100.7" is neither a CIDR nor an a.b.c.d-e.f.g.h range`),
		entry("a CIDR and a range at once", "198.51.100.0/28-198.51.100.20", `"198.51.100.0/28-198.51.100.20" is neither a CIDR nor an a.b.c.d-e.f.g.h range: it mixes both`),
		entry("a negative prefix length", "198.51.100.0/-1", `"198.51.100.0/-1" is neither a CIDR nor an a.b.c.d-e.f.g.h range: it mixes both`),
		entry("an octet over 255", "198.51.100.256/28", `"198.51.100.256/28" is neither a CIDR nor an a.b.c.d-e.f.g.h range: "198.51.100.256" is not an IP address`),
		entry("an IPv4 address with a zone", "198.51.100.0%eth0/28", `"198.51.100.0%eth0/28" is neither a CIDR nor an a.b.c.d-e.f.g.h range: "198.51.100.0%eth0" is not an IP address`),
		entry("an IPv6 CIDR with a zone", "fe80::%eth0/64", `"fe80::%eth0/64" has a zone (%eth0); zones are not allowed`),
		entry("an IPv4-mapped CIDR", "::ffff:198.51.100.0/120", `"::ffff:198.51.100.0/120" is IPv4-mapped IPv6; write the IPv4 form`),
		entry("an IPv6 CIDR ending at an IPv4-mapped address", "::/80", `"::/80" ends in ::ffff:0:0/96, the IPv4-mapped IPv6 addresses`),
		entry("a longer one ending there too", "::fffe:0:0/95", `"::fffe:0:0/95" ends in ::ffff:0:0/96, the IPv4-mapped IPv6 addresses`),
		entry("an IPv6 CIDR ending just before the IPv4-mapped addresses", "::/81", ""),
		entry("a prefix over 32", "198.51.100.0/33", `"198.51.100.0/33" has prefix length "33"; want a number from 0 to 32`),
		entry("a prefix over 128", "2001:db8::/129", `"2001:db8::/129" has prefix length "129"; want a number from 0 to 128`),
		entry("a prefix with a leading zero", "198.51.100.0/028", `"198.51.100.0/028" has prefix length "028"; want a number from 0 to 32`),
		entry("no prefix after the slash", "198.51.100.0/", `"198.51.100.0/" has prefix length ""; want a number from 0 to 32`),
		entry("a huge prefix", "198.51.100.0/99999999999999999999", `"198.51.100.0/99999999999999999999" has prefix length "99999999999999999999"; want a number from 0 to 32`),
		entry("IPv4 host bits", "198.51.100.7/28", `"198.51.100.7/28" has host bits set; did you mean 198.51.100.0/28?`),
		entry("IPv6 host bits", "2001:db8::1/120", `"2001:db8::1/120" has host bits set; did you mean 2001:db8::/120?`),
		entry("two dashes", "198.51.100.1-198.51.100.2-198.51.100.3", `"198.51.100.1-198.51.100.2-198.51.100.3" is not a range: it has more than one '-'`),
		entry("a range without an end", "198.51.100.1-", `"198.51.100.1-" is not a valid range: the address is empty`),
		entry("a range with a bad start", "198.51.100.x-198.51.100.9", `"198.51.100.x-198.51.100.9" is not a valid range: "198.51.100.x" is not an IP address`),
		entry("a range with a zone", "fe80::1%eth0-fe80::2", `"fe80::1%eth0-fe80::2" is not a valid range: "fe80::1%eth0" has a zone (%eth0); zones are not allowed`),
		entry("an IPv4-mapped range", "::ffff:198.51.100.1-::ffff:198.51.100.5", `"::ffff:198.51.100.1-::ffff:198.51.100.5" is not a valid range: "::ffff:198.51.100.1" is IPv4-mapped IPv6; write the IPv4 form`),
		entry("a range of both families", "198.51.100.1-2001:db8::1", `"198.51.100.1-2001:db8::1" mixes IPv4 and IPv6`),
		entry("a backwards IPv4 range", "198.51.100.10-198.51.100.9", `"198.51.100.10-198.51.100.9" is backwards: 198.51.100.10 comes after 198.51.100.9`),
		entry("a backwards IPv6 range", "2001:db8:0:1::-2001:db8::ffff", `"2001:db8:0:1::-2001:db8::ffff" is backwards: 2001:db8:0:1:: comes after 2001:db8::ffff`),
	}
}

// metallbCases are what only the MetalLB driver's parameters hold.
func metallbCases() []classCase {
	const v4 = `"addresses": ["198.51.100.0/28"]`
	return []classCase{
		{"layer 2 on some interfaces and nodes", `{` + v4 + `, "avoidBuggyIPs": true, "advertisement": {"l2": {"interfaces": ["eth0", "bond0.100"], "nodeSelectors": [{"matchLabels": {"edge": "true"}}]}}}`, ""},
		{"every BGP option", `{` + v4 + `, "advertisement": {"bgp": {"aggregationLength": 28, "aggregationLengthV6": 128, "localPref": 100, "communities": ["65000:100", "large:1:2:3", "no-advertise"], "peers": ["peer-a"], "nodeSelectors": [{}]}}}`, ""},
		{"adjacent ranges and two families", `{"addresses": ["198.51.100.0/28", "198.51.100.16-198.51.100.20", "2001:db8::/124"]}`, ""},
		{"overlapping ranges", `{"addresses": ["198.51.100.0/28", "198.51.100.8-198.51.100.20"]}`,
			`parameters.addresses[1]: "198.51.100.8-198.51.100.20" overlaps parameters.addresses[0] ("198.51.100.0/28")`},
		{"a range written twice", `{"addresses": ["2001:db8::/124", "198.51.100.0/28", "2001:db8::0-2001:db8::f"]}`,
			`parameters.addresses[2]: "2001:db8::0-2001:db8::f" repeats parameters.addresses[0] ("2001:db8::/124")`},
		{"both l2 and bgp", `{` + v4 + `, "advertisement": {"l2": {}, "bgp": {}}}`, "parameters.advertisement: set exactly one of l2 or bgp"},
		{"a misspelt BGP option", `{` + v4 + `, "advertisement": {"bgp": {"peer": ["peer-a"]}}}`, "parameters.advertisement.bgp.peer: unknown field"},
		{"an unknown advertisement", `{` + v4 + `, "advertisement": {"l3": {}}}`, "parameters.advertisement.l3: unknown field"},
		{"an advertisement that is a string", `{` + v4 + `, "advertisement": "l2"}`, "parameters.advertisement: want an object, got a string"},
		{"avoidBuggyIPs as a string", `{` + v4 + `, "avoidBuggyIPs": "yes"}`, "parameters.avoidBuggyIPs: want true or false, got a string"},
		{"a node selector that is a string", `{` + v4 + `, "advertisement": {"l2": {"nodeSelectors": ["edge"]}}}`, "parameters.advertisement.l2.nodeSelectors: want an object, got a string"},
		{"an aggregation length as a string", `{` + v4 + `, "advertisement": {"bgp": {"aggregationLength": "28"}}}`,
			"parameters.advertisement.bgp.aggregationLength: want an integer from -2147483648 to 2147483647, got a string"},
		{"an aggregation length past int32", `{` + v4 + `, "advertisement": {"bgp": {"aggregationLength": 99999999999}}}`,
			"parameters.advertisement.bgp.aggregationLength: want an integer from -2147483648 to 2147483647, got 99999999999"},
		{"a negative localPref", `{` + v4 + `, "advertisement": {"bgp": {"localPref": -1}}}`,
			"parameters.advertisement.bgp.localPref: want an integer from 0 to 4294967295, got -1"},
		{"an aggregation length over 32", `{` + v4 + `, "advertisement": {"bgp": {"aggregationLength": 33}}}`,
			"parameters.advertisement.bgp.aggregationLength: 33 is out of range; want 1 to 32"},
		{"an IPv6 aggregation length over 128", `{` + v4 + `, "advertisement": {"bgp": {"aggregationLengthV6": 129}}}`,
			"parameters.advertisement.bgp.aggregationLengthV6: 129 is out of range; want 0 to 128"},
		{"an interface name with a slash", `{` + v4 + `, "advertisement": {"l2": {"interfaces": ["eth0", "eth0/1"]}}}`,
			`parameters.advertisement.l2.interfaces[1]: "eth0/1" is not a network interface name`},
		{"an interface name too long", `{` + v4 + `, "advertisement": {"l2": {"interfaces": ["averyveryverylongname"]}}}`,
			`parameters.advertisement.l2.interfaces[0]: "averyveryverylongname" is not a network interface name`},
		{"a community past 16 bits", `{` + v4 + `, "advertisement": {"bgp": {"communities": ["65536:1"]}}}`,
			`parameters.advertisement.bgp.communities[0]: "65536:1" is not a community; want a:b, each from 0 to 65535`},
		{"a large community of two numbers", `{` + v4 + `, "advertisement": {"bgp": {"communities": ["large:1:2"]}}}`,
			`parameters.advertisement.bgp.communities[0]: "large:1:2" is not a large community; want large:a:b:c, each from 0 to 4294967295`},
		{"a bare number as a community", `{` + v4 + `, "advertisement": {"bgp": {"communities": ["65000"]}}}`,
			`parameters.advertisement.bgp.communities[0]: "65000" is a bare number; write a community as a:b or large:a:b:c`},
		{"a community alias that is no DNS label", `{` + v4 + `, "advertisement": {"bgp": {"communities": ["No_Export"]}}}`,
			`parameters.advertisement.bgp.communities[0]: "No_Export" is neither a community (a:b, large:a:b:c) nor a Community alias name: ` +
				strings.Join(validation.IsDNS1123Label("No_Export"), ", ")},
		{"a peer name that is no DNS subdomain", `{` + v4 + `, "advertisement": {"bgp": {"peers": ["peer_a"]}}}`,
			`parameters.advertisement.bgp.peers[0]: "peer_a" is not a BGPPeer name: ` + strings.Join(validation.IsDNS1123Subdomain("peer_a"), ", ")},
	}
}

// ciliumCases are what only the Cilium driver's parameters hold.
func ciliumCases() []classCase {
	return []classCase{
		{"overlapping ranges, which the pool merges", `{"addresses": ["198.51.100.0/28", "198.51.100.8-198.51.100.20"]}`, ""},
		{"MetalLB's advertisement", `{"addresses": ["198.51.100.0/28"], "advertisement": {"l2": {}}}`, "parameters.advertisement: unknown field"},
	}
}

// classDriver is a driver chart, its provisioner, its reading of a class's
// parameters and the cases it is tested with.
type classDriver struct {
	chart, provisioner string
	decode             func(*runtime.RawExtension) error
	cases              []classCase
}

func classDrivers() []classDriver {
	return []classDriver{{
		chart: driverChart, provisioner: localv1alpha1.ProvisionerMetalLB,
		decode: func(raw *runtime.RawExtension) error { _, err := params.Decode(raw); return err },
		cases:  append(addressCases(), metallbCases()...),
	}, {
		chart: ciliumChart, provisioner: localv1alpha1.ProvisionerCilium,
		decode: func(raw *runtime.RawExtension) error { _, err := cilium.DecodeParameters(raw); return err },
		cases:  append(addressCases(), ciliumCases()...),
	}}
}

// classParametersPolicy is chart's class-parameters policy and binding,
// rendered with args.
func classParametersPolicy(t *testing.T, chart string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, obj := range render(t, chart, chart, chart+"-system", args...) {
		if obj.GetName() == chart+"-class-parameters" {
			out = append(out, obj)
		}
	}
	return out
}

// stored is parameters as the API server stores them and the driver reads
// them: compact JSON with sorted keys.
func stored(g Gomega, parameters string) *runtime.RawExtension {
	if parameters == "" {
		return nil
	}
	var v any
	g.ExpectWithOffset(1, json.Unmarshal([]byte(parameters), &v)).To(Succeed(), parameters)
	raw, err := json.Marshal(v)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return &runtime.RawExtension{Raw: raw}
}

// classWith is a class of provisioner with parameters ("" for none).
func classWith(name, provisioner, parameters string) *localv1alpha1.IPAddressClass {
	if parameters == "" {
		return b.Class(name, provisioner)
	}
	return b.Class(name, provisioner, b.Parameters(parameters))
}

// expectRefused asserts that err is chart's policy refusing a class with
// message, as invalid.
func expectRefused(g Gomega, err error, chart, message string) {
	g.ExpectWithOffset(1, err).To(HaveOccurred(), "the class is refused")
	g.ExpectWithOffset(1, apierrors.IsInvalid(err)).To(BeTrue(), "the refusal is Invalid: %v", err)
	g.ExpectWithOffset(1, err.Error()).To(HaveSuffix(fmt.Sprintf("ValidatingAdmissionPolicy '%[1]s' with binding '%[1]s' denied request: %[2]s",
		chart+"-class-parameters", message)))
}

// TestClassParametersPolicy installs both driver charts' class-parameters
// policies for real and has the API server judge each case's class: it
// refuses exactly what the class's driver refuses, with the driver's
// message, and leaves other drivers' classes alone.
func TestClassParametersPolicy(t *testing.T) {
	c := startCluster(t)
	ctx := t.Context()
	g := NewWithT(t)

	// A class stored before the policies, with parameters they refuse.
	const stale = "class-parameters-stale"
	kit.Make(t, g, classWith(stale, localv1alpha1.ProvisionerMetalLB, `{"addresses": ["198.51.100.7/28"]}`))

	for _, d := range classDrivers() {
		objs := classParametersPolicy(t, d.chart)
		g.Expect(objs).To(HaveLen(2), "%s installs the policy and its binding by default", d.chart)
		kit.Make(t, g, objs[0], objs[1])
		// A new policy takes a moment to become effective.
		g.Eventually(func() error {
			return kit.Client.Create(ctx, classWith("class-parameters-probe", d.provisioner, `{"addresses": "probe"}`), client.DryRunAll)
		}, policyTimeout, policyPoll).Should(MatchError(ContainSubstring(d.chart + "-class-parameters")))
	}

	for _, d := range classDrivers() {
		t.Run(d.chart, func(t *testing.T) {
			for i, tc := range d.cases {
				t.Run(tc.name, func(t *testing.T) {
					g := NewWithT(t)
					if err := d.decode(stored(g, tc.parameters)); tc.want == "" {
						g.Expect(err).NotTo(HaveOccurred(), "the driver accepts %s", tc.parameters)
					} else {
						g.Expect(err).To(MatchError(tc.want), "the driver's message for %s", tc.parameters)
					}
					class := classWith(fmt.Sprintf("class-parameters-%d", i), d.provisioner, tc.parameters)
					err := kit.Client.Create(ctx, class, client.DryRunAll)
					if tc.want == "" {
						g.Expect(err).NotTo(HaveOccurred(), "the API server admits %s", tc.parameters)
						return
					}
					expectRefused(g, err, d.chart, tc.want)
				})
			}
		})
	}

	t.Run("kubectl apply says why", func(t *testing.T) {
		g := NewWithT(t)
		cmd := c.Kubectl(ctx, "apply", "--dry-run=server", "-f", "-")
		cmd.Stdin = strings.NewReader(`apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClass
metadata:
  name: public
spec:
  provisioner: metallb.drivers.local.sdn.cozystack.io
  parameters:
    addresses: ["203.0.113.7/24"]
`)
		out, err := cmd.CombinedOutput()
		g.Expect(err).To(HaveOccurred(), "kubectl apply fails")
		g.Expect(string(out)).To(Equal(`The ipaddressclasses "public" is invalid: : ` +
			`ValidatingAdmissionPolicy 'metallb-iad-class-parameters' with binding 'metallb-iad-class-parameters' denied request: ` +
			`parameters.addresses[0]: "203.0.113.7/24" has host bits set; did you mean 203.0.113.0/24?` + "\n"))
	})

	t.Run("classes of another provisioner are left alone", func(t *testing.T) {
		g := NewWithT(t)
		for _, parameters := range []string{``, `{"addresses": "198.51.100.7/28", "anything": true}`} {
			g.Expect(kit.Client.Create(ctx, classWith("class-parameters-other", "other.drivers.example.com", parameters), client.DryRunAll)).
				To(Succeed(), parameters)
		}
	})

	t.Run("a stored class keeps its other writes, and its parameters are checked when they change", func(t *testing.T) {
		g := NewWithT(t)
		class := &localv1alpha1.IPAddressClass{}
		g.Expect(kit.Client.Get(ctx, client.ObjectKey{Name: stale}, class)).To(Succeed())
		class.Labels = map[string]string{"example.com/team": "network"}
		g.Expect(kit.Update(ctx, class)).To(Succeed(), "a write that leaves the parameters alone is admitted")
		class.Spec.Parameters = stored(g, `{"addresses": ["198.51.100.9-198.51.100.1"]}`)
		expectRefused(g, kit.Update(ctx, class), driverChart,
			`parameters.addresses[0]: "198.51.100.9-198.51.100.1" is backwards: 198.51.100.9 comes after 198.51.100.1`)
		class.Spec.Parameters = stored(g, `{"addresses": ["198.51.100.0/28"]}`)
		g.Expect(kit.Update(ctx, class)).To(Succeed(), "fixed parameters are admitted")
	})
}

// TestClassParametersPolicyValues checks the policy's switch and that every
// driver chart carries the same CEL helpers.
func TestClassParametersPolicyValues(t *testing.T) {
	var helpers []string
	for _, d := range classDrivers() {
		t.Run(d.chart, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(classParametersPolicy(t, d.chart, "--set", "classParametersPolicy.enabled=false")).To(BeEmpty(),
				"switched off, the chart renders neither the policy nor its binding")
			objs := classParametersPolicy(t, d.chart, "--set-json", `classParametersPolicy.validationActions=["Warn","Audit"]`)
			g.Expect(ofKind(objs, "ValidatingAdmissionPolicyBinding")).To(ConsistOf(HaveField("Object",
				HaveKeyWithValue("spec", HaveKeyWithValue("validationActions", ConsistOf("Warn", "Audit"))))))
			policies := ofKind(objs, "ValidatingAdmissionPolicy")
			g.Expect(policies).To(HaveLen(1))
			conditions, _, _ := unstructured.NestedSlice(policies[0].Object, "spec", "matchConditions")
			g.Expect(conditions).To(ContainElement(HaveKeyWithValue("expression",
				`object.spec.provisioner == "`+d.provisioner+`"`)), "the policy matches the driver's classes only")
			raw, err := os.ReadFile(repoPath(t, "charts", d.chart, "templates", "_class_parameters.tpl"))
			g.Expect(err).NotTo(HaveOccurred())
			helpers = append(helpers, string(raw))
		})
	}
	NewWithT(t).Expect(strings.Join(helpers[1:], "")).To(Equal(strings.Repeat(helpers[0], len(helpers)-1)),
		"every driver chart's _class_parameters.tpl is the same file")
}
