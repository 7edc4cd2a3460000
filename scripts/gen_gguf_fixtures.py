#!/usr/bin/env python3
"""Write the small GGUF fixtures of tests/data/gguf/ with llama.cpp's own Python package `gguf`, and beside each
one the oracle: what `gguf.GGUFReader` reads back from it (every tensor's name, type, shape, offset and byte size,
every metadata value), as JSON. The Rust tests compare `vramdiff inspect` with the oracle files, so they need no
Python; `scripts/check_gguf_oracle.py` (CI) compares with the reader itself.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install gguf numpy
    /tmp/venv/bin/python scripts/gen_gguf_fixtures.py tests/data/gguf

The metadata keys and types follow what llama.cpp's loader prints for real models (`llama_model_loader: - kv`
lines of the corpus logs) and what `convert_hf_to_gguf.py` writes for each architecture; the dimensions are tiny
so each file stays a few KB. Tensor contents are seeded random bytes: only their sizes matter. Deterministic: the
same package version writes the same bytes.
"""

import json
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

RNG = np.random.default_rng(14)


def raw(writer, name, shape, qtype):
    """A tensor of ggml type `qtype` and ggml shape `shape` (innermost first), random bytes."""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    row = shape[0]
    assert row % block == 0, (name, shape, qtype)
    rows = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    nbytes = row // block * size * rows
    # numpy's shape is outermost first; the byte shape's last axis is the row in bytes.
    byte_shape = tuple(reversed(shape[1:])) + (row // block * size,)
    data = RNG.integers(0, 256, size=nbytes, dtype=np.uint8).reshape(byte_shape)
    writer.add_tensor(name, data, raw_dtype=qtype)


def f32(writer, name, shape):
    writer.add_tensor(name, RNG.standard_normal(tuple(reversed(shape))).astype(np.float32))


def f16(writer, name, shape):
    writer.add_tensor(name, RNG.standard_normal(tuple(reversed(shape))).astype(np.float16))


def vocab(writer, n):
    writer.add_tokenizer_model("llama")
    writer.add_token_list([f"<t{i}>" for i in range(n)])
    writer.add_token_scores([float(-i) for i in range(n)])
    writer.add_token_types([1] * n)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)


def finish(writer):
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def llama(path):
    """A llama-like dense model: 2 layers, GQA (4 heads, 2 KV heads), F32/F16/Q8_0/Q4_0 tensors, every value
    type in the metadata (the `vramdiff.fixture.*` keys), a nested array."""
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("Tiny Llama Fixture")
    w.add_type("model")
    w.add_file_type(7)
    w.add_quantization_version(2)
    w.add_context_length(4096)
    w.add_embedding_length(64)
    w.add_block_count(2)
    w.add_feed_forward_length(128)
    w.add_rope_dimension_count(16)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(500000.0)
    w.add_vocab_size(32)
    vocab(w, 32)
    w.add_uint8("vramdiff.fixture.u8", 200)
    w.add_int8("vramdiff.fixture.i8", -100)
    w.add_uint16("vramdiff.fixture.u16", 60000)
    w.add_int16("vramdiff.fixture.i16", -30000)
    w.add_int32("vramdiff.fixture.i32", -2000000000)
    w.add_uint64("vramdiff.fixture.u64", 2**63 + 5)
    w.add_int64("vramdiff.fixture.i64", -(2**62))
    w.add_float64("vramdiff.fixture.f64", 0.1)
    w.add_float32("vramdiff.fixture.f32", 0.1)
    w.add_bool("vramdiff.fixture.bool", False)
    w.add_string("vramdiff.fixture.utf8", "naïve — ✓")
    w.add_array("vramdiff.fixture.bools", [True, False, True])
    w.add_array("vramdiff.fixture.nested", [[1, 2], [3]])
    f16(w, "token_embd.weight", [64, 32])
    for i in range(2):
        f32(w, f"blk.{i}.attn_norm.weight", [64])
        raw(w, f"blk.{i}.attn_q.weight", [64, 64], Q.Q8_0)
        raw(w, f"blk.{i}.attn_k.weight", [64, 32], Q.Q8_0)
        raw(w, f"blk.{i}.attn_v.weight", [64, 32], Q.Q8_0)
        raw(w, f"blk.{i}.attn_output.weight", [64, 64], Q.Q8_0)
        f32(w, f"blk.{i}.ffn_norm.weight", [64])
        raw(w, f"blk.{i}.ffn_gate.weight", [64, 128], Q.Q4_0)
        raw(w, f"blk.{i}.ffn_up.weight", [64, 128], Q.Q4_0)
        raw(w, f"blk.{i}.ffn_down.weight", [128, 64], Q.Q8_0)
    f32(w, "output_norm.weight", [64])
    raw(w, "output.weight", [64, 32], Q.Q8_0)
    finish(w)


def moe(path):
    """A qwen2moe-like MoE: 2 layers of 4 experts (`ffn_*_exps`) and a shared expert (`ffn_*_shexp`, dense),
    explicit head dimensions (key_length 16 with embedding 64 and 4 heads: not n_embd/n_head), alignment 64,
    a Q4_K tensor (256-wide blocks)."""
    w = gguf.GGUFWriter(path, "qwen2moe")
    w.add_custom_alignment(64)
    w.add_name("Tiny MoE Fixture")
    w.add_file_type(15)
    w.add_context_length(32768)
    w.add_embedding_length(64)
    w.add_block_count(2)
    w.add_feed_forward_length(256)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_key_length(16)
    w.add_value_length(16)
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_expert_count(4)
    w.add_expert_used_count(2)
    w.add_expert_feed_forward_length(32)
    w.add_expert_shared_feed_forward_length(256)
    vocab(w, 16)
    f32(w, "token_embd.weight", [64, 16])
    for i in range(2):
        f32(w, f"blk.{i}.attn_norm.weight", [64])
        raw(w, f"blk.{i}.attn_q.weight", [64, 64], Q.Q8_0)
        raw(w, f"blk.{i}.attn_k.weight", [64, 32], Q.Q8_0)
        raw(w, f"blk.{i}.attn_v.weight", [64, 32], Q.Q8_0)
        raw(w, f"blk.{i}.attn_output.weight", [64, 64], Q.Q8_0)
        f32(w, f"blk.{i}.ffn_norm.weight", [64])
        f32(w, f"blk.{i}.ffn_gate_inp.weight", [64, 4])
        raw(w, f"blk.{i}.ffn_gate_exps.weight", [64, 32, 4], Q.Q8_0)
        raw(w, f"blk.{i}.ffn_up_exps.weight", [64, 32, 4], Q.Q8_0)
        raw(w, f"blk.{i}.ffn_down_exps.weight", [32, 64, 4], Q.Q4_0)
        f32(w, f"blk.{i}.ffn_gate_inp_shexp.weight", [64])
        raw(w, f"blk.{i}.ffn_gate_shexp.weight", [64, 256], Q.Q4_0)
        raw(w, f"blk.{i}.ffn_up_shexp.weight", [64, 256], Q.Q4_0)
        raw(w, f"blk.{i}.ffn_down_shexp.weight", [256, 64], Q.Q4_K)
    f32(w, "output_norm.weight", [64])
    raw(w, "output.weight", [64, 16], Q.Q8_0)
    finish(w)


def swa(path):
    """A gemma3-like model: 6 layers, a 1024-token sliding window on 5 of every 6 (llama.cpp's gemma3
    pattern; the file has no sliding_window_pattern key), two heads and one KV head of 32, tied embeddings (no output.weight),
    and the vision tower in the same file (`v.*`, `mm.*`) as in Ollama's gemma3 blobs."""
    w = gguf.GGUFWriter(path, "gemma3")
    w.add_name("Tiny Gemma3 Fixture")
    w.add_context_length(131072)
    w.add_embedding_length(64)
    w.add_block_count(6)
    w.add_feed_forward_length(64)
    w.add_head_count(2)
    w.add_head_count_kv(1)
    w.add_key_length(32)
    w.add_value_length(32)
    w.add_sliding_window(1024)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1000000.0)
    w.add_float32("gemma3.rope.scaling.factor", 8.0)
    w.add_string("gemma3.rope.scaling.type", "linear")
    vocab(w, 16)
    f16(w, "token_embd.weight", [64, 16])
    for i in range(6):
        f32(w, f"blk.{i}.attn_norm.weight", [64])
        raw(w, f"blk.{i}.attn_q.weight", [64, 64], Q.Q8_0)
        raw(w, f"blk.{i}.attn_k.weight", [64, 32], Q.Q8_0)
        raw(w, f"blk.{i}.attn_v.weight", [64, 32], Q.Q8_0)
        raw(w, f"blk.{i}.attn_output.weight", [64, 64], Q.Q8_0)
        f32(w, f"blk.{i}.post_attention_norm.weight", [64])
        raw(w, f"blk.{i}.ffn_gate.weight", [64, 64], Q.Q4_0)
        raw(w, f"blk.{i}.ffn_up.weight", [64, 64], Q.Q4_0)
        raw(w, f"blk.{i}.ffn_down.weight", [64, 64], Q.Q4_0)
    f32(w, "output_norm.weight", [64])
    f16(w, "v.patch_embd.weight", [4, 4, 3, 32])
    f32(w, "v.post_layernorm.weight", [32])
    f16(w, "mm.input_projection.weight", [32, 64])
    finish(w)


def mmproj(path):
    """A separate projector (mmproj) file: architecture `clip`, a one-block vision tower and the projector."""
    w = gguf.GGUFWriter(path, "clip")
    w.add_name("Tiny mmproj Fixture")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_string("clip.projector_type", "gemma3")
    w.add_uint32("clip.vision.image_size", 32)
    w.add_uint32("clip.vision.patch_size", 4)
    w.add_uint32("clip.vision.embedding_length", 32)
    w.add_uint32("clip.vision.feed_forward_length", 64)
    w.add_uint32("clip.vision.block_count", 1)
    w.add_uint32("clip.vision.attention.head_count", 2)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    f16(w, "v.patch_embd.weight", [4, 4, 3, 32])
    f32(w, "v.position_embd.weight", [32, 64])
    f32(w, "v.blk.0.ln1.weight", [32])
    raw(w, "v.blk.0.attn_q.weight", [32, 32], Q.Q8_0)
    raw(w, "v.blk.0.attn_k.weight", [32, 32], Q.Q8_0)
    raw(w, "v.blk.0.attn_v.weight", [32, 32], Q.Q8_0)
    raw(w, "v.blk.0.attn_out.weight", [32, 32], Q.Q8_0)
    raw(w, "v.blk.0.ffn_up.weight", [32, 64], Q.Q8_0)
    raw(w, "v.blk.0.ffn_down.weight", [64, 32], Q.Q8_0)
    f32(w, "v.post_ln.weight", [32])
    f16(w, "mm.input_projection.weight", [32, 64])
    finish(w)


def hybrid(path):
    """A granitehybrid-like model: 4 layers, Mamba2 (ssm.*) in layers 0-2 (head_count_kv 0 in the per-layer
    array), attention in layer 3."""
    w = gguf.GGUFWriter(path, "granitehybrid")
    w.add_name("Tiny Hybrid Fixture")
    w.add_context_length(131072)
    w.add_embedding_length(64)
    w.add_block_count(4)
    w.add_feed_forward_length(64)
    w.add_head_count(4)
    w.add_head_count_kv([0, 0, 0, 2])
    w.add_ssm_conv_kernel(4)
    w.add_ssm_inner_size(64)
    w.add_ssm_state_size(16)
    w.add_ssm_group_count(1)
    w.add_ssm_time_step_rank(4)
    w.add_layer_norm_rms_eps(1e-5)
    vocab(w, 16)
    f32(w, "token_embd.weight", [64, 16])
    for i in range(4):
        f32(w, f"blk.{i}.attn_norm.weight", [64])
        if i < 3:
            raw(w, f"blk.{i}.ssm_in.weight", [64, 164], Q.Q8_0)
            f32(w, f"blk.{i}.ssm_conv1d.weight", [4, 96])
            f32(w, f"blk.{i}.ssm_a", [1, 4])
            f32(w, f"blk.{i}.ssm_d", [1, 4])
            raw(w, f"blk.{i}.ssm_out.weight", [64, 64], Q.Q8_0)
        else:
            raw(w, f"blk.{i}.attn_q.weight", [64, 64], Q.Q8_0)
            raw(w, f"blk.{i}.attn_k.weight", [64, 32], Q.Q8_0)
            raw(w, f"blk.{i}.attn_v.weight", [64, 32], Q.Q8_0)
            raw(w, f"blk.{i}.attn_output.weight", [64, 64], Q.Q8_0)
        f32(w, f"blk.{i}.ffn_norm.weight", [64])
        raw(w, f"blk.{i}.ffn_gate.weight", [64, 64], Q.Q4_0)
        raw(w, f"blk.{i}.ffn_up.weight", [64, 64], Q.Q4_0)
        raw(w, f"blk.{i}.ffn_down.weight", [64, 64], Q.Q4_0)
    f32(w, "output_norm.weight", [64])
    finish(w)


VALUE_TYPES = {
    gguf.GGUFValueType.UINT8: "u8", gguf.GGUFValueType.INT8: "i8", gguf.GGUFValueType.UINT16: "u16",
    gguf.GGUFValueType.INT16: "i16", gguf.GGUFValueType.UINT32: "u32", gguf.GGUFValueType.INT32: "i32",
    gguf.GGUFValueType.FLOAT32: "f32", gguf.GGUFValueType.BOOL: "bool", gguf.GGUFValueType.STRING: "str",
    gguf.GGUFValueType.ARRAY: "arr", gguf.GGUFValueType.UINT64: "u64", gguf.GGUFValueType.INT64: "i64",
    gguf.GGUFValueType.FLOAT64: "f64",
}


def oracle(path):
    """What GGUFReader reads: metadata (type as `u32`, `arr[str]`, `arr[arr[i32]]`; arrays flattened, as the
    reader returns them) and tensors (absolute data offset, n_bytes from the type's block size)."""
    r = gguf.GGUFReader(path)
    metadata = []
    for f in r.fields.values():
        if f.name.startswith("GGUF."):
            continue
        names = [VALUE_TYPES[t] for t in f.types]
        type_name = names[-1]
        for outer in reversed(names[:-1]):
            type_name = f"{outer}[{type_name}]"
        metadata.append({"key": f.name, "type": type_name, "value": f.contents()})
    tensors = [
        {
            "name": t.name,
            "type": int(t.tensor_type),
            "type_name": t.tensor_type.name,
            "shape": [int(d) for d in t.shape],
            "data_offset": int(t.data_offset),
            "n_bytes": int(t.n_bytes),
        }
        for t in r.tensors
    ]
    return {
        "file": Path(path).name,
        "file_bytes": Path(path).stat().st_size,
        "data_start": int(r.data_offset),
        "alignment": int(r.alignment),
        "gguf_package": getattr(gguf, "__version__", None) or package_version(),
        "metadata": metadata,
        "tensors": tensors,
    }


def package_version():
    from importlib.metadata import version
    return version("gguf")


FIXTURES = {
    "llama-tiny.gguf": llama,
    "moe-tiny.gguf": moe,
    "swa-tiny.gguf": swa,
    "mmproj-tiny.gguf": mmproj,
    "hybrid-tiny.gguf": hybrid,
}


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/gguf")
    out.mkdir(parents=True, exist_ok=True)
    for name, write in FIXTURES.items():
        path = out / name
        write(str(path))
        with open(path.with_suffix(".oracle.json"), "w") as f:
            json.dump(oracle(str(path)), f, indent=1, sort_keys=True, ensure_ascii=False)
            f.write("\n")
        print(f"{path}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
