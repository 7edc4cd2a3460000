#!/usr/bin/env python3
"""Oracle suite: run the REAL llama.cpp server (embedded in the `xllamacpp` wheel, llama.cpp build b11549, CPU-only)
on the tiny models of models.py under many settings, and keep its logs unedited, so vramdiff's estimates can be
checked against what llama.cpp itself allocates and prints.

    bash scripts/oracle/setup.sh /tmp/oracle-venv
    /tmp/oracle-venv/bin/python scripts/oracle/run.py OUT_DIR [--quick] [--only NAME...] [--list]

Writes OUT_DIR/models/*.gguf, OUT_DIR/logs/<model>--<config>.log (the server's stderr and stdout exactly as it
printed them) and OUT_DIR/manifest.json (one entry per run: model, file, config, every setting passed, exit
status, duration, build). Each run is its own subprocess under a timeout, so a crash or hang of llama.cpp cannot
take the suite down: it starts xllamacpp.Server with verbosity 4 on a free loopback port, sends one short
/completion request (n_predict 4), and deletes the server, which prints the exit memory breakdown.
--only keeps the runs whose model or model--config name is given.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts

XLLAMACPP_PIN = "2026.10.11549"
TIMEOUT_S = 60
PROMPT = "hello world"

# ggml's OpenMP threads spin while they wait; on a 2-core machine that fights the server's HTTP threads and slows
# some models' decode ~100x. Passive waiting changes no allocation and no logged size.
WORKER_ENV = dict(os.environ, OMP_WAIT_POLICY="passive")

# Settings a run may pass; any left out keeps xllamacpp's CommonParams default, written to the manifest as such.
DEFAULTS = {
    "n_ctx": 0,  # 0 = the model's n_ctx_train
    "n_parallel": 1,  # CommonParams default; -1 = llama-server's `-np` default "auto"
    "kv_unified": False,
    "cache_type_k": "f16",
    "cache_type_v": "f16",
    "n_ubatch": 512,
    "n_batch": 2048,
    "flash_attn": "auto",  # auto / on / off (llama_flash_attn_type)
    "mmap": True,  # False = load_mode NONE (read into a plain CPU buffer)
    "swa_full": False,
    "fit": True,  # fit_params (llama-server `--fit`, on by default)
    "fit_target_mib": 1024,  # fit_params_target, MiB of host memory to leave free
    "fit_min_ctx": 4096,  # fit_params_min_ctx
    "n_threads": 2,
    "warmup": True,
    "verbosity": 4,  # llama-server prints its memory lines only at 4; 3 is its default
}

# The --fit run: a target this close to the host's total memory leaves no room for the requested context, so
# llama.cpp's fit step shrinks n_ctx (to no less than fit_min_ctx). It is set relative to the host's total
# memory as llama.cpp reads it, so that it forces a reduction on any machine; the manifest keeps the MiB used.
FIT_HEADROOM_MIB = 16  # total - target: what the fitted model+context+compute may use


def run(model, config, quick=False, expect="ok", **settings):
    return {"model": model, "config": config, "quick": quick, "expect": expect, "settings": settings}


def runs():
    r = []
    q = True  # in the --quick subset
    # ---- llama-gqa: the levers ----
    g = "llama-gqa"
    r.append(run(g, "baseline", q, n_ctx=2048))
    for c in (1024, 4096, 8192):
        r.append(run(g, f"ctx{c}", n_ctx=c))
    for kt, vt, fa in (("q8_0", "q8_0", "on"), ("q4_0", "q4_0", "on"), ("q8_0", "f16", "off"),
                       ("q8_0", "q8_0", "off"), ("q8_0", "q8_0", "auto"), ("q4_0", "f16", "auto")):
        # llama.cpp refuses a quantized V cache without flash attention: that run is expected to fail.
        r.append(run(g, f"k{kt}-v{vt}-fa{fa}", kt == vt == "q8_0" and fa == "on",
                     "fail" if vt != "f16" and fa == "off" else "ok",
                     n_ctx=4096, cache_type_k=kt, cache_type_v=vt, flash_attn=fa))
    for ub in (128, 256):
        r.append(run(g, f"ub{ub}", n_ctx=4096, n_ubatch=ub))
    r.append(run(g, "ub256-b256", n_ctx=4096, n_ubatch=256, n_batch=256))
    r.append(run(g, "ub512-b1024", n_ctx=4096, n_ubatch=512, n_batch=1024))
    r.append(run(g, "ub1024-b1024", n_ctx=4096, n_ubatch=1024, n_batch=1024))
    # flash_attn auto resolves to enabled on this CPU build (ctx4096 / ctx8192 / ub128 are the "on" side).
    r.append(run(g, "faoff", n_ctx=4096, flash_attn="off"))
    r.append(run(g, "faoff-ctx8192", n_ctx=8192, flash_attn="off"))
    r.append(run(g, "faoff-ub128", n_ctx=4096, flash_attn="off", n_ubatch=128))
    r.append(run(g, "faon-ctx8192", n_ctx=8192, flash_attn="on"))
    for np_ in (2, 4):
        r.append(run(g, f"np{np_}-split", n_ctx=4096, n_parallel=np_, kv_unified=False))
        r.append(run(g, f"np{np_}-unified", n_ctx=4096, n_parallel=np_, kv_unified=True))
    r.append(run(g, "np1-unified", n_ctx=4096, n_parallel=1, kv_unified=True))
    # whatif --ctx 2048 from np4-split (1024 a slot) must predict this run (2048 a slot).
    r.append(run(g, "np4-split-ctx8192", n_ctx=8192, n_parallel=4, kv_unified=False))
    r.append(run(g, "np-auto", True, n_ctx=4096, n_parallel=-1))
    r.append(run(g, "np-auto-ctx-default", n_ctx=0, n_parallel=-1))
    r.append(run(g, "nommap", True, n_ctx=4096, mmap=False))
    r.append(run(g, "fit-off", n_ctx=4096, fit=False))
    # llama-server's default verbosity: none of its memory lines, which vramdiff must say.
    r.append(run(g, "verbosity-3", True, n_ctx=2048, verbosity=3))
    # --fit only shrinks a context the user did not set: n_ctx 0 (the model's 8192).
    r.append(run(g, "fit-reduce", True, n_ctx=0, fit=True, fit_target_mib=f"total-{FIT_HEADROOM_MIB}",
                 fit_min_ctx=1024))
    r.append(run(g, "fit-user-ctx", n_ctx=8192, fit=True, fit_target_mib=f"total-{FIT_HEADROOM_MIB}",
                 fit_min_ctx=1024))
    # ---- gemma3: sliding window 512, 5 local : 1 global ----
    g = "gemma3"
    r.append(run(g, "baseline", q, n_ctx=4096))
    for c in (1024, 2048, 8192, 16384):
        r.append(run(g, f"ctx{c}", n_ctx=c))
    for ub in (128, 256, 1024):
        r.append(run(g, f"ub{ub}", n_ctx=4096, n_ubatch=ub, n_batch=max(ub, 2048)))
    r.append(run(g, "ub256-ctx1024", n_ctx=1024, n_ubatch=256))
    r.append(run(g, "np2-split", n_ctx=4096, n_parallel=2, kv_unified=False))
    # whatif --parallel 2 from the baseline (4096 a slot) must predict this run (4096 a slot, two slots).
    r.append(run(g, "np2-split-ctx8192", n_ctx=8192, n_parallel=2, kv_unified=False))
    r.append(run(g, "np4-split", True, n_ctx=8192, n_parallel=4, kv_unified=False))
    r.append(run(g, "np2-unified", n_ctx=4096, n_parallel=2, kv_unified=True))
    r.append(run(g, "np4-unified", n_ctx=8192, n_parallel=4, kv_unified=True))
    r.append(run(g, "np4-unified-ub256", n_ctx=8192, n_parallel=4, kv_unified=True, n_ubatch=256))
    r.append(run(g, "np-auto", n_ctx=8192, n_parallel=-1))
    r.append(run(g, "swa-full", True, n_ctx=4096, swa_full=True))
    r.append(run(g, "swa-full-np2-split", n_ctx=4096, swa_full=True, n_parallel=2, kv_unified=False))
    r.append(run(g, "kq8_0-vq8_0-faon", n_ctx=4096, cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on"))
    r.append(run(g, "faoff", n_ctx=4096, flash_attn="off"))
    r.append(run(g, "fit-reduce", n_ctx=0, fit=True, fit_target_mib=f"total-{FIT_HEADROOM_MIB}", fit_min_ctx=2048))
    # ---- the other architectures: baseline and a few levers ----
    g = "llama-mha"
    r.append(run(g, "baseline", q, n_ctx=2048))
    r.append(run(g, "np2-unified", n_ctx=4096, n_parallel=2, kv_unified=True))
    r.append(run(g, "kq8_0-vq8_0-faon", n_ctx=4096, cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on"))
    r.append(run(g, "nommap", n_ctx=2048, mmap=False))
    g = "qwen2"
    r.append(run(g, "baseline", q, n_ctx=2048))
    r.append(run(g, "ctx4096-faoff", n_ctx=4096, flash_attn="off"))
    r.append(run(g, "nommap", n_ctx=2048, mmap=False))
    g = "qwen3moe"
    r.append(run(g, "baseline", q, n_ctx=2048))
    r.append(run(g, "ub128", n_ctx=2048, n_ubatch=128))
    r.append(run(g, "np2-split", n_ctx=4096, n_parallel=2, kv_unified=False))
    g = "deepseek2"
    r.append(run(g, "baseline", q, n_ctx=2048))
    # MLA has one cache, K: llama.cpp refuses a K type that differs from V's, so both are set.
    r.append(run(g, "ctx4096-kq8_0-vq8_0", n_ctx=4096, cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on"))
    r.append(run(g, "np2-split", n_ctx=4096, n_parallel=2, kv_unified=False))
    g = "lfm2"
    r.append(run(g, "baseline", q, n_ctx=2048))
    r.append(run(g, "np2-split", n_ctx=4096, n_parallel=2, kv_unified=False))
    r.append(run(g, "np4-unified", n_ctx=4096, n_parallel=4, kv_unified=True))
    return r


# ---------------------------------------------------------------- worker (one run, in its own process)

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(spec_path):
    """Start the server as the spec says, send one completion, shut it down. llama.cpp writes its log to this
    process's stderr; this function prints nothing itself, it writes its own findings to spec['result']."""
    import xllamacpp as x

    spec = json.loads(Path(spec_path).read_text())
    s = spec["settings"]
    ggml = {"f16": x.ggml_type.GGML_TYPE_F16, "q8_0": x.ggml_type.GGML_TYPE_Q8_0,
            "q4_0": x.ggml_type.GGML_TYPE_Q4_0, "f32": x.ggml_type.GGML_TYPE_F32}
    fa = {"auto": x.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_AUTO,
          "on": x.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED,
          "off": x.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_DISABLED}
    p = x.CommonParams()
    p.model.path = spec["model_path"]
    p.verbosity = s["verbosity"]
    p.endpoint_metrics = False
    p.hostnames = ["127.0.0.1"]
    p.port = spec["port"]
    p.n_predict = 4
    p.n_ctx = s["n_ctx"]
    p.n_parallel = s["n_parallel"]
    p.kv_unified = s["kv_unified"]
    p.cache_type_k = ggml[s["cache_type_k"]]
    p.cache_type_v = ggml[s["cache_type_v"]]
    p.n_ubatch = s["n_ubatch"]
    p.n_batch = s["n_batch"]
    p.flash_attn_type = fa[s["flash_attn"]]
    p.load_mode = x.llama_load_mode.LLAMA_LOAD_MODE_MMAP if s["mmap"] else x.llama_load_mode.LLAMA_LOAD_MODE_NONE
    p.swa_full = s["swa_full"]
    p.fit_params = s["fit"]
    target = p.fit_params_target
    p.fit_params_target = [s["fit_target_mib"] * 1024 * 1024] * len(target)
    p.fit_params_min_ctx = s["fit_min_ctx"]
    p.cpuparams.n_threads = s["n_threads"]
    p.cpuparams_batch.n_threads = s["n_threads"]
    p.warmup = s["warmup"]

    result = {"server_started": False, "completion_ok": False}
    t0 = time.monotonic()
    try:
        server = x.Server(p)
    except Exception as e:  # llama.cpp has logged why; keep Python's traceback out of the log
        result["server_error"] = repr(e)
        Path(spec["result"]).write_text(json.dumps(result))
        sys.stderr.flush()
        os._exit(3)
    result["server_started"] = True
    result["listening_address"] = server.listening_address
    result["start_s"] = round(time.monotonic() - t0, 3)
    try:
        body = json.dumps({"prompt": PROMPT, "n_predict": 4, "temperature": 0, "seed": 42}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{spec['port']}/completion", data=body,
                                     headers={"Content-Type": "application/json"})
        resp = json.loads(urllib.request.urlopen(req, timeout=30).read())
        result["completion_ok"] = True
        result["tokens_evaluated"] = resp.get("tokens_evaluated")
        result["tokens_predicted"] = resp.get("tokens_predicted")
    except Exception as e:  # keep going: the shutdown still prints the memory breakdown
        result["completion_error"] = repr(e)
    Path(spec["result"]).write_text(json.dumps(result))
    del server
    Path(spec["result"]).write_text(json.dumps(dict(result, shutdown_ok=True)))


# ---------------------------------------------------------------- driver

def host_total_mib():
    import xllamacpp as x

    return sum(d["memory_total"] for d in x.get_device_info() if d["name"] == "CPU") // (1024 * 1024)


def parse_log(text):
    """A few figures from the log for the manifest (the logs themselves stay as printed)."""
    out = {}
    m = re.search(r"build_info: (\S+)", text)
    if m:
        out["log_build_info"] = m.group(1)
    m = re.search(r"common_params_print_info: (build .*)", text)
    if m:
        out["log_build_line"] = m.group(1).strip()
    for key in ("n_ctx", "n_ctx_seq", "n_seq_max", "n_ubatch", "n_batch", "flash_attn", "kv_unified"):
        m = re.search(rf"llama_context: {key}\s+= (\S+)", text)
        if m:
            out[key] = m.group(1)
    m = re.search(r"context size reduced from (\d+) to (\d+)", text)
    out["fit_ctx_reduced"] = [int(m.group(1)), int(m.group(2))] if m else None
    out["memory_breakdown_lines"] = len(re.findall(r"common_memory_breakdown_print", text))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--quick", action="store_true", help="only the ~10 runs of the quick subset")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="model names or model--config names to run")
    ap.add_argument("--list", action="store_true", help="print the runs and exit")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S)
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._worker:
        worker(a._worker)
        return 0

    import xllamacpp
    import gguf
    import numpy
    import models

    selected = []
    for r in runs():
        rid = f"{r['model']}--{r['config']}"
        if a.quick and not r["quick"]:
            continue
        if a.only and r["model"] not in a.only and rid not in a.only:
            continue
        selected.append(r)
    if a.list:
        for r in selected:
            print(f"{r['model']}--{r['config']}  {json.dumps(r['settings'])}")
        return 0

    out = Path(a.out_dir)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    paths = models.write(out / "models", sorted({r["model"] for r in selected}))
    total_mib = host_total_mib()
    version = xllamacpp.__version__
    build = "b" + version.rsplit(".", 1)[-1]
    entries = []
    t_suite = time.monotonic()
    for r in selected:
        rid = f"{r['model']}--{r['config']}"
        settings = dict(DEFAULTS, **r["settings"])
        if isinstance(settings["fit_target_mib"], str):  # "total-N": relative to the host's total memory
            settings["fit_target_mib"] = total_mib - int(settings["fit_target_mib"].split("-")[1])
        log_path = out / "logs" / f"{rid}.log"
        spec_path = out / "logs" / f".{rid}.spec.json"
        res_path = out / "logs" / f".{rid}.result.json"
        res_path.unlink(missing_ok=True)
        spec = {"model_path": str(paths[r["model"]]), "port": free_port(), "settings": settings,
                "result": str(res_path)}
        # A run whose log comes back empty although the server answered (seen once in CI on a loaded 2-core
        # machine: 0 bytes of log, status ok, a completion served) is run again, at most twice.
        for _attempt in range(3):
            spec["port"] = free_port()
            spec_path.write_text(json.dumps(spec))
            t0 = time.monotonic()
            with open(log_path, "wb") as log:
                proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "x", "--_worker", str(spec_path)],
                                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True, env=WORKER_ENV)
                try:
                    rc = proc.wait(timeout=a.timeout)
                    status = "ok" if rc == 0 else ("crashed" if rc < 0 else "failed")
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    rc = proc.wait()
                    status = "timeout"
            dt = time.monotonic() - t0
            worker_result = json.loads(res_path.read_text()) if res_path.exists() else {}
            spec_path.unlink(missing_ok=True)
            res_path.unlink(missing_ok=True)
            if status == "ok" and not worker_result.get("completion_ok"):
                status = "no-completion"
            if r["expect"] == "fail" and status == "failed" and worker_result.get("server_error"):
                status = "expected-fail"
            text = log_path.read_text(errors="replace")
            if text.strip() or status != "ok":
                break
            print(f"{rid}: empty log, running it again", file=sys.stderr)
        entry = {
            "run": rid,
            "model": r["model"],
            "model_file": f"models/{paths[r['model']].name}",
            "config": r["config"],
            "quick": r["quick"],
            "expect": r["expect"],
            "settings": settings,
            "status": status,
            "exit_code": rc,
            "duration_s": round(dt, 2),
            "log": f"logs/{rid}.log",
            "xllamacpp_version": version,
            "llama_cpp_build": build,
            "completion": {k: v for k, v in worker_result.items() if k not in ("listening_address",)},
            "from_log": parse_log(text),
        }
        if r["settings"].get("fit_target_mib"):
            entry["host_total_mib"] = total_mib
        entries.append(entry)
        print(f"{status:>13}  {dt:5.2f}s  {rid}", flush=True)

    manifest = {
        "generator": "scripts/oracle/run.py",
        "command": f"python scripts/oracle/run.py {a.out_dir}" + (" --quick" if a.quick else "")
                   + (" --only " + " ".join(a.only) if a.only else ""),
        "packages": {"xllamacpp": version, "gguf": getattr(gguf, "__version__", None) or _dist_version("gguf"),
                     "numpy": numpy.__version__},
        "llama_cpp_build": build,
        "host_total_mib": total_mib,
        "request": {"endpoint": "/completion", "prompt": PROMPT, "n_predict": 4, "temperature": 0, "seed": 42},
        "verbosity": 4,
        "timeout_s": a.timeout,
        "worker_env": {"OMP_WAIT_POLICY": "passive"},
        "defaults": DEFAULTS,
        "runs": entries,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    bad = [e["run"] for e in entries if e["status"] not in ("ok", "expected-fail")]
    print(f"{len(entries)} runs in {time.monotonic() - t_suite:.1f}s, {len(bad)} not ok{': ' if bad else ''}"
          + " ".join(bad))
    return 1 if bad else 0


def _dist_version(name):
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    sys.exit(main())
