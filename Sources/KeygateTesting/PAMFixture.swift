import Foundation
public import KeygatePAM
public import KeygatePolicy

/// One throwaway PAM world per test process, for testing PAM without touching `/etc/pam.d` or
/// a real account: a pam_wrapper service directory (Debian `libpam-wrapper`) with `pam_matrix`
/// services for the process owner, and an `other` that denies.
///
/// Services: `kg-passcode` (password ``passcode``), `kg-biometry` (answer ``finger``),
/// `kg-chatty` (messages, then the passcode), `kg-denied` (never), `kg-unavailable` (no passdb),
/// `kg-caller` (the passcode, and only for ``callerTerminal`` and ``callerUser`` as `PAM_TTY` and
/// `PAM_RUSER`).
///
/// pam_wrapper copies the service directory once, at its first use in a process, so all
/// services are written before the library is loaded. The library is loaded with dlopen
/// (no LD_PRELOAD): tests cannot silently reach the real /etc/pam.d. When pam_wrapper is
/// missing or inactive, `library` throws and every PAM test fails; none is skipped.
/// The fixture directory, removed when the test process exits.
nonisolated(unsafe) private var fixtureRoot: String?

public enum PAMFixture {
    /// Where Debian installs pam_wrapper's modules.
    public static let modules = "/usr/lib/x86_64-linux-gnu/pam_wrapper"
    /// The password of `kg-passcode` and `kg-chatty`.
    public static let passcode = "s3cret-passcode"
    /// The answer `kg-biometry` accepts.
    public static let finger = "finger-match"
    /// The `PAM_TTY` `kg-caller` requires.
    public static let callerTerminal = "/dev/pts/77"
    /// The `PAM_RUSER` `kg-caller` requires.
    public static let callerUser = "kg-remote-caller"

    /// The loaded world.
    public struct World: Sendable {
        /// The fixture's directory.
        public let directory: String
        /// libpam_wrapper, loaded with dlopen.
        public let library: PAMLibrary
        /// The process owner, the user every service knows.
        public let user: String
    }

    private static let world: Result<World, KeygateError> = {
        do throws(KeygateError) {
            let user = try ProcessOwner.userName()
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("keygate-pam-\(getpid())").path
            let services = root + "/services"
            try? FileManager.default.removeItem(atPath: root)
            do {
                try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
                func write(_ path: String, _ text: String) throws {
                    try text.write(toFile: path, atomically: true, encoding: .utf8)
                }
                func matrix(_ passdb: String) -> String {
                    "auth required \(modules)/pam_matrix.so passdb=\(root)/\(passdb)\n"
                        + "account required \(modules)/pam_matrix.so passdb=\(root)/\(passdb)\n"
                }
                try write(root + "/passdb-passcode", "\(user):\(passcode):kg-passcode\n")
                try write(root + "/passdb-biometry", "\(user):\(finger):kg-biometry\n")
                try write(root + "/passdb-chatty", "\(user):\(passcode):kg-chatty\n")
                try write(root + "/passdb-denied", "\(user):\(passcode):some-other-service\n")
                try write(root + "/passdb-caller", "\(user):\(passcode):kg-caller\n")
                try write(
                    services + "/kg-caller",
                    "auth requisite pam_succeed_if.so quiet tty = \(callerTerminal) ruser = \(callerUser)"
                        + "\n" + matrix("passdb-caller"))
                try write(services + "/kg-passcode", matrix("passdb-passcode"))
                try write(services + "/kg-biometry", matrix("passdb-biometry"))
                try write(services + "/kg-denied", matrix("passdb-denied"))
                try write(
                    services + "/kg-chatty",
                    "auth required \(modules)/pam_chatty.so num_lines=2 info error\n" + matrix("passdb-chatty"))
                // pam_matrix with no passdb anywhere: PAM_AUTHINFO_UNAVAIL.
                try write(
                    services + "/kg-unavailable",
                    "auth required \(modules)/pam_matrix.so\naccount required \(modules)/pam_matrix.so\n")
                try write(
                    services + "/other",
                    "auth required pam_deny.so\naccount required pam_deny.so\npassword required pam_deny.so\n"
                        + "session required pam_deny.so\n")
            } catch {
                throw KeygateError(.io, "cannot write the PAM fixture: \(error)")
            }
            fixtureRoot = root
            atexit { if let root = fixtureRoot { try? FileManager.default.removeItem(atPath: root) } }
            unsetenv("PAM_MATRIX_PASSWD")
            setenv("PAM_WRAPPER_SERVICE_DIR", services, 1)
            setenv("PAM_WRAPPER", "1", 1)
            let library = try PAMLibrary.load("libpam_wrapper.so")
            guard library.isWrapperActive else {
                throw KeygateError(.notAvailable, "libpam_wrapper.so loaded but not active")
            }
            return .success(World(directory: root, library: library, user: user))
        } catch {
            return .failure(error)
        }
    }()

    /// The fixture's world, or an error that fails the calling test.
    public static func load() throws -> World { try world.get() }

    /// An authenticator over the fixture's services.
    public static func authenticator(
        source: any PassphraseSource, passcodeService: String = "kg-passcode",
        biometryService: String = "kg-biometry", policy: AttemptPolicy = AttemptPolicy()
    ) throws -> PAMAuthenticator {
        let world = try load()
        return try PAMAuthenticator(
            configuration: .init(
                passcodeService: passcodeService, biometryService: biometryService, attemptPolicy: policy,
                failureDelay: .zero, library: world.library),
            source: source)
    }
}
