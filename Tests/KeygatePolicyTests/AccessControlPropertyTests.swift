import Foundation
import KeygatePolicy
import Testing

/// Every one of the 2^9 combinations of Apple's flags × the 7 protection classes.
@Suite struct AccessControlPropertyTests {
    static let combinations: [AccessControlFlags] = (0..<512).map { mask in
        AccessControlFlags.named.enumerated().reduce(into: AccessControlFlags()) { flags, entry in
            if mask & (1 << entry.offset) != 0 { flags.insert(entry.element.flag) }
        }
    }

    /// An independent statement of spec §1.2 steps 3–5.
    static func appleAccepts(_ flags: AccessControlFlags) -> Bool {
        if flags.contains(.or) && flags.contains(.and) { return false }
        if flags.contains(.biometryAny) && flags.contains(.biometryCurrentSet) { return false }
        if flags.contains(.userPresence) {
            let others = flags.subtracting([.userPresence, .applicationPassword, .privateKeyUsage])
            if !others.isEmpty { return false }
        }
        return true
    }

    @Test(arguments: ProtectionClass.allCases)
    func creationValidatesExactlyAsSpecified(_ protection: ProtectionClass) throws {
        var accepted = 0
        for flags in Self.combinations {
            do {
                let control = try AccessControl(protection: protection, flags: flags)
                accepted += 1
                #expect(Self.appleAccepts(flags), "\(flags) should be errSecParam")
                #expect(control.protection == protection)
                let constraints = AccessControlFlags.constraintFlags.filter { flags.contains($0) }
                // §1.2 step 8: ≥2 constraints → k-of-n, k = 1 with or, else n; 1 → leaf; 0 → allow.
                switch constraints.count {
                case 0: #expect(control.constraint.kind == .allow)
                case 1:
                    #expect(control.constraint.kind == .leaves && !control.constraint.isKOfN)
                    #expect(control.constraint.threshold == 1)
                default:
                    #expect(control.constraint.isKOfN)
                    #expect(control.constraint.threshold == (flags.contains(.or) ? 1 : constraints.count))
                }
                #expect(control.isPrivateKeyUsage == flags.contains(.privateKeyUsage))
                #expect(control.requiresApplicationPassword == flags.contains(.applicationPassword))
            } catch {
                #expect(!Self.appleAccepts(flags), "\(flags) should be accepted: \(error)")
                #expect(error.status == .param)
            }
        }
        #expect(accepted > 0)
    }

    @Test(arguments: ProtectionClass.allCases)
    func textAndJSONFormsRoundTrip(_ protection: ProtectionClass) throws {
        let hash = try #require(EnrollmentSetHash(templateIDs: ["left-index", "right-thumb"]))
        for flags in Self.combinations where Self.appleAccepts(flags) {
            var control = try AccessControl(protection: protection, flags: flags)
            for candidate in [control, control.bound(to: hash)] {
                control = candidate
                let text = control.textForm
                let parsed = try AccessControl(textForm: text)
                #expect(parsed == control, "text form \(text) did not round-trip")
                #expect(parsed.textForm == text)

                let json = try JSONEncoder().encode(control)
                let decoded = try JSONDecoder().decode(AccessControl.self, from: json)
                #expect(decoded == control, "JSON \(String(decoding: json, as: UTF8.self)) did not round-trip")

                // The canonical flags rebuild the same access control.
                var rebuilt = try AccessControl(protection: protection, flags: control.flags)
                if let bound = control.boundEnrollment { rebuilt = rebuilt.bound(to: bound) }
                #expect(rebuilt == control)
            }
        }
    }

    @Test func rawProtectionValuesAreValidatedFirst() {
        for value in [nil, "", "f", "bogus", "AK"] as [String?] {
            #expect(throws: KeygateError.self) { try AccessControl(protectionValue: value, flags: [.or, .and]) }
            do {
                _ = try AccessControl(protectionValue: value, flags: [.or, .and])
            } catch {
                #expect(error.status == .param)
                #expect(error.message.contains("invalid protection"))
            }
        }
        for protection in ProtectionClass.allCases {
            #expect((try? AccessControl(protectionValue: protection.rawValue, flags: [])) != nil)
        }
    }

    @Test func unknownFlagBitsAreRejected() {
        #expect(throws: KeygateError(.param, "unknown access-control flag bits 0x4")) {
            try AccessControl(protection: .whenUnlocked, flags: AccessControlFlags(rawValue: 1 << 2))
        }
    }
}
