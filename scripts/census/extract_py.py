"""Every logging call (and every raised exception's message) of a Python runtime's sources, with its format string
as the source writes it.

A call is `<something named *log*>.<level>(…)` (`logger.info`, `logger.warning_once`, `self.logger.debug`, …) or
vLLM's `print_warning_once(…)`; a raise is `raise SomeError(<string>)`. Its format is its first argument when that
is a string the source spells out: a literal (`%`-style, the logging module's lazy arguments), an f-string
(kept as `{expression:spec}`), `"…".format(…)`, `"…" % (…)` or a `+` of those. Anything else (a variable, a
call) has no format to read and is left out, counted as such.
"""

import ast
import warnings

LEVELS = {
    "debug": "DEBUG", "info": "INFO", "warning": "WARNING", "warn": "WARNING", "error": "ERROR",
    "exception": "ERROR", "critical": "CRITICAL", "fatal": "CRITICAL", "info_once": "INFO",
    "warning_once": "WARNING", "debug_once": "DEBUG", "error_once": "ERROR",
}
FUNCTIONS = {"print_warning_once": "WARNING", "print_info_once": "INFO"}


def _is_logger(node):
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return "log" in name.lower()


class _NoFormat(Exception):
    pass


def _format(node, src):
    """(style, format) of a message expression; style is 'printf', 'brace' or 'literal'."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "printf", node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(v.value.replace("{", "{{").replace("}", "}}"))
            else:
                expr = ast.unparse(v.value)
                conv = "" if v.conversion == -1 else "!" + chr(v.conversion)
                spec = ""
                if v.format_spec is not None:
                    spec = ":" + "".join(
                        p.value if isinstance(p, ast.Constant) else "{" + ast.unparse(p.value) + "}"
                        for p in v.format_spec.values
                    )
                parts.append("{" + " ".join(expr.split()) + conv + spec + "}")
        return "brace", "".join(parts)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        return "brace", node.func.value.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _format(node.left, src)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        ls, lf = _format(node.left, src)
        rs, rf = _format(node.right, src)
        if ls != rs:
            # a literal beside an f-string: the literal has no placeholders unless it holds '%'
            if ls == "printf" and "%" not in lf:
                return rs, lf.replace("{", "{{").replace("}", "}}") + rf
            if rs == "printf" and "%" not in rf:
                return ls, lf + rf.replace("{", "{{").replace("}", "}}")
            raise _NoFormat
        return ls, lf + rf
    raise _NoFormat


def _assignments(func):
    """name -> [(line, value)] of the plain `name = <expression>` assignments in a function's body."""
    out = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out.setdefault(node.targets[0].id, []).append((node.lineno, node.value))
    for values in out.values():
        values.sort(key=lambda lv: lv[0])
    return out


def _args(call, src, skip):
    out = []
    for a in call.args[skip:]:
        out.append(" ".join(ast.unparse(a).split()))
    return out


def calls(path, rel):
    """Yield dicts (format, style, level, function, file, args) for every log call and raise in one file."""
    src = path.read_text(encoding="utf-8-sig", errors="replace")  # a BOM (qwen2_classification.py) is no syntax error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(src)
        except SyntaxError:
            yield {"unparsed": rel}
            return

    def visit(node, scope, names):
        for child in ast.iter_child_nodes(node):
            inner, inner_names = scope, names
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = scope + [child.name]
                inner_names = _assignments(child)
            if isinstance(child, ast.Call):
                yield from one_call(child, scope, names)
            elif isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call) and child.exc.args:
                name = child.exc.func
                exc = name.attr if isinstance(name, ast.Attribute) else getattr(name, "id", "")
                if exc:
                    yield from message(resolve(child.exc.args[0], child, names), child.exc, f"raise {exc}", scope, 1)
            yield from visit(child, inner, inner_names)

    def resolve(arg, at, names):
        """A message held in a variable (`msg = f"…"; logger.info(msg)`, vLLM's memory profile of 0.6–0.8): the
        last string the function assigned to it before the call."""
        if isinstance(arg, ast.Name):
            before = [v for line, v in names.get(arg.id, []) if line < at.lineno]
            if before:
                return before[-1]
        return arg

    def one_call(call, scope, names):
        f = call.func
        level = None
        if isinstance(f, ast.Attribute) and f.attr in LEVELS and _is_logger(f.value):
            level = LEVELS[f.attr]
        elif isinstance(f, ast.Name) and f.id in FUNCTIONS:
            level = FUNCTIONS[f.id]
        if level and call.args:
            yield from message(resolve(call.args[0], call, names), call, level, scope, 1)

    def message(node, call, level, scope, skip):
        try:
            style, fmt = _format(node, src)
        except _NoFormat:
            return
        args = _args(call, src, skip) if style == "printf" else []
        if style == "printf" and isinstance(node, ast.Constant) and (level.startswith("raise") or not args):
            style = "literal"  # no arguments: logging prints the text as it is, '%' and all
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            r = node.right
            args = _args(ast.Call(func=None, args=list(r.elts) if isinstance(r, ast.Tuple) else [r]), src, 0)
        if style == "brace" and isinstance(node, ast.Call):
            args = _args(node, src, 0)
        yield {
            "format": fmt,
            "style": style,
            "level": level,
            "function": ".".join(scope) or "<module>",
            "file": rel,
            "args": args,
        }

    yield from visit(tree, [], {})
