"""Motion from sparse trackers: whole clips (:func:`track`) and live streams
(:class:`Tracker`), every target met on every frame, smooth between them.

* :func:`track`: offline, a clip of ``{frame: (T, 4, 4) or (T, 3)}`` tracks to a
  :class:`~kinetree.anim.Motion`, looking ahead and behind (:mod:`.offline`).
* :class:`Tracker`: live and causal, ``.update(targets) -> IKResult`` per frame,
  ``.reset()`` (:mod:`.tracker`).
* :class:`Teleop`: live and causal, a person's head and hands driving a humanoid robot
  (feet fixed, floating base free), ``.update(targets) -> IKResult`` (:mod:`.teleop`).

Both take any subset of the body parts (pelvis, head, hands, feet; poses or positions),
a learned prior as a posture guide (``prior="human"``) or none, anatomical joint ranges
(:mod:`kinetree.anim.anatomy`, on by default), a ground, and target priorities (hands
best effort when out of reach). The numerical work is ``model.ik``'s.
"""

from ._skeleton import Ground as Ground
from .offline import PASSES as PASSES
from .offline import SMOOTH_SECONDS as SMOOTH_SECONDS
from .offline import smooth as smooth
from .offline import track as track
from .teleop import Teleop as Teleop
from .tracker import Tracker as Tracker

__all__ = ["PASSES", "SMOOTH_SECONDS", "Ground", "Teleop", "Tracker", "smooth", "track"]
