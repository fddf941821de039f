// Pins the Prometheus Operator whose CRDs (ServiceMonitor, PrometheusRule)
// the chart tests apply before a dry run of the monitoring objects.
module github.com/cozystack/address-controller/hack/tools/prometheus-operator

go 1.26.0

require github.com/prometheus-operator/prometheus-operator v0.85.0 // indirect
