import Foundation
import Glibc
import Testing

/// `make install` / `make uninstall` of the broker (issue 15, point 6) into a temporary DESTDIR,
/// with the binaries this test run built (`KEYGATE_BIN`, `KEYGATED_BIN`) instead of a release
/// build. The CLI's own files are KeygateCLITests/InstallTests' concern.
@Suite struct InstallBrokerTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A DESTDIR removed when released.
    final class Destination {
        let path: String
        init() throws {
            var template = Array("/tmp/keygated-install-XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
            try #require(made != nil)
            path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Runs `make --no-print-directory arguments…` in the repository, waiting up to 120 s.
    /// `staged`: install under `DESTDIR=destination`; otherwise the arguments name where (a PREFIX).
    static func make(_ arguments: [String], _ destination: Destination, staged: Bool = true) throws -> (
        status: Int32, output: String
    ) {
        let binaries = DaemonFixture.binaryDirectory.path
        let output = destination.path + ".make.log"
        defer { unlink(output) }
        let process = try DaemonFixture.launch(
            "/usr/bin/make",
            ["--no-print-directory", "-C", root.path] + arguments + (staged ? ["DESTDIR=\(destination.path)"] : []) + [
                "KEYGATE_BIN=\(binaries)/keygate", "KEYGATED_BIN=\(binaries)/keygated",
            ], output: output)
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("make \(arguments) did not finish in 120 s")
        }
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    /// Every path under `directory`, relative, sorted.
    static func tree(_ directory: String) -> [String] {
        (FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? []).sorted()
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    static func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    static func packaged(_ name: String) -> String { text(root.appendingPathComponent(name).path) }

    @Test func prefixUsrInstallsTheBrokerAndUninstallKeepsAChangedConfiguration() throws {
        try DaemonFixture.requireRoot()
        let destination = try Destination()
        let base = destination.path
        let install = try Self.make(["install", "PREFIX=/usr"], destination)
        #expect(install.status == 0, "\(install.output)")
        for (path, mode) in [
            ("usr/sbin/keygated", 0o755), ("usr/share/man/man8/keygated.8", 0o644),
            ("usr/lib/systemd/system/keygated.service", 0o644), ("usr/lib/systemd/system/keygate.socket", 0o644),
            ("usr/lib/tmpfiles.d/keygate.conf", 0o644), ("etc/keygate/keygated.conf", 0o644),
            ("etc/keygate", 0o755), ("etc/pam.d/keygate", 0o644), ("etc/pam.d/keygate-biometry", 0o644),
            ("usr/lib/systemd/user/keygate-agent.service", 0o644),
        ] as [(String, mode_t)] {
            #expect(
                Self.mode("\(base)/\(path)") == mode, "\(path): mode \(String(Self.mode("\(base)/\(path)"), radix: 8))")
        }
        // The installed daemon is the binary given, and it runs (a usage error is exit 64).
        let daemon = try DaemonFixture.launch("\(base)/usr/sbin/keygated", ["-v"], output: base + ".daemon.log")
        defer { unlink(base + ".daemon.log") }
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 64)
        // The unit names this install's paths; the socket unit and the files are the packaged ones.
        let unit = Self.text("\(base)/usr/lib/systemd/system/keygated.service")
        #expect(
            unit.contains(
                "\nExecStart=/usr/sbin/keygated --socket /run/keygate/keygated.sock --state-directory /var/lib/keygate"
                    + " --config /etc/keygate/keygated.conf\n"), "\(unit)")
        for setting in [
            "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "PrivateNetwork=yes", "NoNewPrivileges=yes",
            "CapabilityBoundingSet=CAP_SYS_PTRACE\n", "StateDirectory=keygate", "RuntimeDirectory=keygate",
            "RuntimeDirectoryPreserve=yes", "Sockets=keygate.socket",
        ] {
            #expect(unit.contains(setting), "\(setting)")
        }
        // The agent's user unit runs this install's keygate.
        let agentUnit = Self.text("\(base)/usr/lib/systemd/user/keygate-agent.service")
        #expect(agentUnit.contains("\nExecStart=/usr/bin/keygate --daemon agent\n"), "\(agentUnit)")
        let socketUnit = Self.text("\(base)/usr/lib/systemd/system/keygate.socket")
        #expect(socketUnit == Self.packaged("Packaging/keygate.socket"))
        #expect(socketUnit.contains("ListenStream=/run/keygate/keygated.sock\n"))
        #expect(socketUnit.contains("SocketMode=0666\n"))
        let tmpfiles = Self.text("\(base)/usr/lib/tmpfiles.d/keygate.conf")
        #expect(tmpfiles.contains("\nd /var/lib/keygate 0700 root root -\n"))
        #expect(tmpfiles.contains("\nd /run/keygate 0755 root root -\n"))
        #expect(Self.text("\(base)/etc/keygate/keygated.conf") == Self.packaged("Packaging/keygated.conf"))
        #expect(Self.text("\(base)/usr/share/man/man8/keygated.8") == Self.packaged("Documentation/man/keygated.8"))

        // An administrator's edit survives a second install and the uninstall.
        let edited = Self.packaged("Packaging/keygated.conf") + "device-state = unlocked\n"
        try edited.write(toFile: "\(base)/etc/keygate/keygated.conf", atomically: true, encoding: .utf8)
        let again = try Self.make(["install", "PREFIX=/usr"], destination)
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("keeping \(base)/etc/keygate/keygated.conf"))
        #expect(Self.text("\(base)/etc/keygate/keygated.conf") == edited)
        let uninstall = try Self.make(["uninstall", "PREFIX=/usr"], destination)
        #expect(uninstall.status == 0, "\(uninstall.output)")
        #expect(Self.tree(base) == ["etc", "etc/keygate", "etc/keygate/keygated.conf"], "left behind")
        #expect(Self.text("\(base)/etc/keygate/keygated.conf") == edited)
    }

    @Test func theDefaultPrefixKeepsEverythingUnderItAndUninstallLeavesNothing() throws {
        try DaemonFixture.requireRoot()
        let destination = try Destination()
        let base = destination.path
        let install = try Self.make(["install"], destination)
        #expect(install.status == 0, "\(install.output)")
        let files = Self.tree(base)
        for expected in [
            "usr/local/sbin/keygated", "usr/local/share/man/man8/keygated.8",
            "usr/local/lib/systemd/system/keygated.service", "usr/local/lib/systemd/system/keygate.socket",
            "usr/local/lib/tmpfiles.d/keygate.conf", "usr/local/etc/keygate/keygated.conf",
        ] {
            #expect(files.contains(expected), "\(expected) in \(files)")
        }
        #expect(!files.contains { $0.hasPrefix("etc") }, "nothing outside PREFIX: \(files)")
        let unit = Self.text("\(base)/usr/local/lib/systemd/system/keygated.service")
        #expect(unit.contains("\nExecStart=/usr/local/sbin/keygated --socket /run/keygate/keygated.sock"))
        let agentUnit = Self.text("\(base)/usr/local/lib/systemd/user/keygate-agent.service")
        #expect(agentUnit.contains("\nExecStart=/usr/local/bin/keygate --daemon agent\n"), "\(agentUnit)")
        #expect(unit.contains(" --config /usr/local/etc/keygate/keygated.conf\n"))
        // An unchanged configuration is ours and goes with the rest.
        let uninstall = try Self.make(["uninstall"], destination)
        #expect(uninstall.status == 0, "\(uninstall.output)")
        #expect(Self.tree(base) == [], "left behind")
    }

    /// A PREFIX systemd does not search, installed for real (no DESTDIR): install says how to
    /// link the units instead of a `systemctl enable` that cannot find them, and how to install the
    /// PAM services it did not; uninstall removes every directory install made, and only those.
    @Test func aPrivatePrefixIsToldWhatSystemdNeedsAndUninstallRemovesTheDirectoriesItMade() throws {
        try DaemonFixture.requireRoot()
        let destination = try Destination()
        let prefix = destination.path + "/opt/keygate"
        let install = try Self.make(["install", "PREFIX=\(prefix)"], destination, staged: false)
        #expect(install.status == 0, "\(install.output)")
        #expect(
            install.output.contains(
                "the broker's units are in \(prefix)/lib/systemd/system, which systemd does not search"))
        #expect(install.output.contains("systemctl link \(prefix)/lib/systemd/system/keygated.service"))
        #expect(!install.output.contains("the broker: systemctl daemon-reload"), "\(install.output)")
        #expect(
            install.output.contains(
                "sudo install -m 0644 Policies/pam.d/keygate Policies/pam.d/keygate-biometry /etc/pam.d/"))
        #expect(Self.tree(prefix).contains("share/keygate/created-directories"))
        let uninstall = try Self.make(["uninstall", "PREFIX=\(prefix)"], destination, staged: false)
        #expect(uninstall.status == 0, "\(uninstall.output)")
        #expect(Self.tree(destination.path) == [], "left behind: \(Self.tree(destination.path))")
        #expect(access(destination.path, F_OK) == 0, "a directory install did not make was removed")
    }

    /// keygated(8) documents every option of the pinned command line and every key of the
    /// shipped configuration (each commented `#key = default` line), as `.It Cm key No = ...`.
    @Test func theManualNamesEveryOptionAndConfigurationKey() throws {
        let manual = Self.packaged("Documentation/man/keygated.8")
        for option in ["socket", "state-directory", "config"] {
            #expect(manual.contains(".It Fl \\-\(option) Ar "), "--\(option)")
        }
        let keys = Self.packaged("Packaging/keygated.conf").split(separator: "\n")
            .filter { $0.hasPrefix("#") && $0.dropFirst().first?.isLowercase == true && $0.contains(" = ") }
            .map { String($0.dropFirst().prefix { $0 != " " }) }
        #expect(keys.count >= 8, "\(keys)")
        for key in keys {
            #expect(manual.contains(".It Cm \(key) No = "), "\(key) is not in keygated(8)")
        }
    }
}
