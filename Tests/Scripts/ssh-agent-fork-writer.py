# Connects to the SSH agent socket argv[1], asks for the identities itself, then forks a child
# that asks through the same socket. Prints `own N` (the bytes of its own answer) and `child N`
# (what the child got: 0 when the agent closed the connection on it).
import os
import socket
import sys

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(10)
request = bytes([0, 0, 0, 1, 11])
s.sendall(request)
own = s.recv(65536)
child = os.fork()
if child == 0:
    try:
        s.sendall(request)
        got = s.recv(65536)
    except OSError:
        got = b""
    print("child", len(got), flush=True)
    os._exit(0)
os.waitpid(child, 0)
print("own", len(own), flush=True)
