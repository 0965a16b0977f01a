"""Conjectures as searchable objects: a predicate on an outcome, the strategy of its inputs, a budgeted search.

A :class:`Conjecture` holds

- ``inputs``: a Hypothesis strategy producing a dict of inputs (numbers, strings, NumPy arrays);
- ``outcome(inputs) -> dict``: what the dynamics/landscape produce (a trajectory summary, a critical point and its
  spectrum...);
- ``predicate(inputs, outcome) -> Verdict``: ``holds`` True (consistent with the conjecture), False (a
  counterexample) or None (undecided for this example: not converged, degenerate, near tie...).

:meth:`Conjecture.run` searches with Hypothesis under a budget (``max_examples`` and/or ``seconds``), lets
Hypothesis shrink a counterexample to a minimal one, and can save it as JSON (inputs, outcome summary, verdict,
seed, package versions), written atomically, so that :func:`replay` (``attnflow conjecture replay FILE``)
reproduces it. Statuses:

- ``counterexample``: a failing example was found (shrunk);
- ``no-counterexample-found``: the budget ran out and at least half of the examples were decided;
- ``inconclusive``: no counterexample, but most examples were undecided (or none was tried).

"No counterexample found" is evidence, never a proof. Outcomes are deterministic functions of the inputs, so a
saved counterexample replays exactly (up to library versions, which the file records).

Verified by: conjecture.negative-beta-counterexample; tests/numerics/test_conjecture_framework.py.
"""
from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from numerics.common.errors import InputError
from numerics.common.readers import read_json, read_text
from numerics.common.provenance import atomic_write, package_versions

STATUSES = ("counterexample", "no-counterexample-found", "inconclusive")
FORMAT = "attnflow-conjecture-counterexample/1"


@dataclass(frozen=True)
class Verdict:
    """``holds``: True (example consistent), False (counterexample) or None (undecided); a one-line reason."""

    holds: bool | None
    detail: str
    data: dict = field(default_factory=dict)


# -- JSON encoding of inputs and outcomes (exact for float64: repr round-trips) ------------------------------------
def encode(obj):
    """JSON-ready form: arrays become {"ndarray": nested lists, "dtype": ...}; NumPy scalars become Python."""
    if isinstance(obj, np.ndarray):
        return {"ndarray": obj.tolist(), "dtype": str(obj.dtype)}
    if isinstance(obj, Mapping):
        return {str(k): encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return {"float": repr(obj)}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return {"repr": repr(obj)}


#: the array dtypes a saved counterexample may hold (numbers only: nothing that constructs objects)
_DTYPES = ("float64", "float32", "int64", "int32", "bool")


def decode(obj):
    """Inverse of :func:`encode` for arrays and non-finite floats."""
    if isinstance(obj, dict):
        if set(obj) == {"ndarray", "dtype"}:
            if obj["dtype"] not in _DTYPES:
                raise ValueError(f"dtype {str(obj['dtype'])[:20]!r} is not one of {', '.join(_DTYPES)}")
            return np.asarray(obj["ndarray"], dtype=obj["dtype"])
        if set(obj) == {"float"}:
            return float(obj["float"])
        return {k: decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    return obj


def _key(inputs: dict) -> str:
    return json.dumps(encode(inputs), sort_keys=True)


class _OutOfTime(Exception):
    pass


class _Counterexample(Exception):
    def __init__(self, inputs, outcome, verdict):
        super().__init__(verdict.detail)
        self.inputs, self.outcome, self.verdict = inputs, outcome, verdict


@dataclass
class ConjectureResult:
    """Outcome of :meth:`Conjecture.run` (JSON form: :meth:`to_dict`)."""

    id: str
    status: str
    examples_tried: int
    decided: int
    undecided: int
    counterexample: dict | None
    seconds: float
    seed: int
    budget: dict
    saved_to: str | None = None
    undecided_reasons: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"id": self.id, "status": self.status, "examples_tried": self.examples_tried,
                "decided": self.decided, "undecided": self.undecided,
                "counterexample": encode(self.counterexample) if self.counterexample else None,
                "seconds": round(self.seconds, 3), "seed": self.seed, "budget": self.budget,
                "saved_to": self.saved_to, "undecided_reasons": self.undecided_reasons}


@dataclass(frozen=True)
class Conjecture:
    """A conjecture to search for counterexamples (see the module docstring).

    Parameters
    ----------
    id, title : str
        Identifier (``attnflow conjecture run ID``) and one-line statement.
    source : str
        Paper id and topic.
    note : str
        Path of the note under ``proofs_notes/``.
    inputs : hypothesis strategy of dict
    outcome : callable inputs -> dict
    predicate : callable (inputs, outcome) -> Verdict
    expected : str
        The status the literature predicts (``counterexample`` when a counterexample is known to exist).
    max_examples : int
        Default budget.
    shrink_budget : int
        Largest number of evaluations spent on shrinking a counterexample (each evaluation can be costly).
    """

    id: str
    title: str
    source: str
    note: str
    inputs: Any
    outcome: Callable[[dict], dict]
    predicate: Callable[[dict, dict], Verdict]
    expected: str = "no-counterexample-found"
    max_examples: int = 25
    shrink_budget: int = 200

    def check(self, inputs: dict) -> tuple[dict, Verdict]:
        """Evaluate one example. Numerical failures (overflow, no convergence) make it undecided, not an error."""
        try:
            outcome = self.outcome(inputs)
        except (InputError, FloatingPointError, np.linalg.LinAlgError, ArithmeticError) as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}, Verdict(None, f"evaluation failed: {exc}")
        verdict = self.predicate(inputs, outcome)
        if not isinstance(verdict, Verdict):
            verdict = Verdict(None if verdict is None else bool(verdict), "")
        return outcome, verdict

    def run(self, max_examples: int | None = None, seconds: float | None = None, seed: int = 0,
            save: str | None = None, *, hypothesis_db: str | None = None,
            progress: Callable[[float, float], None] | None = None) -> ConjectureResult:
        """Search for a counterexample with Hypothesis under the budget; shrink and optionally save it.

        ``max_examples`` caps the examples generated (default :attr:`max_examples`); ``seconds`` stops the
        evaluation of new examples once elapsed (shrinking a found counterexample is capped separately by
        :attr:`shrink_budget` evaluations). The same seed gives the same search.

        Hypothesis writes nothing to the working directory (its default storage is ``./.hypothesis``, where it
        caches constants of the code under test): its storage is a temporary directory removed afterwards, or
        ``hypothesis_db`` (a directory, created if needed) when given. The search is seeded, and Hypothesis keeps
        no example database for seeded runs: a counterexample is kept with ``save``.
        ``progress(examples, budget)`` is called after each new example is evaluated.
        """
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as hypothesis_seed

        budget = self.max_examples if max_examples is None else max_examples
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InputError(f"budget must be a positive integer, got {budget!r}")
        if seconds is not None and not (isinstance(seconds, (int, float)) and seconds > 0):
            raise InputError(f"seconds must be positive, got {seconds!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise InputError(f"seed must be an integer, got {seed!r}")
        start = time.perf_counter()
        cache: dict[str, tuple[dict, Verdict]] = {}
        state = {"tried": 0, "decided": 0, "undecided": 0, "failing": False, "shrinks": 0, "reasons": {}}

        def probe(inputs):
            key = _key(inputs)
            if key in cache:
                outcome, verdict = cache[key]
            else:
                if state["failing"]:
                    if state["shrinks"] >= self.shrink_budget:
                        return  # shrink budget spent: keep the smallest counterexample found so far
                    state["shrinks"] += 1
                elif seconds is not None and time.perf_counter() - start > seconds:
                    raise _OutOfTime()  # ends the search: Hypothesis only re-runs (cheap) failing-to-time inputs
                outcome, verdict = self.check(inputs)
                cache[key] = (outcome, verdict)
                if not state["failing"]:
                    state["tried"] += 1
                    if verdict.holds is None:
                        state["undecided"] += 1
                        reason = verdict.detail.split(":")[0][:60]
                        state["reasons"][reason] = state["reasons"].get(reason, 0) + 1
                    else:
                        state["decided"] += 1
            if verdict.holds is False:
                state["failing"] = True
                raise _Counterexample(inputs, outcome, verdict)

            if progress is not None and not state["failing"]:
                progress(state["tried"], budget)

        test = given(self.inputs)(probe)
        found = None
        try:
            with _hypothesis_storage(hypothesis_db):
                test = settings(max_examples=budget, deadline=None, database=None, derandomize=False,
                                phases=(Phase.generate, Phase.shrink), report_multiple_bugs=False,
                                suppress_health_check=list(HealthCheck), print_blob=False)(test)
                test = hypothesis_seed(seed)(test)
                test()
        except _OutOfTime:
            state["timed_out"] = True
        except _Counterexample as exc:
            found = {"inputs": exc.inputs, "outcome": exc.outcome,
                     "verdict": {"holds": exc.verdict.holds, "detail": exc.verdict.detail, **exc.verdict.data}}
        if found is not None:
            status = "counterexample"
        elif state["decided"] == 0 or state["undecided"] > state["decided"]:
            status = "inconclusive"
        else:
            status = "no-counterexample-found"
        result = ConjectureResult(self.id, status, state["tried"], state["decided"], state["undecided"], found,
                                  time.perf_counter() - start, seed,
                                  {"max_examples": budget, "seconds": seconds, "shrink_evaluations": state["shrinks"],
                                   "timed_out": state.get("timed_out", False)},
                                  undecided_reasons=state["reasons"])
        if found is not None and save:
            result.saved_to = save_counterexample(save, self, result)
        return result


@contextmanager
def _hypothesis_storage(directory: str | None):
    """Point Hypothesis's storage at ``directory`` (or a temporary directory) for the duration of a search
    (Hypothesis's default is ``./.hypothesis`` in the working directory)."""
    import tempfile

    import hypothesis.configuration as hconf

    previous = getattr(hconf, "__hypothesis_home_directory", None)
    scratch = None
    if directory is None:
        scratch = tempfile.TemporaryDirectory(prefix="attnflow-hypothesis-")
        home = scratch.name
    else:
        home = os.path.abspath(os.fspath(directory))
        try:
            os.makedirs(home, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot use {directory} for Hypothesis's storage: {exc.strerror or exc}") from None
    hconf.set_hypothesis_home_dir(home)
    try:
        yield
    finally:
        hconf.set_hypothesis_home_dir(previous)
        if scratch is not None:
            scratch.cleanup()


def defined_in(conjecture: Conjecture) -> dict:
    """Where a conjecture's outcome and predicate are defined (module name and source file), recorded with a
    saved counterexample so that a reader knows which module rebuilds it (``replay(..., module=FILE)``)."""
    import inspect

    fn = conjecture.outcome
    try:
        source = inspect.getsourcefile(fn)
    except TypeError:
        source = None
    return {"module": getattr(fn, "__module__", None), "file": None if source is None else os.path.abspath(source)}


def load_conjectures(module) -> dict[str, Conjecture]:
    """The conjectures a user module defines, by id.

    ``module`` is a path to a ``.py`` file, a dotted module name, or a module object. Collected: a
    ``CONJECTURES`` attribute (a mapping or an iterable of :class:`Conjecture`), the result of a
    ``conjectures()`` function, and every module-level :class:`Conjecture`.
    """
    import importlib
    import importlib.util
    import types

    if not isinstance(module, types.ModuleType):
        name = os.fspath(module)
        if name.endswith(".py") or os.sep in name:
            if not os.path.exists(name):
                raise InputError(f"conjecture module {name} does not exist")
            read_text(name, "conjecture module")  # a regular UTF-8 file of bounded size (a FIFO would block)
            spec = importlib.util.spec_from_file_location(f"attnflow_user_conjectures_{abs(hash(name))}", name)
            if spec is None:
                raise InputError(f"conjecture module {name} is not a Python source file (name it FILE.py)")
            mod = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(mod)
            except Exception as exc:  # the user's module failed: say so in one line
                raise InputError(f"cannot load conjecture module {name}: {type(exc).__name__}: {exc}") from None
            module = mod
        else:
            try:
                module = importlib.import_module(name)
            except ImportError as exc:
                raise InputError(f"cannot import conjecture module {name}: {exc}") from None
    found: dict[str, Conjecture] = {}

    def add(items) -> None:
        values = items.values() if isinstance(items, Mapping) else items
        for c in values:
            if isinstance(c, Conjecture):
                found.setdefault(c.id, c)

    if hasattr(module, "CONJECTURES"):
        add(module.CONJECTURES)
    if callable(getattr(module, "conjectures", None)):
        add(module.conjectures())
    add([v for v in vars(module).values() if isinstance(v, Conjecture)])
    if not found:
        raise InputError(f"{getattr(module, '__file__', module)} defines no Conjecture (module-level objects, "
                         "CONJECTURES or conjectures())")
    return found


def conjecture_table(conjectures: Mapping[str, Conjecture] | Iterable[Conjecture] | None) -> dict[str, Conjecture]:
    """A mapping id -> conjecture from a mapping, an iterable of conjectures, or None (empty)."""
    if conjectures is None:
        return {}
    if isinstance(conjectures, Mapping):
        return dict(conjectures)
    return {c.id: c for c in conjectures}


def save_counterexample(path, conjecture: Conjecture, result: ConjectureResult) -> str:
    """Write the counterexample of ``result`` as JSON (atomically): id, inputs, outcome, verdict, seed, versions,
    and where the conjecture is defined (:func:`defined_in`)."""
    if result.counterexample is None:
        raise InputError(f"conjecture {conjecture.id} has no counterexample to save")
    payload = {"format": FORMAT, "id": conjecture.id, "title": conjecture.title, "source": conjecture.source,
               "defined_in": defined_in(conjecture),
               "seed": result.seed, "budget": result.budget, "versions": package_versions(),
               "inputs": encode(result.counterexample["inputs"]),
               "outcome": encode(result.counterexample["outcome"]),
               "verdict": encode(result.counterexample["verdict"])}
    text = json.dumps(payload, indent=1, sort_keys=True, allow_nan=False)

    def writer(tmp):
        with open(tmp, "w") as fh:
            fh.write(text + "\n")

    return atomic_write(path, writer, suffix=".json")


def load_counterexample(path) -> dict:
    """Read a saved counterexample; arrays come back as NumPy arrays."""
    try:
        payload = read_json(path, "counterexample file")
    except InputError as exc:
        if "No such file" in str(exc):
            raise
        raise InputError(f"{path} is not a counterexample file: {str(exc).split(': ', 1)[-1]}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise InputError(f"invalid file {path}: not an attnflow counterexample file "
                         f"(format {FORMAT!r} expected)")
    for key, kind in (("id", str), ("inputs", dict)):
        if not isinstance(payload.get(key), kind):
            raise InputError(f"invalid counterexample file {path}: {key!r} must be a JSON "
                             f"{'string' if kind is str else 'object'}")
    try:
        payload["inputs"] = decode(payload["inputs"])
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"invalid counterexample file {path}: bad array in inputs ({exc})") from None
    return payload


@dataclass(frozen=True)
class ReplayResult:
    """Outcome of :func:`replay`: whether the saved inputs still violate the conjecture."""

    id: str
    reproduced: bool
    verdict: Verdict
    saved_verdict: dict
    outcome: dict
    versions_then: dict
    versions_now: dict

    def to_dict(self) -> dict:
        return {"id": self.id, "reproduced": self.reproduced, "holds": self.verdict.holds,
                "detail": self.verdict.detail, "saved_detail": self.saved_verdict.get("detail"),
                "outcome": encode(self.outcome), "versions_then": self.versions_then,
                "versions_now": self.versions_now}


__all__ = [
    "Conjecture",
    "ConjectureResult",
    "ReplayResult",
    "STATUSES",
    "Verdict",
    "decode",
    "encode",
    "load_counterexample",
    "save_counterexample",
]
