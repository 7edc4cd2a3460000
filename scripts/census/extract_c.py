"""Every logging call of llama.cpp's C/C++/Objective-C sources, with its format string as the source writes it.

A call is one of llama.cpp's logging macros (`LLAMA_LOG_*`, `GGML_LOG_*`, `GGML_METAL_LOG_*`, `LOG_*`, the
server's `SRV_*`/`SLT_*`/`QUE_*`) or `fprintf(stderr, …)`. Its format is the adjacent string literals of its first
argument, with `PRId64`-style macros spelled as the `%lld` they expand to. `__func__` arguments are resolved to
the enclosing function's name, which is what llama.cpp prints in front of most of its lines (`llama_kv_cache: …`).
"""

import re

MACRO = re.compile(
    r"\b(LLAMA_LOG_(?:INFO|WARN|ERROR|DEBUG|CONT)|GGML_LOG_(?:INFO|WARN|ERROR|DEBUG|CONT)|"
    r"GGML_METAL_LOG_(?:INFO|WARN|ERROR|DEBUG)|LOG_(?:INF|WRN|ERR|DBG|CNT|INFO|WARN|ERROR|TEE)|"
    r"(?:SRV|SLT|QUE)_(?:INF|WRN|ERR|DBG)|fprintf\s*\(\s*stderr\s*,)\s*"
)
LEVEL = {"INFO": "INFO", "INF": "INFO", "WARN": "WARN", "WRN": "WARN", "ERROR": "ERROR", "ERR": "ERROR",
         "DEBUG": "DEBUG", "DBG": "DEBUG", "CONT": "CONT", "CNT": "CONT", "TEE": "INFO"}
PRI = {"PRId64": "lld", "PRIi64": "lli", "PRIu64": "llu", "PRIx64": "llx", "PRId32": "d", "PRIu32": "u",
       "PRIi32": "i", "PRIx32": "x"}
KEYWORDS = {"if", "for", "while", "switch", "catch", "else", "do", "return", "sizeof"}


def _strip(src):
    """The source with comments blanked (same length), strings kept."""
    out, i, n = list(src), 0, len(src)
    while i < n:
        c = src[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            i = j + 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        else:
            i += 1
    return "".join(out)


def _functions(src):
    """(start, end, name) of every brace block whose header names a function."""
    blocks, stack, i, n, last = [], [], 0, len(src), 0
    while i < n:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            i = j + 1
            continue
        if c == "{":
            header = src[last:i]
            stack.append((i, _name(header)))
            last = i + 1
        elif c == "}":
            if stack:
                start, name = stack.pop()
                if name:
                    blocks.append((start, i, name))
            last = i + 1
        elif c == ";":
            last = i + 1
        i += 1
    return blocks


def _name(header):
    h = header.strip()
    if h.startswith("#"):
        h = h.split("\n")[-1]
    m = re.search(r"([A-Za-z_~][\w:~]*)\s*\((?:[^()]|\([^()]*\))*\)\s*(?:const\s*)?(?:override\s*)?(?:noexcept\s*)?"
                  r"(?::[^{}]*)?$", h, re.S)
    if not m:
        return None
    name = m.group(1).split("::")[-1]
    if name in KEYWORDS or h.rstrip().endswith(")") is False and ":" not in h:
        return None
    return name


def _arguments(src, i):
    """The top-level comma-separated arguments of a call whose '(' is at src[i]; returns (args, end)."""
    depth, j, start, args, n = 0, i, i + 1, [], len(src)
    while j < n:
        c = src[j]
        if c in "\"'":
            k = j + 1
            while k < n and src[k] != c:
                k += 2 if src[k] == "\\" else 1
            j = k + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(src[start:j].strip())
                return args, j
        elif c == "," and depth == 1:
            args.append(src[start:j].strip())
            start = j + 1
        j += 1
    return None, n


def _literal(arg):
    """The string a format argument spells (adjacent literals, PRI macros), or None."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|(\bPRI[diux](?:64|32)\b)|(\S+)', arg)
    out = []
    for lit, pri, other in parts:
        if other:
            return None
        out.append(PRI[pri] if pri else bytes(lit, "utf-8").decode("unicode_escape", errors="replace")
                   if "\\" in lit else lit)
    return "".join(out) if out else None


def calls(path, rel):
    src = _strip(path.read_text(encoding="utf-8", errors="replace"))
    funcs = _functions(src)
    for m in MACRO.finditer(src):
        macro = m.group(1)
        if macro.startswith("fprintf"):
            args, _ = _arguments(src, m.start() + macro.index("(") )
            args = args[1:] if args else None
            level = "ERROR"
        else:
            if m.end() >= len(src) or src[m.end()] != "(":
                continue
            args, _ = _arguments(src, m.end())
            level = LEVEL[macro.rsplit("_", 1)[1]]
        if not args:
            continue
        fmt = _literal(args[0])
        if fmt is None:
            continue
        enclosing = [b for b in funcs if b[0] < m.start() < b[1]]
        func = min(enclosing, key=lambda b: b[1] - b[0])[2] if enclosing else "<file>"
        yield {
            "format": fmt,
            "style": "printf",
            "level": level,
            "function": func,
            "file": rel,
            "args": [" ".join(a.split()) for a in args[1:]],
            "macro": macro.split("(")[0].strip(),
        }
