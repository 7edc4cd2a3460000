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


# --- Header-only fixtures shaped like the founding cases' models -------------------------------------------------
#
# A GGUF tensor's bytes are the distance to the next tensor's offset and the last tensor runs to the end of the
# file, so the header alone plus the file's length describes the model exactly: `set_len` (a sparse file) turns
# the committed header back into a faithful model file without writing its gigabytes. These are written with
# `add_tensor_info` (no tensor data); the oracle is read from the sparse file at its full length, then the file is
# cut back to the header (padded to the data start). The vocabulary in the metadata is small; `token_embd`'s shape
# is the real one, so the sizes are.


def tensor_bytes(shape, qtype):
    """Bytes of a tensor of ggml type `qtype` and ggml shape `shape` (innermost first)."""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    assert shape[0] % block == 0, (shape, qtype)
    return int(np.prod(shape)) // block * size


NUMPY_DTYPES = {Q.F32: np.float32, Q.F16: np.float16}


def info(writer, name, shape, qtype):
    """A tensor of ggml shape `shape` (innermost first) declared in the header, without data."""
    nbytes = tensor_bytes(shape, qtype)
    numpy_shape = tuple(reversed(shape))
    if qtype in NUMPY_DTYPES:
        writer.add_tensor_info(name, numpy_shape, np.dtype(NUMPY_DTYPES[qtype]), nbytes)
    else:
        # The writer takes the byte shape of quantised tensors: the row in bytes last.
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        byte_shape = numpy_shape[:-1] + (shape[0] // block * size,)
        writer.add_tensor_info(name, byte_shape, np.dtype(np.uint8), nbytes, raw_dtype=qtype)


def siglip_tower(w, n_proj_out):
    """The SigLIP vision tower Ollama's gemma3 (and gemma4) blobs carry beside the language model: 27 blocks of
    1152 wide with a 4304 MLP, 14x14 patches of an 896-pixel image (4096 positions); weights F16, biases and
    norms F32; then the projection to the language model's width. 439 tensors, as the gemma4 log's
    clip_model_loader counts. The `v.*` tensors come to 795.87 MiB, the K80 log's projector.weights="795.9 MiB"
    (Ollama counts the `v` group; `mm.*` is 1152 x n_proj_out F16 more)."""
    d, ff = 1152, 4304
    info(w, "v.patch_embd.weight", [14, 14, 3, d], Q.F16)
    info(w, "v.patch_embd.bias", [d], Q.F32)
    info(w, "v.position_embd.weight", [d, 4096], Q.F16)
    for i in range(27):
        p = f"v.blk.{i}."
        for t in ["attn_q", "attn_k", "attn_v", "attn_out"]:
            info(w, p + t + ".weight", [d, d], Q.F16)
            info(w, p + t + ".bias", [d], Q.F32)
        info(w, p + "ffn_up.weight", [d, ff], Q.F16)
        info(w, p + "ffn_up.bias", [ff], Q.F32)
        info(w, p + "ffn_down.weight", [ff, d], Q.F16)
        info(w, p + "ffn_down.bias", [d], Q.F32)
        for n in ["ln1", "ln2"]:
            info(w, p + n + ".weight", [d], Q.F32)
            info(w, p + n + ".bias", [d], Q.F32)
    info(w, "v.post_ln.weight", [d], Q.F32)
    info(w, "v.post_ln.bias", [d], Q.F32)
    info(w, "mm.input_projection.weight", [d, n_proj_out], Q.F16)
    info(w, "mm.soft_emb_norm.weight", [d], Q.F32)


def use_more_bits(i, n):
    """llama.cpp's Q4_K_M rule (llama-quant.cpp): these layers get Q6_K for attn_v and ffn_down."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def gemma3_12b(path):
    """gemma3:12b Q4_K_M as the founding K80 log loads it (sha256-e8ad13ef…, 1065 tensors with the vision
    tower): 48 blocks of 3840 wide, 16 heads and 8 KV heads of 256, a 15360 FFN, a 1024-token window on 5 of
    every 6 layers (gemma3's own pattern, no key), Q4_K with Q6_K attn_v/ffn_down on the Q4_K_M layers, the
    262144-token embedding in Q6_K (787.5 MiB: the log's CPU weights and memory.weights.nonrepeating), tied
    output. Block 0 is 136.73 MiB (the log's CUDA0 "136.7 MiB", split 1,48); the 48 blocks 6.02 GiB
    (memory.weights.repeating="6.0 GiB"); CUDA1's 47 blocks + the tied output + the tower 7.44 GiB ("7.4 GiB")."""
    w = gguf.GGUFWriter(path, "gemma3")
    n_embd, n_ff, n_layer, n_vocab = 3840, 15360, 48, 262144
    w.add_name("Gemma3 12B (header-only fixture)")
    w.add_file_type(15)
    w.add_quantization_version(2)
    w.add_context_length(131072)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(16)
    w.add_head_count_kv(8)
    w.add_key_length(256)
    w.add_value_length(256)
    w.add_sliding_window(1024)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1000000.0)
    w.add_float32("gemma3.rope.scaling.factor", 8.0)
    w.add_string("gemma3.rope.scaling.type", "linear")
    w.add_uint32("gemma3.vision.block_count", 27)
    w.add_uint32("gemma3.vision.embedding_length", 1152)
    w.add_uint32("gemma3.vision.feed_forward_length", 4304)
    w.add_uint32("gemma3.vision.image_size", 896)
    w.add_uint32("gemma3.vision.patch_size", 14)
    w.add_uint32("gemma3.vision.attention.head_count", 16)
    vocab(w, 16)
    info(w, "token_embd.weight", [n_embd, n_vocab], Q.Q6_K)
    for i in range(n_layer):
        p = f"blk.{i}."
        more = Q.Q6_K if use_more_bits(i, n_layer) else Q.Q4_K
        for n in ["attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"]:
            info(w, p + n + ".weight", [n_embd], Q.F32)
        info(w, p + "attn_q_norm.weight", [256], Q.F32)
        info(w, p + "attn_k_norm.weight", [256], Q.F32)
        info(w, p + "attn_q.weight", [n_embd, 16 * 256], Q.Q4_K)
        info(w, p + "attn_k.weight", [n_embd, 8 * 256], Q.Q4_K)
        info(w, p + "attn_v.weight", [n_embd, 8 * 256], more)
        info(w, p + "attn_output.weight", [16 * 256, n_embd], Q.Q4_K)
        info(w, p + "ffn_gate.weight", [n_embd, n_ff], Q.Q4_K)
        info(w, p + "ffn_up.weight", [n_embd, n_ff], Q.Q4_K)
        info(w, p + "ffn_down.weight", [n_ff, n_embd], more)
    info(w, "output_norm.weight", [n_embd], Q.F32)
    siglip_tower(w, n_embd)
    finish_header(w)


def gemma4_31b(path):
    """gemma4:31b Q4_K_M as today's founding log loads it (sha256-280af683…): 60 layers of 5376 wide, 32 heads
    and 16 KV heads of 128 (n_embd_k_gqa 2048), a 1024-token window on every layer but each sixth (10 full, 50
    window layers, as its KV lines count them; the pattern is in the file as an array of bools), a 21504 FFN,
    attention and ffn_gate/up in Q4_K, ffn_down in Q6_K: 249.99 MiB a layer (the log's CUDA0 11750.47 MiB over
    47 layers is 250.01); the 262144-token embedding in Q6_K, 1102.50 MiB (the log's CPU buffer), tied output;
    the SigLIP tower (the log's projector is the same blob)."""
    w = gguf.GGUFWriter(path, "gemma4")
    n_embd, n_ff, n_layer, n_vocab = 5376, 21504, 60, 262144
    w.add_name("Gemma4 31B (header-only fixture)")
    w.add_file_type(15)
    w.add_quantization_version(2)
    w.add_context_length(262144)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(32)
    w.add_head_count_kv(16)
    w.add_key_length(128)
    w.add_value_length(128)
    w.add_sliding_window(1024)
    w.add_array("gemma4.attention.sliding_window_pattern", [i % 6 != 5 for i in range(n_layer)])
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1000000.0)
    vocab(w, 16)
    info(w, "token_embd.weight", [n_embd, n_vocab], Q.Q6_K)
    for i in range(n_layer):
        p = f"blk.{i}."
        for n in ["attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"]:
            info(w, p + n + ".weight", [n_embd], Q.F32)
        info(w, p + "attn_q_norm.weight", [128], Q.F32)
        info(w, p + "attn_k_norm.weight", [128], Q.F32)
        info(w, p + "attn_q.weight", [n_embd, 32 * 128], Q.Q4_K)
        info(w, p + "attn_k.weight", [n_embd, 16 * 128], Q.Q4_K)
        info(w, p + "attn_v.weight", [n_embd, 16 * 128], Q.Q4_K)
        info(w, p + "attn_output.weight", [32 * 128, n_embd], Q.Q4_K)
        info(w, p + "ffn_gate.weight", [n_embd, n_ff], Q.Q4_K)
        info(w, p + "ffn_up.weight", [n_embd, n_ff], Q.Q4_K)
        info(w, p + "ffn_down.weight", [n_ff, n_embd], Q.Q6_K)
    info(w, "output_norm.weight", [n_embd], Q.F32)
    siglip_tower(w, n_embd)
    finish_header(w)


def finish_header(writer):
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()


HEADER_FIXTURES = {
    "gemma3-12b-q4_k_m.header.gguf": gemma3_12b,
    "gemma4-31b-q4_k_m.header.gguf": gemma4_31b,
}


def header_only(out, name, write):
    """Write the header, grow it to the full model length (sparse), read the oracle from that, then cut the file
    back to the header padded to the data start. The oracle's `file_bytes` is the length to `set_len` to."""
    path = out / name
    write(str(path))
    header_len = path.stat().st_size
    # The full length from the header's own numbers: read the header alone (a reader that stops at the tensor
    # infos) would need the data, so compute it: data start, then the last tensor's offset plus its padded size.
    alignment = 32
    data_start = (header_len + alignment - 1) // alignment * alignment
    with open(path, "rb+") as f:
        f.truncate(data_start)
    total = data_start + total_data(path, data_start, alignment)
    with open(path, "rb+") as f:
        f.truncate(total)
    o = oracle(str(path))
    assert o["data_start"] == data_start and o["alignment"] == alignment, (o["data_start"], data_start)
    last = o["tensors"][-1]
    assert last["data_offset"] + (last["n_bytes"] + alignment - 1) // alignment * alignment == total
    with open(path, "rb+") as f:
        f.truncate(data_start)
    o["header_bytes"] = data_start
    with open(out / name.replace(".header.gguf", ".oracle.json"), "w") as f:
        json.dump(o, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    print(f"{path}: {data_start} header bytes, {total} as a model file")


def total_data(path, data_start, alignment):
    """Sum of the padded tensor sizes, read from the tensor infos with the gguf package's own reader at a
    generous sparse length (the reader maps the data; any length past the end of the data does)."""
    with open(path, "rb+") as f:
        f.truncate(data_start + (1 << 40))
    r = gguf.GGUFReader(str(path))
    end = max(int(t.data_offset) + (int(t.n_bytes) + alignment - 1) // alignment * alignment for t in r.tensors)
    del r
    with open(path, "rb+") as f:
        f.truncate(data_start)
    return end - data_start


FIXTURES = {
    "llama-tiny.gguf": llama,
    "moe-tiny.gguf": moe,
    "swa-tiny.gguf": swa,
    "mmproj-tiny.gguf": mmproj,
    "hybrid-tiny.gguf": hybrid,
}


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/gguf")
    headers = Path(sys.argv[2] if len(sys.argv) > 2 else "tests/data/gguf-headers")
    headers.mkdir(parents=True, exist_ok=True)
    for name, write in HEADER_FIXTURES.items():
        header_only(headers, name, write)
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
