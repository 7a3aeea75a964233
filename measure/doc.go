// Package measure is the one room where request records become numbers.
//
// A Record is one request as the load generator saw it, the raw truth every
// figure is rebuilt from. From the records of one level this package derives
// the steady-state window, the throughput over it (one definition, used by
// the live sweep lines, levels.json, the verdict and diff), the within-launch
// throughput samples, and the per-request distributions with one percentile
// definition. It also holds the `auto` request count, so the sweep, the
// campaign fingerprint and the verdict's synthetic engine size a level alike.
package measure
