"""SGLang 0.5.23's scheduler lines while serving, printed by SGLang's own code
through SGLang's own logging configuration (sglang/srt/utils/common.py
`configure_logger(server_args, prefix=" TP0")`, as the scheduler process of
rank TP0 calls it in sglang/srt/managers/scheduler.py):

- `SchedulerMetricsReporter.report_prefill_stats` and `report_decode_stats`
  (sglang/srt/managers/scheduler_components/metrics_reporter.py) with the
  pool's `PoolStats` (pool_stats_observer.py, full and hybrid-SWA pools),
  `PrefillStats` and `QueueCount` (metrics_collector.py);
- `Scheduler.update_running_batch` (sglang/srt/managers/scheduler.py) on a
  decode batch whose KV pool is full, which retracts requests.

The `self` of each method is a namespace carrying only the attributes the
method reads; the figures are chosen to run the pool full and queue requests.
"""

import sys
from types import SimpleNamespace

import common

STUBBED = [
    "torch", "transformers", "triton", "pybase64", "PIL", "starlette",
    "sglang.srt.configs", "einops", "sglang.kernels", "openai", "IPython",
    "sglang.srt.entrypoints", "sglang.srt.parser", "sglang.srt.constrained",
    "compressed_tensors", "sglang.srt.layers", "sglang.srt.models", "huggingface_hub",
    "sglang.srt.model_executor", "dill", "sgl_kernel", "sglang.srt.utils.hf_transformers_utils", "sglang.srt.disaggregation.encoder", "sglang.srt.utils.hf_transformers", "fastapi", "uvicorn", "filelock", "safetensors", "aiohttp",
]


def reporter(pool, waiting):
    from sglang.srt.disaggregation.utils import DisaggregationMode

    scheduler = SimpleNamespace(
        pool_stats_observer=SimpleNamespace(get_pool_stats=lambda: pool),
        waiting_queue=[object()] * waiting,
        forward_ct=0,
        disaggregation_mode=DisaggregationMode.NULL,
        spec_algorithm=SimpleNamespace(is_none=lambda: True),
        running_batch=None,
        kv_events_publisher=SimpleNamespace(publish_kv_events=lambda: None),
    )
    return SimpleNamespace(
        is_stats_logging_rank=True,
        current_scheduler_metrics_enabled=False,
        enable_mfu_metrics=False,
        last_prefill_stats_tic=common.CLOCK.perf_counter(),
        last_decode_stats_tic=common.CLOCK.perf_counter(),
        last_input_throughput=0.0,
        last_gen_throughput=0.0,
        num_generated_tokens=0,
        forward_ct_decode=0,
        decode_log_interval=40,
        scheduler_status_logger=None,
        stats=SimpleNamespace(new_token_ratio=0.0),
        _graph_backend_label="cuda graph",
        scheduler=scheduler,
    )


def print_stats():
    import sglang.srt.managers.scheduler_components.metrics_reporter as metrics_reporter
    from sglang.srt.managers.scheduler_components.metrics_reporter import (
        PrefillStats, SchedulerMetricsReporter)

    # The process-wide server config (runtime_context.publish of a ServerArgs)
    # is read only for the encoder-disaggregation branch: not that mode.
    metrics_reporter.time = common.FakeTime()
    metrics_reporter.get_disagg = lambda: SimpleNamespace(
        language_only=False, encoder_transfer_backend=None)
    from sglang.srt.managers.scheduler_components.pool_stats_observer import PoolStats
    from sglang.srt.observability.metrics_collector import QueueCount

    capacity = 229_376
    # A plain pool filling up: prefill, then decode at 98 % with a queue.
    plain = PoolStats(full_num_used=208_733, full_token_usage=208_733 / capacity,
                      full_available_size=capacity - 208_733, full_evictable_size=0,
                      full_capacity=capacity)
    me = reporter(plain, waiting=12)
    common.CLOCK.now += 0.85
    SchedulerMetricsReporter.report_prefill_stats(
        me, None,
        PrefillStats(log_input_tokens=8192, log_hit_tokens=0, new_token_ratio=0.7,
                     num_running_reqs=QueueCount(total=31), num_new_seqs=3),
        False)
    full = PoolStats(full_num_used=224_788, full_token_usage=224_788 / capacity,
                     full_available_size=capacity - 224_788, full_evictable_size=0,
                     full_capacity=capacity)
    me = reporter(full, waiting=23)
    me.num_generated_tokens = 40 * 64
    common.CLOCK.now += 1.68
    SchedulerMetricsReporter.report_decode_stats(
        me, True, SimpleNamespace(reqs=[object()] * 64, forward_iter=None))

    # A hybrid sliding-window model (full and SWA pools), both near full.
    swa_capacity = 458_752
    hybrid = PoolStats(full_num_used=208_733, full_token_usage=208_733 / capacity,
                       full_available_size=capacity - 208_733, full_evictable_size=0,
                       is_hybrid_swa=True, full_capacity=capacity,
                       swa_capacity=swa_capacity, swa_num_used=444_989,
                       swa_token_usage=444_989 / swa_capacity,
                       swa_available_size=swa_capacity - 444_989,
                       swa_evictable_size=0)
    me = reporter(hybrid, waiting=12)
    common.CLOCK.now += 0.9
    SchedulerMetricsReporter.report_prefill_stats(
        me, None,
        PrefillStats(log_input_tokens=8192, log_hit_tokens=0, new_token_ratio=0.7,
                     num_running_reqs=QueueCount(total=31), num_new_seqs=3),
        False)
    me = reporter(hybrid, waiting=12)
    me.num_generated_tokens = 40 * 31
    common.CLOCK.now += 1.2
    SchedulerMetricsReporter.report_decode_stats(
        me, True, SimpleNamespace(reqs=[object()] * 31, forward_iter=None))


def print_retract():
    from sglang.srt.managers.scheduler import Scheduler

    available = iter([1_920, 6_016])
    queued = []
    ratio = SimpleNamespace(current=0.7, decay_step=lambda: None)
    retracted = [SimpleNamespace(origin_input_ids=[0] * 2048, output_ids=[0] * 512)] * 2
    batch = SimpleNamespace(
        filter_batch=lambda reqs_to_exclude: None,
        is_empty=lambda: False,
        check_decode_mem=lambda: False,
        batch_size=lambda: 64,
        retract_decode=lambda: (retracted, 0.85, []),
        prepare_for_decode=lambda: None,
        batch_is_full=True,
    )
    scheduler = SimpleNamespace(
        _reqs_finishing_inflight=lambda b: [],
        decode_offload_manager=None,
        token_to_kv_pool_allocator=SimpleNamespace(available_size=lambda: next(available)),
        new_token_ratio_tracker=ratio,
        tree_cache=SimpleNamespace(req_to_token_pool=SimpleNamespace()),
        metrics_reporter=SimpleNamespace(enable_metrics=False, num_retracted_reqs=0),
        send_abort_output=lambda *a: None,
        beam_coordinator=SimpleNamespace(retire_group=lambda r: None),
        _add_request_to_queue=lambda req, is_retracted: queued.append(req),
        forward_ct=1,
    )
    common.CLOCK.now += 0.4
    Scheduler.update_running_batch(scheduler, batch)
    assert len(queued) == 2


def main(source_dir, which):
    common.load(source_dir, STUBBED)
    common.bare_package(source_dir, "sglang")
    from sglang.srt.utils.common import configure_logger

    configure_logger(SimpleNamespace(log_level="info"), prefix=" TP0")
    common.fixed_records()
    {"stats": print_stats, "retract": print_retract}[which]()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
