// Package server is the simulated SGLang server's HTTP face: health, the
// OpenAI-compatible completions and chat (streamed as SGLang streams them),
// /server_info, /metrics in SGLang's Prometheus names, the prefix cache's
// flush, tokenize, and a prefill worker's bootstrap server for
// disaggregation. It answers from a model.Engine it is handed; the process
// around it (loading, ranks, signals) is package sim's, whose end-to-end
// tests run it through the bakeoff binary.
package server
