"""SGLang 0.4.0's scheduler lines while serving, printed by SGLang's own code
through its own logging configuration (sglang/srt/utils.py
`configure_logger(server_args, prefix=" TP0")`, as
sglang/srt/managers/scheduler.py `run_scheduler_process` calls it for rank 0):
`Scheduler.log_prefill_stats`, `Scheduler.log_decode_stats` and
`Scheduler.update_running_batch` on a decode batch out of KV memory (its
retraction). The `self` of each method is a namespace carrying only the
attributes the method reads; the adder is a namespace with the two counters
the prefill line prints.
"""

import sys
from types import SimpleNamespace

import common

STUBBED = [
    "torch", "transformers", "triton", "vllm", "flashinfer", "PIL", "zmq",
    "uvloop", "fastapi", "uvicorn", "orjson", "psutil", "setproctitle",
    "outlines", "xgrammar", "huggingface_hub", "aiohttp", "tqdm", "requests",
    "safetensors", "sgl_kernel", "decord", "interegular", "pydantic",
    "sglang.srt.layers", "sglang.srt.model_executor", "sglang.srt.models",
    "sglang.srt.constrained", "sglang.srt.configs", "sglang.srt.hf_transformers_utils",
    "sglang.srt.openai_api", "sglang.lang", "IPython", "starlette",
]


def scheduler(max_total, available, evictable, waiting, running=0):
    from sglang.srt.mem_cache.radix_cache import RadixCache  # noqa: F401

    return SimpleNamespace(
        tree_cache=SimpleNamespace(evictable_size=lambda: evictable),
        tree_cache_metrics={"total": 0.0, "hit": 0.0},
        max_total_num_tokens=max_total,
        token_to_kv_pool=SimpleNamespace(available_size=lambda: available),
        waiting_queue=[object()] * waiting,
        running_batch=SimpleNamespace(reqs=[object()] * running),
        num_generated_tokens=0,
        last_decode_stats_tic=common.CLOCK.time(),
        enable_metrics=False,
    )


def print_stats():
    import sglang.srt.managers.scheduler as sched

    sched.time = common.FakeTime()
    total = 46_611  # the pool of sample 811 (SGLang 0.4.3), the start a test appends these lines to
    me = scheduler(total, available=4_195, evictable=0, waiting=12)
    common.CLOCK.now += 0.9
    sched.Scheduler.log_prefill_stats(
        me, SimpleNamespace(log_input_tokens=8192, log_hit_tokens=0),
        can_run_list=[object()] * 3, running_bs=31, has_being_chunked=0)
    me = scheduler(total, available=932, evictable=0, waiting=23, running=64)
    me.num_generated_tokens = 40 * 64
    common.CLOCK.now += 1.68
    sched.Scheduler.log_decode_stats(me)


def print_retract():
    import sglang.srt.managers.scheduler as sched

    retracted = [object()]
    batch = SimpleNamespace(
        batch_size=lambda: 64, filter_batch=lambda: None, is_empty=lambda: False,
        check_decode_mem=lambda: False,
        retract_decode=lambda: (retracted, 0.6),
        prepare_for_decode=lambda: None,
    )
    me = SimpleNamespace(
        new_token_ratio=0.4, waiting_queue=[], disable_jump_forward=True,
        batch_is_full=True)
    common.CLOCK.now += 0.4
    sched.Scheduler.update_running_batch(me, batch)
    assert me.waiting_queue == retracted


def main(source_dir, which):
    common.load(source_dir, STUBBED)
    common.bare_package(source_dir, "sglang")
    from sglang.srt.utils import configure_logger

    configure_logger(SimpleNamespace(log_level="info"), prefix=" TP0")
    common.fixed_records()
    {"stats": print_stats, "retract": print_retract}[which]()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
