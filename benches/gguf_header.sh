#!/usr/bin/env bash
# Benchmark `vramdiff inspect` on a model file of ~20 GB that costs nothing on disk: a realistic header (a
# 72B-class qwen2 layout: 40 layers, 8192 wide, Q4_K/Q6_K/F32 tensors, a 152 k-token vocabulary with its merges,
# ~4.5 MB of header in all) written by python3 (standard library only), then `truncate -s` to the size its
# tensors need — a sparse file whose data section is never read. Prints wall time (mean of N runs and the
# slowest) and peak RSS. Usage: bash benches/gguf_header.sh [RUNS] [BINARY] (default 20 runs,
# target/release/vramdiff, built if missing). Not a test: nothing asserts; docs/guide/inspect.md quotes the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
bin="${2:-target/release/vramdiff}"
if [ ! -x "$bin" ]; then
  cargo build --release --locked --quiet
fi
dir="target/bench-data"
mkdir -p "$dir"
model="$dir/sparse-20g.gguf"

python3 - "$model" <<'PY'
import struct, sys

path = sys.argv[1]
ALIGN = 32
# ggml type: (number, elements per block, bytes per block)
F32, Q4_K, Q6_K = (0, 1, 4), (12, 256, 144), (14, 256, 210)

def s(text):
    b = text.encode()
    return struct.pack("<Q", len(b)) + b

def kv(key, vtype, payload):
    return s(key) + struct.pack("<I", vtype) + payload

def u32(key, v): return kv(key, 4, struct.pack("<I", v))
def f32(key, v): return kv(key, 6, struct.pack("<f", v))
def string(key, v): return kv(key, 8, s(v))
def arr(key, etype, items, pack):
    return kv(key, 9, struct.pack("<IQ", etype, len(items)) + b"".join(pack(x) for x in items))

n_layer, n_embd, n_ff, n_head, n_head_kv, n_vocab = 40, 8192, 29568, 64, 8, 152064
meta = [
    string("general.architecture", "qwen2"),
    string("general.name", "Sparse benchmark model"),
    u32("general.file_type", 15),
    u32("qwen2.block_count", n_layer),
    u32("qwen2.context_length", 32768),
    u32("qwen2.embedding_length", n_embd),
    u32("qwen2.feed_forward_length", n_ff),
    u32("qwen2.attention.head_count", n_head),
    u32("qwen2.attention.head_count_kv", n_head_kv),
    f32("qwen2.rope.freq_base", 1000000.0),
    f32("qwen2.attention.layer_norm_rms_epsilon", 1e-6),
    string("tokenizer.ggml.model", "gpt2"),
    string("tokenizer.ggml.pre", "qwen2"),
    arr("tokenizer.ggml.tokens", 8, [f"tok{i:06d}" for i in range(n_vocab)], s),
    arr("tokenizer.ggml.token_type", 5, [1] * n_vocab, lambda x: struct.pack("<i", x)),
    arr("tokenizer.ggml.merges", 8, [f"m{i} {i}x" for i in range(151387)], s),
    u32("tokenizer.ggml.eos_token_id", 151645),
    string("tokenizer.chat_template", "{% for message in messages %}" * 150),
]

def shape_bytes(t, shape):
    _, block, size = t
    rows = 1
    for d in shape[1:]:
        rows *= d
    return shape[0] // block * size * rows

tensors = [("token_embd.weight", Q4_K, [n_embd, n_vocab])]
for i in range(n_layer):
    p = f"blk.{i}."
    tensors += [
        (p + "attn_norm.weight", F32, [n_embd]),
        (p + "attn_q.weight", Q4_K, [n_embd, n_embd]),
        (p + "attn_q.bias", F32, [n_embd]),
        (p + "attn_k.weight", Q4_K, [n_embd, n_embd // n_head * n_head_kv]),
        (p + "attn_k.bias", F32, [n_embd // n_head * n_head_kv]),
        (p + "attn_v.weight", Q6_K, [n_embd, n_embd // n_head * n_head_kv]),
        (p + "attn_v.bias", F32, [n_embd // n_head * n_head_kv]),
        (p + "attn_output.weight", Q4_K, [n_embd, n_embd]),
        (p + "ffn_norm.weight", F32, [n_embd]),
        (p + "ffn_gate.weight", Q4_K, [n_embd, n_ff]),
        (p + "ffn_up.weight", Q4_K, [n_embd, n_ff]),
        (p + "ffn_down.weight", Q6_K, [n_ff // 256 * 256 if n_ff % 256 else n_ff, n_embd]),
    ]
tensors += [("output_norm.weight", F32, [n_embd]), ("output.weight", Q6_K, [n_embd, n_vocab])]

infos, offset = [], 0
for name, t, shape in tensors:
    infos.append(s(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in shape)
                 + struct.pack("<IQ", t[0], offset))
    offset += -(-shape_bytes(t, shape) // ALIGN) * ALIGN

header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)) + b"".join(meta) + b"".join(infos)
header += b"\0" * (-len(header) % ALIGN)
with open(path, "wb") as f:
    f.write(header)
    f.truncate(len(header) + offset)
print(f"{path}: {len(tensors)} tensors, header {len(header) / 1e6:.1f} MB, file {(len(header) + offset) / 1e9:.1f} GB (sparse)")
PY
du -h --apparent-size "$model" | cut -f1 | sed 's/^/apparent size: /'
du -h "$model" | cut -f1 | sed 's/^/on disk: /'

"$bin" inspect "$model" | head -n 4
total=0
worst=0
peak=0
for _ in $(seq "$runs"); do
  /usr/bin/time -f '%M' -o "$dir/time" "$bin" inspect --format json "$model" > /dev/null
  start=$(date +%s%N)
  "$bin" inspect --format json "$model" > /dev/null
  ns=$(( $(date +%s%N) - start ))
  total=$(( total + ns ))
  [ "$ns" -gt "$worst" ] && worst=$ns
  rss=$(cat "$dir/time")
  [ "$rss" -gt "$peak" ] && peak=$rss
done
awk -v t="$total" -v n="$runs" -v w="$worst" -v r="$peak" 'BEGIN {
  printf "inspect --format json: mean %.1f ms, slowest %.1f ms over %d runs; peak RSS %.1f MB\n", t / n / 1e6, w / 1e6, n, r / 1024 }'
rm -f "$dir/time"
