{{- /*
CEL for the class-parameters admission policy (class_parameters_policy.yaml).
This file is the same in every driver chart (test/charts checks it): it
writes in CEL the checks and the messages of internal/driver/classparams
and internal/ipaddr.ParseRange, so that a class is refused at apply time
with the message its driver would put on the class.

CEL here has no functions, so each helper takes the CEL expression of its
argument as a string and expands to a parenthesised expression over it.
They rely on the policy's variables zeros, ones (128 of each digit) and
hexBits (each hex digit's four bits).
*/ -}}

{{- /* describe: how encoding/json names a value of the wrong type; a
number only by its kind, but by its digits where an integer was wanted
(describeNumber). */ -}}
{{- define "classParameters.describe" -}}
(type({{ . }}) == string ? "a string" : type({{ . }}) == bool ? "a boolean" : type({{ . }}) == list ? "an array" : type({{ . }}) == map ? "an object" : "a number")
{{- end }}

{{- define "classParameters.describeNumber" -}}
(type({{ . }}) == string ? "a string" : type({{ . }}) == bool ? "a boolean" : type({{ . }}) == list ? "an array" : type({{ . }}) == map ? "an object" : string({{ . }}))
{{- end }}

{{- /* mapped: the text is an IPv4-mapped IPv6 address, which ip() refuses
but Go's parser reads (every such address spells its ffff group out). */ -}}
{{- define "classParameters.mapped" -}}
(!isIP({{ . }}) && isIP({{ . }}.lowerAscii().replace("ffff", "fffe")))
{{- end }}

{{- /* zoned: the text is an IPv6 address with a zone ("fe80::1%eth0"). */ -}}
{{- define "classParameters.zoned" -}}
{{- $before := printf "%s.substring(0, %s.indexOf(\"%%\"))" . . -}}
({{ . }}.indexOf("%") > 0 && {{ include "classParameters.zone" . }} != "" && ((isIP({{ $before }}) && ip({{ $before }}).family() == 6) || {{ include "classParameters.mapped" $before }}))
{{- end }}

{{- define "classParameters.zone" -}}
{{ . }}.substring({{ . }}.indexOf("%") + 1)
{{- end }}

{{- /* bits: the 32 or 128 bits of a valid address, as a string of 0s and
1s; two of the same family compare as their addresses do. */ -}}
{{- define "classParameters.bits" -}}
{{- $s := printf "string(ip(%s))" . -}}
{{- $left := printf "%s.split(\"::\")[0]" $s -}}
{{- $right := printf "%s.split(\"::\")[1]" $s -}}
(ip({{ . }}).family() == 4 ? {{ $s }}.split(".").map(o, "%b".format([int(o)])).map(b, variables.zeros.substring(0, 8 - size(b)) + b).join("") : {{ $s }}.contains("::") ? {{ include "classParameters.groupBits" $left }} + variables.zeros.substring(0, 16 * (8 - {{ include "classParameters.groupCount" $left }} - {{ include "classParameters.groupCount" $right }})) + {{ include "classParameters.groupBits" $right }} : {{ include "classParameters.groupBits" $s }})
{{- end }}

{{- define "classParameters.groupBits" -}}
({{ . }} == "" ? "" : {{ . }}.split(":").map(g, variables.zeros.substring(0, 4 - size(g)) + g).join("").split("").map(h, variables.hexBits[h]).join(""))
{{- end }}

{{- define "classParameters.groupCount" -}}
({{ . }} == "" ? 0 : size({{ . }}.split(":")))
{{- end }}

{{- /* endProblem: what is wrong with one end of a dashed range, or "". */ -}}
{{- define "classParameters.endProblem" -}}
({{ . }} == "" ? "the address is empty" : isIP({{ . }}) ? "" : {{ include "classParameters.zoned" . }} ? strings.quote({{ . }}) + " has a zone (%" + {{ include "classParameters.zone" . }} + "); zones are not allowed" : {{ include "classParameters.mapped" . }} ? strings.quote({{ . }}) + " is IPv4-mapped IPv6; write the IPv4 form" : strings.quote({{ . }}) + " is not an IP address")
{{- end }}

{{- /* rangeProblem: ipaddr.ParseRange's message for the entry, or "". */ -}}
{{- define "classParameters.rangeProblem" -}}
{{- $q := printf "strings.quote(%s)" . -}}
{{- $t := printf "%s.trim()" . -}}
{{- $a := printf "%s.split(\"-\")[0].trim()" $t -}}
{{- $b := printf "%s.split(\"-\")[1].trim()" $t -}}
{{- $addr := printf "%s.substring(0, %s.lastIndexOf(\"/\"))" $t $t -}}
{{- $len := printf "%s.substring(%s.lastIndexOf(\"/\") + 1)" $t $t -}}
({{ $t }} == "" ? "the range is empty"
: {{ $t }}.contains("-") && {{ $t }}.contains("/") ? {{ $q }} + " is neither a CIDR nor an a.b.c.d-e.f.g.h range: it mixes both"
: {{ $t }}.contains("-") ? (
  size({{ $t }}.split("-")) != 2 ? {{ $q }} + " is not a range: it has more than one '-'"
  : {{ include "classParameters.endProblem" $a }} != "" ? {{ $q }} + " is not a valid range: " + {{ include "classParameters.endProblem" $a }}
  : {{ include "classParameters.endProblem" $b }} != "" ? {{ $q }} + " is not a valid range: " + {{ include "classParameters.endProblem" $b }}
  : ip({{ $a }}).family() != ip({{ $b }}).family() ? {{ $q }} + " mixes IPv4 and IPv6"
  : {{ include "classParameters.bits" $b }} < {{ include "classParameters.bits" $a }} ? {{ $q }} + " is backwards: " + string(ip({{ $a }})) + " comes after " + string(ip({{ $b }}))
  : "")
: {{ $t }}.contains("/") ? (
  !(isIP({{ $addr }}) || {{ include "classParameters.zoned" $addr }} || {{ include "classParameters.mapped" $addr }}) ? {{ $q }} + " is neither a CIDR nor an a.b.c.d-e.f.g.h range: " + strings.quote({{ $addr }}) + " is not an IP address"
  : {{ include "classParameters.zoned" $addr }} ? {{ $q }} + " has a zone (%" + {{ include "classParameters.zone" $addr }} + "); zones are not allowed"
  : {{ include "classParameters.mapped" $addr }} ? {{ $q }} + " is IPv4-mapped IPv6; write the IPv4 form"
  : !{{ $len }}.matches("^(0|[1-9][0-9]{0,2})$") || int({{ $len }}) > (ip({{ $addr }}).family() == 4 ? 32 : 128) ? {{ $q }} + " has prefix length " + strings.quote({{ $len }}) + "; want a number from 0 to " + (ip({{ $addr }}).family() == 4 ? "32" : "128")
  : cidr({{ $t }}).masked().ip() != ip({{ $addr }}) ? {{ $q }} + " has host bits set; did you mean " + string(cidr({{ $t }}).masked()) + "?"
  : ip({{ $addr }}).family() == 6 && {{ include "classParameters.bits" $addr }}.substring(0, int({{ $len }})) + variables.ones.substring(0, 128 - int({{ $len }})) == variables.zeros.substring(0, 80) + variables.ones.substring(0, 48) ? {{ $q }} + " ends in ::ffff:0:0/96, the IPv4-mapped IPv6 addresses"
  : "")
: isIP({{ $t }}) ? {{ $q }} + " is neither a CIDR nor an a.b.c.d-e.f.g.h range; for the single address write " + string(ip({{ $t }})) + (ip({{ $t }}).family() == 4 ? "/32" : "/128")
: {{ $q }} + " is neither a CIDR nor an a.b.c.d-e.f.g.h range")
{{- end }}

{{- /* span: the family and the first and last address (as bits) of an
entry rangeProblem found nothing wrong with. */ -}}
{{- define "classParameters.span" -}}
{{- $t := printf "%s.trim()" . -}}
{{- $a := printf "%s.split(\"-\")[0].trim()" $t -}}
{{- $b := printf "%s.split(\"-\")[1].trim()" $t -}}
{{- $addr := printf "%s.substring(0, %s.lastIndexOf(\"/\"))" $t $t -}}
{{- $len := printf "int(%s.substring(%s.lastIndexOf(\"/\") + 1))" $t $t -}}
{{- $host := printf "((ip(%s).family() == 4 ? 32 : 128) - %s)" $addr $len -}}
({{ $t }}.contains("-")
  ? {"family": string(ip({{ $a }}).family()), "first": {{ include "classParameters.bits" $a }}, "last": {{ include "classParameters.bits" $b }}}
  : {"family": string(ip({{ $addr }}).family()), "first": {{ include "classParameters.bits" $addr }}.substring(0, {{ $len }}) + variables.zeros.substring(0, {{ $host }}), "last": {{ include "classParameters.bits" $addr }}.substring(0, {{ $len }}) + variables.ones.substring(0, {{ $host }})})
{{- end }}

{{- /* typeProblem: encoding/json's complaint, as classparams words it,
about the value at path (below spec.parameters) whose CEL is value, when
the driver's field there is of kind: object, bool, int32, uint32, strings
(a list of strings) or objects (a list of objects). A null value is no
value, as in Go. */ -}}
{{- define "classParameters.typeProblem" -}}
{{- $v := .value -}}
{{- $at := printf "\"parameters.%s: want " .path -}}
{{- if eq .kind "object" -}}
({{ $v }} == null || type({{ $v }}) == map ? "" : {{ $at }}an object, got " + {{ include "classParameters.describe" $v }})
{{- else if eq .kind "bool" -}}
({{ $v }} == null || type({{ $v }}) == bool ? "" : {{ $at }}true or false, got " + {{ include "classParameters.describe" $v }})
{{- else if eq .kind "int32" -}}
({{ $v }} == null || (type({{ $v }}) == int && {{ $v }} >= -2147483648 && {{ $v }} <= 2147483647) || (type({{ $v }}) == double && {{ $v }} >= -2147483648.0 && {{ $v }} <= 2147483647.0 && double(int({{ $v }})) == {{ $v }}) ? "" : {{ $at }}an integer from -2147483648 to 2147483647, got " + {{ include "classParameters.describeNumber" $v }})
{{- else if eq .kind "uint32" -}}
({{ $v }} == null || (type({{ $v }}) == int && {{ $v }} >= 0 && {{ $v }} <= 4294967295) || (type({{ $v }}) == double && {{ $v }} >= 0.0 && {{ $v }} <= 4294967295.0 && double(int({{ $v }})) == {{ $v }}) ? "" : {{ $at }}an integer from 0 to 4294967295, got " + {{ include "classParameters.describeNumber" $v }})
{{- else -}}
{{- $elem := ternary "string" "map" (eq .kind "strings") -}}
{{- $want := ternary "a string" "an object" (eq .kind "strings") -}}
{{- $bad := printf "%s.filter(e, e != null && type(e) != %s)" $v $elem -}}
({{ $v }} == null ? "" : type({{ $v }}) != list ? {{ $at }}a list, got " + {{ include "classParameters.describe" $v }} : size({{ $bad }}) > 0 ? {{ $at }}{{ $want }}, got " + {{ include "classParameters.describe" (printf "%s[0]" $bad) }} : "")
{{- end -}}
{{- end }}

{{- /* strings: a list of strings the type checks passed, nulls read as "". */ -}}
{{- define "classParameters.strings" -}}
({{ . }} == null ? [] : {{ . }}.map(e, e == null ? "" : e))
{{- end }}

{{- /* unknownFields: the keys of the object value that are none of known,
each as its path below spec.parameters (prefix ends in a dot, or is ""). */ -}}
{{- define "classParameters.unknownFields" -}}
(type({{ .value }}) == map ? {{ .value }}.filter(k, !(k in {{ .known | toJson }})).map(k, "{{ .prefix }}" + k) : [])
{{- end }}

{{- /* The variables every driver's policy starts with. */ -}}
{{- define "classParameters.baseVariables" -}}
- name: zeros
  expression: {{ repeat 128 "0" | quote | squote }}
- name: ones
  expression: {{ repeat 128 "1" | quote | squote }}
- name: hexBits
  expression: >-
    {"0": "0000", "1": "0001", "2": "0010", "3": "0011", "4": "0100", "5": "0101", "6": "0110", "7": "0111",
     "8": "1000", "9": "1001", "a": "1010", "b": "1011", "c": "1100", "d": "1101", "e": "1110", "f": "1111"}
# Absent parameters read as {}: both lack their addresses.
- name: parameters
  expression: "has(object.spec.parameters) && object.spec.parameters != null ? object.spec.parameters : {}"
- name: addressesValue
  expression: "variables.parameters.?addresses.orValue(null)"
- name: addressesType
  expression: {{ include "classParameters.typeProblem" (dict "path" "addresses" "value" "variables.addressesValue" "kind" "strings") | quote }}
- name: addresses
  expression: {{ printf "variables.addressesType != \"\" ? [] : %s" (include "classParameters.strings" "variables.addressesValue") | quote }}
# Each entry's problem as ipaddr.ParseRange words it, or "".
- name: addressProblems
  expression: {{ printf "variables.addresses.map(s, %s)" (include "classParameters.rangeProblem" "s") | quote }}
{{- end }}

{{- /* The messages of the address problems, in index order (without
overlaps: a driver that refuses them adds its own). */ -}}
{{- define "classParameters.addressIssues" -}}
variables.addressProblems.transformList(i, p, p != "", "parameters.addresses[" + string(i) + "]: " + p)
{{- end }}

{{- /* matchConditions: the classes of provisioner (the argument), when
created or when their parameters change. A class stored before the policy
keeps its other writes (finalizers, labels) whatever its parameters. */ -}}
{{- define "classParameters.matchConditions" -}}
- name: served-by-this-driver
  expression: {{ printf "object.spec.provisioner == %s" (toJson .) | quote }}
- name: parameters-written
  expression: >-
    request.operation == "CREATE" ||
    (has(object.spec.parameters) ? object.spec.parameters : null) !=
    (has(oldObject.spec.parameters) ? oldObject.spec.parameters : null)
{{- end }}

{{- /* The validations every driver's policy starts with, in the order the
driver reports their problems: a value of the wrong type, unknown fields,
no addresses, a bad address. The variables typeProblems, unknownFields and
addressIssues are the driver's own. */ -}}
{{- define "classParameters.baseValidations" -}}
- expression: "size(variables.typeProblems) == 0"
  reason: Invalid
  messageExpression: "variables.typeProblems[0]"
- expression: "size(variables.unknownFields) == 0"
  reason: Invalid
  messageExpression: >-
    "parameters." + variables.unknownFields.filter(k, variables.unknownFields.all(o, k <= o))[0] + ": unknown field"
- expression: "size(variables.typeProblems) > 0 || size(variables.addresses) > 0"
  reason: Invalid
  message: "parameters.addresses is required"
- expression: "size(variables.addressIssues) == 0"
  reason: Invalid
  messageExpression: "variables.addressIssues[0]"
{{- end }}
