import Keygate
import KeygateTesting
import Testing

/// A proof taken from an earlier request (``KeygatePolicy/Proof/Origin/reused(window:)``: the
/// broker's proof cache, the CLI's proof records) is named as reused by every audit record that
/// lists it, the intermediate `authenticate` records included, and a proof made in the request
/// never is (issue 15: the note is decided where the proof is known, for both modes).
@Suite struct ReusedProofAuditTests {
    static let passcodeReused = AuditNote.proofReused(.passcode, window: 60)

    /// A context with the reuse window 60 s holding a passcode proof from 5 s ago, taken from an
    /// earlier request.
    static func reusingContext() -> AuthenticationContext {
        var state = AuthenticationState(reuseSeconds: 60)
        state.proofs.record(Proof(factor: .passcode, time: SystemClock().now().adding(seconds: -5)).reused(within: 60))
        return AuthenticationContext(state: state)
    }

    static func world() async throws -> (Keychain, ScriptedAuthenticator, AuditRecorder) {
        let auth = ScriptedAuthenticator()
        auth.setDefault(.succeed, for: .passcode)
        auth.setDefault(.succeed, for: .biometry)
        let audit = AuditRecorder()
        let keychain = Keychain(
            store: InMemoryItemStore(), accessGroups: ["app"], authenticator: auth,
            device: DeferredBiometryTests.CountingDevice(), auditor: Auditor(sink: audit))
        let both = try AccessControl(
            protection: .whenUnlockedThisDeviceOnly, flags: [.devicePasscode, .and, .biometryAny])
        let passcode = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .devicePasscode)
        try await keychain.add(AddRequest(service: "api", account: "both", accessControl: both, data: SecretData("v")))
        try await keychain.add(
            AddRequest(service: "api", account: "passcode", accessControl: passcode, data: SecretData("v")))
        return (keychain, auth, audit)
    }

    static func read(_ account: String) -> ItemQuery { ItemQuery(service: "api", account: account, returnData: true) }

    @Test func aReadServedByAReusedProofSaysSoInItsRecord() async throws {
        let (keychain, auth, audit) = try await Self.world()
        let before = audit.records.count
        let read = try await keychain.copyMatching(Self.read("passcode"), context: Self.reusingContext())
        #expect(read.first?.data?.utf8String() == "v")
        #expect(auth.prompts(for: .passcode).isEmpty, "the reused proof served it")
        let records = audit.records.dropFirst(before)
        #expect(records.map(\.event.kind) == [.read])
        #expect(records.allSatisfy { $0.event.notes.contains(Self.passcodeReused) }, "\(records.map(\.line))")
    }

    /// The item needs the passcode and biometry: the reused passcode proof counts, biometry is
    /// proved in the request. Every record of the call (the read that asks for authentication,
    /// the authentication attempt, the read allowed) names the passcode proof as reused, and
    /// none names the biometry proof made in the request.
    @Test func everyRecordOfTheRequestNamesTheReusedProofAndNeverTheFreshOne() async throws {
        let (keychain, auth, audit) = try await Self.world()
        let before = audit.records.count
        let read = try await keychain.copyMatching(Self.read("both"), context: Self.reusingContext())
        #expect(read.first?.data?.utf8String() == "v")
        #expect(auth.prompts(for: .passcode).isEmpty)
        #expect(auth.prompts(for: .biometry).count == 1)
        let records = Array(audit.records.dropFirst(before))
        #expect(records.map(\.event.kind) == [.read, .authenticate, .read], "\(records.map(\.line))")
        #expect(records.map(\.event.decision) == [.authenticate, .proved, .allow])
        for record in records {
            #expect(record.event.notes.contains(Self.passcodeReused), "\(record.line)")
            #expect(!record.event.notes.contains { $0.kind == .proofReused && $0 != Self.passcodeReused })
            #expect(record.line.contains("proofReused: the passcode proof of an earlier request"))
        }
    }

    /// A request whose reused passcode proof is followed by a biometry lockout: the lockout
    /// record lists the reused proof too, and names it.
    @Test func aLockoutRecordOfTheRequestNamesTheReusedProofToo() async throws {
        let (keychain, auth, audit) = try await Self.world()
        auth.setDefault(.lockOut, for: .biometry)
        let before = audit.records.count
        await #expect(throws: KeygateError.self) {
            _ = try await keychain.copyMatching(Self.read("both"), context: Self.reusingContext())
        }
        let records = Array(audit.records.dropFirst(before))
        #expect(records.map(\.event.kind) == [.read, .authenticate, .lockout], "\(records.map(\.line))")
        for record in records {
            #expect(record.event.notes.contains(Self.passcodeReused), "\(record.line)")
        }
    }

    @Test func aFreshlyProvedReadNeverSaysReused() async throws {
        let (keychain, auth, audit) = try await Self.world()
        let before = audit.records.count
        let context = AuthenticationContext(state: AuthenticationState(reuseSeconds: 60))
        _ = try await keychain.copyMatching(Self.read("both"), context: context)
        _ = try await keychain.copyMatching(Self.read("passcode"), context: context)
        #expect(auth.prompts(for: .passcode).count == 1)
        let records = audit.records.dropFirst(before)
        #expect(records.map(\.event.kind) == [.read, .authenticate, .read, .read], "\(records.map(\.line))")
        #expect(!records.contains { $0.event.gives(AuditNote.Code.proofReused) }, "\(records.map(\.line))")
        #expect(records.allSatisfy { $0.event.factors.allSatisfy { $0.reusedWithin == nil } })
    }

    /// Read back from its line, a record lists the reused proof as reused again, with its note
    /// once: the same event.
    @Test func aReusedProofRoundTripsThroughTheLine() throws {
        let event = AuditEvent(
            kind: .read, decision: .allow,
            factors: [
                AuditEvent.ProvedFactor(factor: .passcode, secondsAgo: 5, reusedWithin: 60),
                AuditEvent.ProvedFactor(factor: .biometry, secondsAgo: 0),
            ])
        #expect(event.notes == [Self.passcodeReused])
        let record = AuditRecord(sequence: 1, time: SystemClock().now(), previousHash: "", event: event)
        let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: 1)
        #expect(parsed.event.notes == [Self.passcodeReused])
        #expect(parsed.event.factors == event.factors)
    }
}
