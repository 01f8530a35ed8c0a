"""``Model.frame_index`` is a node index (hidden ball-joint nodes counted), and its
docstring says so at the name: on the humanoid it differs from the position in
``frame_names`` / ``fk_all``, and each index gives the frame's pose where it claims."""

from __future__ import annotations

import numpy as np

import kinetree


def test_frame_index_is_a_node_index_and_says_so() -> None:
    h = kinetree.load("humanoid")
    doc = kinetree.Model.frame_index.__doc__ or ""
    assert "node_names" in doc and "frame_names.index(frame)" in doc
    q = h.random_configuration(rng=0)
    poses = h.fk_all(q)
    differs = 0
    for name in h.frame_names:
        node = h.frame_index(name)
        assert h.node_names[node] == name
        position = h.frame_names.index(name)
        np.testing.assert_allclose(poses[position], h.fk(q, name), atol=1e-12)
        differs += node != position
    assert differs > 0  # hidden nodes make the two indices differ
