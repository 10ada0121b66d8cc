import KeygatePolicy
import Testing

@Suite struct StatusTests {
    /// spec §6: every named code with Apple's value.
    static let apple: [(String, Int32)] = [
        ("errSecSuccess", 0), ("errSecUnimplemented", -4), ("errSecDiskFull", -34), ("errSecIO", -36),
        ("errSecParam", -50), ("errSecAllocate", -108), ("errSecUserCanceled", -128), ("errSecBadReq", -909),
        ("errSecInternalComponent", -2070), ("errSecNotAvailable", -25291), ("errSecReadOnly", -25292),
        ("errSecAuthFailed", -25293), ("errSecDuplicateItem", -25299), ("errSecItemNotFound", -25300),
        ("errSecNoSuchAttr", -25303), ("errSecNoSuchClass", -25306), ("errSecInteractionNotAllowed", -25308),
        ("errSecDecode", -26275), ("errSecInternal", -26276), ("errSecAuthNeeded", -25330),
        ("errSecMissingEntitlement", -34018), ("errSecRestrictedAPI", -34020), ("errSecUpgradePending", -34019),
    ]

    @Test func everyCodeHasApplesValueNameAndAMessage() throws {
        #expect(KeygateStatus.allNamed.count == Self.apple.count)
        for (name, value) in Self.apple {
            let status = try #require(KeygateStatus(name: name))
            #expect(status.rawValue == value)
            #expect(status.name == name)
            #expect(!status.message.isEmpty && !status.message.hasPrefix("Unknown"))
            #expect(KeygateStatus.allNamed.contains(status))
            #expect(status.description == "\(name) \(value)")
        }
    }

    @Test func unknownCodesRoundTrip() {
        let odd = KeygateStatus(rawValue: -99999)
        #expect(odd.name == nil)
        #expect(odd.message == "Unknown status -99999.")
        #expect(odd.description == "OSStatus -99999")
    }

    @Test func errorsKeepTheirStatus() {
        let error = KeygateError(.interactionNotAllowed, "the device is locked")
        #expect(error.description == "the device is locked (errSecInteractionNotAllowed -25308)")
    }
}
