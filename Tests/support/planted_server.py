"""A Unix socket server another user planted, for the tests of issue 32 ("sockets we can trust").

Run as that user: `python3 planted_server.py SOCKET` (the tests pass this text with `-c`, so the
other user need not be able to read the repository). It prints `listening` once it listens, answers
every connection at once with a fake successful result (what would fool a client that trusts any
socket), prints `received N` for each chunk of N bytes as it arrives and `closed N` (the
connection's total) when the client goes, so a test can see what a client sent it, and when.
Used by AutosaveTestKit's PlantedServer and editors/nvim/test/test_nvim.py.
"""
import socket
import sys

server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[1])
server.listen(16)
print("listening", flush=True)
while True:
    connection, _ = server.accept()
    total = 0
    try:
        connection.sendall(b'{"jsonrpc":"2.0","id":1,"result":{"path":"notes.txt","root":"/","revision":1}}\n')
        connection.settimeout(20)
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                break
            total += len(chunk)
            print("received", len(chunk), flush=True)
    except OSError:
        pass
    connection.close()
    print("closed", total, flush=True)
