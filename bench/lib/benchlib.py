"""bench/lib/benchlib.py: the machinery bench/quick and the studies share.

Processes in their own sessions (stopped together on any exit), readiness and
correctness checks, wrk runs with exact counts, proxy CPU time from
/proc/<pid>/stat, idle-connection clients, medians, version and machine
descriptions. No workload lives here: bench/quick and bench/<study> define theirs.
"""
import csv
import datetime
import errno
import hashlib
import os
import platform
import re
import resource
import select
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLK_TCK = os.sysconf("SC_CLK_TCK")
BODY64 = b"0123456789012345678901234567890123456789012345678901234567890123"

WRK_LUA = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d bytes=%d duration_us=%d connect=%d read=%d write=%d status=%d timeout=%d p50=%d p99=%d max=%d\n",
    summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(99), latency.max))
end
"""


class Fatal(Exception):
    """Cannot run at all (exit 2)."""


# ---------------------------------------------------------------- processes

class Procs:
    """Every process we start lives in its own session (process group) so
    that one killpg() also takes its children (nginx workers)."""

    def __init__(self):
        self.live = []

    def start(self, argv, log_path, cpu=None):
        if cpu is not None:
            argv = ["taskset", "-c", str(cpu)] + argv
        log = open(log_path, "ab")
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        log.close()
        p.log_path = log_path
        self.live.append(p)
        return p

    def stop(self, p, grace=2.0):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        # The leader may be gone while children (nginx workers) live on.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(2)
        except subprocess.TimeoutExpired:
            pass
        if p in self.live:
            self.live.remove(p)

    def stop_all(self):
        for p in list(reversed(self.live)):
            self.stop(p, grace=1.0)


PROCS = Procs()


def on_signal(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def log_tail(path, n=8):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode(errors="replace").strip().splitlines()
        return " | ".join(lines[-n:])
    except OSError:
        return ""


def cpu_ticks(pid):
    """(utime, stime) of the whole process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def port_free(port):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def wait_port(port, proc, timeout=5.0):
    """True once <port> accepts; False if <proc> died or time ran out."""
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def http_get(port, path, timeout=3.0):
    """One plain HTTP/1.1 request; returns (status line, body length, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout) as s:
        s.settimeout(timeout)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while True:
            d = s.recv(262144)
            if not d:
                break
            chunks.append(d)
    data = b"".join(chunks)
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode(errors="replace")
    return status, len(body), body


def read_response(s, buf=b""):
    """Reads one HTTP/1.1 response (Content-Length or chunked) from the
    blocking socket s; returns (status line, body, leftover bytes)."""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            raise OSError(f"connection closed before the end of the headers ({len(buf)} bytes)")
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    hdrs = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    if "content-length" in hdrs:
        n = int(hdrs["content-length"])
        while len(rest) < n:
            d = s.recv(262144)
            if not d:
                raise OSError(f"connection closed after {len(rest)} of {n} body bytes")
            rest += d
        return lines[0], rest[:n], rest[n:]
    if "chunked" in hdrs.get("transfer-encoding", "").lower():
        while not rest.endswith(b"0\r\n\r\n"):   # good enough for our fixed bodies
            d = s.recv(262144)
            if not d:
                raise OSError("connection closed inside a chunked body")
            rest += d
        return lines[0], rest, b""
    raise OSError(f"response without Content-Length or chunked encoding: {lines[0]}")


def http_keepalive_check(port, path, body, n=3, timeout=3.0):
    """n requests on one connection; None when all were answered 200 with
    the right body over the same connection, else what went wrong."""
    with socket.create_connection(("127.0.0.1", port), timeout) as s:
        s.settimeout(timeout)
        left = b""
        for i in range(n):
            try:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
                status, got, left = read_response(s, left)
            except OSError as e:
                return f"keep-alive request {i + 1}/{n} on one connection: {e}"
            if not status.startswith("HTTP/1.1 200") or got != body:
                return (f"keep-alive request {i + 1}/{n}: '{status}', {len(got)} body bytes "
                        f"(expected 200 and {len(body)})")
    return None


def proc_status_kb(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def tcp_opens():
    """Connections opened by connect() so far, machine-wide (ActiveOpens of
    /proc/net/snmp): wrk's plus the proxy's to the backend."""
    with open("/proc/net/snmp") as f:
        rows = [l.split() for l in f if l.startswith("Tcp:")]
    return int(rows[1][rows[0].index("ActiveOpens")])



def write(path, text):
    with open(path, "w") as f:
        f.write(text)



def fd_hard_limit():
    h = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1 << 20 if h == resource.RLIM_INFINITY else h   # fs.nr_open caps it anyway



class Target:
    """One proxy process (or the direct path) and what went wrong with it."""

    def __init__(self, name, variant, port):
        self.name, self.variant, self.port = name, variant, port
        self.proc = None
        self.pids = []        # whose CPU time is the proxy's (nginx: master + worker)
        self.main_pid = None  # whose memory is the proxy's (nginx: the worker)
        self.failure = None   # text once it cannot be measured any more

    @property
    def label(self):
        return f"{self.name}/{self.variant}"

    def check_alive(self):
        if self.proc is not None and self.failure is None and self.proc.poll() is not None:
            self.failure = (f"{self.name} exited with status {self.proc.returncode} during the run; "
                            f"log: {log_tail(self.proc.log_path)}")
        return self.failure is None



def start_proxy(t, argv, tmp, cpu, checks, keepalive_check=False, workers=1):
    """Starts proxy <t> (argv, pinned to <cpu>, log in <tmp>) and sets
    t.failure unless it accepts, answers every (path, size, body or None) of
    <checks> with 200 and the right body, keeps a connection alive when
    <keepalive_check>, and (nginx) runs <workers> worker processes."""
    t.proc = PROCS.start(argv, f"{tmp}/{t.name}-{t.variant}.log", cpu=cpu)
    t.pids = [t.proc.pid]   # taskset exec()s the proxy: the Popen pid is the proxy's own
    t.main_pid = t.proc.pid
    if not wait_port(t.port, t.proc):
        if t.proc.poll() is not None:
            t.failure = (f"{t.name} did not start (exit status {t.proc.returncode}): "
                         f"{log_tail(t.proc.log_path)}")
        else:
            t.failure = f"{t.name} does not accept connections on port {t.port} after 5 s"
        return
    # It must forward a correct answer before any number is believed.
    try:
        for path, size, body in checks:
            status, n, got = http_get(t.port, path)
            if not status.startswith("HTTP/1.1 200") or n != size or (body and got != body):
                t.failure = (f"{t.name} answers wrongly on {path}: '{status}', {n} body bytes "
                             f"(expected 200 and {size})")
                return
        if keepalive_check:
            # wrk's keep-alive loads mean nothing if the proxy closes after each answer.
            err = http_keepalive_check(t.port, "/64", BODY64)
            if err:
                t.failure = f"{t.name}: {err}; log: {log_tail(t.proc.log_path)}"
                return
    except OSError as e:
        t.failure = f"{t.name} fails a test request: {e}; log: {log_tail(t.proc.log_path)}"
        return
    if getattr(t, "kind", t.name) == "nginx":
        kids = children(t.proc.pid)
        if len(kids) != workers:
            t.failure = f"nginx proxy: expected {workers} worker process(es), found {kids}"
            return
        t.pids = [t.proc.pid] + kids
        t.main_pid = kids[0]



# ---------------------------------------------------------------- measuring

def run_wrk(port, wl, dur, cpu, lua, deadline_pad=15):
    argv = ["taskset", "-c", str(cpu), "wrk", "-t1", f"-c{wl['conns']}", f"-d{dur}s",
            "--timeout", "2s", "-s", lua]
    if wl["close"]:
        argv += ["-H", "Connection: close"]
    argv.append(f"http://127.0.0.1:{port}{wl['path']}")
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    PROCS.live.append(p)
    p.log_path = None
    try:
        out, _ = p.communicate(timeout=dur + deadline_pad)
    except subprocess.TimeoutExpired:
        PROCS.stop(p)
        return None, f"wrk did not finish within {dur + deadline_pad} s"
    finally:
        if p.poll() is None:      # interrupted: do not leave wrk running
            PROCS.stop(p, grace=0.5)
        elif p in PROCS.live:
            PROCS.live.remove(p)
    out = out.decode(errors="replace")
    m = re.search(r"^RESULT (.*)$", out, re.M)
    if not m:
        return None, "wrk gave no result: " + " | ".join(out.strip().splitlines()[-4:])
    return {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}, None


def cpu_stat(cpus):
    """{cpu: (busy ticks, all ticks)} from /proc/stat."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            name, *vals = line.split()
            if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
                v = [int(x) for x in vals[:8]]
                out[int(name[3:])] = (sum(v) - v[3] - v[4], sum(v))
    return out


def tree_ticks(pids):
    total = 0
    for pid in pids:
        try:
            total += sum(cpu_ticks(pid))
        except OSError:
            pass
    return total


def proxy_ticks_of(pids):
    """(utime, stime) summed over the proxy's processes."""
    u = s = 0
    for pid in pids:
        a, b = cpu_ticks(pid)
        u, s = u + a, s + b
    return u, s


BACKEND_PIDS = []   # nginx master and worker, for the chain CPU


def measure(t, wl, dur, cpu_load, cpu_proxy, lua):
    """One point. Returns a dict of metrics, with 'error' set when it failed."""
    pid = t.proc.pid if t.proc else None
    c0 = proxy_ticks_of(t.pids) if pid else None
    o0 = tcp_opens()
    b0 = tree_ticks(BACKEND_PIDS)
    k0 = cpu_stat({cpu_load, cpu_proxy})
    w0 = resource.getrusage(resource.RUSAGE_CHILDREN)  # wrk is the only child reaped meanwhile
    r, err = run_wrk(t.port, wl, dur, cpu_load, lua)
    w1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    k1 = cpu_stat({cpu_load, cpu_proxy})
    b1 = tree_ticks(BACKEND_PIDS)
    o1 = tcp_opens()
    c1 = None
    if pid and t.check_alive():
        try:
            c1 = proxy_ticks_of(t.pids)
        except OSError:   # an nginx worker gone (respawned by its master)
            t.failure = f"{t.name}: process {t.pids} gone during the run"
    if err:
        return dict(error=err)
    if pid and c1 is None:
        return dict(error=t.failure)
    secs = r["duration_us"] / 1e6
    reqs = r["requests"]
    sock_err = r["connect"] + r["read"] + r["write"] + r["timeout"]
    res = dict(rps=reqs / secs, mbps=r["bytes"] / 1e6 / secs, p99_us=r["p99"], p50_us=r["p50"],
               requests=reqs, bytes=r["bytes"], status_err=r["status"], sock_err=sock_err,
               err_detail=(f"non-2xx/3xx {r['status']}, connect {r['connect']}, read {r['read']}, "
                           f"write {r['write']}, timeout {r['timeout']}"))
    tick = 1e6 / CLK_TCK  # microseconds per tick
    proxy_ticks = (c1[0] - c0[0] + c1[1] - c0[1]) if pid else 0
    wrk_us = ((w1.ru_utime - w0.ru_utime) + (w1.ru_stime - w0.ru_stime)) * 1e6
    back_us = (b1 - b0) * tick
    # What else ran on our CPUs meanwhile (other users of a shared machine).
    own = {cpu_proxy: proxy_ticks * tick, cpu_load: back_us + wrk_us}
    if cpu_proxy == cpu_load:
        own = {cpu_load: proxy_ticks * tick + back_us + wrk_us}
    for cpu, key in ((cpu_proxy, "other_proxy_cpu"), (cpu_load, "other_load_cpu")):
        busy, tot = (k1[cpu][0] - k0[cpu][0]) * tick, (k1[cpu][1] - k0[cpu][1]) * tick
        res[key] = max(0.0, (busy - own[cpu]) / tot * 100) if tot else None
    if reqs:
        res["chain_us"] = (proxy_ticks * tick + back_us + wrk_us) / reqs
        res["opens_req"] = (o1 - o0) / reqs
    if pid:
        usr = (c1[0] - c0[0]) * tick
        sys_ = (c1[1] - c0[1]) * tick
        res["cpu_pct"] = (usr + sys_) / 1e6 / secs * 100
        if reqs:
            res["usr_us"] = usr / reqs
            res["sys_us"] = sys_ / reqs
            res["cpu_us"] = (usr + sys_) / reqs
            if wl.get("big") and r["bytes"]:
                res["cpu_us_mb"] = (usr + sys_) / (r["bytes"] / 1e6)
    if reqs == 0:
        res["error"] = "no request completed"
    return res



IP_BIND_ADDRESS_NO_PORT = 24   # linux/in.h: the port is chosen at connect(), per 4-tuple


def idle_client(port, n, concurrency, deadline, sources=None):
    """Opens n connections to port, at most <concurrency> in progress at once,
    sends one keep-alive GET /64 on each and reads its answer; the
    connections that got a 200 stay open (returned). Bounded by <deadline>
    (monotonic time). <sources>: local addresses (127.0.0.x) used in turn,
    each with its own ~28,000 ephemeral ports."""
    req = b"GET /64 HTTP/1.1\r\nHost: bench\r\n\r\n"
    sel = selectors.DefaultSelector()
    done, st = [], dict(connect=0, closed=0, status=0, timeout=0)
    codes = {}   # status line of the non-200 answers -> count
    started = inflight = 0
    try:
        while (started < n or inflight) and time.monotonic() < deadline:
            while started < n and inflight < concurrency:
                started += 1
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                if sources:
                    s.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
                    s.bind((sources[started % len(sources)], 0))
                err = s.connect_ex(("127.0.0.1", port))
                if err not in (0, errno.EINPROGRESS):
                    st["connect"] += 1
                    s.close()
                    continue
                sel.register(s, selectors.EVENT_WRITE, [b"", False])
                inflight += 1
            for key, _ in sel.select(timeout=0.2):
                s, data = key.fileobj, key.data
                fail = None
                try:
                    if not data[1]:   # connected (or failed): send the request
                        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                            fail = "connect"
                        elif s.send(req) != len(req):
                            fail = "closed"
                        else:
                            data[1] = True
                            sel.modify(s, selectors.EVENT_READ, data)
                            continue
                    else:
                        d = s.recv(65536)
                        if not d:
                            fail = "closed"
                        else:
                            data[0] += d
                            buf = data[0]
                            if b"\r\n\r\n" not in buf:
                                continue
                            head, _, body = buf.partition(b"\r\n\r\n")
                            m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                            if m and len(body) < int(m.group(1)):
                                continue
                            if not m and not body.endswith(b"0\r\n\r\n"):
                                continue
                            sel.unregister(s)
                            inflight -= 1
                            if head.startswith(b"HTTP/1.1 200") and b"\r\nconnection: close" \
                                    not in head.lower():
                                done.append(s)
                            else:
                                st["status"] += 1
                                line = head.split(b"\r\n", 1)[0].decode(errors="replace")
                                codes[line] = codes.get(line, 0) + 1
                                s.close()
                            continue
                except OSError as e:
                    fail = "connect" if not data[1] and e.errno == errno.ECONNREFUSED else "closed"
                sel.unregister(s)
                inflight -= 1
                st[fail] += 1
                s.close()
        st["timeout"] = (n - started) + inflight
    finally:
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        sel.close()
    st["codes"] = codes
    return done, st


def still_open(socks):
    """How many of socks the proxy has not closed (nothing to read, no
    hang-up: an idle keep-alive connection)."""
    p = select.poll()
    for s in socks:
        p.register(s, select.POLLIN | select.POLLRDHUP)
    readable = {fd for fd, _ in p.poll(0)}
    return sum(1 for s in socks if s.fileno() not in readable)


def measure_idle(t, n, concurrency, max_secs, settle=1.0):
    """One idle point on a freshly started proxy: RSS (VmRSS) and open
    file descriptors of the proxy before and after n idle keep-alive client
    connections that each made one request."""
    pid = t.main_pid
    time.sleep(0.3)
    rss0, fd0 = proc_status_kb(pid), fd_count(pid)
    t0 = time.monotonic()
    socks, st = idle_client(t.port, n, concurrency, t0 + max_secs)
    setup = time.monotonic() - t0
    try:
        time.sleep(settle)
        if not t.check_alive():
            return dict(error=t.failure)
        try:
            rss1, fd1 = proc_status_kb(pid), fd_count(pid)
        except OSError:
            return dict(error=f"{t.name}: process {pid} gone during the run")
        still = still_open(socks)
        # Also the last request must still be served once they are all open.
        try:
            status, nb, _ = http_get(t.port, "/64")
            late = None if status.startswith("HTTP/1.1 200") and nb == 64 else f"'{status}'"
        except OSError as e:
            late = str(e)
    finally:
        for s in socks:
            s.close()
    ok = len(socks)
    closed = ok - still
    res = dict(requests=n, conns_ok=ok, conns_open=still, rss0_kb=rss0, rss1_kb=rss1,
               setup_s=setup, status_err=st["status"],
               sock_err=st["connect"] + st["closed"] + st["timeout"] + closed,
               err_detail=(f"non-200 {st['status']}"
                           + (" (" + ", ".join(f"'{k}' x{v}" for k, v in st["codes"].items()) + ")"
                              if st["codes"] else "")
                           + f", connect {st['connect']}, closed before "
                           f"the answer {st['closed']}, not done within {max_secs} s "
                           f"{st['timeout']}, closed while idle {closed}"))
    if ok:
        res["kb_per_conn"] = (rss1 - rss0) / ok
        res["fds_per_conn"] = (fd1 - fd0) / ok
    if late:
        res["error"] = f"a new request after the {ok} idle connections failed: {late}"
    elif not ok:
        res["error"] = "no connection established: " + res["err_detail"]
    return res


def valid(res, max_err_pct):
    """A point is believed only without non-2xx answers and with socket
    errors under max_err_pct percent of requests."""
    if "error" in res:
        return False
    if res["status_err"]:
        return False
    return res["sock_err"] <= res["requests"] * max_err_pct / 100.0



def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None



def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return f"{v:,.{nd}f}"



def first_line(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=5)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except Exception as e:  # noqa: BLE001 - informative only
        return f"? ({e})"


def sluice_identity(path, what, allow_sanitized):
    """Refuses a sanitizer build (ASan/UBSan timings mean nothing), and
    returns a description: version, build options, size, date, sha256."""
    try:
        vv = subprocess.run([path, "-vv"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        vv = ""
    try:
        libs = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        libs = ""
    opts = next((l.split(":", 1)[1].strip() for l in vv.splitlines()
                 if l.startswith("Build options")), "?")
    if ("SANITIZE=1" in opts or "libasan" in libs or "libubsan" in libs) and not allow_sanitized:
        raise Fatal(f"{what} {path} is a sanitizer build (SANITIZE=1): its timings mean nothing. "
                    f"Run `make` (without SANITIZE=1) to rebuild ./sluice, or pass "
                    f"--{what} {os.path.join(REPO, 'build', 'sluice')} (or --allow-sanitized)")
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    st = os.stat(path)
    return (f"{path}: {first_line([path, '-v'])}; build options {opts}; {st.st_size} bytes, "
            f"modified {datetime.datetime.fromtimestamp(st.st_mtime):%Y-%m-%d %H:%M:%S}, "
            f"sha256 {digest}")



def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"



def raise_nofile(need):
    """Soft RLIMIT_NOFILE up to the hard limit, for us (idle client) and the
    processes we start (they inherit it). Returns the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, need)
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return soft




def machine():
    """One line: host, CPU count and model, kernel."""
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    return f"{platform.node()}, {os.cpu_count()} CPUs ({cpu}), kernel {platform.release()}"


def git_rev():
    return subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                          capture_output=True, text=True).stdout.strip() or "?"
