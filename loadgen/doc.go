// Package loadgen is bakeoff's load generator client: an OpenAI-compatible
// streaming client, the closed-loop runner that holds each concurrency level,
// and the engine metrics scrape. It writes measure.Record values, the raw
// truth every report is rebuilt from; package measure turns them into numbers.
package loadgen
