"""Running a component's asyncio main until SIGINT/SIGTERM/SIGHUP, with logging set up
once (klog's one-line format), and tied to the life of its supervisor."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import json
import logging
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping

import uvloop

from kubedra.tasks import cancel_and_wait

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1
log = logging.getLogger(__name__)


def follow_supervisor(supervisor: int) -> None:
    """Have SIGTERM sent to this process when its parent ``supervisor`` dies (Linux's
    parent-death signal; elsewhere a thread watching the parent pid). Exits at once if the
    supervisor is already gone."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    else:
        def watch() -> None:
            while os.getppid() == supervisor:
                time.sleep(1.0)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, name="follow-supervisor", daemon=True).start()
    if os.getppid() != supervisor:  # it died before the signal was armed
        sys.exit("the supervisor exited")


_SEVERITY = {logging.DEBUG: "I", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E",
             logging.CRITICAL: "F"}


# what json.dumps(ensure_ascii=False) escapes in a string
_ESCAPED = re.compile(r'[\x00-\x1f"\\]')


def _quoted(text: str) -> str:
    """``text`` as a JSON string, as ``json.dumps(text, ensure_ascii=False)`` writes it;
    most log values (names, reasons) have nothing to escape and are quoted as they are."""
    if _ESCAPED.search(text) is None:
        return f'"{text}"'
    return json.dumps(text, ensure_ascii=False)


def _klog_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return _quoted(value if isinstance(value, str) else str(value))


class KlogFormatter(logging.Formatter):
    """``I1201 10:00:00.000000    123 file.py:42] message``, as klog writes its header. A
    call with a mapping argument, ``log.info("Pod bound", {"pod": "ns/a"})``, is rendered as
    klog's structured ``InfoS``: the message quoted, then ``key="value"`` pairs."""

    def __init__(self) -> None:
        super().__init__()
        self._second: tuple[int, str] = (-1, "")

    def _time(self, created: float) -> str:
        """``MMDD hh:mm:ss.uuuuuu`` in local time, as ``datetime.fromtimestamp`` rounds it;
        the part up to the second is formatted once per second (a busy component writes
        hundreds of lines in one)."""
        second = int(created)
        micros = round((created - second) * 1e6)
        if micros >= 1_000_000:
            second, micros = second + 1, micros - 1_000_000
        cached = self._second
        if cached[0] != second:
            cached = self._second = (second, time.strftime("%m%d %H:%M:%S",
                                                           time.localtime(second)))
        return f"{cached[1]}.{micros:06d}"

    def format(self, record: logging.LogRecord) -> str:
        args = record.args
        if isinstance(args, Mapping) and args:
            text = _quoted(str(record.msg)) + "".join(
                f" {key}={_klog_value(value)}" for key, value in args.items())
        else:
            text = record.getMessage()
        line = (f"{_SEVERITY.get(record.levelno, 'I')}{self._time(record.created)} "
                f"{record.process:7d} {record.filename}:{record.lineno}] {text}")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def setup_logging(verbosity: int) -> None:
    """Default: what a user needs (klog's -v=0); ``-v``: debugging detail too. Records skip
    the thread and multiprocessing names: the klog line has no place for them."""
    logging.logThreads = False
    logging.logMultiprocessing = False
    handler = logging.StreamHandler()
    handler.setFormatter(KlogFormatter())
    logging.basicConfig(level=logging.INFO if verbosity <= 0 else logging.DEBUG,
                        handlers=[handler])


def tune_cycle_collector() -> None:
    """Keep cycle-collector pauses off the hot paths of a component process: everything
    alive at start-up (modules, tables) moves to the permanent generation so full
    collections no longer walk it; young collections run every 20,000 allocations instead
    of 700, and the middle generation is walked every 200 young collections instead of 10.
    Request and event objects are freed by reference counting; the collector only finds the
    few cycles (tracebacks, futures), so running it less often costs little memory. What
    does cost is walking objects that live a while and then die by reference counting
    anyway: the API server's cached and windowed objects, which a middle collection every
    20 young ones walked again (in ``bench.job_bench`` a third of the server's collector
    time: 1.6 of 4.3 s)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 200, 20)


def _yield_to_the_api_server() -> None:
    """Run this process as a batch task (Linux ``SCHED_BATCH``, threads started later
    included): its wake-ups on watch events and answers then wait for a free core instead
    of preempting the API server, whose one event loop every component waits on."""
    if hasattr(os, "SCHED_BATCH"):
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))


#: seconds a component has, after its stop signal, to stop by itself before its main task is
#: cancelled (a component still starting, say retrying a rejected list, never looks at ``stop``)
STOP_GRACE = 5.0


def run_until_signalled(main: Callable[[asyncio.Event], Awaitable[None]], *,
                        control_loop: bool = False) -> None:
    """Run ``main(stop)`` on uvloop (every component's one event loop); ``stop`` is set on
    SIGINT, SIGTERM or SIGHUP so it can shut down cleanly. Whatever ``main`` is awaiting,
    it is cancelled (its ``finally`` blocks still run) if it has not returned
    :data:`STOP_GRACE` seconds after the signal, or at once on a second signal: a signalled
    component always exits. The cycle collector is tuned first, and a ``control_loop``
    (scheduler, controller manager, node agents) yields the cores to the API server; both
    are process-wide, so only here, where a command owns its process."""
    tune_cycle_collector()
    if control_loop:
        _yield_to_the_api_server()

    async def runner() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        work = asyncio.ensure_future(main(stop))

        def cancel() -> None:
            if not work.done():
                log.warning("Not stopped %.0f s after the stop signal; cancelling", STOP_GRACE)
                work.cancel()

        def signalled() -> None:
            if stop.is_set():
                work.cancel()
                return
            stop.set()
            loop.call_later(STOP_GRACE, cancel)

        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, signalled)
        try:
            await work
        except asyncio.CancelledError:
            if not stop.is_set():
                raise

    with contextlib.suppress(KeyboardInterrupt), asyncio.Runner(
            loop_factory=uvloop.new_event_loop) as loop_runner:
        loop_runner.run(runner())


async def until_stopped(stop: asyncio.Event, *work: Awaitable[None]) -> None:
    """Run ``work`` until ``stop`` is set or one of them ends (an error is re-raised)."""
    tasks = [asyncio.ensure_future(w) for w in work]
    stopper = asyncio.ensure_future(stop.wait())
    try:
        done, _ = await asyncio.wait([*tasks, stopper], return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            if t is not stopper:
                t.result()
    finally:
        await cancel_and_wait(*tasks, stopper)
