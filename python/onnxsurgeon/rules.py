"""Rewrite rules written in Python, run by the C++ matcher and greedy driver.

    import onnxsurgeon as osg
    from onnxsurgeon.rules import Pattern, Rule

    p = Pattern("mul-by-one")
    x = p.any("x")
    mul = p.op("Mul", x, p.scalar("one", 1.0), commutative=True)
    rule = Rule(p, root=mul, replace=lambda m, rw: m["x"])
    osg.apply_rules(model, [rule])          # -> {"mul-by-one": 3}

A replacement gets the Match (m["x"] is the graph value captured as "x", m.scalar("one")
a captured constant) and a Rewriter (rw.op("Relu", [v], attrs={...}) makes a node before
the matched root, stamped with the rule's name), and returns the value(s) replacing the
root's outputs. An optional check(match) returning False or a reason string refuses the
match. Intermediate matched nodes must not be used outside the match unless
allow_external_uses=True; the driver erases what the rewrite left dead.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence, Union

from . import _core


class PatternValue:
    """An operand of a pattern: a captured value, a constant, an alternative, an op output."""

    def __init__(self, pattern: "Pattern", vid: int):
        self.pattern, self.id = pattern, vid


class PatternOp:
    """An op of a pattern. Used as an operand it stands for its first output."""

    def __init__(self, pattern: "Pattern", oid: int):
        self.pattern, self.id = pattern, oid
        self._out0: PatternValue | None = None

    def out(self, i: int = 0) -> PatternValue:
        if i == 0:
            if self._out0 is None:
                self._out0 = PatternValue(self.pattern, self.pattern._p.out(self.id, 0))
            return self._out0
        return PatternValue(self.pattern, self.pattern._p.out(self.id, i))


Operand = Union[PatternValue, PatternOp]


class Pattern:
    def __init__(self, name: str = "pattern"):
        self.name = name
        self._p = _core._Pattern(name)

    def _ids(self, operands: Iterable[Operand]) -> list:
        ids = []
        for o in operands:
            if isinstance(o, PatternOp):
                o = o.out(0)
            if not isinstance(o, PatternValue) or o.pattern is not self:
                raise TypeError("pattern operands must come from the same Pattern")
            ids.append(o.id)
        return ids

    def any(self, capture: str = "") -> PatternValue:
        return PatternValue(self, self._p.any(capture))

    def const(self, capture: str = "") -> PatternValue:
        return PatternValue(self, self._p.const(capture))

    def scalar(self, capture: str, value: float, tolerance: float = 1e-6) -> PatternValue:
        return PatternValue(self, self._p.scalar(capture, value, tolerance))

    def either(self, *alternatives: Operand, capture: str = "") -> PatternValue:
        return PatternValue(self, self._p.or_(self._ids(alternatives), capture))

    def op(
        self,
        op_type: str,
        *inputs: Operand,
        domain: str = "",
        commutative: bool = False,
        capture: str = "",
        allow_external_uses: bool = False,
        attrs: dict | None = None,
        opset: tuple[int, int] | None = None,
    ) -> PatternOp:
        lo, hi = opset if opset else (0, 0)
        return PatternOp(
            self,
            self._p.op(
                op_type, self._ids(inputs), domain, commutative, capture, allow_external_uses, dict(attrs or {}), lo, hi
            ),
        )


class Rule:
    def __init__(
        self,
        pattern: Pattern,
        root: PatternOp,
        replace: Callable[[_core.Match, _core.Rewriter], Union[_core.Value, Sequence[_core.Value]]],
        check: Callable[[_core.Match], Union[bool, str]] | None = None,
        name: str | None = None,
        benefit: int = 1,
    ):
        if root.pattern is not pattern:
            raise TypeError("root must be an op of the pattern")
        self.name = name or pattern.name
        self._rule = _core._Rule(self.name, pattern._p, root.id, replace, check, benefit)


def apply_rules(
    model: "_core.Model",
    rules: Sequence[Rule],
    max_rewrites: int = -1,
    explain: Callable[[str, str, str], None] | None = None,
) -> dict:
    """Applies `rules` to a fixed point over the whole model; returns rewrites per rule.
    explain(rule, node_name, why) is called for every miss (what --debug-patterns prints)."""
    return _core._apply_rules(model, [r._rule for r in rules], max_rewrites, explain)


# Registered rule sets by pass name; holding them here keeps their callables alive for
# as long as a pipeline may name them (the process).
_REGISTERED: dict = {}


def register_rules(name: str, rules: Union[Sequence[Rule], object], summary: str = "") -> None:
    """Makes `rules` a pass that pipelines can name, in the CLI grammar:

        osg.register_rules("strip-mul-by-one", [rule])
        osg.run(model, "strip-mul-by-one,simplify")          # or "strip-mul-by-one(max-rewrites=10)"

    `rules` is a list of Rule, or a module (any object) with a RULES list, so a package
    of rules registers with register_rules("my-rules", my_package.rules). The name must
    be kebab-case and not a built-in pass; registering it again replaces the rules.
    The pass reports rewrites per rule like the built-in pattern passes."""
    if not isinstance(rules, (list, tuple)):
        module_rules = getattr(rules, "RULES", None)
        if module_rules is None:
            raise TypeError("rules must be a list of Rule or a module with a RULES list")
        rules = module_rules
    rules = list(rules)
    if not rules or not all(isinstance(r, Rule) for r in rules):
        raise TypeError("register_rules needs at least one onnxsurgeon.rules.Rule, and only Rules")
    _core._register_rules(name, summary, [r._rule for r in rules])
    _REGISTERED[name] = rules
