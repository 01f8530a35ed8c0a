"""Forward kinematics, geometric Jacobians and the quantities built from them.

* :func:`fk`, :func:`fk_all`, :func:`jacobian` (:mod:`.frames`): poses and Jacobians,
  batched over leading dimensions of ``q``, run by the compiled kernels;
* :func:`com`, :func:`com_jacobian` (:mod:`.mass`): the centre of mass and its Jacobian;
* :func:`manipulability`, :func:`manipulability_gradient`,
  :func:`jacobian_manipulability` (:mod:`.manipulability`): Yoshikawa's measure;
* :func:`packed` (:mod:`.layout`): the model as the two arrays every kernel reads.
"""

from __future__ import annotations

from .frames import fk as fk
from .frames import fk_all as fk_all
from .frames import jacobian as jacobian
from .frames import needed_nodes as needed_nodes
from .layout import packed as packed
from .manipulability import jacobian_manipulability as jacobian_manipulability
from .manipulability import manipulability as manipulability
from .manipulability import manipulability_gradient as manipulability_gradient
from .mass import com as com
from .mass import com_jacobian as com_jacobian

__all__ = [
    "com",
    "com_jacobian",
    "fk",
    "fk_all",
    "jacobian",
    "jacobian_manipulability",
    "manipulability",
    "manipulability_gradient",
    "needed_nodes",
    "packed",
]
