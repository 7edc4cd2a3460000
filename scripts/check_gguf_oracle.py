#!/usr/bin/env python3
"""Compare `vramdiff inspect --format json --tensors` with llama.cpp's own GGUF reader (`gguf.GGUFReader`, from
the `gguf` package on PyPI) on every GGUF file of a folder: every tensor's name, type, shape, offset and byte size,
and every metadata key, type and value. CI runs it on tests/data/gguf (see .ci/run); exits 1 on any mismatch.

    python3 scripts/check_gguf_oracle.py target/debug/vramdiff tests/data/gguf

vramdiff's `bytes` is the distance to the next tensor's offset (the data and its padding to the alignment; the
gguf writer pads after every tensor, the last one too), so it must equal the reader's n_bytes rounded up to the
alignment, and `data_bytes` must equal n_bytes. The reader flattens nested arrays; the comparison does too.
"""

import json
import subprocess
import sys
from pathlib import Path

import gguf

VALUE_TYPES = {
    gguf.GGUFValueType.UINT8: "u8", gguf.GGUFValueType.INT8: "i8", gguf.GGUFValueType.UINT16: "u16",
    gguf.GGUFValueType.INT16: "i16", gguf.GGUFValueType.UINT32: "u32", gguf.GGUFValueType.INT32: "i32",
    gguf.GGUFValueType.FLOAT32: "f32", gguf.GGUFValueType.BOOL: "bool", gguf.GGUFValueType.STRING: "str",
    gguf.GGUFValueType.ARRAY: "arr", gguf.GGUFValueType.UINT64: "u64", gguf.GGUFValueType.INT64: "i64",
    gguf.GGUFValueType.FLOAT64: "f64",
}


def flatten(v):
    if isinstance(v, list):
        out = []
        for x in v:
            out.extend(flatten(x) if isinstance(x, list) else [x])
        return out
    return v


def type_name(field):
    names = [VALUE_TYPES[t] for t in field.types]
    name = names[-1]
    for outer in reversed(names[:-1]):
        name = f"{outer}[{name}]"
    return name


def check(binary, path):
    """Mismatches for one file, and the number of tensors and values compared."""
    out = subprocess.run([binary, "inspect", "--format", "json", "--tensors", str(path)],
                         check=True, capture_output=True, text=True).stdout
    ours = json.loads(out)
    reader = gguf.GGUFReader(path)
    problems = []
    alignment = int(reader.alignment)
    for key, theirs in [("data_start", int(reader.data_offset)), ("alignment", alignment),
                        ("tensors", len(reader.tensors)), ("file_bytes", path.stat().st_size)]:
        if ours[key] != theirs:
            problems.append(f"{key}: vramdiff {ours[key]}, gguf {theirs}")
    if len(ours["tensor_list"]) != len(reader.tensors):
        problems.append(f"tensor count: vramdiff {len(ours['tensor_list'])}, gguf {len(reader.tensors)}")
    for t, r in zip(ours["tensor_list"], reader.tensors):
        expected = {
            "name": r.name,
            "type": int(r.tensor_type),
            "type_name": r.tensor_type.name,
            "shape": [int(d) for d in r.shape],
            "offset": int(r.data_offset) - int(reader.data_offset),
            "data_bytes": int(r.n_bytes),
            "bytes": (int(r.n_bytes) + alignment - 1) // alignment * alignment,
        }
        for key, value in expected.items():
            if t[key] != value:
                problems.append(f"tensor {r.name}: {key}: vramdiff {t[key]!r}, gguf {value!r}")
    fields = [f for f in reader.fields.values() if not f.name.startswith("GGUF.")]
    if len(ours["metadata"]) != len(fields):
        problems.append(f"metadata count: vramdiff {len(ours['metadata'])}, gguf {len(fields)}")
    for m, f in zip(ours["metadata"], fields):
        expected = {"key": f.name, "type": type_name(f), "value": f.contents()}
        got = {"key": m["key"], "type": m["type"], "value": flatten(m["value"])}
        if got != expected:
            problems.append(f"metadata {f.name}: vramdiff {got!r}, gguf {expected!r}")
    return problems, len(reader.tensors), len(fields)


def main():
    binary, folder = sys.argv[1], Path(sys.argv[2])
    files = sorted(folder.glob("*.gguf"))
    if not files:
        print(f"no .gguf files in {folder}", file=sys.stderr)
        return 1
    failed = False
    tensors = values = 0
    for path in files:
        problems, n_tensors, n_values = check(binary, path)
        tensors += n_tensors
        values += n_values
        for p in problems:
            print(f"{path.name}: {p}", file=sys.stderr)
        failed |= bool(problems)
    verdict = "MISMATCH" if failed else "agree"
    print(f"GGUF oracle (gguf {gguf_version()}): {len(files)} files, {tensors} tensors, {values} metadata values: {verdict}")
    return 1 if failed else 0


def gguf_version():
    from importlib.metadata import version
    return version("gguf")


if __name__ == "__main__":
    sys.exit(main())
