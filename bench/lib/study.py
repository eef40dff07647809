"""bench/lib/study.py: the frame of one benchmark study (bench/<study>).

A Study parses the common options, checks its tools (a missing one is named
with its Debian package, exit 2, nothing written), starts the nginx backend
and the proxies (each checked with `-c` and a test request first: a refused
config is reported as "not supported by this build", never as a number),
records per-round points, and at the end writes bench/results/<study>-<stamp>
.csv (medians), .png (gnuplot) and .md (machine, versions, configs, tables).
"""
import argparse
import atexit
import csv
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from benchlib import (BACKEND_PIDS, CLK_TCK, PROCS, REPO, WRK_LUA, Fatal, Target, children,
                      first_line,
                      fmt, git_rev, loadavg, log_tail, machine, med, on_signal, port_free,
                      proxy_ticks_of, raise_nofile, run_wrk, sluice_identity, start_proxy,
                      tcp_opens, wait_port, write)

# Tool -> Debian package that provides it, for every study.
BASE_TOOLS = {"nginx": "nginx", "haproxy": "haproxy", "taskset": "util-linux",
              "gnuplot": "gnuplot-nox"}

UNSUPPORTED = "not supported by this build"
LOADGEN = os.path.join(REPO, "bench", "tools", "loadgen")

# Each study its own ports, so that two never collide.
PORT_BASES = {"size_sweep": 19000, "conn_rate": 19100, "session": 19200, "concurrency": 19300,
              "latency": 19400, "rules": 19500, "backends": 19600, "multicore": 19700,
              "tls": 19800, "lua": 20500}


def backend_nginx_conf(tmp, servers, workers=1, conns=20000, http_extra="", locations=""):
    """nginx backend serving <tmp>/www on each port of <servers> (a list of
    "addr:port"), /64 a fixed 64-byte body; <locations> go in every server
    block, <http_extra> in the http block."""
    blocks = "".join(f"""  server {{
    listen {s} backlog=4096;
    root {tmp}/www;
    location = /64 {{ return 200 "0123456789012345678901234567890123456789012345678901234567890123"; }}
{locations}  }}
""" for s in servers)
    return f"""worker_processes {workers};
daemon off;
pid {tmp}/backend.pid;
error_log {tmp}/backend.err warn;
worker_rlimit_nofile {2 * conns + 100};
events {{ worker_connections {conns}; }}
http {{
  access_log off;
  keepalive_requests 10000000;
  keepalive_timeout 300s;
  sendfile on;
  default_type application/octet-stream;
{http_extra}{blocks}}}
"""


def nginx_proxy_conf(tmp, name, port, servers, workers=1, conns=4000, ka_timeout="300s",
                     server_extra="", http_extra="", listen_opts=""):
    """nginx as an HTTP proxy in front of <servers>: upstream keep-alive, no
    buffering (as tools/anchor_bench.py and bench/quick). <listen_opts> go
    on the listen line (e.g. "ssl")."""
    ups = "".join(f"    server {s};\n" for s in servers)
    return f"""worker_processes {workers};
daemon off;
pid {tmp}/{name}.pid;
error_log {tmp}/{name}.err warn;
worker_rlimit_nofile {2 * conns + 100};
events {{ worker_connections {conns}; }}
http {{
  access_log off;
  keepalive_requests 10000000;
  keepalive_timeout {ka_timeout};
{http_extra}  upstream be {{
{ups}    keepalive 64;
    keepalive_requests 10000000;
  }}
  server {{
    listen 127.0.0.1:{port}{" " + listen_opts if listen_opts else ""} backlog=4096;
{server_extra}    location / {{
      proxy_pass http://be;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }}
  }}
}}
"""


def hap_conf(port, servers, mode="http", maxconn=4000, global_extra=(), defaults_extra=(),
             frontend_extra=(), backend_extra=(), more="", tclient="30s", bind_extra=""):
    """A configuration both haproxy and sluice read: one frontend on <port>
    (<bind_extra> after the address, e.g. "ssl crt <pem>"), backend "be"
    with <servers> ("addr:port"), round robin."""
    def lines(xs):
        return "".join(f"  {x}\n" for x in xs)
    http = ["option http-keep-alive"] if mode == "http" else []
    reuse = ["http-reuse always"] if mode == "http" else []
    srv = "".join(f"  server s{i + 1} {s}\n" for i, s in enumerate(servers))
    return f"""global
  maxconn {maxconn}
  nbthread 1
{lines(global_extra)}
defaults
  mode {mode}
  timeout connect 5s
  timeout client {tclient}
  timeout server 30s
{lines(http + list(defaults_extra))}
frontend fe
  bind 127.0.0.1:{port}{" " + bind_extra if bind_extra else ""}
{lines(frontend_extra)}  default_backend be

backend be
  balance roundrobin
{lines(reuse + list(backend_extra))}{srv}{more}"""


class Study:
    """One study run. Subclasses nothing: a study script creates one, adds
    its own options to .ap, calls setup(), measures, then finish()."""

    def __init__(self, name, title, about, tools=None, rounds=3, dur=2):
        self.name, self.title, self.about = name, title, about
        self.tools = dict(BASE_TOOLS, **(tools or {}))
        ap = argparse.ArgumentParser(prog=f"bench/{name}", description=title + ". " + about)
        ap.add_argument("--sluice", default=os.path.join(REPO, "sluice"),
                        help="sluice binary (default ./sluice of the repository)")
        ap.add_argument("--rounds", type=int, default=rounds,
                        help=f"measurements per point, medians reported (default {rounds})")
        ap.add_argument("--dur", type=float, default=dur, help=f"seconds per measurement (default {dur})")
        ap.add_argument("--smoke", action="store_true",
                        help="1 round, 1 s, a few points: checks the study runs, numbers mean little")
        base = PORT_BASES.get(name, 19900)
        ap.add_argument("--port-base", type=int, default=base,
                        help=f"backend port; proxies use the next ones (default {base})")
        ap.add_argument("--cpu-proxy", type=int, default=1, help="CPU for the proxies (default 1)")
        ap.add_argument("--cpu-load", type=int, default=0,
                        help="CPU for the backend and the load generator (default 0)")
        ap.add_argument("--max-err-pct", type=float, default=0.0,
                        help="socket errors tolerated in %% of requests before a round is discarded")
        ap.add_argument("--out", default=os.path.join(REPO, "bench", "results"),
                        help="directory for the results (default bench/results)")
        ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
        ap.add_argument("--allow-sanitized", action="store_true",
                        help="measure a SANITIZE=1 build anyway (refused by default)")
        self.ap = ap
        self.raw = []        # per-round points: dict(x, system, round, ... | error)
        self.configs = []    # (label, text) shown in the summary
        self.notes = []      # lines for the summary
        self.status = {}     # system -> text when it cannot be measured at all
        self.targets = []
        self.next_port = None

    # ------------------------------------------------------------ set-up

    def setup(self):
        """Parses the options, checks tools and ./sluice, makes the
        temporary directory. Raises Fatal (exit 2) when it cannot run."""
        a = self.args = self.ap.parse_args()
        if a.smoke:
            a.rounds, a.dur = 1, 1
        if a.rounds < 1 or a.dur <= 0:
            raise Fatal("--rounds and --dur must be positive")
        missing = [f"{t} (" + (f"run `{p}`" if p.startswith("make ") else f"apt-get install {p}")
                   + ")" for t, p in self.tools.items()
                   if not shutil.which(t) and not os.path.exists(t)]
        if missing:
            raise Fatal("missing tools: " + ", ".join(missing) + "; or run `make bench-deps`")
        sl = os.path.abspath(a.sluice)
        if not (os.path.isfile(sl) and os.access(sl, os.X_OK)):
            raise Fatal(f"no sluice binary at {sl}: run `make` or pass --sluice PATH")
        self.sluice_desc = sluice_identity(sl, "sluice", a.allow_sanitized)
        if max(a.cpu_proxy, a.cpu_load) >= (os.cpu_count() or 1):
            raise Fatal("--cpu-proxy/--cpu-load name a CPU this machine does not have")
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, on_signal)
        atexit.register(PROCS.stop_all)
        self.t_start = time.monotonic()
        self.stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.tmp = tempfile.mkdtemp(prefix=f"sluice-{self.name}-")
        os.chmod(self.tmp, 0o755)  # nginx workers may run as another user
        os.makedirs(f"{self.tmp}/www", exist_ok=True)
        shutil.copy2(sl, f"{self.tmp}/sluice.bin")   # a concurrent `make` cannot change it
        self.sluice = f"{self.tmp}/sluice.bin"
        write(f"{self.tmp}/report.lua", WRK_LUA)
        self.lua = f"{self.tmp}/report.lua"
        self.next_port = a.port_base + 1
        if not port_free(a.port_base):
            raise Fatal(f"port {a.port_base} in use (another bench running?); try --port-base")
        self.info = {"machine": machine(), "repository": f"{REPO} at git {git_rev()}",
                     "sluice": self.sluice_desc, "haproxy": first_line(["haproxy", "-v"]),
                     "nginx": first_line(["nginx", "-v"])}
        for tool in ("wrk", "httperf"):
            if tool in self.tools:
                self.info[tool] = first_line([tool, "-V" if tool == "httperf" else "-v"])
        if LOADGEN in self.tools:
            self.info["loadgen"] = f"bench/tools/loadgen.c at git {git_rev()}"
        self.info["method"] = (f"{a.rounds} round(s) x {a.dur} s per point, medians; systems "
                               f"interleaved and rotated per round; backend and load on CPU "
                               f"{a.cpu_load}, proxy on CPU {a.cpu_proxy}")
        self.info["command"] = " ".join([f"bench/{self.name}"] + sys.argv[1:])
        self.info["load average at start"] = loadavg()
        return a

    def port(self):
        """The next free loopback port above the backend's (another user's
        listener is skipped, never measured in place of ours)."""
        for _ in range(200):
            p = self.next_port
            self.next_port += 1
            if port_free(p):
                return p
        raise Fatal(f"no free port near {self.next_port}; try --port-base")

    def backend(self, conf):
        """Starts the nginx backend of config text <conf> on the load CPU;
        its first listen port must answer. Raises Fatal when it does not."""
        write(f"{self.tmp}/backend.conf", conf)
        self.configs.append(("nginx backend", conf))
        p = PROCS.start(["nginx", "-c", f"{self.tmp}/backend.conf", "-p", self.tmp],
                        f"{self.tmp}/backend.log", cpu=self.args.cpu_load)
        port = int(conf.split("listen ", 1)[1].split()[0].rsplit(":", 1)[1])
        if not wait_port(port, p):
            raise Fatal(f"nginx backend did not start: {log_tail(p.log_path)} "
                        f"{log_tail(self.tmp + '/backend.err')}")
        BACKEND_PIDS[:] = [p.pid] + children(p.pid)
        self.backend_proc = p
        return p

    def make_file(self, name, size):
        with open(f"{self.tmp}/www/{name}", "wb") as f:
            f.write((b"0123456789abcdef" * (size // 16 + 1))[:size])

    def proxy(self, system, kind, conf, port, checks=(("/64", 64, None),), keepalive=True,
              cpu=None, workers=1, label=None, show=True):
        """Starts proxy <kind> (haproxy, sluice or nginx) as <system> with
        config text <conf> listening on <port>. Returns its Target; when it
        cannot be measured, t.failure says why (a config sluice refuses:
        "not supported by this build: <its error>")."""
        t = Target(system, "", port)
        t.kind = kind
        path = f"{self.tmp}/{system}.cfg"
        write(path, conf)
        if show:
            self.configs.append((label or f"{system} ({kind})", conf))
        if kind == "nginx":
            argv = ["nginx", "-c", path, "-p", self.tmp]
        else:
            argv = (["haproxy", "-db"] if kind == "haproxy" else [self.sluice]) + ["-f", path]
            chk = subprocess.run(argv[:-2] + ["-c", "-f", path], capture_output=True, text=True,
                                 timeout=120)
            if chk.returncode != 0:
                err = " | ".join((chk.stdout + chk.stderr).strip().splitlines()[-3:])
                err = err.replace(self.tmp + "/", "")   # the file name is enough
                t.failure = (f"{UNSUPPORTED}: {kind} -c refuses the configuration ({err})"
                             if kind == "sluice" else f"{kind} -c refuses the configuration: {err}")
                return t
        start_proxy(t, argv, self.tmp, self.args.cpu_proxy if cpu is None else cpu, checks,
                    keepalive_check=keepalive, workers=workers)
        self.targets.append(t)
        return t

    def direct(self, port):
        """The target "direct": the load generator straight to <port>."""
        return Target("direct", "", port)

    def http_targets(self, back, systems, checks=(("/64", 64, None),)):
        """{system: Target} for those of <systems> (direct, nginx, haproxy,
        sluice) that start, in mode http in front of the backend port
        <back>; the others are marked unsupported with the reason."""
        targets = {}
        for name in systems:
            if name == "direct":
                targets[name] = self.direct(back)
                continue
            port = self.port()
            if name == "nginx":
                t = self.proxy(name, "nginx", nginx_proxy_conf(self.tmp, name, port,
                                                               [f"127.0.0.1:{back}"]), port, checks)
            else:
                t = self.proxy(name, name, hap_conf(port, [f"127.0.0.1:{back}"]), port, checks,
                               show=name == "haproxy", label="haproxy and sluice (same file)")
            if t.failure:
                self.unsupported(name, t.failure)
            else:
                targets[name] = t
        return targets

    def stop(self, t):
        if t.proc is not None:
            PROCS.stop(t.proc)

    # ------------------------------------------------------------ measuring

    def cpu_window(self, t, fn):
        """Runs fn() -> dict with at least secs and requests (and maybe
        error); adds the proxy's CPU (cpu_us per request, cpu_pct) measured
        from /proc/<pid>/stat around it."""
        c0 = proxy_ticks_of(t.pids) if t.proc else None
        res = fn()
        if t.proc is None or "error" in res:
            return res
        if not t.check_alive():
            return dict(error=t.failure)
        try:
            c1 = proxy_ticks_of(t.pids)
        except OSError:
            return dict(error=f"{t.name}: process gone during the run")
        us = (c1[0] - c0[0] + c1[1] - c0[1]) * 1e6 / CLK_TCK
        res["cpu_pct"] = us / 1e6 / res["secs"] * 100 if res.get("secs") else None
        if res.get("requests"):
            res["cpu_us"] = us / res["requests"]
        return res

    def wrk(self, t, path, conns, dur=None, close=False, threads=1, scheme="http"):
        """One wrk run against t (closed loop): rps, mbps, p50/p99 (us),
        errors, proxy CPU per request. scheme "https" for a TLS listener."""
        wl = dict(conns=conns, close=close, path=path, scheme=scheme)
        dur = dur or self.args.dur

        def run():
            r, err = run_wrk(t.port, wl, max(1, round(dur)), self.args.cpu_load, self.lua)
            if err:
                return dict(error=err)
            secs = r["duration_us"] / 1e6
            sock = r["connect"] + r["read"] + r["write"] + r["timeout"]
            res = dict(secs=secs, requests=r["requests"], rps=r["requests"] / secs,
                       mbps=r["bytes"] / 1e6 / secs, p50_us=r["p50"], p99_us=r["p99"],
                       errors=r["status"] + sock)
            if r["status"] or sock > r["requests"] * self.args.max_err_pct / 100:
                res["error"] = (f"non-2xx {r['status']}, connect {r['connect']}, read {r['read']}, "
                                f"write {r['write']}, timeout {r['timeout']}")
            elif not r["requests"]:
                res["error"] = "no request completed"
            return res
        return self.cpu_window(t, run)

    def loadgen(self, t, *opts, dur=None):
        """One bench/tools/loadgen run against t (options <opts>, e.g. "-m",
        "paced", "-r", "5000"), pinned to the load CPU; its RESULT line as a
        dict, with the proxy's CPU. Sets error on failure."""
        dur = dur or self.args.dur

        def run():
            argv = ["taskset", "-c", str(self.args.cpu_load), LOADGEN, "-p", str(t.port),
                    "-d", str(dur)] + [str(o) for o in opts]
            try:
                out = subprocess.run(argv, capture_output=True, text=True, timeout=dur + 30).stdout
            except subprocess.TimeoutExpired:
                return dict(error=f"loadgen did not finish within {dur + 30} s")
            m = [l for l in out.splitlines() if l.startswith("RESULT ")]
            if not m:
                return dict(error="loadgen gave no result: " + out.strip()[-200:])
            r = {k: float(v) for k, v in (kv.split("=") for kv in m[0].split()[1:])}
            r["requests"] = r["done"] + r["closed"]
            return r
        return self.cpu_window(t, run)

    def record(self, x, system, rnd, res):
        """One per-round point; prints it."""
        res = dict(res, x=x, system=system, round=rnd)
        self.raw.append(res)
        shown = ("FAILED: " + res["error"] if "error" in res else
                 "  ".join(f"{k} {fmt(v, 2 if isinstance(v, float) and abs(v) < 100 else 0)}"
                           for k, v in res.items()
                           if k not in ("x", "system", "round", "secs") and v is not None))
        print(f"  round {rnd + 1} {self.name} {str(x):>10} {system:16} {shown}", file=sys.stderr)

    def rounds(self, systems):
        """Yields (round, ordered systems): targets interleaved, rotated by
        one place each round so that slow drifts hit all alike."""
        for rnd in range(self.args.rounds):
            k = rnd % len(systems) if systems else 0
            yield rnd, systems[k:] + systems[:k]

    def add_deltas(self, keys, base="direct"):
        """Sets added_<key> on every valid point: its value minus that of
        <base> at the same x in the same round (what the proxy adds)."""
        ref = {(r["x"], r["round"]): r for r in self.raw if r["system"] == base and "error" not in r}
        for r in self.raw:
            d = ref.get((r["x"], r["round"]))
            if r["system"] == base or "error" in r or d is None:
                continue
            for k in keys:
                if r.get(k) is not None and d.get(k) is not None:
                    r["added_" + k] = r[k] - d[k]

    def unsupported(self, system, why):
        """<system> cannot be measured in this study (shown, never a number)."""
        self.status[system] = why
        print(f"!! {system}: {why}", file=sys.stderr)

    # ------------------------------------------------------------ results

    def summary(self, metrics):
        """{(x, system): row} with the median of each metric over the valid
        rounds, and ok/run counts and problems."""
        out = {}
        for r in self.raw:
            key = (r["x"], r["system"])
            row = out.setdefault(key, dict(x=r["x"], system=r["system"], ok=0, run=0, problems=set(),
                                           vals={m: [] for m in metrics}))
            row["run"] += 1
            if "error" in r:
                row["problems"].add(r["error"])
                continue
            row["ok"] += 1
            for m in metrics:
                row["vals"][m].append(r.get(m))
        for row in out.values():
            for m in metrics:
                row[m] = med(row["vals"][m])
        return out

    def finish(self, xs, systems, metrics, plots, xlabel, logx=False, headline=()):
        """Writes <study>-<stamp>.csv/.png/.md in --out. <xs> the points in
        order, <metrics> [(key, header, decimals)], <plots> [(key, y label,
        logy)] one panel each, <headline> extra markdown lines on top.
        Returns the exit status: 0 all points measured, 1 some failed."""
        a = self.args
        summ = self.summary([m[0] for m in metrics])
        os.makedirs(a.out, exist_ok=True)
        base = os.path.join(a.out, f"{self.name}-{self.stamp}")
        with open(base + ".csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["x", "system"] + [m[0] for m in metrics] +
                       ["valid_rounds", "rounds", "problems"])
            for x in xs:
                for s in systems:
                    r = summ.get((x, s))
                    if r is None:
                        w.writerow([x, s] + [""] * len(metrics) + [0, 0, self.status.get(s, "not run")])
                        continue
                    w.writerow([x, s] + ["" if r[m[0]] is None else round(r[m[0]], 3) for m in metrics]
                               + [r["ok"], r["run"], "; ".join(sorted(r["problems"]))])
        png = self.plot(base, xs, systems, summ, plots, xlabel, logx)
        self.info["load average at end"] = loadavg()
        self.info["elapsed"] = f"{time.monotonic() - self.t_start:.0f} s"
        L = [f"# bench/{self.name} — {self.title}", "", self.about, ""]
        L += [f"- {k}: {v}" for k, v in self.info.items()] + [""]
        L += list(headline) + ([""] if headline else [])
        if png:
            L += [f"![{self.name}]({os.path.basename(png)})", ""]
        for s, why in self.status.items():
            L.append(f"- **{s}**: {why}")
        L += [""] + list(self.notes) + [""]
        hdr = ["x", "system"] + [m[1] for m in metrics] + ["rounds", "problems"]
        L += ["| " + " | ".join(hdr) + " |", "|" + "|".join(["---", "---"] + ["---:"] * (len(hdr) - 3)
                                                            + ["---"]) + "|"]
        failed = False
        for x in xs:
            for s in systems:
                r = summ.get((x, s))
                if r is None:
                    L.append(f"| {x} | {s} |" + " - |" * len(metrics) + f" 0/0 | "
                             f"{self.status.get(s, 'not run')} |")
                    failed = failed or s not in self.status
                    continue
                # Said, not failed: a feature this build lacks, a point the
                # machine's limits rule out.
                told = r["problems"] and all(p.startswith(("not supported", "not run"))
                                             for p in r["problems"])
                failed = failed or ((r["ok"] < r["run"] or r["ok"] < a.rounds) and not told)
                # A ratio row ("a/b") in 3 decimals whatever its column's.
                L.append(f"| {x} | {s} | " + " | ".join(fmt(r[k], 3 if "/" in s else nd)
                                                        for k, _, nd in metrics) +
                         f" | {r['ok']}/{r['run']} | {'; '.join(sorted(r['problems']))} |")
        L += ["", "## Configurations", ""]
        for label, text in self.configs:
            L += [f"{label}:", "", "```", text.rstrip(), "```", ""]
        write(base + ".md", "\n".join(L) + "\n")
        print(f"wrote {base}.md, .csv" + (", .png" if png else " (no plot)"))
        return 1 if failed else 0

    def plot(self, base, xs, systems, summ, plots, xlabel, logx):
        """gnuplot PNG, one panel per plotted metric, one line per system.
        Numeric xs are plotted as they are; others as categories."""
        numeric = all(isinstance(x, (int, float)) for x in xs)
        datafiles = []
        for s in systems:
            path = f"{self.tmp}/plot-{s}.dat"
            rows = []
            for i, x in enumerate(xs):
                r = summ.get((x, s))
                if r is None or not r["ok"]:
                    continue
                vals = ["nan" if r[k] is None else f"{r[k]:.6g}" for k, _, _ in plots]
                rows.append(f"{x if numeric else i} \"{x}\" " + " ".join(vals))
            if rows:
                write(path, "\n".join(rows) + "\n")
                datafiles.append((s, path))
        if not datafiles:
            return None
        png = base + ".png"
        n = len(plots)
        g = [f"set terminal pngcairo size {560 * n},420 font ',9'", f"set output '{png}'",
             "set key top left", "set grid", f"set multiplot layout 1,{n} title '{self.title}'"]
        for i, (key, ylabel, logy) in enumerate(plots):
            g += [f"set xlabel '{xlabel}'", f"set ylabel '{ylabel}'",
                  "set logscale x" if logx and numeric else "unset logscale x",
                  "set logscale y" if logy else "unset logscale y",
                  "set yrange [0:*]" if not logy else "set yrange [*:*]"]
            xt = "" if numeric else ":xtic(2)"
            g.append("plot " + ", ".join(f"'{p}' using 1:{3 + i}{xt} with linespoints title '{s}'"
                                         for s, p in datafiles))
        g.append("unset multiplot")
        write(f"{self.tmp}/plot.gp", "\n".join(g) + "\n")
        r = subprocess.run(["gnuplot", f"{self.tmp}/plot.gp"], capture_output=True, text=True)
        if r.returncode != 0:
            self.notes.append(f"gnuplot failed: {r.stderr.strip()[:300]}")
            return None
        return png

    def cleanup(self):
        PROCS.stop_all()
        if getattr(self, "tmp", None):
            if self.args.keep:
                print(f"configs and logs kept in {self.tmp}", file=sys.stderr)
            else:
                shutil.rmtree(self.tmp, ignore_errors=True)


def main(study, body):
    """Runs body() -> exit status with the common exits: 2 cannot run
    (Fatal: nothing written), 130 interrupted; every started process is
    stopped and the temporary directory removed (kept after a crash)."""
    st = None
    try:
        st = body()
    except Fatal as e:
        print(f"bench/{study.name}: {e}", file=sys.stderr)
        st = 2
    except KeyboardInterrupt as e:
        print(f"bench/{study.name}: interrupted ({e or 'Ctrl-C'}); all started processes "
              f"stopped", file=sys.stderr)
        st = 130
    except BaseException:
        if getattr(study, "args", None):
            study.args.keep = True
        raise
    finally:
        if getattr(study, "args", None):
            study.cleanup()
        PROCS.stop_all()
    sys.exit(st)


__all__ = ["Study", "main", "hap_conf", "nginx_proxy_conf", "backend_nginx_conf", "UNSUPPORTED",
           "Fatal", "PROCS", "raise_nofile", "tcp_opens", "med", "fmt", "write"]
