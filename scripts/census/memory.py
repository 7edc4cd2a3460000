"""Whether a log line speaks of memory in the issue's sense (issue 51): memory, KV cache, blocks or tokens of
cache, layers and offload, buffers, graphs, out-of-memory and allocation failures, and the units memory is printed
in. Two steps:

* `mentions` is a cheap test on a whole source file: a file that never mentions memory has no row to give, so it
  is not parsed at all (census.py).
* `is_memory_line` decides on one call, on its format's literal text (an f-string's expressions are names in the
  source, not printed words). A log call counts when its words speak of memory; a raised exception only when it
  says memory ran short or names the memory settings (`gpu_memory_utilization`, `--kv-cache-memory`,
  `mem_fraction`): a `ValueError` about an unsupported KV-cache dtype is a configuration error, not a memory line.
"""

import re

_BROAD = re.compile(
    r"memory|\bmem\b|\bvram\b|\boom\b|alloc|\b[KMG]i?B\b|bytes|kv[ _-]?cache|cache blocks?|offload|buffer|"
    r"working ?set|graph|\bpool\b|swap space|\blayers?\b|\bn_ctx\b|\bfree\b",
    re.I,
)

_WORDS = [
    r"memory", r"\bvram\b", r"out of memory", r"\boom\b", r"avail mem", r"mem usage", r"\bmem=",
    r"alloc(?:at(?:e|ed|ion|ing)|s)?\b", r"\b\d*\s*[KMGT]i?B\b", r"\bbytes\b",
    r"kv[ _-]?cache", r"cache blocks?", r"\b(?:gpu|cpu|cuda) blocks\b", r"#\s*(?:gpu|cpu|cuda) blocks",
    r"\bblocks?\b[^.]*\bcache\b", r"\bcache\b[^.]*\b(?:blocks?|tokens?)\b", r"#tokens",
    r"offload", r"buffer", r"working ?set", r"cuda ?graphs?", r"graph (?:capture|capturing|pool|memory)",
    r"capturing (?:the model for )?cuda ?graph", r"swap space", r"gpu_memory_utilization", r"mem_fraction",
    r"max_total_num_tokens", r"max_total_tokens", r"weights took", r"loading took",
]
_C_WORDS = _WORDS + [
    r"\blayers?\b[^.]*\b(?:gpu|offload|device|cpu|repeating)\b", r"\bcompute (?:buffer|graph)", r"\bgraph (?:nodes|splits)",
    r"\bn_ctx\b", r"\bkv_size\b", r"\bctx size\b", r"\bfit\b", r"\bmargin\b", r"\bfree\b", r"recommendedMaxWorkingSetSize",
    r"\bprojected\b",
]
_SHORT = re.compile(
    r"out of memory|\boom\b|not enough (?:\w+ )?memory|insufficient (?:\w+ )?memory|no available memory|"
    r"memory[^.]*(?:exceed|less than|smaller than|larger than|not enough|insufficient)|"
    r"(?:exceed|larger than|more than)[^.]*(?:memory|kv cache)|free memory|cannot allocate|"
    r"failed to allocate|allocation fail|unable to allocate|kv cache (?:memory|is needed|size)|"
    r"kv-cache-memory|gpu_memory_utilization|mem_fraction|max_total_tokens|no (?:free )?(?:gpu )?blocks",
    re.I,
)
_PY = re.compile("|".join(_WORDS), re.I)
_C = re.compile("|".join(_C_WORDS), re.I)


def mentions(text):
    """The cheap file-level test."""
    return bool(_BROAD.search(text))


def literal(fmt, style):
    """The words a format prints whatever its values: the text outside its `{…}` fields."""
    if style != "brace":
        return fmt
    out, depth = [], 0
    for ch in fmt.replace("{{", "\0").replace("}}", "\1"):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out).replace("\0", "{").replace("\1", "}")


def is_memory_line(fmt, style, level, runtime):
    text = literal(fmt, style)
    if level.startswith("raise "):
        return bool(_SHORT.search(text))
    return bool((_C if runtime == "llama.cpp" else _PY).search(text))
