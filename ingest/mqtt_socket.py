"""The paho transport of the MQTT consumer: a client whose socket reads in bulk.

`BufferedClient` is a paho `Client` whose socket (`BufferedSocket`) reads up to 256 KiB per
system call and serves paho's small reads from its buffer; the consumer's loop asks
`pending()` to skip `select` while bytes are buffered.
"""

from __future__ import annotations

from typing import Any

import paho.mqtt.client as mqtt


class BufferedSocket:
    """A socket that reads up to 256 KiB per system call and serves paho from the buffer.

    paho-mqtt reads each packet in three `recv` calls (1 byte, length bytes, body) and waits in
    `select` before each packet; with small AVL messages that, not parsing, bounds throughput.
    paho asks `pending()` (as for TLS sockets) and skips `select` while bytes are buffered.
    """

    READ_BYTES = 256 * 1024

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._buf = bytearray()
        self._pos = 0

    def recv(self, bufsize: int) -> bytes:
        if self._pos >= len(self._buf):
            data = self._sock.recv(self.READ_BYTES)  # raises BlockingIOError when empty
            if not data:
                return b""
            self._buf = bytearray(data)
            self._pos = 0
        end = min(self._pos + bufsize, len(self._buf))
        out = bytes(self._buf[self._pos : end])
        self._pos = end
        return out

    def pending(self) -> int:
        inner = self._sock.pending() if hasattr(self._sock, "pending") else 0
        return len(self._buf) - self._pos + inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class BufferedClient(mqtt.Client):
    """paho Client whose socket reads in bulk (see `BufferedSocket`)."""

    def _create_socket(self) -> Any:
        return BufferedSocket(super()._create_socket())
