"""vLLM 0.34.0's V1 `LoggingStatLogger.log()` (vllm/v1/metrics/loggers.py),
fed SchedulerStats / IterationStats / PrefixCacheStats from
vllm/v1/metrics/stats.py, printed through vLLM's own logging configuration
(vllm/logger.py `_configure_vllm_root_logger`, the API server's process name
from entrypoints/launchers/api_server/entry.py `decorate_logs("APIServer")`)."""

import sys
from types import SimpleNamespace

import common

STUBBED = [
    "torch", "vllm.config", "vllm.compilation", "vllm.utils.torch_utils",
    "zmq", "PIL", "pybase64", "aiohttp", "transformers", "huggingface_hub",
    "safetensors", "cbor2", "uvloop", "cpuinfo", "llguidance", "xgrammar",
]


def main(source_dir, which="stats"):
    common.load(source_dir, STUBBED)
    import vllm.logger as vlog
    import vllm.v1.metrics.loggers as loggers
    from vllm.v1.metrics.stats import (
        IterationStats, PrefixCacheStats, PromptTokenStats, SchedulerStats)

    vlog._configure_vllm_root_logger()
    vlog.set_vllm_process_name("APIServer")
    common.fixed_records()
    loggers.time = common.FakeTime()

    config = SimpleNamespace(
        device_config=SimpleNamespace(device_type="cuda"),
        model_config=None,
        kv_transfer_config=None,
        ec_transfer_config=None,
        observability_config=SimpleNamespace(
            cudagraph_metrics=False, enable_mfu_metrics=False),
        cache_config=SimpleNamespace(num_gpu_blocks=None),
    )
    stat_logger = loggers.LoggingStatLogger(config, engine_index=0)

    # A KV cache filling up over four intervals of 10 s: requests queue, then
    # the scheduler preempts (V1 counts preemptions in IterationStats).
    steps = [
        # running, waiting, kv usage, prompt tok, gen tok, preempted, queries, hits
        (12, 0, 0.312, 18432, 2310, 0, 18432, 2048),
        (48, 17, 0.992, 4096, 4125, 0, 4096, 1024),
        (64, 3, 1.000, 0, 951, 5, 0, 0),
        (7, 0, 0.154, 0, 1204, 0, 0, 0),
    ]
    for running, waiting, usage, prompt, gen, preempted, queries, hits in steps:
        common.CLOCK.now += 10.0
        iteration = IterationStats()
        iteration.num_generation_tokens = gen
        iteration.prompt_token_stats = PromptTokenStats()
        iteration.prompt_token_stats.computed = prompt
        iteration.num_preempted_reqs = preempted
        prefix = PrefixCacheStats()
        prefix.requests = max(1, running)
        prefix.queries = queries
        prefix.hits = hits
        scheduler = SchedulerStats(
            num_running_reqs=running, num_waiting_reqs=waiting,
            kv_cache_usage=usage, prefix_cache_stats=prefix)
        stat_logger.record(scheduler, iteration)
        stat_logger.log()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
