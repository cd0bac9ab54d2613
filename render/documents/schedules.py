"""Pipeline schedules replayed event by event: what each GPU runs, and when.

``one_f_one_b(p, m)`` is one-forward-one-backward (PipeDream-Flush, Narayanan et al. 2021 §2.2):
stage i runs p − i − 1 warm-up forwards, then alternates one forward and one backward, then
drains its backwards. ``interleaved(p, v, m)`` is Megatron's interleaved schedule (§2.2.2): each
GPU holds v model chunks (virtual stages c·p + i), warms up with (p − i − 1)·2 + (v − 1)·p
forwards, and takes the micro-batches p at a time through its chunks in turn.

``replay`` runs the orders: a forward waits for the previous virtual stage's forward of that
micro-batch, a backward for the next virtual stage's backward; a GPU runs one thing at a time.
The schedule pictures draw its events, and tests/test_schedules.py checks the makespans against
the catalogue's bubbles, (p − 1)/m and (p − 1)/(v·m).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Event:
    """One forward ("F") or backward ("B") of one micro-batch through one model chunk on one GPU."""

    gpu: int
    kind: str
    chunk: int
    micro_batch: int
    start: Fraction
    end: Fraction


Order = list[tuple[str, int, int]]  # (kind, chunk, micro-batch) in the order a GPU runs them


def one_f_one_b_orders(p: int, m: int) -> list[Order]:
    orders = []
    for stage in range(p):
        warm = min(p - stage - 1, m)
        order: Order = [("F", 0, k) for k in range(warm)]
        for k in range(m - warm):
            order += [("F", 0, warm + k), ("B", 0, k)]
        orders.append(order + [("B", 0, k) for k in range(m - warm, m)])
    return orders


def interleaved_orders(p: int, v: int, m: int) -> list[Order]:
    if m % p:
        raise ValueError(f"the interleaved schedule takes the micro-batches p at a time: m = {m} is not a multiple of p = {p}")
    total = m * v

    def item(kind: str, k: int) -> tuple[str, int, int]:
        chunk = (k // p) % v
        return (kind, chunk if kind == "F" else v - 1 - chunk, (k // (p * v)) * p + k % p)

    orders = []
    for stage in range(p):
        warm = total if m == p else min((p - stage - 1) * 2 + (v - 1) * p, total)
        order: Order = [item("F", k) for k in range(warm)]
        for k in range(total - warm):
            order += [item("F", warm + k), item("B", k)]
        orders.append(order + [item("B", k) for k in range(total - warm, total)])
    return orders


def replay(orders: list[Order], forward, backward, v: int = 1) -> list[Event]:
    """Every event of the orders on ``len(orders)`` GPUs, a chunk's forward taking ``forward``, its backward ``backward``
    (one time for every GPU, or a list of one per GPU: uneven stages)."""
    p = len(orders)
    forward = list(forward) if isinstance(forward, (list, tuple)) else [forward] * p
    backward = list(backward) if isinstance(backward, (list, tuple)) else [backward] * p
    done: dict[tuple[str, int, int], Fraction] = {}  # (kind, virtual stage, micro-batch) -> end
    clock, position, events = [Fraction(0)] * p, [0] * p, []
    while any(position[g] < len(orders[g]) for g in range(p)):
        moved = False
        for g in range(p):
            if position[g] == len(orders[g]):
                continue
            kind, chunk, k = orders[g][position[g]]
            stage = chunk * p + g
            needs = ("F", stage - 1, k) if kind == "F" and stage > 0 else ("B", stage + 1, k) if kind == "B" and stage < v * p - 1 else None
            if needs is not None and needs not in done:
                continue
            start = max(clock[g], done[needs] if needs is not None else Fraction(0))
            clock[g] = start + (forward if kind == "F" else backward)[g]
            done[(kind, stage, k)] = clock[g]
            events.append(Event(g, kind, chunk, k, start, clock[g]))
            position[g] += 1
            moved = True
        if not moved:
            raise RuntimeError("the schedule deadlocked")
    return events


def one_f_one_b(p: int, m: int, forward: Fraction = Fraction(1), backward: Fraction = Fraction(2)) -> list[Event]:
    """1F1B on p equal stages, m micro-batches; a stage's forward takes ``forward``, its backward ``backward``."""
    return replay(one_f_one_b_orders(p, m), forward, backward)


def uneven(work: list[Fraction], m: int) -> list[Event]:
    """1F1B over stages of uneven work (a stage's forward takes its ``work``, its backward twice that)."""
    return replay(one_f_one_b_orders(len(work), m), [Fraction(w) for w in work], [2 * Fraction(w) for w in work])


def interleaved(p: int, v: int, m: int, forward: Fraction = Fraction(1), backward: Fraction = Fraction(2)) -> list[Event]:
    """The interleaved schedule: each GPU's l/p layers as v chunks, each chunk's passes a v-th of the stage's."""
    return replay(interleaved_orders(p, v, m), Fraction(forward) / v, Fraction(backward) / v, v)


def makespan(events: list[Event]) -> Fraction:
    return max(event.end for event in events)


def idle_share(events: list[Event]) -> Fraction:
    """The bubble measured: time the GPUs wait, over the time they compute."""
    gpus = {event.gpu for event in events}
    busy = sum((event.end - event.start for event in events), Fraction(0))
    return (makespan(events) * len(gpus) - busy) / busy
