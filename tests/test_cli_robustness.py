"""What a new user hits in the second hour (issue 50): a scheduler address where something else listens, the
modes of written files, a benchmark file larger than the disk, Ctrl-C while numba compiles, unreadable
characterization records, and warnings on stderr. Every case runs the real command."""

import contextlib
import http.server
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from test_cli import one_line

from sysmodel import sweep
from sysmodel.cli import main

# --- sweep --scheduler at an address where no Dask scheduler listens ----------------------------------------


@contextlib.contextmanager
def _silent() -> Iterator[int]:
    """A port whose connections the kernel accepts (the listen backlog) and nobody ever answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


class _QuietHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test's stderr is the command's
        pass


@contextlib.contextmanager
def _http() -> Iterator[int]:
    """An HTTP server (Python's), as Dask's dashboard on 8787."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def _replying(reply: bytes) -> Iterator[int]:
    """A listener that sends ``reply`` to each connection and closes it, for at most 30 s."""
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        deadline = time.monotonic() + 30
        while not stop.is_set() and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                conn, _ = srv.accept()
                with conn:
                    conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        srv.close()


@pytest.mark.parametrize(
    ("listener", "needle"),
    [
        (_silent, "accepted the connection but no Dask scheduler answered within 1 s"),
        (_http, "such as the dashboard (8787) instead of the scheduler (8786)?"),
        # tornado's answer to a non-HTTP request (the dashboard's server): read as a 3 EiB frame length
        (lambda: _replying(b"HTTP/1.1 400 Bad Request\r\n\r\n"), "answered, but not as a Dask scheduler"),
        (lambda: _replying(b"\x07\x00\x00\x00\x00\x00\x00\x00garbage\xff\xfe" * 4), "answered, but not as a Dask"),
        (lambda: _replying(b""), "no Dask scheduler answered at"),  # closes at once
    ],
    ids=["silent", "http", "http-400", "garbage", "closes"],
)
def test_scheduler_address_of_something_else(listener, needle, tmp_path, capsys, monkeypatch) -> None:
    """The timeout bounds the whole handshake, not only the TCP connect (1 s here to keep the test quick)."""
    monkeypatch.setattr(sweep, "SCHEDULER_TIMEOUT_S", 1)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("kind: deca\ngrid:\n  density: [0.5]\n")
    with listener() as port:
        start = time.monotonic()
        code = main(["sweep", str(cfg), "--scheduler", f"tcp://127.0.0.1:{port}", "--out", str(tmp_path / "x.csv")])
        elapsed = time.monotonic() - start
    assert code == 2 and elapsed < 1 + 2, elapsed
    one_line(capsys, "--scheduler: ", f"tcp://127.0.0.1:{port}", needle)
    assert not (tmp_path / "x.csv").exists()
