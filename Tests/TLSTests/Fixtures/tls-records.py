#!/usr/bin/env python3
"""Sends COUNT pipelined requests over TLS, one TLS record each, all records in a single TCP write, so
they reach the server together; prints how many responses came back within the deadline.

Usage: tls-records.py PORT COUNT [SECONDS]
"""
import socket
import ssl
import sys
import time

port, count = int(sys.argv[1]), int(sys.argv[2])
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
tls = context.wrap_bio(incoming, outgoing, server_hostname="example.com")
deadline = time.time() + seconds
with socket.create_connection(("127.0.0.1", port), timeout=seconds) as sock:
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            sock.sendall(outgoing.read())
            data = sock.recv(65536)
            if not data:
                sys.exit("closed during the handshake")
            incoming.write(data)
    sock.sendall(outgoing.read())
    request = b"GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"
    for index in range(count):
        tls.write(request if index < count - 1 else request.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
    sock.sendall(outgoing.read())
    received = b""
    while time.time() < deadline:
        sock.settimeout(max(0.01, deadline - time.time()))
        try:
            data = sock.recv(65536)
        except socket.timeout:
            break
        if not data:
            break
        incoming.write(data)
        try:
            while chunk := tls.read(65536):
                received += chunk
        except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
            pass
print(received.count(b"HTTP/1.1 200 OK"))
