#!/usr/bin/env python3
"""Small GGUF models that the real llama.cpp (the `xllamacpp` wheel) loads and runs, for the oracle suite.

Each function writes one model with the tensor names, shapes, norms and biases that llama.cpp's loader requires
for its architecture, a SentencePiece ("llama") vocab holding the 256 byte tokens (so any prompt tokenizes) and
random but finite weights: F32 norms, Q4_0/Q8_0 quantized with `gguf.quants`, and Q4_K/Q6_K as random bytes whose
f16 scale fields are set to 0.001 (gguf has no K-quant quantizer). Every model has its own seeded RNG, so the same
`gguf`/`numpy` versions write the same bytes whichever subset is generated.

    python scripts/oracle/models.py OUT_DIR [NAME...]

Shapes below are in ggml order (innermost first), as llama.cpp's loader prints them.
"""

import sys
from pathlib import Path

import numpy as np
import gguf
import gguf.quants as gq
from gguf import GGMLQuantizationType as Q

VOCAB_EXTRA = 16  # plain word pieces beside <unk>, <s>, </s> and the 256 byte tokens


class Model:
    """A GGUFWriter plus a seeded RNG and the tensor helper."""

    def __init__(self, path, arch, seed):
        self.w = gguf.GGUFWriter(str(path), arch)
        self.arch = arch
        self.rng = np.random.default_rng(seed)

    def key(self, name, value):
        """An architecture-prefixed u32/f32 key that GGUFWriter has no helper for."""
        full = f"{self.arch}.{name}"
        if isinstance(value, float):
            self.w.add_float32(full, value)
        else:
            self.w.add_uint32(full, value)

    def t(self, name, shape, qt=Q.F32, scale=0.02, value=None):
        """Add tensor `name` of ggml shape `shape` and type `qt`."""
        np_shape = tuple(reversed(shape))
        if value is not None:
            data = np.full(np_shape, value, dtype=np.float32)
        else:
            data = (self.rng.standard_normal(np_shape) * scale).astype(np.float32)
        if qt == Q.F32:
            self.w.add_tensor(name, data)
        elif qt == Q.F16:
            self.w.add_tensor(name, data.astype(np.float16))
        elif qt in (Q.Q8_0, Q.Q4_0):
            self.w.add_tensor(name, gq.quantize(data, qt), raw_dtype=qt)
        elif qt in (Q.Q4_K, Q.Q6_K):
            block, size = gguf.GGML_QUANT_SIZES[qt]
            assert shape[0] % block == 0, (name, shape, qt)
            rows = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            nb = shape[0] // block
            b = self.rng.integers(0, 256, size=(rows * nb, size), dtype=np.uint8)
            d = np.frombuffer(np.float16(0.001).tobytes(), dtype=np.uint8)
            if qt == Q.Q4_K:  # block_q4_K: d, dmin (f16), scales[12], qs[128]
                b[:, 0:2] = d
                b[:, 2:4] = d
            else:  # block_q6_K: ql[128], qh[64], scales[16], d (f16)
                b[:, size - 2:size] = d
            self.w.add_tensor(name, b.reshape(tuple(reversed(shape[1:])) + (nb * size,)), raw_dtype=qt)
        else:
            raise ValueError(qt)

    def vocab(self):
        toks = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
        types = [2, 3, 3] + [6] * 256
        for i in range(VOCAB_EXTRA):
            toks.append(f"\u2581w{i}")
            types.append(1)
        w = self.w
        w.add_tokenizer_model("llama")
        w.add_token_list(toks)
        w.add_token_scores([-float(i) for i in range(len(toks))])
        w.add_token_types(types)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)
        w.add_add_bos_token(True)
        return len(toks)

    def common(self, name, n_ctx_train, n_embd, n_layer, n_ff, n_head, n_head_kv, file_type):
        w = self.w
        w.add_name(name)
        w.add_context_length(n_ctx_train)
        w.add_embedding_length(n_embd)
        w.add_block_count(n_layer)
        w.add_feed_forward_length(n_ff)
        w.add_head_count(n_head)
        w.add_head_count_kv(n_head_kv)
        w.add_layer_norm_rms_eps(1e-6)
        w.add_file_type(file_type)
        return self.vocab()

    def finish(self):
        self.w.write_header_to_file()
        self.w.write_kv_data_to_file()
        self.w.write_tensors_to_file()
        self.w.close()


def llama_gqa(path):
    """llama, 4 heads / 2 KV heads (GQA), Q4_K/Q6_K mix: the Q4_K weights are repacked (CPU_REPACK buffer)."""
    n_embd, n_ff, n_head, n_kv, n_layer = 256, 256, 4, 2, 2
    hd = n_embd // n_head
    m = Model(path, "llama", 101)
    nv = m.common("oracle-llama-gqa", 8192, n_embd, n_layer, n_ff, n_head, n_kv, 15)  # 15 = Q4_K_M
    m.w.add_rope_dimension_count(hd)
    m.t("token_embd.weight", [n_embd, nv], Q.Q4_K)
    m.t("output_norm.weight", [n_embd], value=1.0)
    m.t("output.weight", [n_embd, nv], Q.Q6_K)
    for i in range(n_layer):
        p = f"blk.{i}."
        m.t(p + "attn_norm.weight", [n_embd], value=1.0)
        m.t(p + "attn_q.weight", [n_embd, hd * n_head], Q.Q4_K)
        m.t(p + "attn_k.weight", [n_embd, hd * n_kv], Q.Q4_K)
        m.t(p + "attn_v.weight", [n_embd, hd * n_kv], Q.Q6_K)
        m.t(p + "attn_output.weight", [hd * n_head, n_embd], Q.Q4_K)
        m.t(p + "ffn_norm.weight", [n_embd], value=1.0)
        m.t(p + "ffn_gate.weight", [n_embd, n_ff], Q.Q4_K)
        m.t(p + "ffn_up.weight", [n_embd, n_ff], Q.Q4_K)
        m.t(p + "ffn_down.weight", [n_ff, n_embd], Q.Q4_K)
    m.finish()


def llama_mha(path):
    """llama without GQA (n_head_kv == n_head), Q8_0 attention / Q4_0 FFN."""
    n_embd, n_ff, n_head, n_layer = 128, 128, 4, 4
    hd = n_embd // n_head
    m = Model(path, "llama", 102)
    nv = m.common("oracle-llama-mha", 4096, n_embd, n_layer, n_ff, n_head, n_head, 7)  # 7 = Q8_0
    m.w.add_rope_dimension_count(hd)
    m.t("token_embd.weight", [n_embd, nv], Q.Q8_0)
    m.t("output_norm.weight", [n_embd], value=1.0)
    m.t("output.weight", [n_embd, nv], Q.Q8_0)
    for i in range(n_layer):
        p = f"blk.{i}."
        m.t(p + "attn_norm.weight", [n_embd], value=1.0)
        for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
            m.t(p + t + ".weight", [n_embd, n_embd], Q.Q8_0)
        m.t(p + "ffn_norm.weight", [n_embd], value=1.0)
        m.t(p + "ffn_gate.weight", [n_embd, n_ff], Q.Q4_0)
        m.t(p + "ffn_up.weight", [n_embd, n_ff], Q.Q4_0)
        m.t(p + "ffn_down.weight", [n_ff, n_embd], Q.Q4_0)
    m.finish()


def qwen2(path):
    """qwen2: q/k/v biases, tied embeddings (no output.weight), 4 heads / 2 KV heads, Q4_0."""
    n_embd, n_ff, n_head, n_kv, n_layer = 128, 256, 4, 2, 3
    hd = n_embd // n_head
    m = Model(path, "qwen2", 103)
    nv = m.common("oracle-qwen2", 4096, n_embd, n_layer, n_ff, n_head, n_kv, 2)  # 2 = Q4_0
    m.w.add_rope_freq_base(1000000.0)
    m.t("token_embd.weight", [n_embd, nv], Q.Q4_0)
    m.t("output_norm.weight", [n_embd], value=1.0)
    for i in range(n_layer):
        p = f"blk.{i}."
        m.t(p + "attn_norm.weight", [n_embd], value=1.0)
        m.t(p + "attn_q.weight", [n_embd, hd * n_head], Q.Q4_0)
        m.t(p + "attn_q.bias", [hd * n_head])
        m.t(p + "attn_k.weight", [n_embd, hd * n_kv], Q.Q4_0)
        m.t(p + "attn_k.bias", [hd * n_kv])
        m.t(p + "attn_v.weight", [n_embd, hd * n_kv], Q.Q4_0)
        m.t(p + "attn_v.bias", [hd * n_kv])
        m.t(p + "attn_output.weight", [hd * n_head, n_embd], Q.Q4_0)
        m.t(p + "ffn_norm.weight", [n_embd], value=1.0)
        m.t(p + "ffn_gate.weight", [n_embd, n_ff], Q.Q4_0)
        m.t(p + "ffn_up.weight", [n_embd, n_ff], Q.Q4_0)
        m.t(p + "ffn_down.weight", [n_ff, n_embd], Q.Q4_0)
    m.finish()


GEMMA3_SWA = 512


def gemma3(path):
    """gemma3: 6 layers so that llama.cpp's 5 local : 1 global pattern gives both kinds (sliding window 512),
    q/k norms, post-attention and post-FFN norms, tied embeddings, Q4_0."""
    n_embd, n_ff, n_head, n_kv, n_layer, hd = 128, 128, 4, 2, 6, 32
    m = Model(path, "gemma3", 104)
    nv = m.common("oracle-gemma3", 32768, n_embd, n_layer, n_ff, n_head, n_kv, 2)
    m.w.add_key_length(hd)
    m.w.add_value_length(hd)
    m.w.add_rope_freq_base(1000000.0)
    m.w.add_sliding_window(GEMMA3_SWA)
    m.t("token_embd.weight", [n_embd, nv], Q.Q4_0)
    m.t("output_norm.weight", [n_embd], value=0.0)  # gemma norms are (1 + w)
    for i in range(n_layer):
        p = f"blk.{i}."
        m.t(p + "attn_norm.weight", [n_embd], value=0.0)
        m.t(p + "attn_q.weight", [n_embd, hd * n_head], Q.Q4_0)
        m.t(p + "attn_q_norm.weight", [hd], value=0.0)
        m.t(p + "attn_k.weight", [n_embd, hd * n_kv], Q.Q4_0)
        m.t(p + "attn_k_norm.weight", [hd], value=0.0)
        m.t(p + "attn_v.weight", [n_embd, hd * n_kv], Q.Q4_0)
        m.t(p + "attn_output.weight", [hd * n_head, n_embd], Q.Q4_0)
        m.t(p + "post_attention_norm.weight", [n_embd], value=0.0)
        m.t(p + "ffn_norm.weight", [n_embd], value=0.0)
        m.t(p + "ffn_gate.weight", [n_embd, n_ff], Q.Q4_0)
        m.t(p + "ffn_up.weight", [n_embd, n_ff], Q.Q4_0)
        m.t(p + "ffn_down.weight", [n_ff, n_embd], Q.Q4_0)
        m.t(p + "post_ffw_norm.weight", [n_embd], value=0.0)
    m.finish()


def qwen3moe(path):
    """qwen3moe: 4 experts, 2 used per token, q/k norms, Q4_0 experts."""
    n_embd, n_head, n_kv, n_layer, hd = 128, 4, 2, 2, 32
    n_expert, n_used, n_ff_exp = 4, 2, 128
    m = Model(path, "qwen3moe", 105)
    nv = m.common("oracle-qwen3moe", 4096, n_embd, n_layer, n_ff_exp, n_head, n_kv, 2)
    m.w.add_key_length(hd)
    m.w.add_value_length(hd)
    m.w.add_rope_freq_base(1000000.0)
    m.w.add_expert_count(n_expert)
    m.w.add_expert_used_count(n_used)
    m.w.add_expert_feed_forward_length(n_ff_exp)
    m.t("token_embd.weight", [n_embd, nv], Q.Q4_0)
    m.t("output_norm.weight", [n_embd], value=1.0)
    m.t("output.weight", [n_embd, nv], Q.Q8_0)
    for i in range(n_layer):
        p = f"blk.{i}."
        m.t(p + "attn_norm.weight", [n_embd], value=1.0)
        m.t(p + "attn_q.weight", [n_embd, hd * n_head], Q.Q4_0)
        m.t(p + "attn_q_norm.weight", [hd], value=1.0)
        m.t(p + "attn_k.weight", [n_embd, hd * n_kv], Q.Q4_0)
        m.t(p + "attn_k_norm.weight", [hd], value=1.0)
        m.t(p + "attn_v.weight", [n_embd, hd * n_kv], Q.Q4_0)
        m.t(p + "attn_output.weight", [hd * n_head, n_embd], Q.Q4_0)
        m.t(p + "ffn_norm.weight", [n_embd], value=1.0)
        m.t(p + "ffn_gate_inp.weight", [n_embd, n_expert])
        m.t(p + "ffn_gate_exps.weight", [n_embd, n_ff_exp, n_expert], Q.Q4_0)
        m.t(p + "ffn_up_exps.weight", [n_embd, n_ff_exp, n_expert], Q.Q4_0)
        m.t(p + "ffn_down_exps.weight", [n_ff_exp, n_embd, n_expert], Q.Q4_0)
    m.finish()


LFM2_KV = [0, 0, 2, 0]  # KV heads per layer: 0 = short-convolution (recurrent) layer


def lfm2(path):
    """lfm2: hybrid memory, short-convolution (recurrent state) layers plus attention layers (head_count_kv per
    layer, 0 on the convolution layers); q/k norms, token_embd_norm as the final norm, tied embeddings, Q4_0."""
    n_embd, n_ff, n_head, n_layer, l_cache = 128, 256, 4, len(LFM2_KV), 3
    hd = n_embd // n_head
    m = Model(path, "lfm2", 106)
    nv = m.common("oracle-lfm2", 4096, n_embd, n_layer, n_ff, n_head, LFM2_KV, 2)
    m.w.add_rope_freq_base(1000000.0)
    m.key("shortconv.l_cache", l_cache)
    m.t("token_embd.weight", [n_embd, nv], Q.Q4_0)
    m.t("token_embd_norm.weight", [n_embd], value=1.0)
    for i, n_kv in enumerate(LFM2_KV):
        p = f"blk.{i}."
        m.t(p + "attn_norm.weight", [n_embd], value=1.0)
        if n_kv:
            m.t(p + "attn_q.weight", [n_embd, hd * n_head], Q.Q4_0)
            m.t(p + "attn_q_norm.weight", [hd], value=1.0)
            m.t(p + "attn_k.weight", [n_embd, hd * n_kv], Q.Q4_0)
            m.t(p + "attn_k_norm.weight", [hd], value=1.0)
            m.t(p + "attn_v.weight", [n_embd, hd * n_kv], Q.Q4_0)
            m.t(p + "attn_output.weight", [hd * n_head, n_embd], Q.Q4_0)
        else:
            m.t(p + "shortconv.conv.weight", [l_cache, n_embd])
            m.t(p + "shortconv.in_proj.weight", [n_embd, 3 * n_embd], Q.Q4_0)
            m.t(p + "shortconv.out_proj.weight", [n_embd, n_embd], Q.Q4_0)
        m.t(p + "ffn_norm.weight", [n_embd], value=1.0)
        m.t(p + "ffn_gate.weight", [n_embd, n_ff], Q.Q4_0)
        m.t(p + "ffn_up.weight", [n_embd, n_ff], Q.Q4_0)
        m.t(p + "ffn_down.weight", [n_ff, n_embd], Q.Q4_0)
    m.finish()


def deepseek2(path):
    """deepseek2 with multi-head latent attention (MLA): the cache holds one compressed K row a token
    (kv_lora_rank + the rope dimensions) and no V, whatever n_embd_v_gqa says; one dense lead layer, then MoE
    with a shared expert; Q8_0."""
    n_embd, n_head, n_layer = 128, 4, 2
    kv_lora, rope, nope, v_head = 64, 32, 32, 32  # K row 96: q8_0 and q4_0 blocks of 32 divide it
    n_expert, n_used, n_ff_exp, n_ff = 4, 2, 64, 256
    m = Model(path, "deepseek2", 107)
    # MLA as converted today: one KV head of kv_lora + rope for K and kv_lora for V, the per-head sizes as *_mla.
    nv = m.common("oracle-deepseek2-mla", 4096, n_embd, n_layer, n_ff, n_head, 1, 7)  # 7 = Q8_0
    m.w.add_key_length(kv_lora + rope)
    m.w.add_value_length(kv_lora)
    m.key("attention.key_length_mla", nope + rope)
    m.key("attention.value_length_mla", v_head)
    m.key("attention.kv_lora_rank", kv_lora)
    m.key("attention.q_lora_rank", 0)  # no Q compression: attn_q as is (llama.cpp requires the key)
    m.w.add_rope_dimension_count(rope)
    m.key("leading_dense_block_count", 1)
    m.w.add_expert_count(n_expert)
    m.w.add_expert_used_count(n_used)
    m.w.add_expert_feed_forward_length(n_ff_exp)
    m.key("expert_shared_count", 1)
    m.key("expert_weights_scale", 1.0)
    m.t("token_embd.weight", [n_embd, nv], Q.Q8_0)
    m.t("output_norm.weight", [n_embd], value=1.0)
    m.t("output.weight", [n_embd, nv], Q.Q8_0)
    for i in range(n_layer):
        p = f"blk.{i}."
        m.t(p + "attn_norm.weight", [n_embd], value=1.0)
        m.t(p + "attn_kv_a_norm.weight", [kv_lora], value=1.0)
        m.t(p + "attn_q.weight", [n_embd, n_head * (nope + rope)], Q.Q8_0)
        m.t(p + "attn_kv_a_mqa.weight", [n_embd, kv_lora + rope], Q.Q8_0)
        m.t(p + "attn_k_b.weight", [nope, kv_lora, n_head], Q.Q8_0)
        m.t(p + "attn_v_b.weight", [kv_lora, v_head, n_head], Q.Q8_0)
        m.t(p + "attn_output.weight", [n_head * v_head, n_embd], Q.Q8_0)
        m.t(p + "ffn_norm.weight", [n_embd], value=1.0)
        if i < 1:
            m.t(p + "ffn_gate.weight", [n_embd, n_ff], Q.Q8_0)
            m.t(p + "ffn_up.weight", [n_embd, n_ff], Q.Q8_0)
            m.t(p + "ffn_down.weight", [n_ff, n_embd], Q.Q8_0)
        else:
            m.t(p + "ffn_gate_inp.weight", [n_embd, n_expert])
            m.t(p + "ffn_gate_exps.weight", [n_embd, n_ff_exp, n_expert], Q.Q8_0)
            m.t(p + "ffn_up_exps.weight", [n_embd, n_ff_exp, n_expert], Q.Q8_0)
            m.t(p + "ffn_down_exps.weight", [n_ff_exp, n_embd, n_expert], Q.Q8_0)
            m.t(p + "ffn_gate_shexp.weight", [n_embd, n_ff_exp], Q.Q8_0)
            m.t(p + "ffn_up_shexp.weight", [n_embd, n_ff_exp], Q.Q8_0)
            m.t(p + "ffn_down_shexp.weight", [n_ff_exp, n_embd], Q.Q8_0)
    m.finish()


MODELS = {
    "llama-gqa": llama_gqa,
    "llama-mha": llama_mha,
    "qwen2": qwen2,
    "gemma3": gemma3,
    "qwen3moe": qwen3moe,
    "lfm2": lfm2,
    "deepseek2": deepseek2,
}


def write(out_dir, names=None):
    """Write the models named (all by default) into out_dir; return {name: path}."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, fn in MODELS.items():
        if names and name not in names:
            continue
        path = out_dir / f"{name}.gguf"
        fn(path)
        paths[name] = path
    return paths


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for name, path in write(sys.argv[1], sys.argv[2:]).items():
        print(f"{path}  {path.stat().st_size} bytes")
