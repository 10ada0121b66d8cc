import Foundation
import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// `Policies/default.policy` and `Policies/examples/`: each policy test file passes through
/// `PolicyTestSuite` (as CI runs them), and each policy is loaded into a keychain and exercised.
@Suite struct ShippedPolicyTests {
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/") + "/Policies"
    }()

    static let testFiles = [
        "default.tests.json", "examples/payment-tokens.tests.json", "examples/recovery-keys.tests.json",
        "examples/entitlements.tests.json",
    ]

    @Test(arguments: testFiles)
    func policyTestFilePasses(_ file: String) throws {
        let suite = try PolicyTestSuite(path: Self.root + "/" + file)
        #expect(suite.cases.count >= 5)
        for testCase in suite.cases { suite.expect(testCase) }
    }

    @Test func aWrongExpectationIsReportedWithTheDecidingRules() throws {
        let suite = try PolicyTestSuite(path: Self.root + "/examples/payment-tokens.tests.json")
        var wrong = suite.cases[0]
        wrong.expect = PolicyCase.Expectation(decision: "allow", rules: [])
        #expect(
            suite.check(wrong)?.hasSuffix(
                "a biometryAny token is too weak: decision deny, expected allow; "
                    + "deciding rules [\"payment-tokens\"], expected []") == true)
    }

    @Test func aTestFileWithAMisspelledKeyIsRefusedWithItsLine() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keygate-misspelled-\(ProcessInfo.processInfo.processIdentifier).tests.json"
        ).path
        let text = """
            {"policies": ["\(Self.root)/default.policy"],
             "cases": [{"name": "a", "operation": "add", "accesControl": "biometryAny",
                        "expect": {"decision": "allow", "rules": []}}]}
            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: KeygateError.self) { try PolicyTestSuite(path: path) }
        #expect(error?.status == .param)
        #expect(error?.message.hasPrefix("\(path):2:46: cases[0].accesControl: unknown key 'accesControl'") == true)
    }

    struct World {
        let authenticator = ScriptedAuthenticator()
        let clock = ManualClock()
        let audit = AuditRecorder()
        let keychain: Keychain

        init(_ files: [String], program: String? = nil, groups: [String]) throws {
            let policies = try PolicyDirectory.load(files.map { ShippedPolicyTests.root + "/" + $0 })
            keychain = Keychain(
                store: InMemoryItemStore(), accessGroups: groups, authenticator: authenticator,
                device: SimulatedDevice(enrolled: ["right-index"]),
                organisationPolicy: RulesOrganisationPolicy(policies, program: program),
                clock: clock, auditor: Auditor(sink: audit, clock: clock))
        }

        func add(_ service: String, group: String, _ protection: ProtectionClass, _ flags: AccessControlFlags = [])
            async throws(KeygateError)
        {
            try await keychain.add(
                AddRequest(
                    service: service, account: "me", accessGroup: group,
                    accessControl: try AccessControl(protection: protection, flags: flags), data: SecretData("v")))
        }
    }

    static func status(_ body: () async throws -> Void) async -> KeygateStatus? {
        do {
            try await body()
            return nil
        } catch let error as KeygateError {
            return error.status
        } catch {
            return .internalError
        }
    }

    @Test func defaultPolicyInTheFacade() async throws {
        let world = try World(["default.policy"], groups: ["app"])
        #expect(await Self.status { try await world.add("api", group: "app", .always) } == .deniedByPolicy)
        #expect(world.audit.records.last?.event.ruleIDs == ["no-deprecated-always-classes"])
        try await world.add("api", group: "app", .whenUnlocked)
    }

    @Test func paymentTokensInTheFacade() async throws {
        let world = try World(["examples/payment-tokens.policy"], groups: ["pay"])
        #expect(
            await Self.status {
                try await world.add("com.example.pay.card", group: "pay", .whenUnlocked, .devicePasscode)
            } == .deniedByPolicy)
        try await world.add("com.example.pay.card", group: "pay", .whenUnlockedThisDeviceOnly, .devicePasscode)
        let context = AuthenticationContext(state: AuthenticationState(reuseSeconds: 300), clock: world.clock)
        let query = ItemQuery(service: "com.example.pay.card", account: "me", returnData: true)
        _ = try await world.keychain.copyMatching(query, context: context)
        world.clock.advance(seconds: 31)
        _ = try await world.keychain.copyMatching(query, context: context)
        #expect(world.authenticator.prompts.count == 2, "the 30 s bound beats the 300 s reuse window")
    }

    @Test func recoveryKeysInTheFacade() async throws {
        let world = try World(["examples/recovery-keys.policy"], groups: ["recovery"])
        try await world.add("disk", group: "recovery", .whenPasscodeSetThisDeviceOnly, .devicePasscode)
        world.authenticator.setDefault(.cancel, for: .passcode)
        #expect(await Self.status { try await world.keychain.delete(ItemQuery(service: "disk")) } == .userCanceled)
        // One record holds the call's decisions (the delete's, then the rule's): look at each.
        #expect(
            world.audit.records.flatMap(\.event.decisions).contains {
                $0.kind == .delete && $0.ruleIDs == ["recovery-keys"]
            })
    }

    @Test func entitlementsInTheFacade() async throws {
        let files = ["examples/entitlements.policy"]
        let intruder = try World(files, program: "/usr/bin/python3", groups: ["com.example.app", "other"])
        #expect(
            await Self.status { try await intruder.add("api", group: "com.example.app", .whenUnlocked) }
                == .missingEntitlement)
        #expect(
            intruder.audit.records.last { $0.event.kind == .entitlement }?.event.ruleIDs == [
                "grant:com.example.app@entitlements.policy:4"
            ])
        try await intruder.add("api", group: "other", .whenUnlocked)
        let app = try World(files, program: "/usr/bin/example-app", groups: ["com.example.app"])
        try await app.add("api", group: "com.example.app", .whenUnlocked)
    }
}
