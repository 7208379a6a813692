"""A Dask cluster reached by address, or a one-line error naming it within a few seconds: what ``sweep
--scheduler``, ``compare``/``serve --scheduler`` and ``serve --dask`` connect through."""

from __future__ import annotations

SCHEDULER_TIMEOUT_S = 5


def _probe(scheduler: str, deadline: float, phase: list[str]) -> None:
    """Reach ``scheduler`` over TCP, then complete Dask's comm handshake with it, by ``deadline``
    (time.monotonic); ``phase`` is left at the step that failed."""
    import asyncio
    import socket
    import time

    from distributed.comm import connect
    from distributed.comm.addressing import parse_address, parse_host_port

    def left() -> float:
        return max(deadline - time.monotonic(), 0.01)

    scheme, loc = parse_address(scheduler)
    if scheme != "inproc":  # a refused or unreachable host said as such, not after Dask's 5 s of retries
        socket.create_connection(parse_host_port(loc), timeout=left()).close()
    phase[0] = "handshake"

    async def shake() -> None:
        comm = await connect(scheduler, timeout=left())
        await comm.close()

    asyncio.run(asyncio.wait_for(shake(), left()))
    phase[0] = "done"


def _handshake(scheduler: str, flag: str = "--scheduler") -> None:
    """Raise a ValueError naming ``scheduler`` unless a Dask scheduler answers there within
    SCHEDULER_TIMEOUT_S. ``Client(timeout=)`` bounds only the TCP connect, not the handshake read that
    follows (distributed/comm/core.py ``connect``): a listener that never answers hangs it, and an HTTP
    server's reply (the dashboard on 8787) is read as a frame length of 3 EiB, a MemoryError. The probe runs
    on a daemon thread of its own: a caller's event loop (a notebook) is left alone, and a host name whose
    lookup hangs is abandoned at the deadline."""
    import socket
    import threading
    import time

    phase, error = ["connect"], []

    def run() -> None:
        try:
            _probe(scheduler, time.monotonic() + SCHEDULER_TIMEOUT_S, phase)
        except BaseException as e:  # reported below, on the caller's thread
            error.append(e)

    thread = threading.Thread(target=run, daemon=True, name="membound-scheduler-probe")
    thread.start()
    thread.join(SCHEDULER_TIMEOUT_S + 0.5)
    if phase[0] == "done":
        return
    e = error[0] if error else TimeoutError()
    within = f"within {SCHEDULER_TIMEOUT_S} s"
    hint = "is something else listening there, such as the dashboard (8787) instead of the scheduler (8786)?"
    if phase[0] == "connect":
        named: dict[type[BaseException], str] = {
            ConnectionRefusedError: "connection refused",
            socket.gaierror: "unknown host",
        }
        why = named.get(type(e))
        raise ValueError(f"{flag}: no Dask scheduler answered at {scheduler} {within} ({why or type(e).__name__})")
    if isinstance(e, TimeoutError):
        raise ValueError(f"{flag}: {scheduler} accepted the connection but sent no Dask handshake {within}: {hint}")
    raise ValueError(f"{flag}: {scheduler} answered, but not as a Dask scheduler ({hint})")


def client(scheduler: str, flag: str = "--scheduler"):
    """A Dask client for ``scheduler``, or a ValueError naming the address (and ``flag``, the option that
    gave it) within a few seconds."""
    import re

    from dask.distributed import Client

    if not re.fullmatch(r"(tcp|tls|ws|wss)://[^\s:/]+:\d+|inproc://\S+|[^\s:/]+:\d+", scheduler):
        raise ValueError(f"{flag}: {scheduler!r} is not a scheduler address (tcp://HOST:PORT)")
    _handshake(scheduler, flag)
    try:
        return Client(scheduler, timeout=f"{SCHEDULER_TIMEOUT_S}s")
    except (OSError, TimeoutError) as e:
        raise ValueError(
            f"{flag}: no Dask scheduler answered at {scheduler} within {SCHEDULER_TIMEOUT_S} s ({type(e).__name__})"
        ) from None
