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
        #expect(try AccessControlFlags(parsing: "") == [])
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
