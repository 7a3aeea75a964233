"""Renders the help fixtures of engines whose help is Python's own formatting
(argparse, click) from their argument definitions, as their sources declare
them, with this machine's Python (3.11) and click (8.4). Run from this
directory: python3 mkhelp.py. The llama.cpp fixture is a real build's output
and is not made here."""

import argparse
import os

import click

os.environ["COLUMNS"] = "100"

# The SGLang fixture is written from the table scripts/sglang-args.py makes of
# SGLang's source (sim/cmdline/sglang_args.tsv), the one the sim parses with:
# `make sglang-args` rewrites both, so the two cannot disagree.
SGLANG_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sim", "cmdline", "sglang_args.tsv")

SGLANG_HEADER = """\
# sglang serve --help (python -m sglang.launch_server --help) of sgl-project/sglang, rendered by this Python's argparse from sim/cmdline/sglang_args.tsv, which scripts/sglang-args.py wrote from SGLang's argument definitions (add_cli_args_from_dataclass over arg_groups/fields/*.py, then the hand registrations of ServerArgs.add_cli_args), prog "sglang serve", allow_abbrev left on.
# Every action SGLang registers; the table's header names each source file and the commit it was read at: {sources}.
"""

VLLM_HEADER = """\
# vllm serve --help=all of vllm-project/vllm, rendered by Python 3.11's argparse with vLLM's SortedHelpFormatter (ArgumentDefaultsHelpFormatter, options sorted) from vllm/engine/arg_utils.py at commit 99d7eb5d (EngineArgs.add_cli_args: groups per config class, -tp/-pp/-dp short forms, BooleanOptionalAction for optional booleans, deprecated ones with "[DEPRECATED] ... will be removed in v0.12.0."); FlexibleArgumentParser leaves allow_abbrev on and takes '_' for '-'.
# A subset of the groups; --per-request-spec-decode-metrics is vllm PR #48915's. Help texts of the config fields are shortened.
"""

VLLM_CHOICES_HEADER = """\
# vllm serve --help=all of vllm-project/vllm: the options whose help lists values, closed and open, rendered by Python 3.11's argparse with vLLM's SortedHelpFormatter. A Literal field is choices= ({a,b}: argparse refuses any other value); a Literal | str field is a metavar of the sorted values, printed as a Python list, and any string is taken (vllm/engine/arg_utils.py literal_to_kwargs at commit 99d7eb5d: --load-format, and --tokenizer-mode at 00522333); --tool-call-parser has no choices= but the metavar "{<built-in parsers>} or name registered in --tool-parser-plugin" (vllm/entrypoints/openai/cli_args.py BaseFrontendArgs._customize_cli_kwargs at commit 00522333). A subset of each list; help texts shortened.
"""

TRTLLM_HEADER = """\
# trtllm-serve serve --help of NVIDIA/TensorRT-LLM, rendered by click 8.4 from the options of tensorrt_llm/commands/serve.py at commit 00209af1 (the serve command; --reasoning_parser and --tool_parser, whose choices are registries filled at import, are left out, and help_info_with_stability_tag's tags are not shown).
"""


def unescape_tsv(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append({"t": "\t", "n": "\n"}.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def sglang():
    p = argparse.ArgumentParser(prog="sglang serve")
    sources, columns = [], None
    with open(SGLANG_TABLE, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#   "):
                sources.append(line[4:])
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if columns is None:
                columns = cols
                continue
            row = dict(zip(columns, cols))
            opts = row["options"].split()
            if opts == ["-h", "--help"]:
                continue  # argparse adds it
            kw = {"dest": row["dest"]}
            kw["help"] = argparse.SUPPRESS if row["hidden"] == "y" else unescape_tsv(row["help"])
            if row["required"] == "y":
                kw["required"] = True
            typ = {"int": int, "float": float}.get(row["type"], str)
            kind = row["kind"]
            if kind == "flag":
                kw["action"] = "store_true"
            elif kind == "boolopt":
                kw["action"] = argparse.BooleanOptionalAction
            else:
                kw["type"] = typ
                if row["choices"] != "-":
                    kw["choices"] = [typ(c) if typ is int else c for c in row["choices"].split(",")]
                nargs = {"value": None, "optional": "?", "list": "+", "list*": "*"}[kind]
                if nargs:
                    kw["nargs"] = nargs
            p.add_argument(*opts, **kw)
    return SGLANG_HEADER.format(sources="; ".join(sources)) + p.format_help()


class SortedHelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    def add_arguments(self, actions):
        super().add_arguments(sorted(actions, key=lambda x: x.option_strings))


def vllm():
    p = argparse.ArgumentParser(prog="vllm serve", formatter_class=SortedHelpFormatter,
                                usage="vllm serve [model_tag] [options]")
    p.add_argument("model_tag", nargs="?", help="The model tag to serve (optional if specified in config)")
    fe = p.add_argument_group("Frontend", "Arguments for the OpenAI-compatible frontend server.")
    fe.add_argument("--host", type=str, help="Host name.")
    fe.add_argument("--port", type=int, default=8000, help="Port number.")
    fe.add_argument("--api-key", type=str, nargs="+", help="If provided, the server will require one of these keys to be presented in the header.")
    fe.add_argument("--per-request-spec-decode-metrics", choices=["none", "summary", "detailed"], default="none",
                    help="Per-request speculative decoding metrics in each response.")
    m = p.add_argument_group("ModelConfig", "Configuration for the model.")
    m.add_argument("--dtype", choices=["auto", "bfloat16", "float", "float16", "float32", "half"], default="auto",
                   help="Data type for model weights and activations.")
    m.add_argument("--max-model-len", type=str, help="Model context length (prompt and output).")
    m.add_argument("--trust-remote-code", action=argparse.BooleanOptionalAction, default=False,
                   help="Trust remote code (e.g., from HuggingFace) when downloading the model and tokenizer.")
    m.add_argument("--served-model-name", type=str, nargs="+", help="The model name(s) used in the API.")
    m.add_argument("--enforce-eager", action=argparse.BooleanOptionalAction, default=False,
                   help="Whether to always use eager-mode PyTorch.")
    m.add_argument("--override-pooler-config", type=str, help="[DEPRECATED] Use `pooler_config` instead. This field will be removed in v0.12.0 or v1.0.0, whichever is sooner.")
    m.add_argument("--pooler-config", type=str, help="Pooler config which controls the behaviour of output pooling in pooling models.")
    so = p.add_argument_group("StructuredOutputsConfig", "Dataclass which contains structured outputs config for the engine.")
    for arg in ["--guided-decoding-backend"]:
        so.add_argument(arg, type=str, help=f"[DEPRECATED] {arg} will be removed in v0.12.0.")
    for arg in ["--guided-decoding-disable-fallback"]:
        so.add_argument(arg, type=bool, help=f"[DEPRECATED] {arg} will be removed in v0.12.0.")
    par = p.add_argument_group("ParallelConfig", "Configuration for the distributed execution.")
    par.add_argument("--pipeline-parallel-size", "-pp", type=int, default=1, help="Number of pipeline parallel groups.")
    par.add_argument("--tensor-parallel-size", "-tp", type=int, default=1, help="Number of tensor parallel groups.")
    par.add_argument("--data-parallel-size", "-dp", type=int, default=1, help="Number of data parallel groups.")
    par.add_argument("--enable-expert-parallel", action=argparse.BooleanOptionalAction, default=False,
                     help="Use expert parallelism instead of tensor parallelism for MoE layers.")
    par.add_argument("--disable-custom-all-reduce", action=argparse.BooleanOptionalAction, default=False,
                     help="Disable the custom all-reduce kernel and fall back to NCCL.")
    par.add_argument("--num-redundant-experts", type=int, help="[DEPRECATED] --num-redundant-experts will be removed in v0.12.0.")
    cache = p.add_argument_group("CacheConfig", "Configuration for the KV cache.")
    cache.add_argument("--block-size", type=int, choices=[1, 8, 16, 32, 64, 128], help="Size of a contiguous cache block in number of tokens.")
    cache.add_argument("--gpu-memory-utilization", type=float, default=0.9,
                       help="The fraction of GPU memory to be used for the model executor.")
    cache.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction,
                       help="Whether to enable prefix caching.")
    sched = p.add_argument_group("SchedulerConfig", "Scheduler configuration.")
    sched.add_argument("--max-num-batched-tokens", type=str, help="Maximum number of tokens to be processed in a single iteration.")
    sched.add_argument("--max-num-seqs", type=int, help="Maximum number of sequences to be processed in a single iteration.")
    spec = p.add_argument_group("VllmConfig", "Dataclass which contains all vllm-related configuration.")
    spec.add_argument("--speculative-config", "-sc", type=str, help="Speculative decoding configuration.")
    spec.add_argument("--compilation-config", "-O", type=str, help="torch.compile and cudagraph capture configuration for the model.")
    return VLLM_HEADER + p.format_help()


def vllm_choices():
    p = argparse.ArgumentParser(prog="vllm serve", formatter_class=SortedHelpFormatter,
                                usage="vllm serve [model_tag] [options]")
    p.add_argument("model_tag", nargs="?", help="The model tag to serve (optional if specified in config)")
    fe = p.add_argument_group("Frontend", "Arguments for the OpenAI-compatible frontend server.")
    fe.add_argument("--enable-auto-tool-choice", action=argparse.BooleanOptionalAction, default=False,
                    help="Enable auto tool choice for supported models. Use `--tool-call-parser` to specify which parser to use.")
    fe.add_argument("--tool-call-parser", type=str, default=None,
                    metavar="{deepseek_v3,hermes,llama3_json,mistral,pythonic,qwen3_coder} or name registered in --tool-parser-plugin",
                    help="Select the tool call parser depending on the model that you're using. This is used to parse the model-generated tool call into OpenAI API format. Required for `--enable-auto-tool-choice`. You can choose any option from the built-in parsers or register a plugin via `--tool-parser-plugin`.")
    fe.add_argument("--tool-parser-plugin", type=str, default="",
                    help="Special the tool parser plugin write to parse the model-generated tool into OpenAI API format, the name register in this plugin can be used in `--tool-call-parser`.")
    fe.add_argument("--uvicorn-log-level", type=str, choices=sorted(["critical", "error", "warning", "info", "debug", "trace"]),
                    default="info", help="Log level for uvicorn.")
    m = p.add_argument_group("ModelConfig", "Configuration for the model.")
    m.add_argument("--dtype", choices=["auto", "bfloat16", "float", "float16", "float32", "half"], default="auto",
                   help="Data type for model weights and activations.")
    m.add_argument("--tokenizer-mode", type=str, metavar=sorted(["auto", "hf", "slow", "mistral", "deepseek_v32"]), default="auto",
                   help="Tokenizer mode.")
    load = p.add_argument_group("LoadConfig", "Configuration for loading the model weights.")
    load.add_argument("--load-format", type=str, metavar=sorted(["auto", "pt", "safetensors", "npcache", "dummy", "gguf", "bitsandbytes"]),
                      default="auto", help="The format of the model weights to load.")
    return VLLM_CHOICES_HEADER + p.format_help()


severity = ["internal_error", "error", "warning", "info", "verbose", "debug", "trace"]


@click.command("serve")
@click.argument("model", type=str)
@click.option("--tokenizer", type=str, default=None, help="Path | Name of the tokenizer.")
@click.option("--host", type=str, default="localhost", help="Hostname of the server.")
@click.option("--port", type=int, default=8000, help="Port of the server.")
@click.option("--backend", type=click.Choice(["pytorch", "tensorrt", "_autodeploy"]), default="pytorch",
              help="The backend to use to serve the model. Default is pytorch backend.")
@click.option("--log_level", type=click.Choice(severity), default="info", help="The logging level.")
@click.option("--max_beam_width", type=int, default=1, help="Maximum number of beams for beam search decoding.")
@click.option("--max_batch_size", type=int, default=2048, help="Maximum number of requests that the engine can schedule.")
@click.option("--max_num_tokens", type=int, default=8192,
              help="Maximum number of batched input tokens after padding is removed in each batch.")
@click.option("--max_seq_len", type=int, default=None,
              help="Maximum total length of one request, including prompt and outputs. If unspecified, the value is deduced from the model config.")
@click.option("--tensor_parallel_size", "--tp_size", type=int, default=1, help="Tensor parallelism size.")
@click.option("--pipeline_parallel_size", "--pp_size", type=int, default=1, help="Pipeline parallelism size.")
@click.option("--context_parallel_size", "--cp_size", type=int, default=1, help="Context parallelism size.")
@click.option("--moe_expert_parallel_size", "--ep_size", type=int, default=None, help="expert parallelism size")
@click.option("--gpus_per_node", type=int, default=None,
              help="Number of GPUs per node. Default to None, and it will be detected automatically.")
@click.option("--free_gpu_memory_fraction", "--kv_cache_free_gpu_memory_fraction", type=float, default=0.9,
              help="Free GPU memory fraction reserved for KV Cache, after allocating model weights and buffers.")
@click.option("--num_postprocess_workers", type=int, default=0,
              help="Number of workers to postprocess raw responses to comply with OpenAI protocol.")
@click.option("--trust_remote_code", is_flag=True, default=False, help="Flag for HF transformers.")
@click.option("--revision", type=str, default=None,
              help="The revision to use for the HuggingFace model (branch name, tag name, or commit id).")
@click.option("--config", "--extra_llm_api_options", "extra_llm_api_options", type=str, default=None,
              help="Path to a YAML file that overwrites the parameters specified by trtllm-serve. Can be specified as either --config or --extra_llm_api_options.")
@click.option("--server_role", type=str, default=None,
              help="Server role. Specify this value only if running in disaggregated mode.")
@click.option("--enable_chunked_prefill", is_flag=True, default=False, help="Enable chunked prefill")
@click.option("--chat_template", type=str, default=None,
              help="Specify a custom chat template. Can be a file path or one-liner template string")
def trtllm_serve(**kw):
    """Running an OpenAI API compatible server

    MODEL: model name | HF checkpoint path | TensorRT engine path
    """


def trtllm():
    ctx = click.Context(trtllm_serve, info_name="trtllm-serve serve", terminal_width=100)
    return TRTLLM_HEADER + trtllm_serve.get_help(ctx) + "\n"


for name, fn in [("sglang", sglang), ("vllm", vllm), ("vllm-choices", vllm_choices), ("trtllm-serve", trtllm)]:
    with open(f"{name}-help.txt", "w") as f:
        f.write(fn())
