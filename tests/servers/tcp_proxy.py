"""A TCP proxy on 127.0.0.1 in front of a real server, which a test cuts (the server is unreachable: new
connections are refused and open ones are closed) and restores on the same port: an outage of the
network between a machine and its server, with the server itself running on."""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Iterator

Pairs = dict[socket.socket, socket.socket]
"""Each end of a forwarded connection, to the other end."""


class TcpProxy:
    """Forwards ``127.0.0.1:port`` to ``127.0.0.1:target_port`` in a thread of its own until ``close``."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._wake_read, self._wake_write = socket.socketpair()
        self._listen()

    def url_for(self, url: str) -> str:
        """``url`` (a connection string to the target's port) through the proxy."""
        return url.replace(f":{self.target_port}/", f":{self.port}/")

    def cut(self) -> None:
        """Refuse new connections and close the open ones."""
        self._stop_thread()
        with self._lock:
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.close()
            self._open.clear()

    def restore(self) -> None:
        """Accept connections on the same port again."""
        self._listen()

    def close(self) -> None:
        self.cut()
        self._wake_read.close()
        self._wake_write.close()

    def _listen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._thread = threading.Thread(target=self._serve, args=(listener,), daemon=True)
        self._thread.start()

    def _stop_thread(self) -> None:
        if self._thread is None:
            return
        self._wake_write.send(b"x")
        self._thread.join()
        self._thread = None
        self._wake_read.recv(16)

    def _serve(self, listener: socket.socket) -> None:
        """Accept and forward until woken to stop; then the listener is closed."""
        selector = selectors.DefaultSelector()
        selector.register(listener, selectors.EVENT_READ, "accept")
        selector.register(self._wake_read, selectors.EVENT_READ, "stop")
        pairs: Pairs = {}
        try:
            while True:
                for key, _ in selector.select():
                    if key.data == "stop":
                        return
                    if key.data == "accept":
                        self._accept(listener, selector, pairs)
                    else:
                        self._forward(key.fileobj, selector, pairs)  # type: ignore[arg-type]
        finally:
            selector.close()
            listener.close()

    def _accept(self, listener: socket.socket, selector: selectors.BaseSelector, pairs: Pairs) -> None:
        client, _ = listener.accept()
        try:
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
        except OSError:
            client.close()
            return
        pairs[client], pairs[upstream] = upstream, client
        with self._lock:
            self._open |= {client, upstream}
        for end in (client, upstream):
            selector.register(end, selectors.EVENT_READ, "forward")

    def _forward(self, source: socket.socket, selector: selectors.BaseSelector, pairs: Pairs) -> None:
        try:
            data = source.recv(65536)
            if data:
                pairs[source].sendall(data)
                return
        except OSError:
            pass
        for end in _pair(source, pairs):
            with contextlib.suppress(KeyError, ValueError, OSError):
                selector.unregister(end)
            with contextlib.suppress(OSError):
                end.close()
            with self._lock:
                self._open.discard(end)


def _pair(source: socket.socket, pairs: Pairs) -> Iterator[socket.socket]:
    other = pairs.pop(source, None)
    yield source
    if other is not None:
        pairs.pop(other, None)
        yield other
