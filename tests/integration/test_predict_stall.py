"""A replay inside a CPU-quota cgroup (50 % of a core, 20 ms period) records the time its thread
was throttled: in the profile's events (stall extras, summed in replay.stall.segments_ns) and in
its calls (replay.stall.calls_ns) and the quota (replay.stall.cpu_quota); `encore predict` spreads
it over the rank's segments by CPU time (default for a replay under a quota) or keeps it where
measured (--stall-time keep). A replay without a quota says so, and predict leaves its stalls
(other work on the machine) out of its compute. Skipped where no CPU-quota cgroup can be made
(not root, no cpu controller)."""
import json
import os
import pathlib
import re
import unittest

import harness

V1 = pathlib.Path("/sys/fs/cgroup/cpu")
V2 = pathlib.Path("/sys/fs/cgroup")
PERIOD_US, QUOTA_US = 20000, 10000


def enable_cpu_controller(root):
    """cgroup v2: a child has cpu.max only where its parent's cgroup.subtree_control enables the
    cpu controller (systemd does so on Debian 12; a bare machine may not). Left enabled, as
    systemd leaves it. Raises OSError where the controller is not available."""
    control = root / "cgroup.subtree_control"
    if "cpu" in control.read_text().split():
        return
    if "cpu" not in (root / "cgroup.controllers").read_text().split():
        raise OSError(f"{root}: no cpu controller in cgroup.controllers")
    control.write_text("+cpu")


def make_cgroup(name):
    """A new CPU-quota cgroup's directory (v1 or v2), or None with the reason."""
    reason = "no cpu cgroup hierarchy"
    for root, v2 in ((V1, False), (V2, True)):
        if not root.is_dir() or (v2 and not (root / "cgroup.controllers").exists()):
            continue
        g = root / f"{name}-{os.getpid()}"
        try:
            if v2:
                enable_cpu_controller(root)
            g.mkdir()
            if v2:
                (g / "cpu.max").write_text(f"{QUOTA_US} {PERIOD_US}")
            else:
                (g / "cpu.cfs_period_us").write_text(str(PERIOD_US))
                (g / "cpu.cfs_quota_us").write_text(str(QUOTA_US))
            return g, ""
        except OSError as e:
            try:
                g.rmdir()
            except OSError:
                pass
            reason = str(e)
    return None, reason


class PredictStall(harness.TempDirTest):
    def setUp(self):
        super().setUp()
        self.group, why = make_cgroup("encore-test-stall")
        if self.group is None:
            self.skipTest(f"cannot make a CPU-quota cgroup here ({why})")

    def tearDown(self):
        if self.group is not None:
            try:
                self.group.rmdir()
            except OSError:
                pass
        super().tearDown()

    def predict(self, trace, prof, *args):
        p = harness.run([harness.TOOL, "predict", str(trace), "--json", "--replay", str(prof),
                         *args])
        return json.loads(p.stdout)

    def test_throttled_replay_records_stalls_that_predict_spreads(self):
        trace, prof = self.tmp / "halo", self.tmp / "prof"
        args = ("512", "300")  # about 0.1 s of compute per rank: a few dozen 10 ms quotas
        harness.record(trace, 2, harness.example("halo2d"), *args)
        harness.run(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.group),
                     harness.TOOL, "replay", "--rank", "0", "-o", str(prof), str(trace), "--",
                     harness.example("halo2d"), *args], timeout=120)
        stall = json.loads((prof / "manifest.json").read_text())["replay"]
        self.assertIn(stall["stall"]["source"], ("run_delay", "wall - thread CPU"))
        self.assertAlmostEqual(stall["stall"]["cpu_quota"], QUOTA_US / PERIOD_US, delta=1e-9)
        total = stall["stall"]["segments_ns"] + stall["stall"]["calls_ns"]
        wall = stall["compute_ns"] + stall["replay_overhead_ns"]
        # Half a core: the thread waits about as long as it runs (more if the machine is busy).
        # On failure, the cgroup's own count of its throttled time and the load say whether the
        # quota throttled the replay without its schedstat seeing it, or something else ran.
        try:
            cgroup_stat = (self.group / "cpu.stat").read_text().split()
        except OSError as e:
            cgroup_stat = str(e)
        self.assertGreater(total, 0.25 * wall,
                           f"{stall}; cgroup cpu.stat {cgroup_stat}; load {os.getloadavg()}")
        # The events carry the segments' part, on a few segments (whole throttles), not all.
        shown = harness.run([harness.TOOL, "show", str(prof)]).stdout
        units = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
        shown_stalls = re.findall(r" stall=([\d.]+)(ns|us|ms|s)\b", shown)
        stalls = [float(v) * units[u] for v, u in shown_stalls]
        self.assertGreater(len(stalls), 0)
        # `show` prints three significant digits: each value is off by at most half its last
        # digit (a dozen 10-99 ms stalls, 0.05 ms each, can add up to more than 1 % of the sum).
        rounding = sum(0.5 * 10.0 ** -len(v.partition(".")[2]) * units[u] for v, u in shown_stalls)
        self.assertAlmostEqual(sum(stalls), stall["stall"]["segments_ns"],
                               delta=rounding + len(stalls))
        self.assertLess(len(stalls), len(shown.splitlines()))

        spread = self.predict(trace, prof)
        keep = self.predict(trace, prof, "--stall-time", "keep")
        s, k = spread["ranks"][0]["stall"], keep["ranks"][0]["stall"]
        self.assertEqual((s["mode"], k["mode"]), ("spread", "keep"))
        self.assertTrue(s["measured"])
        self.assertAlmostEqual(s["segments_s"], stall["stall"]["segments_ns"] * 1e-9, delta=1e-9)
        self.assertAlmostEqual(s["calls_s"], stall["stall"]["calls_ns"] * 1e-9, delta=1e-9)
        # spread: each segment's running time x 1 / the quota (the replay's own slow-down,
        # (CPU time + stalls) / CPU time, reported beside it)
        cpu_all = stall["stall"]["cpu_ns"]
        self.assertGreater(cpu_all, 0)
        self.assertLess(cpu_all, wall)
        self.assertAlmostEqual(s["cpu_s"], cpu_all * 1e-9, delta=1e-9)
        self.assertAlmostEqual(s["measured_factor"], (cpu_all + total) / cpu_all, delta=1e-9)
        self.assertGreater(s["measured_factor"], 1.3)
        self.assertAlmostEqual(s["cpu_quota"], QUOTA_US / PERIOD_US, delta=1e-9)
        self.assertAlmostEqual(s["factor"], PERIOD_US / QUOTA_US, delta=1e-9)
        cpu = s["compute_measured_s"] - s["segments_s"]
        self.assertAlmostEqual(s["compute_given_s"], cpu * s["factor"], delta=1e-6)
        self.assertAlmostEqual(s["spread_s"], s["compute_given_s"] - cpu, delta=1e-6)
        self.assertEqual((k["factor"], k["spread_s"]), (1.0, 0.0))
        self.assertAlmostEqual(k["compute_given_s"], k["compute_measured_s"], delta=1e-9)
        # What the model got: the given compute (the first call's start offset on both sides).
        got = (spread["ranks"][0]["predicted"]["compute_s"] -
               keep["ranks"][0]["predicted"]["compute_s"])
        self.assertAlmostEqual(got, s["compute_given_s"] - k["compute_given_s"], delta=1e-6)
        # The inferred rank follows rank 0's given compute. The overall ratio is taken over the
        # gaps of at least 1 us, the given compute over all of them: the short ones (a few us
        # in all here) move the quotient by a few 1e-4, the spread by several 1e-2.
        self.assertAlmostEqual(
            spread["compute_scale"]["overall"] / keep["compute_scale"]["overall"],
            s["compute_given_s"] / k["compute_given_s"], delta=3e-3)
        text = harness.run([harness.TOOL, "predict", str(trace), "--replay", str(prof)]).stdout
        self.assertRegex(text, r"rank 0 stalled \S+ in its compute and \S+ in the replay's "
                               r"calls: \S+ spread over its segments by running time \(x\S+, "
                               r"1 / its CPU quota 0.5, where it measured x")
        bad = harness.run([harness.TOOL, "predict", str(trace), "--replay", str(prof),
                           "--stall-time", "sometimes"], check=False)
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("--stall-time", bad.stderr)

        # Without the quota: the replay says it had none, and its stalls (whatever preempted it)
        # are left out of its compute: each segment its time less its stall.
        free = self.tmp / "free"
        harness.run([harness.TOOL, "replay", "--rank", "0", "-o", str(free), str(trace), "--",
                     harness.example("halo2d"), *args], timeout=120)
        quota = json.loads((free / "manifest.json").read_text())["replay"]["stall"]["cpu_quota"]
        if quota > 0:
            self.skipTest(f"the tests run under a CPU quota themselves ({quota} CPUs)")
        d = self.predict(trace, free)["ranks"][0]["stall"]
        self.assertEqual(d["mode"], "drop")
        self.assertEqual(d["factor"], 1.0)
        self.assertAlmostEqual(d["compute_given_s"], d["compute_measured_s"] - d["segments_s"],
                               delta=1e-6)


if __name__ == "__main__":
    harness.main()
