"""A name server for the agent's namespace that knows no name: every query
gets NXDOMAIN at once, and the names asked are recorded.

Why: in a namespace with loopback only, a lookup sent to an address that
does not exist is retried for seconds (the agents look up their vendors'
hosts at start and at exit: Codex waited 5 s per run). offline.py makes
/etc/resolv.conf empty inside the namespace, so resolvers ask 127.0.0.1:53,
and this answers there. `names` says which hosts an agent tried to reach.
"""

import socket
import struct
import threading

NXDOMAIN = 3


def question_name(packet):
    """The first question's name of a DNS query ("" when malformed)."""
    labels, i = [], 12
    while i < len(packet) and packet[i]:
        n = packet[i]
        labels.append(packet[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    return ".".join(labels)


def nxdomain(packet):
    """The answer to `packet`: its id and question, flags QR|RD|RA, rcode 3."""
    if len(packet) < 12:
        return None
    ident, flags = struct.unpack("!HH", packet[:4])
    head = struct.pack("!HHHHHH", ident, 0x8000 | (flags & 0x0100) | 0x0080 | NXDOMAIN, 1, 0, 0, 0)
    end = 12
    while end < len(packet) and packet[end]:
        end += 1 + packet[end]
    return head + packet[12:end + 5]


class NoDNS:
    """UDP 127.0.0.1:53 in the calling thread's namespace (`bind`), served
    by a daemon thread (`start`) until `close`."""

    def __init__(self, port=53):
        self.names = []
        self.sock = None
        self.port = port

    def bind(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", self.port))
        self.port = self.sock.getsockname()[1]

    def start(self):
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                packet, peer = self.sock.recvfrom(4096)
            except OSError:
                return  # closed
            if not packet:
                return  # shut down
            self.names.append(question_name(packet))
            answer = nxdomain(packet)
            if answer:
                self.sock.sendto(answer, peer)

    def close(self):
        if self.sock:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)  # wakes the serving thread's recvfrom
            except OSError:
                pass
            self.sock.close()
