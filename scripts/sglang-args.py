#!/usr/bin/env python3
"""Writes SGLang's server command line as a table: one argparse action a line.

    python3 scripts/sglang-args.py SGLANG/python/sglang/srt [-o FILE] [--commits FILE]

It reads SGLang's source with `ast` and imports nothing of it, so it needs no
torch, no msgspec and no GPU: only Python 3's standard library. It follows the
rules SGLang's own code follows to build its parser:

- `ServerArgs.add_cli_args` (python/sglang/srt/server_args.py) calls
  `add_cli_args_from_dataclass` (arg_groups/arg_utils.py) first, then registers
  a few options by hand: those whose choices are computed, `--config`, and the
  deprecated spellings (arg_groups/argparse_actions.py), in that order.
- The dataclass's fields are those of the namespace classes listed in
  `_INPUT_NAMESPACES` (server_args.py), in the order `collect_input_fields`
  (arg_groups/fields/__init__.py) gives them: the names of
  `POSITIONAL_FIELD_ORDER` (arg_groups/field_order.py) first, then the rest in
  declaration order. A source whose `ServerArgs` declares its fields itself is
  read the same way.
- A field is an option when its annotation is `A[T, "help"]` or
  `A[T, Arg(...)]` without `no_cli`: `--name-with-dashes` (or `cli_name`) and
  its `aliases`; an `action` wins over everything; then `Literal[...]` gives
  closed choices; `List[X]` gives nargs "+" unless a `type_parser` is set;
  `bool` is store_true; anything else takes one value, required when the field
  has no default.

Options whose choices depend on the environment are written as they are with
no environment set (an `if` in `add_cli_args` is skipped). A Python set of
choices is written in its source order: argparse lists a set in hash order,
which changes from run to run.

The table (tab-separated, '#' lines are comments):

  options     the option strings, space-separated (BooleanOptionalAction adds
              --no-X for each --X itself)
  kind        flag (no value), boolopt (BooleanOptionalAction), value (one),
              optional (nargs "?"), list (nargs "+"), list* (nargs "*")
  dest        where argparse stores the value
  type        int, float, str, the name of SGLang's own type function (which
              the sim does not run), or - for a flag
  choices     comma-separated closed choices, or -
  deprecated  - ; "=NEW" for an action that warns "... Use 'NEW' instead.";
              "?" for DeprecatedAction's generic warning; "!MESSAGE" for a
              DeprecatedAction that refuses the option with MESSAGE
  hidden      y when help=argparse.SUPPRESS
  required    y when argparse requires the option
  help        the help text, with \\, tab and newline escaped as \\\\, \\t, \\n
"""

import argparse
import ast
import os
import subprocess
import sys

COLUMNS = ["options", "kind", "dest", "type", "choices", "deprecated", "hidden", "required", "help"]

# The files read, relative to python/sglang/srt, for the header. The rules
# followed are in arg_utils.py and argparse_actions.py, which are not parsed
# (their behaviour is this script) but are named so that a change there is
# looked at.
RULE_FILES = ["arg_groups/arg_utils.py", "arg_groups/argparse_actions.py"]

ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "IntFlag", "Flag"}


class Unresolved(Exception):
    """A name or expression the reader cannot evaluate statically."""


class Func:
    """A function defined in SGLang's source, referred to by name."""

    def __init__(self, name, doc):
        self.name, self.doc = name, doc

    def __repr__(self):
        return self.name


class Marker:
    """argparse.SUPPRESS, an action class, a builtin type: compared by name."""

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Marker) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return self.name


class EnumMember:
    def __init__(self, name, value):
        self.name, self.value = name, value


SUPPRESS = Marker("argparse.SUPPRESS")
BUILTIN_TYPES = {"str": Marker("str"), "int": Marker("int"), "float": Marker("float"), "bool": Marker("bool")}


class Source:
    """The SGLang source tree under python/: modules parsed on demand."""

    def __init__(self, srt):
        self.srt = os.path.abspath(srt)
        self.root = os.path.dirname(os.path.dirname(self.srt))  # .../python
        self.modules = {}
        self.used = []

    def path_of(self, dotted):
        base = os.path.join(self.root, *dotted.split("."))
        for p in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(p):
                return p
        return None

    def module(self, path):
        if path not in self.modules:
            with open(path, encoding="utf-8") as f:
                self.modules[path] = Module(self, path, ast.parse(f.read(), path))
            self.used.append(path)
        return self.modules[path]

    def module_dotted(self, dotted):
        p = self.path_of(dotted)
        if p is None:
            raise Unresolved(f"module {dotted} not found under {self.root}")
        return self.module(p)


class Module:
    def __init__(self, src, path, tree):
        self.src, self.path, self.tree = src, path, tree
        self.imports = {}  # local name -> (module, attribute)
        self.defs = {}  # top-level name -> node (last binding wins)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.imports[a.asname or a.name] = (node.module, a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    self.imports[a.asname or a.name] = (a.name, None)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.defs[node.name] = node
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.defs[t.id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.defs[node.target.id] = node.value

    def where(self, node):
        return f"{os.path.relpath(self.path, self.src.root)}:{getattr(node, 'lineno', '?')}"

    def lookup(self, name):
        """The value of a module-level name, following imports into the tree."""
        if name in self.defs:
            node = self.defs[name]
            if isinstance(node, ast.FunctionDef):
                return Func(name, ast.get_docstring(node, clean=False))
            if isinstance(node, ast.ClassDef):
                return ClassRef(self, node)
            return self.eval(node, {})
        if name in self.imports:
            mod, attr = self.imports[name]
            if mod == "argparse" or mod.split(".")[0] not in ("sglang",):
                return Marker(f"{mod}.{attr}" if attr else mod)
            if attr is None:
                return Marker(mod)
            sub = self.src.path_of(f"{mod}.{attr}")
            if sub is not None:
                return Marker(f"{mod}.{attr}")
            return self.src.module_dotted(mod).lookup(attr)
        if name in BUILTIN_TYPES:
            return BUILTIN_TYPES[name]
        raise Unresolved(f"{os.path.relpath(self.path, self.src.root)}: name {name} not found")

    def eval(self, node, local, cls=None):
        """Evaluates a constant expression of SGLang's source."""
        ev = lambda n: self.eval(n, local, cls)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.JoinedStr):
            out = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    out.append(v.value)
                else:
                    val = ev(v.value)
                    if v.format_spec is not None:
                        raise Unresolved(f"{self.where(node)}: format spec")
                    out.append(repr(val) if v.conversion == ord("r") else str(val))
            return "".join(out)
        if isinstance(node, ast.BinOp):
            left, right = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.Pow):
                return left**right
            raise Unresolved(f"{self.where(node)}: operator")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [ev(e) for e in node.elts]
        if isinstance(node, ast.Set):
            return [ev(e) for e in node.elts]  # source order: see the docstring
        if isinstance(node, ast.Dict):
            return {ev(k): None for k in node.keys}  # values are classes: not needed
        if isinstance(node, ast.Name):
            if node.id in local:
                return local[node.id]
            if cls is not None and node.id in cls.attrs:
                return cls.attr(node.id)
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "argparse":
                return SUPPRESS if node.attr == "SUPPRESS" else Marker("argparse." + node.attr)
            base = ev(node.value)
            if isinstance(base, ClassRef):
                return base.attr(node.attr)
            if isinstance(base, Func) and node.attr == "__doc__":
                return base.doc
            if isinstance(base, EnumMember) and node.attr in ("name", "value"):
                return getattr(base, node.attr)
            if isinstance(base, Marker):
                return Marker(f"{base.name}.{node.attr}")
            if isinstance(base, (dict, str)):
                return BoundMethod(base, node.attr)
            raise Unresolved(f"{self.where(node)}: attribute {node.attr}")
        if isinstance(node, ast.Call):
            args = [ev(a) for a in node.args]
            if isinstance(node.func, ast.Name) and node.func.id in ("list", "set") and len(args) == 1:
                return list(args[0])
            fn = ev(node.func)
            if isinstance(fn, BoundMethod):
                return fn.call(args)
            raise Unresolved(f"{self.where(node)}: call")
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            gen = node.generators[0]
            if not isinstance(gen.target, ast.Name) or gen.ifs:
                raise Unresolved(f"{self.where(node)}: comprehension")
            it = ev(gen.iter)
            items = it.members() if isinstance(it, ClassRef) else it
            return [self.eval(node.elt, {**local, gen.target.id: x}, cls) for x in items]
        raise Unresolved(f"{self.where(node)}: {type(node).__name__}")


class BoundMethod:
    def __init__(self, obj, name):
        self.obj, self.name = obj, name

    def call(self, args):
        if isinstance(self.obj, dict) and self.name == "keys":
            return list(self.obj.keys())
        if isinstance(self.obj, str) and self.name in ("lower", "upper"):
            return getattr(self.obj, self.name)()
        raise Unresolved(f"method {self.name}")


class ClassRef:
    """A class of SGLang's source: its class-level assignments."""

    def __init__(self, mod, node):
        self.mod, self.node = mod, node
        self.attrs = {}
        for st in node.body:
            if isinstance(st, ast.Assign):
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        self.attrs[t.id] = st.value
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
                self.attrs[st.target.id] = st.value

    def attr(self, name):
        if name not in self.attrs:
            raise Unresolved(f"{self.mod.where(self.node)}: {self.node.name}.{name}")
        return self.mod.eval(self.attrs[name], {}, self)

    def members(self):
        bases = {b.id for b in self.node.bases if isinstance(b, ast.Name)}
        if not bases & ENUM_BASES:
            raise Unresolved(f"{self.mod.where(self.node)}: not an enum")
        return [EnumMember(k, self.mod.eval(v, {}, self)) for k, v in self.attrs.items() if not k.startswith("_")]


class Action:
    """One argparse action as the table writes it."""

    def __init__(self, options, kind, dest, typ, choices=None, deprecated="-", hidden=False,
                 required=False, help=""):
        self.options, self.kind, self.dest, self.typ = options, kind, dest, typ
        self.choices, self.deprecated, self.hidden = choices, deprecated, hidden
        self.required, self.help = required, help

    def row(self):
        def esc(s):
            return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")

        choices = "-"
        if self.choices is not None:
            vals = [str(c) for c in self.choices]
            for v in vals:
                if "," in v or "\t" in v or not v:
                    raise ValueError(f"{self.options[0]}: choice {v!r} cannot be written")
            choices = ",".join(vals)
        return "\t".join([
            " ".join(self.options), self.kind, self.dest, self.typ, choices, esc(self.deprecated),
            "y" if self.hidden else "n", "y" if self.required else "n", esc(self.help or ""),
        ])


def type_name(t):
    if t is None:
        return "-"
    if isinstance(t, Marker):
        return t.name.replace("builtins.", "")
    if isinstance(t, Func):
        return t.name
    raise ValueError(f"type {t!r}")


def kind_of(nargs):
    return {None: "value", "+": "list", "*": "list*", "?": "optional"}[nargs]


def unwrap_annotated(mod, ann):
    """The inner type node and the Arg keywords (or None) of A[T, ...]."""
    if not (isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) and ann.value.id in ("A", "Annotated")):
        return None, None
    elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    inner = elts[0]
    for meta in elts[1:]:
        if isinstance(meta, ast.Call) and isinstance(meta.func, ast.Name) and meta.func.id == "Arg":
            return inner, {k.arg: k.value for k in meta.keywords}
        try:
            val = mod.eval(meta, {})
        except Unresolved:
            continue
        if isinstance(val, str):
            return inner, {"help": meta}
    return inner, None


def subscript_parts(node):
    """(origin name, [argument nodes]) of X[...], else (name, [])."""
    if isinstance(node, ast.Subscript):
        base = node.value
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return name, args
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return "Union", [node.left, node.right]
    if isinstance(node, ast.Name):
        return node.id, []
    if isinstance(node, ast.Constant) and node.value is None:
        return "None", []
    if isinstance(node, ast.Attribute):
        return node.attr, []
    return None, []


def unwrap_optional(node):
    name, args = subscript_parts(node)
    if name == "Optional":
        return args[0]
    if name == "Union":
        non_none = [a for a in args if subscript_parts(a)[0] != "None"]
        if len(non_none) == 1:
            return non_none[0]
    return node


def infer_type(name):
    return BUILTIN_TYPES.get(name, BUILTIN_TYPES["str"]) if name in ("str", "int", "float") else BUILTIN_TYPES["str"]


def field_action(mod, name, ann, has_default):
    """The action add_cli_args_from_dataclass registers for a field, or None."""
    raw, meta = unwrap_annotated(mod, ann)
    if meta is None:
        return None
    arg = {}
    for k, v in meta.items():
        if k == "action":
            continue
        try:
            arg[k] = mod.eval(v, {})
        except Unresolved:
            # A type function defined in a file this tree lacks: argparse
            # only shows its name, which is what the table keeps.
            if k != "type_parser" or not isinstance(v, ast.Name):
                raise
            arg[k] = Func(v.id, None)
    if arg.get("no_cli"):
        return None
    cli = arg.get("cli_name") or "--" + name.replace("_", "-")
    options = [cli] + list(arg.get("aliases") or [])
    dest = name
    help_ = arg.get("help", "")
    hidden = help_ == SUPPRESS
    if hidden:
        help_ = ""
    where = mod.where(ann)

    if "action" in meta:
        # An action class is known by its name: LoRAPathAction stores a list
        # like nargs "*", BooleanOptionalAction adds --no-X.
        node = meta["action"]
        action = Marker(node.id) if isinstance(node, ast.Name) else mod.eval(node, {})
        kw = arg.get("action_kwargs") or {}
        if isinstance(meta.get("action_kwargs"), ast.Dict):
            kw = {mod.eval(k, {}): mod.eval(v, {}) for k, v in zip(meta["action_kwargs"].keys, meta["action_kwargs"].values)}
        if action == Marker("argparse.BooleanOptionalAction"):
            return Action(options, "boolopt", dest, "-", hidden=hidden, help=help_)
        nargs = kw.get("nargs")
        return Action(options, kind_of(nargs), dest, type_name(kw.get("type", BUILTIN_TYPES["str"])),
                      choices=kw.get("choices"), hidden=hidden, help=help_)

    inner = unwrap_optional(raw)
    origin, targs = subscript_parts(inner)
    tparser = arg.get("type_parser")
    if origin == "Literal":
        lits = [mod.eval(a, {}) for a in targs]
        choices = arg.get("choices") or lits
        first = lits[0] if lits else ""
        t = tparser or infer_type(type(first).__name__)
        return Action(options, kind_of(arg.get("nargs")), dest, type_name(t), choices=choices, hidden=hidden, help=help_)
    if origin in ("List", "list") and tparser is None:
        elem = subscript_parts(targs[0])[0] if targs else "str"
        return Action(options, kind_of(arg.get("nargs") or "+"), dest, type_name(infer_type(elem)),
                      choices=arg.get("choices"), hidden=hidden, help=help_)
    if origin == "bool":
        return Action(options, "flag", dest, "-", hidden=hidden, help=help_)
    t = tparser or infer_type(origin)
    required = arg.get("required") is True or (arg.get("required") is None and not has_default)
    return Action(options, kind_of(arg.get("nargs")), dest, type_name(t), choices=arg.get("choices"),
                  hidden=hidden, required=required, help=help_)


def namespace_fields(src, mod, cls_node):
    """[(module, name, annotation, has_default)] of a class body, in order."""
    out = []
    for st in cls_node.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            out.append((mod, st.target.id, st.annotation, st.value is not None))
    return out


def find_class(mod, name):
    for node in mod.tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def server_fields(src, sa):
    """The ServerArgs fields in collect_input_fields' order."""
    namespaces = sa.defs.get("_INPUT_NAMESPACES")
    fields = []
    if isinstance(namespaces, ast.List):
        for n in namespaces.elts:
            modname, attr = sa.imports[n.id]
            m = src.module_dotted(modname)
            fields += namespace_fields(src, m, find_class(m, attr))
        order_path = src.path_of("sglang.srt.arg_groups.field_order")
        if order_path:
            order = src.module(order_path).lookup("POSITIONAL_FIELD_ORDER")
            by_name = {f[1]: f for f in fields}
            known = [by_name[n] for n in order if n in by_name]
            rest = [f for f in fields if f[1] not in set(order)]
            fields = known + rest
    else:
        fields = namespace_fields(src, sa, find_class(sa, "ServerArgs"))
    return fields


def hand_action(mod, call, local):
    """The action of a parser.add_argument(...) call in add_cli_args."""
    options = [mod.eval(a, local) for a in call.args]
    kw = {k.arg: k.value for k in call.keywords}
    val = lambda k, d=None: mod.eval(kw[k], local) if k in kw else d  # noqa: E731
    node = kw.get("action")
    action = Marker(node.id) if isinstance(node, ast.Name) else val("action")
    dest = val("dest") or next(o for o in options if o.startswith("--"))[2:].replace("-", "_")
    help_ = val("help", "")
    hidden = help_ == SUPPRESS
    if hidden:
        help_ = ""
    choices = val("choices")
    nargs = val("nargs")
    typ = type_name(val("type")) if "type" in kw else "str"
    deprecated = "-"
    name = action.name.split(".")[-1] if isinstance(action, Marker) else action
    if name in ("DeprecatedAliasStoreAction", "DeprecatedStoreTrueAction", "DeprecatedStoreConstAction"):
        deprecated = "=" + (val("new_flag") or "")
    elif name == "DeprecatedAction":
        err = val("error_message")
        deprecated = "!" + err if err else "?"
    if name in ("store_true", "store_false", "DeprecatedStoreTrueAction", "DeprecatedStoreConstAction", "DeprecatedAction"):
        kind, typ = "flag", "-"
    elif name in (None, "store", "DeprecatedAliasStoreAction"):
        kind = kind_of(nargs)
    else:
        raise Unresolved(f"{mod.where(call)}: action {name}")
    return Action(options, kind, dest, typ, choices=choices, deprecated=deprecated, hidden=hidden,
                  required=val("required", False) is True, help=help_)


def extract(srt):
    src = Source(srt)
    sa = src.module(os.path.join(src.srt, "server_args.py"))
    cls = find_class(sa, "ServerArgs")
    method = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "add_cli_args")
    actions = [Action(["-h", "--help"], "flag", "help", "-", help="show this help message and exit")]
    local = {}
    skipped = []
    for st in method.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            fn = st.value.func
            if isinstance(fn, ast.Name) and fn.id == "add_cli_args_from_dataclass":
                for mod, name, ann, has_default in server_fields(src, sa):
                    a = field_action(mod, name, ann, has_default)
                    if a is not None:
                        actions.append(a)
            elif isinstance(fn, ast.Attribute) and fn.attr == "add_argument":
                actions.append(hand_action(sa, st.value, local))
            else:
                raise Unresolved(f"{sa.where(st)}: statement in add_cli_args")
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            local[st.targets[0].id] = sa.eval(st.value, local)
        elif isinstance(st, ast.If):
            skipped.append(st)
        else:
            raise Unresolved(f"{sa.where(st)}: statement in add_cli_args")
    seen = {}
    for a in actions:
        for o in a.options:
            if o in seen:
                raise ValueError(f"option {o} registered twice")
            seen[o] = a
    return src, actions, skipped


def commit_of(path, commits, checkout):
    """The commit a file was read at: from --commits, else from git."""
    rel = os.path.relpath(path, checkout)
    if commits is not None:
        return commits.get(rel, "unknown")
    try:
        out = subprocess.run(["git", "-C", os.path.dirname(path), "log", "-1", "--format=%H", "--", path],
                             capture_output=True, text=True, check=True).stdout.strip()
        return out or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def read_commits(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                rel, commit = line.split(None, 1)
                out[rel] = commit.strip()
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("srt", help="an SGLang checkout's python/sglang/srt")
    p.add_argument("-o", "--output", default="-", help="where to write the table (default stdout)")
    p.add_argument("--commits", help="a file of 'path commit' lines, paths relative to the checkout, "
                   "for a source tree that is not a git checkout")
    args = p.parse_args(argv)
    try:
        src, actions, skipped = extract(args.srt)
    except (Unresolved, ValueError, OSError) as e:
        print(f"sglang-args: {e}", file=sys.stderr)
        return 1
    commits = read_commits(args.commits) if args.commits else None
    root = os.path.dirname(src.root)  # the checkout: python/ is under it
    files = [os.path.join(src.srt, f) for f in RULE_FILES] + src.used
    lines = [
        "# SGLang's server command line (sgl-project/sglang), one argparse action a line in the",
        "# order `sglang serve --help` lists them, written by scripts/sglang-args.py from:",
    ]
    for f in files:
        commit = commit_of(f, commits, root)
        at = f"at {commit}" if len(commit) == 40 and all(c in "0123456789abcdef" for c in commit) else f"({commit})"
        lines.append(f"#   {os.path.relpath(f, root)} {at}")
    if skipped:
        lines.append(f"# Skipped as environment-dependent: {len(skipped)} `if` statement(s) in ServerArgs.add_cli_args.")
    lines.append("# Columns: " + ", ".join(COLUMNS) + " (the script's docstring says what each holds).")
    lines.append("\t".join(COLUMNS))
    lines += [a.row() for a in actions]
    text = "\n".join(lines) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
