import Keygate
import KeygateAudit
import KeygateItems
import KeygateKeys
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateStore

/// Key items through the facade (spec §9): made in the keeper, found without proofs, used only
/// as their access control allows, each use one audit record.
@Suite struct KeychainKeysTests {
    static let passcodeUse = try! AccessControl(
        protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .devicePasscode])

    static func audited(_ backend: Backend) throws -> (KeychainFixture, Keychain, AuditRecorder) {
        let fixture = try KeychainFixture(backend)
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        return (fixture, keychain, audit)
    }

    /// Spec 9.5.1, 9.5.2, 9.9.1, 9.9.3: a `privateKeyUsage` + passcode key signs only after the
    /// passcode is proved; the DER X9.62 signature verifies under its public key; the record
    /// names the key, the algorithm and the SHA-256 of the message, never the message.
    @Test(arguments: Backend.allCases)
    func aKeyWithPrivateKeyUsageSignsAfterItsProof(_ backend: Backend) async throws {
        let (fixture, keychain, audit) = try Self.audited(backend)
        let key = try await keychain.createKey(
            NewKeyRequest(type: .p256, label: "deploy", protection: .accessControl(Self.passcodeUse)))
        #expect(fixture.authenticator.prompts.isEmpty, "creation asks for no proof")
        #expect(key.applicationLabel.count == 20)
        let message = Array("message to be signed, not logged".utf8)
        let signature = try await keychain.sign(
            message, algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "deploy"))
        #expect(fixture.authenticator.prompts(for: .passcode).map(\.operation) == [.sign])
        let publicKey = try await keychain.publicKey(matching: KeyQuery(label: "deploy"))
        #expect(publicKey.isValidSignature(signature, for: message, algorithm: .ecdsaSignatureMessageX962SHA256))
        let use = try #require(audit.records(.sign, item: key.auditIdentity).last)
        #expect(use.event.decision == .allow)
        let digest = Hex.string(SHA256.hash(message))
        #expect(
            use.event.notes.contains(
                .keyUse(algorithm: SignatureAlgorithm.ecdsaSignatureMessageX962SHA256.rawValue, inputSHA256: digest)))
        let line = audit.normalizedTrail
        #expect(!line.contains("message to be signed"), "the signed data is never recorded")
    }

    /// Spec 9.5.5: a constraint without `privateKeyUsage` makes the key, but every use is
    /// errSecAuthFailed ("ACL operation is not allowed: 'osgn'"), and nobody is asked.
    @Test func aConstraintWithoutPrivateKeyUsageDeniesSigning() async throws {
        let (fixture, keychain, _) = try Self.audited(.inMemory)
        let control = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: [.devicePasscode])
        _ = try await keychain.createKey(NewKeyRequest(type: .p256, label: "k", protection: .accessControl(control)))
        do {
            _ = try await keychain.sign(
                [1, 2, 3], algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "k"))
            Issue.record("a key without privateKeyUsage signed")
        } catch {
            #expect(error.status == .authFailed)
            #expect(error.message.contains("'osgn'"))
        }
        #expect(fixture.authenticator.prompts.isEmpty)
    }

    /// Spec 9.5.4: no flags at all (a protection class alone) allows every use with no proof.
    @Test func aKeyWithNoFlagsSignsWithoutAProof() async throws {
        let (fixture, keychain, _) = try Self.audited(.sqlite)
        _ = try await keychain.createKey(NewKeyRequest(type: .ed25519, label: "ssh"))
        let signature = try await keychain.sign(Array("m".utf8), algorithm: .ed25519, key: KeyQuery(label: "ssh"))
        #expect(signature.count == 64)
        let publicKey = try await keychain.publicKey(matching: KeyQuery(label: "ssh"))
        #expect(publicKey.isValidSignature(signature, for: Array("m".utf8), algorithm: .ed25519))
        #expect(fixture.authenticator.prompts.isEmpty)
    }

    /// Spec 9.8.2: a cancelled proof is errSecUserCanceled and a failed one errSecAuthFailed; the
    /// key stays, and a key call without interaction is errSecInteractionNotAllowed at once.
    @Test func aRefusedProofSignsNothingAndKeepsTheKey() async throws {
        let (fixture, keychain, audit) = try Self.audited(.sqlite)
        let key = try await keychain.createKey(
            NewKeyRequest(type: .p256, label: "deploy", protection: .accessControl(Self.passcodeUse)))
        fixture.authenticator.enqueue(.cancel, for: .passcode)
        await #expect(throws: KeygateError(.userCanceled, "")) {
            _ = try await keychain.sign(
                [1], algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "deploy"))
        }
        fixture.authenticator.enqueue(.fail, for: .passcode)
        do {
            _ = try await keychain.sign(
                [1], algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "deploy"))
            Issue.record("a failed proof signed")
        } catch {
            #expect(error.status == .authFailed)
        }
        do {
            _ = try await keychain.sign(
                [1], algorithm: .ecdsaSignatureMessageX962SHA256,
                key: KeyQuery(label: "deploy", authenticationUI: .fail))
            Issue.record("a use without interaction signed")
        } catch {
            #expect(error.status == .interactionNotAllowed)
        }
        #expect(
            try await keychain.keys(matching: KeyQuery(label: "deploy")).map(\.applicationLabel) == [
                key.applicationLabel
            ])
        #expect(!audit.records(.sign, item: key.auditIdentity).contains { $0.event.decision == .allow })
    }

    /// Spec 9.3.4, 9.6: finding, relabelling and deleting a key never prompt, even with the
    /// device locked; its use then is errSecInteractionNotAllowed (9.8.2).
    @Test func findingUpdatingAndDeletingNeverAuthenticate() async throws {
        let (fixture, keychain, _) = try Self.audited(.sqlite)
        _ = try await keychain.createKey(
            NewKeyRequest(type: .p256, label: "deploy", protection: .accessControl(Self.passcodeUse)))
        fixture.device.lock()
        #expect(try await keychain.keys(matching: KeyQuery()).count == 1)
        await #expect(throws: KeygateError(.interactionNotAllowed, "")) {
            _ = try await keychain.sign(
                [1], algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "deploy"))
        }
        try await keychain.updateKeys(KeyQuery(label: "deploy"), changes: KeyChanges(label: "renamed"))
        #expect(try await keychain.keys(matching: KeyQuery(label: "renamed")).count == 1)
        try await keychain.deleteKeys(KeyQuery(label: "renamed"))
        await #expect(throws: KeygateError(.itemNotFound, "")) {
            _ = try await keychain.keys(matching: KeyQuery())
        }
        #expect(fixture.authenticator.prompts.isEmpty)
    }

    /// Spec 9.11.5 and 9.8.2: a synchronizable keeper key is errSecParam and nothing is made;
    /// the private half's export is errSecUnimplemented; an algorithm of another key type is
    /// errSecParam.
    @Test func refusedRequestsChangeNothing() async throws {
        let (_, keychain, _) = try Self.audited(.sqlite)
        await #expect(throws: KeygateError(.param, "")) {
            _ = try await keychain.createKey(NewKeyRequest(type: .p256, label: "s", synchronizable: true))
        }
        await #expect(throws: KeygateError(.itemNotFound, "")) { _ = try await keychain.keys(matching: KeyQuery()) }
        _ = try await keychain.createKey(NewKeyRequest(type: .ed25519, label: "e"))
        #expect(throws: KeygateError(.unimplemented, "")) { try keychain.exportPrivateKey(matching: KeyQuery()) }
        await #expect(throws: KeygateError(.param, "")) {
            _ = try await keychain.sign([1], algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "e"))
        }
    }

    /// Spec 9.9.5a, 9.9.6: ECDH through the keeper gives the same 32 bytes as the peer computes
    /// with the key's public half.
    @Test func keyAgreementMatchesThePeers() async throws {
        let (_, keychain, _) = try Self.audited(.sqlite)
        _ = try await keychain.createKey(NewKeyRequest(type: .p256, label: "agree"))
        let keeper = SoftwareKeyKeeper()
        let peer = try keeper.generate(.p256)
        let ours = try await keychain.sharedSecret(with: peer.publicKey, key: KeyQuery(label: "agree"))
        let theirs = try keeper.sharedSecret(
            with: try await keychain.publicKey(matching: KeyQuery(label: "agree")), using: peer.blob, type: .p256)
        #expect(ours.count == 32)
        #expect(ours == theirs)
    }

    /// Spec 9.8.2 (biometryCurrentSet key after an enrolment change): the key is still found,
    /// its use fails with errSecAuthFailed, and it is not deleted.
    @Test func aChangedEnrollmentKeepsTheKeyButRefusesItsUse() async throws {
        let (fixture, keychain, _) = try Self.audited(.sqlite)
        let control = try AccessControl(
            protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .biometryCurrentSet])
        let key = try await keychain.createKey(
            NewKeyRequest(type: .p256, label: "bio", protection: .accessControl(control)))
        #expect(key.accessControl.boundEnrollment == fixture.device.enrollment, "bound at creation (9.5.7)")
        fixture.device.enroll("left-thumb")
        do {
            _ = try await keychain.sign([1], algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "bio"))
            Issue.record("a key bound to an old enrollment set signed")
        } catch {
            #expect(error.status == .authFailed)
        }
        #expect(try await keychain.keys(matching: KeyQuery(label: "bio")).count == 1)
    }
}

/// Organisation rules name key labels and key operations (issue 31, point 2): a forbid on
/// `sign` refuses the use (errSecDeniedByPolicy-style refusal, audited with the rule), a
/// requirement on `sign` asks its proof even for a key with no flags, and the key is kept.
@Suite struct KeyRulesTests {
    static let policy = """
        rule "release-keys-need-the-passcode" { match label "release-*" on sign require passcode }
        rule "no-signing-with-retired-keys" { match label "retired" forbid sign }
        """

    @Test func rulesNameKeyLabelsAndOperations() async throws {
        let device = SimulatedDevice(enrolled: ["right-index"])
        let authenticator = ScriptedAuthenticator()
        let audit = AuditRecorder()
        let set = try PolicySet(files: [("keys.policy", Self.policy)])
        let keychain = Keychain(
            store: InMemoryItemStore(), accessGroups: ["keys"], authenticator: authenticator, device: device,
            organisationPolicy: RulesOrganisationPolicy(set, program: "/usr/bin/ssh"), auditor: Auditor(sink: audit))
        var retired: KeyFields?
        for label in ["release-2026", "retired", "plain"] {
            let key = try await keychain.createKey(NewKeyRequest(type: .ed25519, label: label))
            if label == "retired" { retired = key }
        }
        _ = try await keychain.sign([1], algorithm: .ed25519, key: KeyQuery(label: "plain"))
        #expect(authenticator.prompts.isEmpty, "no rule names 'plain'")
        _ = try await keychain.sign([1], algorithm: .ed25519, key: KeyQuery(label: "release-2026"))
        #expect(authenticator.prompts(for: .passcode).map(\.operation) == [.sign], "the rule asked its proof")
        do {
            _ = try await keychain.sign([1], algorithm: .ed25519, key: KeyQuery(label: "retired"))
            Issue.record("a forbidden key signed")
        } catch {
            #expect(error.status == .deniedByPolicy, "\(error)")
        }
        let refusals = audit.records(.sign, item: try #require(retired).auditIdentity)
        #expect(
            refusals.contains { $0.event.ruleIDs.contains("no-signing-with-retired-keys") },
            "the refusal names the rule: \(refusals.map(\.event.ruleIDs))")
        #expect(try await keychain.keys(matching: KeyQuery(label: "retired")).count == 1)
    }
}

/// The keeper's own failures (a hardware keeper busy or locked out) fail the use closed, after
/// the decision: the key stays, nothing is signed, the failure is audited; a refused use never
/// reaches the keeper (KeygateTesting's simulated keeper counts its uses).
@Suite struct KeeperFailureTests {
    @Test func aKeeperFailureFailsTheUseAndKeepsTheKey() async throws {
        let keeper = SimulatedKeyKeeper()
        let audit = AuditRecorder()
        let authenticator = ScriptedAuthenticator()
        let keychain = Keychain(
            store: InMemoryItemStore(), accessGroups: ["keys"], authenticator: authenticator,
            device: SimulatedDevice(enrolled: ["right-index"]), auditor: Auditor(sink: audit), keeper: keeper)
        let control = try AccessControl(
            protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .devicePasscode])
        let key = try await keychain.createKey(
            NewKeyRequest(type: .p256, label: "hw", protection: .accessControl(control)))
        #expect(key.tokenID == "keygate.simulated")
        let input = Array("to sign".utf8)
        _ = try await keychain.sign(input, algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "hw"))
        audit.expectLastKeyUse(
            of: key, is: .allow, algorithm: SignatureAlgorithm.ecdsaSignatureMessageX962SHA256.rawValue, input: input)
        keeper.failNextUse(with: KeygateError(.interactionNotAllowed, "the keeper is busy"))
        await #expect(throws: KeygateError(.interactionNotAllowed, "")) {
            _ = try await keychain.sign(input, algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "hw"))
        }
        #expect(audit.keyUses(of: key).last?.event.decision == .deny, "the failure is audited")
        authenticator.enqueue(.cancel, for: .passcode)
        let uses = keeper.uses
        await #expect(throws: KeygateError(.userCanceled, "")) {
            _ = try await keychain.sign(input, algorithm: .ecdsaSignatureMessageX962SHA256, key: KeyQuery(label: "hw"))
        }
        #expect(keeper.uses == uses, "a refused use never reaches the keeper")
        #expect(try await keychain.keys(matching: KeyQuery(label: "hw")).count == 1)
    }
}

/// The CryptoKit-shaped API (spec 9.10): a key made with an access control, restored from its
/// data representation (a handle, no key material), its signatures and key agreement gated.
@Suite struct KeeperP256Tests {
    @Test func signingAndAgreementKeysWorkAsCryptoKitsDo() async throws {
        let fixture = try KeychainFixture(.sqlite)
        let control = try AccessControl(
            protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .devicePasscode])
        let key = try await KeeperP256.Signing.PrivateKey(accessControl: control, label: "pay", in: fixture.keychain)
        let restored = try await KeeperP256.Signing.PrivateKey(
            dataRepresentation: key.dataRepresentation, in: fixture.keychain)
        #expect(restored.publicKey == key.publicKey)
        #expect(key.dataRepresentation.count < 64, "a handle, not a wrapped key")
        let message = Array("order 42".utf8)
        let signature = try await restored.signature(for: message)
        #expect(signature.rawRepresentation.count == 64)
        #expect(
            key.publicKey.isValidSignature(
                signature.derRepresentation, for: message, algorithm: .ecdsaSignatureMessageX962SHA256))
        #expect(fixture.authenticator.prompts(for: .passcode).map(\.operation) == [.sign])
        // CryptoKit's default access control: no flags, every use allowed (9.5.4, 9.10.1).
        let agreement = try await KeeperP256.KeyAgreement.PrivateKey(in: fixture.keychain)
        let peer = try SoftwareKeyKeeper().generate(.p256)
        let ours = try await agreement.sharedSecretFromKeyAgreement(with: peer.publicKey)
        let theirs = try SoftwareKeyKeeper().sharedSecret(with: agreement.publicKey, using: peer.blob, type: .p256)
        #expect(ours == theirs)
        await #expect(throws: KeygateError(.param, "")) {
            _ = try await KeeperP256.Signing.PrivateKey(dataRepresentation: [1, 2, 3], in: fixture.keychain)
        }
        try await fixture.keychain.deleteKeys(KeyQuery(label: "pay"))
        await #expect(throws: KeygateError(.itemNotFound, "")) {
            _ = try await KeeperP256.Signing.PrivateKey(
                dataRepresentation: key.dataRepresentation, in: fixture.keychain)
        }
    }
}
