"""CRYSTAL's phase 2 (docs/PROTOCOLS.md E1): candidate steps pooled from several generators, linked where
similar, grouped as connected components, each represented by its medoid and put in order.

Pure: it takes the pooled steps' similarity matrix and where each step came from. The encoder and
the threshold (0.45 in the supplement's prose) are the caller's settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["TAU_CLUSTER", "StepCluster", "cluster_steps"]

TAU_CLUSTER = 0.45  # above the evaluation tau "to ensure only strongly equivalent steps merge" (l.237)


@dataclass(frozen=True)
class StepCluster:
    """One cluster: its members (indices into the pooled steps), medoid, support and order key."""

    members: tuple[int, ...]
    medoid: int
    generators: int  # distinct trajectories among the members
    position: float  # mean normalised position (index / length) of the members in their trajectories


def _components(linked: np.ndarray) -> list[list[int]]:
    n = linked.shape[0]
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(*np.nonzero(np.triu(linked, 1)), strict=True):
        ra, rb = find(int(a)), find(int(b))
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _medoid(sim: np.ndarray, members: list[int]) -> int:
    """argmin over members of the mean (1 - sim) to all members, self included (Eq. 1); ties: lowest index."""
    sub = sim[np.ix_(members, members)]
    cost = (1.0 - sub).mean(axis=1)
    return members[int(np.argmin(cost))]  # argmin takes the first of equals; members are ascending


def cluster_steps(
    sim: Any,
    trajectory: Sequence[Any] | None = None,
    position: Sequence[int] | None = None,
    threshold: float = TAU_CLUSTER,
    min_cluster_size: int = 1,
    min_generators: int = 1,
) -> list[StepCluster]:
    """Clusters of the pooled candidate steps in chain order.

    Edges where sim >= threshold (inclusive, l.78); clusters are connected components (single link).
    Order (the sheet's default for round 1): by the members' mean normalised position in their own
    trajectories, then by medoid index. Clusters smaller than ``min_cluster_size`` or drawn from fewer
    than ``min_generators`` trajectories are left out (defaults keep all, as the paper describes).
    """
    s = np.asarray(sim, dtype=np.float64)
    n = s.shape[0] if s.ndim == 2 else 0
    if s.size and (s.ndim != 2 or s.shape[0] != s.shape[1]):
        raise ValueError(f"a pooled similarity matrix is square, not {s.shape}")
    traj = list(trajectory) if trajectory is not None else [0] * n
    pos = list(position) if position is not None else list(range(n))
    if len(traj) != n or len(pos) != n:
        raise ValueError(f"{n} steps but {len(traj)} trajectories and {len(pos)} positions")
    lengths: dict[Any, int] = {}
    for t, p in zip(traj, pos, strict=True):
        lengths[t] = max(lengths.get(t, 0), int(p) + 1)
    linked = s >= threshold if n else np.zeros((0, 0), dtype=bool)
    out = []
    for members in _components(linked):
        support = len({traj[i] for i in members})
        if len(members) < min_cluster_size or support < min_generators:
            continue
        where = float(np.mean([pos[i] / lengths[traj[i]] for i in members]))
        out.append(StepCluster(tuple(members), _medoid(s, members), support, where))
    return sorted(out, key=lambda c: (c.position, c.medoid))
