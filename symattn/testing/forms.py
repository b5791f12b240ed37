"""The one shape of the kit's inputs: an architecture in one of three forms, expected values in one form each.

:func:`as_architecture` reads the architecture every assertion of
:mod:`symattn.testing.assertions` is about; :func:`options_of` checks the options passed
on to a computation against its signature; :func:`expected_orders` and :func:`layer_list`
check expected values. Wrong types raise :class:`~symattn.core.validate.BadType` (a
:class:`TypeError`), wrong values :class:`ValueError`, each naming the expected form.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from symattn.core.validate import BadType, require_int, shown
from symattn.model.architecture import Architecture

__all__ = ["ARCHITECTURE_FORMS", "FIBER_STATUSES", "as_architecture", "expected_orders", "layer_list", "options_of"]

#: The forms of an architecture every assertion about one accepts (:func:`as_architecture`).
ARCHITECTURE_FORMS = ("an Architecture, the TOML text of a spec (as symattn --spec) or a mapping of "
                      "Architecture.uniform's keywords (depth, width, rank, tokens, normalizer, ...)")

#: The values of :attr:`symattn.analyses.fibers.Fiber.status` that ``assert_fiber(status=...)`` accepts.
FIBER_STATUSES = ("verified", "undecided", "failed", "unverified")

_UNIFORM = tuple(inspect.signature(Architecture.uniform).parameters)


def as_architecture(description: Any, name: str = "arch") -> Architecture:
    """The :class:`~symattn.model.architecture.Architecture` an assertion is about.

    Parameters
    ----------
    description : Architecture, str or mapping
        An ``Architecture``; the TOML text of a spec
        (:func:`~symattn.model.spec.load_spec`, as ``symattn --spec``); or a mapping of
        :meth:`Architecture.uniform <symattn.model.architecture.Architecture.uniform>`'s
        keywords (``depth``, ``width``, ``rank``, ``tokens`` required; ``normalizer``,
        ``skip``, ``mask``, ``heads``, ... optional).
    name : str
        The argument's name in messages.

    Raises
    ------
    TypeError
        For any other type (a computed Spectrum, a list, ...), naming the forms.
    ValueError
        For a spec or mapping that describes no architecture.

    Examples
    --------
    >>> as_architecture({"depth": 2, "width": 2, "rank": 1, "tokens": 2, "normalizer": "cosh"}).describe()[:24]
    'layer 1: skip none, mask'
    >>> as_architecture('width = 2\\ntokens = 3\\n[[layer]]\\nrepeat = 2').depth
    2
    >>> as_architecture([[1, 0]])
    Traceback (most recent call last):
    ...
    symattn.core.validate.BadType: arch must be an Architecture, the TOML text of a spec ...; got list [[1, 0]]
    """
    if isinstance(description, Architecture):
        return description
    if isinstance(description, str):
        from symattn.model.spec import load_spec

        return load_spec(description)
    if isinstance(description, Mapping):
        keys = set(description)
        unknown = sorted(str(k) for k in keys - set(_UNIFORM))
        missing = [k for k in ("depth", "width", "rank", "tokens") if k not in keys]
        if unknown or missing:
            raise ValueError(f"{name}: a mapping of Architecture.uniform's keywords "
                             + (f"has unknown keys {unknown} " if unknown else "")
                             + (f"lacks {missing} " if missing else "") + f"(keywords: {', '.join(_UNIFORM)})")
        return Architecture.uniform(**description)
    raise BadType(f"{name} must be {ARCHITECTURE_FORMS}; got {shown(description)}")


def options_of(func: Callable, options: Mapping, taken: Sequence[str], hint: str = "") -> dict:
    """``options`` if every key is a keyword of ``func`` the assertion does not set itself."""
    allowed = [p for p in inspect.signature(func).parameters if p not in taken]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"unknown option(s) {unknown} for {func.__name__}; its options: {', '.join(allowed)}{hint}")
    return dict(options)


def expected_orders(expected: Any) -> Counter:
    """``{order: multiplicity}`` checked: nonnegative integer orders, positive multiplicities."""
    if not isinstance(expected, Mapping):
        raise BadType("expected contact orders must be a mapping {order: multiplicity}, e.g. {0: 4, 1: 3, 5: 3}; "
                      f"got {shown(expected)}")
    out: Counter = Counter()
    for order, multiplicity in expected.items():
        out[require_int(order, "a contact order", low=0)] = require_int(
            multiplicity, f"the multiplicity of t^{order}", low=1)
    return out


def layer_list(value: Any, name: str, depth: int) -> list[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise BadType(f"{name} must be a list of layer numbers (1..{depth}), got {shown(value)}")
    return [require_int(i, f"{name} entry", 1, depth) for i in value]
