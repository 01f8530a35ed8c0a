"""Many solves at once on a Dask cluster (needs ``pip install 'kinetree[distributed]'``).

* :func:`ik` and :func:`fk` - a batch cut into chunks, one task per chunk, each run by
  ``Model.ik``/``Model.fk`` on a worker (every core, or its GPU with ``device="cuda"``);
  results identical to the local batch, in the targets' order.
* :func:`map` - any function over any items (clips, scenes, files): ordered, each result
  exactly once, a progress bar on the client.
* :func:`get_client` - ``None`` is the embedded :class:`distributed.LocalCluster`
  (nothing to set up), a string is a scheduler address (``"tcp://host:8786"``; one that
  does not answer raises :class:`ClusterUnreachableError`), a ``Client`` is used as is.

A worker lost mid-job has its chunks re-run elsewhere; chunk ids are fixed by the item
count and chunk size and results are assembled by id, so none is lost or duplicated.
``kinetree.workspace.reachability(..., client=...)`` runs reachability maps the same way.
See ``docs/distributed.md`` for setting up a cluster and sizing chunks.
"""

from __future__ import annotations

from ._client import CONNECT_TIMEOUT as CONNECT_TIMEOUT
from ._client import ClusterUnreachableError as ClusterUnreachableError
from ._client import close_local as close_local
from ._client import connected as connected
from ._client import get_client as get_client
from ._client import local_client as local_client
from ._jobs import chunk_bounds as chunk_bounds
from ._jobs import map as map
from ._jobs import run_job as run_job
from ._jobs import shared as shared
from ._kinematics import FK_CHUNK as FK_CHUNK
from ._kinematics import IK_CHUNK as IK_CHUNK
from ._kinematics import fk as fk
from ._kinematics import ik as ik

__all__ = [
    "CONNECT_TIMEOUT",
    "FK_CHUNK",
    "IK_CHUNK",
    "ClusterUnreachableError",
    "chunk_bounds",
    "close_local",
    "connected",
    "fk",
    "get_client",
    "ik",
    "local_client",
    "map",
    "run_job",
    "shared",
]
