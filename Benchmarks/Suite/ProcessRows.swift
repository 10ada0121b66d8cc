// Whole processes: `keygate get` beside a static Swift hello world, `secret-tool lookup`
// (gnome-keyring) and `pass show`; `keygate list` and `keygate audit verify` beside
// `sqlite3 -json` and `sha256sum`; peak RSS opening a large store and reading from it.

import Foundation
import Glibc
import Keygate
import KeygateBenchC
import KeygatePolicy
import KeygateStore

/// The environment every CLI run gets: a private home, data and runtime directory, no login
/// session (unless `session`: its `XDG_SESSION_ID` and the bus its logind is on), and nothing of
/// the caller's keygate settings.
func cliEnvironment(_ home: String, session: LoginSession? = nil) -> [String: String] {
    var environment = [
        "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home,
        "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config", "XDG_RUNTIME_DIR": home + "/run",
        "LANG": "C.UTF-8",
    ]
    if let session {
        environment["XDG_SESSION_ID"] = session.sessionID
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = session.address
    }
    for name in ["data", "config", "run"] { mkdir(home + "/" + name, 0o700) }
    return environment
}

/// `keygate` with the options every run uses.
func keygate(_ binary: String, store: String, trail: String, _ arguments: [String]) -> [String] {
    [binary, "--store", store, "--audit", trail, "--device-state", "unlocked", "--no-interaction"] + arguments
}

func processRows(_ table: Table, scale: Scale, keygateBinary: String?) throws {
    table.section(
        "Whole process: a plain item (median of \(scale.processRuns) runs, interleaved with the hello world's)")
    let home = temporaryDirectory("cli")
    defer { removeTree(home) }
    let fixture = try StoreFixture.make(items: scale.readStores[0], large: scale.largeItems)
    let copy = try fixture.copy()
    defer { removeTree(copy) }
    // The same store on tmpfs, where there is one: start-up and work without the disk's
    // fsync latency.
    let memoryCopy = access("/dev/shm", W_OK) == 0 ? try fixture.copy(in: "/dev/shm") : nil
    defer { if let memoryCopy { removeTree(memoryCopy) } }
    let hello = helloWorld()
    let durableHello = durableHelloWorld()
    var plainGet: Double?
    if let binary = keygateBinary {
        // A desktop's login session: a bus with a logind to ask the session's lock state of.
        var sessionFailure = ""
        let session = LoginSession(failure: &sessionFailure)
        defer { session?.stop() }
        let sessionRow = "keygate get in a login session (LockedHint asked of a logind on a private bus)"
        let variants =
            [("keygate get", copy, LoginSession?.none)] + (session.map { [(sessionRow, copy, $0)] } ?? [])
            + (memoryCopy.map { [("keygate get, store and trail on tmpfs (no fsync latency)", $0, nil)] } ?? [])
        // As a user runs it: the device state read as by default (logind: without a session, no
        // bus is asked and the device counts as unlocked; in one, logind is asked).
        let gets = variants.map { _, directory, session in
            (
                arguments: [
                    binary, "--store", directory + "/items.db", "--audit", directory + "/audit.jsonl",
                    "--no-interaction", "get", "-s", "svc-1", "-a", "bench",
                ],
                environment: Optional(cliEnvironment(home, session: session))
            )
        }
        // The hello worlds in the same rounds: the ratios compare runs of the same moments. The
        // durable one appends to a file beside the store (the same disk).
        let floorFile = copy + "/floor.log"
        let medians = interleavedMedianRuns(
            (hello.map { [(arguments: [$0], environment: nil)] } ?? [])
                + (durableHello.map { [(arguments: [$0, floorFile], environment: nil)] } ?? []) + gets,
            runs: scale.processRuns)
        let helloTime = hello == nil ? nil : medians[0]
        let durableHelloTime = durableHello == nil ? nil : medians[hello == nil ? 0 : 1]
        let helloText = helloTime.map(duration) ?? "n/a"
        // A session row whose runs were not all answered by logind measured something else (a
        // wrong path or name reads as "no session", unlocked, and the get succeeds anyway).
        let unanswered = session.map { $0.answered < scale.processRuns } ?? false
        var sessionGet: Double?
        for ((name, _, asked), time) in zip(variants, medians.suffix(variants.count)) {
            if name == "keygate get" { plainGet = time }
            if asked != nil && !unanswered { sessionGet = time }
            let failed = asked != nil && unanswered
            table.add(
                Row(
                    name: name,
                    ours: failed
                        ? "failed: logind answered \(session?.answered ?? 0) of \(scale.processRuns) runs"
                        : time.map(duration) ?? "failed",
                    baselineName: "static Swift hello world", baseline: helloText,
                    ratio: failed ? "n/a" : time.flatMap { ours in helloTime.map { ratio(ours, $0) } } ?? "n/a",
                    target: "≤ 3 ms"))
        }
        if session == nil {
            table.add(Row(name: "keygate get in a login session", ours: "not run: " + sessionFailure, target: "≤ 3 ms"))
        }
        // What the session adds, beside what the same question costs a C client of sd-bus on a
        // connection of its own (in this process, right after the runs).
        if let session, let sessionGet, let plainGet {
            var asks: [Double] = []
            var answers = 0
            for _ in 0..<(5 * scale.processRuns) {
                let started = now()
                if kb_logind_ask(session.address, session.sessionID) == 0 { answers += 1 }
                asks.append(now() - started)
            }
            let ask = median(asks)
            table.add(
                Row(
                    name: "what a login session adds to keygate get (the session row − the plain row)",
                    ours: duration(max(sessionGet - plainGet, 0)),
                    baselineName:
                        "LockedHint asked over a connection of its own (C, sd-bus; \(answers)/\(asks.count) answered)",
                    baseline: answers == asks.count ? duration(ask) : "failed",
                    ratio: answers == asks.count ? ratio(max(sessionGet - plainGet, 0), ask) : "n/a", target: "—"))
        }
        // What the disk adds to any durable read: the plain get beside a hello world that
        // makes one line durable on the same disk before it answers.
        table.add(
            Row(
                name: "keygate get (as above)", ours: plainGet.map(duration) ?? "failed",
                baselineName: "static Swift hello world + one line appended and fdatasync'd on the store's disk",
                baseline: durableHelloTime.map(duration) ?? "n/a",
                ratio: plainGet.flatMap { ours in durableHelloTime.map { ratio(ours, $0) } } ?? "n/a",
                target: "—"))
    } else {
        table.add(Row(name: "keygate get", ours: "not built (KEYGATE_BIN)", target: "≤ 3 ms"))
    }
    table.add(secretToolRow(scale: scale, home: home, get: plainGet))
    table.add(passRow(scale: scale, home: home, get: plainGet))

    if let binary = keygateBinary {
        listRows(table, scale: scale, binary: binary, home: home)
        try verifyRows(table, scale: scale, binary: binary, home: home)
    }
    try rssRow(table, scale: scale)
}

/// A static Swift hello world, compiled once into the cache (nil without swiftc), measured as
/// installed like keygate (Installed.swift).
func helloWorld() -> String? {
    staticSwiftProgram("hello-static", source: "print(\"hello\")\n")
}

/// The floor of any `get` whose decision must be durable before its answer: a static Swift
/// hello world that first appends one line to the file named by its argument and `fdatasync`s
/// it (as the trail's writer does for each record), then prints. Nil without swiftc.
func durableHelloWorld() -> String? {
    staticSwiftProgram(
        "hello-durable",
        source: """
            import Glibc
            let file = open(CommandLine.arguments[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            let line = Array("{\\"decision\\":\\"allow\\"}\\n".utf8)
            guard file >= 0, write(file, line, line.count) == line.count, fdatasync(file) == 0 else { exit(1) }
            close(file)
            print("hello")

            """)
}

/// A static Swift program compiled once from `source` into the cache as `name` (nil without
/// swiftc or when it does not compile), measured as installed like keygate (Installed.swift).
private func staticSwiftProgram(_ name: String, source text: String) -> String? {
    let binary = cacheRoot + "/" + name
    if access(binary, X_OK) != 0 {
        let source = cacheRoot + "/" + name + ".swift"
        _ = FileManager.default.createFile(atPath: source, contents: Data(text.utf8))
        let compiler = ProcessInfo.processInfo.environment["SWIFTC"] ?? "swiftc"
        guard let built = run([compiler, "-O", "-static-stdlib", source, "-o", binary]), built.status == 0 else {
            return nil
        }
    }
    return installedCopy(of: binary)
}

/// `secret-tool lookup` against gnome-keyring in a private D-Bus session, when installed.
///
/// The session bus activates no service: with the stock session configuration, the first
/// `secret-tool store` (sent before the keyring started below owns `org.freedesktop.secrets`)
/// made the bus start a second keyring (`gnome-keyring-daemon --start`, locked, no password);
/// when that one won the name, every store failed, and the script's keyring, still starting
/// with SIGTERM blocked, never stopped: the run hung until its time-out, which killed only
/// `dbus-run-session` and left the bus and both keyrings running. Now the store is retried
/// until the one keyring owns the name, the keyring is killed if SIGTERM does not stop it,
/// and the run is a process group of its own, killed as a whole when it ends or times out.
/// A run that fails says why in the row.
func secretToolRow(scale: Scale, home: String, get: Double?) -> Row {
    let name = "secret-tool lookup (gnome-keyring, dbus-run-session)"
    func failed(_ reason: String) -> Row {
        Row(name: "keygate get", ours: get.map(duration) ?? "n/a", baselineName: name, baseline: "failed: " + reason)
    }
    guard installed("secret-tool"), installed("gnome-keyring-daemon"), installed("dbus-run-session") else {
        return Row(name: "keygate get", ours: get.map(duration) ?? "n/a", baselineName: name, baseline: "not installed")
    }
    // A session bus without service directories: nothing is activated behind the script's back.
    let busConfiguration = home + "/session-bus.conf"
    let configuration = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:tmpdir=/tmp</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>

        """
    guard FileManager.default.createFile(atPath: busConfiguration, contents: Data(configuration.utf8)) else {
        return failed("cannot write \(busConfiguration)")
    }
    // Inside the session: start a keyring unlocked with a throwaway password, store one secret (retried, 10 s at
    // most, until the keyring owns its bus name), then time lookups with this program's `time` worker (median of N).
    // The keyring runs in the foreground as this script's child and is stopped on the way out (SIGTERM, then
    // SIGKILL after 2 s: it blocks SIGTERM while starting). Each failure says why on standard error.
    let script = """
        printf 'bench' | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
        keyring=$!
        stop() {
          kill -TERM $keyring 2>/dev/null || return 0
          waited=0
          while kill -0 $keyring 2>/dev/null && [ $waited -lt 20 ]; do waited=$((waited + 1)); sleep 0.1; done
          kill -KILL $keyring 2>/dev/null
          wait $keyring 2>/dev/null
          return 0
        }
        trap stop EXIT
        tries=0
        until printf 'bench-secret' | secret-tool store --label=bench service bench account bench 2>"$HOME/store.err"; do
          if ! kill -0 $keyring 2>/dev/null; then echo "gnome-keyring-daemon exited at start-up" >&2; exit 1; fi
          tries=$((tries + 1))
          if [ $tries -ge 200 ]; then
            echo "secret-tool store still failing after 10 s: $(tail -n 1 "$HOME/store.err")" >&2; exit 1
          fi
          sleep 0.05
        done
        lookup="secret-tool lookup service bench account bench"
        "$0" worker time \(scale.processRuns) $lookup || { echo "a secret-tool lookup failed" >&2; exit 1; }
        """
    var environment = cliEnvironment(home)
    environment["XDG_RUNTIME_DIR"] = home + "/run"
    let errors = home + "/secret-tool.err"
    unlink(errors)
    let timeout = 120.0
    guard
        let finished = run(
            ["dbus-run-session", "--config-file=" + busConfiguration, "--", "sh", "-c", script, selfPath],
            environment: environment, stderrPath: errors, timeout: timeout, ownGroup: true)
    else {
        return failed("dbus-run-session did not start")
    }
    guard finished.status == 0, let seconds = Double(finished.output.trimmingCharacters(in: .whitespacesAndNewlines))
    else {
        if finished.status == 124 { return failed("still running after \(Int(timeout)) s (stopped)") }
        // The script's own reason, else the last thing the bus or a tool said.
        let said = ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { !$0.contains("Failed to set fd limit") }
        return failed(said.last.map(String.init) ?? "exit \(finished.status)")
    }
    return Row(
        name: "keygate get", ours: get.map(duration) ?? "n/a", baselineName: name, baseline: duration(seconds),
        ratio: get.map { ratio($0, seconds) } ?? "n/a", target: "≤ 3 ms")
}

/// `pass show` with a gpg key without passphrase, when installed.
func passRow(scale: Scale, home: String, get: Double?) -> Row {
    let name = "pass show (gpg key without passphrase)"
    guard installed("pass"), installed("gpg") else {
        return Row(name: "keygate get", ours: get.map(duration) ?? "n/a", baselineName: name, baseline: "not installed")
    }
    var environment = cliEnvironment(home)
    environment["GNUPGHOME"] = home + "/gnupg"
    environment["PASSWORD_STORE_DIR"] = home + "/pass"
    mkdir(home + "/gnupg", 0o700)
    let script = """
        set -e
        gpg --batch --passphrase '' --quick-gen-key bench@keygate.invalid default default never >/dev/null 2>&1
        pass init bench@keygate.invalid >/dev/null
        printf 'bench-secret\\n' | pass insert -m bench >/dev/null
        exec "$0" worker time \(scale.processRuns) pass show bench
        """
    guard let finished = run(["sh", "-c", script, selfPath], environment: environment, timeout: 120),
        finished.status == 0,
        let seconds = Double(finished.output.trimmingCharacters(in: .whitespacesAndNewlines))
    else {
        return Row(name: "keygate get", ours: get.map(duration) ?? "n/a", baselineName: name, baseline: "failed to run")
    }
    return Row(
        name: "keygate get", ours: get.map(duration) ?? "n/a", baselineName: name, baseline: duration(seconds),
        ratio: get.map { ratio($0, seconds) } ?? "n/a", target: "≤ 3 ms")
}

/// `keygate-bench worker time N PROGRAM ARGS…`: prints the median seconds of N runs.
func timeWorker(runs: Int, arguments: [String]) -> Int32 {
    guard let seconds = medianRun(arguments, runs: runs) else { return 1 }
    print(seconds)
    return 0
}

/// A timed run's figure, or "> N s" when it was stopped at the time-out.
func timed(_ finished: Finished?, timeout: Int) -> (String, Double?) {
    guard let finished else { return ("failed to start", nil) }
    if finished.status == 124 { return ("> \(timeout) s (stopped)", nil) }
    guard finished.status == 0 else { return ("failed (exit \(finished.status))", nil) }
    return (duration(finished.seconds), finished.seconds)
}

/// Runs `arguments` `runs` times, each with its peak memory sampled, as the baselines beside them
/// are timed (`medianRun`: the median of three): the median run's figures, the highest peak RSS
/// of all, or the first run that failed.
func medianMeasured(
    _ arguments: [String], environment: [String: String], timeout: Int, runs: Int = 3
) -> (text: String, seconds: Double?, peakKiB: Int?) {
    var finished: [Finished] = []
    for _ in 0..<runs {
        let measured = run(arguments, environment: environment, timeout: Double(timeout), sampleMemory: true)
        let (text, seconds) = timed(measured, timeout: timeout)
        guard let measured, seconds != nil else { return (text, nil, nil) }
        finished.append(measured)
    }
    let median = finished.sorted { $0.seconds < $1.seconds }[finished.count / 2]
    return (duration(median.seconds), median.seconds, finished.map(\.maxRSSKiB).max())
}

func listRows(_ table: Table, scale: Scale, binary: String, home: String) {
    table.section("keygate list and audit verify (medians of 3 runs, beside medians of 3)")
    for items in scale.listStores {
        do {
            let fixture = try StoreFixture.make(items: items, large: scale.largeItems)
            let copy = try fixture.copy()
            defer { removeTree(copy) }
            let environment = cliEnvironment(home)
            // Timed with its peak memory: a list holds its items and the records naming them.
            let (text, ours, peak) = medianMeasured(
                keygate(binary, store: copy + "/items.db", trail: copy + "/audit.jsonl", ["list"]),
                environment: environment, timeout: scale.timeoutSeconds)
            let memory = peak.map { " (peak RSS \(grouped($0 / 1024)) MiB)" } ?? ""
            let sql = "SELECT agrp, acct, svce, sync, labl, pdmn, accc, cdat, mdat FROM items"
            let baseline = medianRun(["sqlite3", "-json", fixture.store, sql], runs: 3)
            table.add(
                Row(
                    name: "keygate list, \(grouped(items + scale.largeItems)) items\(memory)", ours: text,
                    baselineName: "sqlite3 -json, same columns", baseline: baseline.map(duration) ?? "n/a",
                    ratio: ours.flatMap { o in baseline.map { ratio(o, $0) } } ?? "n/a",
                    target: items >= 200_000 ? "< 2 s" : ""))
        } catch {
            table.add(Row(name: "keygate list, \(grouped(items)) items", ours: "failed: \(error)"))
        }
    }
}

func verifyRows(_ table: Table, scale: Scale, binary: String, home: String) throws {
    for records in scale.trails {
        let fixture = try TrailFixture.make(records: records)
        let store = temporaryDirectory("verify")
        defer { removeTree(store) }
        let environment = cliEnvironment(home)
        let arguments = keygate(binary, store: store + "/items.db", trail: fixture.trail, ["audit", "verify"])
        let (text, ours, peak) = medianMeasured(arguments, environment: environment, timeout: scale.timeoutSeconds)
        let memory = peak.map { " (peak RSS \(grouped($0 / 1024)) MiB)" } ?? ""
        let baseline = medianRun(["sha256sum", fixture.trail], runs: 3)
        table.add(
            Row(
                name: "keygate audit verify, \(grouped(records)) records\(memory)",
                ours: text, baselineName: "sha256sum of the trail", baseline: baseline.map(duration) ?? "n/a",
                ratio: ours.flatMap { o in baseline.map { ratio(o, $0) } } ?? "n/a",
                target: "≤ 3×, flat memory"))
    }
}

func rssRow(_ table: Table, scale: Scale) throws {
    table.section("Memory")
    let fixture = try StoreFixture.make(items: scale.rssStore, large: scale.largeItems)
    let ours = run(
        [selfPath, "worker", "rss-keygate", fixture.store, "\(scale.rssStore)", "\(scale.rssReads)"],
        sampleMemory: true)
    let c = run(
        [selfPath, "worker", "rss-c", fixture.baseline, "\(scale.rssStore)", "\(scale.rssReads)"],
        sampleMemory: true)
    func mebibytes(_ finished: Finished?) -> String {
        guard let finished, finished.status == 0 else { return "failed" }
        return format(Double(finished.maxRSSKiB) / 1024) + " MiB"
    }
    table.add(
        Row(
            name: "peak RSS: open a \(grouped(scale.rssStore))-item store, read \(grouped(scale.rssReads)) items",
            ours: mebibytes(ours), baselineName: "C select + open", baseline: mebibytes(c),
            ratio: ours.flatMap { o in c.map { ratio(Double(o.maxRSSKiB), Double($0.maxRSSKiB)) } } ?? "n/a"))
}

/// `keygate-bench worker rss-keygate STORE ITEMS READS` / `worker rss-c DB ITEMS READS`.
func rssWorker(_ mode: String, path: String, items: Int, reads: Int) async -> Int32 {
    if mode == "rss-c" {
        guard let baseline = try? Baseline(path: path) else { return 1 }
        for counter in 0..<reads { baseline.read(spread(counter, over: items), large: false) }
        return 0
    }
    do {
        let keychain = Keychain(
            store: try SQLiteItemStore(path: path), accessGroups: ["keygate"], authenticator: NobodyAuthenticator(),
            auditor: Auditor(sink: NoopAuditSink(), isRequired: true))
        for counter in 0..<reads {
            let query = ItemQuery(
                service: "svc-\(spread(counter, over: items))", account: "bench", accessGroup: "keygate",
                returnData: true)
            _ = try await keychain.copyMatching(query)
        }
        return 0
    } catch {
        FileHandle.standardError.write("rss worker: \(error)\n")
        return 1
    }
}
