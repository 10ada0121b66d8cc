import KeygatePolicy
import Testing

@Suite struct TextFormTests {
    static let hash = EnrollmentSetHash(templateIDs: ["f1", "f2"])!

    @Test func matchesApplesVocabulary() throws {
        // spec §1.3: [.biometryCurrentSet, .or, .devicePasscode] with ak
        let control = try AccessControl(protection: .whenUnlocked, flags: [.biometryCurrentSet, .or, .devicePasscode])
        #expect(control.textForm == "ak;od(pkofn(1) cup(true) cbio(pbioc(<>) pbioh(<>)));oe(true);odel(true)")
        #expect(
            control.bound(to: Self.hash).textForm
                == "ak;od(pkofn(1) cup(true) cbio(pbioc(<>) pbioh(<\(Self.hash.hex)>)));oe(true);odel(true)")
        #expect(
            try AccessControl(protection: .afterFirstUnlockThisDeviceOnly, flags: .userPresence).textForm
                == "cku;od(cpo(DeviceOwnerAuthentication));oe(true);odel(true)")
        #expect(try AccessControl(protection: .afterFirstUnlockThisDeviceOnly).textForm == "cku;dacl(true)")
        #expect(
            try AccessControl(protection: .whenUnlocked, flags: .applicationPassword).textForm
                == "ak;dacl(true);prp(true)")
        #expect(
            try AccessControl(protection: .whenUnlocked, flags: [.privateKeyUsage, .biometryAny]).textForm
                == "ak;osgn(cbio(pbioc(<>)));ock(cbio(pbioc(<>)));oa(true);odel(true)")
        #expect(
            try AccessControl(protection: .whenUnlocked, flags: [.devicePasscode, .companion]).textForm
                == "ak;od(pkofn(2) cup(true) cwtch(true));oe(true);odel(true)")
    }

    /// The plain item's text form is a literal per class: each must be the class's raw value
    /// followed by `dacl(true)`, and must parse back to the same access control.
    @Test(arguments: ProtectionClass.allCases)
    func plainItemTextFormIsTheClassFollowedByDacl(_ protection: ProtectionClass) throws {
        let control = try AccessControl(protection: protection)
        #expect(control.textForm == protection.rawValue + ";dacl(true)")
        #expect(try AccessControl(textForm: control.textForm) == control)
    }

    @Test func parsesEntriesInAnyOrder() throws {
        let parsed = try AccessControl(textForm: "aku;odel(true);oe(true);od(cbio(pbioc(<>)) cup(true) pkofn(1))")
        #expect(
            parsed
                == (try AccessControl(
                    protection: .whenUnlockedThisDeviceOnly, flags: [.biometryAny, .devicePasscode, .or])))
    }

    @Test(arguments: [
        "", "zz;dacl(true)", "ak", "ak;od(cup(true))", "ak;od(cup(true));oe(true);odel(false)",
        "ak;od(true);oe(true);odel(true)", "ak;od(false);oe(true);odel(true)",
        "ak;od(cup(true) cbio(pbioc(<>)));oe(true);odel(true)",
        "ak;od(pkofn(3) cup(true) cwtch(true));oe(true);odel(true)",
        "ak;od(cpo(DeviceOwnerAuthentication) cup(true) pkofn(1));oe(true);odel(true)",
        "ak;od(cbio(pbioc(<>) pbioh(<12>)));oe(true);odel(true)", "ak;od(cfoo(true));oe(true);odel(true)",
        "ak;dacl(true);dacl(true)", "ak;dacl(true);od(cup(true))", "ak;od(cup(true);oe(true);odel(true)",
    ])
    func rejectsMalformedText(_ text: String) {
        do {
            _ = try AccessControl(textForm: text)
            Issue.record("'\(text)' should not parse")
        } catch {
            #expect(error.status == .param)
        }
    }

    @Test func descriptionHoldsNoMoreThanTheTextForm() throws {
        let control = try AccessControl(protection: .whenUnlocked, flags: .userPresence)
        #expect(control.description == "<AccessControl: \(control.textForm)>")
    }

    @Test func inspectableTree() throws {
        let control = try AccessControl(protection: .whenUnlocked, flags: [.biometryCurrentSet, .devicePasscode])
        #expect(control.constraint.node == .kOfN(k: 2, children: [.passcode, .biometry(.currentSet(nil))]))
        #expect(
            control.bound(to: Self.hash).constraint.node
                == .kOfN(k: 2, children: [.passcode, .biometry(.currentSet(Self.hash))]))
        #expect(try AccessControl(protection: .always, flags: .userPresence).constraint.node == .leaf(.devicePolicy))
        #expect(try AccessControl(protection: .always).constraint.node == .allow)
    }
}
