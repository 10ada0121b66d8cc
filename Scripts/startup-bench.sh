#!/bin/sh
# `keygate get` of a plain item, whole process (fork, exec, dynamic linking, runtime start-up,
# store open, gate, audit record, exit), beside a static Swift hello world built here, runs
# interleaved, medians of ROUNDS (default 60). Without and with XDG_SESSION_ID: the session's lock
# state is then asked of logind over D-Bus, on the system bus and on a private dbus-daemon without
# logind. Extra binaries (an older keygate) are measured the same way. `keygate --version` is the
# start-up alone. The store and trail live in STORE_DIR (default /dev/shm, a tmpfs, so the audit
# trail's fsyncs cost what the code costs, not what this machine's disk costs; set STORE_DIR to a
# directory on disk to include them). Every binary, the hello worlds included, is measured as
# `make install` places it: a copy written by install(1), not the linker's output file, whose
# page cache is mostly single 4 KiB pages where an installed file sits in large folios (see
# Benchmarks/Suite/Installed.swift: the same bytes start 0.25-0.45 ms slower from the linker's
# output on the VM of Benchmarks/RESULTS.md). The copies go in a directory beside the first
# binary (INSTALL_DIR to choose another), not in /tmp, which is a tmpfs on many systems.
#
#   Scripts/startup-bench.sh .build/release/keygate [other-keygate…]
set -eu
[ $# -ge 1 ] || { echo "usage: $0 KEYGATE [KEYGATE…]" >&2; exit 2; }
work=$(mktemp -d)
store=$(mktemp -d "${STORE_DIR:-/dev/shm}/keygate-startup.XXXXXX")
installed=$(mktemp -d "${INSTALL_DIR:-$(dirname "$1")}/keygate-startup-installed.XXXXXX")
trap 'kill $bus_pid 2>/dev/null || true; rm -rf "$work" "$store" "$installed"' EXIT
bus_pid=
printf 'print("hello")\n' > "$work/hello.swift"
"${SWIFTC:-swiftc}" -O -static-stdlib "$work/hello.swift" -o "$work/linked-hello-static" 2>/dev/null
"${SWIFTC:-swiftc}" -O -static-stdlib -Xclang-linker -no-pie "$work/hello.swift" -o "$work/linked-hello-nopie" 2>/dev/null
install -m 0755 "$work/linked-hello-static" "$installed/hello-static"
install -m 0755 "$work/linked-hello-nopie" "$installed/hello-nopie"
cat > "$work/bus.conf" <<CONF
<busconfig><listen>unix:path=$work/bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/>
<allow receive_sender="*"/></policy></busconfig>
CONF
dbus-daemon --config-file="$work/bus.conf" --nofork 2>/dev/null & bus_pid=$!
i=0; while [ ! -S "$work/bus" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
python3 - "$work" "$store" "$installed" "${ROUNDS:-60}" "$@" <<'PY'
import os, statistics, subprocess, sys, time
work, store, installed, rounds, binaries = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
base = {"PATH": "/usr/bin:/bin", "HOME": work, "XDG_DATA_HOME": store + "/data"}
variants = [("static Swift hello", [installed + "/hello-static"], base),
            ("static Swift hello, non-PIE", [installed + "/hello-nopie"], base)]
for index, given in enumerate(binaries):
    data = "%s/data%d" % (store, index)
    env = dict(base, XDG_DATA_HOME=data)
    binary = "%s/%d/keygate" % (installed, index)
    os.mkdir(os.path.dirname(binary))
    subprocess.run(["install", "-m", "0755", given, binary], check=True)
    subprocess.run([binary, "add", "-s", "api", "-a", "me"], input=b"s3cret", env=env, check=True)
    name = given if len(binaries) > 1 else "keygate"
    get = [binary, "get", "-s", "api", "-a", "me"]
    variants.append((name + " --version", [binary, "--version"], env))
    variants.append((name + " get", get, env))
    variants.append((name + " get, XDG_SESSION_ID (no system bus here)", get, dict(env, XDG_SESSION_ID="1")))
    variants.append((name + " get, XDG_SESSION_ID, a bus without logind", get,
                     dict(env, XDG_SESSION_ID="1", DBUS_SYSTEM_BUS_ADDRESS="unix:path=" + work + "/bus")))
times = {name: [] for name, _, _ in variants}
cpu = {name: [] for name, _, _ in variants}
for _ in range(rounds):
    for name, argv, env in variants:
        started = time.perf_counter_ns()
        child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        times[name].append((time.perf_counter_ns() - started) / 1e6)
        cpu[name].append((usage.ru_utime + usage.ru_stime) * 1e3)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("%s exited %d" % (name, os.waitstatus_to_exitcode(status)))
print("store and trail in %s; wall time, and the process's CPU time (user + system)" % os.path.dirname(store))
print("| run (median of %d, interleaved) | wall ms | min wall ms | CPU ms |" % rounds)
print("|---|---|---|---|")
for name, _, _ in variants:
    print("| %s | %.2f | %.2f | %.2f |" % (
        name, statistics.median(times[name]), min(times[name]), statistics.median(cpu[name])))
PY
