"""The sa/usa fields are D_i grad_i E, and their Jacobian at a fixed point is D Hess E (theory.jacobian)."""
import pytest

from theory import symbols as sym
from theory.hessian import hessian_derivation
from theory.jacobian import jacobian_derivation, sa_gradient_identity
from theory.kernels import PairKernel


@pytest.mark.parametrize("n, d, model", [(2, 2, "sa"), (3, 2, "sa"), (2, 3, "usa")])
def test_field_is_metric_times_gradient(n, d, model):
    assert sa_gradient_identity(n=n, d=d, model=model).verify().status == "proved"


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_jacobian_at_antipodal_fixed_point(model):
    assert jacobian_derivation(config="antipodal", d=3, model=model).verify().status == "proved"


@pytest.mark.slow
def test_jacobian_at_square():
    assert jacobian_derivation(config="orthoplex", d=2, model="sa").verify().status == "proved"


def test_hessian_blocks_for_a_non_exponential_kernel():
    kernel = PairKernel(sym.s**3 / 3 + sym.beta * sym.s**2, name="poly")
    assert hessian_derivation(kernel, n=2, d=2).verify(points=2).ok
