"""The types of a trajectory's metadata, checked before :func:`numerics.core.trajectory.resume` uses them.

A file's metadata is user input: a list where an object is expected, a schedule without its keys or a string
where a number is expected must be one ``invalid trajectory`` line, not an ``AttributeError``/``KeyError`` or a
silently different run (``bool([1])`` is true). Keys that a newer attnflow adds are not listed and pass; keys
listed here are those that ``resume`` and :meth:`numerics.core.model.Model.from_meta` read.
"""
from __future__ import annotations

from numerics.common.readers import Fields, ListOf

NUMBER = ("number",)
OPTIONAL_NUMBER = ("number", None)
OPTIONAL_TEXT = (str, None)
#: an array stored in the metadata: inline (nested lists) or a reference {"npz": key} to an archive member
ARRAY = (list, dict, None)

HEADS = Fields({"Q": ARRAY, "K": ARRAY, "V": ARRAY, "W": ARRAY, "scale": OPTIONAL_NUMBER},
               required=("Q", "K", "V", "W"))
MLP = Fields({"W1": ARRAY, "b1": ARRAY, "W2": ARRAY, "b2": ARRAY, "activation": (str,)},
             required=("W1", "b1", "W2", "b2"))
SCHEDULE = Fields({"times": ListOf(NUMBER, nullable=False), "heads": ListOf(Fields(HEADS, HEADS.required, False),
                                                                            nullable=False),
                   "mlps": ListOf(MLP), "callable": (str,), "d": (int, None)},
                  required=("times", "heads"), unless="callable")

TRAJECTORY_META = Fields({
    "model": (str,), "beta": NUMBER, "time_unit": (str,), "method": (str,), "method_used": OPTIONAL_TEXT,
    "dt": OPTIONAL_NUMBER, "rtol": OPTIONAL_NUMBER, "atol": OPTIONAL_NUMBER, "save_every": (int,),
    "noise": NUMBER, "noise_seed": (int, None), "noise_state": (dict, None), "causal": (bool, None),
    "backend": OPTIONAL_TEXT, "energy_normalization": OPTIONAL_TEXT, "seconds": OPTIONAL_NUMBER,
    "Q": ARRAY, "K": ARRAY, "V": ARRAY, "kernel": (dict, None),
    "heads": HEADS, "mlp": MLP, "schedule": SCHEDULE,
}, required=("model", "beta", "method", "time_unit"), nullable=False)
