"""What the benchmark scripts share: running a command, reading the loops' own timings, and
printing a median with its spread."""
import os
import pathlib
import re
import signal
import statistics
import subprocess
import sys
import time


def run(cmd, env=None, stderr=False):
    """The command's stdout (and its stderr too, as a pair, with `stderr`)."""
    full = dict(os.environ, **(env or {}))
    p = subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=900)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr}")
    return (p.stdout, p.stderr) if stderr else p.stdout


# The examples' arguments in the benchmarks that run them whole: sizes where the program's span
# is a few tenths of a second on this machine.
EXAMPLE_ARGS = {"halo2d": "1024 400", "ring": "100 200000", "collectives": "1048576",
                "master_worker": "512 16 1024"}


def example_args(spec):
    """EXAMPLE_ARGS with a benchmark's --args ('halo2d=256 100;ring=10 1000') applied."""
    args = dict(EXAMPLE_ARGS)
    for item in filter(None, spec.split(";")):
        name, _, value = item.partition("=")
        args[name.strip()] = value
    return args


def lib_env(lib):
    """The environment that records with a `--lib` argument: LIB[,VAR=VALUE...], the library
    through ENCORE_DUMP_LIB (an empty LIB is the build's) and the settings as given."""
    path, *settings = (lib or "").split(",")
    env = dict(item.split("=", 1) for item in settings)
    if path:
        env["ENCORE_DUMP_LIB"] = str(pathlib.Path(path).resolve())
    return env


def loops(out):
    """{loop name: ns per iteration} from bench_capture_loops' output."""
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"loop=(\w+) iters=\d+ ns_per_iter=([\d.]+)", out)}


def fmt(values, unit="", digits=1):
    m, lo, hi = statistics.median(values), min(values), max(values)
    return f"{m:10.{digits}f}{unit} [{lo:.{digits}f} .. {hi:.{digits}f}]"


def middle_half(values):
    """The 25th and 75th percentiles (the middle half of the values lies between them)."""
    v = sorted(values)
    if len(v) < 2:
        return v[0], v[0]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[2]


def _cpu_times():
    """/proc/stat's first line: (busy time not niced, niced time, steal, total), in ticks."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return user + system + irq + softirq, nice, steal, sum(fields[:8])


def machine_sample(seconds=0.3):
    """What the rest of the machine did over `seconds` while this script sat idle: CPUs' worth
    (1.0 = one core) of un-niced work, of niced work and of steal (the hypervisor running
    someone else), and the 1-minute load."""
    a = _cpu_times()
    time.sleep(seconds)
    b = _cpu_times()
    total = max(1, b[3] - a[3])
    cpus = os.cpu_count() or 1
    share = [cpus * (y - x) / total for x, y in zip(a[:3], b[:3])]
    return {"busy": share[0], "niced": share[1], "steal": share[2], "load1": os.getloadavg()[0]}


class QuietGate:
    """Before a timed run: sample the machine and wait, at most `max_wait` s, until others use
    at most `busy` CPUs un-niced and steal at most `steal` (niced work is counted but does not
    block, since it yields to the timed run, unless `niced_is_noise`: it still shares caches
    and memory bandwidth). `wait()` says whether the run is taken quiet."""

    def __init__(self, busy=0.2, steal=0.05, max_wait=20.0, niced_is_noise=False):
        self.busy, self.steal, self.max_wait = busy, steal, max_wait
        self.niced_is_noise = niced_is_noise
        self.samples = []

    def wait(self):
        deadline = time.monotonic() + self.max_wait
        while True:
            s = machine_sample()
            others = s["busy"] + (s["niced"] if self.niced_is_noise else 0)
            quiet = others <= self.busy and s["steal"] <= self.steal
            if quiet or time.monotonic() >= deadline:
                self.samples.append(s)
                return quiet
            time.sleep(0.5)

    def summary(self):
        if not self.samples:
            return "no quiet checks"
        med = {k: statistics.median(s[k] for s in self.samples) for k in self.samples[0]}
        return (f"{len(self.samples)} quiet checks, medians: others un-niced {med['busy']:.2f} "
                f"CPUs, niced {med['niced']:.2f}, steal {med['steal']:.2f}, "
                f"load1 {med['load1']:.2f}")


PAGE_REPORTING = pathlib.Path("/sys/module/page_reporting/parameters/page_reporting_order")
NO_PAGE_REPORTING = 11  # above x86-64's largest buddy order (10): no free block is that large


class PageReportingOff:
    """Free page reporting off for the `with` block, the old order restored after it.

    A guest kernel with free page reporting (virtio-balloon) hands freed blocks of at least
    2^order pages back to the host, which then faults them in again when the next run touches
    them: a recording after a pause cost 3x the capture overhead here (example_ring 100 200000
    with 6 s pauses: 399-470 ms with order 9, 135-163 ms with reporting off). With `keep` or
    without the parameter nothing is changed; a setting that cannot be changed is said."""

    def __init__(self, keep=False, path=PAGE_REPORTING):
        self.keep, self.path, self.old = keep, path, None

    def __enter__(self):
        try:
            order = int(self.path.read_text())
        except (OSError, ValueError):  # no page reporting in this kernel
            return self
        if order >= NO_PAGE_REPORTING:
            return self
        why = ("memory a run frees would go back to the host and be faulted in again by the "
               "next")
        if self.keep:
            print(f"machine: free page reporting (order {order}) kept on "
                  f"(--keep-page-reporting): {why}", flush=True)
            return self
        try:
            self.path.write_text(str(NO_PAGE_REPORTING))
        except OSError as e:
            print(f"machine: free page reporting (order {order}) is on and cannot be turned off "
                  f"({e.strerror}): timings include the host's page faults; as root: "
                  f"echo {NO_PAGE_REPORTING} > {self.path}", flush=True)
            return self
        self.old = order
        # SIGTERM (and SIGHUP) would end the process without running __exit__, leaving
        # reporting off for good: turn them into SystemExit, and SIGINT into
        # KeyboardInterrupt whatever its handler was.
        self.handlers = {s: signal.signal(s, self._interrupted)
                         for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        print(f"machine: free page reporting (order {order}) off for this run: {why}",
              flush=True)
        return self

    @staticmethod
    def _interrupted(signum, frame):
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        sys.exit(128 + signum)

    def __exit__(self, *exc):
        if self.old is not None:
            self.path.write_text(str(self.old))
            for s, h in self.handlers.items():
                signal.signal(s, h)
            self.old = None
        return False


def add_page_reporting_flag(ap):
    ap.add_argument("--keep-page-reporting", action="store_true",
                    help="leave the guest's free page reporting as it is (default: off for the "
                    "run when it is on and this is root, since it makes the host fault in again "
                    "memory a run freed, which tripled a recording's capture overhead here)")


class CpuQuotaCgroups:
    """CPU-quota cgroups, QUOTA us of CPU every PERIOD us, under cgroup v1 (the cpu hierarchy
    at FS/cpu: cpu.cfs_period_us and cpu.cfs_quota_us) or v2 (the unified hierarchy at FS:
    cpu.max, "QUOTA PERIOD", which exists only where the parent's cgroup.subtree_control
    enables the cpu controller). `root` is where they are made, None (with `reason`) where
    neither hierarchy is mounted."""

    def __init__(self, fs=pathlib.Path("/sys/fs/cgroup")):
        self.root, self.v2, self.reason = None, False, ""
        if (fs / "cpu" / "cpu.cfs_quota_us").exists():
            self.root = fs / "cpu"
        elif (fs / "cgroup.controllers").exists():
            self.root, self.v2 = fs, True
        else:
            self.reason = f"no cgroup v1 cpu hierarchy or cgroup v2 hierarchy under {fs}"

    def quota_files(self, quota_us, period_us):
        """[(file, text)] that set the quota in a cgroup, in the order written."""
        if self.v2:
            return [("cpu.max", f"{quota_us} {period_us}")]
        return [("cpu.cfs_period_us", str(period_us)), ("cpu.cfs_quota_us", str(quota_us))]

    def enable_controller(self):
        """v2: the cpu controller enabled for the root's children (left so: systemd enables it
        likewise, and another user may have children with it by then). Raises OSError."""
        control = self.root / "cgroup.subtree_control"
        if self.v2 and "cpu" not in control.read_text().split():
            if "cpu" not in (self.root / "cgroup.controllers").read_text().split():
                raise OSError(f"{self.root}: no cpu controller in cgroup.controllers")
            control.write_text("+cpu")
            print(f"cgroup v2: cpu controller enabled in {control}", flush=True)

    def usable(self, quota_us, period_us):
        """"" if a quota cgroup can be made here (one is made and removed), else the reason."""
        if self.root is None:
            return self.reason
        probe = self.root / f"encore-probe-{os.getpid()}"
        try:
            self.enable_controller()
            probe.mkdir()
            try:
                for name, text in self.quota_files(quota_us, period_us):
                    (probe / name).write_text(text)
            finally:
                probe.rmdir()
        except OSError as e:
            return str(e)
        return ""

    def command(self, cmd, name, quota_us, period_us):
        """`cmd` run in a quota cgroup of its own, ROOT/NAME-PID (the shell's pid, which the
        command keeps through exec), made by the shell so that each process gets its own."""
        writes = "".join(f'echo {text} > "$g/{file}"; '
                         for file, text in self.quota_files(quota_us, period_us))
        script = (f'g={self.root}/{name}-$$; mkdir -p "$g"; {writes}'
                  f'echo $$ > "$g/cgroup.procs"; exec "$@"')
        return ["sh", "-c", script, "limited", *map(str, cmd)]

    def remove(self, pattern):
        """Remove the cgroups under the root whose names match `pattern` (those still holding
        a process stay)."""
        for g in self.root.glob(pattern) if self.root else ():
            try:
                g.rmdir()
            except OSError:
                pass
