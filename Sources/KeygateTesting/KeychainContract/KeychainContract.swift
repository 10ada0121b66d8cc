public import Keygate
import KeygatePolicy

/// The behaviour every ``KeygateItems/KeychainAccess`` shows, whichever mode runs the gate: the
/// embedded ``Keygate/Keychain`` and `KeygateClient` through `keygated` both pass it, so code
/// written against `any KeychainAccess` (``KeygateItems/CredentialStore`` included) behaves the
/// same on either.
///
/// Every case needs no prompt: plain items, and protected items read with `fail` or `skip`
/// (what one mode alone can do, such as answering a prompt or passing an in-process context,
/// is tested by that mode). Each case asks `makeKeychain` for keychains over groups of its own
/// (fresh names per case), so one store or one daemon can serve the whole run.
///
/// ```swift
/// @Test func honoursTheKeychainContract() async {
///     await KeychainContract.expectHonoured { groups in try MyKeychain(accessGroups: groups) }
/// }
/// ```
public enum KeychainContract {
    /// The text every value the contract stores contains; a failure never quotes it.
    public static let secretMarker = "kg-keychain-contract"

    /// What the contract checks, one case each.
    public enum Case: String, CaseIterable, Sendable, CustomStringConvertible {
        /// An added item reads back: its value, and its attributes without the value (spec §7.3).
        case addAndRead
        /// A second add of the same identity is `errSecDuplicateItem` and changes nothing; the
        /// identity is service, account, group and sync flag (spec §7.1, §7.2).
        case duplicateAdd
        /// Reads return one item by default, at most a count, or all; a count below 1 is
        /// `errSecParam` (spec §7.3).
        case matchLimits
        /// Queries match non-synchronizable items unless they ask for synchronizable or any; an
        /// access control or a ThisDeviceOnly class on a synchronizable item is `errSecParam`
        /// (spec §7.2, §7.3).
        case synchronizable
        /// Updates change values and attributes of every match, all or nothing (spec §7.4).
        case update
        /// Deletes remove every match; nothing left is `errSecItemNotFound` (spec §7.5).
        case delete
        /// Reading, updating or deleting what is not there is `errSecItemNotFound`.
        case notFound
        /// Request shapes Apple refuses are `errSecParam` or `errSecNoSuchAttr` and change nothing
        /// (spec §5, §6.1, §7.4, §7.5).
        case invalidRequests
        /// Other groups are `errSecMissingEntitlement`; other callers' items are invisible
        /// (spec §6.1).
        case entitlements
        /// A protected item is never read without a proof: `fail` refuses, `skip` leaves it out;
        /// its attributes and its deletion need none (spec §5, §7.3, §7.5).
        case noPromptNoValue
        /// ``KeygateItems/CredentialStore``'s save, read and delete over the keychain.
        case credentialStore

        /// The case's name.
        public var description: String { rawValue }
    }

    /// One broken case and what the contract saw.
    public struct Failure: Hashable, Sendable, CustomStringConvertible {
        /// The case broken.
        public let broken: Case
        /// What was expected and what happened (never a stored value).
        public let message: String

        /// `Keychain contract, <case>: <message>`.
        public var description: String { "Keychain contract, \(broken): \(message)" }
    }

    /// Runs every case (or those in `cases`), each on keychains from `makeKeychain`.
    /// - Parameters:
    ///   - cases: the cases to run, in order (default: all).
    ///   - makeKeychain: a keychain for the caller's `groups` (the first is the default group of
    ///     new items); the groups are fresh for each case, so their items start empty.
    /// - Returns: the broken cases; empty when the keychains honour the contract.
    public static func check(
        _ cases: [Case] = Case.allCases,
        makeKeychain: @escaping (_ groups: [String]) async throws -> any KeychainAccess
    ) async -> [Failure] {
        let run = KeychainContractRun(makeKeychain: makeKeychain)
        for item in cases { await run.check(item) }
        return run.failures
    }

    /// Reports each failure of ``check(_:makeKeychain:)`` as a test failure, in Swift Testing or
    /// XCTest, whichever is running.
    /// - Parameters:
    ///   - cases: the cases to run (default: all).
    ///   - makeKeychain: as for ``check(_:makeKeychain:)``.
    ///   - filePath: where to report failures (the caller's file by default).
    ///   - line: the line to report failures at.
    public static func expectHonoured(
        _ cases: [Case] = Case.allCases,
        makeKeychain: @escaping (_ groups: [String]) async throws -> any KeychainAccess,
        filePath: StaticString = #filePath, line: UInt = #line
    ) async {
        for failure in await check(cases, makeKeychain: makeKeychain) {
            TestFailure.report(failure.description, filePath: filePath, line: line)
        }
    }
}
