#!/usr/bin/env python3
"""An application using the demo store of `make run`: fetches, inserts and updates aircraft
over stratad's data socket (Varlink: JSON messages ending in a NUL byte), RATE calls a second,
until Ctrl-C. While it runs, the idle scheduler leaves the deferred cleanup alone (more than
scheduler.request_rate = 5 calls a second); `stratactl status` says so.

usage: scripts/demo-client.py [--version NAME] [DATA_SOCKET] [RATE]
       (defaults: var/run/data.sock, 20)
--version NAME: every call names the model version the client was built against (an older
version of the store is served in its own names while the store can: docs/Rollout.md);
without it calls are served at the store's version.
Python's standard library only. Exit status: 0 after Ctrl-C (SIGINT) or SIGTERM, 1 when a
call fails.
"""
import json
import signal
import socket
import sys
import time


def stop(*_):
    raise KeyboardInterrupt


# Ctrl-C and `kill` stop it even when started by a program that blocks or ignores them (a
# test harness, `command &` in a script).
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)

arguments = sys.argv[1:]
version = None
if arguments[:1] == ["--version"]:
    if len(arguments) < 2:
        sys.exit("demo-client: --version needs a model version name (e.g. --version \"Aircraft 2\")")
    version, arguments = arguments[1], arguments[2:]
path = arguments[0] if len(arguments) > 0 else "var/run/data.sock"
rate = float(arguments[1]) if len(arguments) > 1 else 20.0

connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    connection.connect(path)
except OSError as error:
    sys.exit(f"demo-client: cannot connect to {path}: {error.strerror} (is `make run` running?)")
pending = b""


def call(method, **parameters):
    """One Varlink call; returns the reply's parameters or exits with the error."""
    global pending
    if version is not None:
        parameters["version"] = version
    connection.sendall(json.dumps({"method": f"io.strata.Store.{method}", "parameters": parameters}).encode() + b"\0")
    while b"\0" not in pending:
        chunk = connection.recv(65536)
        if not chunk:
            sys.exit("demo-client: stratad closed the connection")
        pending += chunk
    message, pending = pending.split(b"\0", 1)
    reply = json.loads(message)
    if "error" in reply:
        sys.exit(f"demo-client: {method} failed: {reply['error']} {reply.get('parameters', {})}")
    return reply.get("parameters", {})


print(f"demo-client: {rate:g} calls a second on {path} (fetch, insert, update); Ctrl-C stops", flush=True)
calls, last_report, n, last_id = 0, time.monotonic(), 0, None
try:
    while True:
        started = time.monotonic()
        n += 1
        if n % 3 == 0:
            created = call("Insert", store="aircraft", entity="Aircraft",
                           values={"tailNumber": f"D-{time.time_ns() // 1000 % 10**10:010d}", "aircraftType": "A320",
                                   "colorScheme": {"primary": "red"}})
            last_id = created["object"]["_pk"]
        elif n % 3 == 1 and last_id is not None:
            call("Update", store="aircraft", entity="Aircraft", id=last_id, values={"aircraftClass": "land"})
        else:
            call("Fetch", store="aircraft", entity="Aircraft", predicate="tailNumber BEGINSWITH %@",
                 arguments=[f"N{n % 2000:04d}"], limit=5)
        calls += 1
        now = time.monotonic()
        if now - last_report >= 5:
            print(f"demo-client: {calls / (now - last_report):.0f} calls/s", flush=True)
            calls, last_report = 0, now
        time.sleep(max(0.0, 1.0 / rate - (now - started)))
except KeyboardInterrupt:
    print("\ndemo-client: stopped", flush=True)
