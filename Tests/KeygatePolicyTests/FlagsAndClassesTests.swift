import KeygatePolicy
import Testing

@Suite struct FlagsAndClassesTests {
    @Test func flagRawValuesAreApples() {
        // spec §1.1
        #expect(AccessControlFlags.userPresence.rawValue == 1)
        #expect(AccessControlFlags.biometryAny.rawValue == 2)
        #expect(AccessControlFlags.biometryCurrentSet.rawValue == 8)
        #expect(AccessControlFlags.devicePasscode.rawValue == 16)
        #expect(AccessControlFlags.companion.rawValue == 32)
        #expect(AccessControlFlags.or.rawValue == 0x4000)
        #expect(AccessControlFlags.and.rawValue == 0x8000)
        #expect(AccessControlFlags.privateKeyUsage.rawValue == 1 << 30)
        #expect(AccessControlFlags.applicationPassword.rawValue == 1 << 31)
        #expect(AccessControlFlags.touchIDAny == .biometryAny)
        #expect(AccessControlFlags.touchIDCurrentSet == .biometryCurrentSet)
        #expect(AccessControlFlags.watch == .companion)
    }

    @Test func flagNamesAreStableTextForm() throws {
        let flags: AccessControlFlags = [.biometryAny, .devicePasscode, .or]
        #expect(flags.names == ["biometryAny", "devicePasscode", "or"])
        #expect(try AccessControlFlags(parsing: "biometryAny, devicePasscode,or") == flags)
        #expect(try AccessControlFlags(parsing: "touchIDCurrentSet,watch") == [.biometryCurrentSet, .companion])
        for (name, flag) in AccessControlFlags.named {
            #expect(try AccessControlFlags(parsing: name) == flag)
        }
    }

    @Test func unknownFlagNameIsNamedInTheError() {
        do {
            _ = try AccessControlFlags(parsing: "biometryAny,faceID")
            Issue.record("expected an error")
        } catch {
            #expect(error.status == .param)
            #expect(error.message.contains("'faceID'"))
        }
        #expect(throws: KeygateError.self) { try AccessControlFlags(parsing: "biometryAny,,or") }
    }

    /// Issue 9, point 15: an empty or whitespace-only list, like a trailing comma, is a bad
    /// parameter rather than "no flags" (before, "" and " " parsed as no flags at all).
    @Test(arguments: ["", " ", "\t", "  \t ", ",", " , ", "devicePasscode,"])
    func emptyFlagListsAreRefused(_ text: String) {
        do {
            let flags = try AccessControlFlags(parsing: text)
            Issue.record("'\(text)' parsed as \(flags)")
        } catch {
            #expect(error.status == .param)
            #expect(error.message.contains("empty access-control flag"))
        }
    }

    /// Issue 9, point 15: with no list at all a request has no flags; an empty list or an
    /// empty bound enrollment set (or an empty template id in it) is `errSecParam`.
    @Test func evaluationRequestsRefuseEmptyListsButAcceptNone() throws {
        #expect(
            try EvaluationRequest(flags: nil, accessible: nil, boundEnrollment: nil, operation: nil).control.flags == []
        )
        for flags in ["", " "] {
            #expect(throws: KeygateError.self) {
                try EvaluationRequest(flags: flags, accessible: nil, boundEnrollment: nil, operation: nil)
            }
        }
        for bound in [[], [""], [" "], ["f1", ""], ["f1", "\t"]] {
            do {
                _ = try EvaluationRequest(
                    flags: "biometryCurrentSet", accessible: nil, boundEnrollment: bound, operation: nil)
                Issue.record("bound enrollment \(bound) was accepted")
            } catch {
                #expect(error.status == .param)
            }
        }
        let bound = try EvaluationRequest(
            flags: "biometryCurrentSet", accessible: nil, boundEnrollment: ["f1"], operation: nil)
        #expect(bound.control.boundEnrollment == EnrollmentSetHash(templateIDs: ["f1"]))
    }

    @Test func protectionClassesHaveApplesRawStrings() throws {
        // spec §2
        let expected: [(ProtectionClass, String, String)] = [
            (.whenPasscodeSetThisDeviceOnly, "akpu", "whenPasscodeSetThisDeviceOnly"),
            (.whenUnlockedThisDeviceOnly, "aku", "whenUnlockedThisDeviceOnly"),
            (.whenUnlocked, "ak", "whenUnlocked"),
            (.afterFirstUnlockThisDeviceOnly, "cku", "afterFirstUnlockThisDeviceOnly"),
            (.afterFirstUnlock, "ck", "afterFirstUnlock"),
            (.alwaysThisDeviceOnly, "dku", "alwaysThisDeviceOnly"),
            (.always, "dk", "always"),
        ]
        #expect(ProtectionClass.allCases.count == 7)
        for (protection, raw, name) in expected {
            #expect(protection.rawValue == raw)
            #expect(protection.name == name)
            #expect(try ProtectionClass(parsing: name) == protection)
            #expect(try ProtectionClass(parsing: raw) == protection)
            #expect(protection.isThisDeviceOnly == name.hasSuffix("ThisDeviceOnly"))
            #expect(protection.isDeprecated == name.hasPrefix("always"))
        }
        #expect(ProtectionClass.default == .whenUnlocked)
    }

    @Test func unknownClassIsNamedInTheError() {
        do {
            _ = try ProtectionClass(parsing: "whenUnlockd")
            Issue.record("expected an error")
        } catch {
            #expect(error.status == .param)
            #expect(error.message.contains("'whenUnlockd'"))
        }
    }
}
