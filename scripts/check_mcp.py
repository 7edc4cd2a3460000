#!/usr/bin/env python3
"""`vramdiff mcp` driven by the official MCP Python SDK (`mcp` on PyPI), as an agent's client starts it: over
stdio, list the tools, call each on bundled samples (and inspect_model on a loopback HTTP URL this script
serves itself, with range requests), and check every result's structured content equals the CLI's JSON for
the same input; malformed calls must be MCP errors, and the server must answer the next call after each.

    python scripts/check_mcp.py target/debug/vramdiff
"""

import asyncio
import functools
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
FOUNDING = "sample-logs/founding-k80-gemma3-12b.log"
FOUNDING_SMI = "sample-logs/founding-k80-gemma3-12b.nvidia-smi.txt"
MODELS = ROOT / "tests/data/oracle/b11549/models"
ENV = dict(os.environ, VRAMDIFF_NO_MODEL_SEARCH="1")


def cli(binary, *args, cwd=ROOT):
    """The CLI's JSON for the same input (exit 0, or 1 for a finding at --fail-on)."""
    out = subprocess.run([binary, *args], cwd=cwd, env=ENV, capture_output=True, check=False)
    assert out.returncode in (0, 1), f"vramdiff {args}: {out.stderr.decode()}"
    return json.loads(out.stdout)


def cli_stderr(binary, *args):
    return subprocess.run([binary, *args], cwd=ROOT, env=ENV, capture_output=True, check=False).stderr.decode()


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with `Range: bytes=A-B` answered 206, as a model host does (http.server has no ranges)."""

    def log_message(self, *args):
        pass

    def send_head(self):
        spec = self.headers.get("Range")
        path = Path(self.translate_path(self.path))
        if not spec or not path.is_file():
            return super().send_head()
        data = path.read_bytes()
        first, _, last = spec.removeprefix("bytes=").partition("-")
        first = int(first)
        last = min(int(last) if last else len(data) - 1, len(data) - 1)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
        self.send_header("Content-Length", str(last - first + 1))
        self.end_headers()
        self.body = data[first : last + 1]
        return None

    def do_GET(self):
        self.body = None
        f = self.send_head()
        if self.body is not None:
            self.wfile.write(self.body)
        elif f:
            try:
                self.copyfile(f, self.wfile)
            finally:
                f.close()


def serve_models():
    handler = functools.partial(RangeHandler, directory=str(MODELS))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def structured(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}: {result.content}"
    summary = result.content[0].text
    assert summary, f"{tool}: no summary"
    assert json.loads(result.content[1].text) == result.structured_content
    return result.structured_content


async def refused(session, tool, arguments, expected):
    try:
        result = await session.call_tool(tool, arguments)
    except MCPError as e:
        assert expected in e.message, f"{tool} {arguments}: {e.message!r} lacks {expected!r}"
        return e.message
    raise AssertionError(f"{tool} {arguments}: no MCP error but {result}")


async def check(binary):
    params = StdioServerParameters(command=binary, args=["mcp"], cwd=str(ROOT), env=ENV)
    checked = 0
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        info = await session.initialize()
        assert info.server_info.name == "vramdiff", info
        tools = (await session.list_tools()).tools
        assert [t.name for t in tools] == ["analyze_log", "whatif", "inspect_model", "doctor"], tools
        for tool in tools:
            for name, prop in tool.input_schema["properties"].items():
                assert len(prop.get("description", "")) > 20, f"{tool.name}.{name}: no description"

        # analyze_log: a path, then the same log and capture pasted (the CLI on them as files in a folder).
        got = await structured(session, "analyze_log", {"path": FOUNDING})
        assert got == cli(binary, "--format", "json", "--fail-on", "never", FOUNDING)
        checked += 1
        log, smi = (ROOT / FOUNDING).read_text(), (ROOT / FOUNDING_SMI).read_text()
        got = await structured(session, "analyze_log", {"text": log, "nvidia_smi": smi})
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "pasted.log").write_text(log)
            Path(folder, "gpu-capture.txt").write_text(smi)
            want = cli(binary, "--format", "json", "--smi", "gpu-capture.txt", "pasted.log", cwd=folder)
        assert got == want
        assert got["loads"][0]["observed"], "the pasted capture was not used"
        checked += 1
        # Every bundled llama.cpp and Ollama sample the CLI reads, by path.
        for sample in ["sample-logs/001-kaggle-t4-llama31-8b.log", "sample-logs/042-llama-server-fit-breakdown-2gpu-5090-3090.log"]:
            got = await structured(session, "analyze_log", {"path": sample})
            assert got == cli(binary, "--format", "json", "--fail-on", "never", sample), sample
            checked += 1

        # whatif: changes, then the largest context.
        got = await structured(session, "whatif", {"path": FOUNDING, "gpu_count": 1, "ctx": 8192})
        assert got == cli(binary, "whatif", "--format", "json", "--gpu-count", "1", "--ctx", "8192", FOUNDING)
        got = await structured(session, "whatif", {"path": FOUNDING, "max_ctx": True, "kv_type": "q8_0"})
        assert got == cli(binary, "whatif", "--format", "json", "--max-ctx", "--kv-type", "q8_0", FOUNDING)
        checked += 2

        # inspect_model: a file, and the same files over loopback HTTP (header only, range requests).
        server = serve_models()
        try:
            for model in sorted(MODELS.glob("*.gguf")):
                local = await structured(session, "inspect_model", {"model": str(model.relative_to(ROOT))})
                assert local == cli(binary, "inspect", "--format", "json", str(model.relative_to(ROOT)))
                url = f"http://127.0.0.1:{server.server_address[1]}/{model.name}"
                remote = await structured(session, "inspect_model", {"model": url})
                assert remote == cli(binary, "inspect", "--format", "json", "--no-cache", url), model.name
                assert remote["architecture"] == local["architecture"] and remote["layers"] == local["layers"]
                checked += 2
        finally:
            server.shutdown()

        # doctor on a given log, no GPU tool, no Ollama: the CLI's redacted JSON.
        log = "sample-logs/708-llama-server-cuda-rtx3090-qwen36-27b-fit-no-change-blog.log"
        got = await structured(session, "doctor", {"log": log, "no_ollama": True, "capture": "none"})
        want = cli(binary, "doctor", "--format", "json", "--fail-on", "never", "--capture", "none", "--no-ollama", log)
        assert got == want and "/home/<user>/" in json.dumps(got)
        checked += 1

        # Malformed calls: MCP errors with the CLI's (or the schema's) message; the server answers each next one.
        await refused(session, "analyze_log", {}, "give the log")
        await refused(session, "analyze_log", {"path": "a", "text": "b"}, "not both")
        await refused(session, "analyze_log", {"file": FOUNDING}, "unknown field `file`")
        await refused(session, "whatif", {"path": FOUNDING, "ctx": "big"}, "invalid type")
        await refused(session, "whatif", {"path": FOUNDING, "ubatch": 0}, "--ubatch")
        await refused(session, "no_such_tool", {}, "no tool named")
        message = await refused(session, "inspect_model", {"model": "no-such.gguf"}, "no-such.gguf")
        assert f"vramdiff: {message}\n" == cli_stderr(binary, "inspect", "no-such.gguf"), message
        await refused(session, "analyze_log", {"path": "no-such.log"}, "no-such.log")
        checked += 8
        again = await structured(session, "analyze_log", {"path": FOUNDING})
        assert again["schema_version"] == 1
    print(f"check_mcp: {len(tools)} tools listed, {checked} calls checked against the CLI's JSON and its errors")


if __name__ == "__main__":
    binary = str(Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "target/debug/vramdiff").resolve())
    asyncio.run(check(binary))
