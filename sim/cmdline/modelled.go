package cmdline

// modelledFlag is an SGLang flag the sim acts on: its setter, and the kind
// and type it expects the generated table (sglang_args.tsv) to give the
// dest, so that a change in SGLang's source that would make the setter
// misread the value fails a test instead of drifting (TestModelledInTable).
type modelledFlag struct {
	kind flagKind
	typ  string
	set  func(c *Config, v string) error
}

// modelled are the SGLang flags the sim models, keyed by argparse's dest: a
// deprecated alias that stores into the same dest (--cuda-graph-max-bs into
// cuda_graph_max_bs_decode) sets the same field. Every other SGLang flag is
// accepted with SGLang's checks, recorded in /server_info, and has no
// effect; docs/SIM.md says what each of these does.
var modelled = map[string]modelledFlag{
	"model_path":        {kindValue, "str", strFlag(func(c *Config) *string { return &c.ModelPath })},
	"served_model_name": {kindValue, "str", strFlag(func(c *Config) *string { return &c.ServedModelName })},
	"context_length":    {kindValue, "human_readable_int", hrIntFlag(func(c *Config) *int { return &c.ContextLength })},
	"host":              {kindValue, "str", strFlag(func(c *Config) *string { return &c.Host })},
	"port":              {kindValue, "int", intFlag(func(c *Config) *int { return &c.Port })},

	"mem_fraction_static":  {kindValue, "float", floatFlag(func(c *Config) *float64 { return &c.MemFractionStatic })},
	"max_running_requests": {kindValue, "int", intFlag(func(c *Config) *int { return &c.MaxRunningRequests })},
	// The prefix cache divides by these, so the sim refuses what SGLang
	// would only fail on later.
	"max_total_tokens":     {kindValue, "human_readable_int", posHRIntFlag(func(c *Config) *int { return &c.MaxTotalTokens })},
	"page_size":            {kindValue, "int", posIntFlag(func(c *Config) *int { return &c.PageSize })},
	"stream_interval":      {kindValue, "int", posIntFlag(func(c *Config) *int { return &c.StreamInterval })},
	"chunked_prefill_size": {kindValue, "int", intFlag(func(c *Config) *int { return &c.ChunkedPrefillSize })},

	"disable_radix_cache":      {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.DisableRadixCache })},
	"disable_overlap_schedule": {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.DisableOverlapSchedule })},
	"enable_cache_report":      {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.EnableCacheReport })},
	"enable_metrics":           {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.EnableMetrics })},
	"log_level":                {kindValue, "str", strFlag(func(c *Config) *string { return &c.LogLevel })},

	"watchdog_timeout": {kindValue, "float", func(c *Config, v string) error {
		d, err := secondsValue(v, "float")
		c.Deploy.WatchdogTimeout, c.Deploy.WatchdogGiven = d, true
		return err
	}},
	"dist_timeout": {kindValue, "int", func(c *Config, v string) error {
		d, err := secondsValue(v, "int")
		c.Deploy.DistTimeout = d
		return err
	}},
	"dist_init_addr":                {kindValue, "str", strFlag(func(c *Config) *string { return &c.Deploy.DistInitAddr })},
	"nnodes":                        {kindValue, "int", intFlag(func(c *Config) *int { return &c.Deploy.NNodes })},
	"node_rank":                     {kindValue, "int", intFlag(func(c *Config) *int { return &c.Deploy.NodeRank })},
	"tp_size":                       {kindValue, "int", intFlag(func(c *Config) *int { return &c.TP })},
	"enable_dp_attention":           {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.EnableDPAttention })},
	"disaggregation_mode":           {kindValue, "str", strFlag(func(c *Config) *string { return &c.Deploy.Disagg })},
	"disaggregation_bootstrap_port": {kindValue, "int", intFlag(func(c *Config) *int { return &c.Deploy.BootstrapPort })},

	"speculative_algorithm":        {kindValue, "str", strFlag(func(c *Config) *string { return &c.SpecAlgorithm })},
	"speculative_draft_model_path": {kindValue, "str", strFlag(func(c *Config) *string { return &c.DraftModelPath })},
	"speculative_num_steps":        {kindValue, "int", intFlag(func(c *Config) *int { return &c.SpecSteps })},
	"speculative_eagle_topk":       {kindValue, "int", intFlag(func(c *Config) *int { return &c.SpecTopK })},
	"speculative_num_draft_tokens": {kindValue, "int", intFlag(func(c *Config) *int { return &c.SpecDraftTokens })},
	"speculative_adaptive":         {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.SpecAdaptive })},
	"speculative_adaptive_config":  {kindValue, "str", strFlag(func(c *Config) *string { return &c.SpecAdaptiveConfig })},

	"attention_backend":         {kindValue, "str", strFlag(func(c *Config) *string { return &c.AttentionBackend })},
	"cuda_graph_backend_decode": {kindValue, "parse_cuda_graph_backend_arg", strFlag(func(c *Config) *string { return &c.CudaGraphBackendDecode })},
	"cuda_graph_max_bs_decode":  {kindValue, "int", intFlag(func(c *Config) *int { return &c.CudaGraphMaxBS })},
	"disable_decode_cuda_graph": {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.DisableDecodeCudaGraph })},
	"disable_cuda_graph":        {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.DisableCudaGraph })},
	"disable_custom_all_reduce": {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.DisableCustomAR })},

	"enforce_disable_flashinfer_allreduce_fusion": {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.EnforceDisableFusion })},
	"flashinfer_allreduce_fusion_backend":         {kindValue, "str", strFlag(func(c *Config) *string { return &c.FusionBackend })},
	"enable_flashinfer_allreduce_fusion":          {kindBool, "-", boolFlag(func(c *Config) *bool { return &c.EnableFusionDeprecated })},
}
