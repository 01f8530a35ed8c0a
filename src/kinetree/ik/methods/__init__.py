"""The IK methods beside the compiled loop, each behind :func:`kinetree.ik.solve`:

* :mod:`.fabrik`: FABRIK on chains of revolute and ball joints.
* :mod:`.scipy_solvers` and ``_cost``: ``bfgs``, ``lbfgs`` and ``cg`` (``scipy.optimize``) on
  the compiled cost and gradient.
* :mod:`.analytic`, :mod:`.analytic_6r`, :mod:`.analytic_adapter`: the closed forms
  (``method="analytic"``, ``Model.ik_all``).
* :mod:`.two_bone`: the closed-form two-bone limb (characters).
* :mod:`.seeded`: learned or random starts (``seeds=``, ``Model.ik_many``); it receives the
  dispatcher, never imports it.

Which method is which is the method table's (:mod:`kinetree.ik.method_table`). Nothing is
imported here: scipy and the closed forms load when a solve first asks for them.
"""
