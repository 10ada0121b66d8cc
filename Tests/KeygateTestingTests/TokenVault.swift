import Keygate
import KeygatePolicy
import KeygateStore

/// A small app-like vault, as a user of Keygate would write it: a refresh token that needs
/// the user's presence, and a payment token that needs the fingerprints enrolled when it
/// was stored, with no reuse window.
struct TokenVault {
    let keychain: Keychain
    static let service = "com.example.tokens"

    func storeRefreshToken(_ token: String) async throws {
        let control = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .userPresence)
        try await CredentialStore(keychain: keychain, service: Self.service, accessControl: control)
            .save(SecretData(token), account: "refresh")
    }

    func storePaymentToken(_ token: String) async throws {
        let control = try AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: .biometryCurrentSet)
        try await CredentialStore(keychain: keychain, service: Self.service, accessControl: control)
            .save(SecretData(token), account: "payment")
    }

    func refreshToken(context: AuthenticationContext? = nil) async throws -> String? {
        try await read("refresh", prompt: "Sign in again", context: context)
    }

    func paymentToken(context: AuthenticationContext? = nil) async throws -> String? {
        try await read("payment", prompt: "Confirm the payment", context: context)
    }

    func logout() async throws {
        do {
            try await keychain.delete(ItemQuery(service: Self.service))
        } catch  where error.status == .itemNotFound {}
    }

    private func read(_ account: String, prompt: String, context: AuthenticationContext?) async throws -> String? {
        let data = try await CredentialStore(keychain: keychain, service: Self.service)
            .read(account: account, prompt: prompt, context: context)
        return data?.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
