"""The circle S^1: angle equations, Kuramoto correspondence and Bessel-Fourier form of the attention dynamics.

(Work in progress: the full derivations follow; the scaled Fourier coefficients below are what
:mod:`numerics.fourier` compiles.)
"""
from __future__ import annotations

import sympy as sp

from . import codegen
from .symbols import beta, k


def scaled_fourier_coefficients():
    """(a_k, b_k) scaled by e^{-|beta|}: e^{beta cos u} = sum a_k e^{iku} e^{|beta|} (a_{-k} = a_k) and
    e^{beta cos u} sin u = e^{|beta|} sum_{k>=1} b_k sin(ku), with a_k = I_k(beta) e^{-|beta|},
    b_k = (I_{k-1}(beta) - I_{k+1}(beta)) e^{-|beta|}."""
    return codegen.besselie(k, beta), codegen.besselie(k - 1, beta) - codegen.besselie(k + 1, beta)


def scaled_fourier_coefficient_function():
    """Compiled ``coefficients(k, beta) -> (a_k, b_k)`` (NumPy, scipy.special.ive), cached by codegen."""
    return codegen.compile_function(
        "circle_scaled_fourier_coefficients", (k, beta), scaled_fourier_coefficients(),
        doc="Scaled Bessel-Fourier coefficients of the circle kernels.\n\nArguments: k (harmonic, array), beta."
            "\nReturns (a_k, b_k) = (ive(k, beta), ive(k-1, beta) - ive(k+1, beta)).")
