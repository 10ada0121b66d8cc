import Keygate
import KeygateTesting
import Synchronization
import Testing

/// The facade reads the device's biometry (fprintd on Linux) only for calls whose items or rules
/// involve it, and at most once per call: a plain `get` never asks the sensor.
@Suite struct DeferredBiometryTests {
    /// A device with one enrolled finger that counts how often its biometry is read.
    final class CountingDevice: DeviceStateSource {
        let biometryReads = Mutex(0)
        func snapshot() -> DeviceSnapshot { snapshot(readingBiometry: true) }
        func snapshot(readingBiometry: Bool) -> DeviceSnapshot {
            guard readingBiometry else { return DeviceSnapshot() }
            biometryReads.withLock { $0 += 1 }
            return DeviceSnapshot(biometryAvailable: true, enrollment: EnrollmentSetHash(templateIDs: ["f1"]))
        }
        var reads: Int { biometryReads.withLock { $0 } }
    }

    static func keychain(_ device: CountingDevice, _ auth: ScriptedAuthenticator) -> Keychain {
        Keychain(
            store: InMemoryItemStore(), accessGroups: ["app"], authenticator: auth, device: device,
            auditor: Auditor(sink: AuditRecorder()))
    }

    @Test func plainItemsNeverReadBiometry() async throws {
        let device = CountingDevice()
        let keychain = Self.keychain(device, ScriptedAuthenticator())
        try await keychain.add(AddRequest(service: "api", account: "me", data: SecretData("v")))
        let read = try await keychain.copyMatching(ItemQuery(service: "api", account: "me", returnData: true))
        #expect(read.first?.data?.utf8String() == "v")
        try await keychain.update(ItemQuery(service: "api", account: "me"), changes: ItemChanges(data: SecretData("w")))
        try await keychain.delete(ItemQuery(service: "api", account: "me"))
        #expect(device.reads == 0)
    }

    @Test func itemsThatInvolveBiometryReadItOncePerCall() async throws {
        let device = CountingDevice()
        let auth = ScriptedAuthenticator()
        auth.setDefault(.succeed, for: .biometry)
        let keychain = Self.keychain(device, auth)
        for (account, flags) in [("presence", AccessControlFlags.userPresence), ("current", .biometryCurrentSet)] {
            let control = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: flags)
            try await keychain.add(
                AddRequest(service: "api", account: account, accessControl: control, data: SecretData("v")))
        }
        #expect(device.reads == 2)
        for account in ["presence", "current"] {
            let read = try await keychain.copyMatching(ItemQuery(service: "api", account: account, returnData: true))
            #expect(read.first?.data?.utf8String() == "v")
        }
        #expect(device.reads == 4, "one read per call, though the search and the gate both evaluate the item")
        #expect(auth.prompts(for: .biometry).count == 2, "biometry was available when the item was read")
    }
}
