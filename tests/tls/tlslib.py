"""Helpers shared by the TLS suites (tests/tls/run, tests/tls/options): a
temporary directory and test PKI, sluice processes, openssl s_client and
curl, the runtime API, and the PASS/FAIL/SKIP records of `make test`."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SLUICE = os.environ.get("SLUICE", os.path.join(TOP, "sluice"))
RESULTS = os.environ.get("RESULTS")
tmp = tempfile.mkdtemp(prefix="sluice-tls.")
pki = os.path.join(tmp, "pki")
procs = []
failed = 0
SUITE = "tls"


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from portlib import free_port  # noqa: E402


def record(status, name, why=""):
    global failed
    line = "%s %s:%s" % (status, SUITE, name)
    print(line + (" (%s)" % why if why else ""))
    if status == "FAIL":
        failed += 1
    if RESULTS:
        # a failure keeps its reason on its line (the suite's stdout is not kept)
        if status == "FAIL" and why:
            line += " (%s)" % " ".join(str(why).split())[:400]
        with open(RESULTS, "a") as f:
            f.write(line + "\n")


def run(argv, inp=b"", timeout=10):
    try:
        p = subprocess.run(argv, input=inp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -1, "timeout"


def s_client(port, *args, sni=None, data=b""):
    """Handshake (and send <data>) with openssl s_client; returns its output."""
    argv = ["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, "-CAfile",
            os.path.join(pki, "ca.pem")]
    if sni:
        argv += ["-servername", sni]
    else:
        argv += ["-noservername"]
    return run(argv + list(args), inp=data, timeout=60)[1]   # a loaded CI machine is slow


def subject(out):
    m = re.search(r"subject=.*?CN ?= ?([^\s,/]+)", out)
    return m.group(1) if m else None


def curl(url, *args, host=None):
    """Returns (http status or 0, headers+body)."""
    argv = ["curl", "-s", "-i", "--max-time", "8", "--cacert", os.path.join(pki, "ca.pem")]
    if host:
        port = int(url.split(":")[2].split("/")[0])
        argv += ["--resolve", "%s:%d:127.0.0.1" % (host, port)]
        url = url.replace("127.0.0.1", host)
    rc, out = run(argv + list(args) + [url])
    m = re.match(r"HTTP/\S+ (\d+)", out)
    return (int(m.group(1)) if m else 0), out


def start_sluice(cfg_text, name):
    path = os.path.join(tmp, name + ".cfg")
    with open(path, "w") as f:
        f.write(cfg_text)
    log = open(os.path.join(tmp, name + ".log"), "w")
    p = subprocess.Popen([SLUICE, "-d", "-f", path], stdout=log, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    procs.append(p)
    return p


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def sluice_log(name):
    with open(os.path.join(tmp, name + ".log")) as f:
        return f.read()


def wait_port(port, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def wait_for(cond, timeout=10, step=0.05):
    """Polls <cond>() until it is true (returns its value) or the time runs
    out (returns the last value)."""
    end = time.time() + timeout
    v = cond()
    while not v and time.time() < end:
        time.sleep(step)
        v = cond()
    return v


def cli(sock, cmd):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sock)
    s.sendall(cmd.encode() + b"\n")
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
    s.close()
    return out.decode()


def cli_payload(sock, cmd, payload):
    return cli(sock, "%s <<\n%s\n" % (cmd, payload.rstrip("\n")))


def check_config(name, cfg_text, expect):
    """sluice -c must refuse <cfg_text> with a message matching <expect>."""
    path = os.path.join(tmp, name + ".cfg")
    with open(path, "w") as f:
        f.write(cfg_text)
    rc, out = run([SLUICE, "-c", "-f", path])
    if rc == 0 or not re.search(expect, out):
        raise AssertionError("rc=%d, output: %s" % (rc, out.strip()[:300]))
    return out


def config_ok(name, cfg_text):
    """sluice -c must accept <cfg_text>; returns its output (warnings)."""
    path = os.path.join(tmp, name + ".cfg")
    with open(path, "w") as f:
        f.write(cfg_text)
    rc, out = run([SLUICE, "-c", "-f", path])
    if rc != 0:
        raise AssertionError("refused: %s" % out.strip()[:400])
    return out


def make_pki():
    rc, out = run(["sh", os.path.join(TOP, "tests", "tls", "mkpki.sh"), pki], timeout=180)
    return rc == 0, out


def stop_all():
    for p in procs:
        stop(p)


def sanitizer_findings(*names):
    """What ASan/UBSan/LSan reported in the logs of these processes."""
    found = []
    for n in names:
        found += re.findall(r"(ERROR: \w+Sanitizer.*|runtime error:.*)", sluice_log(n))
    return found


def main(checks, setup, logs):
    """Runs the checks named on the command line (all without), after
    <setup>() (returns a false value and records a FAIL when it fails)."""
    for tool in ("openssl", "curl"):
        if not shutil.which(tool):
            record("SKIP", "all", "%s not installed" % tool)
            return 0
    ok, out = make_pki()
    if not ok:
        record("FAIL", "mkpki", out[-300:])
        return 1
    if not setup():
        return 1
    only = sys.argv[1:]
    for fn in checks:
        if only and fn.__name__ not in only:
            continue
        try:
            fn()
            record("PASS", fn.__name__)
        except Exception as e:  # noqa: BLE001 - any failure is reported
            record("FAIL", fn.__name__, repr(e)[:600])
    stop_all()
    found = sanitizer_findings(*logs())
    if found:
        record("FAIL", "sanitizer", "; ".join(found[:3]))
    return 1 if failed else 0


def entry(checks, setup, logs):
    try:
        rc = main(checks, setup, logs)
    finally:
        stop_all()
        if os.environ.get("KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(rc)
