"""One headless Chromium for many page loads, driven over the DevTools protocol on a pipe.

Starting Chromium costs more than loading a page of the book, so the browser tests start it once
and open each page in a tab of its own, in a fresh browser context (no cookie, storage or cache
carried from one load to the next, as a new profile for each run would give). A load runs the
way `chromium --headless --virtual-time-budget=MS --dump-dom URL` does: once the page has loaded,
its timers are fast-forwarded on virtual time, which stands still while a fetch is pending, until
the budget is spent; then the DOM is read. The console messages Chromium would have logged (uncaught errors, failed loads,
blocked requests, console calls) are collected per load.

Only the standard library: `--remote-debugging-pipe` speaks JSON messages, each ended by a NUL
byte, on file descriptors 3 (to the browser) and 4 (from it).
"""

from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import threading
import time


class BrowserError(RuntimeError):
    pass


class Chromium:
    """A headless Chromium process; `page(width, height)` opens a tab in a fresh context."""

    def __init__(self, binary: str, profile: str, flags: tuple[str, ...] = ()):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_fds() -> None:  # in the child: the protocol's fds 3 and 4, kept across exec
            high = [os.dup(to_browser_r), os.dup(from_browser_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.stderr = open(os.environ.get("CB_CHROMIUM_LOG", os.path.join(profile, "chromium.log")), "w")
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-dev-shm-usage", "--no-first-run", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", *flags, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr,
            preexec_fn=wire_fds, close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._lock = threading.Lock()
        self._next_id = 0
        self._waiting: dict[int, queue.Queue] = {}
        self._sessions: dict[str, queue.Queue] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                break
            buf += chunk
            *messages, buf = buf.split(b"\0")
            for raw in messages:
                msg = json.loads(raw)
                if "id" in msg:
                    q = self._waiting.pop(msg["id"], None)
                    if q:
                        q.put(msg)
                elif msg.get("sessionId") in self._sessions:
                    self._sessions[msg["sessionId"]].put(msg)
        for q in list(self._waiting.values()):
            q.put({"error": {"message": "the browser closed its pipe"}})

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 60) -> dict:
        q: queue.Queue = queue.Queue()
        with self._lock:
            self._next_id += 1
            msg = {"id": self._next_id, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            self._waiting[self._next_id] = q
            os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        try:
            reply = q.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"{method}: no answer in {timeout} s") from None
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    def page(self, width: int, height: int) -> "Page":
        return Page(self, width, height)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (BrowserError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        self.stderr.close()

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    """A tab of its own browser context, WIDTH x HEIGHT CSS px; close() drops both."""

    def __init__(self, browser: Chromium, width: int, height: int):
        self.browser = browser
        self.context = browser.send("Target.createBrowserContext")["browserContextId"]
        target = browser.send("Target.createTarget", {"url": "about:blank", "browserContextId": self.context,
                                                      "width": width, "height": height})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.events: queue.Queue = queue.Queue()
        browser._sessions[self.session] = self.events
        self.console: list[str] = []
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.resize(width, height)

    def send(self, method: str, params: dict | None = None, timeout: float = 60) -> dict:
        return self.browser.send(method, params, self.session, timeout)

    def resize(self, width: int, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False})

    def _note(self, msg: dict) -> None:
        """Keeps what Chromium would have logged as a console message."""
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            what = (d.get("exception") or {}).get("description", "").split("\n")[0]
            self.console.append(f"{d.get('text', 'Uncaught')} {what}".strip())
        elif method == "Log.entryAdded" and p.get("entry", {}).get("source") != "network":
            # A failed request (network) is not among the messages Chromium logs to the console;
            # a page sees it as a failed load or a rejected fetch.
            self.console.append(p.get("entry", {}).get("text", ""))

    def _wait_for(self, event: str, deadline: float) -> dict:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {event} in time")
            try:
                msg = self.events.get(timeout=left)
            except queue.Empty:
                raise TimeoutError(f"no {event} in time") from None
            self._note(msg)
            if msg.get("method") == event:
                return msg

    def load(self, url: str, budget_ms: int, timeout: float = 90) -> str:
        """Opens URL and, once it has loaded, runs its timers on virtual time until BUDGET_MS is
        spent (a fetch in flight holds the clock); returns the DOM as HTML. TimeoutError after
        TIMEOUT real seconds."""
        deadline = time.monotonic() + timeout
        self.send("Page.navigate", {"url": url}, timeout=timeout)
        self._wait_for("Page.loadEventFired", deadline)
        self.send("Emulation.setVirtualTimePolicy", {"policy": "pauseIfNetworkFetchesPending", "budget": budget_ms})
        self._wait_for("Emulation.virtualTimeBudgetExpired", deadline)
        return self.dom()

    def dom(self) -> str:
        self._drain()
        return self.send("Runtime.evaluate", {"expression": "document.documentElement.outerHTML",
                                              "returnByValue": True})["result"].get("value", "")

    def _drain(self) -> None:
        while True:
            try:
                self._note(self.events.get_nowait())
            except queue.Empty:
                return

    def screenshot(self, url: str, path: str, timeout: float = 90) -> None:
        """URL as it looks once loaded, scrollbars hidden, the viewport's size, as PNG at PATH."""
        deadline = time.monotonic() + timeout
        self.send("Emulation.setScrollbarsHidden", {"hidden": True})
        self.send("Page.navigate", {"url": url}, timeout=timeout)
        self._wait_for("Page.loadEventFired", deadline)
        shot = self.send("Page.captureScreenshot", {"format": "png"}, timeout=max(1, deadline - time.monotonic()))
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def close(self) -> None:
        self.browser._sessions.pop(self.session, None)
        try:
            self.browser.send("Target.disposeBrowserContext", {"browserContextId": self.context})
        except (BrowserError, TimeoutError):
            pass

    def __enter__(self) -> "Page":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
