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
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/timestamp"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/template"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Rule unit tests: test/charts/testdata/rules/<chart>*.yaml are promtool
// "test rules" files (input series, evaluation times, the alerts expected
// to fire with their labels) run against the alerting rules each chart
// renders. This file evaluates them the way promtool does, with Prometheus's
// own series parser, PromQL engine and template expander over series held in
// memory, instead of building promtool, whose command (like Prometheus's
// TSDB, through its configuration package) pulls in the service
// discoveries, the remote write clients and the AWS, Azure and Google SDKs.
// Two differences from promtool: rule_files is ignored (the rules are the
// chart's), and exp_annotations is compared only where a test gives it. With the rules written to rules.yaml
// (helm template ... | yq '.spec' > rules.yaml, for the PrometheusRule),
// promtool test rules runs the same files.

// ruleTestFile is a promtool test rules file.
type ruleTestFile struct {
	RuleFiles          []string        `json:"rule_files"`
	EvaluationInterval string          `json:"evaluation_interval"`
	Tests              []ruleTestGroup `json:"tests"`
}

type ruleTestGroup struct {
	Name        string `json:"name"`
	Interval    string `json:"interval"`
	InputSeries []struct {
		Series string `json:"series"`
		Values string `json:"values"`
	} `json:"input_series"`
	AlertRuleTests []alertRuleTest `json:"alert_rule_test"`
}

type alertRuleTest struct {
	EvalTime  string `json:"eval_time"`
	Alertname string `json:"alertname"`
	ExpAlerts []struct {
		ExpLabels      map[string]string `json:"exp_labels"`
		ExpAnnotations map[string]string `json:"exp_annotations"`
	} `json:"exp_alerts"`
}

// alertingRule is one rule of a rendered PrometheusRule.
type alertingRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// ruleRenderings maps each rule test file's suffix to the values its chart
// is rendered with.
var ruleRenderings = map[string][]string{
	"":                         {"--set", "monitoring.enabled=true"},
	"-without-leader-election": {"--set", "monitoring.enabled=true", "--set", "leaderElection=false"},
}

// renderedRules renders chart as release chart (so that every job label is
// <chart>-metrics) and returns its alerting rules.
func renderedRules(t *testing.T, chart string, args ...string) []alertingRule {
	t.Helper()
	objs := ofKind(render(t, chart, chart, "monitoring", args...), "PrometheusRule")
	if len(objs) != 1 {
		t.Fatalf("%s renders %d PrometheusRules, want 1", chart, len(objs))
	}
	groups, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "groups")
	perGroup := make([][]alertingRule, 0, len(groups))
	for _, g := range groups {
		raw, err := json.Marshal(g.(map[string]any)["rules"])
		if err != nil {
			t.Fatal(err)
		}
		var rs []alertingRule
		if err := json.Unmarshal(raw, &rs); err != nil {
			t.Fatalf("decoding the rules of %s: %v", chart, err)
		}
		perGroup = append(perGroup, rs)
	}
	return slices.Concat(perGroup...)
}

// TestAlertRules runs every chart's rule unit tests, and fails for an alert
// of a chart that no test sees firing.
func TestAlertRules(t *testing.T) {
	for _, chart := range allCharts {
		t.Run(chart, func(t *testing.T) {
			shipped, fired := map[string]bool{}, map[string]bool{}
			for suffix, args := range ruleRenderings {
				rules := renderedRules(t, chart, args...)
				for _, r := range rules {
					shipped[r.Alert] = true
				}
				file := repoPath(t, "test", "charts", "testdata", "rules", chart+suffix+".yaml")
				t.Run(filepath.Base(file), func(t *testing.T) {
					for name := range runRuleTests(t, file, rules) {
						fired[name] = true
					}
				})
			}
			for name := range shipped {
				if !fired[name] {
					t.Errorf("no rule unit test of %s sees %s fire", chart, name)
				}
			}
		})
	}
}

// runRuleTests runs a rule test file against rules and returns the alerts
// it expected to fire at some point.
func runRuleTests(t *testing.T, file string, rules []alertingRule) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleTestFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	evalInterval := time.Minute
	if f.EvaluationInterval != "" {
		evalInterval = parseDuration(t, f.EvaluationInterval)
	}
	fired := map[string]bool{}
	for i, group := range f.Tests {
		name := group.Name
		if name == "" {
			name = fmt.Sprint("test ", i)
		}
		t.Run(name, func(t *testing.T) {
			for _, at := range group.AlertRuleTests {
				if !slices.ContainsFunc(rules, func(r alertingRule) bool { return r.Alert == at.Alertname }) {
					t.Fatalf("the rendered rules have no alert %s", at.Alertname)
				}
				if len(at.ExpAlerts) > 0 {
					fired[at.Alertname] = true
				}
			}
			runRuleTestGroup(t, rules, evalInterval, group)
		})
	}
	return fired
}

func parseDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := model.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return time.Duration(d)
}

// activeAlert is an alert whose expression returned its series on every
// evaluation since activeAt.
type activeAlert struct {
	labels      labels.Labels
	annotations map[string]string
	activeAt    time.Time
}

// runRuleTestGroup loads a group's series, evaluates every rule every
// evalInterval from time 0 up to its last eval_time, and compares the
// alerts firing at each eval_time with those expected, as promtool does.
func runRuleTestGroup(t *testing.T, rules []alertingRule, evalInterval time.Duration, group ruleTestGroup) {
	seriesInterval := evalInterval
	if group.Interval != "" {
		seriesInterval = parseDuration(t, group.Interval)
	}
	store := loadSeries(t, group, seriesInterval)
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute,
		NoStepSubqueryIntervalFn: func(int64) int64 { return evalInterval.Milliseconds() }})
	t.Cleanup(func() { _ = engine.Close() })

	checks := map[time.Duration][]alertRuleTest{}
	var last time.Duration
	for _, at := range group.AlertRuleTests {
		d := parseDuration(t, at.EvalTime)
		checks[d] = append(checks[d], at)
		last = max(last, d)
	}
	active := map[string]map[string]*activeAlert{}
	start := time.Unix(0, 0).UTC()
	for offset := time.Duration(0); offset <= last; offset += evalInterval {
		ts := start.Add(offset)
		for _, r := range rules {
			active[r.Alert] = evalRule(t, engine, store, r, ts, active[r.Alert])
		}
		// An eval_time between two evaluations sees the earlier one.
		for at, cs := range checks {
			if offset <= at && at < offset+evalInterval {
				for _, check := range cs {
					compareAlerts(t, check, rules, active[check.Alertname], ts)
				}
			}
		}
	}
}

// loadSeries parses a group's input series (promtool's expanding notation:
// 1+2x3, _ for a missing sample, stale for a staleness marker) into memory,
// one sample every interval from time 0.
func loadSeries(t *testing.T, group ruleTestGroup, interval time.Duration) *memStorage {
	t.Helper()
	p := parser.NewParser(parser.Options{})
	store := &memStorage{}
	for _, in := range group.InputSeries {
		lbls, values, err := p.ParseSeriesDesc(in.Series + " " + in.Values)
		if err != nil {
			t.Fatalf("series %s %s: %v", in.Series, in.Values, err)
		}
		var samples []chunks.Sample
		for i, v := range values {
			if v.Histogram != nil {
				t.Fatalf("series %s: native histograms are not supported here", in.Series)
			}
			if !v.Omitted {
				samples = append(samples, floatSample{t: int64(i) * interval.Milliseconds(), f: v.Value})
			}
		}
		store.series = append(store.series, storage.NewListSeries(lbls, samples))
	}
	slices.SortFunc(store.series, func(a, b storage.Series) int { return labels.Compare(a.Labels(), b.Labels()) })
	return store
}

// memStorage serves a test group's series to the PromQL engine.
type memStorage struct{ series []storage.Series }

func (m *memStorage) Querier(int64, int64) (storage.Querier, error) {
	return &storage.MockQuerier{SelectMockFunction: m.selectSeries}, nil
}

func (m *memStorage) selectSeries(_ bool, _ *storage.SelectHints, matchers ...*labels.Matcher) storage.SeriesSet {
	var out []storage.Series
	for _, s := range m.series {
		if matchAll(s.Labels(), matchers) {
			out = append(out, s)
		}
	}
	return &seriesList{series: out, next: 0}
}

func matchAll(l labels.Labels, matchers []*labels.Matcher) bool {
	for _, m := range matchers {
		if !m.Matches(l.Get(m.Name)) {
			return false
		}
	}
	return true
}

// seriesList is a storage.SeriesSet over a slice.
type seriesList struct {
	series []storage.Series
	next   int
}

func (s *seriesList) Next() bool                      { s.next++; return s.next <= len(s.series) }
func (s *seriesList) At() storage.Series              { return s.series[s.next-1] }
func (*seriesList) Err() error                        { return nil }
func (*seriesList) Warnings() annotations.Annotations { return nil }

// floatSample is a float sample as the storage package's series take them.
type floatSample struct {
	t int64
	f float64
}

func (s floatSample) T() int64                    { return s.t }
func (floatSample) ST() int64                     { return 0 }
func (s floatSample) F() float64                  { return s.f }
func (floatSample) H() *histogram.Histogram       { return nil }
func (floatSample) FH() *histogram.FloatHistogram { return nil }
func (floatSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s floatSample) Copy() chunks.Sample         { return s }

// evalRule evaluates r at ts and returns its active alerts: those of the
// previous evaluation whose series it returns again keep their activeAt.
func evalRule(t *testing.T, engine *promql.Engine, store storage.Queryable, r alertingRule, ts time.Time,
	before map[string]*activeAlert) map[string]*activeAlert {
	t.Helper()
	ctx := t.Context()
	query := func(ctx context.Context, q string, ts time.Time) (promql.Vector, error) {
		qry, err := engine.NewInstantQuery(ctx, store, nil, q, ts)
		if err != nil {
			return nil, err
		}
		defer qry.Close()
		return qry.Exec(ctx).Vector()
	}
	vec, err := query(ctx, r.Expr, ts)
	if err != nil {
		t.Fatalf("alert %s at %s: %s: %v", r.Alert, ts.Format(time.TimeOnly), r.Expr, err)
	}
	now := map[string]*activeAlert{}
	for _, smpl := range vec {
		b := labels.NewBuilder(smpl.Metric)
		b.Del(model.MetricNameLabel)
		seriesLabels := b.Labels().Map()
		expand := func(text string) string {
			defs := "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"
			out, err := template.NewTemplateExpander(ctx, defs+text, "__alert_"+r.Alert,
				template.AlertTemplateData(seriesLabels, nil, "", smpl), model.Time(timestamp.FromTime(ts)),
				template.QueryFunc(query), nil, nil).Expand()
			if err != nil {
				t.Fatalf("alert %s: expanding %q: %v", r.Alert, text, err)
			}
			return out
		}
		for k, v := range r.Labels {
			b.Set(k, expand(v))
		}
		b.Set(labels.AlertName, r.Alert)
		a := &activeAlert{labels: b.Labels(), annotations: map[string]string{}, activeAt: ts}
		for k, v := range r.Annotations {
			a.annotations[k] = expand(v)
		}
		key := a.labels.String()
		if prev, ok := before[key]; ok {
			a.activeAt = prev.activeAt
		}
		now[key] = a
	}
	return now
}

// compareAlerts checks that the alerts of check.Alertname firing at ts (active
// for at least the rule's for) are those expected, in any order.
func compareAlerts(t *testing.T, check alertRuleTest, rules []alertingRule, active map[string]*activeAlert, ts time.Time) {
	t.Helper()
	var hold time.Duration
	for _, r := range rules {
		if r.Alert == check.Alertname && r.For != "" {
			hold = parseDuration(t, r.For)
		}
	}
	got := map[string]*activeAlert{}
	for key, a := range active {
		if ts.Sub(a.activeAt) >= hold {
			got[key] = a
		}
	}
	want := map[string]map[string]string{}
	for _, exp := range check.ExpAlerts {
		l := maps.Clone(exp.ExpLabels)
		if l == nil {
			l = map[string]string{}
		}
		l[labels.AlertName] = check.Alertname
		want[labels.FromMap(l).String()] = exp.ExpAnnotations
	}
	where := fmt.Sprintf("%s at %s", check.Alertname, check.EvalTime)
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Errorf("%s: firing %v, want %v", where, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		return
	}
	for key, wanted := range want {
		if wanted != nil && !maps.Equal(got[key].annotations, wanted) {
			t.Errorf("%s: %s has annotations %v, want %v", where, key, got[key].annotations, wanted)
		}
	}
}
