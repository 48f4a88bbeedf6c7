"""Call-target descriptors: what a call may reach, named with what its own file knows.

A function's identity is its module path and qualified name, `pkg.router:Router.nack`.
One file cannot know the rest of the tree, so each call is described here and resolved
against every file's definitions later (`resolve`):

* `!pkg.mod:Router.nack`: `nack()` or `Router.nack()` defined in this file; reaches that
  definition (a method through the class's bases too).
* `=pkg.impl.nack`: a name bound by an import (`from pkg.impl import nack`, `impl.nack()`
  after `from pkg import impl`); reaches the definition at that dotted name, else (a
  re-export) every function with its last name; nothing when no module of the tree matches.
* `@pkg.mod:Router.nack`: `self.nack()`, `cls.nack()` or `super().nack()` in a method of
  Router; reaches `nack` in Router, its base classes and its subclasses (`self` may be an
  instance of a subclass).
* `.nack`: `obj.nack()` on a receiver not known statically; reaches every method named nack.
* `*nack`: `nack()` neither defined nor imported in the file (a star import, a local
  variable); reaches every function named nack.

A builtin name or a keyword that is neither defined nor imported reaches no function of
the tree and is not recorded.
"""

from __future__ import annotations

import builtins
import keyword

from invariants.scan.model import Definition
from invariants.scan.rules.mesh001.textscan import Scope, imports

# `print(...)`, `len(...)`, and `return (...)` / `not (...)` as the text scan sees them.
_NOT_CALLS = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


def module_of(path: str) -> str:
    """`pkg/router.py` -> `pkg.router`; `pkg/__init__.py` -> `pkg` (root-relative paths)."""
    stem = path.removesuffix(".py").removesuffix(".pyi")
    parts = stem.split("/")
    if len(parts) > 1 and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def target_name(target: str) -> str:
    """The name a descriptor reaches functions by: `nack` for `=pkg.impl.nack`, also when
    the call was written `answer()` after `from pkg.impl import nack as answer`."""
    return target.rpartition(":")[2].rpartition(".")[2].lstrip("=*")


def function_id(path: str, qualname: str) -> str:
    """The call-graph node of a function (or of module-level code, qualname "")."""
    return f"{module_of(path)}:{qualname}"


def _package_of(path: str) -> str:
    module = module_of(path)
    return module if path.endswith("__init__.py") else module.rpartition(".")[0]


class Namer:
    """Describes the calls of one file (see the module docstring)."""

    def __init__(self, path: str, code: str, found: list[Scope]) -> None:
        self.module = module_of(path)
        self.bound = imports(code, _package_of(path))
        self.is_class = {scope.qualname: scope.is_class for scope in found}
        self.definitions = [
            Definition(scope.qualname, scope.is_class, self._bases(scope, found))
            for scope in found
        ]

    def _bases(self, scope: Scope, found: list[Scope]) -> tuple[str, ...]:
        if not scope.is_class:
            return ()
        outer = found[scope.parent].qualname if scope.parent >= 0 else ""
        described = (self.chain(base, outer, None) for base in scope.bases)
        return tuple(base for base in described if base is not None)

    def _local(self, name: str, scope: str) -> str | None:
        """The qualname `name` means in `scope` if this file defines it: the scope itself,
        then enclosing functions (class bodies are skipped, as Python skips them), then the
        module."""
        prefix, first = scope, True
        while prefix:
            candidate = f"{prefix}.{name}"
            if (first or not self.is_class.get(prefix, True)) and candidate in self.is_class:
                return candidate
            prefix, first = prefix.rpartition(".")[0], False
        return name if name in self.is_class else None

    def chain(self, chain: str, scope: str, method_of: tuple[str, str] | None) -> str | None:
        """The descriptor of a call to `chain` (`nack`, `self.nack`, `impl.nack`) made in
        `scope`; `method_of` is (class, first parameter) when the call sits in a method."""
        head, _, rest = chain.partition(".")
        name = chain.rpartition(".")[2]
        if method_of is not None and head == method_of[1] and "." not in rest and rest:
            return f"@{self.module}:{method_of[0]}.{name}"
        local = self._local(head, scope)
        if local is not None:
            return f"!{self.module}:{local}{'.' + rest if rest else ''}"
        if head in self.bound:
            return f"={self.bound[head]}{'.' + rest if rest else ''}"
        if not rest:
            return None if name in _NOT_CALLS else f"*{name}"
        return f".{name}"

    def on_expression(self, name: str, receiver: str, method_of: tuple[str, str] | None) -> str:
        """A method called on an expression: `super().nack()` or `make().nack()`."""
        if receiver == "super" and method_of is not None:
            return f"@{self.module}:{method_of[0]}.{name}"
        return f".{name}"
