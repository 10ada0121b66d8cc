import Foundation
import KeygatePAM
import KeygatePolicy

/// The global options, read before the command name.
struct GlobalOptions: Sendable {
    var store: String?
    var policies: String?
    var audit: String?
    var pamService = "keygate"
    var pamBiometryService = "keygate-biometry"
    var passphraseDescriptor: Int32?
    var noInteraction = false
    var deviceState: String?
    var reuseSeconds = 0

    init(_ arguments: Arguments) throws(Arguments.UsageError) {
        store = arguments.values["store"]
        policies = arguments.values["policies"]
        audit = arguments.values["audit"]
        if let service = arguments.values["pam-service"] { pamService = service }
        if let service = arguments.values["pam-biometry-service"] { pamBiometryService = service }
        if let text = arguments.values["passphrase-fd"] {
            guard let descriptor = Int32(text), descriptor >= 0 else {
                throw Arguments.UsageError(message: "--passphrase-fd needs a file descriptor number, not '\(text)'")
            }
            passphraseDescriptor = descriptor
        }
        noInteraction = arguments.flags.contains("no-interaction")
        deviceState = arguments.values["device-state"]
        let reuse = arguments.values["reuse-seconds"] ?? ProcessInfo.processInfo.environment["KEYGATE_REUSE_SECONDS"]
        if let reuse {
            guard let seconds = Int(reuse), seconds >= 0 else {
                throw Arguments.UsageError(message: "--reuse-seconds needs a whole number of seconds, not '\(reuse)'")
            }
            reuseSeconds = min(seconds, AuthenticationState.maximumReuseSeconds)
        }
    }

    /// Where passphrases come from: the descriptor when given (it answers every PAM service),
    /// else the terminal; nil with --no-interaction or when neither can be used, so a proof
    /// must not be attempted.
    func passphraseSource() -> (any PassphraseSource)? {
        if noInteraction { return nil }
        if let passphraseDescriptor { return FileDescriptorPassphraseSource(descriptor: passphraseDescriptor) }
        return TerminalPassphraseSource.open()
    }

    /// A PAM authenticator for the owner of this process with the configured services.
    func authenticator(source: any PassphraseSource) throws(KeygateError) -> PAMAuthenticator {
        try PAMAuthenticator(
            configuration: .init(passcodeService: pamService, biometryService: pamBiometryService), source: source)
    }
}
