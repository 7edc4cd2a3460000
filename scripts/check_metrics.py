#!/usr/bin/env python3
"""`vramdiff -f --serve`: the /metrics exposition parsed by prometheus_client's OpenMetrics parser, and every
gauge equal to the figure of the same load's JSON line (stdout, --format jsonl).

Starts its own follower on a temporary log on loopback, appends LOG to it, reads the load's JSON line, fetches
/metrics and /loads, compares, and stops the follower it started (SIGTERM).

usage: check_metrics.py VRAMDIFF LOG
"""
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    binary, log = sys.argv[1], sys.argv[2]
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        followed = f"{tmp}/server.log"
        open(followed, "w").close()
        child = subprocess.Popen(
            [binary, "-f", "--format", "jsonl", "--fail-on", "never", "--serve", f"127.0.0.1:{port}", followed],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"VRAMDIFF_NO_MODEL_SEARCH": "1", "PATH": "/usr/bin:/bin"},
        )
        try:
            time.sleep(0.5)
            with open(followed, "ab") as out, open(log, "rb") as src:
                out.write(src.read())
            line = child.stdout.readline()
            if not line:
                raise SystemExit("no load reported")
            load = json.loads(line)
            url = f"http://127.0.0.1:{port}"
            with urllib.request.urlopen(f"{url}/metrics", timeout=10) as r:
                content_type = r.headers["Content-Type"]
                text = r.read().decode()
            with urllib.request.urlopen(f"{url}/loads", timeout=10) as r:
                served = [json.loads(l) for l in r.read().decode().splitlines()]
        finally:
            child.terminate()
            child.wait(timeout=30)
    assert content_type.startswith("application/openmetrics-text"), content_type
    samples = {}
    families = 0
    for family in text_string_to_metric_families(text):
        families += 1
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    model = load["model"]["architecture"]

    def gauge(metric, device):
        return samples[(f"vramdiff_{metric}_bytes", (("device", device), ("model", model)))]

    compared = 0
    for d in load["devices"]:
        for metric in ("estimated", "actual"):
            if d[metric] is not None:
                assert gauge(metric, d["device"]) == d[metric]["bytes"], (metric, d["device"])
                compared += 1
    for g in load["whatif"]["estimate"]["placement"]["gpus"]:
        assert gauge("planned", g["device"]) == g["allocation"]
        compared += 1
    offloaded = load["actual"]["offloaded_layers"]
    assert samples[("vramdiff_layers", (("model", model), ("on", "gpu")))] == offloaded
    assert samples[("vramdiff_layers", (("model", model), ("on", "cpu")))] == load["actual"]["total_layers"] - offloaded
    for f in load["findings"]:
        key = ("vramdiff_findings_total", (("code", f["code"]), ("severity", f["severity"])))
        assert samples[key] == 1, key
    assert samples[("vramdiff_loads_total", ())] == 1
    assert len(served) == 1 and served[0] == load, "/loads is the same JSON line"
    print(f"/metrics: {families} families, {len(samples)} samples parsed by prometheus_client; "
          f"{compared} byte gauges, the layers and {len(load['findings'])} finding counters equal the JSON line")


if __name__ == "__main__":
    main()
