"""Scope mutations for the mutation campaign (fuzz/mutate_campaign.py): valid ONNX that
reuses value names across scopes, or shares a dim_param between inputs of different sizes.

Each mutation keeps the model valid and what it computes (for the inputs the seed runs on),
so the campaign can compare the rewrite with the mutant in onnxruntime as well as check it:

  sibling-rename   a value of one If branch takes a name the sibling branch defines
  later-name       a subgraph (a Loop body first) defines a name its parent defines after it
  dim-param-clash  two graph inputs get one dim_param where their real sizes differ
  wrap-in-if       each branch of an If becomes an If on the same condition whose two
                   branches are copies of it (subgraphs one level deeper, names repeated)

A mutation returns its name, or None when the model has no place for it.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator

import onnx
from onnx import helper

Chain = tuple[onnx.GraphProto, ...]  # a graph and its enclosing graphs, innermost first


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for a in node.attribute:
        if a.HasField("g"):
            yield a.g
        yield from a.graphs


def sites(g: onnx.GraphProto, outer: Chain = ()) -> Iterator[tuple[Chain, int, onnx.NodeProto]]:
    """Every node with subgraphs: (its graph and the enclosing ones, its index, the node)."""
    chain = (g, *outer)
    for i, n in enumerate(g.node):
        subs = list(subgraphs(n))
        if subs:
            yield chain, i, n
        for sub in subs:
            yield from sites(sub, chain)


def defined_here(g: onnx.GraphProto) -> set[str]:
    """Names g itself defines: inputs, initializers, node outputs."""
    names = {v.name for v in g.input} | {t.name for t in g.initializer}
    names |= {s.values.name for s in g.sparse_initializer}
    return names | {o for n in g.node for o in n.output if o}


def names_in(g: onnx.GraphProto) -> set[str]:
    """Every name g and its subgraphs define or read."""
    names = defined_here(g) | {v.name for v in g.output} | {v.name for v in g.value_info}
    for n in g.node:
        names |= {i for i in n.input if i}
        for sub in subgraphs(n):
            names |= names_in(sub)
    return names


def visible(chain: Chain) -> set[str]:
    """Names the enclosing graphs define (what a subgraph of chain[0] may read or shadow)."""
    return set().union(*(defined_here(g) for g in chain)) if chain else set()


def rename(g: onnx.GraphProto, old: str, new: str) -> None:
    """Every use and definition of `old` in g and its subgraphs becomes `new`."""
    for v in [*g.input, *g.output, *g.value_info]:
        if v.name == old:
            v.name = new
    for n in g.node:
        n.input[:] = [new if i == old else i for i in n.input]
        n.output[:] = [new if o == old else o for o in n.output]
        for sub in subgraphs(n):
            rename(sub, old, new)


def _branches(n: onnx.NodeProto) -> dict[str, onnx.AttributeProto]:
    return {a.name: a for a in n.attribute if a.name in ("then_branch", "else_branch") and a.HasField("g")}


def sibling_rename(m: onnx.ModelProto, rng: random.Random) -> str | None:
    ifs = [(chain, n) for chain, _, n in sites(m.graph) if len(_branches(n)) == 2]
    rng.shuffle(ifs)
    for chain, n in ifs:
        a, b = (x.g for x in _branches(n).values())
        if rng.random() < 0.5:
            a, b = b, a
        olds = [o for x in a.node for o in x.output if o]
        news = sorted({o for x in b.node for o in x.output if o} - names_in(a) - visible(chain))
        if olds and news:
            rename(a, rng.choice(olds), rng.choice(news))
            return "sibling-rename"
    return None


def later_name(m: onnx.ModelProto, rng: random.Random) -> str | None:
    found = list(sites(m.graph))
    loops = [s for s in found if s[2].op_type == "Loop"]
    candidates = loops if loops and rng.random() < 0.7 else found
    rng.shuffle(candidates)
    for chain, index, n in candidates:
        later = {o for x in chain[0].node[index + 1 :] for o in x.output if o}
        for sub in subgraphs(n):
            olds = [o for x in sub.node for o in x.output if o]
            news = sorted(later - names_in(sub) - visible(chain[1:]))
            if olds and news:
                rename(sub, rng.choice(olds), rng.choice(news))
                return "later-name"
    return None


def dim_param_clash(m: onnx.ModelProto, rng: random.Random) -> str | None:
    """Two inputs' dims of different real sizes (dim_values, or a dim_value and a dim_param)
    get one dim_param; the campaign feeds the seed's inputs, so their sizes differ at run time."""
    dims = [
        (vi.name, d)
        for vi in m.graph.input
        if vi.type.HasField("tensor_type")
        for d in vi.type.tensor_type.shape.dim
        if d.HasField("dim_value") or d.HasField("dim_param")
    ]
    pairs = [
        (x, y)
        for x in dims
        for y in dims
        if x[0] != y[0]
        and x[1].HasField("dim_value")
        and (y[1].HasField("dim_param") or (y[1].HasField("dim_value") and y[1].dim_value != x[1].dim_value))
    ]
    if not pairs:
        return None
    (_, a), (_, b) = rng.choice(pairs)
    name = b.dim_param if b.HasField("dim_param") else rng.choice(["clash", "batch_size", "sequence_length"])
    a.dim_param = name
    b.dim_param = name
    return "dim-param-clash"


def _fresh(base: str, taken: set[str]) -> str:
    k = 0
    while f"{base}__w{k}" in taken:
        k += 1
    taken.add(f"{base}__w{k}")
    return f"{base}__w{k}"


def wrap_in_if(m: onnx.ModelProto, rng: random.Random) -> str | None:
    ifs = [n for _, _, n in sites(m.graph) if len(_branches(n)) == 2]
    if not ifs:
        return None
    n = rng.choice(ifs)
    taken = names_in(m.graph)
    for attr in _branches(n).values():
        branch = attr.g
        outputs = [copy.deepcopy(o) for o in branch.output]
        for o in outputs:
            o.name = _fresh(o.name, taken)
        inner = helper.make_node(
            "If",
            [n.input[0]],  # the outer If's condition: visible here, true in one branch, false in the other
            [o.name for o in outputs],
            then_branch=copy.deepcopy(branch),
            else_branch=copy.deepcopy(branch),
        )
        attr.g.CopyFrom(helper.make_graph([inner], f"{branch.name}_wrapped", [], outputs))
    return "wrap-in-if"


MUTATORS = {
    "sibling-rename": sibling_rename,
    "later-name": later_name,
    "dim-param-clash": dim_param_clash,
    "wrap-in-if": wrap_in_if,
}


def mutate(m: onnx.ModelProto, rng: random.Random, kind: str | None = None) -> str | None:
    """One scope mutation in place: `kind`, else a random one that fits the model; None when
    none fits."""
    if kind:
        return MUTATORS[kind](m, rng)
    order = list(MUTATORS.values())
    rng.shuffle(order)
    for mutator in order:
        done = mutator(m, rng)
        if done:
            return done
    return None
