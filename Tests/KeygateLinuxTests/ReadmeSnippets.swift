import Foundation
import Keygate
import KeygateClient
import KeygateLinux
import KeygatePAM
import KeygatePolicy

// The README's Swift blocks, verbatim but for their imports (above) and the function around
// each: they compile with the package, and `ReadmeSnippetTests` checks that the README still
// says exactly this. They are compiled, not run: they would use the real user's directories.

func readmeUsingTheLibrary() async throws {
    // Its own store, trail and access group in ~/.local/share/com.example.app; PAM on the
    // terminal, else an askpass program (KEYGATE_ASKPASS), else nobody (reads that need a proof
    // then fail at once with errSecInteractionNotAllowed).
    let keychain = try Keychain.standard(application: "com.example.app")
    let presence = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .userPresence)

    // The shape most apps want: nil only for "not found"; a locked screen, a cancel or a wrong
    // password throw, with the errSec status Apple would give.
    let tokens = CredentialStore(keychain: keychain, service: "api", accessControl: presence)
    try await tokens.save(SecretData("t0k3n"), account: "me", prompt: "Save the API token")
    let token = try await tokens.read(account: "me", prompt: "Sign in again")?.utf8String()

    // Or SecItem-style calls on the keychain itself.
    let items = try await keychain.copyMatching(ItemQuery(service: "api", account: "me", returnData: true))
    _ = (token, items)
}

func readmeTheEngine() throws {
    let control = try AccessControl(
        protection: .whenUnlockedThisDeviceOnly,
        flags: [.biometryAny, .or, .devicePasscode])
    let context = AuthenticationContext()  // device state, proofs, reuse window, interaction policy
    switch Evaluator().evaluate(control, operation: .read, context: context).outcome {
    case .allow: print("read it")
    case .deny(let status): print("refused: \(status)")  // e.g. errSecInteractionNotAllowed -25308
    case .authenticate(let requirement): print("prove \(requirement)")  // e.g. "biometry | passcode"
    }
}

func readmeOneAPITwoModes() async throws {
    // Through keygated when its socket is there (the daemon proves and keeps the store);
    // embedded otherwise. Either way the same calls and the same errors.
    let keychain: any KeychainAccess =
        if FileManager.default.fileExists(atPath: KeygateClient.defaultSocketPath) {
            try KeygateClient(accessGroups: ["com.example.app"], passphraseSource: TerminalPassphraseSource.open())
        } else {
            try Keychain.standard(application: "com.example.app")
        }
    let tokens = CredentialStore(keychain: keychain, service: "api")
    let token = try await tokens.read(account: "me", prompt: "Sign in again")
    _ = token
}
