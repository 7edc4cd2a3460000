#!/usr/bin/env python3
"""Deterministic benchmark inputs for vramdiff, built from the real sample logs.

    python3 benches/gen.py KIND SIZE OUT [--seed N] [--logs DIR]

KIND is one of
  journald   a journald dump (`Nov 30 06:05:00 host ollama[1234]: ...`): mostly noise (GIN access lines, Ollama
             slog chatter, progress dots, kernel and systemd lines) with a model load from a sample log every
             ~3.5 MB (a few hundred loads per GiB);
  llama      llama.cpp / llama-server heavy output without a collector prefix: `print_info:`, `load_tensors:`,
             `llama_kv_cache`, `llama_context:`, per-layer assignment and slot lines, with a load every ~1 MB;
  mix        every `.log` sample as it is between journald noise, about 1 line in 60 a memory line of a sample
             (one with a memory word), the proportions of issue 24; `--logs DIR` takes every `.log` file under
             DIR instead (issue 38's corpus mix: `--logs benches/corpus`, the corpus logs copied with their INDEX.tsv);
  longlines  pathological: lines of 8 KiB to 1.5 MiB (prompt dumps, base64 images, minified JSON), some with a
             memory anchor at the far end and some longer than vramdiff's 1 MiB line cap.
SIZE is a byte count with an optional K/M/G suffix (powers of 1024). The same KIND, SIZE and seed always give the
same bytes. Only the standard library is used.
"""

import argparse
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "sample-logs")

# Load blocks: (sample file, journald identifier). Each sample is one or more real model loads.
LOAD_SAMPLES = [
    ("founding-k80-gemma3-12b.log", "ollama"),
    ("001-kaggle-t4-llama31-8b.log", "ollama"),
    ("026-journald-container-2gpu-kv-compute-actual.log", "6f929011afab"),
    ("032-journald-catalan-2x-quadro-newengine-fit.log", "ollama"),
    ("042-llama-server-fit-breakdown-2gpu-5090-3090.log", "llama-server"),
]

# A journald prefix as it appears in the samples (any locale), to take it off before adding ours.
JOURNALD = re.compile(r"^(?:(?:\S+\s+){1,4}?\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s+\S+\s+)?[^\s\[\]]+\[\d+\]: ?")

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
ROUTES = ['"/api/chat"', '"/api/generate"', '"/api/tags"', '"/api/show"', '"/"', '"/api/embed"', '"/v1/chat/completions"']
METHODS = ["POST    ", "GET     ", "HEAD    "]
SLOG_CHATTER = [
    'msg="waiting for server to become available" status="llm server loading model"',
    'msg="context for request finished"',
    'msg="runner with non-zero duration has gone idle, adding timer" runner.name=registry.ollama.ai/library/llama3.1:8b runner.inference=cuda runner.devices=1 runner.size="6.2 GiB" runner.vram="6.2 GiB" runner.parallel=4 runner.pid=1234 runner.model=/usr/share/ollama/.ollama/models/blobs/sha256-8eeb52dfb3bb9aefdf9d1ef24b3bdbcfbe82238798c4b918278320b6fcef18fe duration=5m0s',
    'msg="after processing request finished event" runner.name=registry.ollama.ai/library/gemma3:12b refCount=0',
    'msg="chat request" images=0 prompt="<start_of_turn>user\\nWhy is the sky blue?<end_of_turn>\\n<start_of_turn>model\\n"',
    'msg="evaluating already loaded" model=/usr/share/ollama/.ollama/models/blobs/sha256-e8ad13eff07a78d89926e9e8b88231',
    'msg="loaded runners" count=1',
    'msg="cache hit" total=512 cached=488 prompt=24 used=488 remaining=24',
    'msg="looking for compatible GPUs"',
]
KERNEL = [
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024",
    "nvidia-uvm: Loaded the UVM driver, major device number 235.",
    "audit: type=1400 audit(1732946700.123:456): apparmor=\"STATUS\" operation=\"profile_load\" profile=\"unconfined\" name=\"docker-default\"",
    "br-4c1d2e3f4a5b: port 1(veth1a2b3c4) entered forwarding state",
    "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
    "[UFW BLOCK] IN=eth0 OUT= MAC=00:16:3e:aa:bb:cc SRC=203.0.113.7 DST=10.0.0.5 LEN=40 PROTO=TCP SPT=44321 DPT=23",
]
SYSTEMD = [
    "Started ollama.service - Ollama Service.",
    "Starting logrotate.service - Rotate log files...",
    "logrotate.service: Deactivated successfully.",
    "Finished logrotate.service - Rotate log files.",
    "session-4.scope: Consumed 1.234s CPU time.",
]


def read_sample(name):
    with open(os.path.join(SAMPLES, name), encoding="utf-8", errors="replace") as f:
        return [JOURNALD.sub("", line.rstrip("\r\n"), count=1) for line in f]


def words_from_samples():
    """Words of the free prose in the samples (model output, prompts): lines without `:`, `=` or `|`."""
    words = set()
    for name in sorted(os.listdir(SAMPLES)):
        if name.endswith(".log"):
            for line in read_sample(name):
                if not any(c in line for c in ":=|"):
                    words.update(w for w in line.split() if w.isalpha())
    return sorted(words)


class Clock:
    """journald timestamps that advance a second every few lines."""

    def __init__(self, rng):
        self.rng = rng
        self.t = 0
        self.countdown = 0
        self.stamp = ""

    def next(self):
        if self.countdown <= 0:
            self.t += 1
            self.countdown = self.rng.randint(5, 40)
            t = self.t
            s, m, h, d = t % 60, (t // 60) % 60, (6 + t // 3600) % 24, 1 + (t // 86400) % 28
            mon = MONTHS[(10 + (t // (86400 * 28))) % 12]
            self.stamp = f"{mon} {d:2d} {h:02d}:{m:02d}:{s:02d}"
            self.year_date = f"2025/{(10 + (t // (86400 * 28))) % 12 + 1:02d}/{d:02d}"
            self.hms = f"{h:02d}:{m:02d}:{s:02d}"
            self.iso = f"2025-{(10 + (t // (86400 * 28))) % 12 + 1:02d}-{d:02d}T{h:02d}:{m:02d}:{s:02d}"
        self.countdown -= 1
        return self.stamp


def gin(rng, clock):
    status = rng.choice([200, 200, 200, 200, 200, 404, 500])
    dur = rng.choice([f"{rng.uniform(10, 999):.3f}µs", f"{rng.uniform(1, 999):.6f}ms", f"{rng.uniform(1, 60):.9f}s"])
    ip = rng.choice(["127.0.0.1", "172.17.0.1", "192.168.1.23", "10.0.0.5"])
    return f"[GIN] {clock.year_date} - {clock.hms} | {status} | {dur:>14} | {ip:>15} | {rng.choice(METHODS)} {rng.choice(ROUTES)}"


def slog(rng, clock, level="INFO"):
    ms = rng.randint(0, 999)
    src = rng.choice(["server.go:632", "sched.go:509", "routes.go:1288", "images.go:1123", "runner.go:683"])
    return f"time={clock.iso}.{ms:03d}Z level={level} source={src} {rng.choice(SLOG_CHATTER)}"


def journald(rng, size, out):
    loads = [(read_sample(name), ident) for name, ident in LOAD_SAMPLES]
    words = words_from_samples()
    clock = Clock(rng)
    written = 0
    next_load = rng.randint(200_000, 3_500_000)
    buf = []
    buffered = 0
    while written < size:
        stamp = clock.next()
        if written >= next_load:
            block, ident = rng.choice(loads)
            pid = rng.randint(1000, 99999)
            for payload in block:
                buf.append(f"{stamp} gpuhost {ident}[{pid}]: {payload}\n")
                buffered += len(buf[-1])
            next_load = written + buffered + rng.randint(2_500_000, 4_500_000)
        else:
            r = rng.random()
            if r < 0.55:
                line = f"{stamp} gpuhost ollama[1234]: {gin(rng, clock)}"
            elif r < 0.80:
                line = f"{stamp} gpuhost ollama[1234]: {slog(rng, clock, rng.choice(['INFO', 'INFO', 'DEBUG']))}"
            elif r < 0.86:
                line = f"{stamp} gpuhost ollama[1234]: " + "." * rng.randint(1, 98)
            elif r < 0.92:
                line = f"{stamp} gpuhost kernel: {rng.choice(KERNEL)}"
            elif r < 0.95:
                line = f"{stamp} gpuhost systemd[1]: {rng.choice(SYSTEMD)}"
            else:
                # Free text the model printed or a prompt echoed by a debug build.
                line = f"{stamp} gpuhost ollama[1234]: " + " ".join(rng.choices(words, k=rng.randint(3, 30)))
            line += "\n"
            buf.append(line)
            buffered += len(line)
        if buffered >= 1 << 20:
            written += flush(out, buf, size - written)
            buffered = 0
    flush(out, buf, size - written)


LLAMA_LAYER_LINE = "load_tensors: layer {i:3d} assigned to device {dev}, is_swa = {swa}"
PRINT_INFO = [
    "print_info: file format = GGUF V3 (latest)",
    "print_info: file type   = Q4_K - Medium",
    "print_info: file size   = 4.58 GiB (4.89 BPW)",
    "print_info: arch             = llama",
    "print_info: vocab_only       = 0",
    "print_info: n_ctx_train      = 131072",
    "print_info: n_embd           = 4096",
    "print_info: n_layer          = 32",
    "print_info: n_head           = 32",
    "print_info: n_head_kv        = 8",
    "print_info: n_rot            = 128",
    "print_info: n_swa            = 0",
    "print_info: n_embd_head_k    = 128",
    "print_info: n_gqa            = 4",
    "print_info: f_norm_rms_eps   = 1.0e-05",
    "print_info: n_ff             = 14336",
    "print_info: rope type        = 0",
    "print_info: freq_base_train  = 500000.0",
    "print_info: model type       = 8B",
    "print_info: model params     = 8.03 B",
    "print_info: general.name     = Meta Llama 3.1 8B Instruct",
    "print_info: BOS token        = 128000 '<|begin_of_text|>'",
    "print_info: max token length = 256",
]
LOAD_TAIL = [
    "load_tensors: loading model tensors, this can take a while... (mmap = true)",
    "load_tensors: offloading 32 repeating layers to GPU",
    "load_tensors: offloading output layer to GPU",
    "load_tensors: offloaded 33/33 layers to GPU",
    "load_tensors:        CUDA0 model buffer size =  4403.49 MiB",
    "load_tensors:   CPU_Mapped model buffer size =   281.81 MiB",
    "llama_context: constructing llama_context",
    "llama_context: n_seq_max     = 1",
    "llama_context: n_ctx         = 8192",
    "llama_context: n_ctx_per_seq = 8192",
    "llama_context: n_batch       = 2048",
    "llama_context: n_ubatch      = 512",
    "llama_context: causal_attn   = 1",
    "llama_context: flash_attn    = 0",
    "llama_context: freq_base     = 500000.0",
    "llama_context:  CUDA_Host  output buffer size =     0.49 MiB",
    "llama_kv_cache_unified: kv_size = 8192, type_k = 'f16', type_v = 'f16', n_layer = 32, can_shift = 1, padding = 32",
    "llama_kv_cache_unified:      CUDA0 KV buffer size =  1024.00 MiB",
    "llama_kv_cache_unified: KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, V (f16):  512.00 MiB",
    "llama_context:      CUDA0 compute buffer size =   560.00 MiB",
    "llama_context:  CUDA_Host compute buffer size =    24.01 MiB",
    "llama_context: graph nodes  = 1094",
    "llama_context: graph splits = 2",
    "common_init_from_params: setting dry_penalty_last_n to ctx_size = 8192",
    "srv          init: initializing slots, n_slots = 1",
    "slot         init: id  0 | task -1 | new slot n_ctx_slot = 8192",
    "main: model loaded",
    "main: server is listening on http://127.0.0.1:8080 - starting the main loop",
]
SLOT_LINES = [
    "srv  update_slots: all slots are idle",
    "srv  params_from_: Chat format: Content-only",
    "slot launch_slot_: id  0 | task {t} | processing task",
    "slot update_slots: id  0 | task {t} | new prompt, n_ctx_slot = 8192, n_keep = 0, n_prompt_tokens = {n}",
    "slot update_slots: id  0 | task {t} | kv cache rm [{n}, end)",
    "slot update_slots: id  0 | task {t} | prompt processing progress, n_past = {n}, n_tokens = {n}, progress = 1.000000",
    "slot update_slots: id  0 | task {t} | prompt done, n_past = {n}, n_tokens = {n}",
    "slot      release: id  0 | task {t} | stop processing: n_past = {n}, truncated = 0",
    "slot print_timing: id  0 | task {t} | ",
    "prompt eval time =     {n}.33 ms /    22 tokens (    6.38 ms per token,   156.69 tokens per second)",
    "       eval time =    {n}.81 ms /   412 tokens (   11.62 ms per token,    86.04 tokens per second)",
    "      total time =    {n}.14 ms /   434 tokens",
    "srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 200",
]


def llama(rng, size, out):
    samples = [read_sample(name) for name in ("001-kaggle-t4-llama31-8b.log", "042-llama-server-fit-breakdown-2gpu-5090-3090.log", "026-journald-container-2gpu-kv-compute-actual.log")]
    written = 0
    buf = []
    buffered = 0
    task = 0
    next_load = 0
    while written < size:
        if written >= next_load:
            block = []
            block += PRINT_INFO
            n_layer = rng.choice([32, 40, 48, 80])
            for i in range(n_layer + 1):
                dev = "CUDA0" if i < n_layer // 2 else rng.choice(["CUDA0", "CUDA1"])
                block.append(LLAMA_LAYER_LINE.format(i=i, dev=dev, swa=0))
            block += LOAD_TAIL
            block += rng.choice(samples)
            for line in block:
                buf.append(line + "\n")
                buffered += len(line) + 1
            next_load = written + buffered + rng.randint(600_000, 1_400_000)
        else:
            task += 1
            n = rng.randint(10, 8000)
            for tmpl in SLOT_LINES:
                line = tmpl.format(t=task, n=n) + "\n"
                buf.append(line)
                buffered += len(line)
        if buffered >= 1 << 20:
            written += flush(out, buf, size - written)
            buffered = 0
    flush(out, buf, size - written)


MEMORY_LINE = re.compile(r"MiB|GiB| MB|buffer size|VRAM|memory|offload")


def journald_noise(rng, clock, words, stamp):
    """One line of journald noise as `journald` writes it, with the newline."""
    r = rng.random()
    if r < 0.55:
        line = f"{stamp} gpuhost ollama[1234]: {gin(rng, clock)}"
    elif r < 0.80:
        line = f"{stamp} gpuhost ollama[1234]: {slog(rng, clock, rng.choice(['INFO', 'INFO', 'DEBUG']))}"
    elif r < 0.86:
        line = f"{stamp} gpuhost ollama[1234]: " + "." * rng.randint(1, 98)
    elif r < 0.92:
        line = f"{stamp} gpuhost kernel: {rng.choice(KERNEL)}"
    elif r < 0.95:
        line = f"{stamp} gpuhost systemd[1]: {rng.choice(SYSTEMD)}"
    else:
        line = f"{stamp} gpuhost ollama[1234]: " + " ".join(rng.choices(words, k=rng.randint(3, 30)))
    return line + "\n"


def log_files(root):
    """Every `.log` file under `root`, in a fixed order (paths sorted)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        found += [os.path.join(folder, name) for name in sorted(files) if name.endswith(".log")]
    return sorted(found)


def mix(rng, size, out, logs=SAMPLES):
    """Every `.log` file under `logs` (the samples by default) as it is (any runtime, any collector prefix)
    between journald noise, a whole log whenever fewer than 1 line in 60 so far is a memory line of a log (one
    holding a memory word; the noise's own, such as `runner.vram="6.2 GiB"` in slog chatter, are not counted)."""
    samples = []
    for path in log_files(logs):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.rstrip("\r\n") + "\n" for line in f]
        samples.append((lines, sum(1 for line in lines if MEMORY_LINE.search(line))))
    if not samples:
        sys.exit(f"gen.py: no .log file under {logs}")
    words = words_from_samples()
    clock = Clock(rng)
    written = 0
    buf = []
    buffered = 0
    total = memory = 0
    while written < size:
        if memory * 60 < total:
            lines, in_it = rng.choice(samples)
            buf.extend(lines)
            buffered += sum(len(line) for line in lines)
            total += len(lines)
            memory += in_it
        else:
            line = journald_noise(rng, clock, words, clock.next())
            buf.append(line)
            buffered += len(line)
            total += 1
        if buffered >= 1 << 20:
            written += flush(out, buf, size - written)
            buffered = 0
    flush(out, buf, size - written)


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def longlines(rng, size, out):
    words = words_from_samples()
    written = 0
    n = 0
    while written < size:
        n += 1
        length = int(rng.choice([8 << 10, 64 << 10, 256 << 10, 900 << 10, 1536 << 10]) * rng.uniform(0.8, 1.2))
        kind = rng.random()
        if kind < 0.4:
            head = f'time=2025-11-30T06:05:{n % 60:02d}.000Z level=DEBUG source=server.go:1034 msg="completion request" prompt="'
            body = []
            got = 0
            while got < length:
                w = rng.choice(words)
                body.append(w)
                got += len(w) + 1
            line = head + " ".join(body) + '"'
        elif kind < 0.7:
            # base64 image payload: no spaces, no anchors.
            chunk = "".join(rng.choices(B64, k=4096))
            line = '{"model":"llava","images":["' + chunk * (length // 4096 + 1) + '"]}'
        else:
            # Minified JSON with a memory anchor at the far end, so the anchor search runs to the end and the
            # regex runs on a long line.
            item = '{"name":"layer","size":"12.5 MiB","device":"CUDA0"},'
            line = '[' + item * (length // len(item)) + '] load_tensors:        CUDA0 model buffer size =  4403.49 MiB'
        data = (line + "\n").encode()
        out.write(data[: size - written] if written + len(data) > size else data)
        written += min(len(data), size - written)


def flush(out, buf, room):
    data = "".join(buf).encode()
    buf.clear()
    if len(data) > room:
        cut = data.rfind(b"\n", 0, room)
        out.write(data[: cut + 1] if cut >= 0 else data[:room])
        return room  # full: the caller stops
    out.write(data)
    return len(data)


def parse_size(text):
    text = text.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(float(text.rstrip("KMG")) * mult)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kind", choices=["journald", "llama", "longlines", "mix"])
    p.add_argument("size")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--logs", help="mix: the folder whose .log files go between the noise (default: sample-logs)")
    a = p.parse_args()
    rng = random.Random(f"{a.kind}-{a.seed}")
    size = parse_size(a.size)
    tmp = a.out + ".partial"
    with open(tmp, "wb") as out:
        if a.kind == "mix" and a.logs:
            mix(rng, size, out, a.logs)
        else:
            {"journald": journald, "llama": llama, "longlines": longlines, "mix": mix}[a.kind](rng, size, out)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    sys.exit(main())
