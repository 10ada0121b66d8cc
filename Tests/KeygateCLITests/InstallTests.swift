import Foundation
import KeygateTesting
import Testing

/// `make install` and `make uninstall` (issue 11, point 5), into a temporary DESTDIR. To stay
/// fast the test installs the binary it is testing (`KEYGATE_BIN`, the debug build) instead of
/// building a release one; everything else is what a real install does.
@Suite struct InstallTests {
    static func make(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try DocumentationCoverage.run(["make", "--no-print-directory"] + arguments)
    }

    /// Every file under `directory`, relative, with `@` after a symbolic link's name.
    static func tree(_ directory: URL) -> [String] {
        let base = directory.path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        return walker.compactMap { $0 as? String }.map { path in
            let full = base + "/" + path
            let isLink = (try? FileManager.default.destinationOfSymbolicLink(atPath: full)) != nil
            return path + (isLink ? "@" : "")
        }.sorted()
    }

    @Test func installThenUninstallLeavesNothing() throws {
        let destination = try TemporaryDirectory()
        let common = ["DESTDIR=\(destination.url.path)", "KEYGATE_BIN=\(KeygateBinary.url.path)"]
        let install = try Self.make(["install"] + common)
        #expect(install.status == 0, "\(install.output)")
        let files = Self.tree(destination.url)
        for expected in [
            "usr/local/bin/keygate", "usr/local/bin/git-credential-keygate@",
            "usr/local/bin/docker-credential-keygate@",
            "usr/local/share/man/man1/keygate.1", "usr/local/share/bash-completion/completions/keygate",
            "usr/local/share/zsh/site-functions/_keygate", "usr/local/share/fish/vendor_completions.d/keygate.fish",
        ] {
            #expect(files.contains(expected), "\(expected) in \(files)")
        }
        #expect(!files.contains { $0.hasPrefix("etc") }, "no PAM files outside PREFIX=/usr unless PAMDIR is set")
        // The installed links run the helpers.
        let bin = destination.url.appendingPathComponent("usr/local/bin")
        let helper = try KeygateBinary.run(
            ["--help"], stdin: Data(), environment: [:],
            executable: bin.appendingPathComponent("git-credential-keygate"))
        #expect(helper.status == 0)
        #expect(helper.stdoutText.hasPrefix("usage: keygate credential"))
        #expect(
            try FileManager.default.destinationOfSymbolicLink(
                atPath: bin.appendingPathComponent("git-credential-keygate").path) == "keygate")
        let version = try KeygateBinary.run(
            ["--version"], stdin: Data(), environment: [:], executable: bin.appendingPathComponent("keygate"))
        #expect(version.stdoutText.hasPrefix("keygate "))

        let uninstall = try Self.make(["uninstall"] + common)
        #expect(uninstall.status == 0, "\(uninstall.output)")
        #expect(Self.tree(destination.url) == [], "left behind")
    }

    /// PREFIX=/usr (or PAMDIR) also installs the PAM services; an administrator's edited file
    /// is kept by install and by uninstall.
    @Test func pamServicesOnlyForUsrOrPAMDIR() throws {
        let destination = try TemporaryDirectory()
        let common = ["DESTDIR=\(destination.url.path)", "KEYGATE_BIN=\(KeygateBinary.url.path)", "PREFIX=/usr"]
        let pam = destination.url.appendingPathComponent("etc/pam.d")
        try FileManager.default.createDirectory(at: pam, withIntermediateDirectories: true)
        try "auth required pam_deny.so\n".write(
            to: pam.appendingPathComponent("keygate-biometry"), atomically: true, encoding: .utf8)
        #expect(try Self.make(["install"] + common).status == 0)
        #expect(
            try String(contentsOf: pam.appendingPathComponent("keygate"), encoding: .utf8)
                == DocumentationCoverage.file("Policies/pam.d/keygate"))
        #expect(
            try String(contentsOf: pam.appendingPathComponent("keygate-biometry"), encoding: .utf8)
                == "auth required pam_deny.so\n", "kept")
        #expect(try Self.make(["uninstall"] + common).status == 0)
        #expect(Self.tree(destination.url) == ["etc", "etc/pam.d", "etc/pam.d/keygate-biometry"])
    }
}
