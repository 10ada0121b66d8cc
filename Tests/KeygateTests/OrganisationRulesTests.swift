import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// Organisation rules applied in the facade: forbid wins, freshness bounds override the reuse
/// window, minimums refuse weaker items, grants restrict access groups; every decision's
/// audit record names the rules.
@Suite struct OrganisationRulesTests {
    static let policy = """
        rule "bank-tokens" {
          match service "com.example.bank.*"
          on add, update   require at-least "biometryCurrentSet or devicePasscode"
          on read          require fresh 30s
        }
        rule "no-export-of-recovery" { match access-group "recovery"  forbid export }
        rule "recovery-reads" { match access-group "recovery" on read require passcode }
        rule "recovery-locked-down" { match access-group "recovery" match account "root" forbid read }
        grant access-group "com.example.app" to program "/usr/bin/example-app"
        """

    struct World {
        let device = SimulatedDevice(enrolled: ["right-index"])
        let authenticator = ScriptedAuthenticator()
        let clock = ManualClock()
        let audit = AuditRecorder()
        let keychain: Keychain

        init(program: String? = "/usr/bin/other", groups: [String] = ["bank", "recovery", "com.example.app"]) throws {
            let set = try PolicySet(files: [("bank.policy", OrganisationRulesTests.policy)])
            keychain = Keychain(
                store: InMemoryItemStore(), accessGroups: groups, authenticator: authenticator, device: device,
                organisationPolicy: RulesOrganisationPolicy(set, program: program), clock: clock,
                auditor: Auditor(sink: audit, clock: clock))
        }

        func add(_ service: String, account: String = "me", group: String, flags: AccessControlFlags) async throws {
            try await keychain.add(
                AddRequest(
                    service: service, account: account, accessGroup: group,
                    accessControl: try AccessControl(protection: .whenUnlocked, flags: flags),
                    data: SecretData("secret")))
        }
    }

    static func status(_ body: () async throws -> Void) async -> KeygateError? {
        do {
            try await body()
            return nil
        } catch let error as KeygateError {
            return error
        } catch {
            return KeygateError(.internalError, "\(error)")
        }
    }

    @Test func atLeastRejectsAWeakerAddNamingTheRule() async throws {
        let world = try World()
        let error = await Self.status {
            try await world.add("com.example.bank.token", group: "bank", flags: .biometryAny)
        }
        #expect(error?.status == .deniedByPolicy)
        #expect(error?.message.contains("'bank-tokens'") == true)
        #expect(error?.message.contains("requires at least \"biometryCurrentSet devicePasscode or\"") == true)
        let last = try #require(world.audit.records.last?.event)
        #expect(last.kind == .add && last.decision == .deny && last.ruleIDs == ["bank-tokens"])
        // A strong enough item is added; the rule is named in its record too.
        try await world.add("com.example.bank.token", group: "bank", flags: .devicePasscode)
        #expect(world.audit.records.last?.event.ruleIDs == ["bank-tokens"])
        #expect(world.audit.records.last?.event.decision == .allow)
        // Another service: no rule, the item's own access control alone.
        try await world.add("com.example.mail", group: "bank", flags: .biometryAny)
        #expect(world.audit.records.last?.event.ruleIDs == [])
    }

    @Test func freshnessBoundOverridesTheReuseWindow() async throws {
        let world = try World()
        try await world.add("com.example.bank.token", group: "bank", flags: .devicePasscode)
        try await world.add("com.example.mail", group: "bank", flags: .devicePasscode)
        let context = AuthenticationContext(state: AuthenticationState(reuseSeconds: 300), clock: world.clock)
        let query = ItemQuery(service: "com.example.bank.token", account: "me", returnData: true)
        _ = try await world.keychain.copyMatching(query, context: context)
        #expect(world.authenticator.prompts.count == 1)
        world.clock.advance(seconds: 20)
        _ = try await world.keychain.copyMatching(query, context: context)
        #expect(world.authenticator.prompts.count == 1, "a 20 s old proof is within the 30 s bound")
        world.clock.advance(seconds: 40)
        _ = try await world.keychain.copyMatching(query, context: context)
        #expect(world.authenticator.prompts.count == 2, "a 60 s old proof does not count, whatever the 300 s window")
        #expect(
            world.audit.records.contains { $0.event.ruleIDs == ["bank-tokens"] && $0.event.decision == .authenticate })
        // The other item, without the rule, still reuses the 300 s window.
        world.clock.advance(seconds: 100)
        _ = try await world.keychain.copyMatching(
            ItemQuery(service: "com.example.mail", account: "me", returnData: true), context: context)
        #expect(world.authenticator.prompts.count == 2)
    }

    @Test func forbidWinsOverEveryOtherRule() async throws {
        let world = try World()
        try await world.add("recovery-key", account: "root", group: "recovery", flags: .devicePasscode)
        let error = await Self.status {
            _ = try await world.keychain.copyMatching(
                ItemQuery(service: "recovery-key", account: "root", accessGroup: "recovery", returnData: true))
        }
        #expect(error?.status == .deniedByPolicy)
        #expect(error?.message.contains("'recovery-locked-down'") == true)
        #expect(world.audit.records.last?.event.ruleIDs == ["recovery-locked-down"])
        // Export is forbidden for the group: the whole export fails, naming the rule.
        try await world.add("recovery-backup", account: "me", group: "recovery", flags: [])
        let export = await Self.status {
            _ = try await world.keychain.exportBackup(passphrase: SecretData("pass phrase"), strength: .minimumForTests)
        }
        #expect(export?.status == .deniedByPolicy)
        #expect(export?.message.contains("'no-export-of-recovery'") == true)
    }

    /// An update that moves an item is reviewed at the identity it moves to, as updated and as
    /// added: a weak item renamed into the bank's services meets the bank's minimum, and an item
    /// moved into a group where adds are forbidden is refused; neither changes anything.
    @Test func anItemMovedByAnUpdateMeetsTheRulesOfWhereItGoes() async throws {
        let world = try World()
        try await world.add("staging", group: "bank", flags: .biometryAny)
        var rename = ItemChanges()
        rename.service = "com.example.bank.token"
        let renamed = await Self.status {
            try await world.keychain.update(ItemQuery(service: "staging", accessGroup: "bank"), changes: rename)
        }
        #expect(renamed?.status == .deniedByPolicy)
        #expect(renamed?.message.contains("'bank-tokens'") == true)
        #expect(world.audit.records.last?.event.ruleIDs == ["bank-tokens"])
        // A move into a group whose adds a rule forbids.
        let set = try PolicySet(files: [
            ("vault.policy", "rule \"vault-closed\" { match access-group \"vault\" forbid add }")
        ])
        let vault = Keychain(
            store: InMemoryItemStore(), accessGroups: ["bank", "vault"], authenticator: world.authenticator,
            device: world.device, organisationPolicy: RulesOrganisationPolicy(set, program: nil), clock: world.clock)
        try await vault.add(AddRequest(service: "loose", account: "me", accessGroup: "bank", data: SecretData("v")))
        var move = ItemChanges()
        move.accessGroup = "vault"
        let moved = await Self.status {
            try await vault.update(ItemQuery(service: "loose", accessGroup: "bank"), changes: move)
        }
        #expect(moved?.status == .deniedByPolicy)
        #expect(moved?.message.contains("'vault-closed'") == true)
        for (keychain, service) in [(world.keychain, "staging"), (vault, "loose")] {
            let kept = try await keychain.copyMatching(
                ItemQuery(service: service, accessGroup: "bank", returnAttributes: true))
            #expect(kept.count == 1, "the refused update changed \(service)")
        }
    }

    @Test func extraFactorRequirementIsProved() async throws {
        let world = try World()
        try await world.add("recovery-backup", account: "me", group: "recovery", flags: [])
        _ = try await world.keychain.copyMatching(
            ItemQuery(service: "recovery-backup", account: "me", accessGroup: "recovery", returnData: true))
        #expect(world.authenticator.prompts.map(\.factor) == [.passcode])
        #expect(world.audit.records.contains { $0.event.ruleIDs == ["recovery-reads"] })
        // The evaluator's own decisions about the item name the rule that applies as well.
        let reads = world.audit.records(.read, service: "recovery-backup", account: "me")
            .filter { !$0.event.gives(AuditNote.Code.organisationRule) }
        #expect(!reads.isEmpty && reads.allSatisfy { $0.event.ruleIDs == ["recovery-reads"] })
    }

    @Test func ungrantedProgramGetsMissingEntitlementAndTheAuditNamesTheGrant() async throws {
        let world = try World(program: "/usr/bin/intruder")
        let error = await Self.status {
            try await world.add("api", group: "com.example.app", flags: [])
        }
        #expect(error?.status == .missingEntitlement)
        // The entitlement decision names the grant; the refused request is audited after it.
        let entitlement = try #require(world.audit.records.last { $0.event.kind == .entitlement }?.event)
        #expect(entitlement.decision == .deny)
        #expect(entitlement.ruleIDs == ["grant:com.example.app@bank.policy:9"])
        let refused = try #require(world.audit.records.last?.event)
        #expect(refused.kind == .add && refused.status == .missingEntitlement)
        // Groups no grant names behave as today.
        try await world.add("api", group: "bank", flags: [])
        // The granted program may use the group.
        let granted = try World(program: "/usr/bin/example-app")
        try await granted.add("api", group: "com.example.app", flags: [])
    }

    @Test func aReloadSwapsTheWholeSetOrKeepsTheOld() throws {
        let store = PolicyStore()
        try store.reload(files: [("a.policy", "rule \"one\" { forbid export }")])
        #expect(store.policies.ruleCount == 1)
        #expect(throws: PolicyParseError.self) {
            try store.reload(files: [
                ("a.policy", "rule \"one\" { forbid export }"), ("b.policy", "rule \"two\" { forbid expor }"),
            ])
        }
        #expect(store.policies.document.rules.map(\.name) == ["one"], "the old set stays, never a half-loaded one")
    }
}
