"""A real local recall sidecar for an agent runtime's tests.

    from recall_client.testing import Fixture, local_sidecar

    with local_sidecar([Fixture("acme", "andy", file="tests/andy.jsonl")]) as sidecar:
        with sidecar.client() as recall:
            session = recall.open_session(scope="veetbot")
        sidecar.reset()          # every principal's memory erased, the fixtures loaded again

It runs ``recall test-sidecar`` (found at RECALL_BIN, as ``recall`` on PATH, or as the
``node_modules/.bin/recall`` of the npm package @recall-memory/sidecar installed in the current
folder or a parent) on an in-memory store, on 127.0.0.1 where the trusted identity headers
are allowed. With pytest, the ``recall_sidecar`` fixture (pytest_plugin.py) does this for you.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recall_client.aio import AsyncRecallClient
from recall_client.client import RecallClient

__all__ = ["Fixture", "LocalSidecar", "SidecarError", "local_sidecar", "recall_command", "start_local_sidecar"]

#: The store of a testing sidecar: in memory, gone when it stops.
MEMORY = "memory"


class SidecarError(RuntimeError):
    """The testing sidecar could not be found, did not start (a bad fixture says its line and field), or failed a reset."""


@dataclass(frozen=True)
class Fixture:
    """One principal's memory, in the format of ``recall import``: one ``{"belief": ...}`` or
    ``{"episode": ...}`` per line, fields in protobuf JSON (snake_case, enums by name, RFC 3339 times).

    Attributes:
        file: a JSONL file; jsonl: the same as text; records: the same as dicts. Any may be combined.
    """

    tenant_id: str
    principal_id: str
    file: str | os.PathLike[str] | None = None
    jsonl: str | None = None
    records: Sequence[Mapping[str, Any]] = field(default_factory=tuple)

    def to_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"tenantId": self.tenant_id, "principalId": self.principal_id, "records": [dict(r) for r in self.records]}
        if self.file is not None:
            message["file"] = str(Path(self.file).resolve())
        if self.jsonl is not None:
            message["jsonl"] = self.jsonl
        return message


NO_RECALL_COMMAND = (
    "no recall sidecar found: install the npm package (npm install @recall-memory/sidecar, "
    "here or in a parent folder), put `recall` on PATH (npm install -g @recall-memory/sidecar), "
    "or set RECALL_BIN to its bin (node_modules/.bin/recall, or a checkout's dist/cli/main.js)"
)


def recall_command(cwd: Path | None = None) -> list[str]:
    """The command that runs ``recall``: RECALL_BIN (a path; a .js file runs with node), else
    ``recall`` on PATH, else the bin of the npm package installed in ``cwd`` or a parent
    (``node_modules/.bin/recall``, where npm puts it), else a built checkout of the project in
    ``cwd`` or a parent (npm links no package's own bin into its own folder). Otherwise one
    SidecarError saying how."""
    configured = os.environ.get("RECALL_BIN")
    if configured:
        parts = shlex.split(configured)
        return ["node", *parts] if len(parts) == 1 and parts[0].endswith((".js", ".mjs")) else parts
    found = shutil.which("recall")
    if found:
        return [found]
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        installed = folder / "node_modules" / ".bin" / "recall"
        if installed.is_file():
            return [str(installed)]
        if _is_built_checkout(folder):
            return ["node", str(folder / "dist" / "cli" / "main.js")]
    raise SidecarError(NO_RECALL_COMMAND)


def _is_built_checkout(folder: Path) -> bool:
    """A clone of the project with its build: package.json names the package, dist holds the bin."""
    try:
        name = json.loads((folder / "package.json").read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        return False
    return name == "@recall-memory/sidecar" and (folder / "dist" / "cli" / "main.js").is_file()


class LocalSidecar:
    """A running testing sidecar. Stop it with ``stop()`` (or use ``local_sidecar``)."""

    def __init__(self, process: subprocess.Popen[str], log: Any, identity: tuple[str, str], start_timeout: float, socket_path: str | None) -> None:
        self._process = process
        self._log = log
        self._identity = identity
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._resets = 0
        self._clients: list[RecallClient] = []
        self._lock = threading.Lock()
        self._final_log = ""
        threading.Thread(target=self._read, name="recall-sidecar-stdout", daemon=True).start()
        ready = self._next(start_timeout, "no SERVING")
        if ready.get("type") != "ready":
            self._kill()
            message = f"recall sidecar did not start: {ready.get('message', ready)}\n{self.logs()}"
            self.stop()
            raise SidecarError(message)
        self.port: int = int(ready["port"])
        #: "127.0.0.1:PORT", for any gRPC client.
        self.address = f"127.0.0.1:{self.port}"
        #: The Unix socket it also listens on, when RECALL_SOCKET_PATH was set; connect to "unix://" + it.
        self.socket_path = socket_path

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                self._messages.put(message)
        self._messages.put(None)

    def _next(self, timeout: float, what: str) -> dict[str, Any]:
        try:
            message = self._messages.get(timeout=timeout)
        except queue.Empty:
            self._kill()
            raise SidecarError(f"recall sidecar: {what} within {timeout} s\n{self.logs()}") from None
        if message is None:
            code = self._process.wait()
            raise SidecarError(f"recall sidecar exited with {code}\n{self.logs()}")
        return message

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def client(self, tenant_id: str | None = None, principal_id: str | None = None, **options: Any) -> RecallClient:
        """A blocking client on this sidecar (default: the sidecar's identity); closed by ``stop()``.

        ``options`` go to ``RecallClient`` (``token``, ``timeout``, ...).
        """
        tenant, principal = (tenant_id, principal_id) if tenant_id is not None else self._identity
        client = RecallClient(self.address, tenant_id=tenant, principal_id=principal, **options)
        self._clients.append(client)
        return client

    def async_client(self, tenant_id: str | None = None, principal_id: str | None = None, **options: Any) -> AsyncRecallClient:
        """An asyncio client on this sidecar; create it in its event loop and close it there."""
        tenant, principal = (tenant_id, principal_id) if tenant_id is not None else self._identity
        return AsyncRecallClient(self.address, tenant_id=tenant, principal_id=principal, **options)

    def reset(self, timeout: float = 30.0) -> None:
        """Erases every principal's memory, traces included, and loads the fixtures again."""
        with self._lock:
            self._resets += 1
            self._send({"type": "reset", "id": self._resets})
            reply = self._next(timeout, "no reset")
        if reply.get("type") != "reset-done" or reply.get("id") != self._resets:
            raise SidecarError(f"reset failed: {reply.get('message', reply)}")

    def stop(self, timeout: float = 15.0) -> int | None:
        """Stops the sidecar gracefully (closing its stdin) and closes its clients; returns its exit code."""
        for client in self._clients:
            client.close()
        self._clients.clear()
        if self._process.poll() is None:
            try:
                assert self._process.stdin is not None
                self._process.stdin.close()
            except OSError:
                pass
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._kill()
        if not self._log.closed:
            self._final_log = self.logs()
            self._log.close()
            os.unlink(self._log.name)
        return self._process.returncode

    def logs(self) -> str:
        """The sidecar's log (JSON lines from its stderr), for a failing test's message."""
        if self._log.closed:
            return self._final_log
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")[-64_000:]

    def _kill(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def __enter__(self) -> LocalSidecar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _store_env(store: str | Mapping[str, str]) -> dict[str, str]:
    if store == MEMORY:
        return {"RECALL_DATA_DIR": "memory://"}
    if isinstance(store, Mapping) and "data_dir" in store:
        return {"RECALL_DATA_DIR": str(store["data_dir"])}
    if isinstance(store, Mapping) and "database_url" in store:
        return {"RECALL_DATABASE_URL": str(store["database_url"])}
    raise ValueError('store: "memory", {"data_dir": ...} or {"database_url": ...}')


def start_local_sidecar(
    fixtures: Sequence[Fixture] = (),
    *,
    identity: tuple[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    store: str | Mapping[str, str] = MEMORY,
    port: int = 0,
    start_timeout: float = 60.0,
    command: Sequence[str] | None = None,
) -> LocalSidecar:
    """Starts a sidecar on 127.0.0.1, loads the fixtures, and returns once it serves.

    Args:
        fixtures: loaded before it is handed over, and again by every ``reset()``. A bad one
            fails the start with ``SidecarError`` naming the fixture, line and field.
        identity: (tenant, principal) of ``client()`` (default: the first fixture's, else "test", "test").
        env: more RECALL_* settings (e.g. RECALL_FAULT_ARM_DELAY, RECALL_IDENTITY=jwt and its keys,
            RECALL_SOCKET_PATH); RECALL_LOG_LEVEL defaults to "warn".
        store: "memory" (default), {"data_dir": path} or {"database_url": url}: reset() empties it,
            so never point it at data you want to keep.
    """
    first = fixtures[0] if fixtures else None
    who = identity or ((first.tenant_id, first.principal_id) if first else ("test", "test"))
    # The caller's environment, less its recall settings: this sidecar's are the ones given here.
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(("RECALL_", "OTEL_"))}
    child_env.update({"RECALL_LOG_LEVEL": "warn", "RECALL_SHUTDOWN_GRACE_MS": "2000", **(env or {})})
    # Loopback only, whatever `env` says: the identity headers are trusted there.
    child_env.update({"RECALL_HOST": "127.0.0.1", "RECALL_PORT": str(port), **_store_env(store)})
    log = tempfile.NamedTemporaryFile("w+", prefix="recall-sidecar-", suffix=".log", delete=False)
    argv = [*(command or recall_command()), "test-sidecar"]
    try:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=child_env, text=True, bufsize=1)
    except OSError as error:
        log.close()
        os.unlink(log.name)
        raise SidecarError(f"cannot run {' '.join(argv)}: {error.strerror}") from error
    assert process.stdin is not None
    process.stdin.write(json.dumps({"type": "fixtures", "fixtures": [f.to_message() for f in fixtures]}) + "\n")
    process.stdin.flush()
    return LocalSidecar(process, log, who, start_timeout, child_env.get("RECALL_SOCKET_PATH"))


@contextmanager
def local_sidecar(fixtures: Sequence[Fixture] = (), **options: Any) -> Iterator[LocalSidecar]:
    """``start_local_sidecar`` as a context manager: the sidecar stops when the block ends."""
    sidecar = start_local_sidecar(fixtures, **options)
    try:
        yield sidecar
    finally:
        sidecar.stop()
