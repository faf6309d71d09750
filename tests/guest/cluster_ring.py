# SPDX-License-Identifier: GPL-2.0
"""One rank of tests/guest/cluster_clock.sh's exchange: each round, send a
chunk to both ring neighbours and receive one from each, over TCP; the
slow rank sleeps before each round. Usage: cluster_ring.py RANK N ROUNDS
SLOW_RANK SLEEP_MS ADDR_PREFIX (ranks listen on ADDR_PREFIX.(RANK+1):7000)."""
import socket
import sys
import time

rank, n, rounds, slow, sleep_ms = (int(a) for a in sys.argv[1:6])
prefix = sys.argv[6]
CHUNK = 4096


def addr(r):
    return ("%s.%d" % (prefix, r + 1), 7000)


def recv_all(s, n):
    buf = b""
    while len(buf) < n:
        part = s.recv(n - len(buf))
        if not part:
            raise SystemExit("rank %d: peer closed" % rank)
        buf += part
    return buf


nxt, prv = (rank + 1) % n, (rank - 1) % n
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(addr(rank))
listener.listen(1)
# Connect to the next rank (retrying until it listens), accept the previous.
deadline = time.time() + 60
while True:
    try:
        to_next = socket.create_connection(addr(nxt))
        break
    except OSError:
        if time.time() > deadline:
            raise
        time.sleep(0.05)
from_prev, _ = listener.accept()
for s in (to_next, from_prev):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
# A start barrier: one byte around the ring from rank 0.
if rank == 0:
    to_next.sendall(b"g")
    recv_all(from_prev, 1)
else:
    recv_all(from_prev, 1)
    to_next.sendall(b"g")
data = b"x" * CHUNK
for i in range(rounds):
    if rank == slow:
        time.sleep(sleep_ms / 1000)
    to_next.sendall(data)
    from_prev.sendall(data)
    recv_all(from_prev, CHUNK)
    recv_all(to_next, CHUNK)
print("rank %d done" % rank)
