import Foundation
import KeygateTesting
import Testing

/// `keygate prove` in a subprocess, under pam_wrapper (and nss_wrapper for pam_faillock).
@Suite struct ProveCommandTests {
    @Test func rightWrongAndMissingPassphraseThroughTheDescriptor() throws {
        let world = try PAMWorld()
        try world.matrixService("keygate", user: PAMWorld.currentUser(), password: "s3cret")
        let env = world.environment
        var result = try KeygateBinary.run(
            ["--passphrase-fd", "0", "prove"], stdin: Data("s3cret\n".utf8), environment: env)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.hasPrefix("proved passcode for \(PAMWorld.currentUser()) in "))
        result = try KeygateBinary.run(
            ["--passphrase-fd", "0", "prove"], stdin: Data("wrong\n".utf8), environment: env)
        #expect(result.status == 5)
        #expect(result.lastErrorLine == "keygate: passcode failed: authentication failed (errSecAuthFailed -25293)")
        result = try KeygateBinary.run(["--passphrase-fd", "0", "prove"], environment: env)
        #expect(result.status == 6)
        #expect(result.lastErrorLine == "keygate: cancelled by the user (errSecUserCanceled -128)")
    }

    /// With an enrolled set (as a read sees it), presence asks biometry first, and one
    /// descriptor answers its service too.
    @Test func oneDescriptorAnswersTheBiometryServiceToo() throws {
        let world = try PAMWorld()
        try world.matrixService("keygate-fingerprint", user: PAMWorld.currentUser(), password: "touch")
        try world.matrixService("keygate", user: PAMWorld.currentUser(), password: "s3cret")
        let enrolled = try world.directory.file("enrolled", contents: "right-index\n")
        var environment = world.environment
        environment["KEYGATE_ENROLLMENT_FILE"] = enrolled
        let result = try KeygateBinary.run(
            ["--pam-biometry-service", "keygate-fingerprint", "--passphrase-fd", "0", "prove", "--factor", "presence"],
            stdin: Data("touch\n".utf8), environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.hasPrefix("proved biometry"))
    }

    /// With no enrollment source, a read of a userPresence item asks the passcode alone, and so
    /// does `prove --factor presence`: the biometry service (which would accept the answer) is not
    /// run, and nothing is reported as cancelled.
    @Test func presenceWithoutAnEnrollmentSourceAsksThePasscodeAsAReadDoes() throws {
        let world = try PAMWorld()
        try world.matrixService("keygate-biometry", user: PAMWorld.currentUser(), password: "s3cret")
        try world.matrixService("keygate", user: PAMWorld.currentUser(), password: "s3cret")
        let result = try KeygateBinary.run(
            ["--passphrase-fd", "0", "prove", "--factor", "presence"], stdin: Data("s3cret\n".utf8),
            environment: world.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.hasPrefix("proved passcode"), "\(result.stdoutText)")
        // Biometry alone cannot be used at all: said, naming why, before any prompt.
        let biometry = try KeygateBinary.run(
            ["--passphrase-fd", "0", "prove", "--factor", "biometry"], stdin: Data("s3cret\n".utf8),
            environment: world.environment)
        #expect(biometry.status == 5, "\(biometry.stderr)")
        #expect(
            biometry.lastErrorLine.contains("would refuse before asking: ")
                && biometry.lastErrorLine.contains("biometry cannot be used: biometryNotAvailable"),
            "\(biometry.stderr)")
        #expect(!biometry.stderr.contains("cancelled"))
    }

    /// A service that is not installed is named first, with where libpam looked and how to
    /// install it, before the question of a terminal.
    @Test func missingServiceIsNamedFirst() throws {
        let world = try PAMWorld()
        let named = try KeygateBinary.run(
            ["--pam-service", "keygate-missing", "--passphrase-fd", "0", "prove"], stdin: Data("x\n".utf8),
            environment: world.environment)
        #expect(named.status == 1)
        #expect(named.lastErrorLine.contains("PAM service keygate-missing is not installed (no file in "))
        for arguments in [["prove"], ["--no-interaction", "prove"]] {
            let result = try KeygateBinary.run(arguments, environment: world.environment)
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(
                result.lastErrorLine.contains("PAM service keygate is not installed")
                    && result.lastErrorLine.contains("Policies/pam.d/README.md"), "\(result.stderr)")
        }
        let status = try KeygateBinary.run(["status"], environment: world.environment)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdoutText.contains("pam:         PAM service keygate is not installed"), "\(status.stdoutText)")
    }

    /// With no terminal and no descriptor, an askpass program (`KEYGATE_ASKPASS`) answers, as it
    /// does for the library; its exit status 1 is a cancel.
    @Test func anAskpassProgramAnswersWhenThereIsNoTerminal() throws {
        let world = try PAMWorld()
        try world.matrixService("keygate", user: PAMWorld.currentUser(), password: "s3cret")
        let askpass = try world.directory.file("askpass", contents: "#!/bin/sh\necho s3cret\n")
        let dismissed = try world.directory.file("dismissed", contents: "#!/bin/sh\nexit 1\n")
        chmod(askpass, 0o755)
        chmod(dismissed, 0o755)
        var environment = world.environment
        environment["KEYGATE_ASKPASS"] = askpass
        var result = try KeygateBinary.run(["prove"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.hasPrefix("proved passcode"))
        environment["KEYGATE_ASKPASS"] = dismissed
        result = try KeygateBinary.run(["prove"], environment: environment)
        #expect(result.status == 6, "\(result.stderr)")
        // SSH_ASKPASS counts only with a display.
        environment["KEYGATE_ASKPASS"] = nil
        environment["SSH_ASKPASS"] = askpass
        result = try KeygateBinary.run(["prove"], environment: environment)
        #expect(result.status == 7, "\(result.stderr)")
        environment["DISPLAY"] = ":0"
        result = try KeygateBinary.run(["prove"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func noTerminalAndNoDescriptorNeverHangs() throws {
        let world = try PAMWorld()
        try world.matrixService("keygate", user: PAMWorld.currentUser(), password: "s3cret")
        for arguments in [["prove"], ["--no-interaction", "prove"]] {
            let result = try KeygateBinary.run(arguments, environment: world.environment)
            #expect(result.status == 7)
            #expect(result.lastErrorLine.hasSuffix("(errSecInteractionNotAllowed -25308)"))
        }
    }

    /// pam_faillock counts failures only for users in passwd; nss_wrapper supplies a fake one,
    /// so the lockout is tested with no real account and no /etc/pam.d edit (pam-recipe §7.2).
    @Test func pamFaillockLocksOutAFakeUser() throws {
        let world = try PAMWorld()
        try world.useFakeUser("kgalice")
        let tally = world.directory.url.appendingPathComponent("faillock").path
        try FileManager.default.createDirectory(atPath: tally, withIntermediateDirectories: true)
        let passdb = try world.directory.file("passdb", contents: "kgalice:right-pw:keygate\n")
        let options = "dir=\(tally) deny=3 unlock_time=600 even_deny_root root_unlock_time=600 nodelay"
        try world.service(
            "keygate",
            """
            auth     required                 pam_faillock.so preauth \(options)
            auth     [success=1 default=bad]  \(PAMWorld.modules)/pam_matrix.so passdb=\(passdb)
            auth     [default=die]            pam_faillock.so authfail \(options)
            auth     sufficient               pam_faillock.so authsucc \(options)
            auth     required                 pam_deny.so
            account  required                 pam_faillock.so dir=\(tally)
            account  required                 \(PAMWorld.modules)/pam_matrix.so passdb=\(passdb)

            """)
        let env = world.environment
        var result = try KeygateBinary.run(
            ["--passphrase-fd", "0", "prove"], stdin: Data("right-pw\n".utf8), environment: env)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.hasPrefix("proved passcode for kgalice"))
        for _ in 0..<3 {
            result = try KeygateBinary.run(
                ["--passphrase-fd", "0", "prove"], stdin: Data("bad\n".utf8), environment: env)
            #expect(result.status == 5)
        }
        // Locked by pam_faillock: even the right password is refused, and the module says why.
        result = try KeygateBinary.run(
            ["--passphrase-fd", "0", "prove"], stdin: Data("right-pw\n".utf8), environment: env)
        #expect(result.status == 5)
        #expect(result.stderr.contains("The account is locked due to 3 failed logins."), "\(result.stderr)")
    }
}

/// The shipped service files (Policies/pam.d) load and behave under pam_wrapper: pam_unix
/// refuses a wrong password with a plain failure, and the biometry service without fprintd
/// is unavailable, so presence falls back to the passcode.
@Suite struct ShippedPAMServiceTests {
    static let policies: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/") + "/Policies/pam.d"
    }()

    @Test func shippedServicesLoad() throws {
        let world = try PAMWorld()
        let tally = world.directory.url.appendingPathComponent("faillock").path
        try FileManager.default.createDirectory(atPath: tally, withIntermediateDirectories: true)
        let passcode = try String(contentsOfFile: Self.policies + "/keygate", encoding: .utf8)
            .replacingOccurrences(of: "pam_faillock.so", with: "pam_faillock.so dir=\(tally)")
        try world.service("keygate", passcode)
        try world.service(
            "keygate-biometry", try String(contentsOfFile: Self.policies + "/keygate-biometry", encoding: .utf8))
        let result = try KeygateBinary.run(
            ["--passphrase-fd", "0", "prove", "--factor", "presence"], stdin: Data("not-the-password\n".utf8),
            environment: world.environment)
        // pam_fprintd is not installed here: biometry is unavailable; the passcode is then tried and refused.
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.lastErrorLine == "keygate: passcode failed: authentication failed (errSecAuthFailed -25293)")
    }
}
