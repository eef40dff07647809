"""free_port() for the test scripts: a TCP port of 127.0.0.1 that nothing
listens on now and that this process was never given before. The kernel
may give one port twice to bind(port 0) calls whose sockets were closed in
between; two of a script's listeners on one port would then share it
(SO_REUSEPORT) and take each other's connections."""
import socket

_given = set()


def free_port():
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port not in _given:
            _given.add(port)
            return port
