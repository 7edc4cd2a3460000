"""vLLM 0.9.2 and 0.10.2, each printer vLLM's own code through vLLM's own
logging configuration (vllm/logger.py configures the `vllm` logger on import):

- `v1`: the V1 `LoggingStatLogger.log()` (vllm/v1/metrics/loggers.py) fed
  SchedulerStats / IterationStats / PrefixCacheStats (vllm/v1/metrics/stats.py);
- `v0`: the V0 `LoggingStatLogger.log(stats)` (vllm/engine/metrics.py) fed
  `Stats` (vllm/engine/metrics_types.py);
- `preempt`: the V0 scheduler's `Scheduler._preempt` (vllm/core/scheduler.py)
  on a request it must push back, the 51st of a run (it warns every 50th);
- `v1-apiserver`: `v1` behind the process prefix 0.10's API server writes
  (vllm/utils/__init__.py `_add_prefix(sys.stdout, "APIServer", pid)`, what
  `decorate_logs()` calls), with the pid and clock of
  `sample-logs/804-vllm-0102-…` (vLLM 0.10.2) so that a test can append the
  lines to that real start;
- `v0-802`: `v0` with a preemption warning between two stats, on the clock of
  `sample-logs/802-vllm-072-v0-…` (vLLM 0.7.2, V0), printed by 0.7.2.
"""

import dataclasses
import sys
from types import SimpleNamespace

import common

STUBBED = [
    "torch", "vllm.config", "zmq", "blake3", "PIL", "pybase64", "transformers",
    "huggingface_hub", "fastapi", "jinja2", "openai", "vllm.distributed",
    "filelock", "gguf", "safetensors", "aiohttp", "vllm.entrypoints",
    "vllm.reasoning", "vllm.v1.structured_output", "cpuinfo", "cbor2",
]


def print_v1():
    import vllm.v1.metrics.loggers as loggers
    from vllm.v1.metrics.stats import (
        IterationStats, PrefixCacheStats, SchedulerStats)

    loggers.time = common.FakeTime()
    config = SimpleNamespace(cache_config=SimpleNamespace(num_gpu_blocks=None))
    stat_logger = loggers.LoggingStatLogger(config, engine_index=0)
    steps = [
        # running, waiting, kv usage, prompt tok, gen tok, queries, hits
        (4, 0, 0.125, 5120, 800, 5120, 0),
        (48, 17, 0.992, 18432, 4125, 18432, 2286),
        (64, 23, 1.000, 0, 951, 0, 0),
        (31, 0, 0.587, 2048, 3010, 2048, 1792),
    ]
    for running, waiting, usage, prompt, gen, queries, hits in steps:
        common.CLOCK.now += 10.0
        iteration = IterationStats()
        iteration.num_prompt_tokens = prompt
        iteration.num_generation_tokens = gen
        scheduler = SchedulerStats(
            num_running_reqs=running, num_waiting_reqs=waiting,
            kv_cache_usage=usage,
            prefix_cache_stats=PrefixCacheStats(
                requests=max(1, running), queries=queries, hits=hits))
        stat_logger.record(scheduler, iteration)
        stat_logger.log()


def print_v0(preempt_after=None):
    import vllm.engine.metrics as metrics
    from vllm.engine.metrics_types import Stats

    metrics.time = common.FakeTime()
    import vllm.engine.metrics_types as metrics_types
    metrics_types.time = common.FakeTime()
    stat_logger = metrics.LoggingStatLogger(local_interval=5.0, vllm_config=None)
    steps = [
        # running, swapped, pending, gpu kv, prompt tok, gen tok
        # (sized for 802's cache: 581312 tokens, requests of up to 4096)
        (140, 0, 4, 0.978, 0, 5230),
        (142, 0, 9, 0.996, 8192, 6110),
        (60, 0, 0, 0.412, 0, 4800),
    ]
    for running, swapped, pending, gpu, prompt, gen in steps:
        common.CLOCK.now += 10.0
        given = dict(
            now=common.CLOCK.time(), num_running_sys=running,
            num_waiting_sys=pending, num_swapped_sys=swapped,
            gpu_cache_usage_sys=gpu, cpu_cache_usage_sys=0.0,
            cpu_prefix_cache_hit_rate=-1, gpu_prefix_cache_hit_rate=-1,
            num_prompt_tokens_iter=prompt, num_generation_tokens_iter=gen,
            num_tokens_iter=prompt + gen, max_lora="0")
        # The per-request lists and counters the local logger does not print
        # (their set differs between versions): empty.
        for f in dataclasses.fields(Stats):
            if f.name not in given and f.default is dataclasses.MISSING:
                given[f.name] = 0 if "int" == str(f.type) else []
        stat_logger.log(Stats(**given))
        if preempt_after == running:
            print_preempt()


def print_preempt():
    from vllm.core.scheduler import Scheduler

    pushed_back = []
    scheduler = SimpleNamespace(
        user_specified_preemption_mode=None,
        num_cumulative_preemption=50,
        _preempt_by_recompute=pushed_back.append,
        _preempt_by_swap=lambda group, blocks: pushed_back.append(group),
    )
    group = SimpleNamespace(request_id="417", get_max_num_running_seqs=lambda: 1)
    common.CLOCK.now += 1.0
    Scheduler._preempt(scheduler, group, [])
    assert pushed_back == [group]


def print_v1_apiserver():
    from vllm.utils import _add_prefix

    _add_prefix(sys.stdout, "APIServer", 1804347)
    print_v1()


def print_v0_802():
    # Sample 802 (vLLM 0.7.2, V0) prints no process prefix; its clock goes on.
    print_v0(preempt_after=142)


def main(source_dir, which):
    if which == "v1-apiserver":
        common.START = 1761232800.0  # 2025-10-23 15:20:00 UTC, after 804's start
    if which == "v0-802":
        common.START = 1740825080.0  # 2025-03-01 10:31:20 UTC, after 802's start
    common.load(source_dir, STUBBED)
    common.fixed_records()
    import vllm.logger  # noqa: F401  (configures the `vllm` logger on import)
    printers = {"v1": print_v1, "v0": print_v0, "preempt": print_preempt,
                "v1-apiserver": print_v1_apiserver, "v0-802": print_v0_802}
    printers[which]()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
